"""A comparison's fail conditions in words: what each figure of ``summary.json`` is, how its value
reads, and what a condition on it says, for report.html's condition table and the verdict's reasons.

The conditions themselves stay metric paths (``regressed > 0``, ``--fail-on 'delta.error_rate.gender >
0.01'``): they are what a user writes and what ``summary.json`` keys its ``thresholds`` by. Everything
a person reads says the same in words: "a slice got worse beyond chance (adjusted p < 0.05)", "the
error rate on gender rose by more than 1 point", "1 slice", "+72.7 points on gender".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fairprobe.compare.paired import ALPHA, DEFAULT_GATE
from fairprobe.compare.words import _outcomes, label, p_value, points, value_change, worse_slices
from fairprobe.judge.headline import number, percent

if TYPE_CHECKING:
    from fairprobe.compare.pairing import Pairing

_OPS = {
    ">": "above",
    ">=": "at least",
    "<": "below",
    "<=": "at most",
    "==": "exactly",
    "!=": "other than",
}

_COUNTS = {
    "regressed": ("slices that got worse beyond chance", "slice"),
    "improved": ("slices that got better beyond chance", "slice"),
    "paired": ("paired test cases", "case"),
    "tested": ("paired test cases", "case"),
    "judged": ("paired test cases judged", "case"),
    "cases": ("test cases in the larger run", "case"),
    "base_only": ("test cases in the base run only", "case"),
    "new_only": ("test cases in the new run only", "case"),
    "invalid": ("paired cases with an INVALID answer from either model", "case"),
    "intervals.worse": ("cases whose certified interval lies wholly above the base model's", "case"),
    "intervals.better": ("cases whose certified interval lies wholly below the base model's", "case"),
    "intervals.overlap": ("cases whose certified intervals overlap", "case"),
}
_SHARES = {
    "paired_share": "the share of test cases found in both runs",
    "invalid_rate": "the share of paired cases with an INVALID answer from either model",
    "alpha": "the significance level",
}
_FIELDS = {
    "base": "the base model's {what} on {where}",
    "new": "the new model's {what} on {where}",
    "delta": "the change of the {what} on {where}",
    "p": "the p-value of the change of the {what} on {where}",
    "p_adjusted": "the adjusted p-value of the change of the {what} on {where}",
    "n": "the judged cases on {where}",
    "worse": "the cases whose {what} got worse on {where}",
    "better": "the cases whose {what} got better on {where}",
}


@dataclass
class Figure:
    """One figure of a comparison's metrics in words: ``name`` ("the change of the error rate on
    gender") and how a value of it reads (``show``: a count, a percentage, percentage points, ...)."""

    name: str
    unit: str  # "count:<noun>", "share", "points", "p", "number"

    @property
    def subject(self) -> str:
        """The figure as the subject of a sentence: "the number of slices that got worse ..."."""
        return f"the number of {self.name}" if self.unit.startswith("count:") else self.name

    def show(self, value: float | None) -> str:
        if value is None:
            return "no data"
        if self.unit.startswith("count:"):
            noun = self.unit.split(":", 1)[1]
            n = int(value) if float(value).is_integer() else value
            return f"{number(n)} {noun}{'' if n == 1 else 's'}"
        if self.unit == "share":
            return percent(value)
        if self.unit == "points":
            return points(value)
        if self.unit == "p":
            return p_value(value)
        return number(value)


def _kinds(pairing: Pairing | None) -> dict[str, str]:
    return {o.name: o.kind for o in pairing.outcomes} if pairing is not None else {}


def _slice(name: str) -> str:
    return "any slice" if name == "*" else ("all cases" if name == "all" else name)


def figure(path: str, pairing: Pairing | None, outcomes: list[str] | None = None) -> Figure:
    """What the figure at ``path`` is, in words (``*`` reads "any slice" / "any outcome")."""
    if path in _COUNTS:
        what, noun = _COUNTS[path]
        return Figure(what, f"count:{noun}")
    if path in _SHARES:
        return Figure(_SHARES[path], "share")
    kinds = _kinds(pairing)
    head, _, rest = path.partition(".")
    known = list(outcomes or []) + [k for k in kinds if k not in (outcomes or [])]
    outcome = next((o for o in sorted(known, key=len, reverse=True) if rest.startswith(f"{o}.")), None)
    if outcome is None and rest.startswith("*."):
        outcome = "*"
    if head in ("delta", "slices") and outcome is not None:
        what = "outcome" if outcome == "*" else label(outcome)
        binary = kinds.get(outcome, "binary") == "binary"
        tail = rest[len(outcome) + 1 :]
        if head == "delta":
            return Figure(f"the change of the {what} on {_slice(tail)}", "points" if binary else "number")
        where, _, field = tail.rpartition(".")
        if field in _FIELDS and where:
            text = _FIELDS[field].format(what=what, where=_slice(where))
            if field in ("p", "p_adjusted"):
                return Figure(text, "p")
            if field in ("n", "worse", "better"):
                return Figure(text, "count:case")
            if field == "delta":
                return Figure(text, "points" if binary else "number")
            return Figure(text, "share" if binary else "number")
    return Figure(path.replace("_", " ").replace(".", " · "), "number")


