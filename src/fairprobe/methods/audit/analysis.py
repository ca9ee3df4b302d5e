"""``analyse`` of the ``audit:`` block: a pure function of the round and final findings.

**Every seed counts.** ``metrics.seeds.<seed>`` holds each seed's ``estimate``, ``lower``, ``upper``,
``half_width``, ``queries``, ``stopped_by`` (and ``error``, ``covered`` when the true gap is known),
its raw and nested intervals and its ``invalid`` / ``cases``. The top-level figures are the
**worst case across seeds**, so a threshold on them holds for every seed: ``upper`` is the largest
upper end, ``lower`` the smallest lower end (the top-level ``[lower, upper]`` is the hull of the
seeds' intervals), ``half_width``, ``queries`` and ``error`` the largest; ``estimate`` is the mean
over seeds (with ``estimate_min`` / ``estimate_max``). ``upper > 0.10`` thus fails when *any* seed's
interval reaches above 0.10; for "fail only if every seed says so", use the per-seed entries or
``lower_max`` / ``upper_min``. ``stopped_by`` is the reason shared by all seeds, else ``mixed``.
Each seed also carries its interval as ``estimate_ci`` and its queries as ``estimate_n``: the default
pass condition reads them (every seed's interval within ±0.1, :mod:`fairprobe.judge.evidence`).

The headline interval is the raw C-ERM / passive interval of the last round (``interval: raw``,
default, the paper's) or the nested one (``interval: nested``: intersected with every earlier
round's, see :mod:`.engine` and :attr:`AuditBlock.interval` for why it is not the default);
both are always in ``seeds.<seed>``
(``raw_lower`` …, ``nested_lower`` …) and the raw envelope in ``raw_lower`` / ``raw_upper``. A
seed's ``estimate`` is the strategy's estimate (C-ERM midpoint, or the empirical gap) moved into
the headline interval when it lies outside it (only possible for the nested one).

``invalid`` (unusable black-box answers, e.g. a chat answer with no number in 0–100), ``cases``
(black-box answers the audit used) and ``invalid_rate`` (``None`` when there were none) are summed
over seeds. When the true gap is known (``--reference`` or a ``--scores`` file): ``coverage`` (share
of rounds whose raw interval holds it, with a 95% bootstrap CI), ``nested_coverage`` likewise, and
the evaluation of App. A.5.1 (:mod:`.evaluate`: queries to ε counting seeds that stopped early,
error at 250 and AUEC over the seeds that reached those budgets, a ``note`` when seeds are too few).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from fairprobe.methods.audit import ranking
from fairprobe.methods.audit.block import AuditBlock
from fairprobe.methods.audit.evaluate import STOPPED_EARLY, Trajectories, summarise
from fairprobe.methods.audit.metrics import METRIC_NAMES
from fairprobe.methods.audit.selection import CERM, ORACLE
from fairprobe.report.sections import Analysis, Group, Paragraph, Table
from fairprobe.stats import invalid_fields, rate_with_ci


def _r(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


def _nested(f: dict[str, Any]) -> tuple[float, float]:
    lo, hi = f.get("nested_lower"), f.get("nested_upper")
    if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
        return f["lower"], f["upper"]  # findings written before nested intervals existed
    return float(lo), float(hi)


def seed_entry(block: AuditBlock, f: dict[str, Any]) -> dict[str, Any]:
    """One seed's result (a final finding, or the last round of a seed cut off mid-way)."""
    n_lo, n_hi = _nested(f)
    lo, hi = (n_lo, n_hi) if block.interval == "nested" else (f["lower"], f["upper"])
    raw_est = f.get("estimate")
    estimate = None if raw_est is None else min(max(raw_est, lo), hi)
    entry: dict[str, Any] = {
        "estimate": estimate,
        "lower": lo,
        "upper": hi,
        "half_width": (hi - lo) / 2,
        "queries": f["queries"],
        "stopped_by": f.get("stopped_by", "incomplete"),
        "raw_estimate": raw_est,
        "raw_lower": f["lower"],
        "raw_upper": f["upper"],
        "nested_lower": n_lo,
        "nested_upper": n_hi,
        "nested_resets": f.get("nested_resets", 0),
        "invalid": f.get("invalid", 0),
        "cases": f.get("cases", f["queries"]),
        # the interval beside the estimate, as every gated quantity carries it, and the queries it is
        # over: the pass condition (every seed within ±0.1) and the queries a pass would need read them
        "estimate_ci": None if estimate is None else [lo, hi],
        "estimate_n": f["queries"],
    }
    true = f.get("true_value")
    if true is not None:
        entry["true_value"] = true
        entry["error"] = None if estimate is None else abs(estimate - true)
        entry["covered"] = bool(lo - 1e-9 <= true <= hi + 1e-9)
    return entry


