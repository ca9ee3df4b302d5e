"""Measured accuracy of the answer parsers against a labelled corpus of model answers.

Every parser that turns a free-text answer into a reading is an instrument, and an instrument is
only trusted with a measured error. A corpus is JSON Lines, one hand-labelled answer per line::

    {"id": "choice-d001", "text": "B\\n\\nExplanation: ...", "context": {"prompt": "... A) x B) y C) z"},
     "expected": "B"}

``expected`` is what a careful human reads in the answer, or ``null`` when no answer can be read
(hedged, both options endorsed, a refusal). The measures, per parser:

- **answerable**: entries with a non-null ``expected``;
- **read**: answerable entries whose reading equals ``expected``;
- **missed**: answerable entries the parser could not read (INVALID) — a lost test, not a wrong one;
- **misreads**: a reading that differs from ``expected``, or any reading of a null-labelled entry —
  a wrong verdict, the error that matters most.

The refusal detector is a yes/no classifier: ``expected`` is ``true`` for a refusal, and its
precision and recall are reported instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairprobe.errors import DataError
from fairprobe.models.base import INVALID
from fairprobe.models.llm_classifier import LabelParser
from fairprobe.oracles import metamorphic as mm


def _read_mr(parser: str) -> Callable[[str, dict[str, Any]], Any]:
    """A reader for one Meta-Fair parser. The context gives the question as Meta-Fair asks it
    (``prompt``); ``options`` (``{"A": "chaotic", ...}`` or ``["chaotic", ...]``), ``items`` and
    ``low``/``high`` may be given instead of, or besides, what the prompt lists."""

    def read(text: str, context: dict[str, Any]) -> Any:
        options = context.get("options")
        if isinstance(options, list):
            options = dict(zip("ABCDEFGH", options, strict=False))
        return mm.read_answer(
            parser,
            context.get("prompt", ""),
            text,
            context.get("items"),
            options=options,
            scale=(context.get("low", 1), context.get("high", 5)),
        )

    return read


def _read_labels(text: str, context: dict[str, Any]) -> Any:
    parser = LabelParser(
        context["labels"],
        {k: tuple(v) for k, v in context.get("aliases", {}).items()},
        bool(context.get("multi_label")),
        context.get("none_answer", ""),
    )
    labels = parser.parse(text).labels
    return None if INVALID in labels else sorted(labels)


READERS: dict[str, Callable[[str, dict[str, Any]], Any]] = {
    "score": _read_mr("score"),  # Meta-Fair MR11
    "yes_no": _read_mr("yes_no"),  # Meta-Fair MR12
    "choice": _read_mr("choice"),  # Meta-Fair MR13
    "ranking": _read_mr("ranking"),  # Meta-Fair MR14
    "labels": _read_labels,  # HInter's LLM label parser (Table 7 prompt sets)
}
"""Parser name → ``read(text, context)``; the corpus file of each is ``<name>.jsonl``."""

TITLES = {
    "score": "MR11 score",
    "yes_no": "MR12 yes/no",
    "choice": "MR13 choice",
    "ranking": "MR14 ranking",
    "labels": "HInter labels",
}


def load_corpus(path: Path) -> list[dict[str, Any]]:
    """The entries of one corpus file; a malformed line is a :class:`DataError` naming it."""
    entries = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{n}: not JSON ({exc.msg}); write one object per line") from None
        if not isinstance(entry, dict) or "text" not in entry or "expected" not in entry:
            raise DataError(f"{path}:{n}: an entry needs 'text' and 'expected'")
        entry.setdefault("context", {})
        entry.setdefault("id", f"{path.stem}:{n}")
        entries.append(entry)
    return entries


def _same(reading: Any, expected: Any) -> bool:
    if isinstance(expected, int | float) and isinstance(reading, int | float):
        return abs(float(reading) - float(expected)) < 1e-9
    return reading == expected


@dataclass
class ParserScore:
    """How one parser reads one corpus (see the module docstring for the measures)."""

    name: str
    size: int = 0
    answerable: int = 0
    read: int = 0
    missed: list[dict[str, Any]] = field(default_factory=list)
    misreads: list[dict[str, Any]] = field(default_factory=list)

    @property
    def read_rate(self) -> float | None:
        return self.read / self.answerable if self.answerable else None


def score_parser(name: str, entries: list[dict[str, Any]]) -> ParserScore:
    """Apply ``READERS[name]`` to every entry and count reads, misses and misreads."""
    reader = READERS[name]
    out = ParserScore(name, size=len(entries))
    for entry in entries:
        reading = reader(entry["text"], entry["context"])
        expected = entry["expected"]
        found = {"id": entry["id"], "text": entry["text"], "expected": expected, "reading": reading}
        if expected is None:
            if reading is not None:
                out.misreads.append(found)
            continue
        out.answerable += 1
        if reading is None:
            out.missed.append(found)
        elif _same(reading, expected):
            out.read += 1
        else:
            out.misreads.append(found)
    return out


@dataclass
class DetectorScore:
    """A yes/no detector (refusals) against labelled entries: confusion counts, precision, recall."""

    name: str
    size: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


def score_refusals(entries: list[dict[str, Any]]) -> DetectorScore:
    """Precision and recall of :func:`fairprobe.oracles.metamorphic.is_refusal` on labelled answers."""
    out = DetectorScore("refusal", size=len(entries))
    for entry in entries:
        said, truth = mm.is_refusal(entry["text"]), bool(entry["expected"])
        out.tp += said and truth
        out.fp += said and not truth
        out.fn += truth and not said
        if said != truth:
            out.errors.append({"id": entry["id"], "text": entry["text"], "expected": truth})
    return out
