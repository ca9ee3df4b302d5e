"""Verdicts that can never be a false PASS (issue 16): no-data rates, INVALID answers, exit codes."""

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from fairprobe.errors import InternalError
from fairprobe.judge.verdict import FAIL, INCONCLUSIVE, MEASURED, PASS, decide
from fairprobe.stats import invalid_fields, rate_fields
from fairprobe.technique.spec import Threshold


def test_a_threshold_on_a_rate_without_data_fails_and_says_why():
    metrics = {**invalid_fields(0, 10), "error_rate": rate_fields("intersectional", [], seed=0)}
    assert metrics["error_rate"] == {"intersectional": None, "intersectional_ci": None, "intersectional_n": 0}
    v = decide(metrics, [Threshold.parse("error_rate.intersectional>0.05")])
    assert v.verdict == FAIL
    result = v.thresholds["error_rate.intersectional>0.05"]
    assert result["actual"] is None and result["passed"] is False
    assert "no data" in result["reason"]
    # The user may accept that explicitly.
    assert (
        decide(metrics, [Threshold.parse("error_rate.intersectional>0.05")], allow_empty=True).verdict == PASS
    )


def test_a_metric_the_run_did_not_produce_fails_instead_of_passing():
    v = decide({**invalid_fields(0, 3), "rate": 0.1}, [Threshold.parse("by_pair.race+gender>0.05")])
    assert v.verdict == FAIL and "not found" in v.reasons[0]


def test_a_run_that_tested_nothing_is_inconclusive_even_without_thresholds():
    v = decide(invalid_fields(0, 0), [])
    assert v.verdict == INCONCLUSIVE and "no data" in v.reasons[0]
    # nothing to judge it by: measured, never "pass" (fairprobe.judge.gates)
    assert decide(invalid_fields(0, 0), [], allow_empty=True).verdict == MEASURED


@pytest.mark.parametrize(
    ("invalid", "tested", "limit", "expected"),
    [(5, 10, 0.5, INCONCLUSIVE), (4, 10, 0.5, MEASURED), (1, 10, 0.1, INCONCLUSIVE)],
)
def test_the_default_invalid_rate_rule_and_its_setting(invalid, tested, limit, expected):
    # no fail condition: readable answers make the run "measured" (no fairness gate), never "pass"
    v = decide({**invalid_fields(invalid, tested), "accuracy": 0.9}, [], max_invalid_rate=limit)
    assert v.verdict == expected
    rule = v.thresholds[f"invalid_rate>={limit:g}"]
    assert rule["actual"] == invalid / tested and rule["passed"] is (expected == MEASURED)
    gated = decide(
        {**invalid_fields(invalid, tested), "accuracy": 0.9},
        [Threshold.parse("accuracy<0.5")],
        max_invalid_rate=limit,
    )
    assert gated.verdict == (PASS if expected == MEASURED else INCONCLUSIVE)


def test_inconclusive_wins_over_a_passing_threshold():
    v = decide({**invalid_fields(9, 10), "accuracy": 1.0}, [Threshold.parse("accuracy<0.5")])
    assert v.verdict == INCONCLUSIVE and not v.passed


# -- through the command line ------------------------------------------------------------------------

ALL_INVALID = "def classify(texts):\n    return ['INVALID' for _ in texts]\n"


def test_an_all_invalid_model_exits_1_inconclusive_and_reports_the_count(cli, labelled, tmp_path):
    (tmp_path / "invalid.py").write_text(ALL_INVALID)
    labelled.write_text("accuracy:\n  model: py:invalid:classify\n  data: data.csv\n")
    r = cli("run", "spec.yaml", "--out", "runs", "--fail-on", "accuracy<0.1")
    assert r.returncode == 1, r.stderr
    assert "INCONCLUSIVE" in r.stdout and "INVALID" in r.stdout
    summary = json.loads((tmp_path / "runs/accuracy/summary.json").read_text())
    assert summary["verdict"] == "inconclusive" and summary["passed"] is False
    assert summary["metrics"]["invalid"] == 10 and summary["metrics"]["invalid_rate"] == 1.0
    html = (tmp_path / "runs/accuracy/report.html").read_text()
    assert "INCONCLUSIVE" in html and "invalid <b>10</b>" in html
    root = ET.parse(tmp_path / "runs/accuracy/junit.xml").getroot()
    failed = [c.get("name") for c in root.iter("testcase") if c.find("failure") is not None]
    assert "verdict: inconclusive" in failed
    # Even at max_invalid_rate 1 a run whose every answer is INVALID is never conclusive.
    r = cli("--max-invalid-rate", "1", "run", "spec.yaml", "--out", "runs2")
    assert r.returncode == 1 and "INCONCLUSIVE" in r.stdout


