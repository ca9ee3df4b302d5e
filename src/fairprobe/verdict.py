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

Then the fail conditions (spec ``thresholds:``, ``--fail-on``, and thresholds a technique's test
cases carry themselves, e.g. CAFFE's expected fairness level) decide pass or fail.

Exit codes (:mod:`fairprobe.cli`): 0 pass; 1 fail or inconclusive; 2 usage or input error;
3 internal error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fairprobe.errors import SpecError
from fairprobe.report.sections import NO_DATA
from fairprobe.thresholds import DEFAULT_MAX_INVALID_RATE, Threshold, lookup_metric

PASS = "pass"
FAIL = "fail"
INCONCLUSIVE = "inconclusive"
INCOMPLETE = "incomplete"


@dataclass
class Verdict:
    verdict: str
    thresholds: dict[str, dict[str, Any]]
    reasons: list[str] = field(default_factory=list)

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
) -> dict[str, Any]:
    """One threshold's result: ``actual``, ``passed`` and, when it fails, ``reason`` (``words``, a
    technique's own account of the measurement, when given; else the generic one)."""
    try:
        actual = lookup_metric(metrics, threshold.metric)
    except SpecError as exc:
        # A metric the analysis did not produce (e.g. a pair not in this run): never a silent pass.
        return _result(threshold, None, False, source, f"{exc}")
    if actual is None:
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
    fails = threshold.fails(actual)
    reason = (
        (words or f"{threshold.metric} = {actual:.4g}, and the fail condition {threshold} holds")
        if fails
        else ""
    )
    return _result(threshold, actual, not fails, source, reason)


def _result(t: Threshold, actual: float | None, passed: bool, source: str, reason: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "metric": t.metric,
        "op": t.op,
        "value": t.value,
        "actual": actual,
        "passed": passed,
        "source": source,
    }
    if reason:
        out["reason"] = reason
    return out


def decide(
    metrics: dict[str, Any],
    thresholds: list[Threshold],
    *,
    implied: list[tuple[Threshold, str] | tuple[Threshold, str, str]] | None = None,
    allow_empty: bool = False,
    max_invalid_rate: float = DEFAULT_MAX_INVALID_RATE,
    inconclusive_reasons: list[str] | None = None,
) -> Verdict:
    """Judge a run from its ``metrics``.

    ``thresholds`` are the user's fail conditions; ``implied`` are (fail condition, source[, reason])
    a technique derives from its own test cases (listed in the summary with that source; the reason,
    when given, is the failure's reason in words);
    ``inconclusive_reasons`` are a technique's own reasons why its measurements cannot be trusted
    (:attr:`~fairprobe.report.sections.Analysis.inconclusive`).
    """
    results: dict[str, dict[str, Any]] = {}
    for t in thresholds:
        results[str(t)] = check_threshold(metrics, t, allow_empty=allow_empty)
    for t, source, *words in implied or []:
        results.setdefault(
            str(t), check_threshold(metrics, t, allow_empty=allow_empty, source=source, words="".join(words))
        )
    failed = [r["reason"] for r in results.values() if not r["passed"]]

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
    if inconclusive:
        return Verdict(INCONCLUSIVE, results, inconclusive + failed)
    if failed:
        return Verdict(FAIL, results, failed)
    return Verdict(PASS, results)


def incomplete(verdict: Verdict, why: str, findings: int) -> Verdict:
    """The verdict of a run that did not finish: "incomplete", never "pass", whatever its metrics say
    so far. The reasons of the partial verdict follow the first line."""
    first = (
        f"the run is incomplete: {why}; {findings} findings so far; run the same command again to "
        "resume (nothing done is lost)"
    )
    return Verdict(INCOMPLETE, verdict.thresholds, [first, *verdict.reasons])
