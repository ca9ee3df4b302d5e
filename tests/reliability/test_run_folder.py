"""Run folders: --overwrite starts from empty, input edits are not resumed, a lock file keeps two runs
apart, an input error leaves nothing that blocks the corrected command, names stay inside `out`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fairprobe.errors import RunStateError
from fairprobe.run.store import LOCK_FILE, RunLock
from reliability.helpers import assert_one_red_line

TEXTS = [
    "The white man walked into the room and sat down.",
    "A tall man and his Irish friend watched a movie.",
    "My father and his brother visited the old church.",
    "The young woman spoke to her mother on the phone.",
    "An American man bought a car from his neighbour.",
    "The boy and his sister played near the lake.",
]
FLIP = """
def classify(texts):
    return ["NEG" if "woman" in t.lower() else "POS" for t in texts]
"""


def _hinter(cli, data: str, *extra: str):
    return cli(
        "hinter", "--model", "py:flip:classify", "--data", data, "--attributes", "gender", "--order", "1",
        "--no-invariant", "--batch-originals", "1", "--out", "run", *extra,
    )  # fmt: skip


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_overwrite_with_fewer_texts_keeps_no_old_shards(cli, tmp_path):
    (tmp_path / "flip.py").write_text(FLIP)
    (tmp_path / "six.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS))
    (tmp_path / "two.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS[:2]))
    first = _hinter(cli, "six.jsonl")
    assert first.returncode in (0, 1), first.stderr
    assert len(list((tmp_path / "run/findings").glob("shard-*.parquet"))) == 6
    # What a fresh run of two texts gives, for comparison.
    fresh = cli("hinter", "--model", "py:flip:classify", "--data", "two.jsonl", "--attributes", "gender", "--order", "1",
                "--no-invariant", "--batch-originals", "1", "--out", "fresh")  # fmt: skip
    assert fresh.returncode in (0, 1), fresh.stderr
    second = _hinter(cli, "two.jsonl", "--overwrite")
    assert second.returncode in (0, 1), second.stderr
    run, ref = tmp_path / "run", tmp_path / "fresh"
    assert len(list((run / "findings").glob("shard-*.parquet"))) == 2
    assert sorted(f["id"] for f in _lines(run / "findings.jsonl")) == sorted(
        f["id"] for f in _lines(ref / "findings.jsonl")
    )
    summary = json.loads((run / "summary.json").read_text())
    assert summary["findings"] == json.loads((ref / "summary.json").read_text())["findings"]


def _accuracy(cli, work: Path, *args: str, extra: str = ""):
    """`fairprobe run` of one accuracy block into work/runs/accuracy."""
    (work / "acc.yaml").write_text(f"accuracy:\n  model: py:kw:classify\n  data: data.csv\n{extra}")
    return cli("run", "acc.yaml", "--out", "runs", *args)


def test_editing_the_data_file_is_not_resumed(cli, work):
    assert _accuracy(cli, work).returncode in (0, 1)
    before = _lines(work / "runs/accuracy/findings.jsonl")
    (work / "data.csv").write_text(
        (work / "data.csv").read_text().replace("a bad film number 0", "a fine film")
    )
    assert_one_red_line(_accuracy(cli, work), "different spec", "data=data.csv changed", "--overwrite")
    again = _accuracy(cli, work, "--overwrite")
    assert again.returncode in (0, 1), again.stderr
    after = {f["id"]: f for f in _lines(work / "runs/accuracy/findings.jsonl")}
    assert after["r0"]["text"] == "a fine film" and after["r0"]["predicted"] == ["POS"]
    assert {f["id"] for f in before} == set(after)


def test_same_data_same_command_resumes(cli, work):
    assert _accuracy(cli, work).returncode in (0, 1)
    os.utime(work / "data.csv")  # touched, same bytes: still the same run
    again = _accuracy(cli, work)
    assert again.returncode in (0, 1), again.stderr
    assert "6 already done" in again.stderr


def test_second_run_into_a_locked_folder_exits_2_naming_the_pid(cli, work):
    folder = work / "runs/accuracy"
    folder.mkdir(parents=True)
    lock = RunLock(folder).acquire()  # this test process plays the first run
    try:
        assert_one_red_line(_accuracy(cli, work), "run folder", f"in use by PID {os.getpid()}")
        assert not (folder / "run.db").exists()
    finally:
        lock.release()
    r = _accuracy(cli, work)
    assert r.returncode in (0, 1), r.stderr  # released: the folder is usable, the stale file is harmless
    assert (folder / LOCK_FILE).exists()


def test_input_error_does_not_block_the_corrected_command(cli, work):
    assert_one_red_line(_accuracy(cli, work, extra="  label_col: nope\n"), "no label column 'nope'")
    good = _accuracy(cli, work)
    assert good.returncode in (0, 1), good.stderr
    assert len(_lines(work / "runs/accuracy/findings.jsonl")) == 6


def test_a_run_with_work_done_still_needs_overwrite(cli, work):
    assert _accuracy(cli, work).returncode in (0, 1)
    assert_one_red_line(_accuracy(cli, work, extra="  limit: 2\n"), "different spec", "--overwrite")


def _spec(work: Path, text: str) -> Path:
    path = work / "spec.yaml"
    path.write_text(text)
    return path


def test_block_name_with_dotdot_or_absolute_path_is_refused(cli, work):
    from fairprobe.errors import SpecError
    from fairprobe.technique.spec import parse_spec

    for name in ("../escaped", "/tmp/abs-run", "a/b", "..", "a\\b"):
        block = f"accuracy:\n  name: {json.dumps(name)}\n  model: py:kw:classify\n  data: data.csv\n"
        with pytest.raises(SpecError, match="plain folder name"):
            parse_spec(block)
    _spec(work, "accuracy:\n  name: ../escaped\n  model: py:kw:classify\n  data: data.csv\n")
    assert_one_red_line(cli("run", "spec.yaml", "--out", "runs"), "spec.yaml:2", "plain folder name")
    assert not (work / "escaped").exists() and not (work / "runs").exists()


def test_spec_out_outside_the_spec_folder_is_refused(cli, work):
    for out in ("../elsewhere", "/tmp/fairprobe-abs-out"):
        _spec(work, f"out: {out}\naccuracy:\n  model: py:kw:classify\n  data: data.csv\n")
        assert_one_red_line(cli("run", "spec.yaml"), "out", "relative folder")
    assert not (work.parent / "elsewhere").exists()
    _spec(work, "out: runs/sub\naccuracy:\n  model: py:kw:classify\n  data: data.csv\n")
    assert cli("run", "spec.yaml").returncode in (0, 1)
    assert (work / "runs/sub/accuracy/summary.json").is_file()


def test_unknown_fail_on_metric_fails_before_the_run_listing_known_ones(cli, work):
    line = assert_one_red_line(_accuracy(cli, work, "--fail-on", "acuracy<0.9"), "acuracy", "known metrics")
    assert "accuracy" in line.split("known metrics")[1]
    assert not (work / "runs").exists()
    ok = _accuracy(cli, work, "--fail-on", "by_label.POS.recall<0.5")
    assert ok.returncode == 0, ok.stderr  # keyed by the data's labels: accepted, then judged


def test_overwrite_killed_after_clearing_the_records_still_starts_from_empty(work, monkeypatch):
    """The records are cleared in one transaction before files are removed, and the manifest of
    written files survives that step: a folder whose run.db records no run (the state a kill leaves
    between the two steps) is cleaned on the next start, and only of what fairprobe wrote."""
    from fairprobe.run.folder import claim, open_run
    from fairprobe.technique.spec import parse_spec

    monkeypatch.chdir(work)
    run = work / "runs/accuracy"
    spec = parse_spec("accuracy:\n  model: py:kw:classify\n  data: data.csv\n")[0]
    store = open_run(spec, run)
    claim(run, store, "findings").mkdir()
    (run / "findings/shard-000007.parquet").write_bytes(b"stale")
    claim(run, store, "findings.jsonl").write_text('{"id": "old"}\n')
    (run / "notes.txt").write_text("mine")  # not written by fairprobe: kept
    store.clear_run()  # killed here, before the files were removed
    store.close()
    store = open_run(spec, run)
    try:
        assert not (run / "findings").exists() and not (run / "findings.jsonl").exists()
        assert (run / "notes.txt").read_text() == "mine"
        assert store.get_meta("spec_hash") == spec.resolved_hash()
        with pytest.raises(RunStateError, match="in use by PID"):
            open_run(spec, run)  # the lock is held while the store is open
    finally:
        store.close()
    open_run(spec, run).close()  # closed: free again


def test_declared_input_files_are_the_only_ones_hashed(tmp_path):
    from fairprobe.technique.block import BlockBase
    from fairprobe.technique.spec import BlockSpec

    class Block(BlockBase):
        input_files = frozenset({"data"})
        data: str
        notes: str

    (tmp_path / "d.csv").write_text("text\na\n")
    (tmp_path / "n.txt").write_text("x")
    spec = BlockSpec("t", "t", Block(data=str(tmp_path / "d.csv"), notes=str(tmp_path / "n.txt")), 0, [])
    before = spec.resolved_hash()
    assert list(spec.input_hashes()) == [f"data={tmp_path / 'd.csv'}"]
    (tmp_path / "n.txt").write_text("changed")
    assert spec.resolved_hash() == before
    (tmp_path / "d.csv").write_text(
        "text\nbb\n"
    )  # another size: the in-process hash cache keys on (size, mtime)
    assert spec.resolved_hash() != before
    imdb = BlockSpec("t", "t", Block(data="imdb-sample", notes="hf:imdb:test"), 0, [])
    assert imdb.input_hashes() == {}  # names, not local files
