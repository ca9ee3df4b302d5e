"""Dictionary terms: what a term may hold, its matching key, and the checks both dictionary formats
(YAML in :mod:`fairprobe.lexicons.dictionary_yaml`, CSV in :mod:`fairprobe.lexicons.dictionary`)
apply to each one."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

from fairprobe.errors import DataError

__all__ = ["is_valid_term", "normalise_term", "check_term", "skip_self_pair"]

_TERM_RE = re.compile(r"^\w(?:[\w'\- ]*\w)?$")


def is_valid_term(term: str) -> bool:
    """Letters, digits, spaces, hyphens and apostrophes; starts and ends with a letter or digit."""
    return bool(_TERM_RE.match(" ".join(term.split())))


def normalise_term(term: str) -> str:
    """The matching key of a term: lower case, inner whitespace collapsed to one space."""
    return " ".join(term.lower().split())


def skip_self_pair(skipped: list[str], where: str, word: str) -> None:
    note = f"{where}: {word!r} is paired with itself"
    skipped.append(note)
    warnings.warn(f"{note}; skipped that pair", stacklevel=3)


def check_term(raw: str, path: Path, line: int) -> str:
    term = " ".join(str(raw).split())
    if not term:
        raise DataError(f"{path}, line {line}: empty term; give a word or delete the entry.")
    if not _TERM_RE.match(term):
        raise DataError(
            f"{path}, line {line}: bad term {term!r}; use letters, digits, spaces, hyphens and "
            "apostrophes, starting and ending with a letter or digit."
        )
    return term