def condition(threshold: Any, pairing: Pairing | None, outcomes: list[str] | None = None) -> str:
    """A fail condition in words: ``regressed > 0`` -> "a slice got worse beyond chance (adjusted p <
    0.05)"; ``delta.error_rate.gender > 0.01`` -> "the change of the error rate on gender is above
    +1.0 points"."""
    path, op, value = threshold.metric, threshold.op, threshold.value
    if path == "regressed" and op == ">" and value == 0 and not threshold.bound:
        return f"a slice got worse beyond chance (adjusted p < {ALPHA:g})"
    if path == "invalid_rate" and op == ">=":
        return (
            f"inconclusive when {percent(value)} or more of the paired cases have an INVALID answer "
            "from either model"
        )
    f = figure(path, pairing, outcomes)
    bound = {
        "lower": "the lower end of the 95% interval of ",
        "upper": "the upper end of the 95% interval of ",
    }
    name = bound.get(threshold.bound.removesuffix("_adj"), "") + f.subject
    shown = f.show(value)
    if f.unit.startswith("count:"):
        shown = number(int(value) if float(value).is_integer() else value)
    return f"{name} is {_OPS.get(op, op)} {shown}"


def measured(result: dict[str, Any], pairing: Pairing | None, outcomes: list[str] | None = None) -> str:
    """What a condition found, in words: "1 slice", "0%", "+72.7 points (the change of the error rate
    on gender)" (the worst figure a ``*`` names)."""
    actual = result.get("actual")
    path = result.get("path") or result.get("metric", "")
    f = figure(path, pairing, outcomes)
    text = f.show(actual)
    if result.get("path") and result.get("path") != result.get("metric"):  # the worst of a `*`
        text += f" ({f.name})"
    return text


def source(text: str) -> str:
    """Where a condition came from, in words (never a metric path)."""
    if text.startswith("default: inconclusive"):
        return "default (inconclusive, not failed)"
    return {"default gate": "default", "spec": "--fail-on"}.get(text, text)


def words_of(metrics: dict[str, Any], pairing: Pairing | None) -> Any:
    """The report's ``condition_words(text, result)`` for a comparison: (condition, measured, source)
    in words (:attr:`fairprobe.report.sections.Analysis.condition_words`)."""
    from fairprobe.judge.thresholds import Threshold

    outcomes = list((metrics.get("slices") or {}).keys())

    def words(text: str, result: dict[str, Any]) -> tuple[str, str, str]:
        try:
            threshold = Threshold.parse(text)
        except Exception:  # noqa: BLE001 - a condition that is not a threshold: shown as it is
            return text, number(result.get("actual")), source(str(result.get("source") or ""))
        origin = str(result.get("source") or "spec")
        if origin == "spec" and str(threshold) == str(Threshold.parse(DEFAULT_GATE)):
            origin = "default gate"  # compare's own gate, judged with the user's conditions
        return condition(threshold, pairing, outcomes), measured(result, pairing, outcomes), source(origin)

    return words


def explainer(metrics: dict[str, Any], pairing: Pairing | None) -> Any:
    """The :data:`~fairprobe.judge.verdict.Explain` of a comparison: a failed condition in words, never a
    metric path (``regressed > 0`` reads "the new model got worse on 1 slice beyond chance: error rate
    on gender: 0% → 72.7% ..."; any other ``--fail-on`` condition says its figure in words)."""
    outcomes = list((metrics.get("slices") or {}).keys())

    def explain(threshold: Any, path: str, actual: float, failed: bool = True) -> tuple[str, str]:
        if path == "regressed":
            if not failed:
                return "no slice got worse beyond chance", ""
            slices = worse_slices(metrics, pairing)
            certain = (metrics.get("intervals") or {}).get("worse", 0)
            parts = slices[:3] + ([f"and {len(slices) - 3} more"] if len(slices) > 3 else [])
            if certain:
                parts.append(
                    f"{certain} case{'s' if certain != 1 else ''} whose certified interval lies wholly "
                    "above the base model's"
                )
            k = metrics.get("regressed", len(slices)) - (1 if certain else 0)
            head = (
                f"the new model got worse on {k} slice{'s' if k != 1 else ''} beyond chance"
                if k > 0
                else "the new model got worse beyond chance"
            )
            return f"{head}: {'; '.join(parts)}" if parts else head, "findings"
        parts = path.split(".")
        if len(parts) >= 3 and parts[0] == "delta" and not threshold.bound:
            name, s = parts[1], ".".join(parts[2:])
            r = (metrics.get("slices") or {}).get(name, {}).get(s)
            o = _outcomes(pairing).get(name)
            if r is not None:
                kind = o.kind if o is not None else "binary"
                change = points(r.get("delta")) if kind == "binary" else number(r.get("delta"))
                limit = points(threshold.value) if kind == "binary" else number(threshold.value)
                state = "beyond" if failed else "within"
                return (
                    f"the {label(name)} on {_slice(s)} changed by {change} "
                    f"({value_change(kind, r.get('base'), r.get('new'))}), {state} your limit of {limit}",
                    "findings" if failed else "",
                )
        if not failed:
            return "", ""
        f = figure(path, pairing, outcomes)
        return f"{condition(threshold, pairing, outcomes)} (it is {f.show(actual)})", "findings"

    return explain
