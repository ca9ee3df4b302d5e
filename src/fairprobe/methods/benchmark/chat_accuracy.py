"""The chat answer parser as a measured instrument: its per-class precision and recall, accuracy and
INVALID rate on a hand-labelled corpus of real chat answers to the benchmark's own prompts.

A corpus is JSON Lines, one answer per line (``tests/data/benchmark/chat_answers.jsonl``, made by
``bench/benchmark_chat_corpus.py``)::

    {"id": "bbq-Age-1234", "benchmark": "bbq", "text": "C. Can't be determined", "options": [...],
     "unknown": 2, "expected": 2}

``expected`` is what a careful reader takes the answer to pick: the option index (BBQ), ``"yes"`` /
``"no"`` (DiscrimEval), or ``null`` when it commits to no option or to two (INVALID). The classes are
the options and INVALID; a *misread* is a reading that differs from the label and is not INVALID
(a wrong verdict, the error that matters most), a *miss* an answerable one read as INVALID (a lost
item).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairprobe.errors import DataError
from fairprobe.methods.benchmark.chat import parse_choice, parse_yes_no

INVALID = "INVALID"


def load(path: Path) -> list[dict[str, Any]]:
    entries = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{n}: not JSON ({exc.msg})") from None
            if not {"benchmark", "text", "expected"} <= entry.keys():
                raise DataError(f"{path}:{n}: an entry needs 'benchmark', 'text' and 'expected'")
            entries.append(entry)
    return entries


def reading(entry: dict[str, Any]) -> str:
    """What the parser reads in one corpus answer, as a class name."""
    if entry["benchmark"] == "discrim-eval":
        yes = parse_yes_no(entry["text"])
        return INVALID if yes is None else ("yes" if yes else "no")
    pred = parse_choice(entry["text"], entry["options"], entry.get("unknown"))
    return INVALID if pred is None else str(pred)


def label(entry: dict[str, Any]) -> str:
    return INVALID if entry["expected"] is None else str(entry["expected"])


@dataclass
class Score:
    """Confusion counts of one benchmark's answers (``(label, reading) -> count``) and the measures."""

    benchmark: str
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def n(self) -> int:
        return sum(self.confusion.values())

    @property
    def classes(self) -> list[str]:
        found = {c for pair in self.confusion for c in pair}
        return sorted(found - {INVALID}) + [INVALID]

    def precision(self, c: str) -> float | None:
        said = sum(k for (_, r), k in self.confusion.items() if r == c)
        return self.confusion[(c, c)] / said if said else None

    def recall(self, c: str) -> float | None:
        true = sum(k for (lab, _), k in self.confusion.items() if lab == c)
        return self.confusion[(c, c)] / true if true else None

    def support(self, c: str) -> int:
        return sum(k for (lab, _), k in self.confusion.items() if lab == c)

    @property
    def accuracy(self) -> float | None:
        return sum(k for (lab, r), k in self.confusion.items() if lab == r) / self.n if self.n else None

    @property
    def misreads(self) -> int:
        return sum(k for (lab, r), k in self.confusion.items() if r != lab and r != INVALID)

    @property
    def missed(self) -> int:
        return sum(k for (lab, r), k in self.confusion.items() if lab != INVALID and r == INVALID)

    @property
    def invalid_rate(self) -> float | None:
        """Share of answers the parser reads as INVALID (what a run counts apart)."""
        return sum(k for (_, r), k in self.confusion.items() if r == INVALID) / self.n if self.n else None

    @property
    def labelled_invalid_rate(self) -> float | None:
        """Share of answers a careful reader cannot read either."""
        return self.support(INVALID) / self.n if self.n else None


def score(entries: list[dict[str, Any]], benchmark: str) -> Score:
    out = Score(benchmark)
    for entry in entries:
        if entry["benchmark"] != benchmark:
            continue
        lab, got = label(entry), reading(entry)
        out.confusion[(lab, got)] += 1
        if lab != got:
            out.errors.append({"id": entry.get("id"), "text": entry["text"], "label": lab, "reading": got})
    return out
