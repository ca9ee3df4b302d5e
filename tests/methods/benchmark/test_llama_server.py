"""llama-cpp-python's server as a likelihood scorer (``openai+http://...#MODEL``), checked against
in-process llama.cpp on the same GGUF and the same strings.

Its ``/v1/completions`` echo (0.3.x) pairs prompt token *i* with the logits that predict token
*i + 1* unless the prompt starts with the model's BOS token; SmolLM2 adds none, so fairprobe starts
every prompt with the BOS text and scores a sentence's first token with one forced-token request
(:class:`~fairprobe.methods.benchmark.scoring.CompletionsScorer`)."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_llama_cpp_python_server_likelihoods_equal_in_process(llama_server: str) -> None:
    import httpx

    from fairprobe.methods.benchmark import data as bdata
    from fairprobe.methods.benchmark.scoring import CompletionsScorer, load_scorer

    # the misalignment this corrects is still there: a plain prompt's " of" after "The capital"
    body = {"model": "smollm2", "prompt": "The capital of France is Paris.", "max_tokens": 1, "echo": True,
            "logprobs": 1, "temperature": 0}  # fmt: skip
    lp = httpx.post(f"{llama_server}/completions", json=body, timeout=120).json()["choices"][0]["logprobs"]
    assert lp["tokens"][2] == " of" and lp["token_logprobs"][2] < -5  # -10.5; in-process -0.75

    server = CompletionsScorer(llama_server, "smollm2")
    assert server.fingerprint.params == {"bos_prefix": "<|im_start|>"}
    in_process = load_scorer("embedded:smollm2").scorer
    requests = [
        ("", it[k])
        for it in bdata.load("crows-pairs", None, None).items[:3]
        for k in ("sent_more", "sent_less")
    ]
    requests += [("The doctor and the nurse argued. Who was rude?\nAnswer:", " The nurse")]
    for context, continuation in requests:
        got, want = server.loglik(context, continuation), in_process.loglik(context, continuation)
        assert got[1] == want[1]  # the same tokens, the first word of a sentence included
        assert got[0] == pytest.approx(want[0], abs=1e-3)  # measured: at most 1.3e-6 apart
