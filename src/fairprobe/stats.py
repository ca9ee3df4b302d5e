"""Statistics shared by every technique: confidence intervals (bootstrap, cluster bootstrap, Wilson,
Clopper–Pearson), entropy, paired tests.

All randomness takes an explicit seed, so the same findings always give the same intervals.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from statistics import NormalDist
from typing import Any

import numpy as np

DEFAULT_RESAMPLES = 1000


def rate(successes: int, total: int) -> float | None:
    """``successes / total``; ``None`` ("no data") for an empty total.

    A rate over zero cases is not 0.0: reporting 0 would let a run that tested nothing pass every
    ``< x`` threshold. ``None`` becomes JSON ``null``, "no data" in the report, and fails any
    threshold on it (:mod:`fairprobe.judge.verdict`)."""
    return successes / total if total else None


def _percentile_interval(stats: np.ndarray, level: float) -> tuple[float, float]:
    """The central ``level`` percentile interval of bootstrap replicates ``stats``."""
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(stats, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    statistic: Callable[[np.ndarray], float] = np.mean,
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic`` over ``values`` (Efron & Tibshirani, 1993, §13.3).

    Returns ``(lo, hi)``. For an empty sample, ``(0.0, 0.0)``; for one value, ``(v, v)``.
    ``statistic`` must accept a 2-D array row-wise when it is ``np.mean`` (vectorised fast path);
    any other callable is applied per resample.
    """
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return (0.0, 0.0)
    if arr.size == 1:
        v = float(statistic(arr))
        return (v, v)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, arr.size, size=(resamples, arr.size))
    if statistic is np.mean:
        stats = arr[idx].mean(axis=1)
    else:
        stats = np.array([statistic(arr[row]) for row in idx])
    return _percentile_interval(stats, level)


