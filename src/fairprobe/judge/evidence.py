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
  (:func:`assess`): the run shows the model is within it. A quantity may be gated from below (the
  certified share of certificates: its *lower* bound at or above 50%) or on both sides (the audit's
  ΔAUC per seed, a benchmark's bias gap: the whole interval within ±0.1).
- **inconclusive** otherwise, naming what evidence is missing and about how many texts a pass would
  need (:func:`texts_needed`).

Counts: a slice's interval is over its texts (one trial per text, the effective count
``rate × texts`` of ``texts``), because mutants of one text are correlated; the rate itself is over
mutants or executions. A metric names its unit of evidence beside it (``<name>_unit``, or ``unit`` in
an entry): Meta-Fair's are tests, CAFFE's bias types count knowledge-base triples; "texts" otherwise.

**How much more evidence a pass needs** (:func:`needed`), in the technique's own unit
(:attr:`~fairprobe.technique.registry.Technique.evidence_unit`: texts, sentences, queries, items):

- a *share* gated on one side (HInter's and Meta-Fair's rates, ``upper(P) <= g``; the certified
  share of certificates, ``lower(P) >= g``): the smallest count whose 95% interval at the observed
  share ends within the gate, searched with the interval the technique reports (Wilson, or
  Clopper–Pearson for certificates, :attr:`~fairprobe.technique.registry.Technique.evidence_interval`);
- any other quantity, and a quantity gated on both sides (the audit's ΔAUC and a benchmark's bias
  gap, within ``[−g, g]``): the count ``n`` the interval is over times ``(h / m)²``, where ``h`` is
  the distance from the estimate to the interval's end beyond the gate and ``m`` the distance from
  the estimate to the gate: the interval's half-width shrinks as ``1/√n`` (the rate of the Hoeffding
  and McDiarmid bounds, bafa.txt App. A.3.1, and of a bootstrap interval of a mean) while the
  estimate stays where it is. ``None`` when the estimate itself is beyond the gate: no amount of
  data would show it within.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fairprobe.judge.headline import interval, number, percent
from fairprobe.judge.thresholds import Threshold, interval_of, lookup_metric, walk_metric
from fairprobe.stats import clopper_pearson_interval, wilson_interval

ADJUSTMENT = "Bonferroni"
"""How slice intervals are corrected for the number of slices tested (:func:`slice_family`)."""
ALPHA = 0.05
CLOPPER_PEARSON = "clopper-pearson"
"""The exact interval a technique may report beside a share (certificates): :func:`texts_needed`
then searches with it, so the count it gives is the one that shows the share within the gate."""

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


def slice_labels(rates: dict[str, Any]) -> list[str]:
    """The slice labels in a family's ``rates`` (:func:`slice_family`): the keys with ``<label>_n``."""
    return [k for k in rates if f"{k}_n" in rates]


def adjusted_for(node: dict[str, Any], label: str) -> str:
    """A slice's multiplicity note in words: "adjusted for the 54 word pairs tested (Bonferroni: 44.3–99.8%)"."""
    adj = interval(node["rates"][f"{label}_adj_ci"])
    return f"adjusted for the {node.get('tested', 0):,} {node['what']} tested ({node['adjustment']}: {adj})"


def slice_cells(rates: dict[str, Any], label: str) -> list[str]:
    """A slice's table cells: "8 of 11", its rate, its 95% interval and its corrected interval."""
    return [
        f"{rates[f'{label}_count']} of {rates[f'{label}_n']}",
        percent(rates[label]),
        interval(rates[f"{label}_ci"]),
        interval(rates[f"{label}_adj_ci"]),
    ]


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


