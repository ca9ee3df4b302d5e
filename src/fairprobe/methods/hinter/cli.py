"""``fairprobe hinter`` and ``fairprobe lexicon extract``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fairprobe.cli_common import (
    FailOn,
    MaxAsymmetricInvalid,
    Models,
    Overwrite,
    Seed,
    run_technique,
    split_csv,
)
from fairprobe.refusals import DEFAULT_MAX_ASYMMETRIC_INVALID_RATE


def add_commands(app: typer.Typer) -> None:
    @app.command()
    def hinter(
        model: Models,
        out: Annotated[Path, typer.Option("--out", help="run folder")],
        data: Annotated[
            str, typer.Option(help="CSV/JSONL/Parquet file, imdb-sample, or hf:NAME[:CONFIG][:SPLIT]")
        ] = "imdb-sample",
        attributes: Annotated[str, typer.Option(help="comma-separated attributes")] = "race,gender,body",
        order: Annotated[
            int, typer.Option(help="highest mutation order (2 = atomic + pairs, 3 adds triples)")
        ] = 2,
        text_col: Annotated[str | None, typer.Option(help="text column")] = None,
        label_col: Annotated[
            str | None, typer.Option(help="gold label column (lists for multi-label)")
        ] = None,
        limit: Annotated[int | None, typer.Option(help="first N texts")] = None,
        max_mutants_per_text: Annotated[
            int | None, typer.Option(help="seeded sample per text and kind")
        ] = None,
        no_invariant: Annotated[
            bool, typer.Option("--no-invariant", help="skip the dependency invariant")
        ] = False,
        all_adjectives: Annotated[
            bool,
            typer.Option(
                "--all-adjectives",
                help="replace body adjectives everywhere, not only where they describe a person",
            ),
        ] = False,
        score_discarded: Annotated[
            bool, typer.Option(help="run discarded mutants too (false positives)")
        ] = False,
        dictionary: Annotated[str | None, typer.Option(help="bias dictionary file (YAML or CSV)")] = None,
        spacy_model: Annotated[str | None, typer.Option(help="spaCy parser package")] = None,
        processes: Annotated[int, typer.Option(help="processes for the dependency invariant")] = 1,
        task: Annotated[str | None, typer.Option(help="Table 7 prompt set for chat models")] = None,
        prompt_template: Annotated[
            str | None,
            typer.Option(
                help="your own prompt for a chat model: YAML with system, user ({text}), labels, "
                "optional few_shot file (instead of --task)"
            ),
        ] = None,
        few_shot: Annotated[int, typer.Option(help="few-shot examples for chat models")] = 3,
        few_shot_data: Annotated[
            str | None,
            typer.Option(help="labelled few-shot examples file (default: held out of --data, never tested)"),
        ] = None,
        grammar_server: Annotated[str | None, typer.Option(help="LanguageTool server URL")] = None,
        fluency: Annotated[
            str | None, typer.Option(help="gguf:PATH or embedded:smollm2 fluency scorer")
        ] = None,
        executor: Annotated[
            str, typer.Option(help="local, or ray (a Ray cluster; pip install 'fairprobe[ray]')")
        ] = "local",
        ray_address: Annotated[
            str | None,
            typer.Option(help="Ray cluster to join (default: RAY_ADDRESS, else a local cluster)"),
        ] = None,
        batch_originals: Annotated[int, typer.Option(help="originals per shard (resume unit)")] = 16,
        chunk_mutants: Annotated[int, typer.Option(help="mutants per streamed chunk")] = 2000,
        model_concurrency: Annotated[
            int, typer.Option(help="model batches in flight per endpoint (ray)")
        ] = 2,
        max_asymmetric_invalid_rate: MaxAsymmetricInvalid = DEFAULT_MAX_ASYMMETRIC_INVALID_RATE,
        seed: Seed = 0,
        overwrite: Overwrite = False,
        fail_on: FailOn = None,
    ) -> None:
        """HInter: atomic and intersectional metamorphic bias testing."""
        options = dict(
            model=model,
            data=data,
            attributes=split_csv(attributes),
            order=order,
            text_col=text_col,
            label_col=label_col,
            limit=limit,
            max_mutants_per_text=max_mutants_per_text,
            invariant=not no_invariant,
            person_adjectives=not all_adjectives,
            score_discarded=score_discarded,
            dictionary=dictionary,
            spacy_model=spacy_model,
            processes=processes,
            task=task,
            prompt_template=prompt_template,
            few_shot=few_shot,
            few_shot_data=few_shot_data,
            grammar_server=grammar_server,
            fluency=fluency,
            executor=executor,
            ray_address=ray_address,
            batch_originals=batch_originals,
            chunk_mutants=chunk_mutants,
            model_concurrency=model_concurrency,
            max_asymmetric_invalid_rate=max_asymmetric_invalid_rate,
        )
        run_technique("hinter", options, out, seed=seed, overwrite=overwrite, fail_on=fail_on)

    lexicon = typer.Typer(help="Bias dictionaries: inspect and mine word pairs.", no_args_is_help=True)
    app.add_typer(lexicon, name="lexicon")

    @lexicon.command("extract")
    def extract(
        sbic_csv: Annotated[
            Path, typer.Argument(help="Social Bias Frames CSV (targetMinority, targetCategory)")
        ],
        out: Annotated[Path, typer.Option("--out", help="candidate pairs CSV to curate")] = Path(
            "candidates.csv"
        ),
    ) -> None:
        """Mine candidate word pairs from a Social Bias Frames file for a person to curate."""
        from fairprobe.lexicons.sbic import extract_candidates, write_candidates
        from fairprobe.readers import check_output_file

        check_output_file(out, "--out")
        candidates = extract_candidates(sbic_csv)
        write_candidates(candidates, out)
        typer.echo(
            f"wrote {len(candidates)} candidates to {out}; review them, then pass the file as --dictionary"
        )
