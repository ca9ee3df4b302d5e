"""F's interval is the exact binomial (Clopper–Pearson) interval: a run certifying 0 of 20 sentences
reports a share that may be as high as 16.8%, not the certainty [0, 0]; the gate-facing names
``certified_share*`` carry the same numbers."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from fairprobe.methods.certify.analysis import analyse
from fairprobe.methods.certify.block import CertifyBlock
from fairprobe.stats import clopper_pearson_interval

from .test_analysis import finding


@pytest.mark.parametrize("k,n", [(0, 20), (20, 20), (9, 20), (1, 3), (45, 50)])
def test_clopper_pearson_matches_scipys_exact_interval(k, n):
    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    lo, hi = clopper_pearson_interval(k, n)
    assert lo == pytest.approx(ref.low, abs=1e-12) and hi == pytest.approx(ref.high, abs=1e-12)


def test_clopper_pearson_edges():
    assert clopper_pearson_interval(0, 0) == (0.0, 1.0)
    assert clopper_pearson_interval(0, 20) == (0.0, pytest.approx(1 - 0.025 ** (1 / 20)))
    with pytest.raises(ValueError):
        clopper_pearson_interval(3, 2)


def test_zero_of_twenty_certified_is_not_zero_width():
    rows = [finding(i, False, eps=1e-5) for i in range(20)]
    m = analyse(CertifyBlock(model="m"), rows, seed=0).metrics
    assert m["fairness_score"] == 0.0
    assert m["fairness_score_ci"] == [0.0, round(1 - 0.025 ** (1 / 20), 6)]  # 0.168, exact
    assert m["certified_share"] == 0.0 and m["certified_share_n"] == 20
    assert (m["certified_share_ci_low"], m["certified_share_ci_high"]) == tuple(m["fairness_score_ci"])


def test_share_interval_is_exact_in_the_middle():
    rows = [finding(i, i < 9) for i in range(20)]
    m = analyse(CertifyBlock(model="m"), rows, seed=0).metrics
    ref = binomtest(9, 20).proportion_ci(method="exact")
    assert m["certified_share"] == 0.45
    assert m["fairness_score_ci"] == [round(ref.low, 6), round(ref.high, 6)]


def test_no_decided_sentence_leaves_every_share_field_empty():
    m = analyse(CertifyBlock(model="m"), [], seed=0).metrics
    assert m["certified_share"] is None and m["certified_share_ci_high"] is None
    assert m["certified_share_n"] == 0
