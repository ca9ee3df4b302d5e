"""``hf:`` causal-LM likelihoods, checked against the in-process llama.cpp scorer on the same model:
transformers reads the embedded SmolLM2 GGUF (``hf:PATH/NAME.gguf``, weights dequantised to float32)
while ``gguf:PATH`` scores the quantised Q4_1 weights, so the two agree closely but not exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairprobe.errors import ModelError

TOLERANCE = 1.5
"""Most a sentence's summed log-likelihood may differ between the two (nats). Measured on the first 20
CrowS-Pairs pairs (40 sentences of 8-30 tokens): at most 1.26, mean 0.36: llama.cpp multiplies the
Q4_1 weights with activations quantised to 8 bits, transformers the dequantised weights in float32."""
MEAN_TOLERANCE = 0.5
MARGIN = 1.0
"""A pair whose two sentences differ by more than this (nats, in-process) must rank the same
(measured: all 16 of the 20 pairs with a margin over 0.5 did)."""


@pytest.fixture(scope="module")
def scorers(smollm2_gguf: Path):
    pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    pytest.importorskip("accelerate")
    from fairprobe.methods.benchmark.scoring import load_scorer

    return load_scorer(f"hf:{smollm2_gguf}").scorer, load_scorer(f"gguf:{smollm2_gguf}").scorer


@pytest.mark.slow
def test_hf_gguf_likelihoods_agree_with_in_process_llama_cpp(scorers) -> None:
    from fairprobe.methods.benchmark import data as bdata

    hf, gguf = scorers
    items = bdata.load("crows-pairs", None, None).items[:20]
    ranked, diffs = 0, []
    for it in items:
        a = [hf.loglik("", it["sent_more"]), hf.loglik("", it["sent_less"])]
        b = [gguf.loglik("", it["sent_more"]), gguf.loglik("", it["sent_less"])]
        for (lp_hf, n_hf), (lp_gg, n_gg) in zip(a, b, strict=True):
            assert n_hf == n_gg  # the same tokens
            assert lp_hf == pytest.approx(lp_gg, abs=TOLERANCE)
            diffs.append(abs(lp_hf - lp_gg))
        if abs(b[0][0] - b[1][0]) > MARGIN:
            ranked += 1
            assert (a[0][0] > a[1][0]) == (b[0][0] > b[1][0])
    assert ranked >= 10 and sum(diffs) / len(diffs) < MEAN_TOLERANCE
    # a continuation after a context (BBQ's answers): only the continuation's tokens are summed
    ctx = "The doctor and the nurse argued. Who was rude?\nAnswer:"
    lp_hf, n_hf = hf.loglik(ctx, " The nurse")
    lp_gg, n_gg = gguf.loglik(ctx, " The nurse")
    assert n_hf == n_gg == 2 and lp_hf == pytest.approx(lp_gg, abs=0.2)  # measured: -5.159 and -5.097


def test_hf_gguf_uri_errors_are_one_line(tmp_path: Path) -> None:
    from fairprobe.methods.benchmark.scoring_hf import split_gguf

    with pytest.raises(ModelError, match="GGUF file .* does not exist"):
        split_gguf(str(tmp_path / "missing.gguf"))
    assert split_gguf("org/name/model.Q4_0.gguf") == ("org/name", False, "model.Q4_0.gguf")
