"""Body adjectives mutate only where they describe a person (issue 20): "Things get ugly" →
"beautiful" gave 8 biased findings and "pretty coherent" → "homely coherent" a hidden one."""

import pytest

from fairprobe.lexicons.dictionary import load_dictionary
from fairprobe.text.mutate import atomic_mutants, intersectional_mutants
from fairprobe.text.parser import load_parser
from fairprobe.text.person import non_person_spans


@pytest.fixture(scope="module")
def nlp():
    return load_parser(None, minimal=True)[0]


def _body_words(text, nlp):
    d = load_dictionary()
    skip = non_person_spans(text, d, ["body"], nlp)
    return {r.word.lower() for m in atomic_mutants(text, d, "body", skip=skip) for r in m.replacements}


@pytest.mark.parametrize(
    "text",
    [
        "Things get ugly when the storm comes.",
        "The plot is pretty coherent.",
        "It was a short film with a pretty good score.",
        "The old house looks ugly in the rain.",
    ],
)
def test_adjectives_of_things_are_not_mutated(text, nlp):
    assert _body_words(text, nlp) == set()


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("A skinny actor plays the lead.", "skinny"),
        ("She is tall and funny.", "tall"),
        ("The actress looked beautiful in every scene.", "beautiful"),
        ("The hero, who is blind, wins.", "blind"),
        ("A tall and skinny guy sings.", "skinny"),
    ],
)
def test_adjectives_of_people_are_mutated(text, word, nlp):
    assert word in _body_words(text, nlp)


def test_mixed_text_keeps_only_the_person_occurrence(nlp):
    d = load_dictionary()
    text = "The actress was beautiful but the film was short."
    skip = non_person_spans(text, d, ["body"], nlp)
    assert [text[s:e] for s, e in skip] == ["short"]
    mutants = atomic_mutants(text, d, "body", skip=skip)
    assert mutants and all("film was short" in m.text for m in mutants)
    # intersectional mutants obey the same occurrences
    pairs = intersectional_mutants(text, d, ("gender", "body"), skip=skip)
    assert pairs and all(m.text.endswith("film was short.") for m, _ in pairs)


def test_dictionary_marks_bare_body_adjectives_only():
    d = load_dictionary()
    adjectives = d.person_only("body")
    assert {"ugly", "pretty", "short", "tall"} <= adjectives
    assert "blonde" not in adjectives  # also a noun ("the blonde")
    assert d.person_only("gender") == {"angry", "hysterical", "cute"}  # the authors' adjective pairs
    assert not d.person_only("race")


def test_a_long_text_is_parsed_sentence_by_sentence_with_the_same_decisions(nlp):
    """Issue 17: a long single-line text is never parsed whole (a 50 MB text took GBs); only the
    sentences that hold a candidate adjective are parsed, and the decisions match the short text's."""
    from fairprobe.text import person

    d = load_dictionary()
    unit = "The actress was beautiful but the film was short. Nothing else happens here at all. "
    text = unit * (person.WHOLE_TEXT_CHARS // len(unit) + 5)
    assert len(text) > person.WHOLE_TEXT_CHARS
    lengths: list[int] = []

    def spy(t):  # the real parser, recording how much text each call gets
        lengths.append(len(t))
        return nlp(t)

    skip = non_person_spans(text, d, ["body"], spy)
    assert max(lengths) <= len("The actress was beautiful but the film was short.")
    assert len(lengths) == text.count("The actress")  # sentences without a candidate are not parsed
    short = non_person_spans(unit, d, ["body"], nlp)
    assert {text[s:e] for s, e in skip} == {unit[s:e] for s, e in short} == {"short"}
    assert len(skip) == text.count("short")
