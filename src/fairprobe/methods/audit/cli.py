"""``fairprobe audit ...`` (run an audit) and ``fairprobe audit evaluate PATH...`` (Table 1 figures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from fairprobe.cli_common import FailOn, Overwrite, Seed, run_technique, split_csv


def _headline(m: dict) -> str | None:
    if "estimate" not in m:
        return None
    return (
        f"{m['strategy']}: estimate {m['estimate']:+.4f} in [{m['lower']:+.4f}, {m['upper']:+.4f}] "
        f"after {m['queries']} queries (stopped by {m['stopped_by']})"
    )


def add_commands(app: typer.Typer) -> None:
    audit = typer.Typer(help="BAFA: active fairness auditing of a black box with certified bounds.")
    app.add_typer(audit, name="audit")

    @audit.callback(invoke_without_command=True)
    def run(
        ctx: typer.Context,
        model: Annotated[
            str | None, typer.Option(help="black-box URI: a classifier, or a chat model asked for 0-100")
        ] = None,
        data: Annotated[
            str | None, typer.Option(help="labelled pool: CSV/JSONL/Parquet, hf:NAME..., or adult")
        ] = None,
        group_col: Annotated[str | None, typer.Option(help="protected-attribute column")] = None,
        label_col: Annotated[str | None, typer.Option(help="gold label column")] = None,
        text_col: Annotated[str | None, typer.Option(help="text column")] = None,
        groups: Annotated[str | None, typer.Option(help="the two group values compared, g0,g1")] = None,
        positive_label: Annotated[str | None, typer.Option(help="label whose score is ranked")] = None,
        budget: Annotated[int, typer.Option(help="most black-box queries per seed")] = 1000,
        epsilon: Annotated[float, typer.Option(help="stop at this interval half-width")] = 0.02,
        strategy: Annotated[
            str, typer.Option(help="bafa | bafa-bo | cerm-only | stratified | random | power")
        ] = "bafa",
        metric: Annotated[
            str, typer.Option(help="auc (ΔAUC) | dp (demographic parity) | eo (TPR gap)")
        ] = "auc",
        seeds: Annotated[int, typer.Option(help="repeat with seeds SEED, SEED+1, ...")] = 1,
        scores: Annotated[
            str | None, typer.Option(help="CSV id,score of cached black-box scores (offline)")
        ] = None,
        pool_size: Annotated[int, typer.Option(help="seeded sample bounding the pool")] = 5000,
        k: Annotated[int, typer.Option(help="queries per round")] = 16,
        features: Annotated[
            str, typer.Option(help="surrogate inputs: minilm | ngrams | minilm+ngrams")
        ] = "minilm",
        surrogate: Annotated[str, typer.Option(help="mlp | transformer")] = "mlp",
        hidden: Annotated[int, typer.Option(help="width of the surrogate network")] = 256,
        cerm_steps: Annotated[int, typer.Option(help="Cooper steps per bound per round")] = 60,
        dual_lr: Annotated[float, typer.Option(help="gradient-ascent rate of the C-ERM multipliers")] = 0.5,
        lam: Annotated[float, typer.Option(help="version-space tolerance λ")] = 0.01,
        refits: Annotated[
            int, typer.Option(help="bootstrap refits of the base scorer added to the version space")
        ] = 0,
        group_weight: Annotated[
            float, typer.Option(help="weight of each group's own part in the ridge base kernel")
        ] = 0.0,
        match_weight: Annotated[
            float,
            typer.Option(help="strength α of the selector's (group, label) matching weights (0: off)"),
        ] = 2.0,
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
        if (model is None) == (scores is None):
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
