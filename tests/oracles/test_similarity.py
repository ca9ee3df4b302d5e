"""Semantic similarity oracles: LSA, LDA and embedding cosine (real scikit-learn, real MiniLM)."""

import numpy as np
import pytest

from fairprobe.errors import UsageError
from fairprobe.oracles.similarity import LDASimilarity, LSASimilarity, make_scorer, similarity

DOCS = [
    "Saving money needs a budget, a plan and regular deposits into a savings account.",
    "Football players train every day to improve speed, strength and teamwork on the pitch.",
    "A budget and a savings plan help anyone put money aside every month.",
    "The recipe needs flour, eggs, butter and sugar baked for thirty minutes.",
]


def test_lsa_identical_texts_score_one_and_unrelated_texts_score_lower():
    a = [DOCS[0], DOCS[0], DOCS[0]]
    b = [DOCS[0], DOCS[2], DOCS[1]]
    s = similarity("lsa", a, b, corpus=DOCS)
    assert s[0] == pytest.approx(1.0)
    assert s[1] > s[2]
    assert np.all((s >= -1) & (s <= 1))


def test_lsa_reduces_components_on_a_small_corpus_and_says_so():
    scorer = LSASimilarity(components=100).fit(DOCS)
    assert scorer.components_used == 3 and "3 SVD components instead of 100" in scorer.note


def test_lsa_scores_depend_on_the_batch_unless_a_reference_corpus_is_fixed():
    a, b = [DOCS[0]], [DOCS[2]]
    batch = LSASimilarity().fit_score(a, b)
    wider = LSASimilarity().fit_score(a, b, extra=DOCS[1:] + ["money money money budget"])
    assert batch[0] != pytest.approx(wider[0], abs=1e-6)
    ref = LSASimilarity().fit(DOCS)
    assert ref.score(a, b)[0] == pytest.approx(LSASimilarity().fit(DOCS).score(a, b)[0])  # random_state 42


def test_empty_texts_follow_the_module_rule():
    scorer = LSASimilarity().fit(DOCS)
    assert list(scorer.score(["", ""], ["", DOCS[0]])) == [1.0, 0.0]
    assert list(LSASimilarity().fit(["", "the of"]).score(["", "a"], ["", "b"])) == [1.0, 1.0]


def test_lda_topic_similarity_is_a_cosine_of_distributions():
    scorer = LDASimilarity(topics=5).fit(DOCS * 3)
    s = scorer.score([DOCS[0], DOCS[0]], [DOCS[0], DOCS[3]])
    assert s[0] == pytest.approx(1.0) and 0 <= s[1] <= 1 and s[1] < s[0]


def test_embedding_cosine_with_real_minilm_ranks_a_paraphrase_above_an_unrelated_text():
    scorer = make_scorer("embedding")
    s = scorer.score([DOCS[0], DOCS[0], "  "], [DOCS[2], DOCS[3], DOCS[0]])
    assert s[0] > 0.5 > s[1]
    assert s[2] == 0.0
    assert scorer.embedder_name == "all-MiniLM-L6-v2"


def test_bad_calls_are_usage_errors():
    with pytest.raises(UsageError, match="unknown similarity metric"):
        make_scorer("bleu")
    with pytest.raises(UsageError, match="as many"):
        similarity("lsa", ["a"], [])
    with pytest.raises(UsageError, match="call fit"):
        LSASimilarity().score(["a"], ["b"])
