"""Body adjectives mutate only where they describe a person (issue 20): "Things get ugly" →
"beautiful" gave 8 biased findings and "pretty coherent" → "homely coherent" a hidden one."""

from pathlib import Path

import pytest

from fairprobe.lexicons.dictionary import load_dictionary
from fairprobe.text.mutate import atomic_mutants, intersectional_mutants
from fairprobe.text.person import evaluate_corpus, non_person_spans, person_parser

CORPUS = Path(__file__).parent / "person_adjectives.jsonl"


@pytest.fixture(scope="module")
def nlp():
    return person_parser()


#: The attributes that hold the authors' body adjectives since issue 39 (old/young under age,
#: blind/deaf under disability).
BODY = ("body", "age", "disability")


def _body_words(text, nlp):
    d = load_dictionary()
    skip = non_person_spans(text, d, BODY, nlp)
    return {
        r.word.lower() for a in BODY for m in atomic_mutants(text, d, a, skip=skip) for r in m.replacements
    }


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
    # the authors' adjective pairs, out of gender since issue 39 ("manly" is no longer also a swap row)
    assert d.person_only("gender_stereotype") == {"angry", "manly", "hysterical", "cute"}
    assert not d.person_only("gender") and not d.person_only("race")
    assert {"old", "young"} <= d.person_only("age") and {"blind", "deaf"} <= d.person_only("disability")


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


# ------------------------------------------- measured accuracy (tester: 14 of 25 real person uses kept)


def test_labelled_corpus_meets_recall_and_precision_targets(nlp):
    """Hand-labelled review sentences: names, pronouns, person nouns, body parts vs "things get ugly",
    "pretty good", objects, animals, places and titles. Targets: recall >= 90%, precision >= 95%."""
    result = evaluate_corpus(CORPUS, nlp)
    assert result["n"] >= 200 and result["tp"] + result["fn"] >= 100
    assert result["recall"] >= 0.90, result["wrong"]
    assert result["precision"] >= 0.95, result["wrong"]
    for split in ("heldout", "heldout2"):  # sentences written after the rules (small: looser bounds)
        part = evaluate_corpus(CORPUS, nlp, split=split)
        assert part["n"] >= 40 and part["recall"] >= 0.85 and part["precision"] >= 0.90, part["wrong"]


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("Dorothy Dandridge, who plays the lead, is beautiful and talented.", "beautiful"),
        ("A young Marlon Brando steals every scene he is in.", "young"),
        ("The handsome Gregory Peck gives a dignified performance.", "handsome"),
        ("The ugly stepsisters are played for laughs.", "ugly"),  # person noun from WordNet
        ("A skinny busboy witnesses the murder.", "skinny"),
        ("Her beautiful eyes say more than the dialogue.", "beautiful"),
        ("They made him ugly with prosthetics for the role.", "ugly"),
        ("He went blind after the accident.", "blind"),
    ],
)
def test_names_wordnet_nouns_and_body_parts_are_people(text, word, nlp):
    assert word in _body_words(text, nlp)


@pytest.mark.parametrize(
    "text",
    [
        "A skinny wolf follows the travellers.",  # the recogniser calls "wolf" PERSON: a common noun
        "Young Frankenstein is still funnier than this.",  # a title
        "Sean Young was the best thing about it.",  # a name
        "Beautiful Paris is the real star here.",  # a place
        "The ugly dog steals the show.",
    ],
)
def test_animals_titles_places_and_names_are_not(text, nlp):
    assert _body_words(text, nlp) == set()


def test_person_noun_list_comes_from_wordnet_and_is_packaged():
    from fairprobe.text.person import wordnet_person_names, wordnet_person_nouns

    nouns = wordnet_person_nouns()
    assert len(nouns) > 4000 and {"stepsister", "busboy", "heiress", "fisherman"} <= nouns
    assert not {"dog", "star", "trailer", "house"} & nouns  # first (or any common) sense is no person
    assert "Karloff" in wordnet_person_names() and "Paris" not in wordnet_person_names()


def test_corpus_rows_must_name_a_dictionary_adjective(tmp_path):
    from fairprobe.errors import DataError

    bad = tmp_path / "c.jsonl"
    bad.write_text('{"text": "A lovely man.", "adjective": "lovely", "person": true}\n')
    with pytest.raises(DataError, match="not a person-only adjective"):
        evaluate_corpus(bad)
