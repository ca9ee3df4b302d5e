"""Model URI parsing, loader dispatch, option checking and ``check_model``."""

from __future__ import annotations

from pathlib import Path

import pytest
from servers import FaultServer

from fairprobe.errors import ModelError
from fairprobe.models import (
    ModelURI,
    check_model,
    load_chat,
    load_classifier,
    load_model,
    model_kind,
    parse_uri,
)

SCHEMES = "spacy:, hf:, openai:, openai+http://HOST:PORT/v1#MODEL, gguf:, py:, py-chat:, embedded:"


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("spacy:./models/textcat", ModelURI("spacy", "./models/textcat")),
        ("hf:org/name", ModelURI("hf", "org/name")),
        ("openai:gpt-4o-mini", ModelURI("openai", "gpt-4o-mini")),
        (
            "openai+http://127.0.0.1:8080/v1#smollm2",
            ModelURI("openai+http", "http://127.0.0.1:8080/v1", "smollm2"),
        ),
        ("openai+https://host.example/v1/", ModelURI("openai+https", "https://host.example/v1", "")),
        ("gguf:/tmp/m.gguf", ModelURI("gguf", "/tmp/m.gguf")),
        ("py:pkg.mod:predict", ModelURI("py", "pkg.mod:predict")),
        ("py-chat:mod:answer", ModelURI("py-chat", "mod:answer")),
        (" embedded:smollm2 ", ModelURI("embedded", "smollm2")),
    ],
)
def test_parse_uri(uri: str, expected: ModelURI) -> None:
    parsed = parse_uri(uri)
    assert parsed == expected
    assert parse_uri(str(parsed)) == parsed


def test_unknown_scheme_lists_the_known_ones() -> None:
    with pytest.raises(ModelError) as err:
        load_model("x:whatever")
    assert str(err.value) == f"unknown model URI scheme 'x' in 'x:whatever'; use one of {SCHEMES}"
    with pytest.raises(ModelError, match="is not a model URI"):
        parse_uri("smollm2")
    with pytest.raises(ModelError, match="names no model after 'gguf:'"):
        parse_uri("gguf:")
    with pytest.raises(ModelError, match="has no host"):
        parse_uri("openai+http:///v1#m")
    with pytest.raises(
        ModelError, match="unknown embedded model 'nope'; use one of: embedded:imdb-sentiment"
    ):
        load_model("embedded:nope")


def test_kinds_and_kind_mismatch() -> None:
    assert model_kind("embedded:imdb-sentiment") == "classifier"
    assert model_kind("embedded:smollm2") == "chat"
    assert model_kind("openai:gpt-4o") == "chat"
    with pytest.raises(ModelError, match="is a classifier, not a chat model"):
        load_chat("embedded:imdb-sentiment")
    with pytest.raises(ModelError, match="is a chat model, not a classifier; give a classification task"):
        load_classifier("gguf:/nowhere/model.gguf")


def test_options_are_checked_in_one_place() -> None:
    with FaultServer() as fault:
        with pytest.raises(ModelError, match="temperature is a decoding parameter, not an option of"):
            load_chat(fault.uri, temperature=0.5)
        with pytest.raises(
            ModelError, match=r"unknown option 'concurency' for .*; options of this backend: concurrency"
        ):
            load_chat(fault.uri, concurency=2)
        with pytest.raises(ModelError, match="unknown option 'api_key'"):
            load_chat(fault.uri, api_key="sk-not-from-a-spec")
        with pytest.raises(ModelError, match="concurrency=0 .* must be a whole number >= 1"):
            load_chat(fault.uri, concurrency=0)
    with pytest.raises(ModelError, match="unknown option 'n_ctx' for embedded:imdb-sentiment"):
        load_model("embedded:imdb-sentiment", n_ctx=10)


def test_missing_files_name_the_path(tmp_path: Path) -> None:
    for uri, fragment in [
        (f"spacy:{tmp_path}/none", f"spaCy model directory {tmp_path}/none does not exist"),
        (f"gguf:{tmp_path}/none.gguf", f"GGUF file {tmp_path}/none.gguf does not exist"),
        (f"hf:{tmp_path}/none", f"hf model directory {tmp_path}/none does not exist"),
    ]:
        with pytest.raises(ModelError) as err:
            load_model(uri)
        assert fragment in str(err.value) and "\n" not in str(err.value)


def test_check_model_classifier_and_chat() -> None:
    pytest.importorskip("spacy")
    result = check_model("embedded:imdb-sentiment")
    assert result["kind"] == "classifier"
    assert result["output"]["prediction"]["labels"] == ["POS"]
    assert result["fingerprint"]["model_id"] == "embedded:imdb-sentiment"
    assert len(result["fingerprint_key"]) == 32 and result["latency_s"] >= 0
    with FaultServer(model_id="served") as fault:
        chat = check_model(fault.uri)
    assert chat["kind"] == "chat"
    assert chat["output"]["response"]["text"] == "echo: Say hello."
    assert chat["fingerprint"]["weights"] == "served"
