"""``analyse`` of the ``audit:`` block: a pure function of the round and final findings.

Headline (issue 7 §4): ``estimate``, ``lower``, ``upper``, ``queries``, ``stopped_by`` of the first
seed. Across seeds: mean queries and errors, and — when the true gap is known (``--reference`` or a
``--scores`` file) — coverage (share of rounds whose interval holds it, with a 95% bootstrap CI) and
the evaluation of App. A.5.1 (:mod:`.evaluate`: queries to ε, error at 250, normalised AUEC).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from fairprobe.methods.audit.block import AuditBlock
from fairprobe.methods.audit.evaluate import Trajectories, summarise
from fairprobe.methods.audit.metrics import METRIC_NAMES
from fairprobe.methods.audit.selection import ORACLE
from fairprobe.report.sections import Analysis, Group, Paragraph, Table
from fairprobe.stats import rate_with_ci


def _r(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


def analyse(block: AuditBlock, findings: list[dict[str, Any]], seed: int) -> Analysis:
    finals = sorted((f for f in findings if f.get("kind") == "final"), key=lambda f: f["seed"])
    rounds = sorted((f for f in findings if f.get("kind") == "round"), key=lambda f: (f["seed"], f["round"]))
    by_seed: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for f in rounds:
        by_seed[f["seed"]].append(f)
    head = finals[0] if finals else (by_seed[min(by_seed)][-1] if by_seed else None)
    metrics: dict[str, Any] = {"metric": block.metric, "strategy": block.strategy, "seeds": len(finals)}
    if head is not None:
        metrics.update(
            estimate=head["estimate"],
            lower=head["lower"],
            upper=head["upper"],
            half_width=(head["upper"] - head["lower"]) / 2,
            queries=head["queries"],
            stopped_by=head.get("stopped_by", "incomplete"),
        )
        if head.get("true_value") is not None:
            metrics["true_value"] = head["true_value"]
            metrics["error"] = head["error"]
    if finals:
        queries = [f["queries"] for f in finals]
        metrics["over_seeds"] = {
            "queries_mean": float(np.mean(queries)),
            "queries_sd": float(np.std(queries)),
            "stopped_by_epsilon": sum(f["stopped_by"] == "epsilon" for f in finals) / len(finals),
        }
        errors = [f["error"] for f in finals if f.get("error") is not None]
        if errors:
            metrics["over_seeds"].update(error_mean=float(np.mean(errors)), error_sd=float(np.std(errors)))
    covered = [bool(f["covered"]) for f in rounds if f.get("covered") is not None]
    if covered:
        value, ci = rate_with_ci(covered, seed=seed)
        metrics["coverage"] = value
        metrics["coverage_ci"] = ci
        curves = {}
        for s, rows in by_seed.items():
            pts = [(r["queries"], r["error"]) for r in rows if r.get("error") is not None]
            if pts:
                arr = np.array(pts, dtype=float)
                curves[str(s)] = (arr[:, 0], arr[:, 1])
        if curves:
            summary = summarise(Trajectories("run", block.strategy, curves))
            metrics["evaluation"] = {k: v for k, v in summary.items() if v is not None}
    sections: list[Any] = [
        Paragraph(
            "What was audited",
            f"{METRIC_NAMES[block.metric]} (group 0 minus group 1) of the black box, estimated with the "
            f"'{block.strategy}' strategy within ε = {block.epsilon} or {block.budget} queries per seed. "
            + (
                "Certified strategies report the C-ERM interval over surrogate models consistent with every "
                "queried score within λ (bafa.txt §3); its midpoint is the estimate. "
                if block.strategy in ("bafa", "bafa-bo", "cerm-only")
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
                ["seed", "queries", "lower", "upper", "estimate", "error", "stopped by"],
                [
                    [
                        f["seed"],
                        f["queries"],
                        _r(f["lower"]),
                        _r(f["upper"]),
                        _r(f["estimate"]),
                        _r(f["error"]),
                        f["stopped_by"],
                    ]
                    for f in finals
                ],
            )
        )
    if by_seed:
        first = min(by_seed)
        sections.append(
            Table(
                f"Trajectory of seed {first}",
                ["round", "queries", "lower", "upper", "estimate", "width", "error", "covered"],
                [
                    [
                        r["round"],
                        r["queries"],
                        _r(r["lower"]),
                        _r(r["upper"]),
                        _r(r["estimate"]),
                        _r(r["width"]),
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
            f"seed {f['seed']}",
            f["queries"],
            ["estimate", "lower", "upper"],
            f"[{f['lower']:+.4f}, {f['upper']:+.4f}] after {f['queries']} queries ({f['stopped_by']})",
        )
        for f in finals
    ]
    return Analysis(
        metrics=metrics,
        sections=sections,
        groups=groups,
        finding_columns=["id", "queries", "lower", "upper", "estimate", "error", "covered"],
        failure_field=None,
    )
