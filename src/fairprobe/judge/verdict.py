"""The run's verdict: pass, fail or inconclusive. The one place every technique's result is judged.

A fairness tool must never report a false PASS, so three rules come before any threshold:

1. **No data is not zero.** A rate over zero cases is ``None`` (JSON ``null``, "no data" in the
   report). A threshold on a metric without data *fails*, with a reason that says so, unless the
   spec says ``allow_empty: true``.
2. **A run that tested nothing is inconclusive.** Every technique reports ``tested`` (test cases or
   answers attempted), ``invalid`` (answers it could not use: unparsable, judge failure, refusal,
   error) and ``invalid_rate`` at the top of its metrics (:func:`fairprobe.stats.invalid_fields`).
   ``tested == 0`` makes the run inconclusive (unless ``allow_empty``).
3. **Too many invalid answers is inconclusive.** The default rule ``invalid_rate < 0.5`` (spec
   ``max_invalid_rate``) must hold, or the verdict is "inconclusive": the model's answers could not
   be read often enough for any rate to mean anything.

Then the fail conditions decide pass or fail: the user's (spec ``thresholds:``, ``--fail-on``), else
the technique's **default gates** (:mod:`fairprobe.judge.gates`), plus the thresholds a technique's test
cases carry themselves (e.g. CAFFE's expected fairness level). A run with no fail condition at all
(``thresholds: []``, ``--no-default-gates``) is "measured (no fairness gate)", never "pass".

With the default gates the rule reads the evidence in both directions (issue 39,
:mod:`fairprobe.judge.evidence`): a gated slice *fails* only when its interval, corrected for the number
of slices tested (Bonferroni), lies beyond the gate; the run *passes* only when every gated attribute
is *shown* within its gate (the technique's pass conditions, e.g. ``upper(...)<=0.05``); otherwise it
is "inconclusive", each reason naming the missing evidence and the texts a pass would need, unless
``accept_untested`` accepts a pass on the shown attributes only.

Exit codes (:mod:`fairprobe.cli`): 0 pass or measured; 1 fail or inconclusive; 2 usage or input error;
3 internal error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fairprobe.errors import SpecError
from fairprobe.judge.evidence import NOT_SHOWN, UNTESTED, assess, disagreement, pass_note, star_key
from fairprobe.judge.thresholds import DEFAULT_MAX_INVALID_RATE, Threshold
from fairprobe.report.sections import NO_DATA

PASS = "pass"
FAIL = "fail"
INCONCLUSIVE = "inconclusive"
INCOMPLETE = "incomplete"
MEASURED = "measured"
"""No fail condition at all (``thresholds: []`` or ``--no-default-gates``): the run measured and
judged nothing, so it is neither "pass" nor "fail". Exit code 0; ``passed`` is false."""
MEASURED_WORDS = "measured (no fairness gate)"

DEFAULT_GATE = "default gate"
"""The ``source`` of a technique's default gate (:attr:`fairprobe.technique.registry.Technique.default_gates`)."""
_NOTED = {"spec", DEFAULT_GATE}

Explain = Callable[[Threshold, str, float, bool], tuple[str, str]]
"""``explain(threshold, concrete metric path, actual, failed)`` -> (the result in words, report anchor);
``("", "")`` when it has nothing better than the generic words (:func:`fairprobe.judge.gates.explainer`)."""


@dataclass
class Verdict:
    verdict: str
    thresholds: dict[str, dict[str, Any]]
    reasons: list[str] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)
    """Per reason, the report.html anchor of the findings behind it ("" when none)."""
    notes: list[str] = field(default_factory=list)
    """For a pass: each gate's closest call in words ("... 2.6%, within the 5% gate")."""
    evidence: list[dict[str, Any]] = field(default_factory=list)
    """Per gated attribute: shown / not shown / fails / untested, with the texts a pass would need
    (:func:`fairprobe.judge.evidence.assess`)."""

    @property
    def passed(self) -> bool:
        return self.verdict == PASS