def proportion_ci(
    flags: Sequence[bool] | np.ndarray,
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Bootstrap interval of a proportion of ``True`` flags.

    Uses the binomial form of the bootstrap (a resample's count of successes is Binomial(n, p̂)),
    which is exact for the mean of 0/1 values and O(resamples) instead of O(resamples·n).
    """
    arr = np.asarray(flags, dtype=bool)
    n = arr.size
    if n == 0:
        return (0.0, 0.0)
    p = arr.mean()
    rng = np.random.default_rng(seed)
    draws = rng.binomial(n, p, size=resamples) / n
    return _percentile_interval(draws, level)


def rate_with_ci(flags: Sequence[bool], *, seed: int = 0) -> tuple[float | None, list[float] | None]:
    """A rate and its 95% interval, shaped for ``summary.json`` (``x`` and ``x_ci``).

    Each flag is its own cluster (independent cases): the interval is :func:`rate_interval`'s, i.e.
    the percentile bootstrap with 10 or more cases and some but not all flags set, else Wilson's.
    With no flags the rate and its interval are ``None`` (no data), never ``0.0`` / ``[0, 0]``."""
    arr = np.asarray(flags, dtype=bool).ravel()
    if arr.size == 0:
        return (None, None)
    lo, hi = rate_interval(arr, None, seed=seed)
    return (float(arr.mean()), [round(lo, 6), round(hi, 6)])


def rate_fields(name: str, flags: Sequence[bool], *, seed: int = 0) -> dict[str, Any]:
    """``{name: rate, name_ci: [lo, hi], name_n: n}`` for a summary's metrics (rate and interval
    ``None`` when ``n == 0``)."""
    value, ci = rate_with_ci(flags, seed=seed)
    return {name: value, f"{name}_ci": ci, f"{name}_n": int(len(flags))}


def invalid_fields(invalid: int, tested: int) -> dict[str, Any]:
    """The keys every technique puts at the top of its metrics (:mod:`fairprobe.judge.verdict` reads them):

    - ``tested``: test cases (or answers) the run attempted;
    - ``invalid``: those whose answer could not be used (unparsable, judge failure, refusal, error);
    - ``invalid_rate``: ``invalid / tested``, ``None`` when nothing was tested.
    """
    return {"tested": int(tested), "invalid": int(invalid), "invalid_rate": rate(invalid, tested)}


# -- clustered cases ------------------------------------------------------------------------------
# Intervals for rates whose cases are correlated within clusters.
#
# HInter's mutants of one original text share its words, its length and the model's reading of
# it; Meta-Fair's repetitions of one test share its prompts; CAFFE's pairs of one knowledge-base
# triple share its groups and topic. They are not independent draws. A percentile bootstrap that
# resamples *cases* treats them as independent and gives intervals far too narrow when a few
# clusters hold most of the successes (HInter's demo: 36 of 64 biased mutants came from one review;
# [2.1%, 3.6%] by mutants versus [0.5%, 6.4%] by reviews). The cluster (block) bootstrap resamples
# whole clusters with replacement and recomputes the ratio estimator
# ``p* = Σ_c w_c s_c / Σ_c w_c n_c`` (``s_c`` successes and ``n_c`` cases of cluster ``c``, ``w``
# multinomial cluster counts), Davison & Hinkley (1997) §3.8, "Hierarchical data" (strategy 1:
# resample the top level only). With one case per cluster it is the ordinary bootstrap.
#
# The bootstrap needs enough clusters to mean anything. With k clusters its replicates take few
# distinct values, and when no cluster (or every cluster) has a success every replicate equals the
# estimate: 2 originals without a biased mutant gave the interval [0, 0], a certainty the data do
# not have. So with fewer than MIN_BOOTSTRAP_CLUSTERS clusters, or when the rate is 0 or 1, or when
# the bootstrap still collapses to a point, the interval is Wilson's score interval (Wilson, 1927;
# Brown, Cai & DasGupta, 2001, §4.1.1) on the *effective count*: ``p̂·k`` successes in ``k`` trials,
# one trial per cluster. That is the binomial model of a design effect at its largest (every case
# of a cluster alike, intra-cluster correlation 1: a cluster carries one case's information), so the
# interval is conservative whatever the correlation, and with one case per cluster it is the
# ordinary Wilson interval on ``s`` of ``n``. Wilson rather than Clopper–Pearson: it takes the
# non-integer count ``p̂·k``, has a positive upper bound at 0 successes (``z²/(k+z²)``: 0.66 for 2
# clusters) and a lower bound below 1 at k of k, and is less conservative than the exact interval at
# the same coverage. One cluster of several cases keeps ``(0, 1)``: the spread between clusters
# cannot be estimated from one.
#
# Like the helpers above, a rate over zero cases is ``None`` ("no data"), never ``0.0``.

MIN_BOOTSTRAP_CLUSTERS = 10
"""Fewer clusters than this: Wilson's interval on the effective count instead of the bootstrap."""

_MAX_CELLS = 4_000_000
"""Resample matrix cells built at once (resamples × clusters), so millions of originals fit in memory."""


def wilson_interval(successes: float, trials: float, *, level: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for ``successes`` of ``trials`` (both may be non-integer effective
    counts). Never of zero width for ``trials > 0``; ``(0, 1)`` for no trials."""
    if trials <= 0:
        return (0.0, 1.0)
    z = NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)
    p = min(max(successes / trials, 0.0), 1.0)
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z / (1 + z2 / trials) * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    lo = 0.0 if p == 0 else max(0.0, centre - half)  # exact ends: no rounding residue at 0 or 1
    hi = 1.0 if p == 1 else min(1.0, centre + half)
    return (lo, hi)


def clopper_pearson_interval(successes: int, trials: int, *, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper–Pearson, 1934) binomial interval for ``successes`` of ``trials``.

    The ends are Beta quantiles: ``lo = Beta(α/2; s, n − s + 1)`` (0 when ``s = 0``) and
    ``hi = Beta(1 − α/2; s + 1, n − s)`` (1 when ``s = n``). Its coverage is at least ``level`` for
    every true rate, so it is the interval to put beside a *certified* share: 0 of 20 gives
    ``[0, 0.168]``, never ``[0, 0]``. ``(0, 1)`` for no trials. Counts must be whole numbers (for an
    effective, non-integer count use :func:`wilson_interval`)."""
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if trials == 0:
        return (0.0, 1.0)
    from scipy.stats import beta

    alpha = 1.0 - level
    lo = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, trials - successes + 1))
    hi = 1.0 if successes == trials else float(beta.ppf(1 - alpha / 2, successes + 1, trials - successes))
    return (lo, hi)


