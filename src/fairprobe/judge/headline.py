"""Numbers as people read them, and the report's headline rows.

The full metric tree stays in summary.json and in a collapsed section of report.html; what a reader
sees first is a sentence written from the metrics (:attr:`~fairprobe.report.sections.Analysis.headline`)
and the few metrics a technique marks as mattering most
(:attr:`~fairprobe.report.sections.Analysis.key_metrics`), formatted here: no scientific notation,
thousands separators, shares as percentages, intervals as ``lo–hi``.
"""

from __future__ import annotations

from typing import Any

from fairprobe.judge.thresholds import SIBLING_SUFFIXES, interval_of, walk_metric
from fairprobe.report.sections import NO_DATA


def number(value: Any) -> str:
    """``5225`` -> ``5,225``; ``0.038238`` -> ``0.0382``; ``12.345`` -> ``12.35``; ``None`` -> "no data".
    Never scientific notation."""
    if value is None:
        return NO_DATA
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    size = abs(value)
    if size >= 100:
        return f"{value:,.0f}"
    if size >= 1:
        return f"{value:.2f}".rstrip("0").rstrip(".")
    if size == 0:
        return "0"
    digits = 3
    while size < 10 ** -(digits - 2) and digits < 12:  # three significant digits below 1
        digits += 1
    return f"{value:.{digits}f}".rstrip("0").rstrip(".")


def percent(value: float | None) -> str:
    """A share as a percentage: ``0.0382`` -> ``3.8%``, ``0`` -> ``0%``, ``0.000412`` -> ``0.041%``."""
    if value is None:
        return NO_DATA
    pct = 100 * value
    if pct == 0 or pct == 100:
        return f"{pct:.0f}%"
    if abs(pct) < 0.1:
        return f"{pct:.2g}%"
    return f"{pct:.1f}".rstrip("0").rstrip(".") + "%"


def interval(ci: list[float] | tuple[float, float] | None, share: bool = True) -> str:
    """``[0.016, 0.086]`` -> ``1.6–8.6%`` (a share) or ``0.016–0.086``; "" for none."""
    if ci is None:
        return ""
    if share:
        return f"{percent(ci[0])[:-1] if ci[0] != 0 else '0'}–{percent(ci[1])}"
    return f"{number(ci[0])}–{number(ci[1])}"


def sibling(metrics: dict[str, Any], path: str, suffix: str) -> Any:
    """The ``<name><suffix>`` sibling of the metric at ``path`` (``_n``, ``_ci``, ...), or ``None``."""
    parent, _, leaf = path.rpartition(".")
    node, rest = walk_metric(metrics, parent) if parent else (metrics, "")
    return node.get(f"{leaf}{suffix}") if isinstance(node, dict) and not rest else None


def count_of(metrics: dict[str, Any], path: str) -> tuple[int, int] | None:
    """``(count, n)`` behind the rate at ``path`` (``round(rate * n)``), when it has an ``_n``."""
    node, rest = walk_metric(metrics, path)
    n = sibling(metrics, path, "_n")
    if n is None:  # a dict holding one rate keeps its denominator as ``n`` (Meta-Fair's entries)
        parent = path.rpartition(".")[0]
        holder, left = walk_metric(metrics, parent) if parent else (metrics, "")
        n = holder.get("n") if isinstance(holder, dict) and not left else None
    if rest or not isinstance(node, int | float) or not isinstance(n, int) or isinstance(n, bool):
        return None
    return round(node * n), n


def is_share(path: str, value: Any) -> bool:
    """Whether the metric at ``path`` reads as a percentage: a number in [0, 1] whose name says rate,
    share or score."""
    leaf = path.rpartition(".")[2]
    words = ("rate", "share", "score", "stability", "coverage", "accuracy", "originals_with_bias")
    return (
        isinstance(value, float)
        and 0 <= value <= 1
        and (any(w in path for w in words) or path.startswith(("error_rate.", "hidden_share")))
        and not leaf.endswith(SIBLING_SUFFIXES)
    )


def key_rows(metrics: dict[str, Any], key_metrics: list[tuple[str, ...]]) -> list[tuple[str, str, str, str]]:
    """(label, value, 95% interval, n) of the metrics that matter, formatted; missing ones left out."""
    rows = []
    for label, path, *how in key_metrics:  # a third item "share" says it reads as a percentage
        node, rest = walk_metric(metrics, path)
        if rest or isinstance(node, dict | list | str | bool):
            continue
        share = (how[0] == "share" and isinstance(node, int | float)) if how else is_share(path, node)
        value = percent(node) if share else number(node)
        counted = count_of(metrics, path)
        n = f"{counted[0]:,} of {counted[1]:,}" if counted and share else ""
        rows.append((label, value, interval(interval_of(metrics, path), share), n))
    return rows
