"""Synonym augmentation of the training data (App. B.5): variants of positive sentences only, each
non-numeric token replaced by a WordNet synonym with probability p, seeded."""

from __future__ import annotations

import pytest

from fairprobe.methods.certify import lexicon
from fairprobe.methods.certify.data import Example

pytestmark = pytest.mark.skipif(
    not lexicon.wordnet_available(), reason="WordNet (wordnet-base) not installed"
)

ROWS = [
    Example("a", "the clerk works 40 hours in a large office", 1),
    Example("b", "the teacher works 20 hours", 0),
]


def test_only_positive_sentences_get_factor_variants():
    from fairprobe.methods.certify.augment import synonym_augment

    out = synonym_augment(ROWS, 3, 0.8, seed=0)
    assert [e.id for e in out] == ["a-aug1", "a-aug2", "a-aug3"] and all(e.label == 1 for e in out)
    assert synonym_augment(ROWS, 3, 0.8, seed=0) == out  # seeded
    assert synonym_augment(ROWS, 0, 0.8, seed=0) == []


def test_every_replaceable_token_is_a_wordnet_synonym_and_numbers_stay():
    from fairprobe.methods.certify.augment import synonym_augment, synonyms

    original = lexicon.tokenize(ROWS[0].text)
    for variant in synonym_augment(ROWS, 5, 1.0, seed=1):
        tokens = variant.text.split()
        assert len(tokens) == len(original) and tokens[3] == "40"
        for old, new in zip(original, tokens, strict=True):
            assert new == old if old.isdigit() or not synonyms(old) else new in synonyms(old)
    assert "large" in lexicon.tokenize(ROWS[0].text) and synonyms("large")  # something was replaceable


def test_probability_zero_copies_the_sentence():
    from fairprobe.methods.certify.augment import synonym_augment

    (only,) = synonym_augment(ROWS, 1, 0.0, seed=0)
    assert only.text.split() == lexicon.tokenize(ROWS[0].text)
