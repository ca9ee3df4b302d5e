"""Re-rendering a large HInter report: the paged findings view (``report-findings/``) is reused when
the findings it was made from are unchanged, and rewritten when a shard, a page or its manifest
changed; the re-rendered report says exactly what the first render said.

The run is real, in process (bench/report.py's planted classifier: a race word and a gender word together flip
the answer, so there are biased and hidden intersectional findings), its findings replicated to a
few thousand (above the size at which the view is paged) through the run's own shards.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from fairprobe.methods.hinter.findings import FINDING_SCHEMA
from fairprobe.report.findings_view import INLINE_MAX, MANIFEST, VIEW_DIR, js_packed, read_page
from fairprobe.run.runner import render_reports, run_options
from fairprobe.run.shards import FindingsTable, shard_files

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.report import PLANTED, TEXTS, scale_findings  # noqa: E402

N = INLINE_MAX + 1500


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pages")
    (folder / "planted.py").write_text(PLANTED)
    (folder / "texts.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS[:2]))
    options = {
        "model": "py:planted:classify",
        "data": str(folder / "texts.jsonl"),
        "attributes": ["race", "gender"],
        "order": 2,
        "invariant": False,
    }
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(folder))
        mp.setenv("FAIRPROBE_CACHE", str(folder / "cache.db"))
        run_options("hinter", options, folder / "run")
    run = folder / "run"
    assert scale_findings(run, N) == N
    render_reports(run)
    return run


@pytest.fixture
def run(seeded: Path, tmp_path: Path) -> Path:
    """A fresh copy of the rendered run for each test (tests change its files)."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(seeded, copy)
    return copy


def _pages(run: Path) -> dict[str, int]:
    """Page file -> modification time in ns (a rewritten page gets a new one)."""
    return {p.name: p.stat().st_mtime_ns for p in sorted((run / VIEW_DIR).glob("*.js"))}


def _script_json(path: Path) -> object:
    return read_page(path)


def _touch_later(run: Path) -> None:
    """Move every page's time back, so a rewrite is seen whatever the file system's time resolution."""
    import os

    for p in (run / VIEW_DIR).glob("*.js"):
        os.utime(p, ns=(1_000_000_000, 1_000_000_000))


def test_a_rerender_reuses_the_pages_and_says_the_same(run: Path) -> None:
    summary = json.loads((run / "summary.json").read_text())
    html = (run / "report.html").read_text()
    assert summary["findings"] == N and (run / VIEW_DIR / MANIFEST).is_file()
    _touch_later(run)
    before = _pages(run)
    again = render_reports(run)
    assert _pages(run) == before  # not one page written again
    assert again == summary == json.loads((run / "summary.json").read_text())
    assert (run / "report.html").read_text() == html  # metrics, ranked tables, examples: all the same
    assert summary["metrics"]["counts"]["hidden"] > 0  # the hidden-bias examples are exercised


def test_a_changed_shard_rewrites_the_pages(run: Path) -> None:
    _touch_later(run)
    before = _pages(run)
    index = _script_json(run / VIEW_DIR / "index.js")
    # Flip one judged unbiased finding to biased, in place, in its shard (as a re-run would).
    shard = shard_files(run / "findings")[0]
    table = pq.read_table(shard)
    rows = table.to_pylist()
    i = next(i for i, r in enumerate(rows) if r["valid"] and not r["biased"] and r["mutant_output"])
    finding = json.loads(rows[i]["finding"])
    finding["biased"] = rows[i]["biased"] = True
    rows[i]["finding"] = json.dumps(finding, ensure_ascii=False)
    pq.write_table(type(table).from_pylist(rows, schema=table.schema), shard, compression="zstd")
    summary = render_reports(run)
    after = _pages(run)
    assert all(after[name] != t for name, t in before.items())  # every page written again
    new_index = _script_json(run / VIEW_DIR / "index.js")
    assert sum(new_index["failed"]) == sum(index["failed"]) + 1
    counts = summary["metrics"]["counts"]
    assert counts["biased_atomic"] + counts["biased_intersectional"] == sum(new_index["failed"])


@pytest.mark.parametrize("damage", ["missing page", "stale page", "no manifest"])
def test_a_missing_or_stale_page_is_written_again(run: Path, damage: str) -> None:
    folder = run / VIEW_DIR
    good = {p.name: p.read_bytes() for p in folder.glob("*.js")}
    chunk = folder / "chunk-000001.js"
    if damage == "missing page":
        chunk.unlink()
    elif damage == "stale page":
        key, data = read_page(chunk)
        data["texts"][0] += " (an older render)"
        chunk.write_text(js_packed("chunkz", key, data))
    else:
        (folder / MANIFEST).unlink()
    render_reports(run)
    assert {p.name: p.read_bytes() for p in folder.glob("*.js")} == good
    assert (folder / MANIFEST).is_file()


def test_ranked_substitutions_and_group_words_match_a_count_per_finding(run: Path, monkeypatch) -> None:
    """The vectorised aggregates equal a plain count over the findings, one by one; the ranking keeps
    only the substitutions the report can show, and what it shows is what the full ranking gives."""
    from fairprobe.methods.hinter import analysis, ranking

    table = FindingsTable.from_files(shard_files(run / "findings"), FINDING_SCHEMA)
    findings = list(table)
    judged = [f for f in findings if f["valid"] and not f["invalid"] and f["mutant_output"] is not None]
    mutants, flips = Counter(), Counter()
    for f in judged:
        mutants[(f["kind"], f["key"])] += 1
        flips[(f["kind"], f["key"])] += bool(f["biased"])
    full = [
        ranking.Substitution(kind, *ranking.words_of(key), n, flips[(kind, key)])
        for (kind, key), n in mutants.items()
    ]
    full.sort(key=lambda s: (-s.flips, -s.rate, -s.mutants, s.words))
    metrics = json.loads((run / "summary.json").read_text())["metrics"]
    flipped = sum(1 for s in full if s.flips)
    # fewer rows shown than flipped substitutions (a group's worst may lie past them), and more
    # (the rest of the table is filled with the unflipped ones with the most mutants)
    for shown in (3, flipped + 4):
        monkeypatch.setattr(ranking, "SHOWN", shown)
        subs = ranking.substitutions(table)
        assert subs.total == len(full) > len(subs) >= shown  # some were left out
        assert subs == [s for s in full if s in subs]  # in the full ranking's order
        assert ranking.tables(metrics, subs) == ranking.tables(metrics, full)
        assert ranking.explanations(metrics, subs) == ranking.explanations(metrics, full)
        assert ranking.headline(metrics, subs) == ranking.headline(metrics, full)
        assert ranking.top_findings(subs) == ranking.top_findings(full)
    c = analysis._Columns(table)
    assert ranking.substitutions(c.table) == subs
    rows, new, old, words = c.group_words()
    expected = []
    for i, f in enumerate(findings):
        for part in f["key"].split("|"):
            if ">" in part:
                before, _, after = part.partition(":")[2].partition(">")
                expected.append((i, after, before))
    assert [(int(r), words[n], words[o]) for r, n, o in zip(rows, new, old, strict=True)] == expected