def test_max_invalid_rate_is_the_users_to_set(cli, labelled, tmp_path):
    # Invalid on 6 of the 10 texts: inconclusive by default, judged by the thresholds at 0.7.
    (tmp_path / "some.py").write_text(
        "def classify(texts):\n    return ['INVALID' if int(t.split()[-1]) < 6 else 'POS' for t in texts]\n"
    )
    labelled.write_text("accuracy:\n  model: py:some:classify\n  data: data.csv\n")
    r = cli("run", "spec.yaml", "--out", "runs")
    assert r.returncode == 1 and "INCONCLUSIVE" in r.stdout
    r = cli("--max-invalid-rate", "0.7", "run", "spec.yaml", "--out", "runs")
    assert r.returncode == 0, r.stdout + r.stderr
    labelled.write_text(labelled.read_text() + "  max_invalid_rate: 0.7\n")
    assert cli("run", "spec.yaml", "--out", "runs3").returncode == 0


def test_an_empty_dataset_never_passes(cli, tmp_path):
    (tmp_path / "data.csv").write_text("text,label\n")
    (tmp_path / "ok.py").write_text("def classify(texts):\n    return ['POS' for _ in texts]\n")
    (tmp_path / "spec.yaml").write_text("accuracy:\n  model: py:ok:classify\n  data: data.csv\n")
    r = cli("run", "spec.yaml", "--out", "runs", "--fail-on", "accuracy<0.5")
    # A file without rows is an input error (exit 2, one line); a dataset that yields no test case
    # is "no data" (exit 1; see each technique's tests).
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "no rows" in r.stderr


def test_allow_empty_in_the_spec_accepts_a_no_data_threshold(cli, labelled, tmp_path):
    labelled.write_text(
        "allow_empty: true\naccuracy:\n  model: py:counting:classify\n  data: data.csv\n"
        "  thresholds: ['by_label.NEG.recall < 0.5']\n"
    )
    assert cli("run", "spec.yaml", "--out", "runs").returncode == 0


# -- internal errors: exit 3, traceback in error.log -------------------------------------------------


def test_a_bug_inside_a_run_is_exit_3_with_the_traceback_in_error_log(tmp_path, monkeypatch):
    """A fake technique whose execute has a bug (a real bug cannot be planted in the shipped ones)."""
    import fairprobe.run.runner as runner
    from fairprobe.methods.accuracy.technique import TECHNIQUE, AccuracyBlock
    from fairprobe.technique.spec import BlockSpec

    def buggy_execute(block, ctx):
        ctx.add_findings(
            [{"id": "a", "text": "x", "expected": ["POS"], "predicted": ["POS"], "correct": True}]
        )
        return 1 / 0

    fake = type(TECHNIQUE)(**{**TECHNIQUE.__dict__, "execute": buggy_execute, "validate": None})
    monkeypatch.setattr(runner, "get_technique", lambda name: fake)
    monkeypatch.setenv("FAIRPROBE_CACHE", "off")
    block = AccuracyBlock(model="py:x:y", data="d.csv")
    with pytest.raises(InternalError) as info:
        runner.run_block(BlockSpec("accuracy", "acc", block, 0, []), tmp_path / "run")
    assert info.value.exit_code == 3 and "error.log" in str(info.value)
    log = (tmp_path / "run" / "error.log").read_text()
    assert "ZeroDivisionError" in log and "Traceback" in log
    # What was done before the bug stays on disk.
    assert (tmp_path / "run" / "findings.jsonl").read_text().count("\n") == 1


def test_an_exception_outside_fairprobe_errors_exits_3_with_one_line(tmp_path):
    code = (
        "import sys, fairprobe.cli as c, fairprobe.technique.registry as r\n"
        "def boom(): raise RuntimeError('[red]kaboom[/]')\n"
        "r.techniques.cache_clear(); r.techniques = boom\n"
        "sys.argv = ['fairprobe', 'init', 'x.yaml']\n"
        "c.main()\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr and "internal error" in r.stderr
    assert "[red]kaboom[/]" in r.stderr  # user text printed as text, not as console markup
    log = r.stderr.split("traceback saved to ")[1].split(";")[0].strip()
    assert "RuntimeError" in open(log).read()


def test_a_bar_without_data_is_drawn_as_no_data():
    from fairprobe.report.sections import BarChart
    from fairprobe.report.svg import bar_chart

    svg = str(bar_chart(BarChart("rates", ["a", "b"], [0.2, None], ci=[(0.1, 0.3), None])))
    assert svg.count('class="bar"') == 1 and "no data" in svg


def test_a_techniques_own_reason_makes_a_passing_run_inconclusive():
    metrics = {**invalid_fields(0, 10), "error_rate": 0.0}
    assert decide(metrics, [Threshold.parse("error_rate>0.1")]).verdict == PASS
    verdict = decide(
        metrics, [Threshold.parse("error_rate>0.1")], inconclusive_reasons=["the judge failed its controls"]
    )
    assert verdict.verdict == INCONCLUSIVE
    assert verdict.reasons == ["the judge failed its controls"]
