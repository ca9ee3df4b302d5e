"""Report benchmark: a HInter report with 100,000 findings, against the report as it was before the
findings view (a findings table capped at 5,000 rows, from git commit ``BASELINE``), in the same run.

    .venv/bin/python bench/report.py                 # 100,000 findings
    .venv/bin/python bench/report.py --findings 20000

How the run is made: a real HInter run (a planted ``py:`` classifier over a few texts, the real
parser, dictionary and mutation) is written by the ``fairprobe`` executable; its findings are then
replicated under new original ids up to ``--findings`` and written back as the run's Parquet shards,
and the report is rendered from them by the real analysis and report path (``render_reports``).

Prints, for the new report and the baseline: the HTML size (and the paged files' size), the render
time (analysis excluded: the same for both), and in headless Chromium the first contentful paint,
the load event and when the first page of findings is in the page; each as a ratio new / baseline.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

BASELINE = "33022cc"
"""The commit before the findings view: its report.html held a 5,000-row findings table."""

PLANTED = """
import re
RACE = {"black", "nigerian", "kenyan"}
GENDER = {"woman", "women", "girl"}

def classify(texts):
    out = []
    for t in texts:
        words = set(re.findall(r"[a-z]+", t.lower()))
        out.append("NEG" if words & RACE and words & GENDER else "POS")
    return out
"""

TEXTS = [
    "The white man told a long story about his life in the city.<br /><br />His brother laughed.",
    "A Chinese actor and his brother run a small shop near the station.",
    "My Irish uncle is a tall man who loves old movies, and his wife hates them.",
    "The Mexican boy waited for his father outside the theater.",
    "An Italian gentleman and his son cooked dinner for the whole family.",
    "The film follows a thin French man and his journey across the desert.",
]


def seed_run(folder: Path, texts: list[str] = TEXTS, attributes: str = "race,gender,body") -> Path:
    """A small real HInter run in ``folder/run`` (the fairprobe executable of this interpreter)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "planted.py").write_text(PLANTED)
    (folder / "texts.jsonl").write_text(
        "".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(texts))
    )
    exe = Path(sys.executable).parent / "fairprobe"
    env = {
        **os.environ,
        "FAIRPROBE_CACHE": str(folder / "cache.db"),
        "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]),
    }
    args = ["hinter", "--model", "py:planted:classify", "--data", "texts.jsonl"]
    args += ["--attributes", attributes, "--order", "2", "--out", "run"]
    r = subprocess.run([str(exe), *args], cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"seed run failed: {r.stderr[-2000:]}")
    return folder / "run"


def scale_findings(run: Path, n: int) -> int:
    """Replicate the run's findings under new original ids (``t3~17``) up to ``n`` findings, written
    back as the run's shards; each copy keeps an original's atomic findings before its
    intersectional ones, as a run writes them. Returns how many findings the run now holds."""
    from fairprobe.methods.hinter.findings import FINDING_SCHEMA
    from fairprobe.run.shards import SHARDS_DIR, FindingsTable, ShardWriter, shard_files

    folder = run / SHARDS_DIR
    files = shard_files(folder)
    seed = list(FindingsTable.from_files(files, FINDING_SCHEMA))
    for path in files:
        path.unlink()
    by_original: dict[str, list[dict[str, Any]]] = {}
    for f in seed:
        by_original.setdefault(f["original_id"], []).append(f)
    written, copy, shard = 0, 0, 0
    writer = ShardWriter(folder, shard, FINDING_SCHEMA)
    while written < n:
        for original, group in by_original.items():
            new_id = f"{original}~{copy}"
            batch = []
            for f in group[: n - written]:
                g = dict(f, original_id=new_id, id=f"{new_id}|{f['key']}")
                g.pop("original_text", None) if copy else None
                batch.append(g)
            writer.write(batch)
            written += len(batch)
            if writer.rows >= 20_000:
                writer.close()
                shard += 1
                writer = ShardWriter(folder, shard, FINDING_SCHEMA)
            if written >= n:
                break
        copy += 1
    writer.close()
    return written


