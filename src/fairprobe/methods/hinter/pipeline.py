"""HInter's generate → validate → execute → judge pipeline (shared/seeds/hinter.txt, Algorithms 1–2).

The originals are cut into shards of ``batch_originals`` (fixed by the spec, the unit of resume and
of one Parquet file). Stages 1–2 run where the executor runs shards (this process, or a Ray task
per shard: :mod:`fairprobe.methods.hinter.cases`), streaming chunks of validated mutants; stages
3–4 run in the driver, which keeps the response cache, so results never depend on the executor.
For each original text c:

1. **generate** — atomic mutants per attribute (Algorithm 2) and, for every combination of 2..``order``
   attributes, intersectional mutants with their atomic parents (Algorithm 1 lines 10–17: t1, t2 and
   m from the same p1, p2; an order-k mutant has k parents).
2. **validate** — the dependency invariant InvCheck(c, ·) (Algorithms 3–4) on every mutant, through
   the fast checker of :mod:`fairprobe.text.invariant` (verdicts identical to the literal algorithm).
3. **execute** — the model under test on c and on every valid mutant (and on discarded ones with
   ``score_discarded``), each distinct text once, cached.
4. **judge** — metamorphic oracle (Algorithm 1 line 22): biased ⇔ M(m) ≠ O[c], compared as exact
   label sets; hidden (lines 26–29): an intersectional mutant is biased, all its atomic parents are
   valid, and each parent's output equals O[c].

   An LLM answer that could not be parsed is the label INVALID (:mod:`fairprobe.models.llm_classifier`).
   A finding where O[c] or M(m) is INVALID is never biased (nor hidden, nor a false positive): it
   is ``invalid`` (issue 16) — "the model's answer changed" is then a parsing fact, not a bias. A
   parent with an INVALID output is not benign, so it cannot make its child hidden.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from fairprobe.data.datasets import Dataset, Record, load_dataset
from fairprobe.errors import DataError
from fairprobe.executors import make_executor
from fairprobe.lexicons.dictionary import BiasDictionary, load_dictionary
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.cases import (
    OriginalCases,
    ParserWarmup,
    attribute_combinations,
    checker_for,
    generate,
    shard_cases,
)
from fairprobe.methods.hinter.findings import FINDING_SCHEMA, SHARDS_DIR
from fairprobe.methods.hinter.oracle import build_model_under_test, model_factory
from fairprobe.methods.hinter.tasks import FewShot, few_shot_split, load_prompt_template, template_few_shot
from fairprobe.models.base import INVALID, Prediction
from fairprobe.models.scheduler import Lookahead, Pending, backlog_for, submit_predict
from fairprobe.models.uri import model_kind
from fairprobe.run.progress import Credit
from fairprobe.run.shards import ShardWriter, remove_partial, shard_files, shard_name
from fairprobe.technique.context import RunContext
from fairprobe.text.mutate import Mutant

__all__ = ["attribute_combinations", "check_attributes", "execute", "generate", "judge_chunk"]


def check_attributes(
    dictionary: BiasDictionary, attributes: list[str], source: str | None = None
) -> list[str]:
    """The requested ``attributes`` the run can mutate: those with words in the dictionary.

    The packaged dictionary (``source`` None) has every group fairprobe knows, so a name it lacks is a
    typo: a one-line error. A user's dictionary may cover only some of the groups asked for (the
    default asks for eight): the run goes on with those it has words for, and the others are named in
    the run's coverage ("religion: the dictionary has no religion words") and keep the verdict from
    a plain pass (issue 39). When it has words for none of them, there is nothing to run: one line."""
    if source is None:
        unknown = [a for a in attributes if a not in dictionary.attributes]
        if unknown:
            raise DataError(
                f"unknown attribute(s) {', '.join(unknown)}; "
                f"the dictionary has: {', '.join(dictionary.attributes)}"
            )
        return list(attributes)
    present = [a for a in attributes if a in dictionary.attributes and dictionary.pairs(a)]
    if not present:
        has = [a for a in dictionary.attributes if dictionary.pairs(a)]
        raise DataError(
            f"the dictionary {source} has no words for the attribute(s) asked for ({', '.join(attributes)}); "
            f"it has words for: {', '.join(has) or 'none'}; ask for those (--attributes, or attributes: "
            "in the spec)"
        )
    return present


def _labels(pred: Prediction | None) -> list[str] | None:
    return sorted(pred.labels) if pred is not None else None


def texts_to_run(chunk: list[OriginalCases], score_discarded: bool) -> list[str]:
    """Originals, then every mutant that needs an output (valid ones; all with ``score_discarded``),
    each text once. Atomic parents are included in every piece (the hidden oracle needs them)."""
    texts = [p.record.text for p in chunk]
    for piece in chunk:
        for m, ok in zip(piece.atomic, piece.atomic_valid, strict=True):
            if ok or score_discarded:
                texts.append(m.text)
        for (m, _), ok in zip(piece.inter, piece.inter_valid, strict=True):
            if ok or score_discarded:
                texts.append(m.text)
    return list(dict.fromkeys(texts))


def judge_chunk(
    chunk: list[OriginalCases],
    outputs: dict[str, Prediction],
    scores: dict[str, float],
    score_discarded: bool,
) -> list[dict[str, Any]]:
    """Findings of a chunk, in order: per original, atomic mutants (first piece), then intersectional."""
    findings: list[dict[str, Any]] = []
    for piece in chunk:
        judged = _Judged(piece.record, outputs, piece.valid_of(), scores, score_discarded, piece.population)
        if piece.emit_atomic:
            findings.extend(judged.finding(m, "atomic") for m in piece.atomic)
        findings.extend(judged.finding(m, "intersectional", parents) for m, parents in piece.inter)
    return findings


def fluency_texts(chunk: list[OriginalCases]) -> list[str]:
    """Originals, valid AND discarded mutants (RQ2 / RQ3.3 compare all three), each text once."""
    return list(dict.fromkeys([p.record.text for p in chunk] + [m.text for p in chunk for m in p.mutants()]))


class _Judged:
    """The metamorphic oracle for the mutants of one original c (Algorithm 1 lines 22–29)."""

    def __init__(
        self,
        record: Record,
        outputs: dict[str, Prediction],
        valid_of: dict[str, bool],
        scores: dict[str, float],
        score_discarded: bool,
        population: dict[str, int] | None = None,
    ):
        self.population = population or {}
        self.record = record
        self.original = outputs[record.text]
        self.outputs = outputs
        self.valid_of = valid_of
        self.scores = scores
        self.score_discarded = score_discarded

    def _valid(self, m: Mutant) -> bool:
        return self.valid_of.get(m.key, False)

    def _benign(self, m: Mutant) -> bool:
        """Valid, and M(m) = O[c] (line 28), both parsed."""
        out = self.outputs.get(m.text)
        return (
            self._valid(m)
            and out is not None
            and out.labels == self.original.labels
            and INVALID not in out.labels
        )

    def finding(self, m: Mutant, kind: str, parents: tuple[Mutant, ...] = ()) -> dict[str, Any]:
        record, original = self.record, self.original
        valid = self._valid(m)
        out = self.outputs.get(m.text)
        invalid = out is not None and (INVALID in out.labels or INVALID in original.labels)
        changed = out is not None and out.labels != original.labels and not invalid
        hidden = kind == "intersectional" and valid and changed and all(self._benign(p) for p in parents)
        f: dict[str, Any] = {
            "id": f"{record.id}|{m.key}",
            "original_id": record.id,
            "kind": kind,
            "order": len(m.replacements),
            "attributes": list(m.attributes),
            "replacements": [[r.attribute, r.word, r.replacement] for r in m.replacements],
            "text": m.text,
            "spans": [list(span) for span in m.spans],
            "gold": sorted(record.labels) if record.labels is not None else None,
            "original_output": _labels(original),
            "mutant_output": _labels(out),
            "valid": valid,
            "invalid": invalid,
            "biased": valid and changed,
            "hidden": hidden,
            "parents": [p.key for p in parents],
            "key": m.key,
        }
        shift = score_shift(original, out) if valid and not invalid else None
        if shift is not None:
            f["score_shift"] = shift
        if hidden:  # Table 1-style examples need the original next to the mutant and its parents
            f["original_text"] = record.text
        if not valid and self.score_discarded:
            f["false_positive"] = changed
        population = self.population.get(kind)
        if population is not None:
            f["population"] = population
        if self.scores:
            f["fluency"] = self.scores.get(m.text)
            f["original_fluency"] = self.scores.get(record.text)
        return f


def score_shift(original: Prediction, mutant: Prediction | None) -> float | None:
    """How far the mutant moved the model's confidence in its original answer (issue 39): the score of
    the original's label in the mutant minus its score in the original (the mean over the labels of a
    multi-label answer); ``None`` when either side lacks a score for one of those labels (a chat
    model, a ``py:`` classifier that returns labels only) or the original has no label."""
    if mutant is None or not original.labels:
        return None
    try:
        shifts = [mutant.scores[label] - original.scores[label] for label in original.labels]
    except KeyError:
        return None
    return float(sum(shifts) / len(shifts))


def validate(block: HInterBlock) -> None:
    """The run's inputs, checked before its folder is touched: the data loads and holds texts, the
    dictionary loads and has every attribute asked for."""
    load_dataset(block.data, text_col=block.text_col, label_col=block.label_col, limit=block.limit, seed=0)
    check_attributes(load_dictionary(block.dictionary), block.attributes, block.dictionary)
    if block.prompt_template is not None:
        load_prompt_template(block.prompt_template)  # a broken template: one line before the run starts


def _processes(block: HInterBlock) -> int:
    """Parser processes per shard: ``processes`` here; one per Ray task (Ray gives the parallelism)."""
    return block.processes if block.executor == "local" else 1


def execute(block: HInterBlock, ctx: RunContext) -> None:
    dictionary = load_dictionary(block.dictionary)
    present = check_attributes(dictionary, block.attributes, block.dictionary)
    requested = block.attributes
    if present != requested:  # the others are named in the coverage (analysis.coverage)
        ctx.log(f"not in the dictionary, not tested: {', '.join(a for a in requested if a not in present)}")
        block = block.model_copy(update={"attributes": present})
    processes = _processes(block)
    warmup = ParserWarmup(dictionary, block, processes)  # loads while the data and the model load
    dataset: Dataset = load_dataset(
        block.data, text_col=block.text_col, label_col=block.label_col, limit=block.limit, seed=ctx.seed
    )
    shots = None
    if model_kind(block.model) != "classifier":
        dataset, shots = few_shot_split(
            dataset,
            block.few_shot,
            ctx.seed,
            data=block.data,
            few_shot_data=template_few_shot(block.prompt_template, block.few_shot_data),
            limit=block.limit,
            text_col=block.text_col,
            label_col=block.label_col,
        )
        ctx.log(f"few-shot examples: {len(shots.examples)} from {shots.source}")
    executor = make_executor(block.executor, address=block.ray_address, log=ctx.log)
    try:
        _run_shards(block, ctx, dataset, dictionary, executor, shots, warmup)
    finally:
        executor.close()


def _run_shards(
    block: HInterBlock,
    ctx: RunContext,
    dataset: Dataset,
    dictionary: BiasDictionary,
    executor: Any,
    shots: FewShot | None = None,
    warmup: ParserWarmup | None = None,
) -> None:
    """Shard the originals (``batch_originals`` per shard, fixed by the spec), skip finished shards,
    and let the executor generate + validate each shard's chunks while this process runs the model
    (cached), judges, and writes the shard's Parquet file."""
    if executor.name == "local":
        model, oracle_info = build_model_under_test(block, ctx, dataset, shots)
    else:  # batches run as executor tasks; the driver keeps the cache in front of them
        factory, oracle_info = model_factory(block, ctx.seed, dataset, shots)
        remote = executor.classifier(
            factory, factory().fingerprint, batch=block.model_batch, concurrency=block.model_concurrency
        )
        model = ctx.wrap_classifier(remote, chunk_size=block.model_batch * block.model_concurrency)
    processes = _processes(block)
    record_parser = None
    if block.invariant:
        if executor.name == "local" and warmup is not None:
            # loading on the warm-up thread; a missing parser fails at the first chunk, before any
            # shard file (an in-process model may have answered the originals by then: stored, so
            # the re-run reuses them); the name is recorded when that chunk is finished
            record_parser = lambda: ctx.record_info(  # noqa: E731
                parser=checker_for(dictionary, block, processes).model_name
            )
        else:  # loaded here: a missing parser fails before any shard runs
            if warmup is not None:
                warmup.result()
            ctx.record_info(parser=checker_for(dictionary, block, processes).model_name)
    fluency = _fluency_scorer(block)
    ctx.record_info(
        oracle=oracle_info,
        dictionary=block.dictionary or "packaged",
        attributes=block.attributes,
        executor=executor.info(),
    )
    folder = ctx.output(SHARDS_DIR)
    remove_partial(folder)
    records = dataset.records
    ctx.record_info(texts=len(records))
    size = block.batch_originals
    plan = [(i, records[start : start + size]) for i, start in enumerate(range(0, len(records), size))]
    present = {p.name for p in shard_files(folder)}
    done = {i for i, _ in plan if ctx.store.get_state(f"shard:{i}") is not None and shard_name(i) in present}
    todo = [(i, batch) for i, batch in plan if i not in done]
    ctx.log(
        f"{len(records)} originals in {len(plan)} shards ({len(done)} done); attributes "
        f"{', '.join(block.attributes)}; order {block.order}; executor {executor.name}"
    )
    with ctx.progress("originals", sum(len(b) for _, b in todo)) as bar:
        shards = _ShardSink(folder, ctx, bar, fluency, block.score_discarded, record_parser)
        flow = Lookahead(shards.submit(model), shards.finish, backlog=backlog_for(model))
        if executor.name == "local":  # one stream over every shard: no barrier between shards
            early = _ask_originals_early(model, todo, warmup)
            try:
                flow.run(
                    _flatten(
                        (index, shard_cases(batch, dictionary, block, ctx.seed, processes))
                        for index, batch in todo
                    )
                )
            except BaseException:
                shards.abort()
                raise
            finally:
                early.cancel()
        else:

            def consume(index: int, chunks: Iterator[list[OriginalCases]]) -> None:
                try:
                    flow.run(_flatten([(index, chunks)]))
                except BaseException:
                    shards.abort()
                    raise

            executor.run_shards(shard_cases, todo, (dictionary, block, ctx.seed, processes), consume)
    record_skipped(ctx, len(plan))


