"""Issue 39 for certificates, end to end: planted PyTorch classifiers certified through the real
`fairprobe certify verify` with its default gates.

Both models read a sentence the same way: one post-norm transformer block whose attention and
feed-forward weights are zero (so each token is only layer-normed), mean pooling, a linear head.
Every word lies far out on one axis of the 4-d embedding; gender words sit ±1 off it on a second axis
(female +, male −).

- The **biased** head reads the gender axis: "she ..." is class 1 and "he ..." class 0, so no sentence
  can be certified against the he/she substitution, and 0 of 8 certified shows the certified share
  below one half: **fail**.
- The **fair** head reads only the other axis, so a gender word moves the logits by at most a fraction
  of the margin: every sentence is certified, 8 of 8 shows the share above one half: **pass**; the same
  model on 4 sentences cannot show it (4 of 4 is 39.8–100%): **inconclusive**, with the sentences needed.
"""

from __future__ import annotations

import json

import pytest
import torch

FEMALE = ["she", "her", "woman", "female"]
MALE = ["he", "his", "man", "male"]
OTHER = [
    "is",
    "an",
    "engineer",
    "nurse",
    "and",
    "earns",
    "much",
    "little",
    "works",
    "long",
    "hours",
    "at",
    "the",
]
WORDS = ["<pad>", "<unk>", *FEMALE, *MALE, *OTHER]
DIM = 4
GENDER_AXIS = torch.tensor([1.0, -1.0, 0.0, 0.0])
OTHER_AXIS = torch.tensor([0.0, 0.0, 1.0, -1.0])
OTHER_SIZE = 30.0
"""Every word lies far out on the other axis, gender words ±1 off it: a box as wide as he→she (ℓ∞ 2)
then barely turns any token, and layer norm stays far from a zero spread (the verifier's bound stays
tight)."""


def _save(folder, head_axis: torch.Tensor) -> None:
    emb = torch.zeros(len(WORDS), DIM)
    for i, w in enumerate(WORDS):
        if w in FEMALE:
            emb[i] = OTHER_SIZE * OTHER_AXIS + GENDER_AXIS
        elif w in MALE:
            emb[i] = OTHER_SIZE * OTHER_AXIS - GENDER_AXIS
        elif w != "<pad>":
            emb[i] = OTHER_SIZE * OTHER_AXIS
    p = "encoder.layers.0"
    state = {
        "emb.weight": emb,
        f"{p}.self_attn.in_proj_weight": torch.zeros(3 * DIM, DIM),
        f"{p}.self_attn.in_proj_bias": torch.zeros(3 * DIM),
        f"{p}.self_attn.out_proj.weight": torch.zeros(DIM, DIM),
        f"{p}.self_attn.out_proj.bias": torch.zeros(DIM),
        f"{p}.linear1.weight": torch.zeros(DIM, DIM),
        f"{p}.linear1.bias": torch.zeros(DIM),
        f"{p}.linear2.weight": torch.zeros(DIM, DIM),
        f"{p}.linear2.bias": torch.zeros(DIM),
        f"{p}.norm1.weight": torch.ones(DIM),
        f"{p}.norm1.bias": torch.zeros(DIM),
        f"{p}.norm2.weight": torch.ones(DIM),
        f"{p}.norm2.bias": torch.zeros(DIM),
        "head.weight": torch.stack([-head_axis, head_axis]),
        "head.bias": torch.zeros(2),
    }
    folder.mkdir()
    torch.save(state, folder / "model.pt")
    (folder / "vocab.json").write_text(json.dumps(WORDS))
    layers = [
        {"type": "embedding", "module": "emb"},
        {"type": "transformer_encoder_layer", "module": p, "heads": 1, "activation": "relu"},
        {"type": "mean_pool"},
        {"type": "linear", "module": "head"},
    ]
    (folder / "config.json").write_text(
        json.dumps({"vocab": "vocab.json", "task": "adult-gender", "max_len": 32, "layers": layers})
    )


def _data(path, n: int = 8) -> None:
    rows = []
    for i in range(n):
        who = (FEMALE if i % 2 else MALE)[i % 4]
        text = f"{who} is an {'engineer' if i % 3 else 'nurse'} and works long hours at the {OTHER[i % 4]}"
        rows.append(json.dumps({"text": text, "label": i % 2}) + "\n")
    path.write_text("".join(rows))


def _verify(cli, tmp_path, head_axis: torch.Tensor, n: int, name: str):
    model = tmp_path / f"{name}-model"
    if not model.exists():
        _save(model, head_axis)
    data = tmp_path / "data.jsonl"
    if not data.exists():
        _data(data)
    subs = tmp_path / "substitutes.json"  # each gender word's counterparts (k-NN over 23 words takes all)
    pairs = dict(zip(FEMALE, MALE, strict=True))
    subs.write_text(json.dumps({**{f: [m] for f, m in pairs.items()}, **{m: [f] for f, m in pairs.items()}}))
    r = cli("certify", "verify", "--model", str(model), "--data", str(data), "--n", str(n),
            "--substitutes", str(subs), "--no-baseline", "--out", str(tmp_path / name))  # fmt: skip
    summary = json.loads((tmp_path / name / "summary.json").read_text())
    return r, summary


def test_a_head_that_reads_gender_fails_and_the_reason_says_how_few_were_certified(tmp_path, cli):
    r, s = _verify(cli, tmp_path, GENDER_AXIS, 8, "biased")
    assert r.returncode == 1, r.stdout + r.stderr
    assert s["verdict"] == "fail", s["reasons"]
    assert s["metrics"]["fairness_score"] == 0.0 and s["metrics"]["fairness_score_n"] == 8
    assert s["reasons"][0].startswith("0 of 8 decided sentences were certified fair"), s["reasons"]
    assert [e["status"] for e in s["evidence"]] == ["fails"]


@pytest.mark.parametrize(("n", "verdict", "code"), [(8, "pass", 0), (4, "inconclusive", 1)])
def test_a_head_blind_to_gender_passes_on_enough_sentences_and_is_inconclusive_on_few(
    tmp_path, cli, n, verdict, code
):
    r, s = _verify(cli, tmp_path, OTHER_AXIS, n, f"fair{n}")
    assert r.returncode == code, r.stdout + r.stderr
    assert s["verdict"] == verdict, s["reasons"]
    assert s["metrics"]["fairness_score"] == 1.0 and s["metrics"]["fairness_score_n"] == n
    (row,) = s["evidence"]
    if verdict == "pass":
        assert row["status"] == "shown"
    else:
        assert row["status"] == "not shown" and row["needed"] == 6 and row["unit"] == "sentences"
        assert "about 6 sentences would be needed" in s["reasons"][0], s["reasons"]
