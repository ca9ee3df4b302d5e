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
from typing import Annotated

import typer

from fairprobe.cli_common import (
    FailOn,
    MaxAsymmetricInvalid,
    Models,
    Overwrite,
    Seed,
    cached_chat,
    check_options,
    run_technique,
    split_csv,
)
from fairprobe.errors import UsageError
from fairprobe.methods.metafair.block import MetaFairBlock
from fairprobe.methods.metafair.schema import MetamorphicTest
from fairprobe.refusals import DEFAULT_MAX_ASYMMETRIC_INVALID_RATE

Model = Models
Judge = Annotated[
    str | None, typer.Option("--judge", help="judge URI, or URI,URI,URI (odd number; majority)")
]
Mrs = Annotated[str, typer.Option(help="relations: all or MR1,MR3,...")]
Dims = Annotated[str, typer.Option(help="bias dimensions: all or gender,religion,...")]
Repeat = Annotated[int, typer.Option(help="executions per test (stability, Eq. 1)")]
Temp = Annotated[float, typer.Option(help="temperature of the model under test")]
MaxTok = Annotated[int, typer.Option(help="max answer tokens of the model under test")]
Swap = Annotated[bool, typer.Option(help="re-judge pairs swapped; disagreement -> INDETERMINABLE")]
Metal = Annotated[
    bool, typer.Option("--metal-mr6", help="MR6 with METAL's identity rule instead of the judge")
]
Limit = Annotated[int | None, typer.Option(help="run at most N tests")]
PerMr = Annotated[int | None, typer.Option(help="run at most the first N tests of each MR")]
JudgeTok = Annotated[int, typer.Option(help="max tokens of a judge answer")]
JudgeRetries = Annotated[int, typer.Option(help="correction rounds after a malformed judge answer")]
JudgeConstrained = Annotated[
    bool, typer.Option(help="constrained decoding of the judge's JSON verdict where the backend supports it")
]
JudgeControls = Annotated[
    int, typer.Option(help="control pairs of known verdict sent to the judge with the run (0: none)")
]
JudgeMinAcc = Annotated[
    float, typer.Option(help="below this share of correctly judged control pairs the run is inconclusive")
]
GenTok = Annotated[int, typer.Option(help="max tokens of a generator answer")]
GenRetries = Annotated[int, typer.Option(help="correction rounds after invalid generator output")]
PerDim = Annotated[int, typer.Option(help="attributes drawn per dimension")]
PerAttr = Annotated[int, typer.Option(help="tests generated per attribute")]


