"""fairprobe deletes only what it wrote, an interrupted run is never "pass", and one run holds one model.

Every test runs the real `fairprobe` executable in a temporary folder (the ``cli`` fixture)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from childenv import default_sigint, pythonpath

from reliability.helpers import assert_one_red_line

SLOW_MODEL = """
import time
def classify(texts):
    time.sleep(0.4)
    return ["NEG" if "bad" in t else "POS" for t in texts]
"""

FAILING_MODEL = """
CALLS = []
def classify(texts):
    CALLS.append(len(texts))
    if len(CALLS) > 3:
        raise RuntimeError("the model server went away")
    return ["NEG" if "bad" in t else "POS" for t in texts]
"""


def _spec(tmp: Path, model: str = "py:kw:classify", data: str = "data.csv", name: str = "spec.yaml") -> str:
    (tmp / name).write_text(f"accuracy:\n  model: {model}\n  data: {data}\n", encoding="utf-8")
    return name


def _summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text())


# -- fairprobe deletes only what it wrote ----------------------------------------------------------


def test_a_non_empty_folder_that_is_not_a_run_is_refused_and_left_alone(cli, work):
    run = work / "mine" / "accuracy"
    run.mkdir(parents=True)
    for name in ("summary.json", "report.html", "notes.txt"):
        (run / name).write_text(f"my own {name}")
    r = cli("run", _spec(work), "--out", "mine")
    assert_one_red_line(r, "not empty", "--overwrite")
    assert sorted(p.name for p in run.iterdir()) == ["notes.txt", "report.html", "summary.json"]
    assert (run / "summary.json").read_text() == "my own summary.json"


def test_overwrite_never_deletes_or_overwrites_a_file_fairprobe_did_not_write(cli, work):
    run = work / "runs" / "accuracy"
    run.mkdir(parents=True)
    (run / "notes.txt").write_text("mine")
    (run / "tests.jsonl").write_text("my tests\n")  # a name fairprobe may write, but did not
    r = cli("run", _spec(work), "--out", "runs", "--overwrite")
    assert r.returncode in (0, 1), r.stderr
    assert (run / "notes.txt").read_text() == "mine"
    assert (run / "tests.jsonl").read_text() == "my tests\n"
    assert (run / "summary.json").is_file()
    # A second --overwrite with another spec removes what the first run wrote, and only that.
    (work / "other.csv").write_text((work / "data.csv").read_text() + "r9,a bad film again,NEG\n")
    r = cli("run", _spec(work, data="other.csv"), "--out", "runs", "--overwrite")
    assert r.returncode in (0, 1), r.stderr
    assert (run / "notes.txt").read_text() == "mine" and (run / "tests.jsonl").read_text() == "my tests\n"
    assert _summary(run)["findings"] == 7


def test_a_file_of_a_report_name_that_fairprobe_did_not_write_stops_the_run_before_it_starts(cli, work):
    run = work / "runs" / "accuracy"
    run.mkdir(parents=True)
    (run / "summary.json").write_text("{}")
    r = cli("run", _spec(work), "--out", "runs", "--overwrite")
    assert_one_red_line(r, "summary.json", "not written by fairprobe")
    assert (run / "summary.json").read_text() == "{}"
    assert not (run / "report.html").exists()


def test_a_folder_named_like_the_paged_findings_view_stops_the_run_and_is_kept(cli, work):
    """``report-findings/`` is what a large run's report writes beside report.html: someone else's
    folder of that name stops the run at once (not hours later), and --overwrite never removes it."""
    run = work / "runs" / "accuracy"
    (run / "report-findings").mkdir(parents=True)
    (run / "report-findings" / "mine.js").write_text("// mine")
    r = cli("run", _spec(work), "--out", "runs", "--overwrite")
    assert_one_red_line(r, "report-findings", "not written by fairprobe")
    assert (run / "report-findings" / "mine.js").read_text() == "// mine"
    assert not (run / "report.html").exists()


def test_an_input_kept_in_the_run_folder_is_not_deleted(cli, work):
    run = work / "run"
    run.mkdir()
    (run / "data.csv").write_text((work / "data.csv").read_text())
    r = cli("hinter", "--model", "py:kw:classify", "--data", "run/data.csv", "--attributes", "gender",
            "--order", "1", "--no-invariant", "--out", "run")  # fmt: skip
    assert_one_red_line(r, "not empty", "data.csv")
    assert (run / "data.csv").is_file()
    r = cli("hinter", "--model", "py:kw:classify", "--data", "run/data.csv", "--attributes", "gender",
            "--order", "1", "--no-invariant", "--out", "run", "--overwrite")  # fmt: skip
    assert r.returncode != 3 and "not found" not in r.stderr, r.stderr
    assert (run / "data.csv").is_file()


HINTER = [
    "hinter",
    "--model",
    "py:kw:classify",
    "--data",
    "data.csv",
    "--attributes",
    "gender",
    "--order",
    "1",
]


def test_an_empty_out_and_the_current_directory_are_refused(cli, work):
    before = sorted(p.name for p in work.iterdir())
    assert_one_red_line(cli(*HINTER, "--out", ""), "--out is empty")
    assert_one_red_line(cli(*HINTER, "--out", "."), "not empty")
    assert sorted(p.name for p in work.iterdir() if p.name != "cache.db") == [
        n for n in before if n != "cache.db"
    ]


def test_a_symlinked_run_folder_is_refused_and_its_target_left_alone(cli, work):
    target = work / "elsewhere"
    target.mkdir()
    (target / "findings.jsonl").write_text("precious\n")
    (target / "spec.yaml").write_text("precious\n")
    (work / "runs").mkdir()
    (work / "runs" / "accuracy").symlink_to(target)
    r = cli("run", _spec(work), "--out", "runs")
    assert_one_red_line(r, "not empty")
    r = cli("run", _spec(work), "--out", "runs", "--overwrite")
    assert r.returncode == 2, r.stderr
    assert (target / "findings.jsonl").read_text() == "precious\n"
    assert (target / "spec.yaml").read_text() == "precious\n"


def test_an_input_error_inside_the_technique_removes_nothing(cli, work):
    first = cli("run", _spec(work), "--out", "runs")
    assert first.returncode in (0, 1), first.stderr
    run = work / "runs" / "accuracy"
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file() and not p.name.startswith("run.")}
    (work / "empty.csv").write_text("id,text,label\n")
    r = cli("run", _spec(work, data="empty.csv"), "--out", "runs", "--overwrite")
    assert r.returncode == 2, r.stderr
    after = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file() and not p.name.startswith("run.")}
    assert after == before


# -- an incomplete run is never "pass" ---------------------------------------------------------------


def _many_rows(work: Path, n: int = 400) -> None:
    rows = "".join(
        f"r{i},{'a good' if i % 2 else 'a bad'} film {i},{'POS' if i % 2 else 'NEG'}\n" for i in range(n)
    )
    (work / "many.csv").write_text("id,text,label\n" + rows)


def _assert_incomplete(run: Path) -> None:
    summary = _summary(run)
    assert summary["complete"] is False
    assert summary["verdict"] == "incomplete" and summary["passed"] is False
    assert "incomplete" in summary["reasons"][0] and "resume" in summary["reasons"][0]
    suite = ET.parse(run / "junit.xml").getroot()
    assert int(suite.get("errors")) >= 1
    verdict_case = [c for c in suite.iter("testcase") if c.get("name", "").startswith("verdict")][0]
    assert verdict_case.find("error") is not None
    html = (run / "report.html").read_text()
    assert "INCOMPLETE" in html and ">PASSED<" not in html


def test_ctrl_c_exits_130_with_one_line_and_an_incomplete_verdict(work):
    _many_rows(work)
    (work / "slow.py").write_text(SLOW_MODEL)
    _spec(work, model="py:slow:classify", data="many.csv")
    env = {**os.environ, "FAIRPROBE_CACHE": str(work / "cache.db"), "PYTHONPATH": pythonpath(work)}
    exe = Path(sys.executable).parent / "fairprobe"
    proc = subprocess.Popen(
        [str(exe), "run", "spec.yaml", "--out", "runs"],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=default_sigint,
    )  # fmt: skip
    run = work / "runs" / "accuracy"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # wait until some work is recorded (the findings log's first part)
        time.sleep(0.5)
        if list((run / "findings").glob("part-*.parquet")):
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, err)
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith("[")]
    assert [x for x in lines if x.startswith("interrupted:")], err
    assert "Traceback" not in err
    _assert_incomplete(run)
    # `fairprobe report` on the interrupted run says incomplete too, and exits 1.
    rep = subprocess.run([str(exe), "report", str(run)], cwd=work, env=env, capture_output=True, text=True)
    assert rep.returncode == 1 and "INCOMPLETE" in rep.stdout, rep.stdout + rep.stderr


def test_a_run_stopped_by_a_failing_model_is_incomplete_not_pass(cli, work):
    _many_rows(work, 400)
    (work / "flaky.py").write_text(FAILING_MODEL)
    r = cli("run", _spec(work, model="py:flaky:classify", data="many.csv"), "--out", "runs")
    assert_one_red_line(r, "the model server went away")
    _assert_incomplete(work / "runs" / "accuracy")
    assert "stopped at an error" in _summary(work / "runs" / "accuracy")["reasons"][0]


# -- one run, one model --------------------------------------------------------------------------------


def test_a_model_changed_between_runs_in_one_folder_is_refused(cli, work):
    first = cli("run", _spec(work), "--out", "runs")
    assert first.returncode in (0, 1), first.stderr
    run = work / "runs" / "accuracy"
    before = (run / "summary.json").read_text()
    # "Retrain" the model: same URI, other behaviour.
    (work / "kw.py").write_text("def classify(texts):\n    return ['POS' for _ in texts]\n")
    r = cli("run", "spec.yaml", "--out", "runs")
    assert_one_red_line(r, "another version of model", "--overwrite")
    assert (run / "summary.json").read_text() == before
    r = cli("run", "spec.yaml", "--out", "runs", "--overwrite")
    assert r.returncode in (0, 1), r.stderr
    assert _summary(run)["metrics"]["accuracy"] == 0.5


def test_report_refuses_a_folder_a_live_run_holds(cli, work):
    first = cli("run", _spec(work), "--out", "runs")
    assert first.returncode in (0, 1), first.stderr
    run = work / "runs" / "accuracy"
    from fairprobe.run.store import RunLock

    lock = RunLock(run).acquire()  # a live run holds the folder
    try:
        before = (run / "report.html").stat().st_mtime_ns
        r = cli("report", str(run))
        assert_one_red_line(r, "in use by PID")
        assert (run / "report.html").stat().st_mtime_ns == before
    finally:
        lock.release()
    assert cli("report", str(run)).returncode in (0, 1)
