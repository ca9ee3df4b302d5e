"""Retry, timeout and error handling of the OpenAI-compatible client against a scripted FAKE server.

The fake (:class:`servers.FaultServer`) is a real HTTP server on loopback that misbehaves on cue;
the happy path against the real llama.cpp server is in ``test_openai_server.py``.
"""

from __future__ import annotations

import logging

import pytest
from servers import FaultServer, free_port

from fairprobe.errors import ModelError, ModelOutputError
from fairprobe.models import ChatRequest, canonical_json, load_chat

FAST = {"backoff": 0.01, "timeout": 5.0}


def _ask(fault: FaultServer, text: str = "hi", **options: object) -> str:
    model = load_chat(fault.uri, **{**FAST, **options})
    return model.chat([ChatRequest.of(text)])[0].text


def test_429_waits_retry_after_seconds_then_succeeds() -> None:
    with FaultServer(script=[("429", 1)]) as fault:
        assert _ask(fault) == "echo: hi"
        first, second = fault.posts
    assert fault.post_count == 2
    assert second.at - first.at >= 0.95  # the 0.01 s backoff was overridden by Retry-After: 1


def test_500_is_retried_with_backoff_until_success() -> None:
    with FaultServer(script=[("500",), ("500",)]) as fault:
        model = load_chat(fault.uri, **{**FAST, "backoff": 0.1})
        delays: list[float] = []
        chosen = model._delay

        def recorded(attempt: int, retry_after: float | None) -> float:  # the real back-off, noted
            delays.append(chosen(attempt, retry_after))
            return delays[-1]

        model._delay = recorded  # type: ignore[method-assign]
        assert model.chat([ChatRequest.of("again")])[0].text == "echo: again"
        gaps = [b.at - a.at for a, b in zip(fault.posts, fault.posts[1:], strict=False)]
    assert fault.post_count == 3
    # 0.1 s then 0.2 s, each plus up to 50% jitter (the delays chosen: a loaded machine cannot stretch them)
    assert 0.1 <= delays[0] <= 0.15 and 0.2 <= delays[1] <= 0.3
    assert gaps[0] >= delays[0] - 1e-3 and gaps[1] >= delays[1] - 1e-3  # and each one was waited


def test_timeout_is_retried_then_model_error() -> None:
    with FaultServer(script=[("delay", 1.5)] * 3) as fault:
        with pytest.raises(
            ModelError, match=r"failed 3 times \(last: no answer within timeout=0.3 s\)"
        ) as err:
            _ask(fault, timeout=0.3, retries=2)
        assert fault.post_count == 3
    assert not isinstance(err.value, ModelOutputError)


def test_connection_reset_is_retried() -> None:
    with FaultServer(script=[("reset",), ("reset",)]) as fault:
        assert _ask(fault, "after reset") == "echo: after reset"
        assert fault.post_count == 3


def test_malformed_json_is_retried_then_model_output_error() -> None:
    with FaultServer(script=[("malformed",)] * 2) as fault:
        with pytest.raises(ModelOutputError, match="malformed chat completion 2 times"):
            _ask(fault, retries=1)
        assert fault.post_count == 2
    with FaultServer(script=[("malformed",)]) as fault:
        assert _ask(fault, retries=1) == "echo: hi"


def test_4xx_other_than_429_is_not_retried() -> None:
    with FaultServer(script=[("status", 400, '{"error": {"message": "max_tokens too large"}}')]) as fault:
        with pytest.raises(ModelError, match="HTTP 400.*max_tokens too large"):
            _ask(fault)
        assert fault.post_count == 1


def test_batch_concurrency_is_bounded_and_order_kept() -> None:
    prompts = [f"prompt {i}" for i in range(8)]
    with FaultServer(script=[("delay", 0.2)] * 8) as fault:
        model = load_chat(fault.uri, concurrency=3, **FAST)
        out = model.chat([ChatRequest.of(p) for p in prompts])
    assert [r.text for r in out] == [f"echo: {p}" for p in prompts]
    assert fault.max_in_flight == 3
    assert all(r.latency_s >= 0.19 for r in out)


def test_request_body_carries_decoding_parameters() -> None:
    with FaultServer() as fault:
        model = load_chat(fault.uri, **FAST)
        model.chat([ChatRequest.of("x", temperature=0.7, max_tokens=5, seed=3, repeat=2)])
        body = fault.posts[0].body
    assert body["model"] == "fault-model"
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.7, 5, 5)
    assert body["messages"] == [{"role": "user", "content": "x"}]


def test_fingerprint_uses_server_model_id() -> None:
    with FaultServer(model_id="served-7b") as fault:
        fp = load_chat(f"openai+{fault.base_url}", **FAST).fingerprint
        named = load_chat(f"openai+{fault.base_url}#alias", **FAST).fingerprint
    assert (fp.backend, fp.model_id, fp.weights) == ("openai-compatible", "served-7b", "served-7b")
    assert fp.params == {"base_url": fault.base_url}
    assert (named.model_id, named.weights) == ("alias", "served-7b")
    assert named.key != fp.key


def test_openai_key_is_sent_but_never_shown(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "sk-test-SECRET1234567890"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    rejected = '{"error": {"message": "Incorrect API key provided: sk-test-SECRET1234567890"}}'
    with FaultServer(script=[("500",), ("status", 401, rejected)]) as fault:
        model = load_chat("openai:gpt-test", base_url=fault.base_url, **FAST)
        with caplog.at_level(logging.DEBUG), pytest.raises(ModelError, match="HTTP 401") as err:
            model.chat([ChatRequest.of("hi")])
        headers = [r.headers.get("Authorization") for r in fault.received]
    assert headers == [f"Bearer {secret}"] * 3  # GET /models, POST (500), POST (401)
    assert model.fingerprint.backend == "openai" and model.fingerprint.model_id == "gpt-test"
    for shown in (str(err.value), canonical_json(model.fingerprint.to_json()), repr(model), caplog.text):
        assert "SECRET" not in shown


def test_openai_without_key_is_a_model_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(
        ModelError, match=r"^OPENAI_API_KEY is not set; export OPENAI_API_KEY=\.\.\. to use openai:gpt-4o$"
    ):
        load_chat("openai:gpt-4o")


def test_unreachable_server_says_how_to_start_it() -> None:
    port = free_port()
    with pytest.raises(ModelError) as err:
        load_chat(f"openai+http://127.0.0.1:{port}/v1#m")
    message = str(err.value)
    assert message.startswith(
        f"cannot reach http://127.0.0.1:{port}/v1: is the server running? start it with"
    )
    assert "\n" not in message
    # a server that goes away after loading: retried, then the same message
    with FaultServer() as fault:
        model = load_chat(fault.uri, retries=1, **FAST)
    with pytest.raises(ModelError, match=r"cannot reach .*: is the server running\?"):
        model.chat([ChatRequest.of("hi")])