def _run(options: dict, out: Path | None, seed: int, overwrite: bool, fail_on: list[str] | None) -> None:
    if not options.get("model"):
        raise UsageError("--model is required: the chat model under test (e.g. embedded:smollm2)")
    if out is None:
        raise UsageError("--out is required: the run folder")
    run_technique("metafair", options, out, seed=seed, overwrite=overwrite, fail_on=fail_on)


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

    @group.callback(invoke_without_command=True)
    def metafair(
        ctx: typer.Context,
        model: Model = None,
        generator: Annotated[
            str | None, typer.Option(help="generator chat URI (else --tests or the shipped set)")
        ] = None,
        judge: Judge = None,
        tests: Annotated[
            str | None, typer.Option(help="tests JSONL (default: the shipped hand-written set)")
        ] = None,
        mrs: Mrs = "all",
        dimensions: Dims = "all",
        attributes_per_dimension: PerDim = 2,
        tests_per_attribute: PerAttr = 1,
        repeat: Repeat = 1,
        temperature: Temp = 0.7,
        max_tokens: MaxTok = 200,
        swap_check: Swap = False,
        metal_mr6: Metal = False,
        limit: Limit = None,
        per_mr: PerMr = None,
        judge_max_tokens: JudgeTok = 300,
        judge_retries: JudgeRetries = 2,
        judge_constrained: JudgeConstrained = True,
        judge_controls: JudgeControls = 12,
        judge_min_control_accuracy: JudgeMinAcc = 0.9,
        generator_max_tokens: GenTok = 1200,
        generator_retries: GenRetries = 2,
        max_asymmetric_invalid_rate: MaxAsymmetricInvalid = DEFAULT_MAX_ASYMMETRIC_INVALID_RATE,
        out: Annotated[Path | None, typer.Option("--out", help="run folder")] = None,
        seed: Seed = 0,
        overwrite: Overwrite = False,
        fail_on: FailOn = None,
    ) -> None:
        """Meta-Fair all in one: generate (or read) tests, execute, judge, report."""
        if ctx.invoked_subcommand is not None:
            return
        options = dict(
            model=model,
            generator=generator,
            judges=split_csv(judge),
            tests=tests,
            mrs=split_csv(mrs),
            dimensions=split_csv(dimensions),
            attributes_per_dimension=attributes_per_dimension,
            tests_per_attribute=tests_per_attribute,
            repeat=repeat,
            temperature=temperature,
            max_tokens=max_tokens,
            swap_check=swap_check,
            metal_mr6=metal_mr6,
            limit=limit,
            per_mr=per_mr,
            judge_max_tokens=judge_max_tokens,
            judge_retries=judge_retries,
            judge_constrained=judge_constrained,
            judge_controls=judge_controls,
            judge_min_control_accuracy=judge_min_control_accuracy,
            generator_max_tokens=generator_max_tokens,
            generator_retries=generator_retries,
            max_asymmetric_invalid_rate=max_asymmetric_invalid_rate,
        )
        _run(options, out, seed, overwrite, fail_on)

    @group.command("run")
    def run(
        model: Model = None,
        judge: Judge = None,
        tests: Annotated[
            str | None, typer.Option(help="tests JSONL (default: the shipped hand-written set)")
        ] = None,
        mrs: Mrs = "all",
        dimensions: Dims = "all",
        repeat: Repeat = 1,
        temperature: Temp = 0.7,
        max_tokens: MaxTok = 200,
        swap_check: Swap = False,
        metal_mr6: Metal = False,
        limit: Limit = None,
        per_mr: PerMr = None,
        judge_max_tokens: JudgeTok = 300,
        judge_retries: JudgeRetries = 2,
        judge_constrained: JudgeConstrained = True,
        judge_controls: JudgeControls = 12,
        judge_min_control_accuracy: JudgeMinAcc = 0.9,
        max_asymmetric_invalid_rate: MaxAsymmetricInvalid = DEFAULT_MAX_ASYMMETRIC_INVALID_RATE,
        out: Annotated[Path | None, typer.Option("--out", help="run folder")] = None,
        seed: Seed = 0,
        overwrite: Overwrite = False,
        fail_on: FailOn = None,
    ) -> None:
        """Execute and judge a tests file into a run folder."""
        options = dict(
            model=model,
            judges=split_csv(judge),
            tests=tests,
            mrs=split_csv(mrs),
            dimensions=split_csv(dimensions),
            repeat=repeat,
            temperature=temperature,
            max_tokens=max_tokens,
            swap_check=swap_check,
            metal_mr6=metal_mr6,
            limit=limit,
            per_mr=per_mr,
            judge_max_tokens=judge_max_tokens,
            judge_retries=judge_retries,
            judge_constrained=judge_constrained,
            judge_controls=judge_controls,
            judge_min_control_accuracy=judge_min_control_accuracy,
            max_asymmetric_invalid_rate=max_asymmetric_invalid_rate,
        )
        _run(options, out, seed, overwrite, fail_on)

    @group.command("generate")
    def generate(
        generator: Annotated[str, typer.Option(help="generator chat URI")],
        out: Annotated[Path, typer.Option("--out", help="tests JSONL to write")] = Path("tests.jsonl"),
        mrs: Mrs = "all",
        dimensions: Dims = "all",
        attributes_per_dimension: PerDim = 2,
        tests_per_attribute: PerAttr = 1,
        catalogue: Annotated[str | None, typer.Option(help="attribute catalogue YAML")] = None,
        retries: GenRetries = 2,
        max_tokens: GenTok = 1200,
        temperature: Annotated[float, typer.Option(help="generator temperature")] = 0.7,
        seed: Seed = 0,
        overwrite: Annotated[
            bool, typer.Option(help="start OUT afresh instead of resuming the tests already in it")
        ] = False,
    ) -> None:
        """Generate metamorphic tests with an LLM into a JSONL file (invalid output goes to OUT.invalid.jsonl).

        Each valid test is appended to OUT as soon as it is made, with progress on stderr; a re-run
        with OUT present resumes: requests that already have their tests are skipped."""
        from fairprobe.lexicons.metafair_catalogue import load_catalogue
        from fairprobe.methods.metafair import generator as gen
        from fairprobe.methods.metafair.relations import select_dimensions, select_relations
        from fairprobe.progress import ProgressReporter
        from fairprobe.readers import check_output_file
        from fairprobe.streaming import AppendLog, in_flight

        check_options(
            MetaFairBlock,
            dict(
                mrs=split_csv(mrs),
                dimensions=split_csv(dimensions),
                attributes_per_dimension=attributes_per_dimension,
                tests_per_attribute=tests_per_attribute,
                generator_retries=retries,
                generator_max_tokens=max_tokens,
                temperature=temperature,
            ),
            {"generator_retries": "--retries", "generator_max_tokens": "--max-tokens"},
        )
        check_output_file(out, "--out")
        check_output_file(out.with_name(out.stem + ".invalid.jsonl"), "--out (its .invalid.jsonl beside it)")
        cat = load_catalogue(catalogue)
        requests = gen.plan(
            select_relations(split_csv(mrs)),
            select_dimensions(split_csv(dimensions)),
            cat,
            attributes_per_dimension,
            tests_per_attribute,
            seed,
        )
        bad = out.with_name(out.stem + ".invalid.jsonl")
        chat = cached_chat(generator)  # a bad URI stops here, before any file is touched
        with AppendLog(out, fresh=overwrite) as log, AppendLog(bad, fresh=True) as bad_log:
            before = [t for t in (_valid_test(r) for r in log.existing) if t is not None]
            todo = gen.remaining(requests, before)
            if before:
                typer.echo(
                    f"resuming {out}: {len(before)} test(s) already there, {len(requests) - len(todo)} of "
                    f"{len(requests)} request(s) done, {len(todo)} left (--overwrite starts over)",
                    err=True,
                )
            typer.echo(
                f"metafair generate: {len(todo)} request(s) of {tests_per_attribute} test(s) to {generator}, "
                f"each up to {retries + 1} round(s) of {max_tokens} tokens; tests go to {out} as they come",
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
                    retries=retries,
                    seed=seed,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    existing=before,
                    chunk=in_flight(chat),
                    on_done=done,
                )
        total = len(before) + len(result.tests)
        typer.echo(
            f"wrote {len(result.tests)} new test(s) to {out} ({total} in all); {len(result.invalid)} request(s) "
            f"left invalid or short (see {bad}); {result.duplicates} near-duplicate(s) removed"
        )
        if not total:
            typer.echo("no valid test was generated; try a stronger generator or more --retries", err=True)
            raise typer.Exit(1)

    @group.command("judge-eval")
    def judge_eval(
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
        repeat: Annotated[int, typer.Option(help="judgements per case (stability)")] = 3,
        temperature: Annotated[float, typer.Option(help="judge temperature")] = 0.0,
        max_tokens: JudgeTok = 300,
        out: Annotated[Path | None, typer.Option("--out", help="write the results as JSON")] = None,
    ) -> None:
        """Score judges on control pairs of known verdict (identical answers, planted bias) and, with
        --labels, against human labels: weighted precision, recall, F1, ROC AUC, stability (Table 3)."""
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        from fairprobe.methods.metafair.judge_eval import evaluate_controls, evaluate_group, read_labels
        from fairprobe.oracles.llm_judge import LLMJudge
        from fairprobe.readers import check_output_file

        if out is not None:
            check_output_file(out, "--out")
        check_options(
            MetaFairBlock,
            {"repeat": repeat, "judge_temperature": temperature, "judge_max_tokens": max_tokens},
            {"judge_temperature": "--temperature", "judge_max_tokens": "--max-tokens"},
        )
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
