"""Word-pair mutation of texts: HInter's atomic (Algorithm 2) and intersectional (Algorithm 1) mutants.

HInter (shared/seeds/hinter.txt §3, Table 2) mutates an original text ``c`` by replacing the
first word ``p[0]`` of a bias pair ``p`` from the dictionary ``P[S]`` of a sensitive attribute
``S`` with ``p[1]`` (``c.replace(p[0], p[1])``). This module makes ``replace`` precise:

* **whole words only** — a term never matches inside a longer word ("man" is not in "manager")
  nor inside a hyphenated word ("white" is not in "non-white", "man" not in "man-made");
* **all occurrences** of the chosen word are replaced (``str.replace`` semantics);
* **longest term first** — where listed terms overlap ("old men" and "men") the longest one is
  matched; a word "occurs" (Algorithm 2 line 4) only where it is matched this way;
* **possessives and plurals** — endings outside the term stay ("man's" -> "woman's"); plural forms
  are their own dictionary entries ("actors" -> "actresses", "men's" -> "women's");
* **case** — the case pattern of each replaced occurrence is carried over: ``man`` -> ``woman``,
  ``Man`` -> ``Woman``, ``MAN`` -> ``WOMAN``, ``Old Men`` -> ``Young Men``. Capitals that belong
  to a term itself (``Asian``, ``CEO``) are not copied onto the replacement; a replacement keeps
  its own capitals (``white`` -> ``Asian``), and is capitalised at the start of a sentence, including
  one that starts after a line break or line-breaking markup (``cast.<br /><br />Black actors`` ->
  ``White actors``; :func:`fairprobe.text.articles.at_sentence_start`);
* **articles** — a preceding "a"/"an" is made to agree, by sound, with the replacement ("a Black man" ->
  "an Asian man"); the article is then part of the replaced span.

For speed, each attribute gets one compiled alternation regex (longest term first); matches are
found once per text and every mutant is assembled from the match positions.

Intersectional mutants (Algorithm 1 lines 10-17): for ``p1`` in ``P[S1]`` and ``p2`` in ``P[S2]``
whose first words both occur in ``c``: ``t1 = c.replace(p1)``, ``t2 = c.replace(p2)`` and
``m = t1.replace(p2)``. The second replacement is applied only to occurrences of ``p2[0]`` in the
original text outside the spans the first replacement rewrote, so it never re-replaces inside
``p1[1]`` (people -> trans women must not become trans men); a combination where no occurrence of
``p2[0]`` is left is skipped. The same holds for order ``k`` (k attributes, k atomic parents).
"""

from __future__ import annotations

import functools
import itertools
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

from fairprobe.errors import UsageError
from fairprobe.lexicons.dictionary import BiasDictionary, normalise_term
from fairprobe.text.articles import agree_article, article_before, at_sentence_start

__all__ = [
    "Replacement",
    "Mutant",
    "atomic_mutants",
    "intersectional_mutants",
    "iter_intersectional_mutants",
    "count_intersectional",
    "find_terms",
    "mentions",
    "attributes_mentioned",
    "match_case",
]


@dataclass(frozen=True, slots=True)
class Replacement:
    """One applied bias pair: ``word`` (``p[0]``) replaced by ``replacement`` (``p[1]``)."""

    attribute: str
    word: str
    replacement: str


@dataclass(frozen=True, slots=True)
class Mutant:
    """A mutated text (HInter's ``m``), the pairs applied and where the new words are.

    ``spans`` are ``(start, end)`` character offsets of every replaced occurrence in ``text``
    (sorted), for highlighting.
    """

    text: str
    replacements: tuple[Replacement, ...]
    spans: tuple[tuple[int, int], ...]

    @property
    def kind(self) -> str:
        """``'atomic'`` (one attribute, Algorithm 2) or ``'intersectional'`` (Algorithm 1)."""
        return "atomic" if len(self.replacements) == 1 else "intersectional"

    @property
    def attributes(self) -> tuple[str, ...]:
        """Attributes mutated, in the order they were applied."""
        return tuple(r.attribute for r in self.replacements)

    @property
    def key(self) -> str:
        """Stable id from the replacements, e.g. ``race:Black>white|gender:man>woman``."""
        return "|".join(f"{r.attribute}:{r.word}>{r.replacement}" for r in self.replacements)


