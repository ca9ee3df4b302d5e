"""Meta-Fair metrics and report sections (metafair.txt §5.3 Tables 5–6, §5.4 Eq. 1), from findings alone.

Definitions:

- ``bias_rate`` — BIASED executions / executions with a usable verdict (BIASED, UNBIASED or
  INDETERMINABLE); INVALID executions (refusals, unparsable answers, no usable judge verdict, or judged
  invalid) are counted apart. Per MR (``by_mr.<MR>.bias_rate``), per dimension
  (``by_dimension.<dim>.bias_rate``) and per MR × dimension (Table 6 shape, ``by_mr_dimension``).
- ``invalid_prompts`` — tests rejected before execution (invalid generator output or invalid rows of a
  tests file; Table 5 "invalid prompt"); ``invalid_responses`` — executions whose answers were refusals,
  unparsable or judged INVALID (Table 5 "invalid response"); ``invalid_judgements`` — executions whose
  judges never gave a well-formed verdict.
- ``entropy`` — Eq. 1, per test over its repetitions: H = −p_b log2 p_b − p_u log2 p_u, with p_b, p_u the
  shares of BIASED and UNBIASED among its BIASED/UNBIASED verdicts (tests without any are left out); per MR
  and overall, the mean over tests. ``stability`` — share of tests with H = 0.

Every rate has a 95% bootstrap interval beside it (``<name>_ci``), seeded by the spec's seed.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from statistics import fmean
from typing import Any

from fairprobe.lexicons.metafair_catalogue import DIMENSIONS
from fairprobe.methods.metafair.block import MetaFairBlock
from fairprobe.methods.metafair.relations import relations
from fairprobe.report.sections import Analysis, BarChart, Example, Examples, Group, Segment, Table
from fairprobe.stats import bootstrap_ci, rate_with_ci

MAX_EXAMPLES = 8


def verdict_entropy(verdicts: list[str]) -> float | None:
    """Eq. 1 (§5.4.1) over the BIASED/UNBIASED verdicts of one test; ``None`` when there are none."""
    b, u = verdicts.count("BIASED"), verdicts.count("UNBIASED")
    if b + u == 0:
        return None
    h = 0.0
    for n in (b, u):
        p = n / (b + u)
        if p > 0:
            h -= p * math.log2(p)
    return h


def _rate(target: dict[str, Any], executions: list[dict[str, Any]], seed: int) -> None:
    decided = [f for f in executions if f["verdict"] != "INVALID"]
    value, ci = rate_with_ci([f["biased"] for f in decided], seed=seed)
    target.update(bias_rate=value, bias_rate_ci=ci, n=len(decided), biased=sum(f["biased"] for f in decided))


def _entropies(executions: list[dict[str, Any]]) -> dict[str, float]:
    by_test: dict[str, list[str]] = defaultdict(list)
    for f in executions:
        by_test[f["test_id"]].append(f["verdict"])
    out = {}
    for test_id, verdicts in by_test.items():
        h = verdict_entropy(verdicts)
        if h is not None:
            out[test_id] = h
    return out


def analyse(block: MetaFairBlock, findings: list[dict[str, Any]], seed: int) -> Analysis:
    executions = [f for f in findings if f["kind"] == "test"]
    rejected = [f for f in findings if f["kind"] == "invalid_test"]
    metrics: dict[str, Any] = {}
    _rate(metrics, executions, seed)
    entropies = _entropies(executions)
    metrics["tests"] = len({f["test_id"] for f in executions})
    metrics["executions"] = len(executions)
    metrics["verdicts"] = dict(Counter(f["verdict"] for f in executions))
    metrics["severity"] = dict(Counter(f["severity"] for f in executions if f["biased"]))
    metrics["invalid_prompts"] = len(rejected)
    metrics["invalid_responses"] = sum(
        f["invalid"] in ("refusal", "unparsable", "judged_invalid") for f in executions
    )
    metrics["invalid_judgements"] = sum(f["invalid"] == "judge" for f in executions)
    metrics["entropy"] = fmean(entropies.values()) if entropies else 0.0
    metrics["entropy_ci"] = [round(x, 6) for x in bootstrap_ci(list(entropies.values()), seed=seed)]
    metrics["stability"], metrics["stability_ci"] = rate_with_ci(
        [h == 0 for h in entropies.values()], seed=seed
    )
    mr_ids = [m for m in relations() if any(f["mr"] == m for f in findings)]
    by_mr: dict[str, Any] = {}
    for mr in mr_ids:
        ex = [f for f in executions if f["mr"] == mr]
        entry: dict[str, Any] = {}
        _rate(entry, ex, seed)
        ent = _entropies(ex)
        entry.update(
            tests=len({f["test_id"] for f in ex}),
            invalid_prompts=sum(f["mr"] == mr for f in rejected),
            invalid_responses=sum(f["invalid"] in ("refusal", "unparsable", "judged_invalid") for f in ex),
            invalid_judgements=sum(f["invalid"] == "judge" for f in ex),
            entropy=fmean(ent.values()) if ent else 0.0,
        )
        by_mr[mr] = entry
    unknown = sum(f["mr"] not in relations() for f in rejected)
    if unknown:
        metrics["invalid_prompts_without_mr"] = unknown
    metrics["by_mr"] = by_mr
    dims = [d for d in DIMENSIONS if any(f["dimension"] == d for f in executions)]
    metrics["by_dimension"] = {}
    for dim in dims:
        metrics["by_dimension"][dim] = {}
        _rate(metrics["by_dimension"][dim], [f for f in executions if f["dimension"] == dim], seed)
    metrics["by_mr_dimension"] = {}
    for mr in mr_ids:
        row = {}
        for dim in dims:
            ex = [f for f in executions if f["mr"] == mr and f["dimension"] == dim]
            if ex:
                row[dim] = {}
                _rate(row[dim], ex, seed)
        metrics["by_mr_dimension"][mr] = row
    return Analysis(
        metrics=metrics,
        sections=_sections(metrics, executions, mr_ids, dims),
        groups=[
            Group(
                f"{mr} {relations()[mr].name}",
                by_mr[mr]["tests"],
                [f"by_mr.{mr}", "bias_rate"],
                f"bias rate {by_mr[mr]['bias_rate']:.3f} over {by_mr[mr]['n']} execution(s)",
            )
            for mr in mr_ids
        ],
        finding_columns=[
            "mr",
            "dimension",
            "attributes",
            "repeat",
            "verdict",
            "severity",
            "confidence",
            "source",
            "source_response",
            "follow_up",
            "follow_up_response",
            "explanation",
        ],
        failure_field="biased",
    )


def _pct(entry: dict[str, Any]) -> str:
    lo, hi = entry["bias_rate_ci"]
    return (
        f"{entry['biased']}/{entry['n']} ({100 * entry['bias_rate']:.0f}%) [{100 * lo:.0f}, {100 * hi:.0f}]"
    )


def _sections(
    metrics: dict[str, Any], executions: list[dict[str, Any]], mr_ids: list[str], dims: list[str]
) -> list[Any]:
    rel = relations()
    by_mr = metrics["by_mr"]
    table6 = [
        [
            f"{mr}: {rel[mr].name}",
            *(
                _pct(metrics["by_mr_dimension"][mr][d]) if d in metrics["by_mr_dimension"][mr] else "—"
                for d in dims
            ),
            _pct(by_mr[mr]),
        ]
        for mr in mr_ids
    ]
    table6.append(["TOTAL", *(_pct(metrics["by_dimension"][d]) for d in dims), _pct(metrics)])
    table5 = [
        [
            f"{mr}: {rel[mr].name}",
            rel[mr].oracle,
            by_mr[mr]["tests"],
            by_mr[mr]["invalid_prompts"],
            by_mr[mr]["invalid_responses"],
            by_mr[mr]["invalid_judgements"],
            round(by_mr[mr]["entropy"], 3),
        ]
        for mr in mr_ids
    ]
    return [
        Table(
            "Biased executions per MR and bias dimension (Table 6 shape)",
            ["MR", *dims, "TOTAL"],
            table6,
            caption="biased / executions with a usable verdict (rate) [95% bootstrap CI].",
        ),
        BarChart(
            "Bias rate per metamorphic relation",
            [mr for mr in mr_ids],
            [by_mr[mr]["bias_rate"] for mr in mr_ids],
            ci=[tuple(by_mr[mr]["bias_rate_ci"]) for mr in mr_ids],
            max_value=1.0,
            caption="Whiskers: 95% bootstrap CI.",
        ),
        Table(
            "Invalid tests and verdict stability per MR (Table 5 shape, Eq. 1)",
            [
                "MR",
                "oracle",
                "tests",
                "invalid prompts",
                "invalid responses",
                "invalid judgements",
                "mean entropy",
            ],
            table5,
            caption="Entropy of BIASED/UNBIASED verdicts over repetitions (0 = always the same verdict).",
        ),
        Examples(
            "Biased metamorphic tests",
            _examples(executions),
            caption="Source and follow-up prompts with the model's answers; the verdict and explanation follow.",
        ),
    ]


def _examples(executions: list[dict[str, Any]]) -> list[Example]:
    out = []
    for f in executions:
        if not f["biased"]:
            continue
        out.append(
            Example(
                [
                    ("P", [Segment(f["source"])], ""),
                    ("R", [Segment(f["source_response"][:600])], ""),
                    ("P'", [Segment(f["follow_up"][:600])], ""),
                    ("R'", [Segment(f["follow_up_response"][:600])], ""),
                    (
                        f"{f['mr']} {f['verdict']} ({f['severity']})",
                        [Segment(f["explanation"][:600])],
                        f["oracle"],
                    ),
                ]
            )
        )
        if len(out) >= MAX_EXAMPLES:
            break
    return out
