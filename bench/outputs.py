"""Benchmark: what a large HInter run writes, its peak memory and its report re-render time, against
the layout before findings moved out of run.db and findings.jsonl (same campaign, same machine).

The campaign is the one of ``tests/methods/test_hinter_memory.py`` cut to ``--mutants``: reviews
drawn at random from the IMDB sample × race, gender, body at order 3 with every adjective (about 6,000 mutants per review), the
dependency invariant off, and a keyword rule as the model (``py:``, constant time per text), so the
figures are the pipeline's own: mutant generation, the answer cache, the Parquet shards, the
reports. Both layouts run the real ``fairprobe hinter`` command: the current source, and the
baseline source exported from git (``--baseline-rev``, default the commit before this change), each
with ``FAIRPROBE_CACHE=off`` (the run folder holds every answer). Printed per layout: the bytes
of each file and folder in the run folder, the driver's peak RSS (psutil, sampled every 50 ms) and
the wall time of ``fairprobe report RUN`` (a fresh process: imports included). Then the bytes
scaled linearly to 1,000,000 mutants — an extrapolation, marked as such (answers and findings grow
with the campaign, the reports do not; peak RSS is bounded by the chunk and shard sizes and is not
scaled) — and the re-render measured at ``--rerender-at`` findings: the run's shard files repeated
(the real files through the real read path), wall and CPU time of ``fairprobe report``.

    python bench/outputs.py                     # 20,000 mutants, both layouts, re-render at 1M findings
                                                # (about 2 min, 4-5 min at a load of 15 on 2 cores)
    python bench/outputs.py --rerender-at 0     # without the 1M re-render (about 1.5 min at load 15)
    python bench/outputs.py --mutants 1000000 --no-baseline --rerender-at 0 --work DIR
                                                # the real campaign (10 min of execution on 2 cores)
    python bench/outputs.py --rerender-only DIR/run-current   # `fairprobe report` of a kept run, twice

Measured 2026-11-26 on 2 shared cores at load 14-16 (18,074 mutants): 54.2 MB written before, 4.2 MB
now; peak RSS 454 / 366 MiB; ``fairprobe report`` of 1,012,144 findings 41.1 s wall (16.0 s CPU,
with a 2.56 GB findings.jsonl) before, 24.5 s (8.5 s CPU) now; extrapolated to 1M mutants: 2,860 MB
before, 94 MB now.

Measured at 1M (2026-11-26, load 5-7 from other work): 128 reviews, 1,067,043 mutants, executed in
328 s (228 s CPU); run.db 27.9 MB, findings/ 56.2 MB (zstd 9, 8,192-row groups), report-findings/
9.4 MB (gzip-compressed pages): 93.6 MB in all; peak RSS of the run 996 MiB. ``fairprobe report`` of
it: 4.0-4.2 s CPU (8.1-8.6 s wall at load 7.3), peak RSS 901 MiB, the findings view's pages reused
(a5ce989: 467 s CPU, peak 1,848 MiB).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

from _proc import peak_rss  # bench/ is on the path: the benchmarks run as scripts

KEYWORD_MODEL = """
import re
_NEG = re.compile(r"\\b(women|woman|black|old|poor)\\b", re.I)

def predict(texts):
    return ["NEG" if _NEG.search(t) else "POS" for t in texts]
