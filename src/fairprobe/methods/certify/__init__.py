"""Formal fairness certificates (shared/seeds/certificates.txt).

An embedding table pre-trained with a contrastive loss so that sensitive words (gender terms, or
toxic terms) cluster (§3.1), a small transformer classifier on top of it with the table frozen
(§3.2), and a sound verifier — zonotopes, DeepT-style, with an interval (IBP) baseline — that
finds the largest ℓ∞ radius ε* around a sentence's token embeddings within which the prediction
cannot change (§3.3). A sentence is certified when ε* covers every substitute of its sensitive
words (Eq. 3); the fairness score F is the certified share (Eq. 4).
"""

from fairprobe.methods.certify.technique import TECHNIQUE

__all__ = ["TECHNIQUE"]