# ------------------------------------------------------------------------------------ matching

# Left: not after a word character, nor after "<word char>-" (inside a hyphenated word).
# Right: not before a word character, nor before "-<word char>".
_LEFT = r"(?<!\w)(?<!\w-)"
_RIGHT = r"(?!\w)(?!-\w)"


class _Matcher:
    """Compiled matcher of one attribute: regex, and per term key the pairs it starts."""

    def __init__(self, dictionary: BiasDictionary, attribute: str) -> None:
        self.attribute = attribute
        pairs = dictionary.pairs(attribute)  # DataError for an unknown attribute
        self.word_form: dict[str, str] = {}
        # key -> [(pair index, replacement)] in dictionary order
        self.options: dict[str, list[tuple[int, str]]] = {}
        for index, (word, replacement) in enumerate(pairs):
            key = normalise_term(word)
            self.word_form.setdefault(key, word)
            self.options.setdefault(key, []).append((index, replacement))
        self.capitalised = dictionary.capitalised_only(attribute)
        terms = sorted(self.word_form, key=lambda k: (-len(k), k))
        body = "|".join(r"\s+".join(re.escape(w) for w in term.split(" ")) for term in terms)
        self.regex = re.compile(f"{_LEFT}(?:{body}){_RIGHT}", re.IGNORECASE) if terms else None

    def find(
        self, text: str, skip: frozenset[tuple[int, int]] = frozenset()
    ) -> dict[str, list[tuple[int, int]]]:
        """Occurrences per term key, keys in order of first occurrence; spans in ``skip`` do not
        count (a person-only adjective that describes no person, :mod:`fairprobe.text.person`)."""
        found: dict[str, list[tuple[int, int]]] = {}
        if self.regex is None:
            return found
        for m in self.regex.finditer(text):
            key = normalise_term(m.group())
            if m.span() in skip or (key in self.capitalised and not m.group()[0].isupper()):
                continue  # a capitalised-only term ("Pole") written in lower case is another word
            found.setdefault(key, []).append(m.span())
        return found

    def choices(self, found: dict[str, list[tuple[int, int]]]) -> list[tuple[str, str]]:
        """``(term key, replacement)`` of every pair whose word occurs, in dictionary order."""
        ranked = sorted((index, key, repl) for key in found for index, repl in self.options[key])
        return [(key, repl) for _, key, repl in ranked]


@functools.lru_cache(maxsize=32)
def _matcher(dictionary: BiasDictionary, attribute: str) -> _Matcher:
    return _Matcher(dictionary, attribute)


def find_terms(
    text: str, dictionary: BiasDictionary, attribute: str, skip: frozenset[tuple[int, int]] = frozenset()
) -> dict[str, list[tuple[int, int]]]:
    """Where the dictionary words of ``attribute`` occur in ``text``: ``{word: [(start, end)]}``.

    Words are given in their dictionary spelling, in order of first occurrence.
    """
    matcher = _matcher(dictionary, attribute)
    return {matcher.word_form[k]: spans for k, spans in matcher.find(text, skip).items()}


def mentions(text: str, dictionary: BiasDictionary, attribute: str) -> bool:
    """Whether ``text`` holds a word of ``attribute`` as the mutator matches it (whole words,
    capitalised-only terms with their capital), before any person check: for coverage statements
    ("none of the 16 texts mentions a word of the age list", issue 39)."""
    return bool(find_terms(text, dictionary, attribute))


def attributes_mentioned(text: str, dictionary: BiasDictionary) -> tuple[str, ...]:
    """The attributes of ``dictionary`` (in its order) with a word in ``text`` (see :func:`mentions`)."""
    return tuple(a for a in dictionary.attributes if mentions(text, dictionary, a))


# -------------------------------------------------------------------------------------- case


