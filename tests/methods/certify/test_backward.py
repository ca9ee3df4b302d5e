"""The backward (CROWN-style) bound of the margin, ``relaxation: backward``, on the trained tiny model.

It must be exact where there is nothing to relax (a vanishing radius: every coefficient of the
backward pass is checked against the model's own margin), sound (the model's margin at sampled
points and vertices of the box never falls below it, nor any layer's value below or above the
bounds that the backward-tightened walk records; a bound on the wrong side fails that check), and
never worse than the forward verifier it starts from. Its command-line run is in
test_verifier_relaxation.py, beside the other relaxations'.
"""

from __future__ import annotations

import math

import pytest
import torch

from fairprobe.methods.certify import backward
from fairprobe.methods.certify.certificate import Substitutes, choose_sentences, logits_of, token_ids
from fairprobe.methods.certify.data import load_adult
from fairprobe.methods.certify.network import abstract_input, max_verified_eps, verifies, walk

from .test_soundness import box_points, layer_values, worst_violation


@pytest.fixture(scope="module")
def cases(loaded):
    subs = Substitutes(loaded, k=50)
    pool = [x for x in load_adult("test")[:400] if len(token_ids(loaded, x.text)) <= 64]
    out = []
    for example in choose_sentences(pool, subs, 3, 0):
        ids = token_ids(loaded, example.text)
        e = loaded.module.tok.weight[torch.tensor(ids)].detach().clone()
        pred = int(logits_of(loaded, ids).argmax())
        out.append((e, pred, max_verified_eps(loaded.module, e, pred, "zonotope", 4096, steps=3).eps_star))
    return out


def bounds_at(loaded, e, pred, eps, tighten=frozenset()):
    """(backward lower bound, forward zonotope lower bound) of the margin against the other class."""
    with torch.no_grad():
        x = backward.trace(abstract_input(e, eps, "zonotope"), e, eps, tighten)
        out = walk(loaded.module, x, 4096, relaxation="backward")
        back = backward.margin_lower(x.tape, out, pred)
        forward = out.value.margin_lower(pred)
    return float(back[1 - pred]), float(forward[1 - pred])


def margin_of(loaded, e, pred):
    with torch.no_grad():
        logits = walk(loaded.module, abstract_input(e, 0.0, "point")).center()
    return float(logits[pred] - logits[1 - pred])


def test_at_a_vanishing_radius_the_backward_bound_is_the_models_margin(loaded, cases):
    for e, pred, _ in cases:
        back, _ = bounds_at(loaded, e, pred, 1e-12)
        true = margin_of(loaded, e, pred)
        assert back <= true
        assert true - back < 1e-7 * (1 + abs(true))


def test_no_point_of_the_box_leaves_the_bounds(loaded, cases):
    tighten = frozenset(backward.TIGHTEN)
    for e, pred, eps_star in cases:
        for eps in (eps_star, 3 * eps_star):
            back, forward = bounds_at(loaded, e, pred, eps, tighten)
            assert math.isfinite(back)
            rec: list = []
            with torch.no_grad():
                x = backward.trace(abstract_input(e, eps, "zonotope"), e, eps, tighten)
                walk(loaded.module, x, 4096, rec, relaxation="backward")
            points = list(box_points(e, eps, 40, seed=7))
            worst = min(margin_of(loaded, p, pred) for p in points)
            assert back <= worst + 1e-9, (eps, back, worst)
            assert max(worst_violation(layer_values(loaded.module, p), rec) for p in points) <= 0


def test_a_bound_on_the_wrong_side_is_caught(loaded, cases):
    """Negative control: the backward pass run for the *upper* bound of the margin (every relaxation
    on the other side) and read as a lower bound must fail the sampling check above."""
    e, pred, eps = cases[0]
    with torch.no_grad():
        x = backward.trace(abstract_input(e, eps, "zonotope"), e, eps)
        out = walk(loaded.module, x, 4096, relaxation="backward")
        lam = torch.zeros((2, 2), dtype=e.dtype)
        lam[1 - pred, pred], lam[1 - pred, 1 - pred] = -1.0, 1.0  # -(y_pred - y_other)
        broken = -float(backward.lower_bounds(x.tape, out.index, lam)[1 - pred])
    worst = min(margin_of(loaded, p, pred) for p in box_points(e, eps, 40, seed=7))
    assert broken > worst + 1e-9


def test_backward_never_proves_less_and_tightens_the_margin(loaded, cases):
    for e, pred, eps_star in cases:
        assert verifies(loaded.module, e, pred, eps_star, "zonotope", 4096, "backward")
        back, forward = bounds_at(loaded, e, pred, eps_star / 4)
        # the backward pass loses less of the margin below ε* (docs/techniques/certify.md: 3-60% less on
        # trained models)
        true = margin_of(loaded, e, pred)
        assert true - back < true - forward


def test_an_unbounded_value_gives_no_bound_and_no_nan():
    """A value whose recorded bounds are infinite enters as a constant; a zero coefficient takes
    nothing from it, and an undefined sum reads as no bound (-inf), never nan (which would poison
    the bounds it tightens)."""
    inf = float("inf")
    lam = torch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=torch.float64)
    lo = torch.tensor([-inf, 2.0], dtype=torch.float64)
    hi = torch.tensor([inf, 3.0], dtype=torch.float64)
    assert backward._constant(lam, (lo, hi)).tolist() == [2.0, -inf]
    tape = backward.Tape()
    e = torch.zeros(2, dtype=torch.float64)
    tape.add(backward.Node("input", (), (e, 0.1)))
    tape.add(backward.Node("relu", (0,), (), [(lo, hi), (lo.clamp_min(0), hi)]))
    low = backward.lower_bounds(tape, 1, torch.tensor([[-1.0, -1.0], [1.0, -1.0]], dtype=torch.float64))
    assert low[0] == -inf  # -relu(x) with x unbounded above: no lower bound
    assert -3.0 - 1e-6 < float(low[1]) <= -3.0  # relu(x) >= 0 and -relu(y) >= -3, less the pad
