"""``fairprobe certify train`` and ``fairprobe certify verify``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fairprobe.cli_common import FailOn, Overwrite, Seed, check_options, run_technique


def add_commands(app: typer.Typer) -> None:
    certify = typer.Typer(
        help="Formal fairness certificates: train a small transformer, then certify it.", no_args_is_help=True
    )
    app.add_typer(certify, name="certify")

    @certify.command("train")
    def train(
        task: Annotated[str, typer.Option(help="adult-gender or toxicity")],
        out: Annotated[Path, typer.Option("--out", help="model directory to write")],
        blocks: Annotated[
            int | None, typer.Option(help="transformer blocks (default 6 adult, 3 toxicity)")
        ] = None,
        epochs: Annotated[int, typer.Option(help="classifier epochs (early stopping, patience 10)")] = 20,
        batch: Annotated[int, typer.Option(help="batch size")] = 32,
        lr: Annotated[
            float, typer.Option(help="classifier learning rate (the paper's Table 8: 1e-3)")
        ] = 3e-3,
        train_limit: Annotated[int | None, typer.Option(help="seeded sample of N training sentences")] = None,
        pretrain_epochs: Annotated[
            int | None, typer.Option(help="epochs of the sensitive-word phase")
        ] = None,
        semantic_epochs: Annotated[int | None, typer.Option(help="epochs of the WordNet phase")] = None,
        pretrain_final_epochs: Annotated[
            int | None, typer.Option(help="sensitive-phase epochs at a small step size after both phases")
        ] = None,
        pretrain_final_lr: Annotated[
            float | None, typer.Option(help="their step size (default 1e-4)")
        ] = None,
        augment_factor: Annotated[
            int, typer.Option(help="synonym-augmented variants per positive sentence (WordNet; 0: none)")
        ] = 0,
        augment_prob: Annotated[float, typer.Option(help="per-token replacement probability")] = 0.8,
        semantic_pairs: Annotated[
            int | None, typer.Option(help="WordNet synonym pairs (default 20000)")
        ] = None,
        no_wordnet: Annotated[bool, typer.Option("--no-wordnet", help="skip the WordNet phase")] = False,
        no_pretrain: Annotated[
            bool, typer.Option("--no-pretrain", help="no embedding pre-training (the paper's ablation)")
        ] = False,
        ablation: Annotated[
            bool,
            typer.Option("--ablation", help="also train the no-pre-training model into OUT/no-pretraining"),
        ] = False,
        seed: Seed = 0,
        threads: Annotated[int | None, typer.Option(help="torch threads")] = None,
    ) -> None:
        """Pre-train the embedding table (§3.1), train the classifier (§3.2), write MODEL_DIR."""
        import json

        import torch

        from fairprobe.errors import UsageError
        from fairprobe.methods.certify import lexicon
        from fairprobe.methods.certify.block import TrainOptions
        from fairprobe.methods.certify.data import TASKS
        from fairprobe.methods.certify.pipeline import ABLATION_DIR
        from fairprobe.methods.certify.train import TrainConfig, train_task
        from fairprobe.readers import check_output_dir

        if task not in TASKS:
            raise UsageError(f"--task: choose one of {', '.join(TASKS)}")
        check_options(
            TrainOptions,
            dict(
                blocks=blocks,
                epochs=epochs,
                batch=batch,
                lr=lr,
                train_limit=train_limit,
                pretrain_epochs=pretrain_epochs,
                semantic_epochs=semantic_epochs,
                semantic_pairs=semantic_pairs,
                pretrain_final_epochs=pretrain_final_epochs,
                pretrain_final_lr=pretrain_final_lr,
                augment_factor=augment_factor,
                augment_prob=augment_prob,
                threads=threads,
            ),
        )
        check_output_dir(out, "--out")
        if not no_wordnet and not no_pretrain and not lexicon.wordnet_available():
            raise UsageError(
                "WordNet is not installed (/usr/share/wordnet); run `apt-get install -y wordnet-base` "
                "or pass --no-wordnet to skip the general semantic pre-training"
            )
        if threads:
            torch.set_num_threads(threads)
        options = {
            "epochs": pretrain_epochs,
            "gs_epochs": semantic_epochs,
            "gs_pairs": semantic_pairs,
            "wordnet": not no_wordnet,
            "final_epochs": pretrain_final_epochs,
            "final_lr": pretrain_final_lr,
        }
        cfg = TrainConfig(
            task=task,
            blocks=blocks,
            epochs=epochs,
            batch=batch,
            lr=lr,
            train_limit=train_limit,
            pretrain=not no_pretrain,
            seed=seed,
            pretrain_options=options,
            augment_factor=augment_factor,
            augment_prob=augment_prob,
        )

        def log(msg: str) -> None:
            typer.echo(msg, err=True)

        result = train_task(out, cfg, log)
        summary = {
            k: result[k] for k in ("model_dir", "model_hash", "test_accuracy", "epochs_run", "seconds")
        }
        if ablation and not no_pretrain:
            cfg.pretrain = False
            extra = train_task(out / ABLATION_DIR, cfg, log)
            summary["ablation"] = {k: extra[k] for k in ("model_dir", "model_hash", "test_accuracy")}
        typer.echo(json.dumps(summary, indent=2))

    @certify.command("verify")
    def verify(
        model: Annotated[
            list[str],
            typer.Option(
                "--model",
                help="model directory from `fairprobe certify train`; repeat it to certify several models "
                "on the same sentences and compare each with the first",
            ),
        ],
        out: Annotated[Path, typer.Option("--out", help="run folder")],
        data: Annotated[
            str | None,
            typer.Option(help="adult, toxicity or a JSONL/CSV text,label file (default: held-out split)"),
        ] = None,
        sentences_from: Annotated[
            str, typer.Option(help="without --data: test (held-out, default) or train (the paper's §4.2)")
        ] = "test",
        n: Annotated[int, typer.Option(help="sentences to certify")] = 50,
        k: Annotated[int, typer.Option(help="nearest neighbours per sensitive word")] = 50,
        substitutes: Annotated[str | None, typer.Option(help="user substitute list (JSON or CSV)")] = None,
        domain: Annotated[str, typer.Option(help="zonotope or ibp")] = "zonotope",
        no_baseline: Annotated[bool, typer.Option("--no-baseline", help="skip the IBP baseline")] = False,
        no_attack: Annotated[
            bool, typer.Option("--no-attack", help="skip the attack radius (the upper bound beside ε*)")
        ] = False,
        cap: Annotated[int, typer.Option(help="zonotope generator cap")] = 4096,
        steps: Annotated[int, typer.Option(help="bisection rounds")] = 10,
        max_tokens: Annotated[int, typer.Option(help="longest sentence drawn")] = 64,
        ablation_model: Annotated[
            str, typer.Option(help="no-pre-training model dir, 'auto' (MODEL/no-pretraining) or 'none'")
        ] = "auto",
        threads: Annotated[int | None, typer.Option(help="torch threads")] = None,
        seed: Seed = 0,
        overwrite: Overwrite = False,
        fail_on: FailOn = None,
    ) -> None:
        """Certify N sentences: ε* per sentence, threshold t, fairness score F (Eq. 4)."""
        options = dict(
            model=model,
            data=data,
            sentences_from=sentences_from,
            n=n,
            k=k,
            substitutes=substitutes,
            domain=domain,
            baseline=not no_baseline,
            attack=not no_attack,
            cap=cap,
            steps=steps,
            max_tokens=max_tokens,
            ablation_model=ablation_model,  # "none" reaches the block (a None would mean "auto")
            threads=threads,
        )
        run_technique("certify", options, out, seed=seed, overwrite=overwrite, fail_on=fail_on)