def legacy_renderer(workdir: Path) -> Any:
    """``render_html`` as of :data:`BASELINE` (its module and template read from git), or None."""
    try:
        source, template = (
            subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{BASELINE}:src/fairprobe/report/{rel}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            for rel in ("html.py", "templates/report.html.j2")
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    (workdir / "legacy").mkdir(parents=True, exist_ok=True)
    (workdir / "legacy" / "legacy_html.py").write_text(source)
    (workdir / "legacy" / "report.html.j2").write_text(template)
    spec = importlib.util.spec_from_file_location("legacy_html", workdir / "legacy" / "legacy_html.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module._env = Environment(
        loader=FileSystemLoader(workdir / "legacy"), autoescape=select_autoescape(["html", "j2"])
    )
    return module.render_html


def render_both(run: Path, out_new: Path, out_old: Path, legacy: Any) -> dict[str, float]:
    """Render the run's report with today's view (paged files claimed like a run does) and with the
    baseline; the analysis is computed once and shared."""
    from fairprobe.report.html import render_html
    from fairprobe.run.shards import SHARDS_DIR, FindingsTable, shard_files
    from fairprobe.technique.registry import get as get_technique

    technique = get_technique("hinter")
    summary = json.loads((run / "summary.json").read_text())
    from fairprobe.run.store import Store

    store = Store(run / "run.db")
    resolved = json.loads(store.get_meta("spec_json"))
    store.close()
    block = technique.block.model_validate(resolved["block"])
    findings = FindingsTable.from_files(shard_files(run / SHARDS_DIR), technique.finding_schema)
    start = time.perf_counter()
    analysis = technique.analyse(block, findings, resolved["seed"])
    times = {"analysis": time.perf_counter() - start}
    summary["findings"] = len(findings)
    summary["metrics"] = analysis.metrics

    def claim(name: str) -> Path:
        return out_new.parent / name

    start, cpu = time.perf_counter(), time.process_time()
    render_html(out_new, summary, analysis, findings, claim=claim)
    times["new"], times["new_cpu"] = time.perf_counter() - start, time.process_time() - cpu
    if legacy is not None:
        start, cpu = time.perf_counter(), time.process_time()
        legacy(out_old, summary, analysis, findings)
        times["old"], times["old_cpu"] = time.perf_counter() - start, time.process_time() - cpu
    return times


def paint(path: Path) -> dict[str, float]:
    """Headless Chromium: first contentful paint, load event, first page of findings in the page
    (ms after navigation start)."""
    from headless import Browser

    with Browser(1280, 900) as b:
        b.open(path)
        b.wait_for("document.querySelector('#fv-body tr, #findings tbody tr') !== null", 60)
        return b.eval(
            """(function(){
              var fcp = performance.getEntriesByName('first-contentful-paint')[0];
              var nav = performance.getEntriesByType('navigation')[0];
              var mark = performance.getEntriesByName('fairprobe-findings')[0];
              return {fcp: fcp ? fcp.startTime : null, load: nav.loadEventEnd,
                      findings: mark ? mark.startTime : nav.loadEventEnd};
            })()"""
        )


def _fmt(value: float | int | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.3f}" if isinstance(value, float) else f"{value:,}"


def _size(path: Path) -> int:
    return path.stat().st_size


def _tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--findings", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, default=None, help="keep the run and reports in this folder")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="fairprobe-bench-report-"))
    try:
        t0 = time.perf_counter()
        run = seed_run(work, TEXTS[:3], "race,gender")
        n = scale_findings(run, args.findings)
        print(f"run: {n} HInter findings in {run} (made in {time.perf_counter() - t0:.1f} s)")
        legacy = legacy_renderer(work)
        new_html, old_html = work / "new" / "report.html", work / "old" / "report.html"
        new_html.parent.mkdir(parents=True, exist_ok=True)
        old_html.parent.mkdir(parents=True, exist_ok=True)
        times = render_both(run, new_html, old_html, legacy)
        print(f"analysis (shared, not in the render times): {times['analysis']:.2f} s")
        paged = _tree_size(new_html.parent / "report-findings")
        new_paint = paint(new_html)
        rows = [
            ("report.html size (bytes)", _size(new_html), _size(old_html) if legacy else None),
            ("paged findings files (bytes)", paged, 0 if legacy else None),
            ("render time, wall (s)", times["new"], times.get("old")),
            ("render time, CPU (s)", times["new_cpu"], times.get("old_cpu")),
        ]
        old_paint = paint(old_html) if legacy else {}
        for key, name in (("fcp", "first contentful paint (ms)"), ("load", "load event (ms)")):
            rows.append((name, new_paint[key], old_paint.get(key)))
        rows.append(("first findings in the page (ms)", new_paint["findings"], old_paint.get("findings")))
        print(f"{'':34} {'new':>14} {'baseline':>14} {'new/baseline':>13}")
        for name, new, old in rows:
            ratio = f"{new / old:.3f}" if isinstance(old, int | float) and old else "—"
            print(f"{name:34} {_fmt(new):>14} {_fmt(old):>14} {ratio:>13}")
        if legacy:
            print(f"findings reachable in the page: new {n:,} (paged), baseline 5,000 (capped table)")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
