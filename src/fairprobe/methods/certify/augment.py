"""Offline WordNet synonym augmentation of the training data (paper App. B.5 and App. C.3).

Two uses in the paper:

- **App. B.5 (the salary models of Table 1)** — "a simple WordNet-based synonym replacement ...
  performed while maintaining balanced class distributions across the dataset ... The replacement
  probability was set to be 30%" (:func:`balance_augment`). Read here as: variants of the minority
  class's sentences (cycling through them in a seeded order) are added until both classes are
  equally frequent; each word is replaced with probability p = 0.3.
- **App. C.3 ("Adversarial Attack", toxicity)** — "additional training samples are generated only for
  the positive class, while all original samples are retained ... augmentation factor 3 ... For every
  non-numeric token ... synonym replacement is applied independently with probability p = 0.8"
  (:func:`synonym_augment`).

A variant is the original text with each replaced word swapped in place: punctuation, case of the
untouched words and numbers stay, as in the paper's Table 6 example ("sex be male, educational
activity is Bachelors ..., human relationship is Husband ..., aborigine country is United-States").
So a synonym may have several words (WordNet's ``educational_activity`` reads "educational
activity"), as in that example. Choices where the paper is silent: a word's synonyms are the lemmas
of all its WordNet synsets other than itself (letters, ``-``, ``'`` and ``_`` only), one drawn
uniformly (seeded); a word with no synonym stays; the sensitive words (gender words / toxic terms,
``keep``) are never replaced, so the attribute the certificate is about stays in the sentence; a
variant identical to its original is kept (it still re-weights its class, as duplicating it would).
"""

from __future__ import annotations

import random
import re
from functools import cache

from fairprobe.methods.certify import lexicon
from fairprobe.methods.certify.data import Example

WORD = re.compile(r"[A-Za-z]+(?:[-'][A-Za-z]+)*")
"""A replaceable word: letters (numbers are never replaced, App. C.3's "non-numeric token")."""
_LEMMA = re.compile(r"[a-z][a-z_'-]*")


@cache
def synonyms(word: str) -> tuple[str, ...]:
    """WordNet synonyms of ``word`` (lower case): lemmas of its synsets, ``_`` read as a space, sorted."""
    wn = lexicon.wordnet()
    names = {
        lem.name().lower().replace("_", " ")
        for synset in wn.synsets(word)
        for lem in synset.lemmas()
        if _LEMMA.fullmatch(lem.name().lower())
    }
    names.discard(word)
    return tuple(sorted(names))


def replace_words(text: str, prob: float, rng: random.Random, keep: frozenset[str] = frozenset()) -> str:
    """``text`` with each non-numeric word (not in ``keep``) replaced by a WordNet synonym with
    probability ``prob``; everything else of the text stays."""

    def swap(m: re.Match[str]) -> str:
        word = m.group(0)
        low = word.lower()
        choices = () if low in keep else synonyms(low)
        if choices and rng.random() < prob:
            return rng.choice(choices)
        return word

    return WORD.sub(swap, text)


def synonym_augment(
    rows: list[Example], factor: int, prob: float, seed: int, keep: frozenset[str] = frozenset()
) -> list[Example]:
    """App. C.3: ``factor`` variants of every positive (label 1) example. Returns only the new ones."""
    if factor <= 0:
        return []
    rng = random.Random(seed)
    out = []
    for row in rows:
        if row.label != 1:
            continue
        for k in range(factor):
            out.append(Example(f"{row.id}-aug{k + 1}", replace_words(row.text, prob, rng, keep), 1))
    return out


def balance_augment(
    rows: list[Example], prob: float, seed: int, keep: frozenset[str] = frozenset()
) -> list[Example]:
    """App. B.5: variants of the minority class until both classes are as frequent. Returns only the
    new examples (none when the classes are already balanced or one is empty)."""
    counts = {lab: [e for e in rows if e.label == lab] for lab in (0, 1)}
    small, large = sorted(counts, key=lambda lab: len(counts[lab]))
    pool, need = counts[small], len(counts[large]) - len(counts[small])
    if not pool or need <= 0:
        return []
    rng = random.Random(seed)
    order = list(pool)
    rng.shuffle(order)
    out = []
    for i in range(need):
        row = order[i % len(order)]
        out.append(
            Example(f"{row.id}-aug{i // len(order) + 1}", replace_words(row.text, prob, rng, keep), small)
        )
    return out
