"""``gguf:`` and ``embedded:smollm2``: llama.cpp in-process on the packaged SmolLM2-135M GGUF."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from servers import FaultServer

from fairprobe.errors import ModelError
from fairprobe.models import ChatRequest, load_chat, load_model

pytest.importorskip("llama_cpp")


def test_gguf_in_process_chat(smollm2_gguf: Path) -> None:
    model = load_chat(f"gguf:{smollm2_gguf}", n_threads=1)  # 1 thread: robust on a busy 2-core machine
    requests = [
        ChatRequest.of("What is 2+2? Answer with a number.", max_tokens=12),
        ChatRequest.of("Say hello.", max_tokens=12),
    ]
    first = model.chat(requests)
    again = model.chat(requests[:1])  # same request right after: the context is reset, same answer
    assert "4" in first[0].text
    assert again[0].text == first[0].text
    assert first[1].text and first[1].text != first[0].text
    for r in first:
        assert 0 < r.completion_tokens <= 12 and r.prompt_tokens > 0 and r.latency_s > 0
    fp = model.fingerprint
    assert fp.backend == "gguf" and fp.model_id == f"gguf:{smollm2_gguf.name}"
    assert fp.weights == hashlib.sha256(smollm2_gguf.read_bytes()).hexdigest()
    assert fp.params == {"n_ctx": 8192, "prompt_eval": "prefix-split"}  # SmolLM2's trained context
    embedded = load_model("embedded:smollm2", n_ctx=1024, n_threads=1)
    assert embedded.fingerprint.weights == fp.weights and embedded.fingerprint.model_id == "embedded:smollm2"


def test_gguf_missing_or_broken_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=f"GGUF file {tmp_path / 'x.gguf'} does not exist"):
        load_chat(f"gguf:{tmp_path / 'x.gguf'}")
    (tmp_path / "junk.gguf").write_bytes(b"not a gguf file")
    with pytest.raises(ModelError, match=f"llama.cpp cannot load {tmp_path / 'junk.gguf'}"):
        load_chat(f"gguf:{tmp_path / 'junk.gguf'}")


def test_a_prompt_longer_than_the_context_is_its_own_error_and_the_batch_goes_on(smollm2_gguf: Path) -> None:
    """llama.cpp's "Requested tokens exceed context window" becomes ContextLengthError (a ModelError), and
    chat_tolerant puts it in that request's place while the short requests beside it are answered."""
    from fairprobe.errors import ContextLengthError
    from fairprobe.models.context import chat_tolerant

    model = load_chat(f"gguf:{smollm2_gguf}", n_ctx=128, n_threads=1)
    long = ChatRequest.of("Repeat: " + "engineer " * 300, max_tokens=4)
    short = ChatRequest.of("Say hello.", max_tokens=4)
    with pytest.raises(
        ContextLengthError, match=r"is 3\d\d tokens, over its context of 128 tokens; raise it with"
    ):
        model.chat([long])
    out = chat_tolerant(model, [short, long, short])
    assert isinstance(out[1], ContextLengthError)
    assert out[0].text and out[2].text == out[0].text
    with FaultServer() as fault:  # a server that goes away: any other model error still stops the batch
        gone = load_chat(fault.uri, retries=1, backoff=0.01, timeout=5.0)
    with pytest.raises(ModelError, match="cannot reach"):
        chat_tolerant(gone, [short, long])


def test_the_longest_meta_fair_generator_conversation_fits_the_embedded_context() -> None:
    """The embedded SmolLM2 gets the context it was trained for (8,192), not 2,048: a Meta-Fair MR1
    generator conversation in its last correction round (sectioned prompt, a long rejected answer,
    the correction) is over 2,048 tokens and must still be answered, not refused as too long."""
    from fairprobe.lexicons.metafair_catalogue import load_catalogue
    from fairprobe.methods.metafair import generator as gen
    from fairprobe.methods.metafair.relations import select_dimensions, select_relations

    cat = load_catalogue(None)
    request = gen.plan(select_relations(["MR1"]), select_dimensions(["gender"]), cat, 1, 1, 0)[0]
    rejected = (
        '[{"mr": "MR1", "source": "What careers suit a nurse?", "follow_up": "What careers suit a nurse?"}'
    )
    messages = [
        {"role": "system", "content": gen.system_prompt(request.mr, cat, request.dimension)},
        {"role": "user", "content": gen.user_prompt(request)},
        {"role": "assistant", "content": " ".join([rejected] * 60)},
        {
            "role": "user",
            "content": "Your answer had problems: test 1: 'dimension' is missing. Reply with ONLY "
            "a JSON array of 1 new valid test object(s) in the format asked.",
        },
    ]
    # one thread: the suite runs a test per core; a second llama.cpp thread only spins against the other
    # worker (this prompt took 52.6 s of CPU with two threads under load, 17.5 s with one)
    model = load_chat("embedded:smollm2", n_threads=1)
    assert model.n_ctx == 8192
    prompt_tokens = sum(len(model._llama.tokenize(m["content"].encode())) for m in messages)
    assert prompt_tokens > 2048  # the size that did not fit before
    answer = model.chat([ChatRequest.of(messages, max_tokens=4, temperature=0.0)])[0]
    assert answer.prompt_tokens > 2048 and answer.completion_tokens > 0


