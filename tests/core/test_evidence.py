"""The decision rule read in both directions (issue 39, fairprobe.judge.evidence): slices fail only when the
interval corrected for the slices tested lies above the gate; a gated attribute passes only when the
upper end of its interval is within the gate; anything else is inconclusive with the texts needed."""

from __future__ import annotations

import pytest

from fairprobe.judge.evidence import (
    NOT_SHOWN,
    SHOWN,
    UNTESTED,
    Slice,
    adjusted_interval,
    assess,
    fill_coverage,
    slice_family,
    texts_needed,
)
from fairprobe.judge.thresholds import Threshold
from fairprobe.judge.verdict import FAIL, INCONCLUSIVE, PASS, decide
from fairprobe.stats import invalid_fields, wilson_interval

SHOW = [Threshold.parse("upper(error_rate.by_attribute.*)<=0.05")]
FAIL_GATES = [
    Threshold.parse("lower(error_rate.by_attribute.*)>0.05"),
    Threshold.parse("lower_adj(slices.word_pair.rates.*)>0.05"),
]


def _metrics(attribute: dict, pairs: list[Slice]) -> dict:
    return {
        **invalid_fields(0, 500),
        "error_rate": {"by_attribute": attribute},
        "slices": {"word_pair": slice_family(pairs, what="word pairs")},
    }


def test_texts_needed_is_the_smallest_run_whose_upper_end_reaches_the_gate():
    assert texts_needed(0.0, 0.05) == 73  # 0 of N: Wilson's upper end 3.84 / (N + 3.84) <= 5%
    assert wilson_interval(0, 73)[1] <= 0.05 < wilson_interval(0, 72)[1]
    n = texts_needed(0.02, 0.05)
    assert wilson_interval(0.02 * n, n)[1] <= 0.05 < wilson_interval(0.02 * (n - 1), n - 1)[1]
    assert texts_needed(0.05, 0.05) is None and texts_needed(0.3, 0.05) is None


def test_one_biased_execution_of_one_fails_no_gate_but_eight_of_eleven_over_240_pairs_does():
    lo, hi = adjusted_interval(1.0, 1, 1)
    assert lo == pytest.approx(0.025) and hi == 1.0  # Clopper–Pearson: 1 of 1 is 2.5–100%
    assert wilson_interval(1, 1)[0] > 0.05  # (Wilson would have failed it)
    assert adjusted_interval(8 / 11, 11, 240)[0] > 0.05  # the he→she: still fails, corrected
    assert adjusted_interval(8 / 11, 11, 240)[0] < wilson_interval(8, 11)[0]  # but the interval is wider


def test_a_bias_in_one_pair_among_many_fails_naming_it_and_the_others_stay_quiet():
    quiet = [Slice(f"w{i}→v{i}", 0, 6, 6) for i in range(200)]
    metrics = _metrics(
        {"gender": 12 / 1211, "gender_ci": [0.004, 0.02], "gender_n": 1211, "gender_texts": 200},
        [Slice("he→she", 11, 12, 12), *quiet],
    )
    rates = metrics["slices"]["word_pair"]["rates"]
    assert metrics["slices"]["word_pair"]["tested"] == 201 and rates["he→she_count"] == 11
    v = decide(metrics, [], gates=FAIL_GATES, evidence=SHOW)
    assert v.verdict == FAIL
    (reason,) = v.reasons
    assert "he→she" in reason and "w0→v0" not in reason
    assert v.evidence[0]["status"] == SHOWN  # the attribute itself is within: the pair is the finding


