"""Soundness of the verifier on a real trained model (issue 6, requirement 5).

Every check compares concrete values — the model's own forward pass on points of the input box, and
on sentences with real substitutions — against the verifier's bounds at *every* layer. The negative
controls at the end show that the checks do fail on an unsound verifier.
"""

from __future__ import annotations

import random

import pytest
import torch

from fairprobe.methods.certify import softmax as deept_softmax
from fairprobe.methods.certify import zonotope
from fairprobe.methods.certify.certificate import Substitutes, VerifierSettings, certify, token_ids
from fairprobe.methods.certify.data import load_adult
from fairprobe.methods.certify.interval import Point
from fairprobe.methods.certify.network import abstract_input, max_verified_eps, walk

TOL = 1e-9


@pytest.fixture(scope="module")
def sentences(loaded):
    """Six held-out Adult sentences (both sexes, both labels) with their token embeddings."""
    rows = load_adult("test")
    picked = [r for r in rows if " female," in r.text][:3] + [r for r in rows if " male," in r.text][:3]
    return [(r, token_ids(loaded, r.text)) for r in picked]


def embed(loaded, ids):
    return loaded.module.tok.weight[torch.tensor(ids)].detach().clone()


def layer_values(model, e):
    rec: list = []
    with torch.no_grad():
        walk(model, Point(e), record=rec)
    return [(name, lo) for name, (lo, _) in rec]


def layer_bounds(model, e, eps, domain, cap=4096, relaxation="deept"):
    rec: list = []
    with torch.no_grad():
        walk(model, abstract_input(e, eps, domain), cap, rec, relaxation=relaxation)
    return rec


def worst_violation(values, bounds) -> float:
    """Largest amount by which a concrete value leaves its layer's bounds (<= 0: all inside)."""
    worst = -float("inf")
    for (name, v), (name2, (lo, hi)) in zip(values, bounds, strict=True):
        assert name == name2
        slack = TOL * (1 + v.abs())
        worst = max(worst, float((lo - slack - v).max()), float((v - hi - slack).max()))
    return worst


def box_points(e, eps, count, seed):
    gen = torch.Generator().manual_seed(seed)
    for i in range(count):
        if i % 2:  # vertices, where relaxations are loosest
            yield e + eps * (torch.randint(0, 2, e.shape, generator=gen).double() * 2 - 1)
        else:
            yield e + eps * (torch.rand(e.shape, generator=gen, dtype=torch.float64) * 2 - 1)


def test_point_walk_is_the_model(loaded, sentences):
    """The verifier interprets the same network the model runs (padding-free forward)."""
    for _, ids in sentences:
        e = embed(loaded, ids)
        with torch.no_grad():
            direct = loaded.module(torch.tensor([ids]))[0]
            padded = loaded.module(torch.tensor([ids + [0, 0, 0]]))[0]
        walked = layer_values(loaded.module, e)[-1][1]
        assert torch.allclose(direct, walked, atol=1e-10) and torch.allclose(padded, walked, atol=1e-10)


@pytest.mark.parametrize(
    ("domain", "relaxation"),
    [
        ("zonotope", "deept"),
        ("zonotope-only", "deept"),
        ("zonotope", "fast"),
        ("zonotope-only", "fast"),
        ("ibp", "deept"),
    ],
)
def test_random_points_of_the_box_stay_inside_every_layer_bound(loaded, sentences, domain, relaxation):
    for j, (_, ids) in enumerate(sentences[: 4 if relaxation == "deept" else 2]):  # the default: more
        e = embed(loaded, ids)
        for eps in (1e-3, 2e-2, 6e-2):
            bounds = layer_bounds(loaded.module, e, eps, domain, relaxation=relaxation)
            for p in box_points(e, eps, 12, seed=j):
                assert worst_violation(layer_values(loaded.module, p), bounds) <= 0, (domain, eps)


def test_actual_gender_substitutions_stay_inside_the_bounds_at_t(loaded, sentences):
    subs = Substitutes(loaded, k=50)
    index = {w: i for i, w in enumerate(loaded.vocab)}
    rng = random.Random(0)
    checked = 0
    for _, ids in sentences:
        tokens = [loaded.vocab[i] for i in ids]
        words = [w for w in dict.fromkeys(tokens) if w in subs.sensitive]
        assert words, "every picked sentence holds a gender word"
        t = max(subs.threshold(w) for w in words)
        e = embed(loaded, ids)
        bounds = layer_bounds(loaded.module, e, t, "zonotope")
        variants = [{w: s} for w in words for s, _ in subs.of(w)]
        variants += [{w: rng.choice(subs.of(w))[0] for w in words} for _ in range(10)]  # combinations
        for swap in variants:
            new_ids = [index[swap.get(w, w)] for w in tokens]
            e2 = embed(loaded, new_ids)
            assert float((e2 - e).abs().max()) <= t + 1e-12  # Eq. 3: the substitute is in the box
            assert worst_violation(layer_values(loaded.module, e2), bounds) <= 0, swap
            checked += 1
    assert checked >= 6 * 50


