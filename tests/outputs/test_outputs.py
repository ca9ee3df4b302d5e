"""Where a run's findings live: Parquet beside ``run.db`` (never a copy inside it), findings.jsonl as a
small-run export, ``fairprobe export`` in three formats, and re-rendered reports that match."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from fairprobe.run import findings as export_module
from fairprobe.run.folder import open_locked
from fairprobe.run.runner import render_reports, run_options
from fairprobe.run.store import Store

TEXTS = [
    ("The white man walked into the room and sat down.", "POS"),
    ("A tall man and his Irish friend watched a movie.", "POS"),
    ("My father and his brother visited the old church.", "NEG"),
    ("The young woman spoke to her mother on the phone.", "NEG"),
    ("An American man bought a car from his neighbour.", "POS"),
    ("The boy and his sister played near the lake.", "NEG"),
    ("Ünïcode — the café owner and his wife laughed.", "POS"),
]
FLIP = """
def classify(texts):
    return ["NEG" if ("woman" in t.lower() or "sister" in t.lower()) else "POS" for t in texts]
"""


@pytest.fixture
def data(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "flipmodel.py").write_text(FLIP)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("FAIRPROBE_CACHE", str(tmp_path / "cache.db"))
    path = tmp_path / "texts.jsonl"
    path.write_text("".join(json.dumps({"text": t, "label": y}) + "\n" for t, y in TEXTS), encoding="utf-8")
    return path


def _accuracy(data: Path, out: Path):
    return run_options("accuracy", {"model": "py:flipmodel:classify", "data": str(data)}, out)


def _hinter(data: Path, out: Path):
    options = {
        "model": "py:flipmodel:classify",
        "data": str(data),
        "label_col": "label",
        "attributes": ["gender"],
        "order": 1,
        "invariant": False,
        "batch_originals": 2,
    }
    return run_options("hinter", options, out)


def _stored(run: Path) -> list[dict]:
    """The findings the reports show, read back through the store (the reference for exports)."""
    from fairprobe.technique.registry import get

    with open_locked(run) as store:
        technique = get(store.get_meta("technique"))
        found = export_module.stored_findings(run, store, technique)
        return [json.loads(line) for line in export_module.json_lines(found)]


def test_run_db_holds_no_findings_and_answers_are_compact(tmp_path: Path, data: Path) -> None:
    _accuracy(data, tmp_path / "acc")
    db = tmp_path / "acc/run.db"
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM findings").fetchone()[0] == 0
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("acc/run.db*"))
    assert b"white man walked" not in raw  # no finding (nor its text) is copied into run.db
    assert len(_stored(tmp_path / "acc")) == len(TEXTS)
    assert list((tmp_path / "acc/findings").glob("part-*.parquet"))
    # Answers: a 16-byte request digest and each distinct answer once, not two 64-character keys.
    with Store(tmp_path / "c.db") as cache:
        for start in range(0, 20_000, 2_000):
            cache.put_responses(
                "f" * 64,
                {f"{i:064x}": {"labels": ["POS"], "scores": {}} for i in range(start, start + 2_000)},
            )
        cache._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert cache.get_responses("f" * 64, [f"{7:064x}", "missing"]) == {
            f"{7:064x}": {"labels": ["POS"], "scores": {}}
        }
    assert (tmp_path / "c.db").stat().st_size < 20_000 * 60


def test_findings_jsonl_only_up_to_the_limit(tmp_path: Path, data: Path, monkeypatch) -> None:
    below = _accuracy(data, tmp_path / "small")
    lines = (tmp_path / "small/findings.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x) for x in lines] == _stored(tmp_path / "small")
    monkeypatch.setattr(export_module, "JSONL_LIMIT", len(TEXTS) - 1)
    above = _accuracy(data, tmp_path / "large")
    assert not (tmp_path / "large/findings.jsonl").exists()
    assert above.summary["findings"] == below.summary["findings"] == len(TEXTS)
    # A run that grew past the limit: its re-render removes the findings.jsonl it wrote before.
    render_reports(tmp_path / "small")
    assert not (tmp_path / "small/findings.jsonl").exists()
    with open_locked(tmp_path / "small") as store:
        assert {"findings", "summary.json", "report.html", "junit.xml"} <= store.written()


@pytest.mark.parametrize("technique", ["accuracy", "hinter"])
def test_report_rerender_gives_the_same_summary(
    tmp_path: Path, data: Path, monkeypatch, technique: str
) -> None:
    monkeypatch.setattr(export_module, "JSONL_LIMIT", 3)  # above the limit: no findings.jsonl
    run = tmp_path / "run"
    outcome = (_accuracy if technique == "accuracy" else _hinter)(data, run)
    assert outcome.summary["findings"] > 3 and not (run / "findings.jsonl").exists()
    first = json.loads((run / "summary.json").read_text())
    html = (run / "report.html").read_text()
    again = render_reports(run)
    assert again == first == json.loads((run / "summary.json").read_text())
    assert (run / "report.html").read_text() == html
    assert not (run / "findings.jsonl").exists()


@pytest.mark.parametrize("technique", ["accuracy", "hinter"])
def test_export_round_trips_in_every_format(cli, tmp_path: Path, data: Path, technique: str) -> None:
    run = tmp_path / "run"
    (_accuracy if technique == "accuracy" else _hinter)(data, run)
    want = _stored(run)
    assert len(want) >= len(TEXTS)
    r = cli("export", str(run))
    assert r.returncode == 0, r.stderr
    assert f"{len(want)} findings written to" in r.stdout
    assert [json.loads(x) for x in (run / "findings.jsonl").read_text(encoding="utf-8").splitlines()] == want
    r = cli("export", str(run), "--format", "parquet", "--output", "out/f.parquet")
    assert r.returncode == 0, r.stderr
    table = pq.read_table(tmp_path / "out/f.parquet")
    assert [json.loads(x) for x in table.column("finding").to_pylist()] == want
    assert table.column("id").to_pylist() == [f["id"] for f in want]
    r = cli("export", str(run), "--format", "csv", "--output", "f.csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader((tmp_path / "f.csv").open(encoding="utf-8", newline="")))
    assert len(rows) == len(want)
    for row, finding in zip(rows, want, strict=True):
        for key, value in finding.items():
            cell = row[key]
            if value is None:
                assert cell == ""
            elif isinstance(value, (list, dict)):
                assert json.loads(cell) == value
            elif isinstance(value, bool):
                assert cell == str(value)
            elif isinstance(value, (int, float)):
                assert float(cell) == pytest.approx(value)
            else:
                assert cell == value
    r = cli("export", str(run), "--format", "csv", "--output", "-")
    assert r.returncode == 0 and r.stdout == (tmp_path / "f.csv").read_text(encoding="utf-8")


def test_export_bad_input_is_one_line(cli, tmp_path: Path, data: Path) -> None:
    from reliability.helpers import assert_one_red_line

    _accuracy(data, tmp_path / "run")
    assert_one_red_line(cli("export", "run", "--format", "xml"), "--format", "jsonl, csv, parquet")
    assert_one_red_line(cli("export", "nowhere"), "nowhere", "run.db")
    assert_one_red_line(cli("export", "run", "--format", "parquet", "--output", "-"), "--output")


def test_a_run_db_with_findings_from_an_older_fairprobe_still_reads(tmp_path: Path, data: Path) -> None:
    """A run.db that kept its findings in SQLite (before the Parquet log) re-renders the same."""
    run = tmp_path / "run"
    _accuracy(data, run)
    first = json.loads((run / "summary.json").read_text())
    findings = _stored(run)
    with sqlite3.connect(run / "run.db") as con:
        con.executemany(
            "INSERT INTO findings (id, data) VALUES (?, ?)", [(f["id"], json.dumps(f)) for f in findings]
        )
    for part in (run / "findings").glob("part-*.parquet"):
        part.unlink()
    assert render_reports(run) == first
    assert _stored(run) == findings


def test_overwrite_starts_the_findings_log_afresh_and_the_manifest_lists_it(
    tmp_path: Path, data: Path
) -> None:
    run = tmp_path / "run"
    _accuracy(data, run)
    two = tmp_path / "two.jsonl"
    two.write_text(
        "".join(json.dumps({"text": t, "label": y}) + "\n" for t, y in TEXTS[:2]), encoding="utf-8"
    )
    run_options("accuracy", {"model": "py:flipmodel:classify", "data": str(two)}, run, overwrite=True)
    assert [f["text"] for f in _stored(run)] == [t for t, _ in TEXTS[:2]]
    assert len(list((run / "findings").glob("part-*.parquet"))) == 1  # merged when the reports were written
    with open_locked(run) as store:
        assert "findings" in store.written()
