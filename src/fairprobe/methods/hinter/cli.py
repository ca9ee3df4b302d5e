"""``fairprobe hinter`` (generated from :class:`HInterBlock`) and ``fairprobe lexicon extract``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from fairprobe.cli.build import Alias, block_options, technique_command
from fairprobe.methods.hinter.block import HInterBlock

ALIASES = (Alias("--all-adjectives", "person_adjectives", flag=False),)
"""Old option names: ``--no-invariant`` is the natural negative of ``--invariant`` and needs none."""


def add_commands(app: typer.Typer) -> None:
    technique_command(
        app,
        "hinter",
        HInterBlock,
        aliases=ALIASES,
        doc="HInter: atomic and intersectional metamorphic bias testing.",
    )

    lexicon = typer.Typer(help="Bias dictionaries: inspect and mine word pairs.", no_args_is_help=True)
    app.add_typer(lexicon, name="lexicon")

    @lexicon.command("extract")
    @block_options(HInterBlock, aliases=(Alias("--out", "output"),))
    def extract(
        values: dict[str, Any],
        typed: dict[str, str],
        sbic_csv: Annotated[
            Path, typer.Argument(help="Social Bias Frames CSV (targetMinority, targetCategory)")
        ],
        output: Annotated[Path, typer.Option("--output", help="candidate pairs CSV to curate")] = Path(
            "candidates.csv"
        ),
    ) -> None:
        """Mine candidate word pairs from a Social Bias Frames file for a person to curate."""
        from fairprobe.lexicons.sbic import extract_candidates, write_candidates
        from fairprobe.run.outputs import check_output_file

        output = Path(output)
        check_output_file(output, typed["output"])
        candidates = extract_candidates(sbic_csv)
        write_candidates(candidates, output)
        typer.echo(
            f"wrote {len(candidates)} candidates to {output}; review them, then pass the file as --dictionary"
        )
