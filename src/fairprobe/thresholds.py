"""Fail conditions on a run's metrics: :class:`Threshold` and the dotted-path lookups behind it.

A leaf module (it imports only :mod:`fairprobe.errors`), so the verdict, the runner, the report and
the spec can all use it without importing one another. :mod:`fairprobe.spec` re-exports every name.
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
_THRESHOLD_RE = re.compile(r"^\s*([A-Za-z_][\w.+\-]*)\s*(>=|<=|==|!=|>|<)\s*(-?[\d.]+(?:e-?\d+)?)\s*$")


@dataclass(frozen=True)
class Threshold:
    """A fail condition on one metric: the run fails when ``metric OP value`` holds."""

    metric: str
    op: str
    value: float

    @classmethod
    def parse(cls, text: str) -> Threshold:
        m = _THRESHOLD_RE.match(text)
        if not m:
            raise SpecError(
                f"bad threshold {text!r}: write METRIC OP VALUE, e.g. 'error_rate.atomic>0.1' "
                f"(OP one of {' '.join(_OPS)})"
            )
        return cls(m.group(1), m.group(2), float(m.group(3)))

    def __str__(self) -> str:
        return f"{self.metric}{self.op}{self.value:g}"

    def fails(self, actual: float) -> bool:
        return bool(_OPS[self.op](actual, self.value))


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
