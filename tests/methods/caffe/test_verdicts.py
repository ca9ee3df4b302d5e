"""Fixed-threshold and calibrated verdicts (caffe.txt §4.3; calibration beyond the paper)."""

import numpy as np

from fairprobe.methods.caffe.verdicts import null_quantile, permutation_p_value, sweep, verdict


def test_verdict_is_pass_at_or_above_the_threshold():
    assert verdict(0.9, 0.9) == "PASS" and verdict(0.8999, 0.9) == "FAIL"


def test_sweep_counts_pairs_below_each_threshold():
    s = sweep([0.05, 0.35, 0.95])
    assert s["0.1"] == {"f_bugs": 1, "fail_rate": 1 / 3}
    assert s["0.4"]["f_bugs"] == 2 and s["0.9"]["f_bugs"] == 2
    assert list(s) == ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"]


def test_permutation_test_separates_shifted_from_identical_distributions():
    rng = np.random.default_rng(0)
    null = rng.normal(0.9, 0.03, 60)
    assert permutation_p_value(rng.normal(0.6, 0.03, 20), null, permutations=500) < 0.01
    assert permutation_p_value(rng.normal(0.9, 0.03, 20), null, permutations=500) > 0.05
    assert permutation_p_value([], null) is None
    assert null_quantile([0.0, 1.0], 0.5) == 0.5 and null_quantile([], 0.05) is None
