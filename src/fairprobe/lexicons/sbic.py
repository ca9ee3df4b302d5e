"""Mine candidate bias pairs from a Social Bias Frames (SBIC) CSV (HInter §3 Step 1, §4).

HInter's dictionary was "automatically extracted" from SBIC (Sap et al., 2020) and then
curated by hand. SBIC annotates each post with the targeted group (``targetMinority``, e.g.
"black folks") and its category (``targetCategory``: race, gender, body, culture, social,
victim, disabled). This module groups the group terms by category, normalises and counts
them, and writes every term with replacement candidates from the same category as a CSV that a
person curates (delete bad rows) and then loads with
:func:`fairprobe.lexicons.dictionary.load_dictionary`.

Both SBIC layouts are read: the aggregated files (``SBIC.v2.agg.*.csv``), where each cell is a
list literal such as ``["black folks", "africans"]``, and the per-annotation files
(``SBIC.v2.trn.csv``), where a cell is a comma-separated string. When a row names several
categories, each of its terms is counted under each category (as the HInter artifact did; the
curator removes the mismatches). Terms that are not valid dictionary terms (e.g. with "/" or
"&") are skipped, so the written file loads as it is.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from fairprobe.data.readers import require_file
from fairprobe.errors import DataError
from fairprobe.lexicons.dictionary import is_valid_term

__all__ = ["Candidate", "extract_candidates", "write_candidates", "normalise_group"]

_REQUIRED = ("targetMinority", "targetCategory")
_STRIP = re.compile(r"[\"“”\[\].]")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A candidate directed pair: ``word`` (seen ``count`` times in ``attribute``) -> ``replacement``."""

    attribute: str
    word: str
    replacement: str
    count: int


def normalise_group(term: str) -> str:
    """Lower case, quotes/brackets/periods removed, whitespace collapsed ("Black  Folks." -> "black folks")."""
    return " ".join(_STRIP.sub("", term).lower().split())


def _cell(raw: str) -> list[str]:
    raw = (raw or "").strip()
    if not raw or raw == "[]":
        return []
    if raw.startswith("["):
        try:
            items = json.loads(raw)
        except ValueError:
            try:
                items = ast.literal_eval(raw)
            except (ValueError, SyntaxError):
                items = raw[1:-1].split(",")
        if isinstance(items, str):
            items = [items]
        parts = [str(x) for x in items]
    else:
        parts = raw.split(",")
    return [p for p in (normalise_group(x) for x in parts) if p]


def _valid(terms: list[str]) -> list[str]:
    return [t for t in terms if is_valid_term(t)]


def extract_candidates(
    csv_path: str | Path,
    *,
    attributes: tuple[str, ...] | None = None,
    min_count: int = 1,
    max_replacements: int | None = 10,
) -> list[Candidate]:
    """Candidate pairs mined from an SBIC CSV with columns ``targetMinority`` and ``targetCategory``.

    Terms are counted per category; every term seen at least ``min_count`` times is paired with
    the ``max_replacements`` most frequent other terms of its category (None: all). Only the
    categories in ``attributes`` are kept when given. Ordered by attribute, then count (most
    frequent first), then word; replacements most frequent first.
    """
    path = require_file(Path(csv_path), "SBIC file", "download SBIC.v2 and pass one of its CSV files.")
    counts: dict[str, Counter[str]] = {}
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in _REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(
                f"{path}, line 1: missing column(s) {', '.join(missing)}; this is not a Social Bias Frames CSV."
            )
        for row in reader:
            terms = _valid(_cell(row["targetMinority"]))
            for category in _cell(row["targetCategory"]):
                if attributes is None or category in attributes:
                    counts.setdefault(category, Counter()).update(terms)
    out: list[Candidate] = []
    for attribute in sorted(counts):
        ranked = sorted(counts[attribute].items(), key=lambda kv: (-kv[1], kv[0]))
        for word, count in ranked:
            if count < min_count:
                continue
            others = [w for w, c in ranked if w != word and c >= min_count]
            if max_replacements is not None:
                others = others[:max_replacements]
            out.extend(Candidate(attribute, word, other, count) for other in others)
    return out


def write_candidates(cands: list[Candidate], out_path: str | Path) -> Path:
    """Write candidates as ``attribute,word,replacement,count`` for a person to curate.

    The file loads with :func:`~fairprobe.lexicons.dictionary.load_dictionary` as it is (the
    ``count`` column is ignored there).
    """
    path = Path(out_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["attribute", "word", "replacement", "count"])
        for c in cands:
            writer.writerow([c.attribute, c.word, c.replacement, c.count])
    return path
