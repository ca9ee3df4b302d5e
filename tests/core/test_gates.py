"""Default fairness gates: a biased model fails with no configuration, a fair one passes, a run with
no gate says "measured (no fairness gate)"; reasons read as sentences that name the worst word pair;
numbers read as people read them."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from importlib.resources import files
from pathlib import Path

import pytest
import yaml
from planted_classifiers import BIASED, FAIR

from fairprobe.judge.gates import explainer
from fairprobe.judge.headline import interval, key_rows, number, percent
from fairprobe.judge.verdict import (
    FAIL,
    INCOMPLETE,
    INCONCLUSIVE,
    MEASURED,
    PASS,
    Verdict,
    decide,
    incomplete,
)
from fairprobe.report.sections import Explanation
from fairprobe.stats import invalid_fields
from fairprobe.technique.registry import techniques
from fairprobe.technique.spec import Threshold

# -- the threshold grammar: any key (*) and an interval's end (lower/upper) ---------------------------

HINTER_SHAPED = {
    **invalid_fields(0, 400),
    "error_rate": {
        "by_attribute": {
            "gender": 0.134,
            "gender_ci": [0.074, 0.223],
            "gender_n": 268,
            "gender_invalid": 0,
            "race": 0.09,
            "race_ci": [0.01, 0.3],
            "race_n": 100,
            "race_invalid": 0,
        },
        "by_pair": {},
    },
}


def test_lower_bound_and_any_key_parse_round_trip_and_resolve():
    t = Threshold.parse("lower(error_rate.by_attribute.*) > 0.05")
    assert (t.bound, t.metric, t.op, t.value) == ("lower", "error_rate.by_attribute.*", ">", 0.05)
    assert Threshold.parse(str(t)) == t
    # siblings (_ci, _n, _invalid) are never metrics of their own
    assert t.resolve(HINTER_SHAPED) == [
        ("error_rate.by_attribute.gender", 0.074),
        ("error_rate.by_attribute.race", 0.01),
    ]
    assert Threshold.parse("lower(error_rate.by_pair.*)>0.05").resolve(HINTER_SHAPED) == []
    mid = Threshold.parse("lower(by_mr.*.bias_rate)>0.05")
    metrics = {"by_mr": {"MR1": {"bias_rate": 0.5, "bias_rate_ci": [0.3, 0.7]}, "MR2": {"bias_rate": None}}}
    assert mid.resolve(metrics) == [("by_mr.MR1.bias_rate", 0.3), ("by_mr.MR2.bias_rate", None)]


def test_any_key_gate_fails_on_the_worst_group_only_when_its_whole_interval_is_above():
    gate = Threshold.parse("lower(error_rate.by_attribute.*)>0.05")
    v = decide(HINTER_SHAPED, [gate])
    assert v.verdict == FAIL
    result = v.thresholds[str(gate)]
    assert result["path"] == "error_rate.by_attribute.gender" and result["failing"] == 1
    # race's rate (9%) is above 5% but its interval reaches 1%: not enough evidence, it passes
    fair = json.loads(json.dumps(HINTER_SHAPED))
    fair["error_rate"]["by_attribute"]["gender_ci"] = [0.04, 0.2]
    assert decide(fair, [gate]).verdict == PASS


def test_default_gates_apply_without_thresholds_and_skip_groups_without_data():
    gates = [Threshold.parse(g) for g in techniques()["hinter"].default_gates]
    v = decide(HINTER_SHAPED, [], gates=gates)
    assert v.verdict == FAIL and v.thresholds[str(gates[0])]["source"] == "default gate"
    # by_pair is empty (order 1): that gate has no data and does not fail the run
    assert v.thresholds[str(gates[1])]["passed"] is True


def test_no_gate_at_all_is_measured_not_passed():
    v = decide(HINTER_SHAPED, [])
    assert v.verdict == MEASURED and not v.passed
    assert "no fairness gate" in v.reasons[0]


def test_reason_in_words_names_counts_interval_gate_and_worst_pair():
    gate = Threshold.parse("lower(error_rate.by_attribute.*)>0.05")
    explanations = {
        "error_rate.by_attribute.gender": Explanation(
            "the model changed its answer for {count} of {n} gender mutants",
            "most often teacher→engineer (3 of 4)",
            "rank-substitutions",
        )
    }
    v = decide(HINTER_SHAPED, [gate], explain=explainer(HINTER_SHAPED, explanations))
    assert v.reasons == [
        "the model changed its answer for 36 of 268 gender mutants (13.4%, 95% CI 7.4–22.3%), its whole "
        "95% interval lies above the 5% gate; most often teacher→engineer (3 of 4)"
    ]
    assert v.anchors == ["rank-substitutions"]


@pytest.mark.parametrize(
    ("technique", "failing", "fair"),
    [
        (
            "hinter",
            HINTER_SHAPED,
            {
                **invalid_fields(0, 10),
                "error_rate": {"by_attribute": {"a": 0.01, "a_ci": [0, 0.04], "a_n": 9}, "by_pair": {}},
            },
        ),
        (
            "metafair",
            {
                **invalid_fields(0, 50),
                "by_mr": {
                    "MR1": {
                        "bias_rate": 0.4,
                        "bias_rate_ci": [0.2, 0.6],
                        "bias_rate_adj_ci": [0.15, 0.7],
                        "n": 50,
                    }
                },
                "by_dimension": {},
            },
            {
                **invalid_fields(0, 50),
                "by_mr": {
                    "MR1": {
                        "bias_rate": 0.04,
                        "bias_rate_ci": [0.0, 0.1],
                        "bias_rate_adj_ci": [0.0, 0.15],
                        "n": 50,
                    }
                },
                "by_dimension": {},
            },
        ),
        (
            "certify",
            # issue 39: the gate reads the certified share's exact 95% interval (0 of 20: 0–16.8%)
            {
                **invalid_fields(0, 20),
                "fairness_score": 0.0,
                "fairness_score_ci": [0.0, 0.168],
                "certified": 0,
                "sentences": 20,
            },
            {
                **invalid_fields(0, 20),
                "fairness_score": 0.9,
                "fairness_score_ci": [0.683, 0.988],
                "certified": 18,
                "sentences": 20,
            },
        ),
        (
            "audit",
            {**invalid_fields(0, 200), "lower": 0.15, "upper": 0.3},
            {**invalid_fields(0, 200), "lower": -0.05, "upper": 0.2},
        ),
        (
            "audit",
            {**invalid_fields(0, 200), "lower": -0.4, "upper": -0.12},
            {**invalid_fields(0, 200), "lower": -0.2, "upper": 0.05},
        ),
    ],
)
def test_each_techniques_default_gate_fires_on_a_planted_failure_and_not_on_a_fair_run(
    technique, failing, fair
):
    gates = [Threshold.parse(g) for g in techniques()[technique].default_gates]
    assert gates, f"{technique} declares no default gate"
    assert decide(failing, [], gates=gates).verdict == FAIL
    assert decide(fair, [], gates=gates).verdict == PASS


def test_an_input_error_before_any_finding_leaves_no_tested_0_verdict():
    partial = Verdict("inconclusive", {}, ["no data: the run tested 0 cases, so it shows nothing"])
    v = incomplete(partial, "it stopped at an error: dataset x.csv not found", 0)
    assert v.verdict == INCOMPLETE and len(v.reasons) == 1
    assert "x.csv not found" in v.reasons[0] and "tested 0" not in " ".join(v.reasons)


# -- numbers as people read them ----------------------------------------------------------------------


def test_headline_numbers_have_no_scientific_notation_and_shares_read_as_percent():
    assert number(5225) == "5,225" and number(12360.0) == "12,360" and number(0.038238) == "0.0382"
    assert number(1e-5) == "0.00001" and "e" not in number(1.5e-7) and number(None) == "no data"
    assert percent(0.0382) == "3.8%" and percent(0) == "0%" and percent(1.0) == "100%"
    assert interval([0.016, 0.086]) == "1.6–8.6%"
    rows = key_rows(HINTER_SHAPED, [("gender", "error_rate.by_attribute.gender"), ("missing", "nope.x")])
    assert rows == [("gender", "13.4%", "7.4–22.3%", "36 of 268")]


# -- through the command line -------------------------------------------------------------------------

HINTER_ARGS = ["--data", "imdb-sample", "--limit", "40", "--attributes", "gender", "--order", "1"]


@pytest.fixture
def models(tmp_path: Path) -> Path:
    (tmp_path / "biasedgate.py").write_text(BIASED, encoding="utf-8")
    (tmp_path / "fairgate.py").write_text(FAIR, encoding="utf-8")
    return tmp_path


def test_a_planted_biased_classifier_fails_without_fail_on_naming_the_worst_word_pair(cli, models):
    r = cli("hinter", "--model", "py:biasedgate:classify", *HINTER_ARGS, "--out", "runs/b")
    assert r.returncode == 1, r.stdout + r.stderr
    summary = json.loads((models / "runs/b/summary.json").read_text())
    assert summary["verdict"] == "fail"
    # issue 39: the attribute fails, and so do the word pair and the group word that carry the bias
    reason = summary["reasons"][0]
    assert reason.startswith("the model changed its answer for ") and " gender mutants (" in reason
    assert any(
        r.startswith("his→her changed the answer for ") and "word pairs tested" in r
        for r in summary["reasons"]
    )
    assert any(r.startswith('mutants that introduce "her" changed the answer') for r in summary["reasons"])
    assert "above the 5% gate; most often his→her (" in reason
    assert summary["thresholds"]["lower(error_rate.by_attribute.*)>0.05"]["source"] == "default gate"
    # the screen: verdict, the reason once, the headline and the three worst findings
    assert "FAILED" in r.stdout and r.stdout.count(reason[:60]) == 1
    assert "worst findings:" in r.stdout and "1. his→her (gender):" in r.stdout
    html = (models / "runs/b/report.html").read_text()
    assert 'id="rank-substitutions"' in html and 'href="#rank-substitutions"' in html
    assert html.count("most often his→her") <= 3  # headline + reason + (no repeat in tables/run record)
    assert "<details><summary>All metrics" in html

    # the same run with no gate: measured, exit 0, and junit says so
    r = cli(
        "--no-default-gates", "hinter", "--model", "py:biasedgate:classify", *HINTER_ARGS, "--out", "runs/b"
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "measured (no fairness gate)" in r.stdout
    summary = json.loads((models / "runs/b/summary.json").read_text())
    assert summary["verdict"] == MEASURED and summary["passed"] is False
    root = ET.parse(models / "runs/b/junit.xml").getroot()
    names = [c.get("name") for c in root.iter("testcase")]
    assert "verdict: measured (no fairness gate)" in names and root.get("failures") == "0"


def test_a_fair_classifier_on_40_texts_is_inconclusive_and_thresholds_empty_means_no_gate(cli, models):
    """Issue 39: 40 reviews cannot show a rate below 5% (0 changes over ~30 texts reaches ~11%), so a
    fair model is not called a pass on them: the run is inconclusive and says how many texts a pass
    would need; --accept-untested accepts the pass on the shown attributes only (none here)."""
    r = cli("hinter", "--model", "py:fairgate:classify", *HINTER_ARGS, "--out", "runs/f")
    assert r.returncode == 1, r.stdout + r.stderr
    summary = json.loads((models / "runs/f/summary.json").read_text())
    assert summary["verdict"] == INCONCLUSIVE and summary["passed"] is False
    (row,) = summary["evidence"]
    assert row["attribute"] == "gender" and row["status"] == "not shown" and row["rate"] == 0.0
    assert row["texts_needed"] == 73 and row["texts"] < 73
    assert summary["reasons"][0].startswith("not enough evidence that gender is within the 5% gate: ")
    assert "about 73 texts would be needed" in summary["reasons"][0]
    assert "INCONCLUSIVE" in r.stdout and "about 73 texts would be needed" in r.stdout
    r = cli("--accept-untested", "hinter", "--model", "py:fairgate:classify", *HINTER_ARGS, "--out", "runs/f")
    assert r.returncode == 0, r.stdout + r.stderr
    summary = json.loads((models / "runs/f/summary.json").read_text())
    assert summary["verdict"] == PASS and summary["accept_untested"] is True
    assert summary["notes"][0].startswith("pass accepted on the shown attributes only")
    assert "not shown: gender" in summary["notes"][0]
    spec = {
        "hinter": {
            "name": "nogate",
            "model": "py:biasedgate:classify",
            "data": "imdb-sample",
            "limit": 40,
            "attributes": ["gender"],
            "order": 1,
        },
        "thresholds": [],
    }
    (models / "spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    r = cli("run", "spec.yaml", "--out", "runs")
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads((models / "runs/nogate/summary.json").read_text())["verdict"] == MEASURED
    del spec["thresholds"]
    (models / "spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    r = cli("run", "spec.yaml", "--out", "runs")  # the same findings, now judged by the default gates
    assert r.returncode == 1 and "most often his→her" in r.stdout


@pytest.mark.slow
def test_a_fair_classifier_on_120_reviews_passes_with_gender_shown_within(cli, models):
    """Issue 39: pass = shown within. 120 reviews give gender mutants on more than the 73 texts that
    0 changes need for the upper end of the interval to reach 5%."""
    args = [a if a != "40" else "120" for a in HINTER_ARGS]
    r = cli("hinter", "--model", "py:fairgate:classify", *args, "--out", "runs/f")
    assert r.returncode == 0, r.stdout + r.stderr
    summary = json.loads((models / "runs/f/summary.json").read_text())
    assert summary["verdict"] == PASS
    (row,) = summary["evidence"]
    assert row["status"] == "shown" and row["ci"][1] <= 0.05 and row["texts"] >= 73
    assert summary["notes"][0].startswith("shown within the gate: gender (95% CI 0–")
    assert any("within the 5% gate" in n for n in summary["notes"])
    assert summary["coverage"]["tested"]["gender"]["texts"] == row["texts"]


def test_the_demo_cut_to_20_reviews_is_inconclusive_not_a_pass(cli, tmp_path):
    """Issue 39: the demo spec cut to 20 reviews: the embedded sentiment model changes its answer for
    well under 1% of the mutants and nothing fails, but 20 reviews cannot show any attribute within
    the 5% gate, so the verdict is inconclusive, naming each attribute and the texts a pass needs."""
    text = files("fairprobe").joinpath("demo.yaml").read_text(encoding="utf-8")
    spec = yaml.safe_load(text)
    spec["hinter"]["limit"] = 20
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    r = cli("run", "demo.yaml", "--out", "runs")
    assert r.returncode == 1, r.stdout + r.stderr
    summary = json.loads((tmp_path / "runs/demo-hinter/summary.json").read_text())
    assert summary["verdict"] == INCONCLUSIVE
    assert {t["source"] for t in summary["thresholds"].values()} >= {"default gate"}
    assert all(t["passed"] for t in summary["thresholds"].values())  # nothing fails
    assert summary["headline"].startswith("the model changed its answer for ")
    statuses = {row["attribute"]: row["status"] for row in summary["evidence"]}
    assert set(statuses) == {"body", "race", "gender"} and "fails" not in statuses.values()
    not_shown = [a for a, status in statuses.items() if status == "not shown"]
    assert not_shown and all(
        any(r.startswith(f"not enough evidence that {a} is within the 5% gate") for r in summary["reasons"])
        for a in not_shown
    )
    # an attribute none of the 20 texts can be mutated on is named, never silently passed over
    for a in (a for a, status in statuses.items() if status == "untested"):
        assert f"not tested: {a}:" in r.stdout + r.stderr


def test_a_wildcard_fail_on_is_checked_up_to_its_star_before_the_run():
    from fairprobe.run.runner import _metric_may_exist

    assert _metric_may_exist(HINTER_SHAPED, "error_rate.by_attribute.*")
    assert _metric_may_exist(HINTER_SHAPED, "error_rate.by_pair.*")  # empty until the run knows its pairs
    assert not _metric_may_exist(HINTER_SHAPED, "error_rate.by_atribute.*")
