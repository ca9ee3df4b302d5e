"""Certify your own model: a PyTorch transformer (nn.Embedding, nn.TransformerEncoderLayer with GELU,
mean pooling, nn.Linear) saved as a state dict plus a config, through the real `fairprobe` CLI."""

from __future__ import annotations

import json
import random

import pytest
import torch
from torch import nn

from fairprobe.methods.certify.interval import Point
from fairprobe.methods.certify.network import abstract_input, walk

WORDS = [
    "<pad>",
    "<unk>",
    "she",
    "he",
    "woman",
    "man",
    "female",
    "male",
    "works",
    "hours",
    "a",
    "week",
    "is",
    "an",
    "engineer",
    "nurse",
    "earns",
    "much",
    "little",
    "the",
    "person",
]


class MyClassifier(nn.Module):
    def __init__(self, vocab: int, dim: int = 8, heads: int = 2, blocks: int = 2, classes: int = 3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.pos = nn.Embedding(32, dim)
        layer = nn.TransformerEncoderLayer(
            dim, heads, dim_feedforward=16, dropout=0.1, activation="gelu", batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, blocks, enable_nested_tensor=False)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.emb(ids) + self.pos.weight[: ids.shape[1]]
        return self.head(self.encoder(x).mean(1))


LAYERS = [
    {"type": "embedding", "module": "emb"},
    {"type": "position_embedding", "module": "pos"},
    {"type": "transformer_encoder_layer", "module": "encoder.layers.0", "heads": 2, "activation": "gelu"},
    {"type": "dropout"},
    {"type": "transformer_encoder_layer", "module": "encoder.layers.1", "heads": 2, "activation": "gelu"},
    {"type": "mean_pool"},
    {"type": "linear", "module": "head"},
]


def save(tmp_path, layers=LAYERS):
    torch.manual_seed(3)
    model = MyClassifier(len(WORDS)).eval()
    folder = tmp_path / "mine"
    folder.mkdir()
    torch.save(model.state_dict(), folder / "model.pt")
    (folder / "vocab.json").write_text(json.dumps(WORDS))
    (folder / "config.json").write_text(
        json.dumps({"vocab": "vocab.json", "task": "adult-gender", "max_len": 32, "layers": layers})
    )
    return model, folder


def sentences(n: int = 6) -> list[str]:
    rng = random.Random(0)
    out = []
    for _ in range(n):
        who = rng.choice(["she", "he", "the woman", "the man", "a female person", "a male person"])
        out.append(
            f"{who} is an {rng.choice(['engineer', 'nurse'])} and earns {rng.choice(['much', 'little'])}"
        )
    return out


def test_the_loaded_model_computes_what_the_users_model_computes(tmp_path):
    from fairprobe.methods.certify.certificate import token_ids
    from fairprobe.methods.certify.model import load_model

    mine, folder = save(tmp_path)
    loaded = load_model(folder)
    assert (loaded.cfg.blocks, loaded.cfg.activation, loaded.cfg.classes) == (2, "gelu", 3)
    for text in sentences():
        ids = token_ids(loaded, text)
        with torch.no_grad():
            theirs = mine.double()(torch.tensor([ids]))[0]
            ours = walk(loaded.module, Point(loaded.module.tok.weight[torch.tensor(ids)])).v
        assert torch.allclose(theirs, ours, atol=1e-10), text


def test_gelu_blocks_stay_sound_on_sampled_points(tmp_path):
    from fairprobe.methods.certify.certificate import token_ids
    from fairprobe.methods.certify.model import load_model

    _, folder = save(tmp_path)
    loaded = load_model(folder)
    e = loaded.module.tok.weight[torch.tensor(token_ids(loaded, sentences(1)[0]))].detach()
    eps = 0.05
    for domain in ("zonotope", "ibp"):
        rec: list = []
        with torch.no_grad():
            walk(loaded.module, abstract_input(e, eps, domain), 4096, rec)
        gen = torch.Generator().manual_seed(0)
        for _ in range(200):
            x = e + eps * (torch.rand(e.shape, generator=gen, dtype=e.dtype) * 2 - 1)
            vals: list = []
            with torch.no_grad():
                walk(loaded.module, Point(x), record=vals)
            for (name, (v, _)), (_, (lo, hi)) in zip(vals, rec, strict=True):
                slack = 1e-9 * (1 + v.abs())
                assert (v >= lo - slack).all() and (v <= hi + slack).all(), (domain, name)
    assert any(name.endswith(".gelu") for name, _ in rec)


def test_verify_certifies_a_user_model_end_to_end(tmp_path, cli):
    _, folder = save(tmp_path)
    data = tmp_path / "data.jsonl"
    data.write_text(
        "".join(json.dumps({"text": t, "label": i % 2}) + "\n" for i, t in enumerate(sentences(6)))
    )
    r = cli(
        "certify",
        "verify",
        "--model",
        str(folder),
        "--data",
        str(data),
        "--n",
        "2",
        "--steps",
        "3",
        "--no-baseline",
        "--out",
        str(tmp_path / "run"),
        cwd=tmp_path,
    )
    assert r.returncode in (0, 1), r.stderr[-2000:]
    rows = [json.loads(x) for x in (tmp_path / "run" / "findings.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:
        assert row["eps_star"] > 0 and row["threshold"] > 0 and row["substitutes"]
        assert row["attack_radius"] is None or row["attack_radius"] >= row["eps_star"]


@pytest.mark.parametrize(
    "layer,message",
    [
        ({"type": "lstm", "module": "rnn"}, "layer 3 'lstm' (rnn) is not supported"),
        (
            {
                "type": "transformer_encoder_layer",
                "module": "encoder.layers.0",
                "heads": 2,
                "norm_first": True,
            },
            "pre-norm",
        ),
        (
            {
                "type": "transformer_encoder_layer",
                "module": "encoder.layers.0",
                "heads": 2,
                "activation": "tanh",
            },
            "activation 'tanh' is not supported",
        ),
    ],
)
def test_an_unsupported_layer_is_named(tmp_path, cli, layer, message):
    layers = [*LAYERS[:2], layer, *LAYERS[4:]]
    _, folder = save(tmp_path, layers)
    r = cli(
        "certify", "verify", "--model", str(folder), "--n", "2", "--out", str(tmp_path / "run"), cwd=tmp_path
    )
    assert r.returncode == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