"""

ROOT = Path(__file__).resolve().parents[1]


def _tree_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _export_source(rev: str, into: Path) -> Path:
    """``src/`` of ``rev`` (git archive) under ``into``; returns the folder to put on PYTHONPATH."""
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True)
    with tarfile.open(fileobj=BytesIO(blob.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def _fairprobe(src: Path, work: Path) -> tuple[list[str], dict[str, str]]:
    env = {
        **os.environ,
        "FAIRPROBE_CACHE": "off",
        "PYTHONPATH": os.pathsep.join([str(src), str(work)]),
        # compiled modules cached (outside the source tree), as an installed package has them: without,
        # every `fairprobe report` compiles ~130 modules again (1.8 s of CPU)
        "PYTHONPYCACHEPREFIX": str(Path(tempfile.gettempdir()) / "fairprobe-bench-pycache"),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return [sys.executable, "-c", "from fairprobe.cli import main; main()"], env


def _reviews(mutants: int, path: Path) -> tuple[Path, int]:
    """IMDB sample reviews, drawn in a seeded random order, that together give about ``mutants``
    mutants under the campaign (counted with HInter's own ``count_generated``; a review that would
    overshoot the target by over 10% is passed over; it stops once the target is reached), as a JSONL file; returns it and the count."""
    import random

    from fairprobe.data.datasets import load_dataset
    from fairprobe.lexicons.dictionary import load_dictionary
    from fairprobe.methods.hinter.block import HInterBlock
    from fairprobe.methods.hinter.cases import count_generated

    block = HInterBlock(
        model="py:keywords:predict", attributes=["race", "gender", "body"], order=3, invariant=False,
        person_adjectives=False,
    )  # fmt: skip
    dictionary = load_dictionary(None)
    records = load_dataset("imdb-sample").records
    chosen, total = [], 0
    for record in random.Random(0).sample(records, len(records)):
        n = count_generated(record, dictionary, block)
        if n and total + n <= mutants * 1.1:
            chosen.append(record)
            total += n
        if total >= mutants:
            break
    path.write_text("".join(json.dumps({"text": r.text}) + "\n" for r in chosen), encoding="utf-8")
    return path, total


def _timed(cmd: list[str], work: Path, env: dict[str, str], log: Path) -> dict:
    """Run ``cmd`` as a child: wall and CPU seconds (user + system, from the child's rusage) and its
    peak RSS; its standard error goes to ``log`` (a file, not a pipe: progress lines would fill a pipe)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with log.open("w+") as fh:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=fh)
        peak = peak_rss(proc, 0.05)
        wall = time.perf_counter() - started
        fh.seek(0)
        err = fh.read()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[-3:])}: exited {proc.returncode}\n{err[-2000:]}")
    executed = re.search(r"executed in ([\d.]+)s", err)
    return {
        "wall": wall,
        "cpu": cpu,
        "peak": peak,
        "executed": float(executed.group(1)) if executed else None,
    }


def _rerenders(exe: list[str], env: dict[str, str], work: Path, run: Path, label: str) -> list[dict]:
    """``fairprobe report RUN`` twice in fresh processes (imports included): the first after the run
    (its paged findings view already written by the run), then again."""
    return [_timed([*exe, "report", str(run)], work, env, work / f"{label}-report{i}.log") for i in (1, 2)]


def _files(run: Path) -> dict[str, int]:
    return {p.name: _tree_bytes(p) for p in sorted(run.iterdir()) if p.name not in ("run.lock", "run.db-shm")}


def _measure(label: str, src: Path, work: Path, texts: Path) -> dict:
    exe, env = _fairprobe(src, work)
    run = work / f"run-{label}"
    args = [
        "hinter", "--model", "py:keywords:predict", "--attributes", "race,gender,body", "--order", "3",
        "--no-invariant", "--all-adjectives", "--data", str(texts), "--out", str(run),
    ]  # fmt: skip
    shutil.rmtree(run, ignore_errors=True)  # a fresh run (the same spec in the same folder would resume)
    t = _timed([*exe, *args], work, env, work / f"{label}.log")
    summary = json.loads((run / "summary.json").read_text())
    files = _files(run)  # what the run wrote (before any re-render)
    renders = _rerenders(exe, env, work, run, label)
    mutants = sum(v["generated"] for v in summary["metrics"]["mutants"].values())
    return {
        "label": label,
        "mutants": mutants,
        "findings": summary["findings"],
        "files": files,
        "total": sum(files.values()),
        "peak_rss": t["peak"],
        "run_s": t["wall"],
        "run_cpu": t["cpu"],
        "executed_s": t["executed"],
        "renders": renders,
        "render_s": renders[0]["wall"],
    }


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def _print_render(renders: list[dict]) -> None:
    for i, r in enumerate(renders, 1):
        print(
            f"    `fairprobe report` #{i}: {r['wall']:.2f} s wall, {r['cpu']:.2f} s CPU, peak RSS "
            f"{r['peak'] / 2**20:,.0f} MiB (load {os.getloadavg()[0]:.1f})"
        )


def _print(m: dict) -> None:
    executed = f" (executed in {m['executed_s']:.0f} s, then the reports)" if m["executed_s"] else ""
    print(
        f"{m['label']}: {m['mutants']:,} mutants, {m['findings']:,} findings, run {m['run_s']:.1f} s wall"
        f"{executed}, {m['run_cpu']:.0f} s CPU"
    )
    for name, size in m["files"].items():
        print(f"    {name:<16} {_mb(size):>12}")
    print(f"    {'total':<16} {_mb(m['total']):>12}")
    print(f"    peak RSS of the run {m['peak_rss'] / 2**20:,.0f} MiB")
    _print_render(m["renders"])


SCALES = ("run.db", "findings", "findings.jsonl")
"""What grows with the campaign (answers, findings); the reports' size does not (the HTML shows a
bounded sample), so they are counted as measured."""


def _scaled(m: dict, target: int) -> str:
    k = target / m["mutants"]
    grown = {name: size * (k if name in SCALES else 1) for name, size in m["files"].items()}
    parts = ", ".join(f"{name} {_mb(grown.get(name, 0))}" for name in SCALES)
    return f"{m['label']}: {_mb(sum(grown.values()))} written ({parts}; extrapolated)"


