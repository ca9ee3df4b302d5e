"""What every technique's command line shares: common option types, list parsing, running a block.

Technique packages import this module at import time. It imports nothing of :mod:`fairprobe.cli`:
what the ``run``/``compare`` commands and every technique command share (the root verdict options,
``--fail-on`` parsing, printing verdicts, comparing run folders) lives here, and ``cli`` imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from fairprobe.errors import UsageError

if TYPE_CHECKING:
    from fairprobe.run.caching import CachedChatModel

out = Console(emoji=False)

VERDICT_RULES: dict[str, object] = {}
"""Root options that change how every run is judged (``--allow-empty``, ``--max-invalid-rate``)."""


def parse_fail_on(values: list[str] | None) -> list[Any]:
    from fairprobe.judge.thresholds import parse_thresholds

    return parse_thresholds(values, "--fail-on")


_SHOWN = {
    "pass": "[green]passed[/]",
    "fail": "[red]FAILED[/]",
    "inconclusive": "[yellow]INCONCLUSIVE[/]",
    "incomplete": "[yellow]INCOMPLETE[/]",
    "measured": "[cyan]measured (no fairness gate)[/]",
}
OK_VERDICTS = {"pass", "measured"}
"""Verdicts that exit 0: a pass, or a run with no fairness gate at all (it judged nothing)."""
TOP_FINDINGS = 3


def finish(outcomes) -> None:
    """Print, for each run, its verdict and report path, what it found (one sentence), why it did not
    pass (each reason once) and its worst findings (three, short); exit 1 unless every run passed or
    was only measured (no fairness gate)."""
    failed = False
    for outcome in outcomes:
        summary = outcome.summary
        verdict = _SHOWN.get(outcome.verdict, escape(outcome.verdict))
        out.print(f"{escape(str(summary['name']))}: {verdict} · report: {escape(str(outcome.report))}")
        if summary.get("headline"):
            out.print(f"  {escape(summary['headline'])}", highlight=False, soft_wrap=True)
        for reason in dict.fromkeys(summary.get("reasons", [])):  # each reason once
            label = "note" if outcome.verdict in OK_VERDICTS else outcome.verdict
            out.print(f"  {label}: {escape(reason)}", highlight=False, soft_wrap=True)
        for note in summary.get("notes") or []:
            out.print(f"  {escape(note)}", highlight=False, soft_wrap=True)
        for attr, why in ((summary.get("coverage") or {}).get("untested") or {}).items():  # never silent
            out.print(f"  not tested: {escape(attr)}: {escape(why)}", highlight=False, soft_wrap=True)
        top = summary.get("top_findings") or []
        if top:
            out.print("  worst findings:", highlight=False)
            for i, line in enumerate(top[:TOP_FINDINGS], 1):
                out.print(f"    {i}. {escape(line)}", highlight=False, soft_wrap=True)
        failed |= outcome.verdict not in OK_VERDICTS
    if failed:
        raise typer.Exit(1)


def show_headline(line: str) -> None:
    out.print(escape(line), highlight=False, soft_wrap=True)


def compare_groups(blocks: list[Any], base: Path) -> list[Any]:
    """:func:`fairprobe.compare.call.compare_groups`, printing each comparison's headline."""
    from fairprobe.compare.call import compare_groups as compare_all

    return compare_all(blocks, base, show_headline)


def compare_folders(first: Path, others: list[Path], into: Path) -> list[Any]:
    """:func:`fairprobe.compare.call.compare_folders`, printing each comparison's headline."""
    from fairprobe.compare.call import compare_folders as compare_each

    return compare_each(first, others, into, show_headline)


Seed = Annotated[int, typer.Option(help="seed of every random choice")]
Overwrite = Annotated[bool, typer.Option(help="replace a run of a different spec in --out")]
FailOn = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-on",
        help="fail condition METRIC OP VALUE for every block, named as in its summary.json, e.g. "
        "'accuracy < 0.8' (repeatable)",
    ),
]


def split_csv(value: str | None) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]``; ``None`` or ``""`` -> ``[]``."""
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def run_technique(
    name: str,
    options: dict[str, Any],
    out: Path,
    *,
    seed: int,
    overwrite: bool,
    fail_on: list[str] | None,
    describe: Callable[[dict[str, Any]], str | None] | None = None,
    option_name: Callable[[str], str] | None = None,
) -> None:
    """Run one technique block built from command-line options, print the report path, exit 1 on a failed threshold.

    ``describe(metrics)`` may return a line printed before the report path (the run's headline);
    ``option_name(field)`` names a bad value's option in the one-line error (as the user typed it)."""
    from fairprobe.run.runner import run_options

    thresholds = parse_fail_on(fail_on)
    models = options.get("model")
    if isinstance(models, list) and len(models) > 1:
        run_models(
            name,
            options,
            models,
            out,
            seed=seed,
            overwrite=overwrite,
            fail_on=thresholds,
            option_name=option_name,
        )
        return
    if isinstance(models, list):
        options = {**options, "model": models[0] if models else None}
    outcome = run_options(
        name,
        options,
        out,
        seed=seed,
        overwrite=overwrite,
        fail_on=thresholds,
        option_name=option_name,
        **VERDICT_RULES,
    )
    line = describe(outcome.summary["metrics"]) if describe else None
    if line:
        typer.echo(line)
    finish([outcome])


def run_models(
    name: str,
    options: dict[str, Any],
    models: list[str],
    out: Path,
    *,
    seed: int,
    overwrite: bool,
    fail_on: list[Any],
    option_name: Callable[[str], str] | None = None,
) -> None:
    """``--model A --model B ...``: every model over the same test cases, each into ``OUT/<model>``,
    then every model compared with the first into ``OUT/compare-<model>`` (as a spec's ``models:``)."""
    from fairprobe.run.runner import run_options
    from fairprobe.technique.spec import model_folder

    models = [m.strip() for m in models]  # ' A' is A: one model, not two runs of it
    if len(set(models)) != len(models) or len({model_folder(m) for m in models}) != len(models):
        raise UsageError("--model names the same model twice; give each model once")
    folders = [out / model_folder(m) for m in models]
    outcomes = [
        run_options(
            name,
            {**options, "model": model},
            folder,
            seed=seed,
            overwrite=overwrite,
            fail_on=fail_on,
            option_name=option_name,
            **VERDICT_RULES,
        )
        for model, folder in zip(models, folders, strict=True)
    ]
    finish(outcomes + compare_folders(folders[0], folders[1:], out))


Models = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        help="model URI under test; repeat it to run several models over the same test cases and "
        "compare each with the first (OUT/<model>, OUT/compare-<model>)",
    ),
]


def cached_chat(uri: str) -> CachedChatModel:
    """A chat model whose answers go to the global response cache (for stages outside a run folder)."""
    from fairprobe.models.uri import load_chat
    from fairprobe.run.caching import CachedChatModel
    from fairprobe.run.store import Store, default_cache_path

    path = default_cache_path()
    return CachedChatModel(load_chat(uri), [Store(path)] if path is not None else [])
