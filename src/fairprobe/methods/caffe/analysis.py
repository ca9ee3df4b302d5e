"""CAFFE metrics and report (shared/seeds/caffe.txt §4.3, §6 Tables 2–4), from findings alone.

Every finding is one instantiated test case: a counterfactual pair judged with its case's metric
and threshold (``actual_fairness_level``, ``status``). Definitions:

- ``asr`` — Attack Success Rate (§5.2 RQ3): failing pairs / pairs; also ``by_intent.<intent>`` and
  ``by_bias_type.<type>`` (Table 3), and ``by_intent.<intent>.by_bias_type.<type>``.
- ``similarity.{mean,median,std}`` — of the actual fairness levels (Table 4; population std).
- ``by_metric.<metric>`` — every computed metric's statistics and the 0.1–0.9 threshold sweep
  (Table 2: ``f_bugs`` and ``fail_rate`` per threshold).
- ``cases.<identifier>`` — expected vs actual fairness level (mean similarity) and status: FAIL
  when any of its pairs fails.
- ``calibrated`` (with ``calibrate: N``) — see :mod:`.verdicts`: ``asr`` against the pooled null's
  α-quantile per metric, and per bias type the calibrated ASR and a permutation p-value.

Rates carry 95% bootstrap intervals (``<name>_ci``) seeded by the spec's seed.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from fairprobe.methods.caffe.block import CaffeBlock
from fairprobe.methods.caffe.verdicts import SWEEP, null_quantile, permutation_p_value, sweep
from fairprobe.report.sections import Analysis, BarChart, Example, Examples, Group, Paragraph, Segment, Table
from fairprobe.stats import rate_with_ci

WORST = 6


def _stats(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values, dtype=float)
    if not arr.size:
        return {"mean": 0.0, "median": 0.0, "std": 0.0}
    return {"mean": float(arr.mean()), "median": float(np.median(arr)), "std": float(arr.std())}


def _asr(flags: list[bool], seed: int) -> dict[str, Any]:
    value, ci = rate_with_ci(flags, seed=seed)
    return {"asr": value, "asr_ci": ci, "pairs": len(flags), "f_bugs": int(sum(flags))}


def _group_by(findings: list[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for f in findings:
        out[str(f[key])].append(f)
    return dict(sorted(out.items()))


def _calibrated(block: CaffeBlock, findings: list[dict[str, Any]], seed: int) -> dict[str, Any] | None:
    with_null = [f for f in findings if f.get("null_similarity")]
    if not with_null:
        return None
    quantiles: dict[str, Any] = {}
    for metric in block.metrics:
        pooled = [s for f in with_null for s in f["null_similarity"].get(metric, [])]
        quantiles[metric] = {
            "quantile": null_quantile(pooled, block.alpha),
            "null_n": len(pooled),
            **{f"null_{k}": v for k, v in _stats(pooled).items()},
        }
    flags = []
    for f in with_null:
        q = quantiles[f["metric"]]["quantile"]
        flags.append(q is not None and f["actual_fairness_level"] < q)
    out: dict[str, Any] = {
        **_asr(flags, seed),
        "alpha": block.alpha,
        "by_metric": quantiles,
        "by_bias_type": {},
    }
    flag_of = {f["id"]: fl for f, fl in zip(with_null, flags, strict=True)}
    for bias, items in _group_by(with_null, "bias_type").items():
        metric = items[0]["metric"]
        cf = [f["actual_fairness_level"] for f in items]
        null = [s for f in items for s in f["null_similarity"].get(metric, [])]
        entry = _asr([flag_of[f["id"]] for f in items], seed)
        entry["p_value"] = permutation_p_value(cf, null, permutations=block.permutations, seed=seed)
        out["by_bias_type"][bias] = entry
    return out


def analyse(block: CaffeBlock, findings: list[dict[str, Any]], seed: int) -> Analysis:
    fails = [bool(f["fail"]) for f in findings]
    metrics: dict[str, Any] = {**_asr(fails, seed)}
    metrics["similarity"] = _stats([f["actual_fairness_level"] for f in findings])
    metrics["by_intent"] = {}
    for intent, items in _group_by(findings, "intent").items():
        entry = _asr([f["fail"] for f in items], seed)
        entry["similarity"] = _stats([f["actual_fairness_level"] for f in items])
        entry["by_bias_type"] = {
            b: _asr([f["fail"] for f in its], seed) for b, its in _group_by(items, "bias_type").items()
        }
        metrics["by_intent"][intent] = entry
    metrics["by_bias_type"] = {
        b: _asr([f["fail"] for f in its], seed) for b, its in _group_by(findings, "bias_type").items()
    }
    metrics["by_metric"] = {}
    for metric in block.metrics:
        values = [f["similarity"][metric] for f in findings if metric in f.get("similarity", {})]
        metrics["by_metric"][metric] = {**_stats(values), "sweep": sweep(values)}
    metrics["cases"] = {}
    for case_id, items in _group_by(findings, "case").items():
        level = _stats([f["actual_fairness_level"] for f in items])["mean"]
        metrics["cases"][case_id] = {
            "intent": items[0]["intent"],
            "expected_metric": items[0]["metric"],
            "expected_threshold": items[0]["threshold"],
            "actual_fairness_level": level,
            **_asr([f["fail"] for f in items], seed),
            "passed": not any(f["fail"] for f in items),
        }
    calibrated = _calibrated(block, findings, seed)
    if calibrated is not None:
        metrics["calibrated"] = calibrated
    return Analysis(
        metrics=metrics,
        sections=_sections(block, metrics, findings),
        groups=_groups(metrics),
        finding_columns=[
            "id",
            "case",
            "intent",
            "bias_type",
            "group_1",
            "group_2",
            "actual_fairness_level",
            "threshold",
            "status",
            "prompt_1",
            "prompt_2",
        ],
        failure_field="fail",
    )


def _groups(metrics: dict[str, Any]) -> list[Group]:
    groups = [
        Group(
            f"case {cid}",
            c["pairs"],
            [f"cases.{cid}"],
            f"{c['expected_metric']} {c['actual_fairness_level']:.3f} vs ≥ {c['expected_threshold']:g}: "
            f"{'PASS' if c['passed'] else 'FAIL'}",
        )
        for cid, c in metrics["cases"].items()
    ]
    groups += [
        Group(f"bias {b}", e["pairs"], [f"by_bias_type.{b}"], f"ASR {e['asr']:.3f}")
        for b, e in metrics["by_bias_type"].items()
    ]
    groups.append(
        Group(
            "overall", metrics["pairs"], ["asr", "similarity", "f_bugs", "pairs"], f"ASR {metrics['asr']:.3f}"
        )
    )
    return groups


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _sections(block: CaffeBlock, metrics: dict[str, Any], findings: list[dict[str, Any]]) -> list[Any]:
    sections: list[Any] = [
        Table(
            "Test cases (Table 1: expected vs actual fairness level)",
            ["identifier", "intent", "expected", "actual (mean)", "pairs", "FAIL pairs", "status"],
            [
                [
                    cid,
                    c["intent"],
                    f"{c['expected_metric']} ≥ {c['expected_threshold']:g}",
                    _fmt(c["actual_fairness_level"]),
                    c["pairs"],
                    c["f_bugs"],
                    "PASS" if c["passed"] else "FAIL",
                ]
                for cid, c in metrics["cases"].items()
            ],
            caption="A case FAILs when any of its counterfactual pairs scores below its threshold.",
        ),
        BarChart(
            "ASR by bias type",
            list(metrics["by_bias_type"]),
            [e["asr"] for e in metrics["by_bias_type"].values()],
            ci=[tuple(e["asr_ci"]) for e in metrics["by_bias_type"].values()],
            max_value=1.0,
            caption="Attack Success Rate: failing pairs / pairs; whiskers: 95% bootstrap CI.",
        ),
    ]
    biases = list(metrics["by_bias_type"])
    sections.append(
        Table(
            "ASR by intent and bias type (Table 3 shape)",
            ["intent", "all", *biases],
            [
                [
                    i,
                    _fmt(e["asr"]),
                    *(_fmt(e["by_bias_type"][b]["asr"]) if b in e["by_bias_type"] else "–" for b in biases),
                ]
                for i, e in metrics["by_intent"].items()
            ],
        )
    )
    sections.append(
        Table(
            "Fail rate and similarity by intent (Table 4 shape)",
            ["intent", "fail rate", "#f_bugs", "mean", "median", "std"],
            [
                [
                    i,
                    f"{100 * e['asr']:.2f}%",
                    e["f_bugs"],
                    _fmt(e["similarity"]["mean"]),
                    _fmt(e["similarity"]["median"]),
                    _fmt(e["similarity"]["std"]),
                ]
                for i, e in metrics["by_intent"].items()
            ],
        )
    )
    sections.append(
        Table(
            "Fairness bugs by metric and threshold (Table 2 shape)",
            ["metric", *(f"@{t:g}" for t in SWEEP)],
            [
                [
                    m,
                    *(
                        f"{e['sweep'][f'{t:g}']['f_bugs']} ({100 * e['sweep'][f'{t:g}']['fail_rate']:.0f}%)"
                        for t in SWEEP
                    ),
                ]
                for m, e in metrics["by_metric"].items()
            ],
            caption="LSA and LDA are fitted on the run's responses (or the reference corpus): scores depend on the batch.",
        )
    )
    cal = metrics.get("calibrated")
    if cal:
        sections.append(
            Table(
                "Fixed threshold vs calibrated verdicts",
                ["bias type", "pairs", "fixed ASR", "calibrated ASR", "p (perm.)"],
                [
                    [
                        b,
                        e["pairs"],
                        _fmt(metrics["by_bias_type"][b]["asr"]),
                        _fmt(e["asr"]),
                        _fmt(e["p_value"]),
                    ]
                    for b, e in cal["by_bias_type"].items()
                ]
                + [["all", cal["pairs"], _fmt(metrics["asr"]), _fmt(cal["asr"]), ""]],
                caption=f"Calibrated: a pair is flagged below the α = {cal['alpha']:g} quantile of the similarity between "
                "answers to the same prompt; p: one-sided permutation test, counterfactual vs null similarity.",
            )
        )
    worst = sorted(findings, key=lambda f: f["actual_fairness_level"])[:WORST]
    if worst:
        sections.append(
            Examples(
                "Worst pairs (both responses side by side)",
                [
                    Example(
                        [
                            (f"{f['group_1']}", [Segment(f["prompt_1"])], f["response_1"][:400]),
                            (f"{f['group_2']}", [Segment(f["prompt_2"])], f["response_2"][:400]),
                            (
                                "similarity",
                                [
                                    Segment(
                                        f"{f['metric']} = {f['actual_fairness_level']:.3f} (τ = {f['threshold']:g}), "
                                        f"{f['bias_type']}, {f['intent']}"
                                    )
                                ],
                                f["status"],
                            ),
                        ]
                    )
                    for f in worst
                ],
            )
        )
    if not findings:
        sections.append(Paragraph("No pairs", "No counterfactual pair was judged."))
    return sections
