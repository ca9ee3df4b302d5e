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
    assert fp.params == {"n_ctx": 8192}  # SmolLM2's trained context, read from the GGUF file
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
    model = load_chat("embedded:smollm2", n_threads=2)
    assert model.n_ctx == 8192
    prompt_tokens = sum(len(model._llama.tokenize(m["content"].encode())) for m in messages)
    assert prompt_tokens > 2048  # the size that did not fit before
    answer = model.chat([ChatRequest.of(messages, max_tokens=4, temperature=0.0)])[0]
    assert answer.prompt_tokens > 2048 and answer.completion_tokens > 0
