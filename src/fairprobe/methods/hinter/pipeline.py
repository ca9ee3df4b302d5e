"""HInter's generate → validate → execute → judge pipeline (shared/seeds/hinter.txt, Algorithms 1–2).

For each original text c (processed in resumable batches):

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
"""

from __future__ import annotations

import random
from itertools import combinations
from typing import Any

from fairprobe.datasets import Dataset, Record, load_dataset
from fairprobe.errors import DataError
from fairprobe.lexicons.dictionary import BiasDictionary, load_dictionary
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.oracle import build_model_under_test
from fairprobe.models.base import Prediction
from fairprobe.runner import RunContext
from fairprobe.text.mutate import Mutant, atomic_mutants, intersectional_mutants


def attribute_combinations(block: HInterBlock) -> list[tuple[str, ...]]:
    """Attribute tuples of size 2..order, in the order the user gave the attributes."""
    return [c for k in range(2, block.order + 1) for c in combinations(block.attributes, k)]


def check_attributes(dictionary: BiasDictionary, attributes: list[str]) -> None:
    unknown = [a for a in attributes if a not in dictionary.attributes]
    if unknown:
        raise DataError(
            f"unknown attribute(s) {', '.join(unknown)}; the dictionary has: {', '.join(dictionary.attributes)}"
        )


def generate(
    record: Record, dictionary: BiasDictionary, block: HInterBlock, seed: int
) -> tuple[list[Mutant], list[tuple[Mutant, tuple[Mutant, ...]]]]:
    """Atomic mutants and (intersectional mutant, parents) pairs of one original, sampled when capped."""
    atomic = [m for a in block.attributes for m in atomic_mutants(record.text, dictionary, a)]
    inter = [
        pair
        for combo in attribute_combinations(block)
        for pair in intersectional_mutants(record.text, dictionary, combo)
    ]
    cap = block.max_mutants_per_text
    if cap is not None:
        rng = random.Random(f"{seed}:{record.id}")
        if len(inter) > cap:
            inter = [inter[i] for i in sorted(rng.sample(range(len(inter)), cap))]
        if len(atomic) > cap:
            keep = {atomic[i].key for i in rng.sample(range(len(atomic)), cap)}
            keep |= {p.key for _, parents in inter for p in parents}
            atomic = [m for m in atomic if m.key in keep]
    return atomic, inter


def _labels(pred: Prediction | None) -> list[str] | None:
    return sorted(pred.labels) if pred is not None else None


def process_batch(
    records: list[Record],
    dictionary: BiasDictionary,
    block: HInterBlock,
    seed: int,
    checker: Any,
    model: Any,
    fluency: Any,
) -> list[dict[str, Any]]:
    """Findings for a batch of originals: one per mutant (atomic and intersectional)."""
    generated = [(r, *generate(r, dictionary, block, seed)) for r in records]
    # -- validate: the dependency invariant on every mutant ------------------------------------
    pairs: list[tuple[str, str]] = []
    for record, atomic, inter in generated:
        pairs.extend((record.text, m.text) for m in atomic)
        pairs.extend((record.text, m.text) for m, _ in inter)
    verdicts = checker.check(pairs) if (checker is not None and pairs) else [True] * len(pairs)
    # -- execute: originals + mutants that need an output, each distinct text once ---------------
    valid_of: dict[tuple[str, str], bool] = {}
    cursor = 0
    for record, atomic, inter in generated:
        for m in [*atomic, *(m for m, _ in inter)]:
            valid_of[(record.id, m.key)] = verdicts[cursor]
            cursor += 1
    texts = [r.text for r in records]
    for record, atomic, inter in generated:
        for m in [*atomic, *(m for m, _ in inter)]:
            if valid_of[(record.id, m.key)] or block.score_discarded:
                texts.append(m.text)
    outputs = dict(zip(texts, model.predict(texts), strict=True)) if texts else {}
    scores: dict[str, float] = {}
    if fluency is not None:  # originals, valid AND discarded mutants (RQ2 / RQ3.3 compare all three)
        every = list(
            dict.fromkeys(
                [r.text for r in records]
                + [m.text for _, a, i in generated for m in [*a, *(x for x, _ in i)]]
            )
        )
        scores = dict(zip(every, fluency.score(every), strict=True))
    # -- judge ------------------------------------------------------------------------------
    findings: list[dict[str, Any]] = []
    for record, atomic, inter in generated:
        batch = _Judged(record, outputs, valid_of, scores, block.score_discarded)
        findings.extend(batch.finding(m, "atomic") for m in atomic)
        findings.extend(batch.finding(m, "intersectional", parents) for m, parents in inter)
    return findings


