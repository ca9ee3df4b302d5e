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
from itertools import combinations
from typing import Any

from fairprobe.datasets import Record
from fairprobe.lexicons.dictionary import BiasDictionary
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.text.mutate import Mutant, atomic_mutants, intersectional_mutants


def attribute_combinations(block: HInterBlock) -> list[tuple[str, ...]]:
    """Attribute tuples of size 2..order, in the order the user gave the attributes."""
    return [c for k in range(2, block.order + 1) for c in combinations(block.attributes, k)]


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
        atomic, inter = generate(record, dictionary, block, seed)
        verdicts: list[bool] = []
        starts = range(0, len(inter), cap) if inter else [0]
        for n, start in enumerate(starts):
            piece = OriginalCases(record, atomic, verdicts, inter[start : start + cap], [], n == 0)
            pending.append(piece)
            size += len(piece.inter) + (len(atomic) if n == 0 else 0)
            if size >= cap:
                yield _validate(pending, checker)
                pending, size = [], 0
    if pending:
        yield _validate(pending, checker)
