"""Benchmark: how loose is the zonotope verifier? Gap and per-layer widths on trained models.

For each model, ``--n`` held-out sentences (at most 64 tokens, drawn as ``certify verify`` draws
them) get the verifier's ε* (:func:`~fairprobe.methods.certify.network.max_verified_eps`) under
each ``--relaxation``, and the attack radius (:mod:`~fairprobe.methods.certify.attack`,
the empirical upper bound). It prints ε*, the gap (attack radius / ε*) per sentence and their
medians, the zonotope seconds per sentence, and — at one common radius (the first relaxation's
ε* of each sentence) — the median width of the bounds after every layer, relative to the input
box's width 2ε: where the box blows up.

    OMP_NUM_THREADS=1 nice -n 10 python bench/verifier_gap.py --model /tmp/certify/quick/adult-gender-8 \\
        --n 4 --relaxation fast deept
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from statistics import median

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402

from fairprobe.methods.certify.attack import AttackSettings, attack  # noqa: E402
from fairprobe.methods.certify.certificate import Substitutes, choose_sentences, logits_of, token_ids  # noqa: E402
from fairprobe.methods.certify.data import load_task  # noqa: E402
from fairprobe.methods.certify.model import load_model  # noqa: E402
from fairprobe.methods.certify.network import RELAXATIONS, abstract_input, max_verified_eps, walk  # noqa: E402


def layer_widths(model, e: torch.Tensor, eps: float, relaxation: str) -> list[tuple[str, float]]:  # type: ignore[no-untyped-def]
    """Median bound width after every recorded layer, divided by the input box's width 2ε."""
    rec: list = []
    with torch.no_grad():
        walk(model, abstract_input(e, eps, "zonotope"), 4096, rec, relaxation=relaxation)
    return [(name, float((hi - lo).median()) / (2 * eps)) for name, (lo, hi) in rec]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, nargs="+", required=True)
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--steps", type=int, default=6, help="bisection rounds of the ε* search")
    ap.add_argument("--relaxation", nargs="+", default=["fast", "deept"], choices=list(RELAXATIONS))
    ap.add_argument("--no-widths", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)
    for model_dir in args.model:
        loaded = load_model(model_dir)
        subs = Substitutes(loaded, k=50)
        pool = [x for x in load_task(loaded.cfg.task, "test") if len(token_ids(loaded, x.text)) <= 64]
        sentences = choose_sentences(pool, subs, args.n, 0)
        eps_of: dict[str, list[float]] = {m: [] for m in args.relaxation}
        gap_of: dict[str, list[float]] = {m: [] for m in args.relaxation}
        secs_of: dict[str, list[float]] = {m: [] for m in args.relaxation}
        widths: dict[str, list[list[tuple[str, float]]]] = {m: [] for m in args.relaxation}
        for ex in sentences:
            ids = token_ids(loaded, ex.text)
            e = loaded.module.tok.weight[torch.tensor(ids)].detach()
            pred = int(logits_of(loaded, ids).argmax())
            line = [f"{model_dir.name} {ex.id} ({len(ids)} tokens)"]
            ref = None
            for m in args.relaxation:
                cpu = time.process_time()
                res = max_verified_eps(
                    loaded.module, e, pred, "zonotope", 4096, steps=args.steps, relaxation=m
                )
                secs_of[m].append(time.process_time() - cpu)
                eps_of[m].append(res.eps_star)
                ref = ref if ref is not None else res.eps_star
                if not args.no_widths and res.eps_star > 0:
                    widths[m].append(layer_widths(loaded.module, e, ref, m))
            att = attack(
                loaded.module, ids, pred, min(eps_of[m][-1] for m in args.relaxation), [], AttackSettings()
            )
            for m in args.relaxation:
                gap = att.upper / eps_of[m][-1] if att.upper and eps_of[m][-1] > 0 else float("nan")
                gap_of[m].append(gap)
                line.append(f"{m}: ε* {eps_of[m][-1]:.3e} gap ×{gap:.3g} ({secs_of[m][-1]:.1f}s cpu)")
            line.append(f"attack radius {att.upper}")
            print("; ".join(line), flush=True)
        for m in args.relaxation:
            print(
                f"== {model_dir.name} softmax={m}: median ε* {median(eps_of[m]):.3e}, median gap "
                f"×{median(gap_of[m]):.3g}, median cpu {median(secs_of[m]):.1f}s per ε* search"
            )
            if widths[m]:
                names = [nm for nm, _ in widths[m][0]]
                meds = [median(w[i][1] for w in widths[m]) for i in range(len(names))]
                print("   width / 2ε after each layer (median over sentences, at the first relaxation's ε*):")
                print("   " + ", ".join(f"{nm} {v:.3g}" for nm, v in zip(names, meds, strict=True)))
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
