"""The black box h*: x → s* ∈ [0, 1] (bafa.txt App. A.2.1 "Black-box interface").

Every score goes through the run's cached models (``ctx.classifier`` / ``ctx.chat``), so a re-run
sends no query twice. A classifier's score is ``Prediction.scores[positive_label]``; a chat model
is asked for a 0–100 confidence that the label applies, as in the paper's Bias-in-Bios setup
(A.4.2: integer confidences in [0, 100], normalised to [0, 1]); an answer with no number in range
scores 0.5 and is counted as invalid. ``--scores FILE`` audits cached scores offline.

A score that is not a finite number (``nan``, ``inf``) — from a classifier, or in a scores file —
is an invalid answer too, treated the same way (0.5, counted in ``invalid``/``invalid_rate``, so
a black box of such scores is inconclusive, never a pass); a scores file with no finite score at
all is an input error.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from fairprobe.data.readers import require_file
from fairprobe.errors import DataError, ModelOutputError, UsageError
from fairprobe.models.base import INVALID, ChatRequest

SYSTEM = (
    "You are an impartial evaluation system. Given a text, rate how likely it is that the label "
    "'{label}' applies to it. Return ONLY valid JSON (no markdown): {{\"confidence\": N}} where N is an "
    "integer from 0 to 100."
)
INVALID_SCORE = 0.5
"""The neutral score that stands in for an unusable answer (it is counted as invalid)."""
_NUMBER = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d+)?)(?!\d)")


def parse_confidence(text: str) -> float | None:
    """A 0–100 confidence from a chat answer as a score in [0, 1]; ``None`` when there is none."""
    from fairprobe.text.json_output import extract_json

    try:
        obj = extract_json(text, dict)
        for key in ("confidence", "score", "probability"):
            if key in obj:
                value = float(obj[key])
                return value / 100.0 if 0 <= value <= 100 else None
    except (ModelOutputError, TypeError, ValueError):
        pass
    for match in _NUMBER.finditer(text):
        value = float(match.group(1))
        if 0 <= value <= 100:
            return value / 100.0
    return None


class BlackBox:
    """Scores pool texts through the run context's cached model, counting distinct queries."""

    def __init__(self, ctx: Any, uri: str, positive_label: str, max_tokens: int = 32, seed: int = 0):
        from fairprobe.models.uri import model_kind

        self.kind = model_kind(uri)
        self.uri, self.label, self.max_tokens, self.seed = uri, positive_label, max_tokens, seed
        self.model = ctx.classifier(uri) if self.kind == "classifier" else ctx.chat(uri)
        self.invalid = 0
        self.answers = 0

    def __call__(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0)
        if self.kind == "classifier":
            preds = self.model.predict(texts)
            out = []
            for p in preds:
                self.answers += 1
                value = p.scores.get(self.label)
                if INVALID in p.labels or (value is not None and not 0.0 <= float(value) <= 1.0):
                    self.invalid += 1  # nan / inf, a "probability" outside [0, 1], or an unparsable answer
                    out.append(INVALID_SCORE)
                    continue
                if value is None:
                    raise ModelOutputError(
                        f"{self.uri} gives no score for label {self.label!r} (scores: {', '.join(p.scores) or 'none'}); "
                        "pass the right --positive-label or use a model that returns scores"
                    )
                out.append(float(value))
            return np.clip(np.array(out), 0.0, 1.0)
        system = SYSTEM.format(label=self.label)
        requests = [
            ChatRequest.of(
                [{"role": "system", "content": system}, {"role": "user", "content": t}],
                temperature=0.0,
                max_tokens=self.max_tokens,
                seed=self.seed,
            )
            for t in texts
        ]
        scores = []
        for response in self.model.chat(requests):
            value = parse_confidence(response.text)
            self.answers += 1
            if value is None:
                self.invalid += 1
                value = INVALID_SCORE
            scores.append(value)
        return np.array(scores)


def read_scores(path: str) -> dict[str, float]:
    """``id → score`` from a CSV with columns ``id`` and ``score`` (finite scores above 1 are read as
    0–100). ``nan``/``inf`` scores are kept (they are invalid answers when queried, counted like an
    unreadable chat answer); a file with no finite score is a :class:`DataError`."""
    file = require_file(Path(path).expanduser(), "scores file", "give a CSV with columns id,score")
    with open(file, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if not {"id", "score"} <= set(reader.fieldnames or []):
            raise DataError(f"{path}: needs columns id and score, found {', '.join(reader.fieldnames or [])}")
        scores = {}
        for row in reader:
            where = f"{path}:{reader.line_num}"
            if None in row:  # csv.DictReader's place for fields beyond the header
                raise DataError(f"{where}: more fields than the header; put a cell with a comma in quotes")
            if row["score"] is None:
                raise DataError(f"{where}: id {row['id']!r} has no score cell; give id,score on every row")
            try:
                value = float(row["score"])
            except ValueError:
                raise DataError(
                    f"{where}: score {row['score']!r} of id {row['id']!r} is not a number"
                ) from None
            scores[str(row["id"])] = value
    finite = [v for v in scores.values() if math.isfinite(v)]
    if scores and not finite:
        raise DataError(
            f"{path}: no score is a finite number (all {len(scores)} are nan or inf); "
            "write each score as a probability in [0, 1] or a confidence in [0, 100]"
        )
    low = min(finite, default=0.0)
    if low < 0:
        where = next(k for k, v in scores.items() if v == low)
        raise DataError(
            f"{path}: id {where!r} has a negative score {low}; give probabilities in [0, 1] or 0-100"
        )
    if finite and max(finite) > 1.0:
        if max(finite) > 100.0:
            where = next(k for k, v in scores.items() if v == max(finite))
            raise DataError(
                f"{path}: id {where!r} has score {max(finite)}, above 100; give probabilities in [0, 1] or "
                "confidences in [0, 100]"
            )
        scores = {k: v / 100.0 for k, v in scores.items()}
    return scores


class CachedScores:
    """A ``--scores`` file as the black box: the pool's ids must all be in it."""

    kind = "scores"

    def __init__(self, path: str, ids: list[str]):
        self.table = read_scores(path)
        missing = [i for i in ids if i not in self.table]
        if missing:
            raise UsageError(
                f"{path} has no score for {len(missing)} pool ids (e.g. {missing[0]!r}); "
                "score the whole pool or choose --pool-size within it"
            )
        self.invalid = 0
        self.answers = 0

    def lookup(self, ids: list[str]) -> np.ndarray:
        """The scores of ``ids``; a non-finite one is an invalid answer (counted, scored 0.5)."""
        out = []
        for i in ids:
            value = self.table[i]
            self.answers += 1
            if not math.isfinite(value):
                self.invalid += 1
                value = INVALID_SCORE
            out.append(value)
        return np.array(out, dtype=float)
