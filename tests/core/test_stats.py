import numpy as np

from fairprobe.stats import (
    bootstrap_ci,
    entropy_bits,
    mcnemar_exact,
    proportion_ci,
    rate_fields,
    rate_with_ci,
    wilson_interval,
)


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
    # Two cases, both successes: the rate is 1, but never with the certainty [1, 1].
    value, (lo, hi) = rate_with_ci([True, True])
    assert value == 1.0 and hi == 1.0 and 0 < lo < 0.5
    assert bootstrap_ci([5.0]) == (5.0, 5.0)


def test_entropy_and_mcnemar():
    assert entropy_bits(["a", "b", "a", "b"]) == 1.0
    assert entropy_bits(["a"] * 4) == 0.0
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(10, 0) < 0.01 < mcnemar_exact(6, 4)


def test_a_rate_of_zero_or_one_never_gets_a_zero_width_interval():
    # The binomial bootstrap of 0 of 200 is [0, 0] whatever n is: every resample has no success.
    assert proportion_ci([False] * 200, seed=0) == (0.0, 0.0)
    value, (lo, hi) = rate_with_ci([False] * 200, seed=0)
    assert value == 0.0 and lo == 0.0 and 0.01 < hi < 0.03  # Wilson: z²/(n+z²) = 0.0188
    fields = rate_fields("x", [False, False, False])
    assert fields["x"] == 0.0 and fields["x_ci"][1] > 0.4


def test_few_cases_use_wilson_and_many_the_bootstrap():
    small = [True, False, False, True, False]
    assert rate_with_ci(small, seed=0)[1] == [round(x, 6) for x in wilson_interval(2, 5)]
    big = [True, False] * 50
    lo, hi = rate_with_ci(big, seed=4)[1]
    blo, bhi = proportion_ci(big, seed=4)
    assert (lo, hi) == (round(blo, 6), round(bhi, 6))


def test_wilson_interval_matches_the_textbook_values():
    # Brown, Cai & DasGupta (2001): Wilson for 0 of 10 is [0, 0.2775]; 5 of 10 is [0.2366, 0.7634].
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and abs(hi - 0.2775) < 1e-4
    lo, hi = wilson_interval(5, 10)
    assert abs(lo - 0.2366) < 1e-4 and abs(hi - 0.7634) < 1e-4
    assert wilson_interval(0, 0) == (0.0, 1.0)
