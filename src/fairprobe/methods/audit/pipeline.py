"""``execute`` of the ``audit:`` block: build the pool, reach the black box through the run's cache,
run Algorithm 1 (bafa.txt App. A.2) once per seed, and log every round as a finding.

Findings: one ``round`` finding per audit round (the trajectory log of issue 7 §4) and one
``final`` finding per seed, ids ``<strategy>/seed<N>/round<R>`` and ``<strategy>/seed<N>/final``.
Both carry the raw interval (``lower``/``upper``, the paper's) and the nested one
(``nested_lower``/``nested_upper``, see :mod:`.engine`); a final finding also counts the seed's
black-box answers (``cases``) and the unusable ones among them (``invalid``).
A seed whose ``final`` finding exists is skipped on resume; a seed cut off mid-way is re-run from its
start, which costs no black-box query (every answer is in the cache). ``trajectory.csv`` (columns
``strategy, seed, round, queries, lower, upper, estimate, width, error, true_value, nested_lower,
nested_upper, stopped_by``) is written next to the reports for ``fairprobe audit evaluate``
(``stopped_by`` lets it keep seeds that stopped early in queries-to-ε).
"""

from __future__ import annotations

import csv
from typing import Any

import numpy as np

from fairprobe.errors import UsageError
from fairprobe.methods.audit.blackbox import BlackBox, CachedScores
from fairprobe.methods.audit.block import AuditBlock
from fairprobe.methods.audit.cerm import CermConfig
from fairprobe.methods.audit.engine import AuditConfig, RoundLog, run_audit
from fairprobe.methods.audit.metrics import gap
from fairprobe.methods.audit.pool import ADULT_SOURCES, Pool, build_pool, load_source
from fairprobe.methods.audit.selection import NEEDS_INPUTS, ORACLE, SelectorConfig
from fairprobe.run.threads import apply_torch
from fairprobe.technique.context import RunContext

TRAJECTORY_COLUMNS = (
    "strategy",
    "seed",
    "round",
    "queries",
    "lower",
    "upper",
    "estimate",
    "width",
    "error",
    "true_value",
    "nested_lower",
    "nested_upper",
    "stopped_by",
)


def audit_config(block: AuditBlock) -> AuditConfig:
    """The engine settings of a block."""
    return AuditConfig(
        strategy=block.strategy,
        metric=block.metric,
        budget=block.budget,
        epsilon=block.epsilon,
        delta=block.delta,
        per_stratum=block.per_stratum,
        selector=SelectorConfig(
            k=block.k, candidates=block.candidates, alpha=block.match_weight, power_gamma=block.power_gamma
        ),
        cerm=CermConfig(
            lam=block.lam,
            steps=block.cerm_steps,
            hidden=block.hidden,
            base=block.base,
            refits=block.refits,
            group_weight=block.group_weight,
            refit_group_weights=tuple(block.refit_group_weights),
            dual_lr=block.dual_lr,
            surrogate=block.surrogate,
            threshold=block.threshold,
        ),
    )


def load_pool(block: AuditBlock, seed: int) -> Pool:
    positive = block.positive_label or (">50K" if block.data in ADULT_SOURCES else None)
    if positive is None:
        raise UsageError("--positive-label is required: name the label whose score is ranked")
    dataset = load_source(block.data, block.text_col, block.label_col, block.group_col, seed)
    return build_pool(dataset, positive, block.groups, block.pool_size, seed)


def validate(block: AuditBlock) -> None:
    """Inputs checked before the run folder is touched: the pool loads, a scores file covers it, and
    a strategy that needs every score in advance has them."""
    pool = load_pool(block, 0)
    if block.scores is not None:
        CachedScores(block.scores, pool.ids)
    elif block.strategy in ORACLE and not block.reference:
        raise UsageError(
            "power sampling uses oracle information (every score in advance): add --reference or --scores"
        )


