"""The tests' `fairprobe` fork server (tests/forkcli.py) gives what running the executable gives.

Each call must be a process of its own (its exit status, output, imports and signals), the same as
``subprocess.run`` on ``.venv/bin/fairprobe``; calls it cannot stand in for run the executable.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from childenv import pythonpath
from forkcli import EXE, ForkCLI

COUNTING = """
from pathlib import Path
with (Path(__file__).parent / "imports.log").open("a") as fh:
    fh.write("imported\\n")
def classify(texts):
    return [{answer!r} for _ in texts]
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "FAIRPROBE_CACHE": str(tmp_path / "cache.db"), "PYTHONPATH": pythonpath(tmp_path)}


def _real(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["no-such-command"],  # a usage error: exit 2
        ["models", "check", "py:no_such_module:classify"],  # a model error: exit 2
        ["hinter", "--model", "py:counting:classify", "--data", "missing.csv"],  # a data error
    ],
)
def test_a_forked_call_gives_what_the_executable_gives(fairprobe_exe, tmp_path, env, args):
    (tmp_path / "counting.py").write_text(COUNTING.format(answer="POS"))
    forked_before = fairprobe_exe.forked
    forked = fairprobe_exe.run(args, cwd=tmp_path, env=env, timeout=300)
    assert fairprobe_exe.forked == forked_before + 1  # it did fork
    real = _real(args, tmp_path, env)
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)
    assert forked.args == real.args


def test_each_call_is_a_process_of_its_own(fairprobe_exe, tmp_path, env):
    """The model module is imported by every call (nothing of one call is left for the next), and the
    same module name in another folder is that folder's module."""
    (tmp_path / "counting.py").write_text(COUNTING.format(answer="POS"))
    for _ in range(2):
        r = fairprobe_exe.run(["models", "check", "py:counting:classify"], cwd=tmp_path, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        assert "POS" in r.stdout
    assert (tmp_path / "imports.log").read_text() == "imported\n" * 2
    other = tmp_path / "other"
    other.mkdir()
    (other / "counting.py").write_text(COUNTING.format(answer="NEG"))
    r = fairprobe_exe.run(
        ["models", "check", "py:counting:classify"],
        cwd=other,
        env={**env, "PYTHONPATH": pythonpath(other)},
        timeout=300,
    )
    assert r.returncode == 0 and "NEG" in r.stdout and "POS" not in r.stdout, r.stdout


def test_a_call_it_cannot_stand_in_for_runs_the_executable(fairprobe_exe, tmp_path, env):
    # an environment variable a library may read when imported (here: Python's own output encoding)
    executed = fairprobe_exe.executed
    r = fairprobe_exe.run(["--version"], cwd=tmp_path, env={**env, "PYTHONIOENCODING": "ascii"}, timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("fairprobe ")
    assert fairprobe_exe.executed == executed + 1
    # a folder on PYTHONPATH that shadows a package the helper has imported: the real import fails
    (tmp_path / "typer.py").write_text("raise ImportError('this typer is a stand-in')\n")
    r = fairprobe_exe.run(["--version"], cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 1 and "this typer is a stand-in" in r.stderr
    assert fairprobe_exe.executed == executed + 2


def test_a_call_past_its_timeout_is_killed_and_raises(fairprobe_exe, tmp_path, env):
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(120)\ndef classify(texts):\n    return []\n")
    with pytest.raises(subprocess.TimeoutExpired):
        fairprobe_exe.run(["models", "check", "py:slow:classify"], cwd=tmp_path, env=env, timeout=3)
    r = fairprobe_exe.run(["--version"], cwd=tmp_path, env=env, timeout=300)  # the helper goes on
    assert r.returncode == 0


def test_a_call_killed_by_a_signal_has_the_negative_signal_as_its_status(fairprobe_exe, tmp_path, env):
    (tmp_path / "dies.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    r = fairprobe_exe.run(["models", "check", "py:dies:classify"], cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == -9


def test_two_calls_hash_strings_differently_as_two_processes_do(fairprobe_exe, tmp_path, env):
    """Consecutive calls run in two helpers with their own string-hash seeds: a result that depends
    on the order of a set of strings differs between them, as between two real processes."""
    (tmp_path / "hashing.py").write_text(
        "def classify(texts):\n    return [str(hash('fairprobe'))] * len(texts)\n"
    )
    seen = set()
    for _ in range(2):
        r = fairprobe_exe.run(["models", "check", "py:hashing:classify"], cwd=tmp_path, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        seen.add(r.stdout.split('"prediction"')[1][:40] if '"prediction"' in r.stdout else r.stdout)
    assert len(seen) == 2, seen


def test_the_helpers_are_stopped_by_close(tmp_path, env):
    runner = ForkCLI()
    for _ in range(2):
        assert runner.run(["--version"], cwd=tmp_path, env=env, timeout=300).returncode == 0
    helpers = list(runner._procs)
    runner.close()
    assert all(h is not None and h.poll() is not None for h in helpers)


def test_a_call_has_python_s_ctrl_c_handling_even_when_the_test_process_ignores_sigint(
    fairprobe_exe, tmp_path, env
):
    """As `fairprobe` typed in a terminal (and as ``childenv.default_sigint`` gives the tests that
    interrupt a child): a background ``make test &`` ignores SIGINT, and a child would inherit that."""
    import signal

    from childenv import default_sigint

    (tmp_path / "sig.py").write_text(
        "import signal\ndef classify(texts):\n"
        "    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN\n"
        "    return ['IGNORED' if ignored else 'HANDLED'] * len(texts)\n"
    )
    args = ["models", "check", "py:sig:classify"]
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forked = fairprobe_exe.run(args, cwd=tmp_path, env=env, timeout=300)
        real = subprocess.run(
            [str(EXE), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
            preexec_fn=default_sigint,
        )  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, before)
    assert "HANDLED" in forked.stdout and "HANDLED" in real.stdout, (forked.stdout, real.stdout)
