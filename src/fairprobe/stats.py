"""Statistics shared by every technique: bootstrap confidence intervals, entropy, paired tests.

All randomness takes an explicit seed, so the same findings always give the same intervals.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

DEFAULT_RESAMPLES = 1000


def rate(successes: int, total: int) -> float | None:
    """``successes / total``; ``None`` ("no data") for an empty total.

    A rate over zero cases is not 0.0: reporting 0 would let a run that tested nothing pass every
    ``< x`` threshold. ``None`` becomes JSON ``null``, "no data" in the report, and fails any
    threshold on it (:mod:`fairprobe.verdict`)."""
    return successes / total if total else None


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
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(stats, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))


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
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(draws, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))


def rate_with_ci(flags: Sequence[bool], *, seed: int = 0) -> tuple[float | None, list[float] | None]:
    """A rate and its 95% bootstrap interval, shaped for ``summary.json`` (``x`` and ``x_ci``).

    With no flags the rate and its interval are ``None`` (no data), never ``0.0`` / ``[0, 0]``."""
    arr = np.asarray(flags, dtype=bool)
    if arr.size == 0:
        return (None, None)
    lo, hi = proportion_ci(arr, seed=seed)
    return (float(arr.mean()), [round(lo, 6), round(hi, 6)])


def rate_fields(name: str, flags: Sequence[bool], *, seed: int = 0) -> dict[str, Any]:
    """``{name: rate, name_ci: [lo, hi], name_n: n}`` for a summary's metrics (rate and interval
    ``None`` when ``n == 0``)."""
    value, ci = rate_with_ci(flags, seed=seed)
    return {name: value, f"{name}_ci": ci, f"{name}_n": int(len(flags))}


def invalid_fields(invalid: int, tested: int) -> dict[str, Any]:
    """The keys every technique puts at the top of its metrics (:mod:`fairprobe.verdict` reads them):

    - ``tested``: test cases (or answers) the run attempted;
    - ``invalid``: those whose answer could not be used (unparsable, judge failure, refusal, error);
    - ``invalid_rate``: ``invalid / tested``, ``None`` when nothing was tested.
    """
    return {"tested": int(tested), "invalid": int(invalid), "invalid_rate": rate(invalid, tested)}


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
