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
import importlib.abc
import random
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations, islice
from typing import Any

from fairprobe.data.datasets import Record
from fairprobe.lexicons.dictionary import BiasDictionary
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.text.mutate import Mutant, atomic_mutants, count_intersectional, iter_intersectional_mutants


def attribute_combinations(block: HInterBlock) -> list[tuple[str, ...]]:
    """Attribute tuples of size 2..order, in the order the user gave the attributes."""
    return [c for k in range(2, block.order + 1) for c in combinations(block.attributes, k)]


def generate_lazy(
    record: Record,
    dictionary: BiasDictionary,
    block: HInterBlock,
    seed: int,
    population: dict | None = None,
    skipped: dict[str, int] | None = None,
) -> tuple[list[Mutant], Iterator[tuple[Mutant, tuple[Mutant, ...]]]]:
    """Atomic mutants (a list) and (intersectional mutant, parents) pairs (an iterator) of one original.

    Without ``max_mutants_per_text`` the intersectional mutants are built one at a time, so an
    original with 300,000 order-3 mutants never holds them all. With it, a seeded sample of at most
    that many per kind is drawn (the parents of kept intersectional mutants are always kept), and
    ``population`` (when given) receives the number of mutants of each kind *before* sampling, so
    the report's "generated" counts never shrink under sampling (issue 20). ``skipped`` (when given)
    receives, per attribute, the occurrences the person check left out (issue 39).
    """
    text = record.text
    by_attribute = person_skip_by_attribute(text, dictionary, block)
    skip = frozenset().union(*by_attribute.values())
    if skipped is not None:
        skipped.update({a: len(spans) for a, spans in by_attribute.items()})
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


def needs_person_check(dictionary: BiasDictionary, block: HInterBlock) -> bool:
    """Whether the run parses originals for the person check (an attribute has person-only
    adjectives or group words and ``person_adjectives`` is on): it then loads the parser with the
    recogniser."""
    return block.person_adjectives and any(
        dictionary.person_only(a) or dictionary.people_scoped(a) for a in block.attributes
    )


def person_skip_by_attribute(
    text: str, dictionary: BiasDictionary, block: HInterBlock
) -> dict[str, frozenset[tuple[int, int]]]:
    """Per attribute, occurrences of person-only adjectives (``adjectives:`` blocks, issue 20) that
    describe no person and of group words (``scope: people``, issue 39) that name or describe no
    one in the parse; nothing with ``person_adjectives: false``."""
    if not needs_person_check(dictionary, block):
        return {}
    from fairprobe.text.person import non_person_by_attribute, person_parser

    with _person_lock:  # a warm-up thread may be loading it: wait for it, never load it twice
        nlp = person_parser(block.spacy_model)
    return non_person_by_attribute(text, dictionary, block.attributes, nlp)


def person_skip(text: str, dictionary: BiasDictionary, block: HInterBlock) -> frozenset[tuple[int, int]]:
    """Every occurrence :func:`person_skip_by_attribute` leaves out, whatever its attribute."""
    return frozenset().union(*person_skip_by_attribute(text, dictionary, block).values())


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
    skipped: dict[str, int] | None = None
    """Per attribute, occurrences the person check left out (first piece only; issue 39)."""

    def valid_of(self) -> dict[str, bool]:
        """Verdict by mutant key (atomic parents and this piece's intersectional mutants)."""
        valid = dict(zip((m.key for m in self.atomic), self.atomic_valid, strict=True))
        valid.update(zip((m.key for m, _ in self.inter), self.inter_valid, strict=True))
        return valid

    def mutants(self) -> list[Mutant]:
        """The mutants this piece reports: atomic ones (first piece only), then intersectional ones."""
        return [*(self.atomic if self.emit_atomic else ()), *(m for m, _ in self.inter)]


_person_lock = threading.Lock()
_checker_lock = threading.Lock()


def invariant_checker(spacy_model: str | None, processes: int, with_ner: bool = False) -> Any:
    """The dependency-invariant checker, loaded once per process (executors reuse workers); a call
    while another thread loads it waits for that load. ``with_ner``: it parses with the person
    check's pipeline (one spaCy load for both; same tags and dependencies), see :func:`checker_for`."""
    with _checker_lock:
        return _load_checker(spacy_model, processes, with_ner)


def checker_for(dictionary: BiasDictionary, block: HInterBlock, processes: int) -> Any:
    """The invariant checker of a run: sharing the person check's pipeline when the run has one."""
    return invariant_checker(block.spacy_model, processes, needs_person_check(dictionary, block))


@functools.cache
def _load_checker(spacy_model: str | None, processes: int, with_ner: bool) -> Any:
    from fairprobe.text.invariant import InvariantChecker

    return InvariantChecker(spacy_model, processes=processes, with_ner=with_ner)


