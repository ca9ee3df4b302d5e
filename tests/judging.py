"""Judge a technique's analysis as a run with its default gates is judged (:func:`fairprobe.run.runner`
builds the same :func:`~fairprobe.judge.verdict.decide` call): the planted-model tests of issue 39 use
it on real analyses without a run folder."""

from __future__ import annotations

from fairprobe.judge.gates import explainer, namer, worder
from fairprobe.judge.thresholds import Threshold
from fairprobe.judge.verdict import Verdict, decide
from fairprobe.report.sections import Analysis
from fairprobe.technique.registry import get


def judge(technique: str, analysis: Analysis, *, accept_untested: bool = False) -> Verdict:
    tech = get(technique)
    return decide(
        analysis.metrics,
        [],
        implied=[(Threshold.parse(t), *rest) for t, *rest in analysis.implied_thresholds],
        gates=[Threshold.parse(t) for t in tech.default_gates],
        explain=explainer(analysis.metrics, analysis.explanations),
        inconclusive_reasons=analysis.inconclusive,
        evidence=[Threshold.parse(t) for t in tech.evidence_gates],
        accept_untested=accept_untested,
        worded=worder(analysis.metrics, analysis.explanations),
        named=namer(analysis.explanations),
        unit=tech.evidence_unit,
        interval=tech.evidence_interval,
    )
