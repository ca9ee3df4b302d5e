"""Fail conditions on a run's metrics: :class:`Threshold` and the dotted-path lookups behind it.

A leaf module (it imports only :mod:`fairprobe.errors`), so the verdict, the runner, the report and
the spec can all use it without importing one another. :mod:`fairprobe.technique.spec` re-exports every name.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Any

from fairprobe.errors import SpecError

DEFAULT_MAX_INVALID_RATE = 0.5
"""A run with at least this share of invalid answers is inconclusive (``max_invalid_rate``)."""

_OPS = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}
_PATH = r"[A-Za-z_*][\w.+\-*]*"
_THRESHOLD_RE = re.compile(
    rf"^\s*(?:(lower|upper|lower_adj|upper_adj)\(\s*({_PATH})\s*\)|({_PATH}))\s*(>=|<=|==|!=|>|<)\s*(-?[\d.]+(?:e-?\d+)?)\s*$"
)
SIBLING_SUFFIXES = ("_ci", "_n", "_invalid", "_count", "_most_refused", "_texts", "_fragile")
"""Keys that sit beside a rate (its interval, its denominator, ...): never a metric of their own to
``*`` (see :meth:`Threshold.resolve`)."""
BOUNDS = {"lower": (0, "_ci"), "upper": (1, "_ci"), "lower_adj": (0, "_adj_ci"), "upper_adj": (1, "_adj_ci")}
"""``lower(PATH)`` / ``upper(PATH)``: the end of the metric's 95% interval (``<name>_ci``);
``lower_adj(PATH)`` / ``upper_adj(PATH)``: the end of its interval corrected for the number of slices
tested (``<name>_adj_ci``, :mod:`fairprobe.judge.evidence`)."""


@dataclass(frozen=True)
class Threshold:
    """A fail condition on one metric: the run fails when ``metric OP value`` holds.

    Two extensions serve the default gates (:mod:`fairprobe.judge.gates`):

    - ``*`` in the path stands for any key at that level (``error_rate.by_attribute.*``): the
      condition fails when it holds for any of them, and the worst one is reported;
    - ``lower(PATH)`` / ``upper(PATH)`` judge an end of the metric's 95% interval instead of the
      point value (``lower(error_rate.by_attribute.*) > 0.05``: an attribute whose whole interval
      lies above 5%)."""

    metric: str
    op: str
    value: float
    bound: str = ""
    """``"lower"``, ``"upper"`` or ``""`` (the value itself)."""

    @classmethod
    def parse(cls, text: str) -> Threshold:
        m = _THRESHOLD_RE.match(text)
        if not m:
            raise SpecError(
                f"bad threshold {text!r}: write METRIC OP VALUE, e.g. 'error_rate.atomic>0.1' "
                f"or 'lower(error_rate.by_attribute.*)>0.05' (OP one of {' '.join(_OPS)})"
            )
        bound, inner, plain, op, value = m.groups()
        return cls(inner or plain, op, float(value), bound or "")

    def __str__(self) -> str:
        path = f"{self.bound}({self.metric})" if self.bound else self.metric
        return f"{path}{self.op}{self.value:g}"

    def fails(self, actual: float) -> bool:
        return bool(_OPS[self.op](actual, self.value))

    @property
    def wildcard(self) -> bool:
        return "*" in self.metric.split(".")

    def resolve(self, metrics: dict[str, Any]) -> list[tuple[str, float | None]]:
        """``(concrete path, value)`` of every metric the condition names, the bound applied
        (``None``: no data). A path without ``*`` names one metric and raises
        :class:`~fairprobe.errors.SpecError` when it is not there; one with ``*`` names whatever
        matches (possibly nothing)."""
        paths = expand_metric_path(metrics, self.metric) if self.wildcard else [self.metric]
        out: list[tuple[str, float | None]] = []
        for path in paths:
            if not self.bound:
                out.append((path, lookup_metric(metrics, path)))
                continue
            lookup_metric(metrics, path)  # the metric itself must exist
            end, suffix = BOUNDS[self.bound]
            ci = interval_of(metrics, path, suffix)
            out.append((path, None if ci is None else float(ci[end])))
        return out

    def worst(self, values: list[tuple[str, float]]) -> tuple[str, float]:
        """The value that breaks the condition most: the largest for ``>``/``>=``, else the least."""
        pick = max if self.op in (">", ">=") else min
        return pick(values, key=lambda pv: pv[1])


def interval_of(metrics: dict[str, Any], path: str, suffix: str = "_ci") -> list[float] | None:
    """The 95% interval ``<name>_ci`` (or the one named by ``suffix``) beside the metric at ``path``,
    or ``None``."""
    parent, _, leaf = path.rpartition(".")
    node, rest = walk_metric(metrics, parent) if parent else (metrics, "")
    ci = node.get(f"{leaf}{suffix}") if isinstance(node, dict) and not rest else None
    return ci if isinstance(ci, list | tuple) and len(ci) == 2 and None not in ci else None


def expand_metric_path(metrics: dict[str, Any], pattern: str) -> list[str]:
    """Concrete dotted paths that ``pattern`` (``*`` = any key at that level) names in ``metrics``.

    At a ``*`` that ends the pattern only numbers and ``None`` (no data) count, never an interval,
    denominator or count beside a rate (:data:`SIBLING_SUFFIXES`); a ``*`` inside the pattern
    follows every dict below it."""
    if "*" not in pattern:
        node, rest = walk_metric(metrics, pattern)
        return [pattern] if not rest and not isinstance(node, dict | list) else []
    head, _, tail = pattern.partition("*")
    prefix = head.rstrip(".")
    node, rest = walk_metric(metrics, prefix) if prefix else (metrics, "")
    if rest or not isinstance(node, dict):
        return []
    base = f"{prefix}." if prefix else ""
    tail = tail.lstrip(".")
    out: list[str] = []
    for key, value in node.items():
        if not tail:
            is_metric = value is None or (isinstance(value, int | float) and not isinstance(value, bool))
            if is_metric and not str(key).endswith(SIBLING_SUFFIXES):
                out.append(f"{base}{key}")
        elif isinstance(value, dict):
            out.extend(expand_metric_path(metrics, f"{base}{key}.{tail}"))
    return out


def walk_metric(metrics: dict[str, Any], path: str) -> tuple[Any, str]:
    """Follow a dotted ``path`` into nested ``metrics`` as far as it goes: ``(node, rest)``, with
    ``rest == ""`` when the whole path was found. At each level the longest key that prefixes the
    remaining path wins, so keys may themselves contain dots or '+' ("race+gender")."""
    node: Any = metrics
    rest = path
    while rest and isinstance(node, dict):
        match = max((k for k in node if rest == k or rest.startswith(k + ".")), key=len, default=None)
        if match is None:
            break
        node = node[match]
        rest = rest[len(match) + 1 :]
    return node, rest


def lookup_metric(metrics: dict[str, Any], path: str) -> float | None:
    """Value of a dotted ``path`` in nested ``metrics`` (see :func:`walk_metric`).

    ``None`` means the metric exists but has no data (a rate over zero cases)."""
    node, rest = walk_metric(metrics, path)
    if rest:
        raise SpecError(
            f"threshold metric {path!r} not found; available: {', '.join(flatten_metric_paths(metrics))}"
        )
    if node is None:
        return None
    if isinstance(node, bool) or not isinstance(node, int | float):
        raise SpecError(f"threshold metric {path!r} is not a number in this technique's metrics")
    return float(node)


def flatten_metric_paths(metrics: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted paths of every number in ``metrics``, and of every ``None`` (no data) that is not an
    interval (``*_ci``)."""
    paths: list[str] = []
    for key, value in metrics.items():
        full = f"{prefix}{key}"
        if isinstance(value, dict):
            paths.extend(flatten_metric_paths(value, full + "."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            paths.append(full)
        elif value is None and not str(key).endswith("_ci"):
            paths.append(full)
    return paths


def parse_thresholds(values: list[Any] | str | None, option: str) -> list[Threshold]:
    """Fail conditions given as text (one, or a list; a :class:`Threshold` is kept) as thresholds;
    a bad one is a :class:`~fairprobe.errors.UsageError` naming ``option`` (``--fail-on`` on the
    command line, ``fail_on`` from Python)."""
    from fairprobe.errors import FairprobeError, UsageError

    items = [values] if isinstance(values, str) else list(values or [])
    try:
        return [t if isinstance(t, Threshold) else Threshold.parse(t) for t in items]
    except FairprobeError as exc:
        raise UsageError(f"{option}: {exc}") from None