def match_case(found: str, term: str, replacement: str, sentence_start: bool = False) -> str:
    """``replacement`` spelled with the case pattern of ``found`` (an occurrence of ``term``).

    UPPER stays UPPER (unless the term itself is an acronym), a capital that the term does not
    have (or any capital at a sentence start) is put on the replacement (``Title Words`` stay
    title-cased), and lower case leaves the replacement as the dictionary spells it.
    """
    letters = [c for c in found if c.isalpha()]
    if not letters:
        return replacement
    if len(letters) > 1 and all(c.isupper() for c in letters) and not term.isupper():
        return replacement.upper()
    if found[0].isupper() and (sentence_start or not term[0].isupper()):
        words = found.split()
        if (
            len(words) > 1
            and all(w[0].isupper() for w in words)
            and not any(w[0].isupper() for w in term.split()[1:])
        ):
            return " ".join(w[:1].upper() + w[1:] for w in replacement.split(" "))
        return replacement[:1].upper() + replacement[1:]
    return replacement


# ----------------------------------------------------------------------------------- mutants


def _apply(text: str, edits: list[tuple[int, int, str]]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Apply non-overlapping ``(start, end, new)`` edits; return the text and the new spans."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    cursor = 0
    length = 0
    for start, end, new in sorted(edits):
        parts.append(text[cursor:start])
        length += start - cursor
        parts.append(new)
        spans.append((length, length + len(new)))
        length += len(new)
        cursor = end
    parts.append(text[cursor:])
    return "".join(parts), tuple(spans)


def _edits(
    text: str, occurrences: list[tuple[int, int]], term: str, replacement: str
) -> list[tuple[int, int, str]]:
    """One ``(start, end, new)`` edit per occurrence; a preceding "a"/"an" is made to agree with the
    replacement, and is then part of the edit (and of the mutant's span)."""
    edits = []
    for s, e in occurrences:
        new = match_case(text[s:e], term, replacement, at_sentence_start(text, s))
        art = article_before(text, s)
        if art is not None and agree_article(art.group(1), new) != art.group(1):
            edits.append((art.start(), e, f"{agree_article(art.group(1), new)}{art.group(2)}{new}"))
        else:
            edits.append((s, e, new))
    return edits


def _sample(n: int, max_mutants: int | None, seed: int) -> list[int]:
    if max_mutants is None or n <= max_mutants:
        return list(range(n))
    return sorted(random.Random(seed).sample(range(n), max_mutants))


def atomic_mutants(
    text: str,
    dictionary: BiasDictionary,
    attribute: str,
    *,
    max_mutants: int | None = None,
    seed: int = 0,
    skip: frozenset[tuple[int, int]] = frozenset(),
) -> list[Mutant]:
    """Algorithm 2 lines 3-5: one mutant per pair of ``P[attribute]`` whose word occurs in ``text``.

    Every occurrence of the word is replaced. Mutants come in dictionary order; with
    ``max_mutants`` a seeded random subset of that size is kept (in the same order). Occurrences
    at the spans in ``skip`` are not occurrences (see :func:`fairprobe.text.person.non_person_spans`).
    """
    matcher = _matcher(dictionary, attribute)
    found = matcher.find(text, skip)
    choices = matcher.choices(found)
    out = []
    for i in _sample(len(choices), max_mutants, seed):
        key, repl = choices[i]
        word = matcher.word_form[key]
        new_text, spans = _apply(text, _edits(text, found[key], word, repl))
        out.append(Mutant(new_text, (Replacement(attribute, word, repl),), spans))
    return out


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in taken)


