"""The dictionaries for the groups people test (issue 39): religion, nationality, age, disability and
sexual orientation load with the packaged dictionary, have a recorded source and licence, obey the
same invariants as race, gender and body, and gender holds gender words only."""

import re

import pytest

from fairprobe.errors import DataError
from fairprobe.lexicons.dictionary import PACKAGED_NOTICE, load_dictionary, normalise_term
from fairprobe.methods.hinter.block import DEFAULT_ATTRIBUTES, HInterBlock

NEW = ("religion", "nationality", "age", "disability", "sexual_orientation")


@pytest.fixture(scope="module")
def d():
    return load_dictionary()


def _notice_sections() -> dict[str, str]:
    text = PACKAGED_NOTICE.read_text(encoding="utf-8")
    parts = re.split(r"^## attribute: (\w+)\s*$", text, flags=re.MULTILINE)
    return {name: body for name, body in zip(parts[1::2], parts[2::2], strict=True)}


def test_new_attributes_load_with_the_packaged_dictionary(d):
    for attribute in NEW:
        assert len(d.pairs(attribute)) >= 30, attribute
    assert {"Muslim", "Christian", "Jewish", "Hindu", "atheist", "Jews"} <= set(d.terms("religion"))
    assert {"Korean", "Filipino", "Russian", "English", "Koreans"} <= set(d.terms("nationality"))
    assert {"old", "elderly", "young", "middle-aged", "seniors"} <= set(d.terms("age"))
    assert {"blind", "deaf", "disabled", "wheelchair users"} <= set(d.terms("disability"))
    assert {"gay", "lesbian", "bisexual", "straight"} <= set(d.terms("sexual_orientation"))


def test_every_attribute_has_a_source_and_a_licence(d):
    sections = _notice_sections()
    assert set(sections) == set(d.attributes)
    for attribute, body in sections.items():
        assert "Sources:" in body and "Licence:" in body, attribute
    header = PACKAGED_NOTICE.read_text(encoding="utf-8").split("## attribute:")[0]
    assert "[HB]      Smith et al." in header and "HolisticBias" in header and "CC BY-SA 4.0" in header
    for attribute in ("religion", "nationality", "age", "disability", "sexual_orientation", "race"):
        assert "[HB]" in sections[attribute] and "CC BY-SA 4.0" in sections[attribute]


def test_group_attributes_are_person_scoped(d):
    for attribute in ("race", "nationality", "religion", "sexual_orientation"):
        assert d.people_scoped(attribute) and d.group_words(attribute)
    for attribute in ("gender", "body", "age", "disability", "gender_stereotype"):
        assert not d.people_scoped(attribute)
    # bare age and disability adjectives keep the adjective rule ("old movies", "a blind date")
    assert {"old", "young", "elderly"} <= d.person_only("age")
    assert {"blind", "deaf", "disabled"} <= d.person_only("disability")


@pytest.mark.parametrize("attribute", NEW)
def test_new_attributes_obey_the_dictionary_invariants(d, attribute):
    pairs = d.pairs(attribute)
    keys = [(normalise_term(w), normalise_term(r)) for w, r in pairs]
    assert len(keys) == len(set(keys)) and all(w != r for w, r in keys)  # unique, no identity
    terms = d.terms(attribute)
    proper = [t for t in terms if t[0].isupper()]
    if attribute in ("religion", "nationality"):  # names of religions and peoples are capitalised
        lower = {"atheist", "agnostic", "secular", "irreligious", "born-again", "atheists", "agnostics"}
        assert [t for t in terms if t not in proper and t not in lower] == []


def test_crossed_groups_pair_both_ways_but_never_within_a_group(d):
    religion = set(d.pairs("religion"))
    assert ("Muslim", "Christian") in religion and ("Christian", "Muslim") in religion
    assert ("Muslims", "Jews") in religion and ("Catholic", "Protestant") not in religion
    nationality = set(d.pairs("nationality"))
    assert ("Korean", "Nigerian") in nationality and ("Nigerian", "Korean") in nationality
    assert ("Chinese", "Japanese") not in nationality  # same group (asia)
    assert ("Italian", "French") in nationality  # the rest map onto the 21 representatives
    assert ("old", "young") in set(d.pairs("age")) and ("able-bodied", "blind") in set(d.pairs("disability"))


def test_gender_keeps_gender_words_only(d):
    gender = {w for pair in d.pairs("gender") for w in pair}
    for job in ("nurse", "engineer", "secretary", "CEO", "president", "receptionist", "architect"):
        assert job not in gender
    assert {"angry", "hysterical"}.isdisjoint(gender)
    stereotype = set(d.pairs("gender_stereotype"))
    assert ("nurse", "engineer") in stereotype and ("captain", "bookkeeper") in stereotype
    assert {"he", "she", "his", "her", "man", "woman", "trans women"} <= gender
    assert {"gay men", "lesbians"}.isdisjoint(gender)  # now sexual_orientation


def test_hinter_defaults_test_the_groups_people_test(d):
    block = HInterBlock(model="embedded:imdb-sentiment")
    assert tuple(block.attributes) == DEFAULT_ATTRIBUTES
    assert set(DEFAULT_ATTRIBUTES) == set(d.attributes) - {"gender_stereotype"}


def test_coverage_helpers(d):
    from fairprobe.text.mutate import attributes_mentioned, mentions

    text = "The applicant, a Christian nurse, is 61 years old."
    assert mentions(text, d, "religion") and not mentions(text, d, "nationality")
    assert attributes_mentioned(text, d) == ("religion", "gender_stereotype", "age")
    assert attributes_mentioned("Nothing here.", d) == ()
    with pytest.raises(DataError, match="no attribute 'caste'"):
        mentions(text, d, "caste")


def test_a_bad_scope_is_refused_with_its_line(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text("race:\n  - scope: things\n  - swap:\n      - [a, b]\n")
    with pytest.raises(DataError, match=r"d.yaml, line 2: unknown scope 'things'"):
        load_dictionary(path)
    path.write_text("race:\n  - scope: people\n")
    with pytest.raises(DataError, match="has no word pairs"):
        load_dictionary(path)
    path.write_text("race:\n  - scope: people\n  - swap:\n      - [Black, white]\n")
    assert load_dictionary(path).people_scoped("race")