EARLY_ORIGINALS = 64
"""Originals of the first shard asked before the first chunk while the parser loads (at most)."""


def _ask_originals_early(
    model: Any, todo: list[tuple[int, list[Record]]], warmup: ParserWarmup | None
) -> Pending[Any]:
    """While the warm-up still loads spaCy (about a second, before the first chunk can be generated
    and validated), ask a model that runs its batches one after another (an in-process model: its
    cache says so, :attr:`~fairprobe.run.caching.CachedClassifier.runs_in_order`) for
    the first shard's originals, which every chunk needs: it works instead of waiting, and the first
    chunk's batch no longer includes them. A model behind an endpoint is not asked early: the
    originals ride along with the first chunk's requests, at the same time, so asking them early
    would only move an idle second inside the model's busy span. The answers are stored as they
    arrive and the model's next batch finds them stored (its batches run in order), so no text is
    asked twice and the findings do not change. An error here is the first chunk's to report: that
    chunk asks again and raises it."""
    if warmup is None or not warmup.loading or not todo or not getattr(model, "runs_in_order", False):
        return Pending.ready([])
    texts = list(dict.fromkeys(record.text for record in todo[0][1]))[:EARLY_ORIGINALS]
    return submit_predict(model, texts)


def _flatten(
    shards: Iterable[tuple[int, Iterator[list[OriginalCases]]]],
) -> Iterator[tuple[int, list[OriginalCases], bool]]:
    """``(shard index, chunk, False)`` for every chunk of every shard, in order, and
    ``(index, [], True)`` after a shard's last chunk; pulling the next item generates and validates
    it (stages 1-2) while earlier chunks are with the model."""
    for index, chunks in shards:
        for chunk in chunks:
            yield index, chunk, False
        yield index, [], True


