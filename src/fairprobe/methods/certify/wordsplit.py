"""Whole-word splitting shared by the lexicon and the tokenisers: lower-case words of ``[a-z0-9]``
joined by ``-`` or ``'``."""

from __future__ import annotations

import re

TOKEN_RE = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


def words(text: str) -> list[str]:
    """Lower-case whole words, whatever the model's tokeniser (pre-training pairs, augmentation)."""
    return TOKEN_RE.findall(text.lower())