def _loan(text: str) -> list[dict[str, str]]:
    """A task conversation: one system prompt and few-shot turns (the pinned prefix), then the text."""
    shots = [
        ("He earns $58,000 and never missed a payment.", "Approve. He has a steady income and pays on time."),
        ("She has no income.", "Deny. Without an income she cannot repay the loan."),
    ]
    out = [{"role": "system", "content": "You are a loan officer. Explain your decision in two sentences."}]
    for shot, answer in shots:
        out += [{"role": "user", "content": f"Application: {shot}"}, {"role": "assistant", "content": answer}]
    return out + [{"role": "user", "content": f"Application: {text}"}]


def test_the_kept_prompt_prefix_is_read_once_and_answers_do_not_depend_on_request_order(
    smollm2_gguf: Path,
) -> None:
    """Issue 43: the system prompt and few-shot turns are kept in the KV cache between requests (as
    llama.cpp's server does), and evaluated as the same fixed part whether kept or fresh, so each
    request gets the same 40-token answer alone, after a request with the same prefix, or after one
    with another prefix (which forces the prefix to be evaluated again)."""
    from fairprobe.models import meter

    model = load_chat(f"gguf:{smollm2_gguf}", n_ctx=1024, n_threads=1)
    a = ChatRequest.of(_loan("A teacher who earns $40,000 asks for $5,000."), max_tokens=40, temperature=0.0)
    b = ChatRequest.of(_loan("A retired nurse asks for $90,000 for a boat."), max_tokens=40, temperature=0.0)
    other = ChatRequest.of("Say hello.", max_tokens=8, temperature=0.0)
    meter.reset()
    alone = model.chat([a])[0]
    after_b = model.chat([b, a])[1]
    after_other = model.chat([other, a])[1]
    assert alone.completion_tokens > 5  # a real answer to compare, not one word
    assert after_b.text == alone.text and after_other.text == alone.text
    seen = meter.snapshot()
    assert seen["requests"] == 5
    # a after b: its prefix (system + 4 turns) was kept, so fewer prompt tokens were evaluated than sent
    assert 0 < seen["prompt_reused"] < seen["prompt_tokens"]
    assert seen["prompt_evaluated"] + seen["prompt_reused"] == seen["prompt_tokens"]
    summary = meter.summary(1.0)
    assert summary["prompt_tokens_per_s"] > 0 and summary["generation_tokens_per_s"] > 0


def test_a_stop_request_ends_generation_and_nothing_cut_short_is_returned(smollm2_gguf: Path) -> None:
    """Ctrl-C sets the stop flag: a request in generation ends at its next token and raises
    RunInterrupted (no half answer returned), later requests are not started; clear_stop re-arms."""
    import threading

    from fairprobe.errors import RunInterrupted
    from fairprobe.models.stop import clear_stop, request_stop

    model = load_chat(f"gguf:{smollm2_gguf}", n_ctx=1024, n_threads=1)
    long = ChatRequest.of("Write a long story about a dragon.", max_tokens=400, temperature=0.0)
    answered: list[int] = []
    timer = threading.Timer(1.5, request_stop)
    timer.start()
    try:
        with pytest.raises(RunInterrupted):
            model.chat_each([long, long, long], lambda i, r: answered.append(i))
    finally:
        timer.cancel()
        clear_stop()
    assert answered == []  # the first answer was cut at the stop: not handed out
    again = model.chat([ChatRequest.of("Say hello.", max_tokens=8, temperature=0.0)])[0]
    assert again.text  # the model works after the stop is cleared
