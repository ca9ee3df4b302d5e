"""Issue 40's remaining reproductions through the real executable: Ctrl-C in the first seconds,
the exit-3 paths that are input errors (one line, exit 2), the leftovers, and the values that were
accepted without a word."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from childenv import default_sigint, pythonpath
from servers import FaultServer

from fairprobe.errors import DataError
from fairprobe.methods.audit.blackbox import read_scores
from reliability.helpers import assert_one_red_line

EXE = Path(sys.executable).parent / "fairprobe"


def _spec(
    work: Path, body: str = "  model: py:kw:classify\n  data: data.csv\n", name: str = "spec.yaml"
) -> str:
    (work / name).write_text("accuracy:\n" + body, encoding="utf-8")
    return name


# -- Ctrl-C at any moment of start-up -----------------------------------------------------------


@pytest.mark.parametrize("delay", [0.1, 0.3, 0.6, 1.0, 1.5, 2.0])
def test_ctrl_c_in_the_first_seconds_is_exit_130_and_one_line(work: Path, delay: float):
    env = {**os.environ, "FAIRPROBE_CACHE": str(work / "cache.db"), "PYTHONPATH": pythonpath(work)}
    p = subprocess.Popen(
        [str(EXE), "run", _spec(work), "--out", "runs"], cwd=work, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
    )  # fmt: skip
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    if p.returncode == 0:  # it had finished before the signal
        return
    assert p.returncode == 130, (p.returncode, err)
    assert [line for line in err.splitlines() if line.startswith(("interrupted:", "error:"))] == [
        next(line for line in err.splitlines() if line.startswith("interrupted:"))
    ], err


# -- input errors that were exit 3 -------------------------------------------------------------


def test_a_host_label_over_63_characters_is_one_line(cli):
    r = cli("models", "check", f"openai+http://{'a' * 70}.example:8080/v1#m")
    assert_one_red_line(r, "host name that cannot exist")


def test_a_very_long_out_or_block_name_is_one_short_line(cli, work: Path):
    r = cli("run", _spec(work), "--out", "x" * 1000)
    line = assert_one_red_line(r, "too long")
    assert len(line) < 2100
    r = cli(
        "run", _spec(work, f"  name: {'n' * 5000}\n  model: py:kw:classify\n  data: data.csv\n"), "--out", "r"
    )
    line = assert_one_red_line(r, "characters long")
    assert len(line) < 2100


def test_a_finished_run_on_an_ascii_terminal_is_not_a_crash(work: Path):
    env = {
        **os.environ, "FAIRPROBE_CACHE": "off", "PYTHONPATH": pythonpath(work), "PYTHONIOENCODING": "ascii",
        "LANG": "C", "LC_ALL": "C",
    }  # fmt: skip
    r = subprocess.run(
        [str(EXE), "run", _spec(work), "--out", "runs"], cwd=work, env=env, capture_output=True
    )
    assert r.returncode == 0, r.stderr
    assert b"Traceback" not in r.stderr and b"internal error" not in r.stderr
    assert b"report: runs/accuracy/report.html" in r.stdout


def test_a_json_answer_nested_too_deep_is_a_malformed_answer(cli, work: Path):
    deep = "[" * 200_000 + "]" * 200_000
    with FaultServer(script=[("status", 200, deep)] * 5) as fault:
        r = cli("models", "check", f"openai+{fault.base_url}?retries=1#{fault.model_id}")
    assert_one_red_line(r, "nested too deep")


# -- leftovers -------------------------------------------------------------------------------------


def test_a_refused_run_leaves_nothing_that_makes_the_folder_pass_for_a_run(cli, work: Path):
    mine = work / "mine" / "accuracy"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("my notes")
    bad = _spec(work, "  model: py:nowhere:classify\n  data: data.csv\n", "bad.yaml")
    assert_one_red_line(cli("run", bad, "--out", "mine", "--overwrite"), "nowhere")
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    assert_one_red_line(cli("run", _spec(work), "--out", "mine"), "not empty")


def test_overwrite_keeps_a_users_file_inside_the_findings_folder(cli, work: Path):
    assert cli("run", _spec(work), "--out", "runs").returncode == 0
    findings = work / "runs" / "accuracy" / "findings"
    assert findings.is_dir()
    (findings / "my-analysis.txt").write_text("mine")
    (work / "other.csv").write_text((work / "data.csv").read_text() + "r9,a bad film again,NEG\n")
    other = _spec(work, "  model: py:kw:classify\n  data: other.csv\n", "other.yaml")
    r = cli("run", other, "--out", "runs", "--overwrite")
    assert r.returncode == 0, r.stderr
    assert (findings / "my-analysis.txt").read_text() == "mine"
    assert json.loads((work / "runs" / "accuracy" / "summary.json").read_text())["findings"] == 7


def test_the_same_model_with_a_leading_space_is_one_model(cli, work: Path):
    (work / "data.jsonl").write_text(json.dumps({"text": "the woman liked it"}) + "\n")
    r = cli(
        "hinter",
        "--model",
        "py:kw:classify",
        "--model",
        " py:kw:classify",
        "--data",
        "data.jsonl",
        "--out",
        "r",
    )
    assert_one_red_line(r, "the same model twice")


# -- accepted without a word -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "needle"),
    [("probe=maybe", "true or false"), ("retries=1e20", "retries"), ("concurrency=1e9", "concurrency")],
)
def test_unusable_uri_options_are_refused(cli, query: str, needle: str):
    r = cli("models", "check", f"openai+http://127.0.0.1:9/v1?{query}#m")
    assert_one_red_line(r, needle)


def test_a_flag_for_a_number_and_a_name_with_a_line_break_are_refused(cli, work: Path):
    (work / "data.jsonl").write_text(json.dumps({"text": "the woman liked it"}) + "\n")
    (work / "h.yaml").write_text(
        "hinter:\n  model: py:kw:classify\n  data: data.jsonl\n  attributes: [gender]\n  order: true\n"
    )
    assert_one_red_line(cli("run", "h.yaml", "--out", "r"), "order: true is not a number")
    spec = _spec(work, '  name: "a\\nb"\n  model: py:kw:classify\n  data: data.csv\n', "n.yaml")
    assert_one_red_line(cli("run", spec, "--out", "r"), "control character")
    assert not (work / "r").exists()


def test_audit_scores_outside_0_to_100_are_refused(tmp_path: Path):
    for bad in ("-0.2", "140"):
        (tmp_path / "s.csv").write_text(f"id,score\na,0.5\nb,{bad}\n")
        with pytest.raises(DataError, match="negative|above 100"):
            read_scores(str(tmp_path / "s.csv"))


def test_a_missing_local_hf_path_is_refused_at_once(cli, work: Path):
    (work / "models").mkdir()
    start = time.monotonic()
    assert_one_red_line(cli("models", "check", "hf:models/mine"), "does not exist")
    assert time.monotonic() - start < 60  # no Hub look-up (6-28 s per try offline)


def test_failed_attempts_name_each_kind_not_only_the_last(cli):
    with FaultServer(script=[("429", 0), ("500",), ("malformed",)]) as fault:
        r = cli("models", "check", f"openai+{fault.base_url}?retries=2&backoff=0#{fault.model_id}")
    assert_one_red_line(r, "HTTP 429", "HTTP 500", "malformed")


def test_caffe_generate_that_makes_no_valid_pair_is_not_a_success(cli, tmp_path: Path):
    from fairprobe.methods.caffe.kb import Triple, write_kb

    (tmp_path / "junk.py").write_text(
        "def generate(conversations):\n    return ['no pairs here'] * len(conversations)\n"
    )
    (tmp_path / "case.yaml").write_text(
        "identifier: C1\nintent: question\nenvironment:\n  model: embedded:smollm2\n"
    )
    write_kb([Triple("t0", "money", "poor people", "rich people", "socioeconomic")], tmp_path / "kb.jsonl")
    r = cli(
        "caffe", "generate", "--case", "case.yaml", "--kb", "kb.jsonl", "--generator", "py-chat:junk:generate",
        "--pairs-per-triple", "2", "--generator-calls", "2", "--output", "prompts.jsonl",
    )  # fmt: skip
    assert_one_red_line(r, "made no valid pair")
