"""``fairprobe metafair …``: a sub-command group whose callback is the all-in-one form.

- ``fairprobe metafair generate`` — tests from a generator LLM into a JSONL file a person can edit;
- ``fairprobe metafair run`` — execute and judge a tests file (the shipped set by default) into a run folder;
- ``fairprobe metafair --model … --generator … --judge … --out DIR`` — both in one run folder;
- ``fairprobe metafair judge-eval`` — score judges against human labels (Table 3).

The group is a Typer with ``invoke_without_command=True``: without a sub-command its callback runs the
whole pipeline; with one, the callback does nothing and the sub-command runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from fairprobe.cli.build import Alias, block_options, cli_fields, technique_command
from fairprobe.cli.common import cached_chat, split_csv
from fairprobe.errors import UsageError
from fairprobe.methods.metafair.block import MetaFairBlock
from fairprobe.methods.metafair.schema import MetamorphicTest

GENERATION = (
    "generator",
    "attributes_per_dimension",
    "tests_per_attribute",
    "catalogue",
    "generator_retries",
    "generator_max_tokens",
    "dedupe_threshold",
)
"""The block's fields that only generation reads: ``metafair run`` (a tests file) leaves them out."""

JUDGES = (Alias("--judge", "judges"),)


def _valid_test(record: dict) -> MetamorphicTest | None:
    """A test read back from a generated file, or ``None`` for a row that is not a valid test (a
    person may have edited the file; such rows stay in it and are not counted as done)."""
    from fairprobe.methods.metafair.schema import InvalidTest, validate_test

    try:
        return validate_test(record)
    except InvalidTest:
        return None


