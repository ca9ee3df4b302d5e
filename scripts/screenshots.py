"""Screenshots of the report's findings view for docs/screenshots/, from real runs of the packaged models.

    .venv/bin/python scripts/screenshots.py                 # all three (a few minutes on 2 cores)
    .venv/bin/python scripts/screenshots.py --only hinter   # one of hinter, metafair, caffe
    .venv/bin/python scripts/screenshots.py --runs DIR      # keep (and resume) the runs in DIR

Runs: the demo (HInter, IMDB sample, packaged sentiment model); Meta-Fair on the shipped
examples/metafair/tests.jsonl with SmolLM2 as model and judge (3 relations, 1 test each); CAFFE on
examples/caffe/question.yaml with SmolLM2 (2 triples, at most 3 pairs each). Each run is resumed
when its folder already holds it. Needs Chromium (headless) on PATH.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from headless import Browser, chromium  # noqa: E402

OUT = ROOT / "docs" / "screenshots"

RUNS = {
    "hinter": (["demo"], "demo-hinter"),
    "metafair": (
        [
            "metafair",
            "run",
            "--model",
            "embedded:smollm2",
            "--judges",
            "embedded:smollm2",
            "--tests",
            str(ROOT / "examples/metafair/tests.jsonl"),
            "--mrs",
            "MR1,MR11,MR12",
            "--per-mr",
            "1",
            "--repeat",
            "1",
            "--max-tokens",
            "48",
            "--judge-max-tokens",
            "120",
            "--judge-retries",
            "1",
        ],
        "",
    ),
    "caffe": (
        [
            "caffe",
            "--case",
            str(ROOT / "examples/caffe/question.yaml"),
            "--triples",
            "2",
            "--max-pairs-per-triple",
            "3",
            "--generator-calls",
            "1",
            "--metrics",
            "lsa",
        ],
        "",
    ),
}


def run(name: str, runs: Path) -> Path:
    """Run (or resume) ``name`` into ``runs/name``; returns the folder that holds report.html."""
    args, sub = RUNS[name]
    out = runs / name
    exe = Path(sys.executable).parent / "fairprobe"
    r = subprocess.run([str(exe), *args, "--out", str(out)], capture_output=True, text=True, timeout=1800)
    folder = out / sub if sub else out
    if not (folder / "report.html").is_file():
        raise SystemExit(f"{name}: no report.html (exit {r.returncode}): {r.stderr[-1500:]}")
    return folder


def rerender(name: str, runs: Path) -> Path:
    """Re-render the finished run ``runs/name`` with this checkout's report code."""
    _, sub = RUNS[name]
    folder = runs / name / sub if sub else runs / name
    exe = Path(sys.executable).parent / "fairprobe"
    r = subprocess.run([str(exe), "report", str(folder)], capture_output=True, text=True, timeout=600)
    if not (folder / "report.html").is_file():
        raise SystemExit(
            f"{name}: no report.html after re-rendering (exit {r.returncode}): {r.stderr[-1500:]}"
        )
    return folder


def shoot(folder: Path, png: Path) -> None:
    """The findings section with its first findings, the first one expanded."""
    with Browser(1280, 1000) as b:
        b.open(folder / "report.html")
        b.wait_for("document.querySelectorAll('#fv-body tr.fv-row').length > 0", 60)
        b.eval("document.getElementById('findings').scrollIntoView()")
        b.screenshot(png, "#findings", max_height=1300)


def shoot_top(folder: Path, png: Path) -> None:
    """The top of the report: the verdict with its reasons, what the run found and the first ranked
    table (what changed answers most)."""
    with Browser(1280, 1000) as b:
        b.open(folder / "report.html")
        b.wait_for("document.readyState === 'complete'", 60)
        b.screenshot(png, "main", max_height=1800)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=sorted(RUNS), action="append")
    parser.add_argument("--runs", type=Path, default=None, help="run folders (default: a temporary folder)")
    parser.add_argument(
        "--rerender",
        action="store_true",
        help="the runs in --runs are finished: re-render their reports (fairprobe report) instead of running",
    )
    args = parser.parse_args()
    if chromium() is None:
        raise SystemExit("Chromium is needed for screenshots (apt-get install chromium)")
    runs = args.runs or Path(tempfile.mkdtemp(prefix="fairprobe-screens-"))
    runs.mkdir(parents=True, exist_ok=True)
    for name in args.only or list(RUNS):
        folder = rerender(name, runs) if args.rerender else run(name, runs)
        png = OUT / f"{name}-findings.png"
        shoot(folder, png)
        top = OUT / f"{name}-summary.png"
        shoot_top(folder, top)
        print(f"{name}: {png.relative_to(ROOT)}, {top.relative_to(ROOT)} (run in {folder})")


if __name__ == "__main__":
    main()