class _NoTorchHere(importlib.abc.MetaPathFinder):
    """Refuses ``import torch`` on one thread only (other threads import it as usual)."""

    def __init__(self, thread: threading.Thread):
        self.thread = thread

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if threading.current_thread() is self.thread and name.partition(".")[0] == "torch":
            raise ImportError(f"{name} is not needed by the spaCy tagger and parser")
        return None


def _import_spacy_without_torch() -> None:
    """``import spacy`` without its optional ``import torch`` (through thinc): when torch is
    installed it is two thirds of spaCy's import time (~2 of 3 s), and the CPU pipelines HInter
    loads (``en_core_web_sm`` and the like, not ``*_trf``) never use it. Refused on this thread
    only, and only when neither is imported yet; a later ``import torch`` anywhere works as usual
    (thinc's own torch bridge stays off in this process, which only transformer pipelines use)."""
    if "spacy" in sys.modules or "torch" in sys.modules:
        return
    finder = _NoTorchHere(threading.current_thread())
    sys.meta_path.insert(0, finder)
    try:
        import spacy  # noqa: F401
    except ImportError:
        pass  # not installed: the parser load says so in one line
    finally:
        sys.meta_path.remove(finder)


class ParserWarmup:
    """Load the spaCy pipelines a HInter run will need — the person check's (when an attribute has
    person-only adjectives) and the invariant's — on a background thread, so loading them (seconds)
    overlaps the driver loading the data and the model and generating the first chunk, instead of
    preceding it. The driver's own calls wait for a load in progress (:data:`_person_lock`,
    :data:`_checker_lock`); :meth:`result` re-raises a failed load (a missing spaCy model: exit 2)."""

    def __init__(self, dictionary: BiasDictionary, block: HInterBlock, processes: int):
        self._error: BaseException | None = None
        person = needs_person_check(dictionary, block)

        def load() -> None:
            if not (person or block.invariant):
                return  # no parse needed: spaCy is never imported
            try:
                if "trf" not in (block.spacy_model or ""):  # a transformer pipeline needs torch
                    _import_spacy_without_torch()
                if person:
                    from fairprobe.text.person import person_parser

                    with _person_lock:
                        person_parser(block.spacy_model)
                if block.invariant:  # with the person check: the pipeline just loaded, shared
                    invariant_checker(block.spacy_model, processes, person)
            except BaseException as exc:  # noqa: BLE001 - raised in the driver by result()
                self._error = exc

        self._thread = threading.Thread(target=load, name="fairprobe-parser-warmup", daemon=True)
        self._thread.start()

    @property
    def loading(self) -> bool:
        """Whether a load is still in progress (the first chunk will wait for it)."""
        return self._thread.is_alive()

    def result(self) -> None:
        """Wait for the loads; raise the error of a failed one."""
        self._thread.join()
        if self._error is not None:
            raise self._error


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


FIRST_CHUNK = 64
"""Mutants in a shard's first chunk; each next chunk doubles, up to ``block.chunk_mutants``."""


def shard_cases(
    records: list[Record],
    dictionary: BiasDictionary,
    block: HInterBlock,
    seed: int,
    processes: int,
    *,
    ramp: bool = True,
) -> Iterator[list[OriginalCases]]:
    """Generate and validate the mutants of ``records``, yielding chunks of validated pieces.

    With ``ramp`` the first chunk holds :data:`FIRST_CHUNK` mutants and each next one twice as many,
    up to ``block.chunk_mutants``: the model gets its first texts after a few dozen mutants were
    generated and validated, not 2,000, and the later, larger chunks are prepared while it answers.
    Chunk sizes never change the findings or their order (see the module docstring)."""
    checker = None
    cap = min(FIRST_CHUNK, block.chunk_mutants) if ramp else block.chunk_mutants
    pending: list[OriginalCases] = []
    size = 0

    def validated() -> list[OriginalCases]:
        nonlocal checker, cap
        if checker is None and block.invariant:  # loaded at the first validation (a warm-up may hold it)
            checker = checker_for(dictionary, block, processes)
        cap = min(2 * cap, block.chunk_mutants)
        return _validate(pending, checker)

    for record in records:
        population: dict[str, int] = {}
        skipped: dict[str, int] = {}
        atomic, inter = generate_lazy(record, dictionary, block, seed, population, skipped)
        verdicts: list[bool] = []
        first = True
        while True:  # pieces that fill the chunk up to `cap` intersectional mutants; the first always exists
            room = max(1, cap - size)
            part = list(islice(inter, room))
            if not part and not first:
                break
            piece = OriginalCases(
                record, atomic, verdicts, part, [], first, population or None, skipped if first else None
            )
            pending.append(piece)
            size += len(part) + (len(atomic) if first else 0)
            first = False
            if size >= cap:
                yield validated()
                pending, size = [], 0
            if len(part) < room:
                break
    if pending:
        yield validated()
