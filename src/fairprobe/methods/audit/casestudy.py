"""Offline case-study black boxes on the Adult census (issue 7 §6; bafa.txt §5.1, App. A.4.1).

The paper's case A audits a classifier fine-tuned with group-conditional label flips (ΔAUC ≈ 0.14);
case B a model with a small natural gap (ΔAUC ≈ 0.02–0.045). Here the black box is a logistic
regression trained on the Adult *training* split, reading the text serialisation of
:func:`~fairprobe.methods.audit.pool.serialise_adult` back into features. Its features interact
with the ``sex`` field (a separate weight vector per group), and for one group (Female) training
labels are flipped with probability ``p`` in an input-dependent way — positives with a degree
(Bachelors and up) become negatives, negatives without one become positives — which degrades the
ranking within that group only. ``p`` is chosen so that ΔAUC = AUC(Male) − AUC(Female) on the
Adult test split is ≈ 0.14 (case A) and ≈ 0.03 (case B); :func:`true_gap` measures it.

Use as ``py:fairprobe.methods.audit.casestudy:adult_case_a`` (or ``adult_case_b``): each returns
``Prediction`` objects whose ``scores[">50K"]`` is the ranked score.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from fairprobe.models.base import Prediction

FLIP = {"a": 0.28, "b": 0.165}
"""Flip probability of each case (calibrated once against :func:`true_gap`, see the tests)."""
_CATEGORICAL = (
    "workclass",
    "education",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "native_country",
)
_NUMERIC = ("age", "capital_gain", "capital_loss", "hours_per_week")
_DEGREES = {"Bachelors", "Masters", "Doctorate", "Prof-school"}


class _Features:
    def __init__(self, rows: list[dict[str, str]]):
        self.vocab = {c: sorted({r[c] for r in rows}) for c in _CATEGORICAL}
        nums = np.array([[float(r[c]) for c in _NUMERIC] for r in rows])
        self.mean, self.std = nums.mean(0), nums.std(0) + 1e-9

    def __call__(self, rows: list[dict[str, str]]) -> np.ndarray:
        blocks = []
        for c in _CATEGORICAL:
            index = {v: i for i, v in enumerate(self.vocab[c])}
            onehot = np.zeros((len(rows), len(index)))
            for i, r in enumerate(rows):
                if r.get(c) in index:
                    onehot[i, index[r[c]]] = 1.0
            blocks.append(onehot)
        nums = np.array([[float(r.get(c, 0) or 0) for c in _NUMERIC] for r in rows]).reshape(len(rows), -1)
        blocks.append((nums - self.mean) / self.std)
        base = np.hstack([np.ones((len(rows), 1)), *blocks])
        female = np.array([[1.0 if r.get("sex") == "Female" else 0.0] for r in rows])
        return np.hstack([base, base * female])


def _fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 25) -> np.ndarray:
    """L2-regularised logistic regression by Newton's method (deterministic)."""
    w = np.zeros(x.shape[1])
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        grad = x.T @ (p - y) + l2 * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + l2 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


@cache
def _model(flip: float, seed: int = 0) -> tuple[_Features, np.ndarray]:
    from fairprobe.methods.audit.pool import adult_rows

    rows = adult_rows("data")
    feats = _Features(rows)
    y = np.array([1.0 if r["income"] == ">50K" else 0.0 for r in rows])
    rng = np.random.default_rng(seed)
    coin = rng.random(len(rows)) < flip
    for i, r in enumerate(rows):
        if r["sex"] == "Female" and coin[i]:
            degree = r["education"] in _DEGREES
            if y[i] == 1 and degree:
                y[i] = 0.0
            elif y[i] == 0 and not degree:
                y[i] = 1.0
    return feats, _fit_logistic(feats(rows), y)


def score_texts(texts: list[str], flip: float) -> np.ndarray:
    """P(>50K) of the case-study model with flip probability ``flip`` for serialised Adult texts."""
    from fairprobe.methods.audit.pool import parse_adult_text

    feats, w = _model(flip)
    rows = [parse_adult_text(t) for t in texts]
    return 1.0 / (1.0 + np.exp(-np.clip(feats(rows) @ w, -30, 30)))


def _predictions(scores: np.ndarray) -> list[Prediction]:
    return [
        Prediction(frozenset([">50K" if s >= 0.5 else "<=50K"]), {">50K": float(s), "<=50K": float(1 - s)})
        for s in scores
    ]


def adult_case_a(texts: list[str]) -> list[Prediction]:
    """Case A black box: strongly biased against Female (ΔAUC ≈ 0.14 on the Adult test split)."""
    return _predictions(score_texts(list(texts), FLIP["a"]))


def adult_case_b(texts: list[str]) -> list[Prediction]:
    """Case B black box: mildly biased (ΔAUC ≈ 0.03 on the Adult test split)."""
    return _predictions(score_texts(list(texts), FLIP["b"]))


def true_gap(flip: float, metric: str = "auc") -> float:
    """The gap of the case-study model on the whole Adult test split (Male minus Female)."""
    from fairprobe.methods.audit.metrics import gap
    from fairprobe.methods.audit.pool import adult_rows

    rows = adult_rows("test")
    scores = score_texts([r["text"] for r in rows], flip)
    y = np.array([1 if r["income"] == ">50K" else 0 for r in rows])
    g = np.array([0 if r["sex"] == "Male" else 1 for r in rows])
    value = gap(metric, scores, y, g)
    assert value is not None
    return value
