"""Issue 39 for BAFA: pass means every seed's interval is shown within ±0.1; fail means every seed's
interval lies beyond it; anything else is inconclusive, with about how many queries would decide it
(bafa.txt §6, "From failure discovery to quantified uncertainty": non-compliance only when the whole
interval lies beyond the standard)."""

from __future__ import annotations

from judging import judge

from fairprobe.methods.audit.analysis import analyse
from fairprobe.methods.audit.block import AuditBlock

from .test_seeds_and_intervals import BASE, _final


def _judged(*finals: dict):
    return judge("audit", analyse(AuditBlock(**BASE), list(finals), 0))


def test_an_interval_straddling_the_gate_is_inconclusive_with_the_queries_a_pass_would_need():
    v = _judged(_final(0, -0.04, 0.16, queries=250, stopped_by="budget"))
    assert v.verdict == "inconclusive" and not v.passed  # it passed before issue 39
    (row,) = v.evidence
    assert (row["attribute"], row["status"], row["unit"], row["needed"]) == (
        "seed 0",
        "not shown",
        "queries",
        1563,
    )
    assert v.reasons[0] == (
        "not enough evidence that seed 0 is within ±0.1: seed 0's audited ΔAUC (group 0 minus group 1) is "
        "estimated at 0.06 after 250 queries (the budget of 250 queries was spent), but its interval "
        "[−0.04, 0.16] over 250 queries reaches above 0.1; about 1,563 queries would be needed (1,313 more), "
        "if the interval narrows as 1/√queries around the estimate 0.06"
    )


def test_every_seed_within_passes_and_every_seed_beyond_fails():
    shown = _judged(_final(0, -0.03, 0.05), _final(1, -0.01, 0.07))
    assert shown.verdict == "pass" and shown.notes[0].startswith("shown within the gate: seed 0")
    failed = _judged(_final(0, 0.12, 0.2), _final(1, 0.11, 0.19))
    assert failed.verdict == "fail"
    assert "so even its lower end" in failed.reasons[0]


def test_one_seed_within_and_one_beyond_is_inconclusive_not_a_pass():
    v = _judged(_final(0, -0.03, 0.05), _final(1, 0.12, 0.2))
    assert v.verdict == "inconclusive"
    assert {r["attribute"]: r["status"] for r in v.evidence} == {"seed 0": "shown", "seed 1": "fails"}
    assert v.reasons[0].startswith("seed 1 lies beyond the gate on its own")


def test_a_pool_queried_whole_says_a_larger_pool_is_needed():
    v = _judged(_final(0, -0.02, 0.13, queries=200, stopped_by="pool"))
    assert v.verdict == "inconclusive"
    assert "the whole pool was queried: a larger pool_size is needed" in v.reasons[0]
