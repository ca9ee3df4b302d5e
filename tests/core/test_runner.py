import json
import xml.etree.ElementTree as ET


def test_run_writes_four_reports_with_the_summary_schema(cli, labelled, tmp_path, calls):
    r = cli("run", "spec.yaml", "--out", "runs")
    assert r.returncode == 0, r.stderr
    run_dir = tmp_path / "runs" / "accuracy"
    for name in ("spec.yaml", "run.db", "findings.jsonl", "summary.json", "report.html", "junit.xml"):
        assert (run_dir / name).is_file(), name
    summary = json.loads((run_dir / "summary.json").read_text())
    for key in (
        "fairprobe_version",
        "technique",
        "model",
        "started",
        "finished",
        "metrics",
        "thresholds",
        "passed",
    ):
        assert key in summary
    # 10 texts, the model is wrong on exactly one (r3 is POS but predicted NEG).
    assert summary["metrics"]["accuracy"] == 0.9
    lo, hi = summary["metrics"]["accuracy_ci"]
    assert lo <= 0.9 <= hi
    # No user threshold and no default gate (accuracy is not a fairness measure): only the default
    # rule that the answers were readable (issue 16) -> measured, exit 0, never "pass".
    assert summary["passed"] is False and summary["verdict"] == "measured"
    assert list(summary["thresholds"]) == ["invalid_rate>=0.5"]
    assert summary["thresholds"]["invalid_rate>=0.5"]["actual"] == 0.0
    assert summary["model"]["fingerprints"][0]["backend"]
    findings = [json.loads(line) for line in (run_dir / "findings.jsonl").read_text().splitlines()]
    assert len(findings) == 10 and sum(not f["correct"] for f in findings) == 1
    assert calls() == 10


def test_fail_on_exits_1_and_junit_records_the_failure(cli, labelled, tmp_path, calls):
    r = cli("run", "spec.yaml", "--out", "runs", "--fail-on", "accuracy<0.95")
    assert r.returncode == 1, r.stderr
    summary = json.loads((tmp_path / "runs/accuracy/summary.json").read_text())
    assert summary["passed"] is False
    assert summary["thresholds"]["accuracy<0.95"]["actual"] == 0.9
    root = ET.parse(tmp_path / "runs/accuracy/junit.xml").getroot()
    assert int(root.get("failures")) >= 1
    failed = [c.get("name") for c in root.iter("testcase") if c.find("failure") is not None]
    assert "accuracy<0.95" in failed and "overall" in failed
    assert cli("run", "spec.yaml", "--out", "runs", "--fail-on", "accuracy<0.5").returncode == 0


def test_same_spec_resumes_without_model_calls_and_other_spec_needs_overwrite(cli, labelled, tmp_path, calls):
    assert cli("run", "spec.yaml", "--out", "runs").returncode == 0
    assert calls() == 10
    assert cli("run", "spec.yaml", "--out", "runs").returncode == 0
    assert calls() == 10  # resumed: nothing re-sent
    labelled.write_text(labelled.read_text() + "  limit: 4\n")
    r = cli("run", "spec.yaml", "--out", "runs")
    assert r.returncode == 2
    assert "different spec" in r.stderr and "--overwrite" in r.stderr and "Traceback" not in r.stderr
    r = cli("run", "spec.yaml", "--out", "runs", "--overwrite")
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "runs/accuracy/summary.json").read_text())
    assert summary["metrics"]["n"] == 4
    assert calls() == 10  # the response cache survives --overwrite


def test_report_rerenders_from_run_db(cli, labelled, tmp_path, calls):
    assert cli("run", "spec.yaml", "--out", "runs").returncode == 0
    run_dir = tmp_path / "runs/accuracy"
    before = json.loads((run_dir / "summary.json").read_text())
    for name in ("findings.jsonl", "summary.json", "report.html", "junit.xml"):
        (run_dir / name).unlink()
    r = cli("report", str(run_dir))
    assert r.returncode == 0, r.stderr
    after = json.loads((run_dir / "summary.json").read_text())
    assert after["metrics"] == before["metrics"]
    assert len((run_dir / "findings.jsonl").read_text().splitlines()) == 10
    assert cli("report", str(tmp_path)).returncode == 2


def test_model_output_is_escaped_in_html(cli, tmp_path):
    (tmp_path / "data.csv").write_text("text,label\nhello,POS\nworld,NEG\n")
    (tmp_path / "evil.py").write_text(
        "def classify(texts):\n    return ['<script>alert(1)</script>' for _ in texts]\n"
    )
    (tmp_path / "spec.yaml").write_text("accuracy:\n  model: py:evil:classify\n  data: data.csv\n")
    r = cli("run", "spec.yaml", "--out", "runs")
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "runs/accuracy/report.html").read_text()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # confusion-matrix cell, escaped
    assert "\\u003cscript\\u003e" in html  # the findings data island
    assert html.count("<script") == 2  # the data island and the table script, nothing else
    for fetch in ('src="http', "src='http", 'href="http', "@import", "url(http"):
        assert fetch not in html  # self-contained: nothing loaded from the network


def test_init_writes_a_spec_that_validates(cli, tmp_path):
    r = cli("init", "my.yaml")
    assert r.returncode == 0, r.stderr
    from fairprobe.technique.spec import parse_spec

    blocks = parse_spec((tmp_path / "my.yaml").read_text(), "my.yaml")
    assert blocks
    assert cli("init", "my.yaml").returncode == 2  # exists, no --force


def test_version_and_help_list_subcommands(cli):
    r = cli("--version")
    assert r.returncode == 0 and r.stdout.startswith("fairprobe ")
    r = cli("--help")
    for command in ("run", "demo", "report", "init", "models", "hinter"):
        assert command in r.stdout
