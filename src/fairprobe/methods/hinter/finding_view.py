"""How a HInter finding reads in the report's findings view: the original and the mutant aligned on
the replaced words, both answers and the verdict (:mod:`fairprobe.report.findings_view`)."""

from __future__ import annotations

import re
from typing import Any

from fairprobe.methods.hinter.block import HInterBlock

_ARTICLE = re.compile(r"(a|an)(\s+)(.+)", re.IGNORECASE | re.DOTALL)


def _answer(output: list[str] | None) -> str:
    return "—" if output is None else "/".join(output) or "(none)"


def original_edits(f: dict[str, Any], original: str | None = None) -> tuple[str, list[tuple[int, int, str]]]:
    """The original text and the edits (offsets in the original) that made the mutant ``f["text"]``.

    A finding stores the mutant, its replaced spans and its replacements ``[attribute, word, new]``;
    the original is the mutant with each span put back to its word, spelled in the span's case
    (:func:`fairprobe.text.mutate.match_case`, the rule that spelled the replacement). That rule
    cannot always be inverted (a dictionary word "Black" replaced in "black" or "Black" leaves the
    same mutant), so the original's own text, when known (``original``, or ``original_text`` of a
    hidden-bias finding), gives the exact spelling."""
    from fairprobe.report.findings_view import word_edits
    from fairprobe.text.articles import agree_article
    from fairprobe.text.mutate import match_case

    text, exact = f["text"], original if original is not None else f.get("original_text")
    if exact is not None:
        edits = _span_edits(exact, f)
        if edits is None:  # the mutation changed more than its spans (an article "a" → "an")
            edits = word_edits(exact, text)
        if len(edits) <= 2 * len(f.get("spans") or []) + 2:  # else not this mutant's original
            return exact, edits
    by_new = {new.lower(): (word, new) for _, word, new in f.get("replacements") or []}
    parts, edits, cursor, shift = [], [], 0, 0
    for start, end in sorted(f.get("spans") or []):
        found = text[start:end]
        article = _ARTICLE.match(found) if found.lower() not in by_new else None
        if article is not None and article.group(3).lower() in by_new:  # "a Black" -> "an Asian"
            word, new = by_new[article.group(3).lower()]
            old = agree_article(article.group(1), word) + article.group(2)
            old += match_case(article.group(3), new, word)
        else:
            word, new = by_new.get(found.lower(), (found, found))
            old = match_case(found, new, word)
        at = start - shift
        parts += [text[cursor:start], old]
        edits.append((at, at + len(old), found))
        shift += len(found) - len(old)
        cursor = end
    parts.append(text[cursor:])
    rebuilt = "".join(parts)
    return rebuilt, edits


def _span_edits(original: str, f: dict[str, Any]) -> list[tuple[int, int, str]] | None:
    """Edits read off the spans when the mutant is ``original`` with only its spans replaced (string
    comparisons; a span that took its article along is diffed alone); None when anything else
    differs. Never a diff of the whole texts: on long reviews that cost milliseconds per finding."""
    from fairprobe.report.findings_view import word_edits

    text = f["text"]
    words = {new.lower(): word for _, word, new in f.get("replacements") or []}
    edits, o, m = [], 0, 0
    for start, end in sorted(f.get("spans") or []):
        if original[o : o + start - m] != text[m:start]:
            return None
        o += start - m
        found = text[start:end]
        word = words.get(found.lower())
        if word is None:  # the span took its article along: "a pretty" -> "an ugly"
            stop = _article_span(original, o, found, words)
            if stop is None:
                return None
            edits += [(o + a, o + b, new) for a, b, new in word_edits(original[o:stop], found)]
            o, m = stop, end
            continue
        if original[o : o + len(word)].lower() != word.lower():
            return None
        edits.append((o, o + len(word), found))
        o, m = o + len(word), end
    return edits if original[o:] == text[m:] else None


_ORIGINAL_ARTICLE = re.compile(r"(a|an)(\s+)", re.IGNORECASE)


def _article_span(original: str, at: int, found: str, words: dict[str, str]) -> int | None:
    """Where the original's article + replaced word ends, for a span that holds an article and a
    replacement ("an ugly" where the original reads "a pretty" at ``at``); None when the original
    does not read so. The edits are then the word diff of that short stretch alone (what a diff of
    the whole texts gives, at a fraction of its cost)."""
    article = _ARTICLE.match(found)
    if article is None or article.group(3).lower() not in words:
        return None
    word = words[article.group(3).lower()]
    old = _ORIGINAL_ARTICLE.match(original, at)
    if old is None or original[old.end() : old.end() + len(word)].lower() != word.lower():
        return None
    return old.end() + len(word)


def finding_view_for(block: HInterBlock) -> Any:
    """The findings view of a run: originals read back from the run's own data (a local file or a
    bundled sample; never a hub download at report time) for their exact spelling, else rebuilt."""
    originals: dict[str, str] | None = None

    def view(f: dict[str, Any]) -> Any:
        nonlocal originals
        if originals is None:
            originals = {}
            if not str(block.data).startswith("hf:"):
                from fairprobe.data.datasets import load_dataset
                from fairprobe.errors import FairprobeError

                try:
                    data = load_dataset(
                        block.data, text_col=block.text_col, label_col=block.label_col, limit=block.limit
                    )
                    originals = {str(r.id): r.text for r in data.records}
                except (FairprobeError, OSError, ValueError):
                    originals = {}
        key = str(f.get("original_id"))
        original = originals.get(key)
        if original is None and last[0] == key and _span_edits(last[1], f) is not None:
            original = last[1]  # the original rebuilt for this original's previous finding
        v = finding_view(f, original)
        last[:] = [key, v.left]
        return v

    last = ["", ""]  # findings come grouped by original: rebuild each original once, spell it one way
    return view


def finding_view(f: dict[str, Any], original: str | None = None) -> Any:
    """A HInter finding for the report's findings view: original and mutant aligned on the replaced
    words, both answers, and the verdict (biased: valid mutant, answer changed; Souani et al. §3)."""
    from fairprobe.report.findings_view import FindingView

    original, edits = original_edits(f, original)
    if not f.get("valid"):
        verdict = "discarded mutant"
    elif f.get("invalid"):
        verdict = "INVALID answer"
    elif f.get("biased"):
        verdict = "biased (hidden)" if f.get("hidden") else "biased"
    elif f.get("mutant_output") is None:
        verdict = "not run"
    else:
        verdict = "same answer"
    replacements = f.get("replacements") or []
    notes = []
    if f.get("gold") is not None:
        notes.append(("gold label", "/".join(f["gold"])))
    return FindingView(
        id=str(f["id"]),
        verdict=verdict,
        failed=bool(f.get("biased")),
        left=original,
        edits=edits,
        left_label="original",
        right_label="mutant",
        left_answer=_answer(f.get("original_output")),
        right_answer=_answer(f.get("mutant_output")),
        changes=[f"{a}: {old} → {new}" for a, old, new in replacements],
        attribute="+".join(f.get("attributes") or []),
        pairs=[f"{old} → {new}" for _, old, new in replacements],
        group=str(f.get("kind", "")),
        notes=notes,
    )