def execute(block: AuditBlock, ctx: RunContext) -> None:
    """Run the audit for every seed (bafa.txt Algorithm 1), resumably."""
    apply_torch(ctx.threads)  # the block's ``threads`` (auto: the free cores), set by the runner
    pool = load_pool(block, ctx.seed)
    ctx.log(f"pool of {len(pool)} ({', '.join(f'{k}={v}' for k, v in pool.counts().items())})")
    black_box: Any
    oracle: np.ndarray | None = None
    if block.scores is not None:
        black_box = CachedScores(block.scores, pool.ids)
        oracle = black_box.lookup(pool.ids)

        def query(idx: np.ndarray) -> np.ndarray:
            return black_box.lookup([pool.ids[i] for i in idx])
    else:
        assert block.model is not None
        black_box = BlackBox(ctx, block.model, pool.positive_label, block.max_tokens, ctx.seed)

        def query(idx: np.ndarray) -> np.ndarray:
            return black_box([pool.texts[i] for i in idx])

        if block.reference:
            ctx.log(
                f"scoring all {len(pool)} pool texts for the reference value (not counted as audit queries)"
            )
            oracle = query(np.arange(len(pool)))
    if block.strategy in ORACLE and oracle is None:
        raise UsageError(
            "power sampling uses oracle information (every score in advance): add --reference or --scores"
        )
    true_value = None if oracle is None else gap(block.metric, oracle, pool.y, pool.g, block.threshold)
    inputs = None
    if block.strategy in NEEDS_INPUTS:
        from fairprobe.methods.audit.surrogate import encode_pool

        ctx.log(f"encoding the pool for the {block.surrogate} surrogate ({block.features})")
        inputs = encode_pool(pool.texts, block.surrogate, block.features)
    config = audit_config(block)
    done = ctx.done_ids()
    for i in range(block.seeds):
        seed = ctx.seed + i
        prefix = f"{block.strategy}/seed{seed}"
        if f"{prefix}/final" in done:
            continue

        bar = ctx.progress(f"seed {seed} queries (budget)", config.budget)
        asked = [0]  # queries counted on the bar so far

        def record(
            log: RoundLog, prefix: str = prefix, seed: int = seed, bar: Any = bar, asked: list[int] = asked
        ) -> None:
            bar.advance(log.queries - asked[0])  # rate and ETA per query round, against the budget
            asked[0] = log.queries
            fid = f"{prefix}/round{log.round:04d}"
            if fid not in done:
                ctx.add_findings(
                    [
                        {
                            "id": fid,
                            "kind": "round",
                            "strategy": block.strategy,
                            "seed": seed,
                            "true_value": true_value,
                            **log.to_json(),
                        }
                    ]
                )
            ctx.log(
                f"seed {seed} round {log.round}: {log.queries} queries, [{log.lower:+.4f}, {log.upper:+.4f}]"
            )

        invalid_before = black_box.invalid  # chat answers are parsed (and counted) cached or not
        with bar:
            result = run_audit(pool, inputs, query, config, seed, true_value, oracle, record)
        last = result.final
        ctx.add_findings(
            [
                {
                    "id": f"{prefix}/final",
                    "kind": "final",
                    "strategy": block.strategy,
                    "seed": seed,
                    "queries": last.queries,
                    "lower": last.lower,
                    "upper": last.upper,
                    "estimate": last.estimate,
                    "width": last.width,
                    "error": last.error,
                    "covered": last.covered,
                    "stopped_by": result.stopped_by,
                    "true_value": true_value,
                    "rounds": len(result.rounds),
                    "nested_lower": last.nested_lower,
                    "nested_upper": last.nested_upper,
                    "nested_covered": last.nested_covered,
                    "nested_resets": sum(r.nested_reset for r in result.rounds),
                    "cases": last.queries,
                    "invalid": black_box.invalid - invalid_before,
                }
            ]
        )
    model = getattr(black_box, "model", None)
    ctx.record_info(
        audit={
            "pool": len(pool),
            "groups": list(pool.group_names),
            "positive_label": pool.positive_label,
            "pool_counts": pool.counts(),
            "true_value": true_value,
            "black_box_calls": getattr(model, "calls", 0),
            "black_box_cache_hits": getattr(model, "hits", 0),
            "invalid_answers": black_box.invalid,
            "oracle_strategy": block.strategy in ORACLE,
            "threads": ctx.threads,
        }
    )
    write_trajectory(ctx.output("trajectory.csv"), list(ctx.store.iter_findings()))


def write_trajectory(path: Any, findings: list[dict[str, Any]]) -> None:
    """The round findings as a CSV readable by :func:`~fairprobe.methods.audit.evaluate.read_trajectories`."""
    rows = sorted((f for f in findings if f.get("kind") == "round"), key=lambda f: (f["seed"], f["round"]))
    stopped = {f["seed"]: f["stopped_by"] for f in findings if f.get("kind") == "final"}
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(TRAJECTORY_COLUMNS)
        for f in rows:
            writer.writerow(
                [
                    f["strategy"],
                    f["seed"],
                    f["round"],
                    f["queries"],
                    f["lower"],
                    f["upper"],
                    "" if f["estimate"] is None else f["estimate"],
                    f["width"],
                    "" if f["error"] is None else f["error"],
                    "" if f.get("true_value") is None else f["true_value"],
                    f.get("nested_lower", ""),
                    f.get("nested_upper", ""),
                    stopped.get(f["seed"], ""),
                ]
            )
