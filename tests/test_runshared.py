"""A run-wide fixture folder is built once however many test processes ask for it at the same time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from childenv import pythonpath
from runshared import built_once

HERE = Path(__file__).resolve().parent

CHILD = """
import sys, time
from pathlib import Path
from runshared import built_once

root = Path(sys.argv[1])

def build(folder):
    with open(root / "builds.log", "a") as log:
        log.write("built\\n")
    time.sleep(1.0)  # long enough for the other process to arrive and wait
    (folder / "model.txt").write_text("trained")

folder = built_once(root, "model", build)
print(folder, (folder / "model.txt").read_text())
"""


def test_two_processes_asking_at_once_get_one_build(tmp_path):
    env = {"PYTHONPATH": pythonpath(HERE), "PATH": "/usr/bin:/bin"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == [f"{tmp_path / 'shared-model'} trained"] * 2
    assert (tmp_path / "builds.log").read_text() == "built\n"


def test_a_failed_build_leaves_nothing_and_the_next_caller_builds_again(tmp_path):
    def broken(folder: Path) -> None:
        (folder / "half.txt").write_text("half")
        raise RuntimeError("training diverged")

    with pytest.raises(RuntimeError, match="training diverged"):
        built_once(tmp_path, "model", broken)
    assert not (tmp_path / "shared-model").exists()
    folder = built_once(tmp_path, "model", lambda f: (f / "model.txt").write_text("ok"))
    assert sorted(p.name for p in folder.iterdir()) == ["model.txt"]
    assert built_once(tmp_path, "model", broken) == folder  # built: not built again
