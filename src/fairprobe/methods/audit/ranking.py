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


def explanations(metrics: dict[str, Any]) -> dict[str, Explanation]:
    return {
        "lower": Explanation(_where(metrics) + ", so even its lower end", percent=False),
        "upper": Explanation(_where(metrics) + ", so even its upper end", percent=False),
    }


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
