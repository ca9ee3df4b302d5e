"""The audit loop: Algorithm 1 of bafa.txt (App. A.2), with the passive baselines of A.3.

``run_audit`` seeds ``S_0`` by (g, y)-stratified sampling, then per round: computes the interval —
C-ERM bounds for ``bafa`` / ``bafa-bo`` / ``cerm-only`` (S1), or for the passive baselines
(``stratified``, ``random``, ``power``, ``bo``) the empirical gap on the queried set (A.2.1) with
the McDiarmid/Hoeffding bound of A.3.1 around it — logs it, **stops** when the half-width is ≤ ε
(Algorithm 1 lines 4–5; the published code never stopped) or the budget is spent, else selects
``k`` new points (S2) and queries the black box. Everything random comes from ``seed``; the black
box is reached only through ``query``.

**The C-ERM interval is a heuristic, not a certificate.** Its end-points are gaps of surrogates
that fit every queried score within λ, found by a finite number of gradient steps: nothing
guarantees they are the extremes of the version space, and a later (larger) query set can give an
end-point outside an earlier interval (Adult case B: upper 0.048 at 260 queries, 0.079 at 276),
although the version space only shrinks. Each round therefore also logs the **nested interval**
``[max_{s≤t} lower_s, min_{s≤t} upper_s]``, the intersection with every earlier round's interval —
a post-processing, not part of Algorithm 1; the raw interval (the paper's definition) is always
logged beside it, and the stopping rule uses the raw half-width as published. When the raw
interval no longer meets the nested one (the rounds contradict each other), the intersection
would be empty: the nested interval then restarts from the raw interval of that round, and the
round is flagged ``nested_reset``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from fairprobe.methods.audit import selection as sel
from fairprobe.methods.audit.block import block_default
from fairprobe.methods.audit.cerm import CermConfig, CermSolver
from fairprobe.methods.audit.metrics import gap
from fairprobe.methods.audit.pool import Pool


@dataclass(frozen=True)
class AuditConfig:
    """The engine's settings; every default is the spec block's (:func:`.block.block_default`), and
    :func:`.pipeline.audit_config` builds one from a block."""

    strategy: str = block_default("strategy")
    metric: str = block_default("metric")
    budget: int = block_default("budget")
    epsilon: float = block_default("epsilon")
    delta: float = block_default("delta")
    per_stratum: int = block_default("per_stratum")
    selector: sel.SelectorConfig = field(default_factory=sel.SelectorConfig)
    cerm: CermConfig = field(default_factory=CermConfig)


@dataclass
class RoundLog:
    """One row of the trajectory log (issue 7 §4)."""

    round: int
    queries: int
    lower: float
    upper: float
    estimate: float | None
    width: float
    error: float | None
    covered: bool | None
    violation: float | None
    selected: list[str]
    nested_lower: float = float("nan")
    nested_upper: float = float("nan")
    nested_covered: bool | None = None
    nested_reset: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AuditResult:
    rounds: list[RoundLog]
    stopped_by: str
    queried: list[str]
    scores: dict[str, float]

    @property
    def final(self) -> RoundLog:
        return self.rounds[-1]


def passive_interval(metric: str, y: np.ndarray, g: np.ndarray, delta: float) -> float:
    """Half-width of the (1−δ) bound of A.3.1 for the empirical gap on a queried sample.

    ΔAUC: McDiarmid per group, ``t_g = sqrt((m_g+n_g)·log(4/δ) / (2·m_g·n_g))`` (m, n: positives,
    negatives) and the union bound ``t_0 + t_1``; rates (dp, eo): Hoeffding ``sqrt(log(4/δ)/(2·n_g))``.
    """
    total = 0.0
    for k in (0, 1):
        yk = y[g == k]
        if metric == "auc":
            m, n = int(yk.sum()), int(len(yk) - yk.sum())
            if m == 0 or n == 0:
                return math.inf
            total += math.sqrt((m + n) * math.log(4 / delta) / (2 * m * n))
        else:
            n = len(yk) if metric == "dp" else int(yk.sum())
            if n == 0:
                return math.inf
            total += math.sqrt(math.log(4 / delta) / (2 * n))
    return total


def _projection(inputs: Any, seed: int, dims: int) -> np.ndarray:
    """A seeded random projection of the encoded pool to ``dims`` GP features (the "embedding" part)."""
    if inputs is None:
        raise ValueError("this strategy needs the encoded pool (inputs)")
    x = inputs if isinstance(inputs, np.ndarray) else inputs[0].mean(axis=1)
    proj = np.random.default_rng(seed + 7).normal(size=(x.shape[1], dims))
    return (x @ proj) / math.sqrt(x.shape[1])


def run_audit(
    pool: Pool,
    inputs: Any,
    query: Callable[[np.ndarray], np.ndarray],
    config: AuditConfig,
    seed: int,
    true_value: float | None = None,
    oracle_scores: np.ndarray | None = None,
    on_round: Callable[[RoundLog], None] | None = None,
) -> AuditResult:
    """Audit ``pool`` with ``config.strategy``; ``query(positions) -> scores in [0, 1]`` is the black box."""
    if config.strategy not in sel.STRATEGIES:
        raise ValueError(f"unknown strategy {config.strategy!r}")
    if config.strategy in sel.ORACLE and oracle_scores is None:
        raise ValueError("power sampling needs every black-box score in advance (oracle information)")
    rng = np.random.default_rng(seed)
    scfg, metric = config.selector, config.metric
    n = len(pool)
    lo_range = -1.0
    queried = sel.seed_set(rng, pool.strata, config.per_stratum)[: config.budget]
    scores = np.asarray(query(queried), dtype=float)
    solver = (
        CermSolver(inputs, pool.y, pool.g, metric, config.cerm, seed) if config.strategy in sel.CERM else None
    )
    bo = sel.BOState()
    projection = None
    last_feats: np.ndarray | None = None
    prev_width: float | None = None
    rounds: list[RoundLog] = []
    nested_lo, nested_hi = -math.inf, math.inf
    selected = queried
    stopped_by = "budget"
    for t in range(10**9):
        violation: float | None = None
        bounds = None
        if solver is not None:
            bounds = solver.bounds(queried, scores)
            lower, upper, estimate = bounds.lower, bounds.upper, bounds.estimate
            violation = bounds.violation
        else:
            estimate = gap(metric, scores, pool.y[queried], pool.g[queried], config.cerm.threshold)
            half = passive_interval(metric, pool.y[queried], pool.g[queried], config.delta)
            if estimate is None or not math.isfinite(half):
                lower, upper = lo_range, 1.0
            else:
                lower, upper = max(lo_range, estimate - half), min(1.0, estimate + half)
        width = upper - lower
        error = None if true_value is None or estimate is None else abs(estimate - true_value)
        covered = None if true_value is None else bool(lower - 1e-9 <= true_value <= upper + 1e-9)
        reset = max(nested_lo, lower) > min(nested_hi, upper)
        if reset:  # the rounds contradict each other: restart the intersection here
            nested_lo, nested_hi = lower, upper
        else:
            nested_lo, nested_hi = max(nested_lo, lower), min(nested_hi, upper)
        log = RoundLog(
            t,
            len(queried),
            lower,
            upper,
            estimate,
            width,
            error,
            covered,
            violation,
            [pool.ids[i] for i in selected],
            nested_lo,
            nested_hi,
            None if true_value is None else bool(nested_lo - 1e-9 <= true_value <= nested_hi + 1e-9),
            reset,
        )
        rounds.append(log)
        if on_round is not None:
            on_round(log)
        if last_feats is not None and prev_width is not None:  # BO utility: realised width reduction
            gain = (prev_width - width) / max(1, len(last_feats))
            bo.x.extend(last_feats)
            bo.y.extend([gain] * len(last_feats))
        prev_width = width
        if width / 2 <= config.epsilon:
            stopped_by = "epsilon"
            break
        unqueried = np.setdiff1d(np.arange(n), queried)
        if unqueried.size == 0:  # before the budget: a fully queried pool makes the answer exact
            stopped_by = "pool"
            break
        if len(queried) >= config.budget:
            stopped_by = "budget"
            break
        k = min(scfg.k, config.budget - len(queried), unqueried.size)
        cand = (
            unqueried
            if unqueried.size <= scfg.candidates
            else np.sort(rng.choice(unqueried, scfg.candidates, replace=False))
        )
        last_feats = None
        strategy = config.strategy
        if strategy == "random":
            selected = rng.choice(unqueried, k, replace=False)
        elif strategy in ("stratified", "cerm-only"):
            selected = sel.stratified(rng, unqueried, pool.g, k)
        elif strategy == "bo":
            if projection is None:
                projection = _projection(inputs, seed, scfg.bo_features)
            feats = np.column_stack([pool.g.astype(float), projection])
            if len(queried) >= 2:
                utility = scores * (1.0 - scores)  # observed score uncertainty of the queried points
                acq = sel.gp_ucb(feats[queried[-300:]], utility[-300:], feats[cand], scfg.beta)
            else:
                acq = np.zeros(len(cand))
            selected = cand[sel.mmr_select(sel.squash(acq), feats[cand], k, scfg.gamma)]
        elif strategy == "power":
            assert oracle_scores is not None
            p = np.clip(oracle_scores[unqueried], 0.0, 1.0)
            w = (p * (1 - p)) ** scfg.power_gamma + 1e-12
            selected = rng.choice(unqueried, k, replace=False, p=w / w.sum())
        else:
            assert bounds is not None
            dis = np.abs(bounds.scores_up[cand] - bounds.scores_low[cand])
            alpha_t = sel.ramp(t, scfg.warmup_rounds, scfg.ramp_rounds, scfg.alpha)
            weights = sel.distribution_weights(pool.strata, queried, alpha_t, scfg.weight_cap)[cand]
            if strategy == "bafa":
                selected = cand[sel.top_k(dis * weights, k)]
            else:
                if projection is None:
                    projection = _projection(inputs, seed, scfg.bo_features)
                feats = np.column_stack([dis, pool.g[cand], projection[cand]])
                feats = np.nan_to_num(feats, nan=0.0, posinf=0.0, neginf=0.0)
                lam_t = sel.ramp(t, scfg.warmup_rounds, scfg.ramp_rounds, scfg.bo_lambda_max)
                if lam_t > 0 and len(bo.x) >= 2:
                    train_x, train_y = np.array(bo.x[-300:]), np.array(bo.y[-300:])
                    acq = sel.squash(sel.gp_ucb(train_x, train_y, feats, scfg.beta))
                else:
                    acq = np.zeros(len(cand))
                comb = ((1 - lam_t) * dis + lam_t * acq) * weights
                pick = sel.mmr_select(comb, feats, k, scfg.gamma)
                selected = cand[pick]
                last_feats = feats[pick]
        selected = np.asarray(selected, dtype=np.int64)
        new_scores = np.asarray(query(selected), dtype=float)
        queried = np.concatenate([queried, selected])
        scores = np.concatenate([scores, new_scores])
    return AuditResult(
        rounds,
        stopped_by,
        [pool.ids[i] for i in queried],
        {pool.ids[i]: float(s) for i, s in zip(queried, scores, strict=True)},
    )
