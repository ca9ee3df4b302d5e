"""Mining candidate pairs from a Social Bias Frames CSV (tests/data/sbic_sample.csv, SBIC agg layout)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from fairprobe.errors import DataError
from fairprobe.lexicons.dictionary import load_dictionary
from fairprobe.lexicons.sbic import Candidate, extract_candidates, normalise_group, write_candidates

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sbic_sample.csv"


def _counts(cands: list[Candidate], attribute: str) -> dict[str, int]:
    return {c.word: c.count for c in cands if c.attribute == attribute}


def test_groups_terms_by_category_normalised_and_counted() -> None:
    cands = extract_candidates(SAMPLE)
    assert sorted({c.attribute for c in cands}) == [
        "body",
        "gender",
        "race",
    ]  # one-term categories pair nothing
    race = _counts(cands, "race")
    # "black folks" twice plus "Black Folks." normalised; "latino/latina folks" is not a valid term.
    assert race == {
        "black folks": 3,
        "asian folks": 2,
        "africans": 1,
        "black women": 1,
        "chinese folks": 1,
        "mexican folks": 1,
    }
    # a row with two categories counts its terms under both
    assert _counts(cands, "gender")["black women"] == 1
    assert _counts(cands, "gender")["women"] == 3
    assert _counts(cands, "body") == {
        "fat folks": 2,
        "old folks": 1,
        "overweight people": 1,
        "short folks": 1,
    }


def test_replacements_come_from_the_same_category_most_frequent_first() -> None:
    cands = extract_candidates(SAMPLE)
    black = [c.replacement for c in cands if c.attribute == "race" and c.word == "black folks"]
    assert black == ["asian folks", "africans", "black women", "chinese folks", "mexican folks"]
    gender_terms = set(_counts(cands, "gender"))
    assert all(c.replacement in gender_terms for c in cands if c.attribute == "gender")
    assert all(c.word != c.replacement for c in cands)


def test_options_filter_and_cap() -> None:
    cands = extract_candidates(SAMPLE, attributes=("race",), max_replacements=1, min_count=2)
    assert cands == [
        Candidate("race", "black folks", "asian folks", 3),
        Candidate("race", "asian folks", "black folks", 2),
    ]


def test_written_candidates_load_as_a_dictionary(tmp_path: Path) -> None:
    cands = extract_candidates(SAMPLE)
    out = write_candidates(cands, tmp_path / "sub" / "candidates.csv")
    assert out.read_text(encoding="utf-8").splitlines()[0] == "attribute,word,replacement,count"
    d = load_dictionary(out)
    assert set(d.attributes) == {"race", "gender", "body"}
    assert Counter(c.attribute for c in cands) == Counter({a: len(d.pairs(a)) for a in d.attributes})
    assert ("women", "trans women") in d.pairs("gender")


def test_per_annotation_layout_with_plain_strings(tmp_path: Path) -> None:
    path = tmp_path / "trn.csv"
    path.write_text(
        "post,targetMinority,targetCategory\n"
        'p1,"black folks, africans",race\n'
        "p2,women,gender\n"
        "p3,,\n"
        "p4,trans women,gender\n",
        encoding="utf-8",
    )
    cands = extract_candidates(path)
    assert _counts(cands, "race") == {"africans": 1, "black folks": 1}
    assert {(c.word, c.replacement) for c in cands if c.attribute == "gender"} == {
        ("trans women", "women"),
        ("women", "trans women"),
    }


def test_normalise_group() -> None:
    assert normalise_group(' "Black  Folks." ') == "black folks"


def test_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        extract_candidates(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("post,targetGroup\nx,y\n", encoding="utf-8")
    with pytest.raises(DataError, match="missing column.*targetMinority, targetCategory"):
        extract_candidates(bad)
