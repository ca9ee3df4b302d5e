"""Capitalisation (issue 20): lower-case user dictionaries keep proper words capitalised, and a
capitalised replacement after "..." does not split the sentence."""

from pathlib import Path

from fairprobe.lexicons.dictionary import load_dictionary
from fairprobe.text.invariant import literal_invariant
from fairprobe.text.mutate import atomic_mutants
from fairprobe.text.parser import load_parser
from fairprobe.text.sentences import split_sentences


def test_lower_case_dictionary_gets_proper_capitals(tmp_path: Path) -> None:
    path = tmp_path / "authors.csv"
    path.write_text("attribute,word,replacement\nrace,white,puerto rican\nrace,white,african-american\n")
    d = load_dictionary(path)
    assert d.pairs("race") == [("white", "Puerto Rican"), ("white", "African-American")]
    texts = [m.text for m in atomic_mutants("White men sing. The white man sings.", d, "race")]
    assert texts[0] == "Puerto Rican men sing. The Puerto Rican man sings."
    assert texts[1] == "African-American men sing. The African-American man sings."


def test_capital_replacement_after_ellipsis_keeps_the_sentence_count() -> None:
    original = "The ending was odd... white men ran away. I liked it."
    mutant = "The ending was odd... Asian men ran away. I liked it."
    assert len(split_sentences(original)) == len(split_sentences(mutant)) == 2
    assert split_sentences("It was odd... The end.") == ["It was odd...", "The end."]


def test_ellipsis_mutant_passes_the_invariant() -> None:
    nlp, _ = load_parser(None)
    d = load_dictionary()
    text = "The ending was odd... white men ran away."
    mutants = [m for m in atomic_mutants(text, d, "race") if m.text.split("... ")[1][0].isupper()]
    assert mutants, "the packaged race list has capitalised replacements of 'white'"
    assert literal_invariant(text, mutants[0].text, nlp)
