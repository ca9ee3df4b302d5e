"""Group words (race, nationality, religion, sexual orientation) are replaced only where they name or
describe people (issue 39): 1,904 of the demo's 2,823 race flips came from demonyms used for things
("Korean version", "Filipino horror films", "Russian battleship", "English farce")."""

from pathlib import Path

import pytest

from fairprobe.lexicons.dictionary import load_dictionary
from fairprobe.text.mutate import atomic_mutants
from fairprobe.text.person import non_person_by_attribute, person_parser

GROUPS = ("race", "nationality", "religion", "sexual_orientation")
ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def nlp():
    return person_parser()


def _mutated_words(text: str, nlp, attributes=GROUPS) -> dict[str, set[str]]:
    """Per attribute, the words (as written in the text) that get a mutant under the person check."""
    d = load_dictionary()
    skip = frozenset().union(*non_person_by_attribute(text, d, attributes, nlp).values())
    out: dict[str, set[str]] = {}
    for a in attributes:
        for m in atomic_mutants(text, d, a, skip=skip):
            out.setdefault(a, set()).add(m.replacements[0].word)
    return out


@pytest.mark.parametrize(
    "text",
    [
        "I saw the Korean version of Daisy first.",
        "It is the last entry in a series of Filipino horror films.",
        "The film documents the horrors taking place on a Russian battleship.",
        "The plot is a typical English farce of confused characters.",
        "He speaks Korean fluently and reads Chinese poetry.",
        "Christian Bale is superb as the lead.",
        "It went straight to video in France.",
        "The black and white photography is gorgeous.",
    ],
)
def test_group_words_of_things_are_not_mutated(text, nlp):
    assert _mutated_words(text, nlp) == {}


@pytest.mark.parametrize(
    ("text", "attribute", "word"),
    [
        ("The Korean woman smiled at the camera.", "nationality", "Korean"),
        ("Muslims pray five times a day.", "religion", "Muslims"),
        ("The applicant is a Christian and has never missed a payment.", "religion", "Christian"),
        ("She is Korean and works as a nurse.", "nationality", "Korean"),
        ("Many talented Black performers were never credited.", "race", "Black"),
        ("Julie plays a German Spy in this one.", "nationality", "German"),
        ("A gay man opens the bar on his own.", "sexual_orientation", "gay man"),
        ("He is of Korean descent.", "nationality", "Korean"),
    ],
)
def test_group_words_of_people_are_mutated(text, attribute, word, nlp):
    assert word in _mutated_words(text, nlp).get(attribute, set())


def test_one_text_keeps_the_person_and_skips_the_thing(nlp):
    d = load_dictionary()
    text = "The Korean actress is wonderful, but the Korean version is too long."
    skipped = non_person_by_attribute(text, d, ["nationality"], nlp)
    assert [text[s:e] for s, e in skipped["nationality"]] == ["Korean"]
    assert sorted(skipped["nationality"])[0][0] > text.index("but")  # the second one, the thing
    for m in atomic_mutants(text, d, "nationality", skip=skipped["nationality"]):
        assert m.text.endswith("the Korean version is too long.") and not m.text.startswith("The Korean")


@pytest.mark.slow  # parses ~250 whole texts: 113 s on the shared, loaded machine
def test_labelled_sample_precision_and_recall(nlp):
    """The figures docs/group-words.md states (hand-labelled occurrences; dev and held-out splits)."""
    from fairprobe.text.person_scope import evaluate_group_words

    sample = ROOT / "tests" / "data" / "person_scope_labelled.csv"
    dev = evaluate_group_words(sample, root=ROOT, nlp=nlp, split="dev")
    held = evaluate_group_words(sample, root=ROOT, nlp=nlp, split="heldout")
    assert dev["n"] == 205 and held["n"] == 100
    assert (dev["tp"], dev["fp"], dev["fn"], dev["tn"]) == (87, 9, 27, 82)
    assert (held["tp"], held["fp"], held["fn"], held["tn"]) == (7, 5, 0, 88)
