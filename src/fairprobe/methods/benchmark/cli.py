"""``fairprobe benchmark NAME --model URI --out DIR``: one sub-command per published benchmark."""

from __future__ import annotations

from typing import Any

import typer

from fairprobe.cli.build import cli_fields, technique_command
from fairprobe.methods.benchmark.block import BenchmarkBlock
from fairprobe.methods.benchmark.data import NAMES


def add_commands(app: typer.Typer) -> None:
    bench_app = typer.Typer(
        help="Score a published bias benchmark as its authors do, with 95% intervals.", no_args_is_help=True
    )
    app.add_typer(bench_app, name="benchmark")
    fields = [f for f in cli_fields(BenchmarkBlock) if f != "benchmark"]
    for name in NAMES:

        def check(values: dict[str, Any], name: str = name) -> None:
            values["benchmark"] = name  # the sub-command names the benchmark

        technique_command(
            bench_app,
            "benchmark",
            BenchmarkBlock,
            name=name,
            fields=fields,
            check=check,
            doc=f"Score {name} on --model and write the report to --out.",
        )
