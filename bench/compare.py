"""Benchmark: `fairprobe compare` on two HInter runs of 100,000 findings each.

The two run folders are synthetic (written here through fairprobe's own store and Parquet shard
writer, in the layout a HInter run leaves): 100,000 mutants of 5,000 originals, each ~300
characters, over race, gender and race+gender; the "new" model flips 3% more gender mutants. Only
their making is synthetic: the comparison runs the real `fairprobe compare` executable.

Prints the comparison's wall time and peak memory (its own process), the limits (30 s, 1 GB), and
the wall time as a ratio against `fairprobe report` re-rendering one of the two runs (the baseline,
measured in the same run on the same machine).

    python bench/compare.py [--findings 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _proc import peak_rss  # bench/ is on the path: the benchmarks run as scripts

from fairprobe.methods.hinter.findings import FINDING_SCHEMA
from fairprobe.run.shards import SHARDS_DIR, ShardWriter
from fairprobe.run.store import Store
from fairprobe.technique.spec import parse_spec

PER_SHARD = 5000
FILLER = "The film had a slow start but the second half was gripping and the cast did well. " * 3


def make_run(folder: Path, n: int, model: str, extra_gender_flips: float, seed: int = 0) -> None:
    from fairprobe.run.folder import now, open_run

    spec = parse_spec(f"hinter:\n  model: {model}\n  data: imdb-sample\n  attributes: [race, gender]\n")[0]
    store: Store = open_run(spec, folder)
    rng = random.Random(seed)
    batch: list[dict] = []
    for i in range(n):
        original = i // 20
        kind, attrs = [("atomic", ["race"]), ("atomic", ["gender"]), ("intersectional", ["gender", "race"])][
            i % 3
        ]
        base_flip = random.Random(i).random() < 0.02
        flip = base_flip or ("gender" in attrs and rng.random() < extra_gender_flips)
        text = f"{FILLER} She met the {i % 97} man at the premiere of film {original}."
        batch.append(
            {
                "id": f"{original}|{kind}:{i}",
                "original_id": str(original),
                "kind": kind,
                "order": len(attrs),
                "attributes": attrs,
                "replacements": [[a, "he", "she"] for a in attrs],
                "text": text,
                "spans": [[len(FILLER) + 1, len(FILLER) + 4]],
                "original_output": ["POS"],
                "mutant_output": ["NEG" if flip else "POS"],
                "valid": True,
                "invalid": False,
                "biased": flip,
                "hidden": False,
                "parents": [],
                "key": f"{kind}:{i}",
            }
        )
        if len(batch) == PER_SHARD or i == n - 1:
            writer = ShardWriter(folder / SHARDS_DIR, i // PER_SHARD, FINDING_SCHEMA)
            writer.write(batch)
            writer.close()
            store.set_state(f"shard:{i // PER_SHARD}", {"rows": len(batch)})
            batch = []
    store.set_meta(finished=now(), stopped="")
    store.close()


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, peak resident memory in MiB (this child alone, sampled every 20 ms), exit code."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = peak_rss(proc)
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {err[-2000:]}")
    return wall, peak / 2**20, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--findings", type=int, default=100_000)
    args = parser.parse_args()
    exe = str(Path(sys.executable).parent / "fairprobe")
    env = {**os.environ, "FAIRPROBE_CACHE": "off"}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        make_run(root / "base", args.findings, "py:base:classify", 0.0)
        make_run(root / "new", args.findings, "py:new:classify", 0.03)
        print(f"made two runs of {args.findings:,} findings in {time.perf_counter() - t0:.1f}s")
        report_s, report_mb, _ = timed([exe, "report", str(root / "base")], env)
        compare_s, compare_mb, code = timed(
            [exe, "compare", str(root / "base"), str(root / "new"), "--out", str(root / "cmp")], env
        )
        summary = json.loads((root / "cmp" / "summary.json").read_text())
        gender = summary["metrics"]["slices"]["error_rate"]["gender"]
        print(f"baseline (report of one run): {report_s:.1f}s wall, peak {report_mb:.0f} MiB")
        print(f"compare: {compare_s:.1f}s wall (limit 30 s), peak {compare_mb:.0f} MiB (limit 1024 MiB)")
        print(
            f"gender slice: {gender['verdict']}, delta {gender['delta']:+.4f}, adjusted p {gender['p_adjusted']:.2g}"
        )
        print(f"ratio compare / report: {compare_s / report_s:.2f}")
        print(f"verdict: {summary['verdict']} (exit {code})")


if __name__ == "__main__":
    main()
