"""HInter's generate and validate stages for one shard of originals, as a stream of bounded chunks.

:func:`shard_cases` is the unit of work an executor runs (in this process or as a Ray task): it
generates the atomic and intersectional mutants of each original (Algorithms 1–2, see
:mod:`fairprobe.methods.hinter.pipeline`), applies the dependency invariant InvCheck(c, ·)
(Algorithms 3–4) and yields chunks of at most ``block.chunk_mutants`` mutants, so memory stays
bounded even for an original with hundreds of thousands of order-3 mutants.

An original whose mutants do not fit in one chunk is split into *pieces* of its intersectional
mutants; every piece carries the original's atomic mutants and their verdicts (the parents that
the hidden-bias oracle needs) but only the first piece reports them as findings. Chunking never
changes the findings or their order: it is an execution setting.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations, islice
from typing import Any

from fairprobe.datasets import Record
from fairprobe.lexicons.dictionary import BiasDictionary
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.text.mutate import Mutant, atomic_mutants, count_intersectional, iter_intersectional_mutants


def attribute_combinations(block: HInterBlock) -> list[tuple[str, ...]]:
    """Attribute tuples of size 2..order, in the order the user gave the attributes."""
    return [c for k in range(2, block.order + 1) for c in combinations(block.attributes, k)]


def generate_lazy(
    record: Record, dictionary: BiasDictionary, block: HInterBlock, seed: int, population: dict | None = None
) -> tuple[list[Mutant], Iterator[tuple[Mutant, tuple[Mutant, ...]]]]:
    """Atomic mutants (a list) and (intersectional mutant, parents) pairs (an iterator) of one original.

    Without ``max_mutants_per_text`` the intersectional mutants are built one at a time, so an
    original with 300,000 order-3 mutants never holds them all. With it, a seeded sample of at most
    that many per kind is drawn (the parents of kept intersectional mutants are always kept), and
    ``population`` (when given) receives the number of mutants of each kind *before* sampling, so
    the report's "generated" counts never shrink under sampling (issue 20).
    """
    text = record.text
    skip = person_skip(text, dictionary, block)
    atomic = [m for a in block.attributes for m in atomic_mutants(text, dictionary, a, skip=skip)]
    combos = attribute_combinations(block)
    cap = block.max_mutants_per_text
    if cap is None:
        lazy = (
            pair
            for combo in combos
            for pair in iter_intersectional_mutants(text, dictionary, combo, skip=skip)
        )
        return atomic, lazy
    counts = [count_intersectional(text, dictionary, combo, skip) for combo in combos]
    if population is not None:
        population.update(atomic=len(atomic), intersectional=sum(counts))
    rng = random.Random(f"{seed}:{record.id}")
    chosen = set(rng.sample(range(sum(counts)), cap)) if sum(counts) > cap else None
    inter: list[tuple[Mutant, tuple[Mutant, ...]]] = []
    offset = 0
    for combo, n in zip(combos, counts, strict=True):
        local = None if chosen is None else {i - offset for i in chosen if offset <= i < offset + n}
        if local is None or local:
            inter.extend(iter_intersectional_mutants(text, dictionary, combo, indices=local, skip=skip))
        offset += n
    if len(atomic) > cap:
        keep = {atomic[i].key for i in rng.sample(range(len(atomic)), cap)}
        keep |= {p.key for _, parents in inter for p in parents}
        atomic = [m for m in atomic if m.key in keep]
    return atomic, iter(inter)


def generate(
    record: Record, dictionary: BiasDictionary, block: HInterBlock, seed: int
) -> tuple[list[Mutant], list[tuple[Mutant, tuple[Mutant, ...]]]]:
    """Atomic mutants and (intersectional mutant, parents) pairs of one original, as lists."""
    atomic, inter = generate_lazy(record, dictionary, block, seed)
    return atomic, list(inter)


def count_generated(record: Record, dictionary: BiasDictionary, block: HInterBlock) -> int:
    """Mutants of one original before sampling (no text is built): for sizing campaigns."""
    skip = person_skip(record.text, dictionary, block)
    atomic = sum(len(atomic_mutants(record.text, dictionary, a, skip=skip)) for a in block.attributes)
    combos = attribute_combinations(block)
    return atomic + sum(count_intersectional(record.text, dictionary, c, skip) for c in combos)


def person_skip(text: str, dictionary: BiasDictionary, block: HInterBlock) -> frozenset[tuple[int, int]]:
    """Occurrences of person-only adjectives (the dictionary's ``adjectives:`` blocks) that describe
    no person in the parse, unless ``person_adjectives: false`` (issue 20)."""
    if not block.person_adjectives or not any(dictionary.person_only(a) for a in block.attributes):
        return frozenset()
    from fairprobe.text.person import non_person_spans, person_parser

    return non_person_spans(text, dictionary, block.attributes, person_parser(block.spacy_model))


@dataclass
class OriginalCases:
    """One original c and (a piece of) its mutants with their invariant verdicts."""

    record: Record
    atomic: list[Mutant]
    atomic_valid: list[bool]
    """Shared by every piece of the same original; filled when the first piece is validated."""
    inter: list[tuple[Mutant, tuple[Mutant, ...]]]
    inter_valid: list[bool]
    emit_atomic: bool
    """The first piece of this original: its atomic mutants are reported with it."""
    population: dict[str, int] | None = None
    """Mutants per kind before ``max_mutants_per_text`` sampling (None: no sampling was asked)."""

    def valid_of(self) -> dict[str, bool]:
        """Verdict by mutant key (atomic parents and this piece's intersectional mutants)."""
        valid = dict(zip((m.key for m in self.atomic), self.atomic_valid, strict=True))
        valid.update(zip((m.key for m, _ in self.inter), self.inter_valid, strict=True))
        return valid

    def mutants(self) -> list[Mutant]:
        """The mutants this piece reports: atomic ones (first piece only), then intersectional ones."""
        return [*(self.atomic if self.emit_atomic else ()), *(m for m, _ in self.inter)]


@functools.cache
def invariant_checker(spacy_model: str | None, processes: int) -> Any:
    """The dependency-invariant checker, loaded once per process (executors reuse workers)."""
    from fairprobe.text.invariant import InvariantChecker

    return InvariantChecker(spacy_model, processes=processes)


def _validate(pieces: list[OriginalCases], checker: Any) -> list[OriginalCases]:
    pairs: list[tuple[str, str]] = []
    for p in pieces:
        if p.emit_atomic:
            pairs.extend((p.record.text, m.text) for m in p.atomic)
        pairs.extend((p.record.text, m.text) for m, _ in p.inter)
    verdicts = checker.check(pairs) if (checker is not None and pairs) else [True] * len(pairs)
    cursor = 0
    for p in pieces:
        if p.emit_atomic:
            p.atomic_valid.extend(verdicts[cursor : cursor + len(p.atomic)])
            cursor += len(p.atomic)
        p.inter_valid = verdicts[cursor : cursor + len(p.inter)]
        cursor += len(p.inter)
    return pieces


def shard_cases(
    records: list[Record], dictionary: BiasDictionary, block: HInterBlock, seed: int, processes: int
) -> Iterator[list[OriginalCases]]:
    """Generate and validate the mutants of ``records``, yielding chunks of validated pieces."""
    checker = invariant_checker(block.spacy_model, processes) if block.invariant else None
    cap = block.chunk_mutants
    pending: list[OriginalCases] = []
    size = 0
    for record in records:
        population: dict[str, int] = {}
        atomic, inter = generate_lazy(record, dictionary, block, seed, population)
        verdicts: list[bool] = []
        first = True
        while True:  # pieces of at most `cap` intersectional mutants; the first one always exists
            part = list(islice(inter, cap))
            if not part and not first:
                break
            piece = OriginalCases(record, atomic, verdicts, part, [], first, population or None)
            pending.append(piece)
            size += len(part) + (len(atomic) if first else 0)
            first = False
            if size >= cap:
                yield _validate(pending, checker)
                pending, size = [], 0
            if len(part) < cap:
                break
    if pending:
        yield _validate(pending, checker)
