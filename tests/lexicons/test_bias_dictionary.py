"""The packaged bias dictionary (coverage, directions, multi-word terms) and its YAML/CSV loaders."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairprobe.errors import DataError
from fairprobe.lexicons.dictionary import PACKAGED_DICTIONARY, BiasDictionary, load_dictionary


@pytest.fixture(scope="module")
def packaged() -> BiasDictionary:
    return load_dictionary()


def test_packaged_covers_at_least_the_papers_word_counts(packaged: BiasDictionary) -> None:
    # HInter §4 "Bias dictionary": 116 race words, 230 gender words, 98 body words. Issue 39 files
    # them by what they name (national demonyms under nationality, occupations under
    # gender_stereotype, age and disability words under their own attributes) and adds religion and
    # sexual orientation: the counts hold over the attributes that now hold those words.
    assert packaged.attributes == tuple(
        "race nationality religion gender gender_stereotype sexual_orientation body age disability".split()
    )

    def count(*attributes: str) -> int:
        return len({t.lower() for a in attributes for t in packaged.terms(a)})

    assert count("race", "nationality") >= 116
    assert count("gender", "gender_stereotype", "sexual_orientation") >= 230
    assert count("body", "age", "disability") >= 98


def test_load_none_is_the_packaged_file_and_cached(packaged: BiasDictionary) -> None:
    assert packaged.source == str(PACKAGED_DICTIONARY)
    assert load_dictionary(None) is packaged
    assert load_dictionary(PACKAGED_DICTIONARY).pairs("gender") == packaged.pairs("gender")


def test_aligned_gender_pairs_go_both_ways(packaged: BiasDictionary) -> None:
    pairs = set(packaged.pairs("gender"))
    for a, b in [("actor", "actress"), ("he", "she"), ("his", "her"), ("him", "her"), ("man", "woman")]:
        assert (a, b) in pairs and (b, a) in pairs
    assert ("actors", "actresses") in pairs and ("men", "women") in pairs  # plural forms
    assert ("hers", "his") in pairs and ("his", "hers") not in pairs  # a one-way `pairs` row


def test_multi_word_terms(packaged: BiasDictionary) -> None:
    assert ("people", "trans women") in packaged.pairs("gender")
    assert ("old men", "young men") in packaged.pairs("age")
    assert ("man", "disabled man") in packaged.pairs("disability")
    assert "Native American" in packaged.terms("race")


def test_race_pairs_cross_groups_but_not_within_a_group(packaged: BiasDictionary) -> None:
    pairs = set(packaged.pairs("race"))
    assert ("Black", "white") in pairs and ("white", "Black") in pairs
    assert ("Asian", "Hispanic") in pairs and ("African American", "African-American") not in pairs
    nationality = set(packaged.pairs("nationality"))
    assert ("British", "Pakistani") in nationality  # HInter Table 1 (filed under nationality, issue 39)
    assert ("Nigerian", "Kenyan") not in nationality  # same group (africa)
    assert ("Chinese", "Japanese") not in nationality


def test_pairs_are_unique_and_never_identity(packaged: BiasDictionary) -> None:
    for attribute in packaged.attributes:
        pairs = packaged.pairs(attribute)
        keys = [(w.lower(), r.lower()) for w, r in pairs]
        assert len(keys) == len(set(keys))
        assert all(w != r for w, r in keys)


def test_unknown_attribute_lists_known_ones(packaged: BiasDictionary) -> None:
    with pytest.raises(DataError, match=r"no attribute 'caste'.*race, nationality, religion, gender"):
        packaged.pairs("caste")
    with pytest.raises(DataError, match="known attributes"):
        packaged.terms("Religion")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_yaml_formats_all_block_kinds(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "d.yaml",
        "colour:\n"
        "  - cross:\n"
        "      warm: [red, orange]\n"
        "      cold: [blue]\n"
        "  - swap:\n"
        "      - [light, dark]\n"
        "  - pairs:\n"
        "      - [grey, black]\n"
        "size:\n"
        "  - modify:\n"
        "      heads: [dog]\n"
        "      modifiers:\n"
        "        big: [big]\n"
        "        small: [small, tiny]\n",
    )
    d = load_dictionary(path)
    assert d.attributes == ("colour", "size")
    assert d.pairs("colour") == [
        ("red", "blue"),
        ("orange", "blue"),
        ("blue", "red"),
        ("blue", "orange"),
        ("light", "dark"),
        ("dark", "light"),
        ("grey", "black"),
    ]
    size = set(d.pairs("size"))
    assert {("dog", "big dog"), ("big dog", "dog"), ("big dog", "tiny dog"), ("tiny dog", "big dog")} <= size
    assert ("small dog", "tiny dog") not in size  # same modifier group
    assert d.terms("size") == ["dog", "big dog", "small dog", "tiny dog"]


@pytest.mark.parametrize(
    ("body", "line", "what"),
    [
        ("race:\n  - swap:\n      - [a, b]\n      - [c, d, e]\n", 4, "two terms"),
        ("race:\n  - swap:\n      - [a, b]\n      - [c, '']\n", 4, "empty term"),
        ("race:\n  - swap:\n      - [a, 'b/c']\n", 3, "bad term"),
        ("race:\n  - cross:\n      x: [a, b]\n      y: [c, a]\n", 4, "groups 'x' and 'y'"),
        (
            "race:\n  - cross:\n      x: [a]\n      y: [b]\n  - shuffle:\n      - [a, b]\n",
            5,
            "unknown block kind",
        ),
        ("race:\n  - swap:\n      - [a, b]\ngender: []\n", 4, "non-empty list of blocks"),
        ("race:\n  - swap:\n      - [a, b\n", 4, "not valid YAML"),
        ("race:\n  - modify:\n      heads: [man]\n      mods: {x: [old]}\n", 4, "heads and modifiers"),
        ("race:\n  - cross:\n      x: [a]\n", 3, "at least two named groups"),
    ],
)
def test_yaml_errors_name_file_and_line(tmp_path: Path, body: str, line: int, what: str) -> None:
    path = _write(tmp_path, "bad.yaml", body)
    with pytest.raises(DataError) as info:
        load_dictionary(path)
    message = str(info.value)
    assert str(path) in message
    assert f"line {line}" in message
    assert what in message
    assert "\n" not in message


def test_csv_directed_pairs_extra_columns_ignored(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "d.csv",
        "attribute,word,replacement,count\n"
        "gender,man,woman,10\n"
        "gender,Man,WOMAN,3\n"  # same pair, other case: kept once
        "# a comment row\n"
        "\n"
        "race,black folks,asian folks,2\n",
    )
    d = load_dictionary(path)
    assert d.pairs("gender") == [("man", "woman")]
    # lower-case race terms take the packaged dictionary's capitals (issue 20)
    assert d.pairs("race") == [("Black folks", "Asian folks")]


@pytest.mark.parametrize(
    ("body", "line", "what"),
    [
        ("attribute,word,replacement\ngender,man,woman\ngender,boy\n", 3, "got 2 field(s)"),
        ("attribute,word,replacement\ngender,man,woman\ngender,he,\n", 3, "empty term"),
        ("attribute,word,replacement\ngender,man,woman\n,he,she\n", 3, "empty attribute"),
        ("attribute,word\ngender,man\n", 1, "missing: replacement"),
    ],
)
def test_csv_errors_name_file_and_line(tmp_path: Path, body: str, line: int, what: str) -> None:
    path = _write(tmp_path, "bad.csv", body)
    with pytest.raises(DataError) as info:
        load_dictionary(path)
    message = str(info.value)
    assert f"{path}, line {line}" in message
    assert what in message


def test_missing_file_and_unknown_suffix(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        load_dictionary(tmp_path / "nope.yaml")
    with pytest.raises(DataError, match="unknown file type"):
        load_dictionary(_write(tmp_path, "d.json", "{}"))
    with pytest.raises(DataError, match="empty"):
        load_dictionary(_write(tmp_path, "e.yaml", ""))


def test_self_pairs_are_skipped_with_a_warning(tmp_path: Path) -> None:
    """The authors' lists hold self-pairs (``teenage;teenage``): skip them, keep the rest (issue 20)."""
    yml = _write(tmp_path, "d.yaml", "race:\n  - swap:\n      - [same, Same]\n      - [a, b]\n")
    with pytest.warns(UserWarning, match=r"line 3: 'same' is paired with itself"):
        d = load_dictionary(yml)
    assert d.pairs("race") == [("a", "b"), ("b", "a")] and len(d.skipped) == 1
    csv_path = _write(tmp_path, "d.csv", "attribute,word,replacement\nbody,teenage,teenage\nbody,old,young\n")
    with pytest.warns(UserWarning, match="line 2: 'teenage' is paired with itself"):
        d = load_dictionary(csv_path)
    assert d.pairs("body") == [("old", "young")]
