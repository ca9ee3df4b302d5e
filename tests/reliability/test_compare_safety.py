"""`fairprobe compare` under kill -9, Ctrl-C and a shared input run, and its bad input (issue 40).

Two small HInter runs are made once for the module (the real executable); each test compares them
from its own folder. Interrupts are real signals to the real process."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from childenv import default_sigint, pythonpath

from reliability.helpers import assert_one_red_line, error_lines

TEXTS = [
    f"The {p} said the {t} was {q}." for p in ("woman", "man", "girl", "boy") for t in ("film", "plot") for q in ("good", "bad")
]  # fmt: skip
BASE = "def classify(texts):\n    return ['NEG' if 'bad' in t else 'POS' for t in texts]\n"
NEW = "def classify(texts):\n    return ['NEG' if 'bad' in t or 'woman' in t else 'POS' for t in texts]\n"
EXE = Path(sys.executable).parent / "fairprobe"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("runs")
    (folder / "data.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS))
    (folder / "base.py").write_text(BASE)
    (folder / "new.py").write_text(NEW)
    env = {**os.environ, "FAIRPROBE_CACHE": "off", "PYTHONPATH": pythonpath(folder)}
    for name in ("base", "new"):
        r = subprocess.run(
            [str(EXE), "hinter", "--model", f"py:{name}:classify", "--data", "data.jsonl", "--attributes",
             "gender", "--order", "1", "--no-invariant", "--out", f"runs/{name}"],
            cwd=folder, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert r.returncode in (0, 1), r.stderr
    return folder / "runs"


@pytest.fixture
def here(runs: Path, tmp_path: Path) -> Path:
    (tmp_path / "runs").symlink_to(runs)
    return tmp_path


def _start(cwd: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "FAIRPROBE_CACHE": "off", "PYTHONPATH": pythonpath(cwd)}
    return subprocess.Popen(
        [str(EXE), *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=default_sigint,
    )  # fmt: skip


def _whole(folder: Path) -> None:
    """Every report in ``folder`` is whole (a reader never sees half a file)."""
    if (folder / "summary.json").exists():
        json.loads((folder / "summary.json").read_text())


def test_a_killed_compares_temporary_files_never_block_the_next_one(cli, here: Path):
    assert cli("compare", "runs/base", "runs/new", "--out", "cmp").returncode in (0, 1)
    for name in (".report.html.k2j4_x9q", ".summary.json.abc12345", ".findings.parquet.123.tmp"):
        (here / "cmp" / name).write_text("half")  # what a kill -9 between write and rename leaves
    (here / "cmp" / "notes.txt").write_text("mine")
    r = cli("compare", "runs/base", "runs/new", "--out", "cmp")
    assert_one_red_line(r, "notes.txt")  # a user's file is still refused ...
    (here / "cmp" / "notes.txt").unlink()
    r = cli("compare", "runs/base", "runs/new", "--out", "cmp")
    assert r.returncode in (0, 1), r.stderr  # ... fairprobe's own leftovers are not
    assert not [
        p.name for p in (here / "cmp").iterdir() if p.name.startswith((".report", ".summary", ".findings"))
    ]


@pytest.mark.parametrize("delay", [0.5, 1.5, 2.5, 3.5])
def test_kill_9_during_compare_leaves_whole_files_and_a_folder_the_next_compare_takes(cli, here: Path, delay):
    p = _start(here, "compare", "runs/base", "runs/new", "--out", "cmp")
    time.sleep(delay)
    p.kill()
    p.communicate()
    _whole(here / "cmp")
    r = cli("compare", "runs/base", "runs/new", "--out", "cmp")
    assert r.returncode in (0, 1), r.stderr
    _whole(here / "cmp")


@pytest.mark.parametrize("delay", [0.2, 0.8, 1.6, 2.6])
def test_ctrl_c_during_compare_is_exit_130_and_one_line(here: Path, delay: float):
    p = _start(here, "compare", "runs/base", "runs/new", "--out", "cmp")
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert "Traceback" not in err, err
    if p.returncode in (0, 1):  # it had finished: the comparison's verdict
        return
    assert p.returncode == 130, (p.returncode, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted:"), err
    _whole(here / "cmp")


def test_compares_of_one_base_run_read_it_side_by_side(here: Path):
    with open(here / "runs" / "base" / "run.lock", "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_SH)  # another compare reading the base run
        first = _start(here, "compare", "runs/base", "runs/new", "--out", "cmp1")
        second = _start(here, "compare", "runs/base", "runs/new", "--out", "cmp2")
        results = [(q.wait(timeout=300), q.stderr.read()) for q in (first, second)]
    assert all(code in (0, 1) for code, _ in results), results
    for p in (first, second):
        p.stdout.close()
        p.stderr.close()


def test_a_run_writing_its_folder_still_stops_a_compare_of_it(cli, here: Path, tmp_path: Path):
    live = tmp_path / "live"
    shutil.copytree(here / "runs" / "base", live)
    with open(live / "run.lock", "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # a run writing it
        r = cli("compare", "live", "runs/new", "--out", "cmp")
    assert_one_red_line(r, "wait for that run to finish")


def test_bad_compare_options_are_one_line_and_write_nothing(cli, here: Path):
    assert_one_red_line(cli("compare", "runs/base", "runs/new", "--out", "cmp", "--seed", "-1"), "--seed")
    r = cli("compare", "runs/base", "runs/new", "--out", "cmp", "--fail-on", "delta.nope > 1")
    assert_one_red_line(r, "no metric 'delta.nope'")
    assert not (here / "cmp").exists()


def test_a_truncated_parquet_shard_is_one_line_in_report_and_compare(cli, here: Path, tmp_path: Path):
    broken = tmp_path / "broken"
    shutil.copytree(here / "runs" / "new", broken)
    shard = sorted((broken / "findings").glob("*.parquet"))[0]
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    assert_one_red_line(cli("report", "broken"), "is damaged", shard.name)
    assert_one_red_line(cli("compare", "runs/base", "broken", "--out", "cmp"), "is damaged")
    assert error_lines(cli("compare", "broken", "runs/new", "--out", "cmp2").stderr)
