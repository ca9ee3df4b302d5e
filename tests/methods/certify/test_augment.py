"""Synonym augmentation of the training data: App. C.3 (variants of positive sentences only, each
non-numeric word replaced by a WordNet synonym with probability p, seeded) and App. B.5 (variants of
the minority class until the classes are balanced). A variant keeps the original's punctuation,
numbers and sensitive words, as the paper's Table 6 example does."""

from __future__ import annotations

import pytest

from fairprobe.methods.certify import lexicon
from fairprobe.methods.certify.data import Example

pytestmark = pytest.mark.skipif(
    not lexicon.wordnet_available(), reason="WordNet (wordnet-base) not installed"
)

ROWS = [
    Example("a", "The clerk works 40 hours in a large office, sex is female.", 1),
    Example("b", "the teacher works 20 hours", 0),
]


def test_only_positive_sentences_get_factor_variants():
    from fairprobe.methods.certify.augment import synonym_augment

    out = synonym_augment(ROWS, 3, 0.8, seed=0)
    assert [e.id for e in out] == ["a-aug1", "a-aug2", "a-aug3"] and all(e.label == 1 for e in out)
    assert synonym_augment(ROWS, 3, 0.8, seed=0) == out  # seeded
    assert synonym_augment(ROWS, 0, 0.8, seed=0) == []


def test_replaced_words_are_wordnet_synonyms_and_the_rest_of_the_text_stays():
    from fairprobe.methods.certify.augment import WORD, synonym_augment, synonyms

    original = WORD.findall(ROWS[0].text)
    allowed = {w for old in original for syn in synonyms(old.lower()) for w in syn.split()}
    changed = 0
    for variant in synonym_augment(ROWS, 5, 1.0, seed=1, keep=frozenset({"female"})):
        assert variant.text.endswith(", sex is female.") or variant.text.endswith(" female.")
        assert " 40 " in variant.text and "," in variant.text  # numbers and punctuation stay
        new_words = [w for w in WORD.findall(variant.text) if w not in original]
        assert all(w in allowed for w in new_words), new_words
        changed += bool(new_words)
    assert changed == 5  # p = 1: every variant differs


def test_probability_zero_copies_the_sentence():
    from fairprobe.methods.certify.augment import synonym_augment

    (only,) = synonym_augment(ROWS, 1, 0.0, seed=0)
    assert only.text == ROWS[0].text


def test_balance_adds_minority_variants_until_the_classes_are_equal():
    from fairprobe.methods.certify.augment import balance_augment

    rows = [Example(f"n{i}", f"the teacher works {i} hours", 0) for i in range(7)] + [
        Example("p0", "the clerk works in a large office", 1),
        Example("p1", "a happy person works long hours", 1),
    ]
    extra = balance_augment(rows, 0.3, seed=0)
    assert len(extra) == 5 and all(e.label == 1 for e in extra)
    assert {e.id.split("-aug")[0] for e in extra} == {"p0", "p1"}  # cycles through the minority
    assert balance_augment(rows, 0.3, seed=0) == extra
    assert balance_augment(rows[:2] + rows[7:], 0.3, seed=0) == []  # already balanced