def check_threshold(
    metrics: dict[str, Any],
    threshold: Threshold,
    *,
    allow_empty: bool = False,
    source: str = "spec",
    words: str = "",
    explain: Explain | None = None,
) -> dict[str, Any]:
    """One threshold's result: ``actual``, ``passed`` and, when it fails, ``reason`` (``words``, a
    technique's own account of the measurement, when given; else ``explain``'s sentence; else the
    generic one). A condition with ``*`` fails when any metric it names fails; ``path`` is the
    worst one and ``failing`` how many failed."""
    try:
        found = threshold.resolve(metrics)
    except SpecError as exc:
        # A metric the analysis did not produce (e.g. a pair not in this run): never a silent pass.
        return _result(threshold, None, False, source, f"{exc}")
    data = [(p, v) for p, v in found if v is not None]
    if not data:
        if allow_empty:
            return _result(threshold, None, True, source, f"{NO_DATA} (n = 0), allowed by allow_empty")
        return _result(
            threshold,
            None,
            False,
            source,
            f"{threshold.metric} has {NO_DATA} (n = 0): nothing was tested for it; "
            "set allow_empty: true to accept that",
        )
    failing = [(p, v) for p, v in data if threshold.fails(v)]
    path, actual = threshold.worst(failing or data)
    reason = anchor = note = ""
    if failing:
        if explain is not None and not words:
            reason, anchor = explain(threshold, path, actual, True)
        reason = words or reason or f"{path} = {actual:.4g}, and the fail condition {threshold} holds"
        if len(failing) > 1 and threshold.wildcard:  # name the others too: each is a finding
            others = [star_key(threshold.metric, p) for p, _ in sorted(failing, key=lambda pv: -pv[1])]
            others = [o for o in others if o != star_key(threshold.metric, path)]
            shown = ", ".join(others[:8]) + (f" and {len(others) - 8} more" if len(others) > 8 else "")
            reason += f" (also beyond this gate: {shown})"
    elif explain is not None and not threshold.bound.endswith("_adj"):  # slices: counted, not noted
        note = explain(threshold, path, actual, False)[0]
    out = _result(threshold, actual, not failing, source, reason)
    if note:
        out["note"] = note
    if threshold.wildcard or threshold.bound:
        out.update(path=path, failing=len(failing), of=len(data))
    if anchor:
        out["anchor"] = anchor
    return out


def _result(t: Threshold, actual: float | None, passed: bool, source: str, reason: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "metric": t.metric,
        "op": t.op,
        "value": t.value,
        "actual": actual,
        "passed": passed,
        "source": source,
    }
    if t.bound:
        out["bound"] = t.bound
    if reason:
        out["reason"] = reason
    return out


