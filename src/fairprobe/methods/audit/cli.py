"""``fairprobe audit ...`` (run an audit) and ``fairprobe audit evaluate PATH...`` (Table 1 figures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from fairprobe.cli_common import FailOn, Overwrite, Seed, run_technique, split_csv


def _headline(m: dict) -> str | None:
    if m.get("estimate") is None:
        return None
    seeds = m.get("seeds") or {}
    lines = [
        f"{m['strategy']}: estimate {m['estimate']:+.4f} in [{m['lower']:+.4f}, {m['upper']:+.4f}] "
        f"after {m['queries']} queries (stopped by {m['stopped_by']}; {m['interval']} interval"
        + (f", hull over {len(seeds)} seeds" if len(seeds) > 1 else "")
        + ")"
    ]
    if len(seeds) > 1:
        for name, e in seeds.items():
            lines.append(
                f"  seed {name}: {e['estimate']:+.4f} in [{e['lower']:+.4f}, {e['upper']:+.4f}] "
                f"after {e['queries']} queries ({e['stopped_by']})"
            )
    return "\n".join(lines)


def add_commands(app: typer.Typer) -> None:
    audit = typer.Typer(
        help="BAFA: active fairness auditing of a black box with C-ERM intervals (a heuristic, not a certificate)."
    )
    app.add_typer(audit, name="audit")

    @audit.callback(invoke_without_command=True)
    def run(
        ctx: typer.Context,
        model: Annotated[
            list[str] | None,
            typer.Option(
                "--model",
                help="black-box URI: a classifier, or a chat model asked for 0-100; repeat it to audit several "
                "models on the same pool and compare each with the first",
            ),
        ] = None,
        data: Annotated[
            str | None, typer.Option(help="labelled pool: CSV/JSONL/Parquet, hf:NAME..., or adult")
        ] = None,
        group_col: Annotated[str | None, typer.Option(help="protected-attribute column")] = None,
        label_col: Annotated[str | None, typer.Option(help="gold label column")] = None,
        text_col: Annotated[str | None, typer.Option(help="text column")] = None,
        groups: Annotated[str | None, typer.Option(help="the two group values compared, g0,g1")] = None,
        positive_label: Annotated[str | None, typer.Option(help="label whose score is ranked")] = None,
        preset: Annotated[
            str | None,
            typer.Option(
                help="default: the measured settings below | paper: bafa.txt Table 7 (explicit options win)"
            ),
        ] = None,
        budget: Annotated[int | None, typer.Option(help="most black-box queries per seed [1000]")] = None,
        epsilon: Annotated[float | None, typer.Option(help="stop at this interval half-width [0.02]")] = None,
        strategy: Annotated[
            str, typer.Option(help="bafa | bafa-bo | cerm-only | stratified | random | bo | power")
        ] = "bafa",
        metric: Annotated[
            str, typer.Option(help="auc (ΔAUC) | dp (demographic parity) | eo (TPR gap)")
        ] = "auc",
        seeds: Annotated[int, typer.Option(help="repeat with seeds SEED, SEED+1, ...")] = 1,
        scores: Annotated[
            str | None, typer.Option(help="CSV id,score of cached black-box scores (offline)")
        ] = None,
        pool_size: Annotated[int, typer.Option(help="seeded sample bounding the pool")] = 5000,
        k: Annotated[int | None, typer.Option(help="queries per round [16]")] = None,
        features: Annotated[
            str | None, typer.Option(help="surrogate inputs: minilm | ngrams | minilm+ngrams [ngrams]")
        ] = None,
        surrogate: Annotated[str, typer.Option(help="mlp | transformer")] = "mlp",
        hidden: Annotated[int | None, typer.Option(help="width of the surrogate network [64]")] = None,
        cerm_steps: Annotated[int | None, typer.Option(help="Cooper steps per bound per round [600]")] = None,
        dual_lr: Annotated[
            float | None, typer.Option(help="gradient-ascent rate of the C-ERM multipliers [0.1]")
        ] = None,
        lam: Annotated[float | None, typer.Option(help="version-space tolerance λ [0.01]")] = None,
        refits: Annotated[
            int | None,
            typer.Option(help="bootstrap refits of the base scorer added to the version space [16]"),
        ] = None,
        group_weight: Annotated[
            float | None, typer.Option(help="weight of each group's own part in the ridge base kernel [10]")
        ] = None,
        match_weight: Annotated[
            float | None,
            typer.Option(help="strength α of the selector's (group, label) matching weights (0: off) [0]"),
        ] = None,
        power_gamma: Annotated[
            float | None, typer.Option(help="exponent γ of power sampling (p(1-p))^γ [2, the authors']")
        ] = None,
        interval: Annotated[
            str | None,
            typer.Option(
                help="headline interval: raw (the paper's) [default] | nested (intersected with earlier rounds)"
            ),
        ] = None,
        reference: Annotated[bool, typer.Option(help="also score the whole pool for the true gap")] = False,
        out: Annotated[Path | None, typer.Option("--out", help="run folder")] = None,
        seed: Seed = 0,
        overwrite: Overwrite = False,
        fail_on: FailOn = None,
    ) -> None:
        """Estimate a fairness gap of a black box within ε with as few queries as possible (BAFA)."""
        if ctx.invoked_subcommand is not None:
            return
        from fairprobe.errors import UsageError

        for name, value in (("--data", data), ("--group-col", group_col), ("--out", out)):
            if value is None:
                raise UsageError(f"{name} is required; see `fairprobe audit --help`")
        if (not model) == (scores is None):
            raise UsageError(
                "give exactly one of --model (a black-box URI) or --scores (a CSV of cached scores)"
            )
        assert out is not None
        options = dict(
            model=model,
            scores=scores,
            data=data,
            group_col=group_col,
            label_col=label_col,
            text_col=text_col,
            groups=split_csv(groups) or None,
            positive_label=positive_label,
            preset=preset,
            budget=budget,
            epsilon=epsilon,
            strategy=strategy,
            metric=metric,
            seeds=seeds,
            pool_size=pool_size,
            k=k,
            features=features,
            surrogate=surrogate,
            hidden=hidden,
            cerm_steps=cerm_steps,
            lam=lam,
            refits=refits,
            group_weight=group_weight,
            match_weight=match_weight,
            dual_lr=dual_lr,
            power_gamma=power_gamma,
            interval=interval,
            reference=reference,
        )
        run_technique(
            "audit", options, out, seed=seed, overwrite=overwrite, fail_on=fail_on, describe=_headline
        )

    @audit.command("evaluate")
    def evaluate(
        paths: Annotated[list[Path], typer.Argument(help="trajectory CSV files or folders of them")],
        out: Annotated[Path | None, typer.Option("--out", help="folder for summary.json")] = None,
    ) -> None:
        """Table 1 figures per (file, strategy): queries to ε, error at 250, normalised AUEC@1000."""
        from fairprobe import __version__
        from fairprobe.errors import DataError
        from fairprobe.methods.audit.evaluate import evaluate_paths
        from fairprobe.readers import check_output_dir

        if out is not None:
            check_output_dir(out, "--out")
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise DataError(f"{missing[0]} does not exist; give trajectory CSV files or folders of them")
        metrics, lines, notes = evaluate_paths(paths)
        for note in notes:
            typer.echo(f"note: {note}", err=True)
        if not lines:
            raise DataError("no trajectory file of a known layout among the given paths")
        for line in lines:
            typer.echo(line)
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            summary = {
                "fairprobe_version": __version__,
                "technique": "audit-evaluate",
                "model": None,
                "started": None,
                "finished": None,
                "metrics": metrics,
                "thresholds": {},
                "passed": True,
                "files": [str(p) for p in paths],
                "notes": notes,
            }
            (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
