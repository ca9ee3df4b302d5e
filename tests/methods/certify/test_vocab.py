"""BERT uncased WordPiece, the paper's vocabulary (Table 8: 30,522 tokens), read from the packaged
MiniLM tokenizer files; pre-training mean-pools a word's pieces (App. B.3)."""

from __future__ import annotations

import pytest

from fairprobe.methods.certify import lexicon, vocabulary
from fairprobe.methods.certify.data import load_task

TRICKY = [
    "mother-fucker",
    "A person's workclass is Self-emp-not-inc, education is HS-grad (9)",
    "Café naïve résumé — “quotes” and 漢字 too",
    "x" * 120,
    "ladyships madams baronesses",
    "tab\tand\nnewline\x00control",
]


def test_wordpiece_matches_the_reference_bert_tokenizer():
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer.from_file(str(vocabulary.bert_vocab_path().parent / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    texts = TRICKY + [e.text for e in load_task("adult-gender", "test")[:100]]
    texts += [e.text for e in load_task("toxicity", "test")[:150]]
    for text in texts:
        assert vocabulary.wordpiece(text) == tok.encode(text, add_special_tokens=False).tokens, text
    assert vocabulary.wordpiece("mother-fucker") == ["mother", "-", "fuck", "##er"]  # App. B.3's example


def test_bert_vocabulary_keeps_its_size_with_unknown_at_id_1():
    vocab = vocabulary.bert_vocab()
    assert len(vocab) == 30522 and vocab[0] == "[PAD]" and vocab[1] == "[UNK]" and vocab[100] == "[unused0]"
    assert {"female", "male", "husband", "wife"} <= set(vocab)


def test_tokenize_follows_the_loaded_model():
    try:
        lexicon.use_tokenizer("wordpiece")
        assert lexicon.tokenize("Self-emp-inc") == ["self", "-", "em", "##p", "-", "inc"]
        assert lexicon.words("Self-emp-inc") == ["self-emp-inc"]
    finally:
        lexicon.use_tokenizer("words")
    assert lexicon.tokenize("Self-emp-inc") == ["self-emp-inc"]


def test_pretraining_mean_pools_a_words_pieces():
    import torch

    from fairprobe.methods.certify.pretrain import PretrainConfig, train_pairs

    vocab = vocabulary.bert_vocab()
    index = {w: i for i, w in enumerate(vocab)}
    rows = {w: tuple(index[p] for p in vocabulary.pieces_of(w, "wordpiece")) for w in ("female", "ladyships")}
    assert len(rows["ladyships"]) == 3
    table = torch.nn.Embedding(len(vocab), 8)
    torch.manual_seed(0)
    with torch.no_grad():
        table.weight.uniform_(-0.05, 0.05)
    words = {w: (r[0] if len(r) == 1 else r) for w, r in rows.items()}

    def gap() -> float:
        w = table.weight.detach()
        return float((w[list(rows["ladyships"])].mean(0) - w[rows["female"][0]]).norm())

    before = gap()
    cfg = PretrainConfig(batch=1, lr=1e-2)
    train_pairs(table, words, [("ladyships", "female", 0)], 1.0, 1.0, 30, cfg, seed=0)
    assert gap() < before / 3  # the pieces' mean was pulled to "female", not one piece alone
    w = table.weight.detach()
    assert float((w[rows["ladyships"][0]] - w[rows["female"][0]]).norm()) > gap()


def test_wordpiece_pairs_never_drag_a_sensitive_row_through_a_shared_piece():
    """``maledict`` reads ``male ##dict``: a WordNet pair holding it would move ``male`` (App. B.3
    keeps gender terms out of that phase), and a dissimilar partner holding it would push ``male``
    away from the gender cluster."""
    from fairprobe.methods.certify.train import _spare_sensitive_rows

    index = {w: i for i, w in enumerate(vocabulary.bert_vocab())}

    def rows(w: str):  # type: ignore[no-untyped-def]
        ids = tuple(index[p] for p in vocabulary.pieces_of(w, "wordpiece"))
        return ids[0] if len(ids) == 1 else ids

    words = ("male", "female", "ladyships", "maledict", "curse", "chair", "hardship")
    word_rows = {w: rows(w) for w in words}
    assert word_rows["maledict"][0] == index["male"]
    sensitive = frozenset({"male", "female", "ladyships"})
    phase1 = [
        ("male", "female", 0),
        ("ladyships", "female", 0),
        ("female", "maledict", 1),
        ("male", "chair", 1),
    ]
    phase2 = [("maledict", "curse", 0), ("chair", "curse", 1), ("hardship", "chair", 1)]
    keep1, keep2 = _spare_sensitive_rows(phase1, phase2, word_rows, sensitive)
    assert keep1 == [("male", "female", 0), ("ladyships", "female", 0), ("male", "chair", 1)]
    # "hardship" shares ##ship with "ladyships", a multi-piece word: only single-piece rows are spared
    assert keep2 == [("chair", "curse", 1), ("hardship", "chair", 1)]
