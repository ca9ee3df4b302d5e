"""Offline synonym augmentation of the training data (paper App. B.5 / C.3, "Adversarial Attack").

"Additional training samples are generated only for the positive class, while all original samples
are retained. The number of variants per positive instance is controlled by an augmentation factor
... Each augmented sentence is created through token-level synonym substitution based on WordNet.
For every non-numeric token in a sentence, synonym replacement is applied independently with
probability p" — factor 3 and p = 0.8 in the paper's adversarially trained model (Table 11); the
baseline models use none (factor 0), which stays the default here.

Choices where the paper is silent: a token's synonyms are the single-word lemmas (letters only) of
all its WordNet synsets, other than itself, one drawn uniformly (seeded); a token with no synonym
stays; a variant is written as its tokens joined by spaces (the model reads it as the same tokens);
a variant identical to its original is kept (it still re-weights the positive class, as duplicating
it would).
"""

from __future__ import annotations

import random
from functools import cache

from fairprobe.methods.certify import lexicon
from fairprobe.methods.certify.data import Example


@cache
def synonyms(word: str) -> tuple[str, ...]:
    """WordNet synonyms of ``word``: single-word, letters-only lemmas of its synsets, sorted."""
    wn = lexicon.wordnet()
    names = {
        lem.name().lower() for synset in wn.synsets(word) for lem in synset.lemmas() if lem.name().isalpha()
    }
    names.discard(word)
    return tuple(sorted(names))


def synonym_augment(rows: list[Example], factor: int, prob: float, seed: int) -> list[Example]:
    """``factor`` variants of every positive (label 1) example; each non-numeric token is replaced by
    a WordNet synonym with probability ``prob``. Returns only the new examples."""
    if factor <= 0:
        return []
    rng = random.Random(seed)
    out = []
    for row in rows:
        if row.label != 1:
            continue
        tokens = lexicon.tokenize(row.text)
        for k in range(factor):
            variant = []
            for tok in tokens:
                choices = () if any(ch.isdigit() for ch in tok) else synonyms(tok)
                if choices and rng.random() < prob:
                    variant.append(rng.choice(choices))
                else:
                    variant.append(tok)
            out.append(Example(f"{row.id}-aug{k + 1}", " ".join(variant), 1))
    return out