def test_a_fair_attribute_on_few_texts_is_inconclusive_and_says_how_many_texts_a_pass_needs():
    metrics = _metrics(
        {"race": 0.0, "race_ci": [0.0, 0.194], "race_n": 246, "race_texts": 16, "body": None, "body_n": 0},
        [Slice("Black→white", 0, 20, 8)],
    )
    v = decide(metrics, [], gates=FAIL_GATES, evidence=SHOW)
    assert v.verdict == INCONCLUSIVE and not v.passed
    assert v.reasons[0] == (
        "not enough evidence that race is within the 5% gate: error_rate.by_attribute.race is 0%, but "
        "16 texts can only show a rate below 19.4% (95% CI 0–19.4%); about 73 texts would be needed at "
        "the observed rate"
    )
    statuses = {r["attribute"]: r["status"] for r in v.evidence}
    assert statuses == {"race": NOT_SHOWN, "body": UNTESTED}
    accepted = decide(metrics, [], gates=FAIL_GATES, evidence=SHOW, accept_untested=True)
    assert accepted.verdict == PASS
    assert accepted.notes[0].startswith("pass accepted on the shown attributes only")
    assert "not tested (no data): body" in accepted.notes[1]


def test_a_fair_attribute_on_many_texts_passes_and_says_it_was_shown():
    metrics = _metrics(
        {"gender": 0.0, "gender_ci": [0.0, 0.023], "gender_n": 1766, "gender_texts": 163},
        [Slice("he→she", 0, 40, 40)],
    )
    v = decide(metrics, [], gates=FAIL_GATES, evidence=SHOW)
    assert v.verdict == PASS and v.notes[0] == "shown within the gate: gender (95% CI 0–2.3%)"


def test_assess_marks_a_failing_attribute_and_reads_the_corrected_interval_when_there_is_one():
    metrics = {"by_dimension": {"gender": {"bias_rate": 1.0, "bias_rate_ci": [0.2, 1.0],
                                           "bias_rate_adj_ci": [0.025, 1.0], "n": 1, "texts": 1}}}  # fmt: skip
    (row,) = assess(metrics, [Threshold.parse("upper(by_dimension.*.bias_rate)<=0.05")])
    assert row["attribute"] == "gender" and row["status"] == NOT_SHOWN and row["texts"] == 1
    metrics["by_dimension"]["gender"]["bias_rate_adj_ci"] = [0.3, 1.0]
    (row,) = assess(metrics, [Threshold.parse("upper(by_dimension.*.bias_rate)<=0.05")])
    assert row["status"] == "fails"


def test_coverage_fills_the_number_of_texts_into_its_reasons():
    cov = {"tested": {"gender": {"mutants": 9}}, "untested": {"age": "none of the {texts} texts mentions"}}
    assert fill_coverage(cov, {"texts": 16})["untested"]["age"] == "none of the 16 texts mentions"
    assert fill_coverage(cov, {})["untested"]["age"] == "none of the the texts mentions".replace(
        "the the", "the"
    )


# -- issue 39 for every technique: one-sided shares on either side, two-sided gaps, other units --------


def test_a_share_gated_from_below_needs_the_lower_end_at_the_gate_searched_with_its_own_interval():
    from fairprobe.judge.evidence import share_needed
    from fairprobe.stats import clopper_pearson_interval

    n = share_needed(0.75, 0.5, "lower", interval="clopper-pearson")
    assert clopper_pearson_interval(round(0.75 * n), n)[0] >= 0.5  # n shows it ...
    assert clopper_pearson_interval(round(0.75 * (n - 2)), n - 2)[0] < 0.5  # ... a few fewer do not
    assert share_needed(1.0, 0.5, "lower", interval="clopper-pearson") == 6  # 6 of 6: 54.1–100%
    assert share_needed(0.5, 0.5, "lower") is None and share_needed(0.3, 0.5, "lower") is None


def test_width_needed_scales_the_end_beyond_the_gate_as_one_over_root_n():
    from fairprobe.judge.evidence import width_needed

    # the audit's example: estimate 0.06 in [-0.04, 0.16] after 250 queries, gate ±0.1
    assert width_needed(0.06, [-0.04, 0.16], 250, {"upper": 0.1, "lower": -0.1}) == 1563  # 250·(0.1/0.04)²
    assert width_needed(0.0, [-0.05, 0.05], 250, {"upper": 0.1, "lower": -0.1}) is None  # already within
    assert width_needed(0.12, [0.05, 0.19], 250, {"upper": 0.1, "lower": -0.1}) is None  # estimate beyond
    assert width_needed(0.0, [-0.3, 0.2], 100, {"upper": 0.1, "lower": -0.1}) == 900  # the wider side


