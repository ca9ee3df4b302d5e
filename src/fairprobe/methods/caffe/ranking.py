"""What matters most in a CAFFE run: the bias types and group pairs whose answers differed most,
worst first, and each case's failure in words ("3 of 12 pairs (gay men vs straight men) got
dissimilar answers"), for the report's headline, the command line's worst findings and a user's
``--fail-on`` on a case (the gated group pairs and their table are in :mod:`.slices`). A pair "fails" when its answers' similarity is below the case's expected fairness
level (caffe.txt §4)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from fairprobe.judge.headline import number, percent
from fairprobe.report.sections import Explanation
from fairprobe.stats import wilson_interval

GROUPS = "rank-groups"


def ranked(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (bias type, group pair) over the usable pairs, worst first: most failing pairs,
    then the highest rate, then the lowest similarity."""
    cells: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for f in findings:
        if not f.get("invalid"):
            cells[(str(f.get("bias_type", "")), _groups(f))].append(f)
    rows = []
    for (bias, groups), items in cells.items():
        failing = sum(bool(f["fail"]) for f in items)
        levels = [f["actual_fairness_level"] for f in items if f.get("actual_fairness_level") is not None]
        rows.append(
            {
                "bias_type": bias,
                "groups": groups,
                "pairs": len(items),
                "failing": failing,
                "rate": failing / len(items),
                "ci": wilson_interval(failing, len(items)),
                "lowest": min(levels) if levels else None,
            }
        )
    rows.sort(key=lambda r: (-r["failing"], -r["rate"], r["lowest"] if r["lowest"] is not None else 9))
    return rows


def _groups(f: dict[str, Any]) -> str:
    return f"{f.get('group_1', '?')} vs {f.get('group_2', '?')}"


def explanations(metrics: dict[str, Any], findings: list[dict[str, Any]]) -> dict[str, Explanation]:
    """Each case's expected-level condition in words, naming its least similar group pair."""
    by_case: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for f in findings:
        if not f.get("invalid"):
            by_case[str(f.get("case"))].append(f)
    out = {}
    for key, case in metrics.get("cases", {}).items():
        items = by_case.get(str(case.get("identifier")), [])
        failing = sum(bool(f["fail"]) for f in items)
        worst = min(items, key=lambda f: f["actual_fairness_level"], default=None)
        where = f" ({_groups(worst)})" if worst is not None else ""
        out[f"cases.{key}.fairness_level"] = Explanation(
            f"in case {case.get('identifier')}, {failing} of {len(items)} pairs{where} got answers less "
            f"similar than expected; the least similar scored {case.get('expected_metric')}",
            anchor=GROUPS,
            percent=False,
        )
    return out


def headline(metrics: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    pairs, bugs = metrics.get("pairs") or 0, metrics.get("f_bugs") or 0
    if not pairs:
        return "no pair of answers was usable: nothing was measured"
    text = f"{number(bugs)} of {number(pairs)} pairs of answers were less similar than their case expects ({percent(bugs / pairs)})"
    if rows and rows[0]["failing"]:
        r = rows[0]
        text += f"; most often {r['groups']} ({r['bias_type']}, {r['failing']} of {r['pairs']})"
    return text


def top_findings(rows: list[dict[str, Any]], limit: int = 3) -> list[str]:
    return [
        f"{r['groups']} ({r['bias_type']}): {r['failing']} of {r['pairs']} pairs below the expected level"
        for r in rows[:limit]
        if r["failing"]
    ]


KEY_METRICS = [
    ("pairs of answers", "tested"),
    ("answers unusable (INVALID)", "invalid_rate"),
    ("pairs below the expected level (attack success rate)", "asr"),
    ("mean similarity", "similarity.mean"),
]