def test_certified_sentences_never_change_prediction(loaded, sentences):
    subs = Substitutes(loaded, k=50)
    index = {w: i for i, w in enumerate(loaded.vocab)}
    settings = VerifierSettings(steps=4, baseline=False, attack=False)
    certified = 0
    for example, ids in sentences:
        record = certify(loaded, example, subs, settings)
        e = embed(loaded, ids)
        # the guarantee behind ε*: no point of the ε*-box flips the prediction
        for p in box_points(e, record["eps_star"], 20, seed=1):
            assert int(layer_values(loaded.module, p)[-1][1].argmax()) == record["prediction"]
        if not record["certified"]:
            continue
        certified += 1
        tokens = [loaded.vocab[i] for i in ids]
        for w in record["substitutes"]:
            for s, _ in record["substitutes"][w]:
                new_ids = [index[s] if tok == w else index[tok] for tok in tokens]
                with torch.no_grad():
                    logits = loaded.module(torch.tensor([new_ids]))[0]
                assert int(logits.argmax()) == record["prediction"], (w, s)
    assert certified >= 1, "the pre-trained tiny model certifies some sentences"


def test_zonotope_is_never_looser_than_ibp(loaded, sentences):
    for _, ids in sentences:
        e = embed(loaded, ids)
        for eps in (1e-4, 1e-3, 1e-2):
            zb = layer_bounds(loaded.module, e, eps, "zonotope")
            ib = layer_bounds(loaded.module, e, eps, "ibp")
            for (name, (zl, zh)), (_, (il, ih)) in zip(zb, ib, strict=True):
                assert bool((zl >= il - TOL * (1 + il.abs())).all()), name
                assert bool((zh <= ih + TOL * (1 + ih.abs())).all()), name
    for _, ids in sentences[:3]:
        e = embed(loaded, ids)
        target = int(layer_values(loaded.module, e)[-1][1].argmax())
        z = max_verified_eps(loaded.module, e, target, "zonotope", steps=4)
        i = max_verified_eps(loaded.module, e, target, "ibp", steps=4)
        assert z.eps_star >= i.eps_star


# -- negative controls: the checks above catch an unsound verifier ---------------------------------


def test_fused_attention_walk_is_the_unfused_walk(loaded, sentences, monkeypatch):
    """The verifier's default walk computes softmax(q k) v in one fused step
    (:meth:`.network.ZonoBox.attention`); every layer's bounds and the margin must be those of the
    unfused composition (scores, DeepT's softmax, product), which the checks above hold sound."""
    from fairprobe.methods.certify.network import ZonoBox

    def unfused(self, k, v):
        scores = self.matmul(k)
        probs = scores.softmax("deept")
        return probs.matmul(v), scores.bounds(), probs.bounds()

    monkeypatch.setattr(deept_softmax, "FUSE_MIN", 0)  # fused at any size (the default: long sentences)
    runs = []
    for attention in (ZonoBox.attention, unfused):
        monkeypatch.setattr(ZonoBox, "attention", attention)
        runs.append(
            [layer_bounds(loaded.module, embed(loaded, ids), 2e-2, "zonotope") for _, ids in sentences[:2]]
        )
    for fused, plain in zip(*runs, strict=True):
        for (name, (lo, hi)), (name2, (lo2, hi2)) in zip(fused, plain, strict=True):
            assert name == name2
            assert torch.allclose(lo, lo2, rtol=1e-9, atol=1e-12), name
            assert torch.allclose(hi, hi2, rtol=1e-9, atol=1e-12), name


def test_check_catches_a_box_that_is_too_small(loaded, sentences):
    _, ids = sentences[0]
    e = embed(loaded, ids)
    bounds = layer_bounds(loaded.module, e, 1e-3, "zonotope")
    points = list(box_points(e, 2e-3, 6, seed=3))
    assert max(worst_violation(layer_values(loaded.module, p), bounds) for p in points) > 0


@pytest.mark.parametrize(
    ("relaxation", "module", "name"),
    [("fast", zonotope, "exp_relax"), ("deept", deept_softmax, "convex_relax")],
)
def test_check_catches_an_unsound_exp_relaxation(loaded, sentences, monkeypatch, relaxation, module, name):
    original = getattr(module, name)

    def unsound(*args):  # an enclosure shifted off the function: wrong by more than its error term
        lam, mu, beta = original(*args)
        return lam, mu + 0.5, beta

    monkeypatch.setattr(module, name, unsound)
    worst = -float("inf")
    for j, (_, ids) in enumerate(sentences[:3]):
        e = embed(loaded, ids)
        bounds = layer_bounds(loaded.module, e, 1e-3, "zonotope-only", relaxation=relaxation)
        for p in box_points(e, 1e-3, 4, seed=j):
            worst = max(worst, worst_violation(layer_values(loaded.module, p), bounds))
    assert worst > 0
