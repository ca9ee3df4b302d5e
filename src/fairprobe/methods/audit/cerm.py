"""Step S1: C-ERM bounds on the fairness gap with Cooper (bafa.txt §3, App. A.2.2).

The paper calls S1 the "certificate"; what is computed here is a **heuristic interval**: every
end-point is the gap of a true member of the version space, but the solves are a finite number of
gradient steps, so the end-points need not be the extremes, and later rounds can report end-points
outside earlier intervals (see :mod:`.engine` for the nested interval logged beside it).

Version space ℋ_λ(S_t) = {h ∈ ℋ : |h(x_i) − s*_i| ≤ λ for every queried (x_i, s*_i)}. Two
constrained problems over the surrogate weights,

    h_max ∈ argmax_{h ∈ ℋ_λ(S_t)} μ̃(h),    h_min ∈ argmin_{h ∈ ℋ_λ(S_t)} μ̃(h),

are solved with Cooper's Lagrangian formulation (simultaneous gradient descent–ascent: Adam on the
weights, gradient ascent on one multiplier per queried point). μ̃ is the sigmoid-smoothed gap over
the *whole pool* (labels and groups are known), on pairs sampled per minibatch
(:class:`~fairprobe.methods.audit.metrics.SmoothGap`). Each solve starts from the round's base
scorer (δ = 0, see :class:`CermSolver`), which plays the part of Table 7's "warm-up"/"retraining"
epochs that fit the surrogate to the queried scores before the min/max steps.

Interval: the endpoints are the *exact* gaps of the two extremal models' pool scores, where a
queried point's score is projected into its tube [s*_i − λ, s*_i + λ] (so each endpoint model is a
member of ℋ_λ(S_t) exactly, not only approximately); the base scorer (δ = 0) is a member too, and
the interval is the smallest and largest gap among these members. The midpoint is the estimate and
the half-width the uncertainty radius (A.2.2 "Extremal hypotheses and certificate"; a radius
of the members found, not a bound on the version space). Once every
pool point is queried the base scorer *is* the black box, so the interval holds the true gap.

Options beyond the paper (defaults = the first design):

- ``refits`` (default 0): add that many more members, the base scorer refitted on bootstrap
  resamples of S_t (each still answers every queried point exactly, so it lies in ℋ_λ(S_t)), under
  the kernel weights ``refit_group_weights`` in turn.
- ``group_weight`` (default 0): a per-group part in the base scorer's kernel (:func:`ridge_base`).

Measured on the Adult case-A black box (``bench/audit.py``, 20 seeds, pool 2,000, budget 1,000):
the two Cooper solves alone (60 steps, multiplier rate 0.5) give intervals that collapse after
~100–200 queries around a base fit biased low, holding the true gap in 56% of rounds. With 200
steps at rate 0.1, 16 refits and ``group_weight`` 10, 95.8% of rounds hold it and every seed stops
at half-width ≤ 0.02 after 564–804 queries with final error ≤ 0.021 (mean 0.006).

How far the solves reach is set by their step budget as much as by the constraints: a surrogate
that is near-linear in its inputs can move freely along the directions the queried points do not
span (the Adult n-gram features have rank 310, so below ~300 queries there are many). At 200 steps
every interval that missed the truth missed it from below (the maximising solve, which must *raise*
a group's AUC, under-reached); on fixed query sets 600 steps moved both ends out and put the upper
end above the truth. With 600 steps and no distribution-matching weights in the selector
(:attr:`SelectorConfig.alpha`), 97.8% of 684 rounds hold the true gap and the mean error is ≤ 0.02
after 308 queries (stratified: 1,588).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fairprobe.methods.audit.block import block_default
from fairprobe.methods.audit.metrics import SmoothGap, gap
from fairprobe.methods.audit.surrogate import build_surrogate


@dataclass(frozen=True)
class CermConfig:
    """C-ERM settings (Table 7: λ = 0.01, optimiser batch 512; steps replace epochs on small sets).
    The defaults that the spec block sets are the block's (:func:`.block.block_default`)."""

    lam: float = block_default("lam")
    steps: int = block_default("cerm_steps")
    lr: float = 0.01
    dual_lr: float = block_default("dual_lr")
    batch: int = 512
    tau: float = 0.05
    tau_rate: float = 0.15
    hidden: int = block_default("hidden")
    surrogate: str = block_default("surrogate")
    base: str = block_default("base")
    ridge_l2: float = 0.01
    group_weight: float = block_default("group_weight")
    """Weight ``w`` of the per-group part of the ridge kernel ``(cos + 1)·(1 + g·g' + w·[g = g'])``.
    0 (the first design): a shared score function plus a group-1 correction, which ridge shrinks
    towards the shared part, so with few queries group 1 is ranked like group 0 and the gap is
    underestimated (case A, 200 random queries: bias −0.026). A large ``w`` fits each group mostly on
    its own answers; see :func:`ridge_base`."""
    refits: int = block_default("refits")
    refit_group_weights: tuple[float, ...] = block_default("refit_group_weights")
    """Kernel group weights the refits cycle through (empty: ``group_weight`` only). Refits under
    different weights add members that differ in how much the groups share, not only in the data."""
    neighbours: int = 8
    knn_temperature: float = 0.05
    threshold: float = block_default("threshold")
    constraints: str = "sum"
    """``sum`` (the paper): the Lagrangian adds λ_i·g_i for every sampled constraint, so its pull
    grows with the number of queries; ``mean``: each g_i is divided by the number sampled, so the
    pull stays comparable to the O(1) objective. Both define the same version space (a positive
    rescaling of an inequality constraint does not change its feasible set). Measured on case A
    (``bench/audit.py --seeds 4 --pool-size 1000 --budget 500 --constraints mean``): coverage 1.00
    but intervals about [−0.38, +0.46] wide, error 0.106 at 250 queries (vs 0.084 for ``sum``): within
    60 steps the multipliers stay too small to hold the tubes, so ``mean`` trades width for coverage."""


