"""Issue 39 for certificates: the certified share of the decided sentences is a sample estimate, read
with its exact 95% interval. Pass: the whole interval at or above one half; fail: the whole interval
below it; otherwise inconclusive with about how many sentences a pass would need."""

from __future__ import annotations

from judging import judge

from fairprobe.methods.certify.analysis import analyse
from fairprobe.methods.certify.block import CertifyBlock

from .test_analysis import finding


def _judged(certified: int, of: int):
    findings = [finding(i, i < certified) for i in range(of)]
    return judge("certify", analyse(CertifyBlock(model="m"), findings, seed=0))


def test_a_model_certified_on_no_sentence_of_twenty_fails():
    v = _judged(0, 20)
    assert v.verdict == "fail"
    assert v.reasons[0].startswith("0 of 20 decided sentences were certified fair (0%, 95% CI 0–16.8%), its "
                                   "whole 95% interval lies below the 50% gate")  # fmt: skip
    assert v.evidence[0]["status"] == "fails"


def test_every_sentence_certified_passes_once_there_are_enough_of_them():
    v = _judged(6, 6)  # Clopper–Pearson: 6 of 6 is 54.1–100%
    assert (
        v.verdict == "pass" and v.notes[0] == "shown within the gate: the certified share (95% CI 54.1–100%)"
    )


def test_a_few_sentences_are_inconclusive_with_the_sentences_a_pass_would_need():
    v = _judged(4, 4)  # 4 of 4 is 39.8–100%: it passed before issue 39 (the gate read the point value)
    assert v.verdict == "inconclusive"
    (row,) = v.evidence
    assert (row["attribute"], row["status"], row["unit"], row["needed"]) == (
        "the certified share",
        "not shown",
        "sentences",
        6,
    )
    assert v.reasons[0] == (
        "not enough evidence that the certified share is at least 50%: 4 of 4 decided sentences were "
        "certified fair, but its 95% interval 39.8–100% over 4 sentences reaches below 50%; about 6 "
        "sentences would be needed (2 more), at the observed share"
    )
    half = _judged(6, 10)  # 60%, 26.2–87.8%
    assert half.verdict == "inconclusive" and half.evidence[0]["needed"] > 10