def texts_needed(
    rate: float, gate: float, *, level: float = 0.95, limit: int = 10_000_000, interval: str = "wilson"
) -> int | None:
    """About how many texts a run needs so that, at the observed ``rate``, the upper end of the 95%
    interval (one trial per text; Wilson's, or with ``interval="clopper-pearson"`` the exact one over
    whole counts) is at or below ``gate``; ``None`` when the rate is at or above the gate (no number
    of texts would show it within)."""
    if rate >= gate:
        return None

    def upper(n: int) -> float:
        if interval == CLOPPER_PEARSON:
            return clopper_pearson_interval(min(n, round(rate * n)), n, level=level)[1]
        return wilson_interval(rate * n, n, level=level)[1]

    lo, hi = 1, 1
    while upper(hi) > gate:
        lo, hi = hi, hi * 2
        if hi > limit:
            return None
    while lo < hi:  # the upper end falls as the texts grow
        mid = (lo + hi) // 2
        if upper(mid) > gate:
            lo = mid + 1
        else:
            hi = mid
    return hi


def share_needed(rate: float, gate: float, side: str, *, interval: str = "wilson") -> int | None:
    """:func:`texts_needed` for a share gated on either side: ``side="upper"`` (a pass needs the
    upper end at or below ``gate``) or ``"lower"`` (the lower end at or above it, the certified share
    of certificates): both intervals are symmetric under ``p -> 1 - p``."""
    if side == "lower":
        return texts_needed(1 - rate, 1 - gate, interval=interval)
    return texts_needed(rate, gate, interval=interval)


def width_needed(value: float, ci: list[float], n: int, sides: dict[str, float]) -> int | None:
    """About how many cases (the ``n`` the interval ``ci`` is over) would bring the interval of
    ``value`` within the gates in ``sides`` (``{"upper": 0.1, "lower": -0.1}``: a pass needs the upper
    end at or below 0.1 and the lower end at or above −0.1), if its half-width shrinks as ``1/√n``
    and the estimate stays where it is: ``n × (h / m)²`` for each end that is not yet within, with
    ``h`` the distance from the estimate to that end and ``m`` from the estimate to the gate. ``None``
    when the estimate is at or beyond a gate it must be within, or ``n`` is unknown."""
    if not n or n <= 0:
        return None
    want = 0
    for side, gate in sides.items():
        end = float(ci[1] if side == "upper" else ci[0])
        reach = end - value if side == "upper" else value - end
        margin = gate - value if side == "upper" else value - gate
        within = end <= gate if side == "upper" else end >= gate
        if within:
            continue
        if margin <= 0:
            return None
        want = max(want, math.ceil(n * (max(reach, 0.0) / margin) ** 2))
    return max(want, n + 1) if want else None


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


def assess(
    metrics: dict[str, Any],
    conditions: list[Threshold],
    words: Any = None,
    *,
    unit: str = "texts",
    interval: str = "wilson",
    names: Callable[[str], str] | None = None,
) -> list[dict[str, Any]]:
    """Per gated quantity (every metric a pass condition names), whether the run shows it within the
    gate: ``shown``, ``not shown``, ``fails`` or ``untested`` (no data), with the value, its interval,
    its counts, the gate and, when not shown, how many ``unit`` a pass would need (``needed``, and
    ``texts_needed`` when the unit is texts; :func:`needed`) and a sentence saying what evidence is
    missing. ``words(path)`` gives "the model changed its answer for 0 of 246 race mutants" (from the
    technique's :class:`~fairprobe.report.sections.Explanation`), or ""; ``names(path)`` the quantity's
    name in words ("seed 0", "the certified share"), or "" for the key the ``*`` matched.

    A metric may carry pass conditions on both ends (``upper(gap)<=0.1`` and ``lower(gap)>=-0.1``):
    it is shown only when its interval lies within both."""
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
                {
                    "attribute": (names(path) if names else "") or key,
                    "metric": path,
                    "gate": cond.value,
                    "status": SHOWN,
                    "conditions": [],
                    "sides": {},
                    "unit": unit,
                },
            )
            row["conditions"].append(str(cond))
            if cond.bound in ("upper", "lower"):
                row["sides"][cond.bound] = cond.value
            value = lookup_metric(metrics, path)
            ci = interval_of(metrics, path)
            n = _sibling(metrics, path, "_n")
            texts = _sibling(metrics, path, "_texts") or _sibling(metrics, path, "_clusters")
            row.update(rate=value, ci=ci, n=n, texts=texts)
            own_unit = _sibling(metrics, path, "_unit")  # what a "text" is (CAFFE: knowledge-base triples)
            if isinstance(own_unit, str) and own_unit:
                row["unit"] = own_unit
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
        sides = row["sides"]
        row["share"] = _is_share(row)
        count = row["texts"] if isinstance(row["texts"], int) else row["n"]
        row["count"] = count if isinstance(count, int) and not isinstance(count, bool) else None
        if row["status"] == NOT_SHOWN:
            row["needed"], row["needed_how"] = needed(row, interval)
            if row["share"] and "upper" in sides:  # a rate over texts (tests, triples) gated from above
                row["texts_needed"] = row["needed"]
                row["reason"] = _not_shown(row, words(row["metric"]) if words else "")
            else:
                row["reason"] = _not_shown_general(row, words(row["metric"]) if words else "")
        out.append(row)
    return out