GAP = [Threshold.parse("upper(gap)<=0.1"), Threshold.parse("lower(gap)>=-0.1")]
GAP_FAILS = [Threshold.parse("lower(gap)>0.1"), Threshold.parse("upper(gap)<-0.1")]


def test_a_gap_gated_on_both_sides_is_shown_only_within_both_and_says_the_count_in_its_unit():
    def run(ci, value=0.06):
        m = {**invalid_fields(0, 250), "gap": value, "gap_ci": ci, "gap_n": 250}
        return decide(m, [], gates=GAP_FAILS, evidence=GAP, unit="queries")

    v = run([-0.04, 0.16])
    assert v.verdict == INCONCLUSIVE
    (row,) = v.evidence
    assert row["status"] == NOT_SHOWN and row["needed"] == 1563 and row["unit"] == "queries"
    assert "texts_needed" not in row and row["share"] is False
    assert v.reasons[0] == (
        "not enough evidence that gap is within ±0.1: gap is 0.06, but its interval [−0.04, 0.16] over "
        "250 queries reaches above 0.1; about 1,563 queries would be needed (1,313 more), if the interval "
        "narrows as 1/√queries around the estimate 0.06"
    )
    assert run([-0.05, 0.09], 0.02).verdict == PASS
    failed = run([0.11, 0.3], 0.2)
    assert failed.verdict == FAIL and failed.evidence[0]["status"] == "fails"
    beyond = run([0.05, 0.25], 0.15)  # the estimate itself is beyond: no amount of data shows it within
    assert beyond.verdict == INCONCLUSIVE and beyond.evidence[0]["needed"] is None
    assert "no number of queries would show it within ±0.1" in beyond.reasons[0]


def test_a_quantity_beyond_its_gate_is_never_a_pass_even_when_the_fail_gate_does_not_fail():
    # two audit seeds: seed 0's interval wholly above 0.1, seed 1's within; the fail gate on the hull
    # (every seed beyond) does not fail, and a pass would be wrong
    seeds = {
        "0": {"estimate": 0.15, "estimate_ci": [0.12, 0.18]},
        "1": {"estimate": 0.0, "estimate_ci": [-0.04, 0.04]},
    }
    m = {**invalid_fields(0, 500), "lower": -0.04, "upper": 0.18, "seeds": seeds}
    evidence = [
        Threshold.parse("upper(seeds.*.estimate)<=0.1"),
        Threshold.parse("lower(seeds.*.estimate)>=-0.1"),
    ]
    v = decide(m, [], gates=[Threshold.parse("lower>0.1"), Threshold.parse("upper<-0.1")], evidence=evidence,
               named=lambda p: f"seed {p.split('.')[1]}")  # fmt: skip
    assert v.verdict == INCONCLUSIVE
    assert {r["attribute"]: r["status"] for r in v.evidence} == {"seed 0": "fails", "seed 1": SHOWN}
    assert v.reasons[0].startswith("seed 0 lies beyond the gate on its own") and "disagrees" in v.reasons[0]
    accepted = decide(m, [], gates=[Threshold.parse("lower>0.1")], evidence=evidence, accept_untested=True)
    assert accepted.verdict == INCONCLUSIVE  # accept_untested accepts missing evidence, not contrary evidence


def test_the_report_table_reads_shares_as_percentages_and_gaps_as_numbers():
    from fairprobe.judge.evidence import table_rows

    m = {**invalid_fields(0, 250), "gap": 0.06, "gap_ci": [-0.04, 0.16], "gap_n": 250,
         "share": 0.75, "share_ci": [0.194, 0.994], "share_n": 4}  # fmt: skip
    rows = assess(
        m, [*GAP, Threshold.parse("lower(share)>=0.5")], unit="sentences", interval="clopper-pearson"
    )
    gap, share = table_rows(rows)
    assert gap == [
        "gap",
        NOT_SHOWN,
        "0.06",
        "[−0.04, 0.16]",
        "250 sentences",
        "within ±0.1",
        "1,563 sentences",
    ]
    assert share[:6] == ["share", NOT_SHOWN, "75%", "19.4–99.4%", "4 sentences", "at least 50%"]
