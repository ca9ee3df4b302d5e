"""Cluster intervals: correlated cases in one cluster must widen the interval, and few clusters must
never give a zero-width one."""

import numpy as np

from fairprobe.stats import (
    MIN_BOOTSTRAP_CLUSTERS,
    cluster_bootstrap_ci,
    cluster_rate_fields,
    cluster_rate_with_ci,
    proportion_ci,
    rate_with_ci,
    wilson_interval,
)


def test_concentrated_successes_widen_the_interval():
    # 64 successes among 2,400 cases, 36 of them in one cluster of 40 (the demo's shape).
    flags = np.zeros(2400, bool)
    clusters = np.repeat(np.arange(120), 20)
    flags[:36] = True  # clusters 0 and 1 (the first 40 cases)
    flags[np.arange(100, 2400, 82)[:28]] = True
    assert flags.sum() == 64
    naive = proportion_ci(flags, seed=0)
    lo, hi = cluster_bootstrap_ci(flags, clusters, seed=0)
    assert lo <= flags.mean() <= hi
    assert (hi - lo) > 1.8 * (naive[1] - naive[0])


def test_one_case_per_cluster_is_the_ordinary_bootstrap():
    rng = np.random.default_rng(1)
    flags = rng.random(500) < 0.2
    lo, hi = cluster_bootstrap_ci(flags, np.arange(500), seed=3)
    nlo, nhi = proportion_ci(flags, seed=3)
    assert abs(lo - nlo) < 0.02 and abs(hi - nhi) < 0.02


def test_no_data_and_single_cluster():
    assert cluster_bootstrap_ci([], [], seed=0) is None
    assert cluster_rate_with_ci([], [], seed=0) == (None, None)
    # one cluster: between-cluster spread is unknown, never a point interval
    assert cluster_bootstrap_ci([True, False, False, False], ["a"] * 4) == (0.0, 1.0)
    fields = cluster_rate_fields("x", [True, False], ["a", "b"], seed=0)
    assert fields["x"] == 0.5 and fields["x_n"] == 2 and fields["x_clusters"] == 2
    assert cluster_rate_fields("x", [], [])["x"] is None


def test_seeded_and_string_clusters():
    flags = [True, False, True, False, False, True]
    clusters = ["r1", "r1", "r2", "r3", "r3", "r4"]
    assert cluster_bootstrap_ci(flags, clusters, seed=5) == cluster_bootstrap_ci(flags, clusters, seed=5)


def test_two_clusters_without_a_success_have_a_positive_upper_bound():
    # 2 originals, 0 biased mutants: the bootstrap said [0, 0]; Wilson on 2 clusters says [0, 0.66].
    lo, hi = cluster_bootstrap_ci([False] * 6, ["a"] * 3 + ["b"] * 3, seed=0)
    assert lo == 0.0 and hi > 0.5
    value, ci = cluster_rate_with_ci([False] * 6, ["a"] * 3 + ["b"] * 3)
    assert value == 0.0 and ci[1] > 0.5


def test_fewer_than_ten_clusters_use_wilson_on_the_effective_count():
    # 4 clusters of 5 cases, 6 successes: p = 0.3, one trial per cluster (effective count 1.2 of 4).
    flags = [True] * 3 + [False] * 2 + [True] * 3 + [False] * 12
    clusters = np.repeat(["a", "b", "c", "d"], 5)
    assert MIN_BOOTSTRAP_CLUSTERS == 10
    lo, hi = cluster_bootstrap_ci(flags, clusters, seed=0)
    assert (lo, hi) == wilson_interval(0.3 * 4, 4)
    # wider than the same rate over 20 independent cases
    nlo, nhi = rate_with_ci(flags)[1]
    assert hi - lo > nhi - nlo


def test_clusters_alike_never_collapse_to_a_point():
    # 12 clusters, each one success of two: every bootstrap replicate is 0.5.
    lo, hi = cluster_bootstrap_ci([True, False] * 12, np.repeat(np.arange(12), 2), seed=0)
    assert lo < 0.5 < hi


def test_repeats_of_one_test_are_one_cluster():
    # 30 tests run 5 times each; a test's repeats agree (the model is stable), 9 tests are biased.
    tests = np.repeat(np.arange(30), 5)
    flags = np.isin(tests, [0, 3, 5, 8, 13, 17, 21, 26, 29])
    lo, hi = cluster_bootstrap_ci(flags, tests, seed=0)
    nlo, nhi = rate_with_ci(flags, seed=0)[1]
    assert lo <= flags.mean() <= hi
    assert hi - lo > 1.8 * (nhi - nlo)  # about √5 wider: 150 executions carry 30 tests' information
