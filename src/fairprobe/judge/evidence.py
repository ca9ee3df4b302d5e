"""Pass means shown within the gate: slice gates corrected for multiplicity, the evidence per gated
attribute, and how many texts a pass would need.

The decision rule (DESIGN.md §4; bafa.txt, "From failure discovery to quantified uncertainty":
"declaring non-compliance only if the entire uncertainty interval lies above a regulatory standard")
reads the evidence in both directions:

- **fail** when a gated slice's interval lies wholly beyond the gate. A technique gates its finest
  meaningful slices (HInter: every word pair and every group word substituted in; Meta-Fair: every
  relation and dimension; CAFFE: every group pair). Testing hundreds of slices at 95% each would let
  chance fail a fair model, so a slice's interval is widened with the **Bonferroni** correction: with
  ``m`` slices of one family tested, its interval is at level ``1 − 0.05/m`` (:func:`slice_family`).
  Bonferroni rather than Holm: it gives each slice an interval a reader can check by hand, and it
  controls the family-wise error rate under any dependence between slices (word pairs share texts).
  The adjusted interval is Clopper–Pearson's (exact, never anti-conservative: one biased execution
  of one, ``1 of 1``, has the 95% interval 2.5–100% and fails no 5% gate).
- **pass** only when every gated attribute's *upper* 95% bound is at or below the gate
  (:func:`assess`): the run shows the model is within it.
- **inconclusive** otherwise, naming what evidence is missing and about how many texts a pass would
  need (:func:`texts_needed`).

Counts: a slice's interval is over its texts (one trial per text, the effective count
``rate × texts`` of ``texts``), because mutants of one text are correlated; the rate itself is over
mutants or executions. A metric names its unit of evidence beside it (``<name>_unit``, or ``unit`` in
an entry): Meta-Fair's are tests, CAFFE's bias types count knowledge-base triples; "texts" otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fairprobe.judge.headline import interval, percent
from fairprobe.judge.thresholds import Threshold, interval_of, lookup_metric, walk_metric
from fairprobe.stats import clopper_pearson_interval, wilson_interval

ADJUSTMENT = "Bonferroni"
"""How slice intervals are corrected for the number of slices tested (:func:`slice_family`)."""
ALPHA = 0.05

SHOWN = "shown"
NOT_SHOWN = "not shown"
FAILS = "fails"
UNTESTED = "untested"


@dataclass
class Slice:
    """One slice of a family: ``changed`` of ``n`` cases (mutants, executions) over ``texts`` texts."""

    label: str
    changed: int
    n: int
    texts: int
    fragile: int = 0
    """Changes that came from fragile texts (texts that changed under every swap, of several
    attributes): shown beside the count so a text that flips under anything is not read as evidence
    against one group."""


def adjusted_interval(rate: float, texts: int, slices: int) -> list[float]:
    """Clopper–Pearson interval of ``rate`` over ``texts`` trials (the effective count, rounded) at
    level ``1 − 0.05/slices`` (Bonferroni)."""
    trials = max(int(texts), 1)
    successes = min(trials, max(0, round(rate * trials)))
    lo, hi = clopper_pearson_interval(successes, trials, level=1 - ALPHA / max(slices, 1))
    return [round(lo, 6), round(hi, 6)]


def slice_family(slices: Iterable[Slice], *, what: str) -> dict[str, Any]:
    """A family of slices for ``summary.json``: ``tested`` (slices with data), ``adjustment``,
    ``level`` and ``rates``: per slice its rate, ``_ci`` (Wilson 95% over its texts), ``_adj_ci``
    (Clopper–Pearson at the Bonferroni level), ``_n``, ``_count``, ``_texts`` and ``_fragile``.
    A gate on the family reads ``lower_adj(slices.<family>.rates.*)``."""
    kept = [s for s in slices if s.n > 0]
    m = len(kept)
    rates: dict[str, Any] = {}
    for s in kept:
        rate = s.changed / s.n
        trials = max(s.texts, 1)
        lo, hi = wilson_interval(rate * trials, trials)
        label = s.label.replace(".", "")  # a dot would split the metric path
        rates[label] = rate
        rates[f"{label}_ci"] = [round(lo, 6), round(hi, 6)]
        rates[f"{label}_adj_ci"] = adjusted_interval(rate, s.texts, m)
        rates[f"{label}_n"] = s.n
        rates[f"{label}_count"] = s.changed
        rates[f"{label}_texts"] = s.texts
        rates[f"{label}_fragile"] = s.fragile
    return {
        "what": what,
        "tested": m,
        "adjustment": ADJUSTMENT,
        "level": 1 - ALPHA / max(m, 1),
        "rates": rates,
    }


def adjust_entries(entries: dict[str, dict[str, Any]], rate: str, n: str, texts: str | None = None) -> None:
    """Add ``<rate>_adj_ci`` to each entry of a family of dict entries (Meta-Fair's ``by_mr``):
    Clopper–Pearson over the entry's texts (``texts`` key, else ``n``) at the Bonferroni level for
    the entries with data."""
    with_data = [e for e in entries.values() if isinstance(e, dict) and e.get(rate) is not None]
    for e in with_data:
        trials = e.get(texts) if texts else None
        e[f"{rate}_adj_ci"] = adjusted_interval(e[rate], int(trials or e.get(n) or 0), len(with_data))
    for e in entries.values():
        if isinstance(e, dict) and e.get(rate) is None:
            e[f"{rate}_adj_ci"] = None


def texts_needed(rate: float, gate: float, *, level: float = 0.95, limit: int = 10_000_000) -> int | None:
    """About how many texts a run needs so that, at the observed ``rate``, the upper end of the 95%
    interval (Wilson, one trial per text) is at or below ``gate``; ``None`` when the rate is at or
    above the gate (no number of texts would show it within)."""
    if rate >= gate:
        return None
    lo, hi = 1, 1
    while wilson_interval(rate * hi, hi, level=level)[1] > gate:
        lo, hi = hi, hi * 2
        if hi > limit:
            return None
    while lo < hi:  # the upper end falls as the texts grow
        mid = (lo + hi) // 2
        if wilson_interval(rate * mid, mid, level=level)[1] > gate:
            lo = mid + 1
        else:
            hi = mid
    return hi


def star_key(pattern: str, path: str) -> str:
    """The key a ``*`` of ``pattern`` matched in ``path`` (``by_dimension.*.bias_rate`` and
    ``by_dimension.gender.bias_rate`` -> ``gender``)."""
    head, _, tail = pattern.partition("*")
    end = len(path) - len(tail) if tail else len(path)
    return path[len(head) : end]


def _sibling(metrics: dict[str, Any], path: str, suffix: str) -> Any:
    parent, _, leaf = path.rpartition(".")
    node, rest = walk_metric(metrics, parent) if parent else (metrics, "")
    if not isinstance(node, dict) or rest:
        return None
    if f"{leaf}{suffix}" in node:
        return node[f"{leaf}{suffix}"]
    # a dict holding one rate keeps its counts beside it as ``n``, ``texts`` (Meta-Fair's entries)
    return node.get(suffix.lstrip("_")) if leaf in ("bias_rate", "rate") else None


def fail_counterpart(condition: Threshold) -> Threshold:
    """The fail gate that mirrors a pass condition: ``upper(P)<=g`` -> ``lower(P)>g``;
    ``lower(P)>=g`` -> ``upper(P)<g``."""
    if condition.bound == "upper":
        return Threshold(condition.metric, ">" if condition.op == "<=" else ">=", condition.value, "lower")
    return Threshold(condition.metric, "<" if condition.op == ">=" else "<=", condition.value, "upper")


def assess(metrics: dict[str, Any], conditions: list[Threshold], words: Any = None) -> list[dict[str, Any]]:
    """Per gated attribute (every metric a pass condition names), whether the run shows it within the
    gate: ``shown``, ``not shown``, ``fails`` or ``untested`` (no data), with the rate, its interval,
    its counts, the gate and, when not shown, the texts a pass would need and a sentence saying what
    evidence is missing. ``words(path)`` gives "the model changed its answer for 0 of 246 race
    mutants" (from the technique's :class:`~fairprobe.report.sections.Explanation`), or ""."""
    rows: dict[str, dict[str, Any]] = {}
    for cond in conditions:
        try:
            found = cond.resolve(metrics)
        except Exception:  # noqa: BLE001 - a condition on a metric this run lacks shows nothing
            continue
        mirror = fail_counterpart(cond)
        for path, bound in found:
            key = star_key(cond.metric, path) if cond.wildcard else path
            row = rows.setdefault(
                path,
                {"attribute": key, "metric": path, "gate": cond.value, "status": SHOWN, "conditions": []},
            )
            row["conditions"].append(str(cond))
            value = lookup_metric(metrics, path)
            ci = interval_of(metrics, path)
            n = _sibling(metrics, path, "_n")
            texts = _sibling(metrics, path, "_texts") or _sibling(metrics, path, "_clusters")
            row.update(rate=value, ci=ci, n=n, texts=texts)
            unit = _sibling(metrics, path, "_unit")  # what a "text" is (CAFFE: knowledge-base triples)
            if isinstance(unit, str) and unit:
                row["unit"] = unit
            if value is None or bound is None:
                row["status"] = UNTESTED
                continue
            judged = interval_of(metrics, path, "_adj_ci") or ci  # the interval the fail gate reads
            end = None if judged is None else float(judged[0 if mirror.bound == "lower" else 1])
            if end is not None and mirror.fails(end):
                row["status"] = FAILS
            elif not cond.fails(bound) and row["status"] != FAILS:
                row["status"] = NOT_SHOWN
    out = []
    for row in rows.values():
        if row["status"] == NOT_SHOWN:
            gate = row["gate"]
            rate = abs(row["rate"])
            row["texts_needed"] = texts_needed(rate, abs(gate)) if 0 <= rate <= 1 else None
            row["reason"] = _not_shown(row, words(row["metric"]) if words else "")
        out.append(row)
    return out


def _not_shown(row: dict[str, Any], said: str) -> str:
    gate = row["gate"]
    share = 0 < abs(gate) < 1 and (row["rate"] is None or 0 <= row["rate"] <= 1)
    g = percent(abs(gate)) if share else f"{gate:g}"
    what = said or f"{row['metric']} is {percent(row['rate']) if share else row['rate']}"
    ci = row["ci"]
    texts = row.get("texts")
    unit = row.get("unit", "texts")
    over = f"{texts:,} {unit}" if isinstance(texts, int) else "this run"
    reach = (
        f"{over} can only show a rate below {percent(ci[1])} (95% CI {interval(ci, share)})"
        if ci and share
        else f"its 95% interval reaches {interval(ci, share) if ci else 'beyond the gate'}"
    )
    need = row.get("texts_needed")
    if need is not None and isinstance(texts, int) and need > texts:
        more = f"; about {need:,} {unit} would be needed at the observed rate"
    elif need is not None and not isinstance(texts, int):
        more = f"; about {need:,} {unit} would be needed at the observed rate"
    else:
        more = f"; at the observed rate no number of {unit} would show it within the gate"
    return f"not enough evidence that {row['attribute']} is within the {g} gate: {what}, but {reach}{more}"


def pass_note(rows: list[dict[str, Any]], accepted: bool) -> list[str]:
    """The lines a pass carries about its evidence: which attributes were shown within, and (with
    ``accept_untested``) which were accepted without being shown, or not tested at all."""
    shown = [r["attribute"] for r in rows if r["status"] == SHOWN]
    not_shown = [r for r in rows if r["status"] == NOT_SHOWN]
    untested = [r["attribute"] for r in rows if r["status"] == UNTESTED]
    lines = []
    if shown:
        within = [
            f"{r['attribute']} (95% CI {interval(r['ci'], 0 < abs(r['gate']) < 1)})"
            for r in rows
            if r["status"] == SHOWN
        ]
        lines.append(f"shown within the gate: {', '.join(within)}")
    if accepted and not_shown:
        lines.append(
            "pass accepted on the shown attributes only (accept_untested): shown within the gate: "
            f"{', '.join(shown) or 'none'}; not shown: {', '.join(r['attribute'] for r in not_shown)}"
        )
    if untested:
        lines.append(f"not tested (no data): {', '.join(untested)}; see coverage")
    return lines


def fill_coverage(coverage: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
    """``coverage`` with ``{texts}`` in its reasons filled from what the run recorded (``texts`` read),
    or left out when it recorded nothing; ``texts`` added beside ``tested``."""
    if not coverage:
        return {}
    texts = info.get("texts")
    old, said = ("{texts}", f"{texts:,}") if isinstance(texts, int) else ("{texts} ", "")
    out = dict(coverage)
    out["untested"] = {a: str(why).replace(old, said) for a, why in coverage.get("untested", {}).items()}
    if isinstance(texts, int):
        out["texts"] = texts
    return out


def coverage_lines(coverage: dict[str, Any]) -> list[str]:
    """The coverage in words, one line per attribute: tested with counts, then untested with why."""
    lines = []
    for attr, counts in (coverage.get("tested") or {}).items():
        parts = [f"{v:,} {k}" for k, v in counts.items() if isinstance(v, int)]
        lines.append(f"{attr}: tested ({', '.join(parts)})")
    for attr, why in (coverage.get("untested") or {}).items():
        lines.append(f"{attr}: NOT TESTED: {why}")
    return lines