class _Intersections:
    """Valid combinations of one pair per attribute in a text (spans only, enumerated lazily)."""

    def __init__(
        self,
        text: str,
        dictionary: BiasDictionary,
        attributes: tuple[str, ...],
        skip: frozenset[tuple[int, int]] = frozenset(),
    ):
        attributes = tuple(attributes)
        if len(attributes) < 2 or len(set(attributes)) != len(attributes):
            raise UsageError(
                f"intersectional mutants need two or more distinct attributes, got {attributes!r}; "
                "use atomic_mutants for a single attribute."
            )
        self.text = text
        self.attributes = attributes
        self.matchers = [_matcher(dictionary, a) for a in attributes]
        self.founds = [m.find(text, skip) for m in self.matchers]
        self.choices = [m.choices(f) for m, f in zip(self.matchers, self.founds, strict=True)]
        self._parents: dict[tuple[int, int], Mutant] = {}

    def combos(self) -> Iterator[tuple[tuple[int, ...], list[list[tuple[int, int]]]]]:
        """``(choice index per attribute, occurrences rewritten per attribute)`` of each valid
        combination, in dictionary order (the first attribute varies slowest)."""
        if any(not c for c in self.choices):
            return
        for combo in itertools.product(*(range(len(c)) for c in self.choices)):
            taken: list[tuple[int, int]] = []
            per_attr: list[list[tuple[int, int]]] = []
            for level, index in enumerate(combo):
                key = self.choices[level][index][0]
                occ = [sp for sp in self.founds[level][key] if not _overlaps(sp, taken)]
                if not occ:
                    break
                per_attr.append(occ)
                taken.extend(occ)
            else:
                yield combo, per_attr

    def parent(self, level: int, index: int) -> Mutant:
        if (level, index) not in self._parents:
            key, repl = self.choices[level][index]
            word = self.matchers[level].word_form[key]
            new_text, spans = _apply(self.text, _edits(self.text, self.founds[level][key], word, repl))
            self._parents[(level, index)] = Mutant(
                new_text, (Replacement(self.attributes[level], word, repl),), spans
            )
        return self._parents[(level, index)]

    def mutant(
        self, combo: tuple[int, ...], per_attr: list[list[tuple[int, int]]]
    ) -> tuple[Mutant, tuple[Mutant, ...]]:
        edits: list[tuple[int, int, str]] = []
        replacements: list[Replacement] = []
        for level, (index, occ) in enumerate(zip(combo, per_attr, strict=True)):
            key, repl = self.choices[level][index]
            word = self.matchers[level].word_form[key]
            edits.extend(_edits(self.text, occ, word, repl))
            replacements.append(Replacement(self.attributes[level], word, repl))
        new_text, spans = _apply(self.text, edits)
        parents = tuple(self.parent(level, index) for level, index in enumerate(combo))
        return Mutant(new_text, tuple(replacements), spans), parents


def count_intersectional(
    text: str,
    dictionary: BiasDictionary,
    attributes: tuple[str, ...],
    skip: frozenset[tuple[int, int]] = frozenset(),
) -> int:
    """How many intersectional mutants :func:`intersectional_mutants` gives (no text is built)."""
    return sum(1 for _ in _Intersections(text, dictionary, attributes, skip).combos())


def iter_intersectional_mutants(
    text: str,
    dictionary: BiasDictionary,
    attributes: tuple[str, ...],
    *,
    indices: set[int] | None = None,
    skip: frozenset[tuple[int, int]] = frozenset(),
) -> Iterator[tuple[Mutant, tuple[Mutant, ...]]]:
    """:func:`intersectional_mutants` one at a time (memory: one mutant, whatever their number);
    with ``indices``, only the combinations at those positions of the full sequence."""
    found = _Intersections(text, dictionary, attributes, skip)
    for i, (combo, per_attr) in enumerate(found.combos()):
        if indices is None or i in indices:
            yield found.mutant(combo, per_attr)


def intersectional_mutants(
    text: str,
    dictionary: BiasDictionary,
    attributes: tuple[str, ...],
    *,
    max_mutants: int | None = None,
    seed: int = 0,
    skip: frozenset[tuple[int, int]] = frozenset(),
) -> list[tuple[Mutant, tuple[Mutant, ...]]]:
    """Algorithm 1 lines 10-17 for k >= 2 distinct attributes: ``(m, (t1, ..., tk))`` per combination.

    ``m`` applies one pair per attribute, in the order of ``attributes``; each later pair only
    rewrites occurrences outside the spans rewritten before. ``ti`` is the atomic mutant of the
    i-th pair alone (the same mutant :func:`atomic_mutants` gives). Combinations come in
    dictionary order (the first attribute varies slowest); ``max_mutants`` keeps a seeded random
    subset of the valid combinations.
    """
    if max_mutants is None:
        return list(iter_intersectional_mutants(text, dictionary, attributes, skip=skip))
    n = count_intersectional(text, dictionary, attributes, skip)
    keep = set(_sample(n, max_mutants, seed))
    return list(iter_intersectional_mutants(text, dictionary, attributes, indices=keep, skip=skip))