def decide(
    metrics: dict[str, Any],
    thresholds: list[Threshold],
    *,
    implied: list[tuple[Threshold, str] | tuple[Threshold, str, str]] | None = None,
    gates: list[Threshold] | None = None,
    explain: Explain | None = None,
    allow_empty: bool = False,
    max_invalid_rate: float = DEFAULT_MAX_INVALID_RATE,
    inconclusive_reasons: list[str] | None = None,
    evidence: list[Threshold] | None = None,
    accept_untested: bool = False,
    worded: Callable[[str], str] | None = None,
    untested: dict[str, str] | None = None,
    named: Callable[[str], str] | None = None,
    unit: str = "texts",
    interval: str = "wilson",
) -> Verdict:
    """Judge a run from its ``metrics``.

    ``thresholds`` are the user's fail conditions; ``implied`` are (fail condition, source[, reason])
    a technique derives from its own test cases (listed in the summary with that source; the reason,
    when given, is the failure's reason in words); ``gates`` are the technique's default gates, used
    when the user set no thresholds (a gate on a metric without data is skipped: the empty-run rule
    below covers a run that tested nothing);
    ``explain`` words a failure from the metrics (:func:`fairprobe.judge.gates.explainer`);
    ``inconclusive_reasons`` are a technique's own reasons why its measurements cannot be trusted
    (:attr:`~fairprobe.report.sections.Analysis.inconclusive`).
    ``evidence`` are the pass conditions (``upper(error_rate.by_attribute.*)<=0.05``): the run passes
    only when each holds for every attribute with data (pass means *shown* within the gate,
    :mod:`fairprobe.judge.evidence`); otherwise, when nothing fails, it is inconclusive, each reason saying
    what evidence is missing (``worded(path)`` words the measurement), unless ``accept_untested``
    accepts a pass on the shown attributes only (the notes then say so). ``named(path)`` names a gated
    quantity in words ("seed 0"); ``unit`` is what the technique counts (texts, sentences, queries,
    items) and ``interval`` the interval it puts beside a share, for the count a pass would need.
    A quantity whose own interval lies beyond its gate while no fail gate failed (the audit's seeds
    disagreeing) makes the run inconclusive, never a pass; so does a run in which no gated quantity
    had data.
    ``untested`` are the attributes the run was asked to test and could not (attribute -> why: "the
    dictionary has no religion words", the run's coverage): nothing was shown about them, so under the
    pass conditions they keep a run where nothing fails from a plain pass in the same way, and
    ``accept_untested`` accepts it (the user's own thresholds alone judge as before).
    With no fail condition at all the verdict is :data:`MEASURED`, never "pass".
    """
    results: dict[str, dict[str, Any]] = {}
    for t in thresholds:
        results[str(t)] = check_threshold(metrics, t, allow_empty=allow_empty, explain=explain)
    for t in gates or []:
        results.setdefault(
            str(t), check_threshold(metrics, t, allow_empty=True, source=DEFAULT_GATE, explain=explain)
        )
    for t, source, *words in implied or []:
        results.setdefault(
            str(t),
            check_threshold(
                metrics, t, allow_empty=allow_empty, source=source, words="".join(words), explain=explain
            ),
        )
    gated = bool(results)
    failed = [(r["reason"], r.get("anchor", "")) for r in results.values() if not r["passed"]]

    inconclusive: list[str] = list(inconclusive_reasons or [])
    tested = metrics.get("tested")
    invalid_rate = metrics.get("invalid_rate")
    if isinstance(tested, int) and not isinstance(tested, bool) and tested == 0 and not allow_empty:
        inconclusive.append(
            f"{NO_DATA}: the run tested 0 cases, so it shows nothing about fairness; "
            "check the data and options (allow_empty: true accepts an empty run)"
        )
    if isinstance(invalid_rate, int | float) and not isinstance(invalid_rate, bool):
        rule = Threshold("invalid_rate", ">=", max_invalid_rate)
        ok = not rule.fails(invalid_rate)
        reason = (
            ""
            if ok
            else f"{metrics.get('invalid')} of {tested} tested cases ({invalid_rate:.0%}) had an INVALID "
            f"answer (unparsable, refused or failed), at or above max_invalid_rate {max_invalid_rate:g}; "
            "fix the prompt/parser or the model, or raise max_invalid_rate"
        )
        source = "default: inconclusive when invalid_rate >= max_invalid_rate"
        results[str(rule)] = _result(rule, invalid_rate, ok, source, reason)
        if reason:
            inconclusive.append(reason)
    rows = assess(metrics, evidence or [], worded, unit=unit, interval=interval, names=named)
    if inconclusive:
        pairs = [(r, "") for r in inconclusive] + failed
        return Verdict(INCONCLUSIVE, results, [r for r, _ in pairs], [a for _, a in pairs], evidence=rows)
    if failed:
        return Verdict(FAIL, results, [r for r, _ in failed], [a for _, a in failed], evidence=rows)
    disagree = disagreement(rows)
    if rows and all(r["status"] == UNTESTED for r in rows):  # a pass must have shown something
        names = ", ".join(str(r["attribute"]) for r in rows)
        disagree.append(
            f"no gated quantity had data ({names}: no data), so the run shows nothing within the gate; "
            "see coverage and the report for why"
        )
    if disagree:
        return Verdict(INCONCLUSIVE, results, disagree, [""] * len(disagree), evidence=rows)
    missing = [r["reason"] for r in rows if r["status"] == NOT_SHOWN]
    # the requested attributes the run did not test: no plain pass where pass means shown within
    asked = (untested or {}) if evidence else {}
    never = [f"{a} was requested but not tested: {why}" for a, why in asked.items()]
    if (missing or never) and not accept_untested:
        fix = f"test more {unit}" if missing else ""
        if never:
            fix += (", or " if fix else "") + "ask only for attributes your dictionary and texts cover"
        reasons = [
            *missing,
            *never,
            "nothing failed, but a pass needs every requested attribute shown within its gate; "
            f"{fix}, or accept a pass on the shown attributes only with accept_untested: true "
            "(--accept-untested)",
        ]
        return Verdict(INCONCLUSIVE, results, reasons, [""] * len(reasons), evidence=rows)
    if not gated:
        return Verdict(
            MEASURED,
            results,
            [
                "no fairness gate was set (thresholds: [] or --no-default-gates), so nothing was judged; "
                "read the numbers in the report"
            ],
            [""],
        )
    notes = list(  # the user's conditions and the default gates; a case's own is in its table
        dict.fromkeys(
            f"closest call: {r['note']}" for r in results.values() if r.get("note") and r["source"] in _NOTED
        )
    )
    notes = [*pass_note(rows, accept_untested, asked), *notes]
    return Verdict(PASS, results, notes=notes, evidence=rows)


def incomplete(verdict: Verdict, why: str, findings: int) -> Verdict:
    """The verdict of a run that did not finish: "incomplete", never "pass", whatever its metrics say
    so far. The reasons of the partial verdict follow the first line."""
    first = (
        f"the run is incomplete: {why}; {findings} findings so far; run the same command again to "
        "resume (nothing done is lost)"
    )
    if not findings:  # nothing judged yet: the partial verdict ("tested 0 cases") would mislead
        return Verdict(INCOMPLETE, {}, [first], [""])
    return Verdict(INCOMPLETE, verdict.thresholds, [first, *verdict.reasons], ["", *verdict.anchors])
