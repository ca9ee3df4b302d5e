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
