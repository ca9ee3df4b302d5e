"""What matters most in a Meta-Fair run: bias by metamorphic relation and by sensitive dimension,
worst first (metafair.txt §5, Table 6 counts the same cells), for the verdict's reasons in words,
the report's headline and the command line's worst findings."""

from __future__ import annotations

from typing import Any

from fairprobe.judge.evidence import ADJUSTMENT
from fairprobe.judge.headline import number, percent
from fairprobe.methods.metafair.relations import relations
from fairprobe.report.sections import Explanation, Table

CELLS = "rank-relations"


def cells(metrics: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(MR, dimension, entry) of every MR × dimension cell with a usable verdict, worst first: most
    biased executions, then the highest rate."""
    out = [
        (mr, dim, entry)
        for mr, row in metrics.get("by_mr_dimension", {}).items()
        for dim, entry in row.items()
        if entry.get("bias_rate") is not None
    ]
    out.sort(key=lambda c: (-c[2]["biased"], -c[2]["bias_rate"], c[0], c[1]))
    return out


def _name(mr: str) -> str:
    """``MR1 “Single Attribute”``: quoted, not bracketed, since a count or a rate in brackets often
    follows it in a sentence."""
    relation = relations().get(mr)
    return f"{mr} “{relation.name}”" if relation is not None else mr


def _worst(
    ranked: list[tuple[str, str, dict[str, Any]]], mr: str | None = None, dim: str | None = None
) -> str:
    for m, d, e in ranked:
        if (mr is None or m == mr) and (dim is None or d == dim) and e["biased"]:
            where = d if mr is not None else _name(m)
            return f"most often {where} ({e['biased']} of {e['n']})"
    return ""


def explanations(metrics: dict[str, Any]) -> dict[str, Explanation]:
    ranked = cells(metrics)
    out = {
        "bias_rate": Explanation("the judge found bias in {count} of {n} executions", _worst(ranked), CELLS)
    }
    for mr in metrics.get("by_mr", {}):
        out[f"by_mr.{mr}.bias_rate"] = Explanation(
            f"the judge found bias in {{count}} of {{n}} executions of {_name(mr)}",
            _worst(ranked, mr=mr),
            CELLS,
        )
    for dim in metrics.get("by_dimension", {}):
        out[f"by_dimension.{dim}.bias_rate"] = Explanation(
            f"the judge found bias in {{count}} of {{n}} executions on {dim}", _worst(ranked, dim=dim), CELLS
        )
    for mr, row in metrics.get("by_mr_dimension", {}).items():  # the slices (issue 39)
        for dim in row:
            out[f"by_mr_dimension.{mr}.{dim}.bias_rate"] = Explanation(
                f"the judge found bias in {{count}} of {{n}} executions of {_name(mr)} on {dim}",
                f"corrected ({ADJUSTMENT}) for the {_cells_tested(metrics)} relation × dimension cells tested",
                CELLS,
            )
    return out


def _cells_tested(metrics: dict[str, Any]) -> int:
    return sum(
        e.get("bias_rate") is not None
        for row in metrics.get("by_mr_dimension", {}).values()
        for e in row.values()
    )


def headline(metrics: dict[str, Any]) -> str:
    n, biased = metrics.get("n") or 0, metrics.get("biased") or 0
    if not n:
        return "no execution got a usable verdict: nothing was measured"
    text = f"the judge found bias in {number(biased)} of {number(n)} executions ({percent(biased / n)})"
    worst = cells(metrics)
    if worst and worst[0][2]["biased"]:
        mr, dim, e = worst[0]
        return text + f"; most often {_name(mr)} on {dim} ({e['biased']} of {e['n']})"
    return text


def table(metrics: dict[str, Any]) -> Table:
    rows = [
        [_name(mr), dim, e["n"], e["biased"], percent(e["bias_rate"]), _ci(e.get("bias_rate_ci"))]
        for mr, dim, e in cells(metrics)
    ]
    return Table(
        "Where bias showed most: relation × dimension, worst first",
        ["metamorphic relation", "dimension", "executions", "biased", "bias rate", "95% CI"],
        rows,
        caption="Executions with a usable verdict per relation and sensitive dimension, ranked by biased "
        "executions, then rate; intervals by test.",
        anchor=CELLS,
    )


def top_findings(metrics: dict[str, Any], limit: int = 3) -> list[str]:
    return [
        f"{_name(mr)} on {dim}: {e['biased']} of {e['n']} executions biased ({percent(e['bias_rate'])})"
        for mr, dim, e in cells(metrics)[:limit]
        if e["biased"]
    ]


def key_metrics(metrics: dict[str, Any]) -> list[tuple[str, str]]:
    out = [
        ("executions", "tested"),
        ("answers unusable (INVALID)", "invalid_rate"),
        ("bias rate", "bias_rate"),
    ]
    for label, node, fmt in (
        ("worst relation", metrics.get("by_mr", {}), "by_mr.{}.bias_rate"),
        ("worst dimension", metrics.get("by_dimension", {}), "by_dimension.{}.bias_rate"),
    ):
        rated = {k: v["bias_rate"] for k, v in node.items() if v.get("bias_rate") is not None}
        if rated:
            worst = max(rated, key=lambda k: rated[k])
            out.append((f"{label}: {worst}", fmt.format(worst)))
    out.append(("stable verdicts across repeats", "stability"))
    return out


def _ci(ci: Any) -> str:
    return f"{percent(ci[0])}–{percent(ci[1])}" if ci else ""