def _is_share(row: dict[str, Any]) -> bool:
    """A share gated on one side (a rate, the certified share), read as a percentage; anything gated
    on both sides, or outside [0, 1], is a plain number."""
    value, sides = row["rate"], row["sides"]
    gate = next(iter(sides.values()), row["gate"])
    return len(sides) <= 1 and 0 < abs(gate) < 1 and (value is None or 0 <= abs(value) <= 1)


def needed(row: dict[str, Any], interval: str = "wilson") -> tuple[int | None, str]:
    """How many cases (the row's unit) a pass would need, and how that was estimated (the module's
    docstring): a one-sided share by searching its interval, anything else by width scaling."""
    value, sides = row["rate"], row["sides"]
    if row["share"] and len(sides) == 1:
        side, gate = next(iter(sides.items()))
        if side == "upper":
            rate = abs(value)
            return (texts_needed(rate, abs(gate), interval=interval) if 0 <= rate <= 1 else None), (
                "at the observed rate"
            )
        return share_needed(value, gate, side, interval=interval), "at the observed share"
    if not row["ci"] or not sides:
        return None, ""
    how = f"if the interval narrows as 1/√{row['unit']} around the estimate {number(value)}"
    return width_needed(float(value), row["ci"], row["count"] or 0, sides), how


def _fmt(row: dict[str, Any], value: float | None) -> str:
    return percent(value) if row["share"] else number(value).replace("-", "−")


def ci_words(row: dict[str, Any]) -> str:
    """The row's interval as read: ``1.6–8.6%`` for a share, ``[−0.04, 0.16]`` for a number."""
    ci = row.get("ci")
    if not ci:
        return ""
    if row.get("share"):
        return interval(ci, True)
    return f"[{number(ci[0])}, {number(ci[1])}]".replace("-", "−")


def gate_words_of(row: dict[str, Any]) -> str:
    """The pass condition in words: "at most 5%", "at least 50%", "within ±0.1"."""
    sides = row.get("sides") or {}
    if "upper" in sides and "lower" in sides:
        lo, hi = sides["lower"], sides["upper"]
        if lo == -hi:
            return f"within ±{number(hi)}"
        return f"within [{number(lo)}, {number(hi)}]".replace("-", "−")
    if "lower" in sides:
        return f"at least {_fmt(row, sides['lower'])}"
    return f"at most {_fmt(row, sides.get('upper', row['gate']))}"


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
    need = row.get("needed", row.get("texts_needed"))
    if need is not None and isinstance(texts, int) and need > texts:
        more = f"; about {need:,} {unit} would be needed at the observed rate"
    elif need is not None and not isinstance(texts, int):
        more = f"; about {need:,} {unit} would be needed at the observed rate"
    else:
        more = f"; at the observed rate no number of {unit} would show it within the gate"
    return f"not enough evidence that {row['attribute']} is within the {g} gate: {what}, but {reach}{more}"


