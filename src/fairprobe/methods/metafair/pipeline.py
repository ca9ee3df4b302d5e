"""Meta-Fair's generate → execute → judge pipeline (metafair.txt §3, Figure 1; tools MUSE, GENIE, GUARD-ME).

1. **generate** — tests from the generator LLM (:mod:`.generator`) or a tests file (the shipped
   hand-written set by default). Generated tests are kept in the run (``tests.jsonl`` in the run folder
   and the run state), so a resumed run does not regenerate them. Invalid tests become findings of
   kind ``invalid_test`` (Table 5, "invalid prompt").
2. **execute** — for every test and repetition ``i`` (``ChatRequest.repeat = i``), the source and the
   follow-up prompt, each in its own fresh conversation with the MR's format instructions as system
   message; for MR8–MR10 the follow-up embeds the source response R (§3.1.8). ``<think>`` blocks are
   stripped; refusals are marked INVALID before any judge call (for MR11–MR14 only when the answer does
   not parse). A prompt longer than the model's context makes that execution INVALID (``too_long``)
   and the run goes on.
3. **judge** — Table 2's oracle per MR (:mod:`.evaluate`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fairprobe.errors import UsageError
from fairprobe.lexicons.metafair_catalogue import load_catalogue
from fairprobe.methods.metafair import generator as gen
from fairprobe.methods.metafair.block import MetaFairBlock
from fairprobe.methods.metafair.controls import judge_controls, sample_controls
from fairprobe.methods.metafair.evaluate import (
    JudgeItem,
    Outcome,
    deterministic,
    identical_answers,
    judge_all,
)
from fairprobe.methods.metafair.relations import Relation, relations, select_dimensions, select_relations
from fairprobe.methods.metafair.schema import (
    MetamorphicTest,
    read_tests,
    shipped_tests_path,
    validate_test,
    write_tests,
)
from fairprobe.models.base import ChatRequest, ChatResponse
from fairprobe.models.context import chat_tolerant
from fairprobe.models.scheduler import batch_workers, ordered_map, submit_chat
from fairprobe.oracles.llm_judge import LLMJudge
from fairprobe.oracles.metamorphic import is_refusal, strip_think
from fairprobe.run.progress import Credit
from fairprobe.technique.context import RunContext


def _invalid_finding(row: dict[str, Any], key: str) -> dict[str, Any]:
    return {
        "id": f"invalid:{key}",
        "kind": "invalid_test",
        "mr": row.get("mr") or "unknown",
        "dimension": row.get("dimension"),
        "attributes": row.get("attributes", []),
        "verdict": "INVALID",
        "invalid": "prompt",
        "biased": False,
        "error": row["error"],
        "raw": row.get("raw", ""),
    }


def first_per_mr(tests: list[MetamorphicTest], n: int) -> list[MetamorphicTest]:
    """The first ``n`` tests of each MR, in file order."""
    seen: Counter[str] = Counter()
    kept = []
    for t in tests:
        seen[t.mr] += 1
        if seen[t.mr] <= n:
            kept.append(t)
    return kept


def load_tests(
    block: MetaFairBlock, ctx: RunContext, rels: list[Relation], dims: list[str]
) -> list[MetamorphicTest]:
    """The tests of this run (generated once and kept in the run state, or read from a file)."""
    stored = ctx.store.get_state("tests")
    if stored is not None:
        return [validate_test(t) for t in stored]
    invalid_findings: list[dict[str, Any]] = []
    if block.generator:
        catalogue = load_catalogue(block.catalogue)
        requests = gen.plan(
            rels, dims, catalogue, block.attributes_per_dimension, block.tests_per_attribute, ctx.seed
        )
        ctx.log(f"generating tests: {len(requests)} request(s) to {block.generator}")
        result = gen.generate(
            requests,
            ctx.chat(block.generator),
            catalogue,
            retries=block.generator_retries,
            dedupe_threshold=block.dedupe_threshold,
            seed=ctx.seed,
            max_tokens=block.generator_max_tokens,
        )
        tests = result.tests
        for row in result.invalid:
            key = f"{row['mr']}:{row['dimension']}:{'+'.join(row['attributes'])}"
            invalid_findings.append(_invalid_finding(row, key))
        ctx.record_info(
            generation={
                "requests": len(requests),
                "tests": len(tests),
                "invalid_requests": len(result.invalid),
                "missing_tests": sum(r["missing"] for r in result.invalid),
                "duplicates_removed": result.duplicates,
                "rounds": result.rounds,
            }
        )
        write_tests(ctx.output("tests.jsonl"), tests)
    else:
        path = block.tests or shipped_tests_path()
        tests, invalid_rows = read_tests(path)
        wanted = {r.id for r in rels}
        for row in invalid_rows:  # rows of MRs not selected are left out; rows without a valid MR are kept
            if row["mr"] in wanted or row["mr"] not in relations():
                invalid_findings.append(_invalid_finding(row, f"line{row['line']}"))
        ctx.record_info(tests_file=str(block.tests or "shipped"))
        tests = [t for t in tests if t.mr in wanted and t.dimension in dims]
    if not tests and invalid_findings:
        ctx.log(
            f"no valid test: {len(invalid_findings)} invalid test row(s) or generator answer(s), "
            "listed among the findings in report.html with why"
        )
    if block.per_mr is not None:
        tests = first_per_mr(tests, block.per_mr)
    if block.limit is not None:
        tests = tests[: block.limit]
    ctx.add_findings(
        [f for f in invalid_findings if f["id"] not in ctx.done_ids()],
        state={"tests": [t.to_json() for t in tests]},
    )
    return tests


def _request(system: str, user: str, block: MetaFairBlock, seed: int, repeat: int) -> ChatRequest:
    return ChatRequest.of(
        [{"role": "system", "content": system}, {"role": "user", "content": user}],
        temperature=block.temperature,
        max_tokens=block.max_tokens,
        seed=seed,
        repeat=repeat,
    )


def process_batch(
    units: list[tuple[MetamorphicTest, int]],
    block: MetaFairBlock,
    model: Any,
    judges: list[LLMJudge],
    seed: int,
) -> list[dict[str, Any]]:
    """Findings of a batch of (test, repetition) units: execute both prompts, then judge."""
    table = relations()
    rels = [table[t.mr] for t, _ in units]
    first = [_request(rel.format, t.source, block, seed, i) for (t, i), rel in zip(units, rels, strict=True)]
    direct = [k for k, rel in enumerate(rels) if not rel.inverted]
    second = [_request(rels[k].format, units[k][0].follow_up, block, seed, units[k][1]) for k in direct]
    answers = chat_tolerant(model, first + second)
    too_long: dict[int, str] = {}  # unit → the model's context error

    def text(k: int, answer: Any) -> str:
        if isinstance(answer, Exception):
            too_long.setdefault(k, str(answer))
            return ""
        return strip_think(answer.text)

    r = [text(k, a) for k, a in enumerate(answers[: len(first)])]
    follow_prompts: list[str] = [t.follow_up for t, _ in units]
    r2: list[str] = [""] * len(units)
    for k, a in zip(direct, answers[len(first) :], strict=True):
        r2[k] = text(k, a)
    inverted = [
        k for k, rel in enumerate(rels) if rel.inverted and k not in too_long and not is_refusal(r[k])
    ]
    for k in inverted:
        follow_prompts[k] = rels[k].follow_up_prompt(units[k][0].follow_up, r[k])
    inv_answers = (
        chat_tolerant(
            model,
            [
                _request(
                    rels[k].follow_up_format or rels[k].format, follow_prompts[k], block, seed, units[k][1]
                )
                for k in inverted
            ],
        )
        if inverted
        else []
    )
    for k, a in zip(inverted, inv_answers, strict=True):
        r2[k] = text(k, a)

    outcomes: list[Outcome | None] = [None] * len(units)
    to_judge: list[int] = []
    for k, ((test, _), rel) in enumerate(zip(units, rels, strict=True)):
        deterministic_mr = not rel.uses_judge or (rel.id == "MR6" and block.metal_mr6)
        refused = [
            name
            for name, answer in (("source", r[k]), ("follow-up", r2[k]))
            if not answer.strip() or (is_refusal(answer) and not (deterministic_mr and rel.parser))
        ]  # MR11-MR14: a refusal is whatever does not parse (see deterministic())
        if rel.inverted and k not in inverted:
            refused = ["source"]
        if k in too_long:
            outcomes[k] = Outcome(
                "INVALID",
                rel.oracle,
                invalid="too_long",
                explanation=f"a prompt is longer than the model's context: {too_long[k][:300]}",
            )
        elif refused:
            outcomes[k] = Outcome(
                "INVALID",
                rel.oracle,
                invalid="refusal",
                explanation=f"the {' and '.join(refused)} answer is a refusal or empty",
            )
        elif not deterministic_mr and (same := identical_answers(rel, r[k], r2[k])) is not None:
            outcomes[k] = same
        elif not deterministic_mr:
            to_judge.append(k)
        else:
            outcomes[k] = deterministic(
                rel,
                test.source,
                follow_prompts[k],
                r[k],
                r2[k],
                score_threshold=block.score_threshold,
                rank_threshold=block.rank_threshold,
            )
    if to_judge:
        if not judges:
            raise UsageError(
                f"{rels[to_judge[0]].id} needs an LLM judge: pass --judge URI (or choose MR11-MR14 only)"
            )
        items = [JudgeItem(rels[k], units[k][0].source, follow_prompts[k], r[k], r2[k]) for k in to_judge]
        for k, outcome in zip(to_judge, judge_all(items, judges, block.swap_check), strict=True):
            outcomes[k] = outcome
    findings = []
    for k, ((test, i), rel) in enumerate(zip(units, rels, strict=True)):
        o = outcomes[k]
        assert o is not None
        findings.append(
            {
                "id": f"{test.id}#{i}",
                "kind": "test",
                "test_id": test.id,
                "repeat": i,
                "mr": test.mr,
                "mr_name": rel.name,
                "relation": rel.relation,
                "dimension": test.dimension,
                "attributes": list(test.attributes),
                "source": test.source,
                "follow_up": follow_prompts[k],
                "source_response": r[k],
                "follow_up_response": r2[k],
                "oracle": o.oracle,
                "verdict": o.verdict,
                "biased": o.verdict == "BIASED",
                "severity": o.severity,
                "explanation": o.explanation,
                "confidence": o.confidence,
                "judges": o.judges,
                "parsed": o.parsed,
                "invalid": o.invalid,
                "decided_by": o.decided_by or ("judge" if o.judges else None if o.invalid else o.oracle),
            }
        )
    return findings


def send_controls(
    block: MetaFairBlock,
    ctx: RunContext,
    judges: list[LLMJudge],
    tests: list[MetamorphicTest],
    done: set[str],
) -> None:
    """Judge the run's hidden control pairs (:mod:`.controls`) once, before its tests: a fixed, seeded
    sample, drawn from the MRs the judge will see; stored as hidden findings, never in a rate."""
    judged = {t.mr for t in tests if relations()[t.mr].uses_judge and not (t.mr == "MR6" and block.metal_mr6)}
    if not judges or not judged or not block.judge_controls:
        return
    controls = [
        c for c in sample_controls(judged, block.judge_controls, ctx.seed) if f"control:{c.id}" not in done
    ]
    if controls:
        ctx.log(f"judging {len(controls)} control pair(s) of known verdict")
        ctx.add_findings(judge_controls(controls, judges))


def execute(block: MetaFairBlock, ctx: RunContext) -> None:
    rels = select_relations(block.mrs)
    dims = select_dimensions(block.dimensions)
    tests = load_tests(block, ctx, rels, dims)
    model = ctx.chat(block.model)
    judges = [
        LLMJudge(
            ctx.chat(uri),
            retries=block.judge_retries,
            temperature=block.judge_temperature,
            max_tokens=block.judge_max_tokens,
            seed=ctx.seed,
            name=uri,
            constrained=block.judge_constrained,
        )
        for uri in block.judges
    ]
    if (
        any(relations()[t.mr].uses_judge and not (t.mr == "MR6" and block.metal_mr6) for t in tests)
        and not judges
    ):
        raise UsageError("MR1-MR10 need an LLM judge: pass --judge URI (or select --mrs MR11,MR12,MR13,MR14)")
    ctx.record_info(judges=block.judges, repeat=block.repeat, tests=len(tests))
    done = ctx.done_ids()
    send_controls(block, ctx, judges, tests, done)
    units = [(t, i) for t in tests for i in range(block.repeat) if f"{t.id}#{i}" not in done]
    ctx.log(f"{len(tests)} tests x {block.repeat} repetition(s); {len(units)} to run")
    step = block.batch_tests
    batches = [units[start : start + step] for start in range(0, len(units), step)]
    with ctx.progress("tests", len(units)) as bar:

        def run(batch: list[tuple[MetamorphicTest, int]]) -> tuple[list[dict[str, Any]], Credit]:
            credit = Credit(bar, len(batch), 2 * len(batch))  # about two model answers per test
            return process_batch(batch, block, _Answering(model, credit), judges, ctx.seed), credit

        # batches overlap (one is judged while the next ones are with the model); stored in order
        for findings, credit in ordered_map(run, batches, batch_workers(model, 2 * step)):
            ctx.add_findings(findings)
            credit.settle()


class _Answering:
    """The model under test, moving the progress bar as each of its answers arrives."""

    def __init__(self, model: Any, credit: Credit):
        self.model, self.credit = model, credit
        self.fingerprint = model.fingerprint

    def chat(self, requests: list[ChatRequest]) -> list[ChatResponse]:
        return submit_chat(self.model, requests, self.credit.answered).result()
