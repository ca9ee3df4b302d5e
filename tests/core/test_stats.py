import numpy as np

from fairprobe.stats import bootstrap_ci, entropy_bits, mcnemar_exact, proportion_ci, rate_with_ci


def test_proportion_ci_brackets_the_rate_and_shrinks_with_n():
    small = [True] * 3 + [False] * 7
    big = small * 100
    lo_s, hi_s = proportion_ci(small, seed=1)
    lo_b, hi_b = proportion_ci(big, seed=1)
    assert lo_s <= 0.3 <= hi_s and lo_b <= 0.3 <= hi_b
    assert (hi_b - lo_b) < (hi_s - lo_s) / 5


def test_proportion_ci_matches_generic_bootstrap_and_is_seeded():
    flags = np.random.default_rng(0).random(400) < 0.2
    fast = proportion_ci(flags, seed=3, resamples=4000)
    slow = bootstrap_ci(flags.astype(float), seed=3, resamples=4000)
    assert abs(fast[0] - slow[0]) < 0.012 and abs(fast[1] - slow[1]) < 0.012
    assert proportion_ci(flags, seed=3) == proportion_ci(flags, seed=3)


def test_degenerate_inputs():
    assert proportion_ci([]) == (0.0, 0.0)
    # A rate over zero cases is "no data", never 0.0 with the interval [0, 0] (issue 16).
    assert rate_with_ci([]) == (None, None)
    assert rate_with_ci([True, True]) == (1.0, [1.0, 1.0])
    assert bootstrap_ci([5.0]) == (5.0, 5.0)


def test_entropy_and_mcnemar():
    assert entropy_bits(["a", "b", "a", "b"]) == 1.0
    assert entropy_bits(["a"] * 4) == 0.0
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(10, 0) < 0.01 < mcnemar_exact(6, 4)