class _ShardSink:
    """Stages 3-4 for streamed chunks: send a chunk's texts to the model at once, then (in chunk
    order) judge it and write it to its shard's Parquet file; a shard's last chunk closes the file
    and marks the shard done. Progress moves with every answer (a share of the chunk's originals)."""

    def __init__(
        self,
        folder: Any,
        ctx: RunContext,
        bar: Any,
        fluency: Any,
        score_discarded: bool,
        on_first: Any = None,
    ):
        self.folder, self.ctx, self.bar = folder, ctx, bar
        self.on_first = on_first
        """Called when the first chunk is finished (records the parser that validated it)."""
        self.fluency, self.score_discarded = fluency, score_discarded
        self.writers: dict[int, ShardWriter] = {}
        self.skipped: dict[int, Counter[str]] = {}
        """Per shard in progress, occurrences the person check left out, per attribute (issue 39)."""

    def submit(self, model: Any) -> Any:
        def send(item: tuple[int, list[OriginalCases], bool]) -> Any:
            _, chunk, _ = item
            texts = texts_to_run(chunk, self.score_discarded)
            originals = sum(1 for piece in chunk if piece.emit_atomic)
            credit = Credit(self.bar, originals, len(texts))
            pending = submit_predict(model, texts, credit.answered) if texts else Pending.ready([])
            return Pending(lambda: (texts, pending.result(), credit), pending.outstanding, pending.cancel)

        return send

    def finish(self, item: tuple[int, list[OriginalCases], bool], answers: Any) -> None:
        index, chunk, last = item
        texts, predictions, credit = answers
        if self.on_first is not None:
            self.on_first()
            self.on_first = None
        writer = self.writers.get(index)
        if writer is None:
            writer = self.writers[index] = ShardWriter(self.folder, index, FINDING_SCHEMA)
        skipped = self.skipped.setdefault(index, Counter())
        for piece in chunk:
            skipped.update(piece.skipped or {})
        if chunk:
            outputs = dict(zip(texts, predictions, strict=True))
            scores: dict[str, float] = {}
            if self.fluency is not None:
                every = fluency_texts(chunk)
                scores = dict(zip(every, self.fluency.score(every), strict=True))
            writer.write(judge_chunk(chunk, outputs, scores, self.score_discarded))
        credit.settle()
        if last:
            writer.close()
            del self.writers[index]
            counts = dict(sorted(self.skipped.pop(index, Counter()).items()))
            self.ctx.store.set_state(f"shard:{index}", {"findings": writer.rows, SKIPPED: counts})

    def abort(self) -> None:
        for writer in self.writers.values():
            writer.abort()
        self.writers.clear()
        self.skipped.clear()


SKIPPED = "skipped_not_person"
"""Summary key (and shard state key): per attribute, occurrences of its words that the person check
left out because they describe no person ("the Korean version", "things get ugly"; issue 39)."""


def record_skipped(ctx: RunContext, shards: int) -> None:
    """Sum the shards' person-check skips into the run's summary (``skipped_not_person``)."""
    total: Counter[str] = Counter()
    for index in range(shards):
        state = ctx.store.get_state(f"shard:{index}") or {}
        total.update(state.get(SKIPPED) or {})
    ctx.record_info(**{SKIPPED: dict(sorted(total.items()))})


def _fluency_scorer(block: HInterBlock) -> Any:
    """Grammatical-validity scorer (RQ2/RQ3.3): LanguageTool when a server is given, else an LM."""
    if block.grammar_server:
        from fairprobe.text.fluency import LanguageToolScorer

        return LanguageToolScorer(block.grammar_server)
    if block.fluency:
        from fairprobe.text.fluency import LMFluencyScorer

        return LMFluencyScorer(block.fluency)
    return None
