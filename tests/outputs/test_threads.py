"""``threads`` of the audit and certify blocks: validated before the run, applied inside it.

The black box here is a ``py:`` classifier that writes ``torch.get_num_threads()`` as it answers, so
the test sees the thread count the audit's own process ran with (the default, torch's own, is the
machine's core count)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reliability.helpers import assert_one_red_line

from fairprobe.run.threads import free_cores, resolve, thread_limit, usable_cores

BLACK_BOX = """
import json
import torch
from fairprobe.methods.audit.casestudy import adult_case_a

def box(texts):
    with open("seen.txt", "a") as fh:
        fh.write(json.dumps(torch.get_num_threads()) + "\\n")
    return adult_case_a(texts)
"""


def _spec(tmp_path: Path, threads: str) -> None:
    (tmp_path / "threadbox.py").write_text(BLACK_BOX, encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(
        "seed: 1\naudit:\n"
        "  model: py:threadbox:box\n  data: adult\n  group_col: sex\n  pool_size: 120\n  budget: 20\n"
        f"  strategy: cerm-only\n  features: ngrams\n  cerm_steps: 5\n  refits: 0\n{threads}",
        encoding="utf-8",
    )


def _run(cli, tmp_path: Path, threads: str, monkeypatch) -> tuple[object, list[int]]:
    _spec(tmp_path, threads)
    seen = tmp_path / "seen.txt"
    seen.unlink(missing_ok=True)
    res = cli("run", "spec.yaml", "--out", "runs", "--overwrite")
    lines = seen.read_text().split() if seen.exists() else []
    return res, [int(x) for x in lines]


def test_threads_one_is_applied_inside_the_audit(cli, tmp_path: Path, monkeypatch) -> None:
    res, seen = _run(cli, tmp_path, "  threads: 1\n", monkeypatch)
    assert res.returncode in (0, 1), res.stderr
    assert seen and set(seen) == {1}
    summary = json.loads((tmp_path / "runs/audit/summary.json").read_text())
    assert summary["audit"]["threads"] == 1
    assert summary["spec"]["threads"] == 1


def test_threads_default_is_auto_the_free_cores(cli, tmp_path: Path, monkeypatch) -> None:
    res, seen = _run(cli, tmp_path, "", monkeypatch)
    assert res.returncode in (0, 1), res.stderr
    summary = json.loads((tmp_path / "runs/audit/summary.json").read_text())
    assert summary["spec"]["threads"] == "auto"
    assert 1 <= summary["audit"]["threads"] <= usable_cores()
    assert seen and set(seen) == {summary["audit"]["threads"]}


@pytest.mark.parametrize("bad", ["many", "0", "-1", "1.5"])
def test_bad_threads_is_one_line_exit_2(cli, tmp_path: Path, monkeypatch, bad: str) -> None:
    res, seen = _run(cli, tmp_path, f"  threads: {bad}\n", monkeypatch)
    assert_one_red_line(res, "threads", "auto")
    assert not seen and not (tmp_path / "runs").exists()


def test_certify_block_takes_threads() -> None:
    from fairprobe.methods.certify.block import CertifyBlock

    assert CertifyBlock(model="m").threads == "auto"
    assert CertifyBlock(model="m", threads="3").threads == 3
    with pytest.raises(ValueError, match="threads must be 'auto'"):
        CertifyBlock(model="m", threads="lots")


def test_auto_never_exceeds_the_usable_cores_and_limit_restores(monkeypatch) -> None:
    import torch

    monkeypatch.setattr("os.getloadavg", lambda: (50.0, 50.0, 50.0))
    assert free_cores() == 1 == resolve("auto")
    monkeypatch.setattr("os.getloadavg", lambda: (0.0, 0.0, 0.0))
    assert free_cores() == usable_cores()
    before = torch.get_num_threads()
    with thread_limit(1) as n:
        assert n == 1 and torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