def _not_shown_general(row: dict[str, Any], said: str) -> str:
    """Why a quantity was not shown within its gate, in words, with the count a pass would need."""
    sides, ci, unit = row["sides"], row["ci"], row["unit"]
    what = said or f"{row['attribute']} is {_fmt(row, row['rate'])}"
    count = row.get("count")
    over = f" over {count:,} {unit}" if isinstance(count, int) else ""
    out = [
        f"{'above' if side == 'upper' else 'below'} {_fmt(row, gate)}"
        for side, gate in sides.items()
        if ci and (ci[1] > gate if side == "upper" else ci[0] < gate)
    ]
    noun = "its 95% interval" if row["share"] else "its interval"
    reach = f"{noun} {ci_words(row)}{over} reaches {' and '.join(out) or 'beyond the gate'}"
    need, how = row.get("needed"), row.get("needed_how") or ""
    if need is not None:
        more = f" ({need - count:,} more)" if isinstance(count, int) and need > count else ""
        tail = f"; about {need:,} {unit} would be needed{more}, {how}" if how else ""
    else:
        tail = f"; at the observed value no number of {unit} would show it {gate_words_of(row)}"
    return f"not enough evidence that {row['attribute']} is {gate_words_of(row)}: {what}, but {reach}{tail}"


def pass_note(
    rows: list[dict[str, Any]], accepted: bool, requested: dict[str, str] | None = None
) -> list[str]:
    """The lines a pass carries about its evidence: which attributes were shown within, and (with
    ``accept_untested``) which were accepted without being shown, or not tested at all (with why,
    for the ``requested`` attributes the run's coverage names: attribute -> why)."""
    requested = requested or {}
    shown = [r["attribute"] for r in rows if r["status"] == SHOWN]
    not_shown = [r for r in rows if r["status"] == NOT_SHOWN]
    untested = [r["attribute"] for r in rows if r["status"] == UNTESTED and r["attribute"] not in requested]
    lines = []
    if shown:
        within = [
            f"{r['attribute']} ({'95% CI' if r.get('share') else 'interval'} {ci_words(r)})"
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
    lines += [f"pass accepted without testing {a} (accept_untested): {why}" for a, why in requested.items()]
    return lines


def disagreement(rows: list[dict[str, Any]]) -> list[str]:
    """Reasons for the quantities whose own interval lies beyond the gate although the run's fail
    gates did not fail (the audit's seeds: one seed beyond, another within, and the fail gate needs
    every seed beyond): such a run is not a pass."""
    return [
        f"{r['attribute']} lies beyond the gate on its own (interval {ci_words(r)}, the gate: "
        f"{gate_words_of(r)}), but the run's fail gates did not fail: the evidence disagrees, so the run "
        "is not a pass"
        for r in rows
        if r["status"] == FAILS
    ]


def table_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    """The report's evidence table, one row per gated quantity: name, status, value, interval, the
    count it is over, the gate and what a pass would need."""
    out = []
    for r in rows:
        count = r.get("count") if "count" in r else r.get("texts")
        unit = r.get("unit", "texts")
        need = ""
        if r["status"] == NOT_SHOWN:
            n = r.get("needed", r.get("texts_needed"))
            need = f"{n:,} {unit}" if n is not None else "none would do at this value"
        share = r.get("share", 0 < abs(r["gate"]) < 1)
        value = "no data" if r["rate"] is None else (percent(r["rate"]) if share else number(r["rate"]))
        out.append(
            [
                str(r["attribute"]),
                r["status"],
                value,
                ci_words({**r, "share": share}),
                "" if count is None else f"{count:,} {unit}",
                gate_words_of({**r, "share": share, "sides": r.get("sides") or {"upper": r["gate"]}}),
                need,
            ]
        )
    return out


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
