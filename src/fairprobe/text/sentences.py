"""Sentence splitting for HInter's dependency invariant (Algorithm 3 line 4, ``sentenceSplit``).

A deterministic, rule-based splitter: the invariant compares sentence *counts* of an original
and its mutant, so the split must depend on punctuation, not on the words a mutation swaps.
The HInter artifact used a regex splitter that cut after every ``.?!`` and then **dropped the
text after the last terminator**; this one keeps that final fragment ("I liked it. But the
ending" gives two sentences).

Rules, in order:

1. Hard breaks: a blank line (``\\n\\s*\\n``) or HTML line breaks (``<br>``, ``<br />``, as in
   IMDB reviews) end a sentence; the break itself belongs to no sentence. A single newline is
   ordinary whitespace.
2. A sentence ends after a run of ``.``, ``?``, ``!`` or ``…`` (with any closing quotes or
   brackets after it) that is followed by whitespace or the end of the text. A terminator
   without whitespace after it never ends a sentence (``3.5``, ``amazon.com``, ``e.g.,``).
3. Exceptions for a single ``.``: no break after a title or other abbreviation that is never
   sentence-final (``Mr. Mrs. Ms. Dr. Prof. St. Jr. Sr. vs. No. Vol. ...``), after a single
   letter (``J. R. R. Tolkien``) or after dotted initials (``U.S.``).
4. After an ellipsis (``...``, ``…``) or a sometimes-final abbreviation (``etc. Inc. Ltd. Co.``)
   the sentence ends only if the next word starts with an upper-case letter or a digit — and is
   not a word that is always capitalised (a demonym or other proper word of the packaged bias
   dictionary: "Asian", "Puerto Rican"). Otherwise a mutation "... white man" -> "... Asian
   man" would add a sentence and the dependency invariant would discard it (issue 20).
5. Each sentence is stripped of surrounding whitespace; empty pieces are dropped.
"""

from __future__ import annotations

import functools
import re

__all__ = ["split_sentences", "sentence_spans"]

_HARD_BREAK = re.compile(r"(?:\s*<br\s*/?>\s*)+|\n[ \t\r\f\v]*\n\s*", re.IGNORECASE)
_TERMINATOR = re.compile(r"[.?!…]+[\"'”’)\]»]*(?=\s|\Z)")
_NEVER_FINAL = frozenset(
    "mr mrs ms mx dr prof st jr sr rev gen sen rep gov lt col sgt capt cmdr mt ft vs no nos vol "
    "approx dept fig figs op ed eds pp mssrs messrs".split()
)
_SOMETIMES_FINAL = frozenset("etc inc ltd co corp bros".split())
_WORD_BEFORE = re.compile(r"([\w.]+)\Z")
_NEXT = re.compile(r"\s*[\"'“‘(\[«]*(\S?)")
_INITIALS = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")


_NEXT_WORD = re.compile(r"\s*[\"'“‘(\[«]*([^\W_]+)")


@functools.cache
def _proper_words() -> frozenset[str]:
    from fairprobe.lexicons.dictionary import proper_words

    return frozenset(proper_words())


def _is_boundary(text: str, match: re.Match[str], end: int) -> bool:
    """Whether the terminator ``match`` ends a sentence (``end``: end of the current block)."""
    core = match.group().rstrip("\"'”’)]»")
    nxt = _NEXT.match(text, match.end(), end).group(1)
    next_is_capital = nxt[:1].isupper() or nxt[:1].isdigit()
    if nxt[:1].isupper():
        word = _NEXT_WORD.match(text, match.end(), end)
        if word is not None and word.group(1).lower() in _proper_words():
            next_is_capital = False  # always capitalised: no evidence of a new sentence
    if "?" in core or "!" in core:
        return True
    if core != ".":  # an ellipsis: "..", "...", "…"
        return next_is_capital or not nxt
    before = _WORD_BEFORE.search(text, max(0, match.start() - 40), match.start())
    if before is None:
        return True
    word = before.group(1)
    if _INITIALS.fullmatch(word):
        return False  # dotted initials: U.S. / e.g. / i.e.
    last = word.rsplit(".", 1)[-1].lower()
    if last in _NEVER_FINAL:
        return False
    if len(last) == 1 and last.isalpha():
        return False  # an initial: J. Smith
    if last in _SOMETIMES_FINAL:
        return next_is_capital or not nxt
    return True


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the sentences of ``text`` (see the module rules)."""
    spans: list[tuple[int, int]] = []
    block_start = 0
    breaks = [(m.start(), m.end()) for m in _HARD_BREAK.finditer(text)] + [(len(text), len(text))]
    for brk_start, brk_end in breaks:
        start = block_start
        for m in _TERMINATOR.finditer(text, block_start, brk_start):
            if _is_boundary(text, m, brk_start):
                spans.append((start, m.end()))
                start = m.end()
        spans.append((start, brk_start))
        block_start = brk_end
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            out.append((s, e))
    return out


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped; a final fragment without ``.?!`` is kept."""
    return [text[s:e] for s, e in sentence_spans(text)]
