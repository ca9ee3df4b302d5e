"""What matters in an audit: its bounds, in words, for the verdict's reasons and the report's
headline. The gates judge the interval (bafa.txt: non-compliance only when the whole interval lies
beyond a standard); the sentence says where it lies."""

from __future__ import annotations

from typing import Any

from fairprobe.judge.headline import number
from fairprobe.methods.audit.metrics import METRIC_NAMES
from fairprobe.report.sections import Explanation


def _name(metrics: dict[str, Any]) -> str:
    return METRIC_NAMES.get(str(metrics.get("metric")), str(metrics.get("metric")))


def _where(metrics: dict[str, Any]) -> str:
    return (
        f"the audited {_name(metrics)} (group 0 minus group 1) lies between "
        f"{number(metrics.get('lower'))} and {number(metrics.get('upper'))} over "
        f"{metrics.get('n_seeds', 0)} seed(s)"
    )


def _seed(metrics: dict[str, Any], seed: str, entry: dict[str, Any]) -> Explanation:
    """A seed's interval in words, for the evidence its pass needs: where the estimate lies, after
    how many queries and why the seed stopped (a pool queried whole needs a larger pool_size)."""
    why = {
        "budget": f"the budget of {number(entry.get('queries'))} queries was spent",
        "pool": "the whole pool was queried: a larger pool_size is needed for more",
        "epsilon": "its half-width reached epsilon",
    }.get(str(entry.get("stopped_by")), f"stopped: {entry.get('stopped_by')}")
    return Explanation(
        f"seed {seed}'s audited {_name(metrics)} (group 0 minus group 1) is estimated at "
        f"{number(entry.get('estimate'))} after {number(entry.get('queries'))} queries ({why})",
        percent=False,
        label=f"seed {seed}",
    )


def explanations(metrics: dict[str, Any]) -> dict[str, Explanation]:
    out = {
        "lower": Explanation(_where(metrics) + ", so even its lower end", percent=False),
        "upper": Explanation(_where(metrics) + ", so even its upper end", percent=False),
    }
    for seed, entry in (metrics.get("seeds") or {}).items():
        out[f"seeds.{seed}.estimate"] = _seed(metrics, seed, entry)
    return out


def headline(metrics: dict[str, Any]) -> str:
    if metrics.get("estimate") is None:
        return "no seed has an interval yet: nothing was measured"
    return (
        f"{_where(metrics)}; estimate {number(metrics['estimate'])} after {number(metrics.get('queries'))} "
        "queries (the most any seed used)"
    )


KEY_METRICS = [
    ("black-box answers used", "tested"),
    ("answers unusable (INVALID)", "invalid_rate"),
    ("estimated gap", "estimate"),
    ("lower end (smallest over seeds)", "lower"),
    ("upper end (largest over seeds)", "upper"),
    ("queries (most over seeds)", "queries"),
]