def add_commands(app: typer.Typer) -> None:
    group = typer.Typer(help="Meta-Fair: 14 metamorphic relations, LLM judge and deterministic oracles.")
    technique_command(
        group,
        "metafair",
        MetaFairBlock,
        callback=True,
        aliases=JUDGES,
        doc="Meta-Fair all in one: generate (or read) tests, execute, judge, report.",
    )
    technique_command(
        group,
        "metafair",
        MetaFairBlock,
        name="run",
        fields=[f for f in cli_fields(MetaFairBlock) if f not in GENERATION],
        aliases=JUDGES,
        doc="Execute and judge a tests file into a run folder.",
    )

    @group.command("generate")
    @block_options(
        MetaFairBlock,
        [*GENERATION, "mrs", "dimensions"],
        aliases=(
            Alias("--out", "output"),
            Alias("--retries", "generator_retries"),
            Alias("--max-tokens", "generator_max_tokens"),
            Alias("--temperature", "generator_temperature"),
        ),
    )
    def generate(
        values: dict[str, Any],
        typed: dict[str, str],
        output: Annotated[Path, typer.Option("--output", help="tests JSONL to write")] = Path("tests.jsonl"),
        generator_temperature: Annotated[float, typer.Option(help="generator temperature")] = 0.7,
        seed: Annotated[int, typer.Option(help="seed of every random choice")] = 0,
        overwrite: Annotated[
            bool, typer.Option(help="start OUTPUT afresh instead of resuming the tests already in it")
        ] = False,
    ) -> None:
        """Generate metamorphic tests with an LLM into a JSONL file (invalid output goes to OUTPUT.invalid.jsonl).

        Each valid test is appended to OUTPUT as soon as it is made, with progress on stderr; a re-run
        with OUTPUT present resumes: requests that already have their tests are skipped."""
        from fairprobe.cli.build import validated
        from fairprobe.lexicons.metafair_catalogue import load_catalogue
        from fairprobe.methods.metafair import generator as gen
        from fairprobe.methods.metafair.relations import select_dimensions, select_relations
        from fairprobe.run.outputs import check_output_file
        from fairprobe.run.progress import ProgressReporter
        from fairprobe.run.streaming import AppendLog, in_flight

        generator = values["generator"]
        if generator is None:
            raise UsageError("fairprobe metafair generate needs --generator: the generator chat URI")
        temperature = validated(
            MetaFairBlock,
            {"temperature": generator_temperature},
            {"temperature": typed["generator_temperature"]},
        )["temperature"]
        output = Path(output)
        check_output_file(output, typed["output"])
        bad = output.with_name(output.stem + ".invalid.jsonl")
        check_output_file(bad, f"{typed['output']} (its .invalid.jsonl beside it)")
        cat = load_catalogue(values["catalogue"])
        requests = gen.plan(
            select_relations(values["mrs"]),
            select_dimensions(values["dimensions"]),
            cat,
            values["attributes_per_dimension"],
            values["tests_per_attribute"],
            seed,
        )
        chat = cached_chat(generator)  # a bad URI stops here, before any file is touched
        with AppendLog(output, fresh=overwrite) as log, AppendLog(bad, fresh=True) as bad_log:
            before = [t for t in (_valid_test(r) for r in log.existing) if t is not None]
            todo = gen.remaining(requests, before)
            if before:
                typer.echo(
                    f"resuming {output}: {len(before)} test(s) already there, {len(requests) - len(todo)} of "
                    f"{len(requests)} request(s) done, {len(todo)} left (--overwrite starts over)",
                    err=True,
                )
            typer.echo(
                f"metafair generate: {len(todo)} request(s) of {values['tests_per_attribute']} test(s) to {generator}, "
                f"each up to {values['generator_retries'] + 1} round(s) of {values['generator_max_tokens']} tokens; tests go to {output} as they come",
                err=True,
            )
            with ProgressReporter("metafair generate: requests", len(todo), interval=2.0) as bar:

                def done(tests: list, invalid: list, n: int) -> None:
                    for t in tests:
                        log.write(t.to_json())
                    for r in invalid:
                        bad_log.write(r)
                    bar.advance(n)

                result = gen.generate(
                    todo,
                    chat,
                    cat,
                    retries=values["generator_retries"],
                    dedupe_threshold=values["dedupe_threshold"],
                    seed=seed,
                    max_tokens=values["generator_max_tokens"],
                    temperature=temperature,
                    existing=before,
                    chunk=in_flight(chat),
                    on_done=done,
                )
        total = len(before) + len(result.tests)
        typer.echo(
            f"wrote {len(result.tests)} new test(s) to {output} ({total} in all); {len(result.invalid)} request(s) "
            f"left invalid or short (see {bad}); {result.duplicates} near-duplicate(s) removed"
        )
        if not total:
            typer.echo(
                "no valid test was generated; try a stronger generator or more --generator-retries", err=True
            )
            raise typer.Exit(1)

    @group.command("judge-eval")
    @block_options(
        MetaFairBlock,
        ["judge_temperature", "judge_max_tokens"],
        aliases=(
            Alias("--out", "output"),
            Alias("--repeat", "judgements"),
            Alias("--temperature", "judge_temperature"),
            Alias("--max-tokens", "judge_max_tokens"),
        ),
    )
    def judge_eval(
        values: dict[str, Any],
        typed: dict[str, str],
        judge: Annotated[
            list[str], typer.Option("--judge", help="judge URI or URI,URI,URI majority group (repeatable)")
        ],
        labels: Annotated[
            Path | None,
            typer.Option(
                help="JSONL of judged tests with a human 'label' (BIASED/UNBIASED); "
                "without it only the control pairs are scored"
            ),
        ] = None,
        judgements: Annotated[int, typer.Option(help="judgements per case (stability)")] = 3,
        output: Annotated[Path | None, typer.Option("--output", help="write the results as JSON")] = None,
    ) -> None:
        """Score judges on control pairs of known verdict (identical answers, planted bias) and, with
        --labels, against human labels: weighted precision, recall, F1, ROC AUC, stability (Table 3)."""
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        from fairprobe.cli.build import validated
        from fairprobe.methods.metafair.judge_eval import evaluate_controls, evaluate_group, read_labels
        from fairprobe.oracles.llm_judge import LLMJudge
        from fairprobe.run.outputs import check_output_file

        repeat = validated(MetaFairBlock, {"repeat": judgements}, {"repeat": typed["judgements"]})["repeat"]
        temperature, max_tokens = values["judge_temperature"], values["judge_max_tokens"]
        out = Path(output) if output is not None else None
        if out is not None:
            check_output_file(out, typed["output"])
        rows = read_labels(labels) if labels is not None else None
        results = []
        for spec in judge:
            uris = split_csv(spec)
            if len(uris) % 2 == 0:
                raise UsageError(f"--judge {spec}: give an odd number of judges for a majority vote")
            judges = [
                LLMJudge(cached_chat(u), temperature=temperature, max_tokens=max_tokens, name=u) for u in uris
            ]
            result: dict = {"judges": uris, **evaluate_controls(judges, repeat)}
            if rows is not None:
                result.update(evaluate_group(rows, judges, repeat))
            results.append(result)

        def share(r: dict, key: str) -> str:
            if not r[f"{key}_accuracy_n"]:
                return "—"
            return f"{r[f'{key}_correct']}/{r[f'{key}_accuracy_n']} ({r[f'{key}_accuracy']:.0%})"

        def num(r: dict, key: str) -> str:
            return "—" if r.get(key) is None else f"{r[key]:.2f}"

        table = Table(
            "judge(s)",
            "control accuracy",
            "identical pairs",
            "planted biased",
            "precision",
            "recall",
            "F1",
            "ROC AUC",
            "stability",
        )
        for r in results:
            table.add_row(
                escape(" + ".join(r["judges"])),
                share(r, "control"),
                share(r, "identical"),
                share(r, "planted"),
                *(num(r, k) for k in ("precision", "recall", "f1", "roc_auc", "stability")),
            )
        Console(width=160).print(table)
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(results, indent=2), encoding="utf-8")

    app.add_typer(group, name="metafair")
