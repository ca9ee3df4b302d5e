"""``fairprobe certify train`` (options from :class:`TrainOptions`) and ``fairprobe certify verify``
(generated from :class:`CertifyBlock`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from fairprobe.cli.build import Alias, block_options, technique_command
from fairprobe.methods.certify.block import CertifyBlock, TrainOptions

MODEL_FILES = (
    "model.pt",
    "config.json",
    "vocab.json",
    "meta.json",
    "embeddings.pt",
    "embeddings.tmp",
    "no-pretraining",
)
"""What ``certify train`` writes into --model-out (``no-pretraining/``: the ablation's model)."""


def add_commands(app: typer.Typer) -> None:
    certify = typer.Typer(
        help="Formal fairness certificates: train a small transformer, then certify it.", no_args_is_help=True
    )
    app.add_typer(certify, name="certify")

    @certify.command("train")
    @block_options(TrainOptions, list(TrainOptions.model_fields), aliases=(Alias("--out", "model_out"),))
    def train(
        values: dict[str, Any],
        typed: dict[str, str],
        model_out: Annotated[
            Path | None, typer.Option("--model-out", help="model directory to write")
        ] = None,
        seed: Annotated[int, typer.Option(help="seed of every random choice")] = 0,
        overwrite: Annotated[
            bool,
            typer.Option(
                help="write into a non-empty MODEL_OUT that fairprobe did not create (only the model's own "
                "files are written; none of yours is replaced)"
            ),
        ] = False,
    ) -> None:
        """Pre-train the embedding table (§3.1), train the classifier (§3.2), write MODEL_OUT."""
        import json

        import torch

        from fairprobe.errors import UsageError
        from fairprobe.methods.certify import lexicon
        from fairprobe.methods.certify.pipeline import ABLATION_DIR
        from fairprobe.methods.certify.train import TrainConfig, train_task
        from fairprobe.run.outputs import check_output_folder, claim_output_folder

        v = values
        if v["task"] is None:
            raise UsageError("fairprobe certify train needs --task: adult-gender or toxicity")
        if model_out is None:
            raise UsageError("fairprobe certify train needs --model-out: the model directory to write")
        out = Path(model_out)
        check_output_folder(out, typed["model_out"], MODEL_FILES, overwrite=overwrite)
        if v["wordnet"] and v["pretrain"] and not lexicon.wordnet_available():
            raise UsageError(
                "WordNet is not installed (/usr/share/wordnet); run `apt-get install -y wordnet-base` "
                "or pass --no-wordnet to skip the general semantic pre-training"
            )
        if v["threads"]:
            torch.set_num_threads(v["threads"])
        options = {
            "epochs": v["pretrain_epochs"],
            "gs_epochs": v["semantic_epochs"],
            "gs_pairs": v["semantic_pairs"],
            "wordnet": v["wordnet"],
            "final_epochs": v["pretrain_final_epochs"],
            "final_lr": v["pretrain_final_lr"],
            "decay": v["pretrain_decay"],
            "anchor_weight": v["pretrain_anchor_weight"],
        }
        cfg = TrainConfig(
            task=v["task"],
            blocks=v["blocks"],
            epochs=v["epochs"],
            batch=v["batch"],
            lr=v["lr"],
            train_limit=v["train_limit"],
            pretrain=v["pretrain"],
            seed=seed,
            pretrain_options=options,
            augment_factor=v["augment_factor"],
            augment_prob=v["augment_prob"],
            augment_balance=v["augment_balance"],
            tokenizer=v["tokenizer"],
            toxic_list=v["toxic_list"],
        )

        def log(msg: str) -> None:
            typer.echo(msg, err=True)

        claim_output_folder(out, MODEL_FILES)
        result = train_task(out, cfg, log)
        summary = {
            k: result[k] for k in ("model_dir", "model_hash", "test_accuracy", "epochs_run", "seconds")
        }
        if v["ablation"] and v["pretrain"]:
            cfg.pretrain = False
            extra = train_task(out / ABLATION_DIR, cfg, log)
            summary["ablation"] = {k: extra[k] for k in ("model_dir", "model_hash", "test_accuracy")}
        typer.echo(json.dumps(summary, indent=2))

    technique_command(
        certify,
        "certify",
        CertifyBlock,
        name="verify",
        aliases=(Alias("--limit", "n"), Alias("--cap", "cap")),
        doc="Certify N sentences: ε* per sentence, threshold t, fairness score F (Eq. 4).",
    )