@dataclass
class Bounds:
    """One round's C-ERM result: interval, the two endpoint models' pool scores, max constraint violation."""

    lower: float
    upper: float
    scores_low: np.ndarray
    scores_up: np.ndarray
    violation: float

    @property
    def estimate(self) -> float:
        return (self.lower + self.upper) / 2.0

    @property
    def half_width(self) -> float:
        return (self.upper - self.lower) / 2.0


class CermSolver:
    """Solves the two C-ERM problems round after round over one pool.

    Hypotheses are ``h_θ(x) = clip(b_t(x) + δ_θ(x), 0, 1)``: ``b_t`` is the round's base scorer,
    which equals the black-box score on queried points and elsewhere a kernel ridge fit of the queried
    logits on group-interacted features (:func:`ridge_base`, default) or a similarity-weighted average
    of the ``k`` most similar queried scores (:func:`knn_base`, ``base: knn``), and ``δ_θ`` is the
    surrogate network, started at zero each round. The version space is therefore never empty (δ = 0 is in
    it), which matters: a surrogate that cannot fit the queried scores within λ makes the Lagrangian
    pin it to a compromise and the interval turns narrow *and* wrong (measured on the Adult case study:
    an MLP on MiniLM embeddings alone missed the true ΔAUC at every budget up to 1,000 queries).
    """

    def __init__(
        self, inputs: Any, y: np.ndarray, g: np.ndarray, metric: str, config: CermConfig, seed: int = 0
    ):
        self.inputs, self.y, self.g, self.metric, self.config = inputs, y, g, metric, config
        self.n = len(y)
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        tau = (
            config.tau if metric == "auc" else config.tau_rate
        )  # a rate's sigmoid must reach past the threshold
        self.smooth = SmoothGap(metric, y, g, tau=tau, threshold=config.threshold)
        x = inputs if isinstance(inputs, np.ndarray) else inputs[0].mean(axis=1)
        self.unit = (x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-9)).astype(np.float32)

    def _extremise(self, base: np.ndarray, sign: int, idx: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """Minimise −sign·μ̃(h) subject to |h(x_i) − s*_i| − λ ≤ 0 for every queried i (Cooper)."""
        import cooper
        import torch

        cfg = self.config
        delta = build_surrogate(cfg.surrogate, self.inputs, cfg.hidden, self.seed + (1 if sign > 0 else 2))
        smooth, rng = self.smooth, self.rng
        base_t = torch.as_tensor(base, dtype=torch.float32)
        target = torch.as_tensor(scores, dtype=torch.float32)
        index = torch.as_tensor(idx)

        def h(positions: torch.Tensor) -> torch.Tensor:
            return (base_t[positions] + delta(positions)).clamp(0.0, 1.0)

        class Problem(cooper.ConstrainedMinimizationProblem):
            def __init__(self) -> None:
                super().__init__()
                multiplier = cooper.multipliers.IndexedMultiplier(num_constraints=len(idx))
                self.fit = cooper.Constraint(cooper.ConstraintType.INEQUALITY, multiplier=multiplier)

            def compute_cmp_state(self) -> cooper.CMPState:
                sample = smooth.sample(rng, cfg.batch)
                loss = -sign * smooth.value(_scatter(h, sample), sample)
                pick = torch.as_tensor(rng.choice(len(idx), min(len(idx), cfg.batch), replace=False))
                violation = (h(index[pick]) - target[pick]).abs() - cfg.lam
                if cfg.constraints == "mean":
                    violation = violation / len(pick)
                state = cooper.ConstraintState(violation=violation, constraint_features=pick)
                return cooper.CMPState(loss=loss, observed_constraints={self.fit: state})

        problem = Problem()
        primal = torch.optim.Adam(delta.parameters(), lr=cfg.lr)
        dual = torch.optim.SGD(problem.dual_parameters(), lr=cfg.dual_lr, maximize=True)
        optimizer = cooper.optim.SimultaneousOptimizer(
            cmp=problem, primal_optimizers=primal, dual_optimizers=dual
        )
        for _ in range(cfg.steps):
            optimizer.roll()
        with torch.no_grad():
            return h(torch.arange(self.n)).numpy()

    def _refits(self, sim: np.ndarray, idx: np.ndarray, scores: np.ndarray) -> list[tuple[float, np.ndarray]]:
        """``refits`` more members of ℋ_λ(S_t): the base scorer refitted on bootstrap resamples of S_t.

        Every refit keeps each queried point at its black-box score, so it is exactly in the version
        space; its predictions elsewhere show how far another fit to the same answers can move the gap."""
        out = []
        rng = np.random.default_rng([self.seed, len(idx)])
        weights = self.config.refit_group_weights or (self.config.group_weight,)
        for i in range(self.config.refits):
            r = rng.integers(0, len(idx), len(idx))
            if self.config.base == "ridge":
                weight = weights[i % len(weights)]
                b = ridge_base(sim[:, r], self.g, idx[r], scores[r], self.config.ridge_l2, weight)
            else:
                b = knn_base(
                    sim[:, r], idx[r], scores[r], self.config.neighbours, self.config.knn_temperature
                )
            b[idx] = scores
            value = gap(self.metric, b, self.y, self.g, self.config.threshold)
            if value is not None:
                out.append((value, b))
        return out

    def bounds(self, idx: np.ndarray, scores: np.ndarray) -> Bounds:
        """The C-ERM interval for the queried positions ``idx`` with black-box ``scores``."""
        idx = np.asarray(idx, dtype=np.int64)
        scores = np.asarray(scores, dtype=np.float32)
        sim = self.unit @ self.unit[idx].T
        if self.config.base == "ridge":
            base = ridge_base(sim, self.g, idx, scores, self.config.ridge_l2, self.config.group_weight)
        else:
            base = knn_base(sim, idx, scores, self.config.neighbours, self.config.knn_temperature)
        ends = {}
        violation = 0.0
        for sign in (1, -1):
            pool_scores = self._extremise(base, sign, idx, scores)
            violation = max(violation, float(np.abs(pool_scores[idx] - scores).max() - self.config.lam))
            pool_scores[idx] = np.clip(pool_scores[idx], scores - self.config.lam, scores + self.config.lam)
            value = gap(self.metric, pool_scores, self.y, self.g, self.config.threshold)
            ends[sign] = (0.0 if value is None else value, pool_scores)
        # h = b_t (δ = 0) is a member of the version space too: the interval spans every member found.
        base_value = gap(self.metric, base, self.y, self.g, self.config.threshold)
        members = [ends[-1], ends[1]] + ([(base_value, base)] if base_value is not None else [])
        members += self._refits(sim, idx, scores)
        (a, sa), (b, sb) = min(members, key=lambda m: m[0]), max(members, key=lambda m: m[0])
        return Bounds(a, b, sa, sb, max(violation, 0.0))


def knn_base(sim: np.ndarray, idx: np.ndarray, scores: np.ndarray, k: int, temperature: float) -> np.ndarray:
    """Base scorer b_t: the black-box score on queried points, a softmax(similarity/T)-weighted mean of
    the ``k`` most similar queried scores elsewhere (``sim``: pool × queried cosine similarities)."""
    k = min(k, len(idx))
    top = np.argpartition(-sim, k - 1, axis=1)[:, :k]
    top_sim = np.take_along_axis(sim, top, axis=1)
    w = np.exp((top_sim - top_sim.max(axis=1, keepdims=True)) / temperature)
    base = (w * scores[top]).sum(axis=1) / w.sum(axis=1)
    base[idx] = scores
    return base.astype(np.float32)


def ridge_base(
    sim: np.ndarray, g: np.ndarray, idx: np.ndarray, scores: np.ndarray, l2: float, group_weight: float = 0.0
) -> np.ndarray:
    """Base scorer b_t: kernel ridge regression of the queried scores' logits, black-box score on queried points.

    The kernel ``(cos(x, x') + 1)·(1 + g·g' + w·[g = g'])`` is the inner product of the group-interacted
    features ``[x, 1, g·x, g, √w·[g=0]·x, √w·[g=0], √w·[g=1]·x, √w·[g=1]]``: the auditor knows every
    pool member's group, and a gap *is* a difference between the groups' score functions, so the
    surrogate fits a shared part, a group-1 correction and (``w > 0``) a part of each group's own."""
    gf, gq = g.astype(np.float64), g[idx].astype(np.float64)
    coupling = 1.0 + np.outer(gf, gq) + group_weight * np.equal.outer(gf, gq)
    kernel = (sim.astype(np.float64) + 1.0) * coupling  # pool × queried; its rows idx are queried × queried
    target = np.clip(scores.astype(np.float64), 1e-3, 1 - 1e-3)
    target = np.log(target / (1 - target))
    alpha = np.linalg.solve(kernel[idx] + l2 * np.eye(len(idx)), target)
    logits = kernel @ alpha
    base = 1.0 / (1.0 + np.exp(-np.clip(logits, -30, 30)))
    base[idx] = scores
    return base.astype(np.float32)


def _scatter(h: Any, sample: list[tuple[np.ndarray, ...]]) -> Any:
    """Scores of the sampled pool positions, as a dense-by-position lookup for SmoothGap.value."""
    import torch

    flat = np.unique(np.concatenate([part for group in sample for part in group]))
    scores = h(torch.as_tensor(flat))
    lookup = torch.zeros(int(flat.max()) + 1)
    return lookup.index_put((torch.as_tensor(flat),), scores)
