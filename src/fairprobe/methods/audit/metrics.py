"""Fairness gaps of a scorer between two groups, exact and smooth (bafa.txt §3, App. A.1, A.2.2).

``auc``: ΔAUC = AUC_{g=0} − AUC_{g=1}, each group AUC the Mann–Whitney U-statistic over its
positive–negative pairs (ties count ½); undefined (``None``) when a group lacks either class
(A.2.1: "treat as missing"). ``dp``: demographic-parity gap, the difference of the groups' rates
of ``score >= threshold``. ``eo``: equal-opportunity gap, the difference of the groups' true
positive rates at ``threshold``.

The smooth versions (torch, used inside C-ERM) replace each indicator by a sigmoid comparator
with temperature τ (A.2.2, "Objective implementation"), and are evaluated on index samples drawn
per minibatch, so one step costs O(batch) rather than O(pool²).
"""

from __future__ import annotations

from typing import Any

import numpy as np

METRICS = ("auc", "dp", "eo")
METRIC_NAMES = {"auc": "ΔAUC", "dp": "demographic-parity gap", "eo": "equal-opportunity (TPR) gap"}


def _average_ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), dtype=float)
    sorted_vals = values[order]
    # Start index of each run of equal values, and the run it belongs to.
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_vals)) + 1]
    ends = np.r_[starts[1:], len(values)]
    run_rank = (starts + ends - 1) / 2.0 + 1.0
    ranks[order] = np.repeat(run_rank, ends - starts)
    return ranks


def auc(scores: np.ndarray, y: np.ndarray) -> float | None:
    """ROC AUC of ``scores`` for binary labels ``y`` (1 = positive); ``None`` with one class only."""
    scores = np.asarray(scores, dtype=float)
    y = np.asarray(y).astype(bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = _average_ranks(scores)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def _rate(flags: np.ndarray) -> float | None:
    return float(flags.mean()) if flags.size else None


def group_value(metric: str, scores: np.ndarray, y: np.ndarray, threshold: float = 0.5) -> float | None:
    """The per-group quantity whose difference is the gap: AUC, positive rate or TPR."""
    if metric == "auc":
        return auc(scores, y)
    if metric == "dp":
        return _rate(scores >= threshold)
    if metric == "eo":
        return _rate(scores[y.astype(bool)] >= threshold)
    raise ValueError(f"unknown metric {metric!r}")


def gap(
    metric: str, scores: np.ndarray, y: np.ndarray, g: np.ndarray, threshold: float = 0.5
) -> float | None:
    """Exact gap (group 0 minus group 1) of ``scores``; ``None`` when a group value is undefined."""
    scores, y, g = np.asarray(scores, dtype=float), np.asarray(y), np.asarray(g)
    a = group_value(metric, scores[g == 0], y[g == 0], threshold)
    b = group_value(metric, scores[g == 1], y[g == 1], threshold)
    return None if a is None or b is None else a - b


class SmoothGap:
    """Differentiable gap over a fixed pool, estimated on index samples (A.2.2).

    ``sample(rng, batch)`` draws, per group, ``batch`` positive–negative pairs (``auc``) or
    ``batch`` members (``dp``; positives only for ``eo``) with replacement; ``value(h, sample)``
    is the sigmoid-smoothed gap of the pool scores ``h`` (a torch vector) on that sample.
    """

    def __init__(self, metric: str, y: np.ndarray, g: np.ndarray, tau: float = 0.05, threshold: float = 0.5):
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}")
        self.metric, self.tau, self.threshold = metric, tau, threshold
        y, g = np.asarray(y).astype(bool), np.asarray(g)
        self.pos = [np.flatnonzero(y & (g == k)) for k in (0, 1)]
        self.neg = [np.flatnonzero(~y & (g == k)) for k in (0, 1)]
        self.members = [np.flatnonzero(g == k) for k in (0, 1)]

    def sample(self, rng: np.random.Generator, batch: int) -> list[tuple[np.ndarray, ...]]:
        out: list[tuple[np.ndarray, ...]] = []
        for k in (0, 1):
            if self.metric == "auc":
                out.append((rng.choice(self.pos[k], batch), rng.choice(self.neg[k], batch)))
            elif self.metric == "dp":
                out.append((rng.choice(self.members[k], batch),))
            else:
                out.append((rng.choice(self.pos[k], batch),))
        return out

    def value(self, h: Any, sample: list[tuple[np.ndarray, ...]]) -> Any:
        import torch

        parts = []
        for idx in sample:
            if self.metric == "auc":
                diff = h[torch.as_tensor(idx[0])] - h[torch.as_tensor(idx[1])]
                parts.append(torch.sigmoid(diff / self.tau).mean())
            else:
                parts.append(torch.sigmoid((h[torch.as_tensor(idx[0])] - self.threshold) / self.tau).mean())
        return parts[0] - parts[1]

    def defined(self) -> bool:
        if self.metric == "auc":
            return all(len(p) and len(n) for p, n in zip(self.pos, self.neg, strict=True))
        if self.metric == "eo":
            return all(len(p) for p in self.pos)
        return all(len(m) for m in self.members)