class _Judged:
    """The metamorphic oracle for the mutants of one original c (Algorithm 1 lines 22–29)."""

    def __init__(
        self,
        record: Record,
        outputs: dict[str, Prediction],
        valid_of: dict[tuple[str, str], bool],
        scores: dict[str, float],
        score_discarded: bool,
    ):
        self.record = record
        self.original = outputs[record.text]
        self.outputs = outputs
        self.valid_of = valid_of
        self.scores = scores
        self.score_discarded = score_discarded

    def _valid(self, m: Mutant) -> bool:
        return self.valid_of.get((self.record.id, m.key), False)

    def _benign(self, m: Mutant) -> bool:
        """Valid, and M(m) = O[c] (line 28)."""
        out = self.outputs.get(m.text)
        return self._valid(m) and out is not None and out.labels == self.original.labels

    def finding(self, m: Mutant, kind: str, parents: tuple[Mutant, ...] = ()) -> dict[str, Any]:
        record, original = self.record, self.original
        valid = self._valid(m)
        out = self.outputs.get(m.text)
        changed = out is not None and out.labels != original.labels
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
            "biased": valid and changed,
            "hidden": hidden,
            "parents": [p.key for p in parents],
            "key": m.key,
        }
        if hidden:  # Table 1-style examples need the original next to the mutant and its parents
            f["original_text"] = record.text
        if not valid and self.score_discarded:
            f["false_positive"] = changed
        if self.scores:
            f["fluency"] = self.scores.get(m.text)
            f["original_fluency"] = self.scores.get(record.text)
        return f


def execute(block: HInterBlock, ctx: RunContext) -> None:
    dataset: Dataset = load_dataset(
        block.data, text_col=block.text_col, label_col=block.label_col, limit=block.limit, seed=ctx.seed
    )
    dictionary = load_dictionary(block.dictionary)
    check_attributes(dictionary, block.attributes)
    model, oracle_info = build_model_under_test(block, ctx, dataset)
    checker = None
    if block.invariant:
        from fairprobe.text.invariant import InvariantChecker

        checker = InvariantChecker(block.spacy_model, processes=block.processes)
        ctx.record_info(parser=checker.model_name)
    fluency = _fluency_scorer(block)
    ctx.record_info(
        oracle=oracle_info, dictionary=block.dictionary or "packaged", attributes=block.attributes
    )
    done = {k[len("done:") :] for k in ctx.store.state_keys("done:")}
    todo = [r for r in dataset.records if r.id not in done]
    ctx.log(
        f"{len(dataset.records)} originals ({len(done)} done); attributes {', '.join(block.attributes)}; order {block.order}"
    )
    with ctx.progress("originals", len(todo)) as bar:
        for start in range(0, len(todo), block.batch_originals):
            batch = todo[start : start + block.batch_originals]
            findings = process_batch(batch, dictionary, block, ctx.seed, checker, model, fluency)
            ctx.add_findings(findings, state={f"done:{r.id}": True for r in batch})
            bar.advance(len(batch))


def _fluency_scorer(block: HInterBlock) -> Any:
    """Grammatical-validity scorer (RQ2/RQ3.3): LanguageTool when a server is given, else an LM."""
    if block.grammar_server:
        from fairprobe.text.fluency import LanguageToolScorer

        return LanguageToolScorer(block.grammar_server)
    if block.fluency:
        from fairprobe.text.fluency import LMFluencyScorer

        return LMFluencyScorer(block.fluency)
    return None
