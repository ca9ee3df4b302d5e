"""Paired statistics for comparing two models on the same test cases.

Each test case was answered by both models, so the comparison is paired:

- **Binary outcomes** (biased / not): the difference of rates, ``new - base``, with a 95%
  cluster-bootstrap interval that resamples the same units the run's own intervals resample (the
  original text of a mutant, the Meta-Fair test, the CAFFE triple), and McNemar's exact test on the
  discordant pairs (cases biased under one model only): under "no change" each discordant case is
  equally likely to go either way, so the two-sided p-value is a binomial tail at 1/2.
- **Continuous outcomes** (a similarity, a certified radius): the median paired difference with a
  bootstrap interval over clusters, and the Wilcoxon signed-rank test on the paired differences.
- **Holm's step-down correction** across the slices of one metric (attribute pairs, MRs, bias types):
  the raw and the adjusted p-values are both reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
ALPHA = 0.05
DEFAULT_GATE = "regressed > 0"
"""A comparison's own fail condition: a slice got worse beyond chance (adjusted p < :data:`ALPHA`)."""


@dataclass
class PairedResult:
    """One metric on one slice: both models' values, their paired difference and its test."""

    n: int
    base: float | None
    new: float | None
    delta: float | None
    delta_ci: tuple[float, float] | None
    p: float
    test: str
    discordant: tuple[int, int] | None = None
    """Binary outcomes: (cases worse under new, cases better under new)."""
    p_adjusted: float | None = None
    base_ci: tuple[float, float] | None = None
    new_ci: tuple[float, float] | None = None
    """Each model's own 95% interval, from the same cluster resamples as the difference's."""

    def to_json(self) -> dict:
        out = {
            "n": self.n,
            "base": self.base,
            "new": self.new,
            "delta": self.delta,
            "delta_ci": list(self.delta_ci) if self.delta_ci else None,
            "p": self.p,
            "p_adjusted": self.p_adjusted,
            "test": self.test,
            "base_ci": list(self.base_ci) if self.base_ci else None,
            "new_ci": list(self.new_ci) if self.new_ci else None,
        }
        if self.discordant is not None:
            out["worse"], out["better"] = self.discordant
        return out


def mcnemar_exact(worse: int, better: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts (1.0 when there are none)."""
    from scipy.special import bdtr  # binomial CDF; scipy.special loads far faster than scipy.stats

    n = worse + better
    if n == 0:
        return 1.0
    return float(min(1.0, 2.0 * bdtr(min(worse, better), n, 0.5)))


def wilcoxon_p(differences: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired differences (1.0 when every one is zero)."""
    from scipy.stats import wilcoxon

    d = np.asarray(differences, dtype=float)
    if d.size == 0 or not np.any(d != 0):
        return 1.0
    return float(wilcoxon(d, zero_method="wilcox", alternative="two-sided").pvalue)


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def _cluster_index(clusters: list[str]) -> tuple[np.ndarray, int]:
    _, index = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    return index, int(index.max()) + 1 if len(index) else 0


def paired_binary(
    base: np.ndarray, new: np.ndarray, clusters: list[str], *, seed: int = 0, resamples: int = RESAMPLES
) -> PairedResult:
    """Rates of ``True`` under both models, their difference with a cluster-bootstrap interval, and
    McNemar's exact test (see the module docstring)."""
    b = np.asarray(base, dtype=bool)
    w = np.asarray(new, dtype=bool)
    n = int(b.size)
    if n == 0:
        return PairedResult(0, None, None, None, None, 1.0, "mcnemar-exact", (0, 0))
    worse = int(np.sum(~b & w))
    better = int(np.sum(b & ~w))
    delta = float(w.mean() - b.mean())
    ci: tuple[float, float] | None = (delta, delta)
    index, k = _cluster_index(clusters)
    if worse + better and k > 1:
        diff = np.bincount(index, weights=w.astype(float) - b.astype(float), minlength=k)
        size = np.bincount(index, minlength=k).astype(float)
        rng = np.random.default_rng(seed)
        deltas = np.empty(resamples)
        for start in range(0, resamples, 200):  # bounded memory: 200 resamples of k clusters at a time
            draw = rng.integers(0, k, size=(min(200, resamples - start), k))
            deltas[start : start + len(draw)] = diff[draw].sum(axis=1) / size[draw].sum(axis=1)
        ci = (float(np.quantile(deltas, 0.025)), float(np.quantile(deltas, 0.975)))
    return PairedResult(
        n,
        float(b.mean()),
        float(w.mean()),
        delta,
        ci,
        mcnemar_exact(worse, better),
        "mcnemar-exact",
        (worse, better),
    )


def paired_continuous(
    base: np.ndarray, new: np.ndarray, clusters: list[str], *, seed: int = 0, resamples: int = RESAMPLES
) -> PairedResult:
    """Medians under both models, the median paired difference (new - base) with a cluster-bootstrap
    interval, and the Wilcoxon signed-rank test."""
    b = np.asarray(base, dtype=float)
    w = np.asarray(new, dtype=float)
    n = int(b.size)
    if n == 0:
        return PairedResult(0, None, None, None, None, 1.0, "wilcoxon")
    d = w - b
    delta = float(np.median(d))
    index, k = _cluster_index(clusters)
    ci: tuple[float, float] | None = (delta, delta)
    if k > 1 and np.any(d != 0):
        rng = np.random.default_rng(seed)
        members = [np.flatnonzero(index == c) for c in range(k)]
        draws = []
        for _ in range(min(resamples, 1000)):
            picked = np.concatenate([members[c] for c in rng.integers(0, k, size=k)])
            draws.append(np.median(d[picked]))
        ci = (float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975)))
    return PairedResult(n, float(np.median(b)), float(np.median(w)), delta, ci, wilcoxon_p(d), "wilcoxon")


def slice_verdict(result: PairedResult, higher_is_worse: bool, alpha: float = ALPHA) -> str:
    """``regressed``, ``improved`` or ``no significant change`` from the adjusted p-value and the
    direction of the difference."""
    p = result.p_adjusted if result.p_adjusted is not None else result.p
    if result.delta is None or p >= alpha or result.delta == 0:
        return "no significant change"
    worse = result.delta > 0 if higher_is_worse else result.delta < 0
    return "regressed" if worse else "improved"
