"""Which occurrences of a person-only adjective actually describe a person (issue 20).

HInter's body attribute (§4 "Sensitive Attributes", Table 1) is about people: "a cute → manly"
film review mutation means something only where the adjective is said of a person. Replacing
every "ugly" or "pretty" also turns "Things get ugly" into "Things get beautiful" and "pretty
coherent" into "homely coherent": findings about words, not people. The authors' list sidesteps
this with person phrases; fairprobe's dictionary marks bare body adjectives ``adjectives:`` and
keeps an occurrence only where the dependency parse (the same spaCy model as the invariant)
links it to a person:

- ``amod`` / ``compound`` / ``nmod`` of a person noun ("an ugly man", "the tall actress");
- ``acomp`` / ``attr`` / ``oprd`` / ``xcomp`` whose clause subject is a person noun or personal
  pronoun ("she is tall", "the actor looks old");
- a conjunct of such an adjective ("a tall and skinny man").

A person noun is a term of the dictionary's non-adjective entries (man, women, actress, Black
people, ...), a built-in list of person nouns common in reviews and legal texts, or a personal
pronoun. Proper nouns are not taken as persons (a film title is a proper noun too).
"""

from __future__ import annotations

from typing import Any

from fairprobe.lexicons.dictionary import BiasDictionary

__all__ = ["PERSON_NOUNS", "non_person_spans"]

PERSON_NOUNS = frozenset(
    """person people man men woman women guy guys girl girls boy boys lady ladies gentleman gentlemen
    kid kids child children baby babies teen teenager adult adults actor actors actress actresses
    director directors character characters hero heroes heroine heroines villain villains
    protagonist protagonists lead leads star stars cast performer performers singer singers dancer
    dancers student students teacher teachers doctor doctors nurse nurses cop cops officer officers
    soldier soldiers detective detectives killer killers friend friends wife wives husband husbands
    mother mothers father fathers mom mum dad son sons daughter daughters brother brothers sister
    sisters parent parents uncle uncles aunt aunts cousin cousins grandmother grandfather grandma
    grandpa neighbor neighbors neighbour neighbours stranger strangers couple boss worker workers
    folks someone somebody anyone anybody everyone everybody nobody applicant applicants defendant
    defendants plaintiff plaintiffs victim victims witness witnesses prisoner prisoners judge judges
    lawyer lawyers employee employees individual individuals citizen citizens resident residents
    patient patients partner partners boyfriend girlfriend bride groom king queen prince princess
    actor's actress's""".split()
)
PERSON_PRONOUNS = frozenset("i me you he him she her we us they them who myself himself herself".split())
_MODIFIER = frozenset({"amod", "compound", "nmod", "appos"})
_PREDICATE = frozenset({"acomp", "attr", "oprd", "xcomp"})
_SUBJECT = frozenset({"nsubj", "nsubjpass"})


def _person_nouns(dictionary: BiasDictionary) -> frozenset[str]:
    words = set(PERSON_NOUNS)
    for attribute in dictionary.attributes:
        adjectives = dictionary.person_only(attribute)
        for term in dictionary.terms(attribute):
            key = term.lower()
            if key not in adjectives:
                words.update(key.split()[-1:])  # the head of "Black people", "trans women"
    return frozenset(words)


def _is_person(token: Any, nouns: frozenset[str]) -> bool:
    low = token.lower_
    if token.tag_.startswith("PRP") or token.tag_ == "WP":
        return low in PERSON_PRONOUNS
    return token.tag_.startswith("NN") and not token.tag_.startswith("NNP") and low in nouns


def describes_person(token: Any, nouns: frozenset[str], depth: int = 0) -> bool:
    """Whether the adjective ``token`` is said of a person (see the module rules)."""
    dep, head = token.dep_, token.head
    if dep == "conj" and depth < 3:
        return describes_person(head, nouns, depth + 1)
    if dep in _MODIFIER:
        return _is_person(head, nouns) or (head.dep_ == "compound" and _is_person(head.head, nouns))
    if dep in _PREDICATE:
        subjects = [c for c in head.children if c.dep_ in _SUBJECT]
        if not subjects and head.dep_ in ("xcomp", "ccomp", "conj"):
            subjects = [c for c in head.head.children if c.dep_ in _SUBJECT]
        if not subjects and head.dep_ == "relcl":  # "the man who is tall"
            return _is_person(head.head, nouns)
        return any(_is_person(s, nouns) for s in subjects)
    return False


def non_person_spans(
    text: str, dictionary: BiasDictionary, attributes: list[str] | tuple[str, ...], nlp: Any
) -> frozenset[tuple[int, int]]:
    """Spans of person-only adjectives of ``attributes`` in ``text`` that describe no person: the
    mutators skip them. The text is parsed only when such an adjective occurs."""
    from fairprobe.text.mutate import find_terms

    candidates: list[tuple[int, int]] = []
    for attribute in attributes:
        adjectives = dictionary.person_only(attribute)
        if not adjectives:
            continue
        for word, spans in find_terms(text, dictionary, attribute).items():
            if word.lower() in adjectives:
                candidates.extend(spans)
    if not candidates:
        return frozenset()
    nouns = _person_nouns(dictionary)
    skip = set()
    for offset, doc, spans in _parsed_windows(text, sorted(candidates), nlp):
        for start, end in spans:
            span = doc.char_span(start - offset, end - offset, alignment_mode="expand")
            root = span.root if span is not None and len(span) else None
            if root is None or not describes_person(root, nouns):
                skip.add((start, end))
    return frozenset(skip)


WHOLE_TEXT_CHARS = 20_000
"""Texts up to this length are parsed whole; longer ones sentence by sentence (issue 17: parsing a
50 MB single-line text at once took GBs), and only the sentences holding a candidate."""


def _parsed_windows(
    text: str, candidates: list[tuple[int, int]], nlp: Any
) -> list[tuple[int, Any, list[tuple[int, int]]]]:
    """``(offset, parsed doc, candidate spans)`` per parsed window of ``text``."""
    if len(text) <= WHOLE_TEXT_CHARS:
        return [(0, nlp(text), candidates)]
    from fairprobe.text.sentences import sentence_spans

    windows: list[tuple[int, Any, list[tuple[int, int]]]] = []
    leftover: list[tuple[int, int]] = []
    i = 0
    for s, e in sentence_spans(text):
        while i < len(candidates) and candidates[i][0] < s:
            leftover.append(candidates[i])
            i += 1
        inside = []
        while i < len(candidates) and candidates[i][1] <= e:
            inside.append(candidates[i])
            i += 1
        if inside:
            windows.append((s, nlp(text[s:e]), inside))
    # A candidate across a sentence boundary (none in practice) is parsed with its own context.
    for start, end in leftover + candidates[i:]:
        lo = max(0, start - 200)
        windows.append((lo, nlp(text[lo : end + 200]), [(start, end)]))
    return windows
