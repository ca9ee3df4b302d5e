"""Cluster bootstrap (issue 20): correlated cases in one cluster must widen the interval."""

import numpy as np

from fairprobe.stats import cluster_bootstrap_ci, cluster_rate_fields, cluster_rate_with_ci, proportion_ci


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