def _cluster_sums(flags: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per non-empty cluster: (successes, cases)."""
    _, inverse = np.unique(clusters, return_inverse=True)
    inverse = inverse.ravel()
    cases = np.bincount(inverse)
    successes = np.bincount(inverse, weights=flags.astype(float))
    return successes, cases.astype(float)


def _bootstrap_ratio(
    successes: np.ndarray, cases: np.ndarray, seed: int, level: float, resamples: int
) -> tuple[float, float]:
    """Percentile interval of ``Σ w s / Σ w n`` over multinomial cluster weights ``w``."""
    k = cases.size
    rng = np.random.default_rng(seed)
    stats = np.empty(resamples)
    step = max(1, _MAX_CELLS // k)
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        # k clusters drawn with replacement per resample, counted per cluster: multinomial weights
        # (bincount of the draws; numpy's multinomial is ~10x slower with thousands of categories)
        draws = rng.integers(0, k, size=(rows, k)) + (np.arange(rows) * k)[:, None]
        weights = np.bincount(draws.ravel(), minlength=rows * k).reshape(rows, k).astype(float)
        stats[start : start + rows] = (weights @ successes) / (weights @ cases)
    return _percentile_interval(stats, level)


def rate_interval(
    flags: Sequence[bool] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray | None,
    *,
    seed: int = 0,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
) -> tuple[float, float] | None:
    """The interval of the share of ``True`` ``flags`` whose cases are grouped by ``clusters``
    (``None``: every case its own cluster). The one rule every rate's interval follows (see the
    notes above): cluster bootstrap with at least :data:`MIN_BOOTSTRAP_CLUSTERS` clusters and a rate
    strictly between 0 and 1, else Wilson on the effective count; ``(0, 1)`` for a single cluster of
    several cases; ``None`` without flags. Never of zero width."""
    arr = np.asarray(flags, dtype=bool).ravel()
    if arr.size == 0:
        return None
    if clusters is None:
        successes, cases = arr.astype(float), np.ones(arr.size)
    else:
        groups = np.asarray(clusters).ravel()
        if arr.size != groups.size:
            raise ValueError(f"flags ({arr.size}) and clusters ({groups.size}) differ in length")
        successes, cases = _cluster_sums(arr, groups)
    k = cases.size
    if k == 1 and arr.size > 1:
        return (0.0, 1.0)
    total, n = float(successes.sum()), float(cases.sum())
    p = total / n
    if k >= MIN_BOOTSTRAP_CLUSTERS and 0 < total < n:
        if k == n:  # one case per cluster: the binomial form of the same bootstrap, O(resamples)
            lo, hi = proportion_ci(arr, level=level, resamples=resamples, seed=seed)
        else:
            lo, hi = _bootstrap_ratio(successes, cases, seed, level, resamples)
        if hi > lo:
            return (lo, hi)
    return wilson_interval(p * k, k, level=level)


def cluster_bootstrap_ci(
    flags: Sequence[bool] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray,
    seed: int = 0,
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
) -> tuple[float, float] | None:
    """The interval of the proportion of ``True`` ``flags``, clustered by ``clusters``
    (:func:`rate_interval`): the cluster bootstrap that resamples whole clusters, or Wilson's
    interval on the effective count with fewer than :data:`MIN_BOOTSTRAP_CLUSTERS` clusters or a
    rate of 0 or 1.

    ``clusters[i]`` names the cluster (e.g. the original text's id or code) of ``flags[i]``.
    Returns ``(lo, hi)``, or ``None`` when there are no flags. A single cluster of several cases
    gives ``(0, 1)``: the spread between clusters cannot be estimated from one, and a point interval
    ``(p, p)`` would claim a certainty the data do not have (the demo's race+gender hidden share: 5
    biased mutants, all of one review).
    """
    return rate_interval(flags, clusters, seed=seed, level=level, resamples=resamples)


def cluster_rate_with_ci(
    flags: Sequence[bool] | np.ndarray, clusters: Sequence[Any] | np.ndarray, *, seed: int = 0
) -> tuple[float | None, list[float] | None]:
    """A rate and its 95% cluster interval, shaped for ``summary.json``; ``(None, None)`` with no
    flags (no data)."""
    arr = np.asarray(flags, dtype=bool).ravel()
    ci = rate_interval(arr, clusters, seed=seed)
    if ci is None:
        return (None, None)
    return (float(arr.mean()), [round(ci[0], 6), round(ci[1], 6)])


def cluster_rate_fields(
    name: str, flags: Sequence[bool] | np.ndarray, clusters: Sequence[Any] | np.ndarray, *, seed: int = 0
) -> dict[str, Any]:
    """``{name, name_ci, name_n, name_clusters}`` (rate and interval ``None`` when ``n == 0``)."""
    value, ci = cluster_rate_with_ci(flags, clusters, seed=seed)
    n_clusters = int(np.unique(np.asarray(clusters).ravel()).size) if len(flags) else 0
    return {name: value, f"{name}_ci": ci, f"{name}_n": int(len(flags)), f"{name}_clusters": n_clusters}


def entropy_bits(items: Sequence[Hashable]) -> float:
    """Shannon entropy (bits) of the empirical distribution of ``items``."""
    counts = Counter(items)
    total = sum(counts.values())
    if total == 0:
        return 0.0
    return -sum((c / total) * math.log2(c / total) for c in counts.values())


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for discordant pair counts ``b`` and ``c`` (paired 0/1 outcomes)."""
    from scipy.stats import binomtest

    n = b + c
    if n == 0:
        return 1.0
    return float(binomtest(b, n, 0.5).pvalue)


def cochran_sample_size(
    population: int, *, confidence: float = 0.95, margin: float = 0.05, p: float = 0.5
) -> int:
    """Cochran's sample size with finite-population correction (Cochran, 1977, eqs. 4.2 and 4.3).

    ``n0 = z² p (1 − p) / e²`` and ``n = n0 / (1 + (n0 − 1) / N)``, rounded up; never more than ``N``.
    """
    from scipy.stats import norm

    if population <= 0:
        return 0
    z = float(norm.ppf(1 - (1 - confidence) / 2))
    n0 = z * z * p * (1 - p) / (margin * margin)
    return min(population, math.ceil(n0 / (1 + (n0 - 1) / population)))


def cluster_mean_intervals(
    groups: np.ndarray, clusters: np.ndarray, values: np.ndarray, n_groups: int, *, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per group ``g`` of ``n_groups``: the mean of ``values`` over its cases and a ``level`` interval
    for it clustered by ``clusters`` (cases of one cluster are correlated: mutants of one text).

    The interval is the cluster-robust t-interval of a mean (Cameron & Miller, "A Practitioner's
    Guide to Cluster-Robust Inference", J. Human Resources 50(2), 2015, §II.C and §VI.D: the CR1
    variance with the ``G/(G−1)`` factor and ``t`` critical values with ``G − 1`` degrees of
    freedom): with ``G`` clusters, ``S_c`` the sum and ``n_c`` the count of cluster ``c``,
    ``N = Σ n_c`` and ``μ = Σ S_c / N``, ``SE² = G/(G−1) · Σ_c (S_c − n_c μ)² / N²`` and the interval
    is ``μ ± t_{G−1} · SE``. With one case per cluster it is the ordinary t-interval of the mean.
    Deterministic (no resampling). Returns arrays ``(mean, lo, hi, cases, clusters)``; ``mean`` is
    ``nan`` for a group without cases and ``lo``/``hi`` are ``nan`` with fewer than two clusters
    (the spread between texts cannot be estimated from one)."""
    from scipy.stats import t as student_t

    groups = np.asarray(groups, dtype=np.int64).ravel()
    clusters = np.asarray(clusters, dtype=np.int64).ravel()
    values = np.asarray(values, dtype=float).ravel()
    width = int(clusters.max(initial=0)) + 1
    pair, inverse = np.unique(groups * width + clusters, return_inverse=True)
    group_of_pair = pair // width
    sums = np.bincount(inverse.ravel(), weights=values, minlength=len(pair))
    counts = np.bincount(inverse.ravel(), minlength=len(pair)).astype(float)
    n = np.bincount(group_of_pair, weights=counts, minlength=n_groups)
    k = np.bincount(group_of_pair, minlength=n_groups).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(group_of_pair, weights=sums, minlength=n_groups) / n
        resid = sums - counts * mean[group_of_pair]
        ss = np.bincount(group_of_pair, weights=resid * resid, minlength=n_groups)
        se = np.sqrt(k / (k - 1) * ss) / n
        q = student_t.ppf(1 - (1 - level) / 2, np.maximum(k - 1, 1))
    half = np.where(k >= 2, q * se, np.nan)
    return mean, mean - half, mean + half, n, k