def _rerender_at(m: dict, src: Path, work: Path, target: int) -> str:
    """``fairprobe report`` on a copy of the run whose shard files are repeated up to ``target``
    findings (real shards through the real read path; finding ids repeat, which the analysis
    does not check): measured, not extrapolated."""
    import resource

    import pyarrow.parquet as pq

    run = work / f"run-{m['label'].split()[0]}"
    big = work / "big"
    shutil.rmtree(big, ignore_errors=True)
    shutil.copytree(run, big, ignore=shutil.ignore_patterns("findings.jsonl", "run.lock"))
    shards = sorted((big / "findings").glob("shard-*.parquet"))
    rows = [pq.ParquetFile(p).metadata.num_rows for p in shards]
    total, index = sum(rows), len(shards)
    while total < target:
        for path, n in zip(shards, rows, strict=True):
            shutil.copyfile(path, path.parent / f"shard-{index:06d}.parquet")
            index, total = index + 1, total + n
    exe, env = _fairprobe(src, work)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    rr = subprocess.run([*exe, "report", str(big)], cwd=work, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rr.returncode not in (0, 1):
        raise SystemExit(f"report of {total:,} findings exited {rr.returncode}\n{rr.stderr[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    jsonl = big / "findings.jsonl"
    size = f"; it wrote findings.jsonl of {_mb(jsonl.stat().st_size)}" if jsonl.exists() else ""
    summary = json.loads((big / "summary.json").read_text())
    shutil.rmtree(big)
    return (
        f"{m['label']}: `fairprobe report` of {summary['findings']:,} findings (measured): {wall:.1f} s wall, "
        f"{cpu:.1f} s CPU, load {os.getloadavg()[0]:.1f}{size}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=20_000, help="campaign size (rounded to whole reviews)")
    ap.add_argument("--baseline-rev", default="33022cc", help="git revision of the layout compared against")
    ap.add_argument("--no-baseline", action="store_true", help="measure the current layout only")
    ap.add_argument(
        "--rerender-at",
        type=int,
        default=1_000_000,
        help="also time `fairprobe report` on the run's shards repeated to this many findings (0: skip)",
    )
    ap.add_argument(
        "--work",
        type=Path,
        help="keep the run folders here (default: a temporary folder, removed at the end)",
    )
    ap.add_argument(
        "--rerender-only",
        type=Path,
        metavar="RUN",
        help="only time `fairprobe report RUN` (twice) on an existing run folder, with the current source",
    )
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if args.rerender_only:
        run = args.rerender_only.resolve()
        work = run.parent
        exe, env = _fairprobe(ROOT / "src", work)
        summary = json.loads((run / "summary.json").read_text())
        print(f"{run}: {summary['findings']:,} findings")
        _print_render(_rerenders(exe, env, work, run, "rerender"))
        for name, size in _files(run).items():
            print(f"    {name:<16} {_mb(size):>12}")
        return
    with tempfile.TemporaryDirectory(prefix="fairprobe-bench-outputs-") as tmp:
        work = Path(tmp)
        if args.work:
            work = args.work.resolve()
            work.mkdir(parents=True, exist_ok=True)
        (work / "keywords.py").write_text(KEYWORD_MODEL)
        data, planned = _reviews(args.mutants, work / "reviews.jsonl")
        print(f"{len(data.read_text().splitlines())} IMDB reviews, {planned:,} mutants")
        layouts = [("current", ROOT / "src")]
        if not args.no_baseline:
            layouts.insert(
                0, (f"baseline {args.baseline_rev}", _export_source(args.baseline_rev, work / "base"))
            )
        results = []
        for label, src in layouts:
            m = _measure(label.split()[0], src, work, data)
            m["label"] = label
            _print(m)
            results.append(m)
        if results[0]["mutants"] < 1_000_000:
            print(
                f"\nBytes extrapolated linearly to 1,000,000 mutants (measured at {results[0]['mutants']:,}):"
            )
            for m in results:
                print("  " + _scaled(m, 1_000_000))
        if args.rerender_at:
            print(f"\nRe-render with the shards repeated to {args.rerender_at:,} findings:")
            for m, (_, src) in zip(results, layouts, strict=True):
                print("  " + _rerender_at(m, src, work, args.rerender_at), flush=True)
        if len(results) == 2:
            base, cur = results
            print(
                f"\ncurrent / baseline: bytes written {cur['total'] / base['total']:.2f}x, peak RSS "
                f"{cur['peak_rss'] / base['peak_rss']:.2f}x, re-render {cur['render_s'] / base['render_s']:.2f}x"
            )


if __name__ == "__main__":
    main()