HEADLINE = (
    "estimate",
    "estimate_min",
    "estimate_max",
    "lower",
    "upper",
    "lower_max",
    "upper_min",
    "raw_lower",
    "raw_upper",
    "half_width",
    "queries",
    "stopped_by",
    "error",
    "coverage",
    "nested_coverage",
)


def _max(values: list[Any]) -> float | None:
    vals = [v for v in values if v is not None]
    return max(vals) if vals else None


def _min(values: list[Any]) -> float | None:
    vals = [v for v in values if v is not None]
    return min(vals) if vals else None


def analyse(block: AuditBlock, findings: list[dict[str, Any]], seed: int) -> Analysis:
    finals = sorted((f for f in findings if f.get("kind") == "final"), key=lambda f: f["seed"])
    rounds = sorted((f for f in findings if f.get("kind") == "round"), key=lambda f: (f["seed"], f["round"]))
    by_seed: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for f in rounds:
        by_seed[f["seed"]].append(f)
    done = {f["seed"] for f in finals}
    heads = list(finals) + [rows[-1] for s, rows in sorted(by_seed.items()) if s not in done]
    entries = {str(f["seed"]): seed_entry(block, f) for f in heads}
    metrics: dict[str, Any] = {
        "metric": block.metric,
        "strategy": block.strategy,
        "preset": block.preset,
        "interval": block.interval,
        "n_seeds": len(entries),
        "seeds_finished": len(finals),
        "seeds": entries,
    }
    per = list(entries.values())
    cases = sum(e["cases"] for e in per)
    invalid = sum(e["invalid"] for e in per)
    # ``tested`` (the same count as ``cases``) is the name the shared verdict code reads.
    metrics.update(cases=cases, **invalid_fields(invalid, cases))
    # Every headline key is present; None means "no data" (no seed yet, or no true gap known).
    for key in HEADLINE:
        metrics[key] = None
    if per:
        reasons = sorted({e["stopped_by"] for e in per})
        estimates = [e["estimate"] for e in per if e["estimate"] is not None]
        metrics.update(
            estimate=float(np.mean(estimates)) if estimates else None,
            estimate_min=_min(estimates),
            estimate_max=_max(estimates),
            lower=_min([e["lower"] for e in per]),
            upper=_max([e["upper"] for e in per]),
            lower_max=_max([e["lower"] for e in per]),
            upper_min=_min([e["upper"] for e in per]),
            raw_lower=_min([e["raw_lower"] for e in per]),
            raw_upper=_max([e["raw_upper"] for e in per]),
            half_width=_max([e["half_width"] for e in per]),
            queries=_max([e["queries"] for e in per]),
            stopped_by=reasons[0] if len(reasons) == 1 else "mixed",
        )
        if per[0].get("true_value") is not None:
            metrics["true_value"] = per[0]["true_value"]
            metrics["error"] = _max([e.get("error") for e in per])
    if finals:
        queries = [f["queries"] for f in finals]
        metrics["over_seeds"] = {
            "queries_mean": float(np.mean(queries)),
            "queries_sd": float(np.std(queries)),
            "stopped_by_epsilon": sum(f["stopped_by"] == "epsilon" for f in finals) / len(finals),
        }
        errors = [e["error"] for e in per if e.get("error") is not None]
        if errors:
            metrics["over_seeds"].update(error_mean=float(np.mean(errors)), error_sd=float(np.std(errors)))
    covered = [bool(f["covered"]) for f in rounds if f.get("covered") is not None]
    if covered:
        value, ci = rate_with_ci(covered, seed=seed)
        metrics["coverage"] = value
        metrics["coverage_ci"] = ci
        nested = [bool(f["nested_covered"]) for f in rounds if f.get("nested_covered") is not None]
        if nested:
            value, ci = rate_with_ci(nested, seed=seed)
            metrics["nested_coverage"] = value
            metrics["nested_coverage_ci"] = ci
        curves = {}
        for s, rows in by_seed.items():
            pts = [(r["queries"], r["error"]) for r in rows if r.get("error") is not None]
            if pts:
                arr = np.array(pts, dtype=float)
                curves[str(s)] = (arr[:, 0], arr[:, 1])
        if curves:
            stopped = frozenset(str(f["seed"]) for f in finals if f["stopped_by"] in STOPPED_EARLY)
            summary = summarise(Trajectories("run", block.strategy, curves, stopped=stopped))
            metrics["evaluation"] = {k: v for k, v in summary.items() if v is not None}
    sections: list[Any] = [
        Paragraph(
            "What was audited",
            f"{METRIC_NAMES[block.metric]} (group 0 minus group 1) of the black box, estimated with the "
            f"'{block.strategy}' strategy within ε = {block.epsilon} or {block.budget} queries per seed. "
            + (
                "C-ERM strategies report the interval between the smallest and largest gap found among "
                "surrogate models consistent with every queried score within λ (bafa.txt §3); its midpoint "
                "is the estimate. It is a heuristic interval, not a certificate: the solves are a finite "
                "number of gradient steps and may not reach the extremes, so later end-points can fall "
                "outside earlier ones. "
                + (
                    "The headline interval is nested: intersected with every earlier round's (a "
                    "post-processing; the raw interval is reported beside it). "
                    if block.interval == "nested"
                    else "The headline interval is the raw interval of the last round. "
                )
                if block.strategy in CERM
                else f"Passive strategies report the empirical gap on the queried set with a {1 - block.delta:.0%} "
                "McDiarmid/Hoeffding bound (bafa.txt App. A.3.1). "
            )
            + (
                "Power sampling uses ORACLE information (every black-box score in advance): it is a reference "
                "baseline, not an audit an outsider could run."
                if block.strategy in ORACLE
                else ""
            ),
        ),
    ]
    if finals:
        sections.append(
            Table(
                "Result per seed",
                [
                    "seed",
                    "queries",
                    "lower",
                    "upper",
                    "estimate",
                    "raw lower",
                    "raw upper",
                    "error",
                    "stopped by",
                ],
                [
                    [
                        s,
                        e["queries"],
                        _r(e["lower"]),
                        _r(e["upper"]),
                        _r(e["estimate"]),
                        _r(e["raw_lower"]),
                        _r(e["raw_upper"]),
                        _r(e.get("error")),
                        e["stopped_by"],
                    ]
                    for s, e in entries.items()
                ],
                caption="Thresholds on the top-level lower/upper apply to the hull of these intervals "
                "(every seed); per-seed thresholds read seeds.<seed>.upper.",
            )
        )
    if by_seed:
        first = min(by_seed)
        sections.append(
            Table(
                f"Trajectory of seed {first}",
                [
                    "round",
                    "queries",
                    "lower",
                    "upper",
                    "nested lower",
                    "nested upper",
                    "estimate",
                    "error",
                    "covered",
                ],
                [
                    [
                        r["round"],
                        r["queries"],
                        _r(r["lower"]),
                        _r(r["upper"]),
                        _r(r.get("nested_lower")),
                        _r(r.get("nested_upper")),
                        _r(r["estimate"]),
                        _r(r["error"]),
                        r["covered"],
                    ]
                    for r in by_seed[first]
                ],
                caption="One row per audit round; error and covered need the true value (--reference or --scores).",
            )
        )
    groups = [
        Group(
            f"seed {s}",
            e["queries"],
            ["estimate", "lower", "upper"],
            f"[{e['lower']:+.4f}, {e['upper']:+.4f}] after {e['queries']} queries ({e['stopped_by']})",
        )
        for s, e in entries.items()
    ]
    return Analysis(
        metrics=metrics,
        sections=sections,
        groups=groups,
        explanations=ranking.explanations(metrics),
        headline=ranking.headline(metrics),
        key_metrics=ranking.KEY_METRICS,
        finding_columns=["id", "queries", "lower", "upper", "estimate", "error", "covered"],
        failure_field=None,
    )
