"""Exact and smooth gaps, baselines' bounds, selection rules and confidence parsing."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fairprobe.methods.audit import selection as sel
from fairprobe.methods.audit.blackbox import parse_confidence
from fairprobe.methods.audit.engine import passive_interval
from fairprobe.methods.audit.metrics import SmoothGap, auc, gap


def _brute_auc(s: np.ndarray, y: np.ndarray) -> float:
    pairs = [(a, b) for a, b in itertools.product(s[y == 1], s[y == 0])]
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a, b in pairs) / len(pairs)


def test_auc_matches_pairwise_definition_with_ties() -> None:
    rng = np.random.default_rng(3)
    s = rng.integers(0, 5, 60) / 4.0  # many ties
    y = rng.integers(0, 2, 60)
    assert auc(s, y) == pytest.approx(_brute_auc(s, y))
    assert auc(s, np.ones(60)) is None


def test_gaps_are_group0_minus_group1() -> None:
    y = np.array([1, 0, 1, 0, 1, 0, 1, 0])
    g = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    s = np.array([0.9, 0.1, 0.8, 0.2, 0.1, 0.9, 0.6, 0.4])  # perfect in g0, 1 of 4 pairs right in g1
    assert gap("auc", s, y, g) == pytest.approx(1.0 - 0.25)
    assert gap("dp", s, y, g) == pytest.approx(0.5 - 0.5)
    assert gap("eo", s, y, g) == pytest.approx(1.0 - 0.5)
    assert gap("auc", s, np.array([1, 1, 1, 1, 1, 0, 1, 0]), g) is None


def test_smooth_gap_approaches_exact_gap_at_low_temperature() -> None:
    import torch

    rng = np.random.default_rng(0)
    y, g = rng.integers(0, 2, 400), rng.integers(0, 2, 400)
    s = np.clip(rng.random(400) * 0.6 + 0.4 * y * (g == 0), 0, 1)
    smooth = SmoothGap("auc", y, g, tau=0.005)
    sample = smooth.sample(rng, 20000)
    lookup = torch.as_tensor(s, dtype=torch.float32)
    assert float(smooth.value(lookup, sample)) == pytest.approx(gap("auc", s, y, g), abs=0.02)


def test_passive_interval_is_mcdiarmid_union_bound() -> None:
    y = np.array([1] * 10 + [0] * 30 + [1] * 20 + [0] * 20)
    g = np.array([0] * 40 + [1] * 40)
    expected = sum(np.sqrt((m + n) * np.log(4 / 0.05) / (2 * m * n)) for m, n in ((10, 30), (20, 20)))
    assert passive_interval("auc", y, g, 0.05) == pytest.approx(expected)
    assert passive_interval("auc", np.ones(4, dtype=int), np.array([0, 0, 1, 1]), 0.05) == np.inf


def test_stratified_allocation_is_proportional_and_exact() -> None:
    rng = np.random.default_rng(0)
    strata = np.array([0] * 75 + [1] * 25)
    picked = sel.stratified(rng, np.arange(100), strata, 16)
    assert len(picked) == 16 and len(set(picked)) == 16
    assert (strata[picked] == 0).sum() == 12
    seeds = sel.seed_set(rng, np.array([0, 0, 1, 1, 2, 3, 3]), 1)
    assert sorted(np.array([0, 0, 1, 1, 2, 3, 3])[seeds]) == [0, 1, 2, 3]


def test_distribution_weights_favour_under_sampled_strata() -> None:
    strata = np.array([0] * 50 + [1] * 50)
    queried = np.array([0, 1, 2, 3, 50])  # stratum 0 over-sampled
    w = sel.distribution_weights(strata, queried, alpha=2.0, cap=5.0)
    assert w[60] > 1.0 > w[10]
    assert (sel.distribution_weights(strata, queried, alpha=0.0, cap=5.0) == 1.0).all()  # match_weight 0: off
    assert sel.ramp(0, 2, 4, 2.0) == 0.0 and sel.ramp(5, 2, 4, 2.0) == 2.0


def test_mmr_prefers_diverse_batches() -> None:
    feats = np.array([[1.0, 0.0], [1.0, 0.001], [0.0, 1.0]])
    scores = np.array([1.0, 0.99, 0.9])
    assert list(sel.mmr_select(scores, feats, 2, gamma=0.2)) == [0, 2]
    assert list(sel.top_k(scores, 2)) == [0, 1]


def test_gp_ucb_tracks_the_data() -> None:
    x = np.linspace(0, 1, 12)[:, None]
    y = x[:, 0] * 2.0
    acq = sel.gp_ucb(x, y, np.array([[0.05], [0.95]]), beta=0.0)
    assert acq[1] > acq[0]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"confidence": 73}', 0.73),
        ('```json\n{"confidence": 5}\n```', 0.05),
        ("I would say 40.", 0.40),
        ("Confidence: 100", 1.0),
        ("no idea", None),
        ("350", None),
    ],
)
def test_parse_confidence(text: str, value: float | None) -> None:
    got = parse_confidence(text)
    assert got == (None if value is None else pytest.approx(value))


def test_ridge_base_kernel_is_the_group_interacted_feature_map() -> None:
    """The kernel (cos+1)(1 + g g' + w[g=g']) equals ridge on [x,1, g(x,1), √w[g=0](x,1), √w[g=1](x,1)]."""
    from fairprobe.methods.audit.cerm import ridge_base

    rng = np.random.default_rng(3)
    x = rng.normal(size=(60, 5))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    g = rng.integers(0, 2, 60)
    idx = rng.choice(60, 20, replace=False)
    scores = rng.uniform(0.05, 0.95, 20).astype(np.float32)
    for w in (0.0, 4.0):
        xa = np.hstack([x, np.ones((60, 1))])
        phi = np.hstack(
            [xa, g[:, None] * xa, np.sqrt(w) * (g == 0)[:, None] * xa, np.sqrt(w) * (g == 1)[:, None] * xa]
        )
        target = np.log(scores / (1 - scores)).astype(np.float64)
        alpha = np.linalg.solve(phi[idx] @ phi[idx].T + 0.01 * np.eye(20), target)
        expected = 1 / (1 + np.exp(-(phi @ phi[idx].T @ alpha)))
        got = ridge_base(x @ x[idx].T, g, idx, scores, 0.01, w)
        rest = np.setdiff1d(np.arange(60), idx)
        assert got[rest] == pytest.approx(expected[rest], abs=1e-5)
        assert got[idx] == pytest.approx(scores, abs=1e-7)


def test_group_weight_lets_a_group_with_few_answers_keep_its_own_ranking() -> None:
    """Group 1 ranks opposite to group 0: with a shared fit (w=0) its few answers are drowned out."""
    from fairprobe.methods.audit.cerm import ridge_base

    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 32))  # more dimensions than group 1 has answers
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    g = (np.arange(600) % 4 == 0).astype(int)  # a quarter in group 1
    u = rng.normal(size=32)
    u *= 8.5 / np.linalg.norm(u)
    logit = np.where(g == 1, -x @ u, x @ u)
    truth = 1 / (1 + np.exp(-logit))
    idx = np.r_[
        rng.choice(np.flatnonzero(g == 0), 120, replace=False),
        rng.choice(np.flatnonzero(g == 1), 15, replace=False),
    ]
    rest = np.setdiff1d(np.flatnonzero(g == 1), idx)
    corr = {
        w: np.corrcoef(
            ridge_base(x @ x[idx].T, g, idx, truth[idx].astype(np.float32), 0.01, w)[rest], truth[rest]
        )[0, 1]
        for w in (0.0, 20.0)
    }
    assert corr[0.0] < 0 < 0.3 < corr[20.0], corr  # shared: group 1 ranked like group 0


def test_block_carries_the_cerm_options_to_the_solver() -> None:
    from pydantic import ValidationError

    from fairprobe.methods.audit.block import AuditBlock
    from fairprobe.methods.audit.pipeline import audit_config

    block = AuditBlock(
        model="py:m:f",
        data="adult",
        group_col="sex",
        group_weight=10,
        refit_group_weights=[0, 100],
        refits=16,
        dual_lr=0.1,
        cerm_steps=200,
        match_weight=0,
    )
    assert audit_config(block).selector.alpha == 0.0
    cerm = audit_config(block).cerm
    assert (cerm.group_weight, cerm.refit_group_weights, cerm.refits) == (10.0, (0.0, 100.0), 16)
    assert (cerm.dual_lr, cerm.steps) == (0.1, 200)
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        AuditBlock(model="py:m:f", data="adult", group_col="sex", refit_group_weights=[-1])
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        AuditBlock(model="py:m:f", data="adult", group_col="sex", match_weight=-1)


def test_row_space_keeps_inner_products_and_drops_null_directions() -> None:
    from fairprobe.methods.audit.surrogate import hashed_ngrams, row_space

    rng = np.random.default_rng(0)
    low = rng.normal(size=(50, 7)) @ rng.normal(size=(7, 40))  # rank 7 in 40 dimensions
    coords = row_space(low)
    assert coords.shape == (50, 7)
    np.testing.assert_allclose(coords @ coords.T, low @ low.T, atol=1e-9)
    full = rng.normal(size=(50, 10))
    assert row_space(full).shape == (50, 10)
    texts = [
        f"age {a}, sex {s}, hours {h}." for a in range(20, 40) for s in ("Male", "Female") for h in (40, 50)
    ]
    grams = hashed_ngrams(texts)
    reduced = row_space(grams)
    assert reduced.shape[1] < grams.shape[1]
    np.testing.assert_allclose(reduced @ reduced.T, grams @ grams.T, atol=1e-5)
