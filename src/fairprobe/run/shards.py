"""Findings as per-shard Parquet files, written as shards finish and read back column by column.

A technique that can produce millions of findings (HInter) writes each shard of its work to
``<run>/findings/shard-NNNNNN.parquet`` instead of the SQLite findings table. A shard file is
written to a hidden temporary name and renamed when complete, so a file that exists is whole; the
run store records the shard as done only after the rename, so a killed run recomputes at most the
shards in flight. Every file holds:

- ``finding`` — the finding as the exact JSON line ``findings.jsonl`` gets (the canonical output);
- typed copies of the fields the technique names in its schema (``kind``, ``valid``, ...), so
  summaries and ad-hoc queries (DuckDB: ``SELECT kind, avg(biased::int) FROM 'findings/*.parquet'
  GROUP BY kind``) read a few columns instead of parsing JSON.

:class:`FindingsTable` is the read side, over shard files or over an in-memory list (small runs and
tests): whole columns for metrics, filtered rows for examples, JSON lines in order for
``findings.jsonl``. Memory stays bounded by the columns asked for, whatever the run size.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from fairprobe.errors import DataError


def _damaged(path: Path, exc: Exception) -> DataError:
    return DataError(
        f"{path} is damaged ({type(exc).__name__}: {' '.join(str(exc).split())[:200]}): a truncated or "
        "overwritten findings file; restore it, or run the spec again with --overwrite"
    )


def _parquet_file(path: Path) -> pq.ParquetFile:
    """``pq.ParquetFile(path)``, a damaged (truncated) file being one line and exit 2, not a crash."""
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise _damaged(Path(path), exc) from None


def _read_table(path: Path, **options: Any) -> pa.Table:
    """``pq.read_table(path, ...)``, a damaged file being one line and exit 2 (:func:`_parquet_file`)."""
    try:
        return pq.read_table(path, **options)
    except (pa.ArrowException, OSError) as exc:
        raise _damaged(Path(path), exc) from None


FINDING = "finding"
"""Column that holds each finding's JSON line."""

SHARD_PREFIX = "shard-"

SHARDS_DIR = "findings"
"""Folder of a run directory that holds the shard files."""


def shard_name(index: int) -> str:
    return f"{SHARD_PREFIX}{index:06d}.parquet"


def _record_batch(findings: list[dict[str, Any]], schema: pa.Schema) -> pa.RecordBatch:
    columns: dict[str, list[Any]] = {FINDING: [json.dumps(f, ensure_ascii=False) for f in findings]}
    for field in schema:
        if field.name != FINDING:
            columns[field.name] = [f.get(field.name) for f in findings]
    return pa.RecordBatch.from_pydict(columns, schema=schema)


def full_schema(typed: pa.Schema) -> pa.Schema:
    """The file schema: the JSON column first, then the technique's typed columns."""
    return pa.schema([pa.field(FINDING, pa.string(), nullable=False), *typed])


ZSTD_LEVEL = 9
"""zstd level of the findings files: 11% smaller than the library's default (level 1) on HInter's
shards of IMDB reviews, for about 10 s more CPU per million findings written."""

ROW_GROUP = 8192
"""Findings per row group of a shard (batches are buffered up to it): larger groups compress the
repeated texts of one original better (10% on HInter's shards), and a filtered read still decodes
only the groups that match."""


class ShardWriter:
    """Writes one shard file incrementally (a row group per :data:`ROW_GROUP` findings), renamed into
    place on ``close``."""

    def __init__(self, folder: Path, index: int, typed: pa.Schema):
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / shard_name(index)
        self._tmp = folder / f".{self.path.name}.{os.getpid()}.tmp"
        self.schema = full_schema(typed)
        self._writer = pq.ParquetWriter(
            self._tmp, self.schema, compression="zstd", compression_level=ZSTD_LEVEL
        )
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self.rows = 0

    def write(self, findings: list[dict[str, Any]]) -> None:
        if findings:
            self._pending.append(_record_batch(findings, self.schema))
            self._pending_rows += len(findings)
            self.rows += len(findings)
            if self._pending_rows >= ROW_GROUP:
                self._flush()

    def _flush(self) -> None:
        if self._pending:
            table = pa.Table.from_batches(self._pending, schema=self.schema)
            self._writer.write_table(table, row_group_size=max(ROW_GROUP, table.num_rows))
            self._pending, self._pending_rows = [], 0

    def close(self) -> Path:
        self._flush()
        self._writer.close()
        os.replace(self._tmp, self.path)
        return self.path

    def abort(self) -> None:
        """Drop a shard that could not be finished (its temporary file is removed)."""
        try:
            self._writer.close()
        finally:
            self._tmp.unlink(missing_ok=True)


def remove_partial(folder: Path) -> int:
    """Delete temporary files left by a killed writer; returns how many were removed."""
    if not folder.is_dir():
        return 0
    stale = list(folder.glob(f".{SHARD_PREFIX}*.tmp"))
    for path in stale:
        path.unlink(missing_ok=True)
    return len(stale)


def shard_files(folder: Path) -> list[Path]:
    """Complete shard files, in shard order."""
    return sorted(folder.glob(f"{SHARD_PREFIX}*.parquet")) if folder.is_dir() else []


class FindingsTable:
    """Findings read by column: from shard files (one file at a time) or from a list (in memory)."""

    def __init__(self, parts: list[Path] | pa.Table, typed: pa.Schema):
        self._parts = parts
        self.schema = full_schema(typed)
        if isinstance(parts, pa.Table):
            self._count = parts.num_rows
        else:
            self._count = sum(_parquet_file(p).metadata.num_rows for p in parts)

    @classmethod
    def from_files(cls, files: list[Path], typed: pa.Schema) -> FindingsTable:
        return cls(list(files), typed)

    @classmethod
    def from_dicts(cls, findings: Iterable[dict[str, Any]], typed: pa.Schema) -> FindingsTable:
        schema = full_schema(typed)
        batch = _record_batch(list(findings), schema)
        return cls(pa.Table.from_batches([batch], schema=schema), typed)

    def __len__(self) -> int:
        return self._count

    @property
    def files(self) -> list[Path] | None:
        """The shard files read, in order (None for an in-memory table)."""
        return None if isinstance(self._parts, pa.Table) else list(self._parts)

    def _tables(self, names: list[str]) -> Iterator[pa.Table]:
        if isinstance(self._parts, pa.Table):
            yield self._parts.select(names)
            return
        for path in self._parts:
            file = _parquet_file(path)
            have = [n for n in names if n in file.schema_arrow.names]
            for batch in file.iter_batches(batch_size=8192, columns=have):
                yield self._with_missing(pa.Table.from_batches([batch]), names)

    def _with_missing(self, table: pa.Table, names: list[str]) -> pa.Table:
        """``table`` with the columns of ``names`` it lacks added as nulls (shards written by an
        older fairprobe lack columns added since), in the order of ``names``."""
        for name in names:
            if name not in table.column_names:
                field = self.schema.field(name)
                table = table.append_column(field, pa.nulls(len(table), type=field.type))
        return table.select(names)

    def _read(self, path: Path, names: list[str]) -> pa.Table:
        have = set(_parquet_file(path).schema_arrow.names)
        return self._with_missing(_read_table(path, columns=[n for n in names if n in have]), names)

    def columns(self, names: list[str]) -> pa.Table:
        """Typed columns of every finding, in order. The shard files are read as one dataset (files
        and columns decoded in parallel, a column a shard lacks read as nulls): a per-file loop spent
        most of its time opening files, three times as long for a million findings in 112 shards."""
        if isinstance(self._parts, pa.Table):
            return self._parts.select(names)
        if not self._parts:
            return self.schema.empty_table().select(names)
        try:
            dataset = ds.dataset([str(p) for p in self._parts], format="parquet", schema=self.schema)
            return dataset.to_table(columns=names)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # a shard whose column types differ: one by one
            return pa.concat_tables([self._read(p, names) for p in self._parts])

    def json_lines(self, where: pc.Expression | None = None, needs: list[str] = ()) -> Iterator[str]:
        """Each finding's JSON line, in order (only those matching ``where``, an expression over the
        typed columns ``needs``); one record batch in memory at a time. With ``where``, the typed
        columns are read first and the JSON column only for the row groups that have a match: a
        filter that keeps a few findings of a million reads a few JSON lines, not all of them."""
        if where is None or isinstance(self._parts, pa.Table):
            for table in self._tables([FINDING, *needs]):
                if where is not None:
                    table = table.filter(where)
                yield from table.column(FINDING).to_pylist()
            return
        needs = list(needs)
        for path in self._parts:
            file = _parquet_file(path)
            have = [n for n in needs if n in file.schema_arrow.names]
            for group in range(file.num_row_groups):
                keys = self._with_missing(file.read_row_group(group, columns=have), needs)
                keys = keys.append_column("__row", pa.array(range(keys.num_rows), pa.int64()))
                rows = keys.filter(where).column("__row")
                if len(rows):
                    lines = file.read_row_group(group, columns=[FINDING]).column(FINDING)
                    yield from lines.take(rows).to_pylist()

    def rows(
        self, where: pc.Expression | None = None, needs: list[str] = (), limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Whole findings (parsed JSON) matching ``where``, in order, at most ``limit``."""
        out: list[dict[str, Any]] = []
        for line in self.json_lines(where, needs):
            if limit is not None and len(out) >= limit:
                break
            out.append(json.loads(line))
        return out

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for line in self.json_lines():
            yield json.loads(line)


PART_PREFIX = "part-"
"""Files of the findings log of techniques without shards (``findings/part-NNNNNN.parquet``)."""

LOG_SCHEMA = pa.schema([("id", pa.string()), ("hidden", pa.bool_())])
"""Typed columns of a findings-log part beside the JSON column."""

COMPACT_AT = 256
"""Parts beyond which the log is merged into one file while a run appends."""


def _write_atomic(path: Path, table: pa.Table) -> None:
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    pq.write_table(table, tmp, compression="zstd", compression_level=ZSTD_LEVEL)
    os.replace(tmp, path)


class FindingsLog:
    """The findings of a technique that records them batch by batch (``RunContext.add_findings``):
    one Parquet file per batch in ``<run>/findings/``, merged into one at report time.

    A part is written to a temporary name and renamed, so a file that exists is whole; the run
    store writes its progress markers only after the part is in place, so a killed run recomputes at
    most the batch in flight, and a batch written twice (kill between the rename and the marker) is
    read once: a finding id already in the log is skipped, as the SQLite table did. ``before_write``
    runs before the folder is first written (the run folder's manifest records it)."""

    def __init__(self, folder: Path, before_write: Any = None):
        self.folder = folder
        self._before_write = before_write
        self._noted = False
        self._ids: set[str] | None = None

    def parts(self) -> list[Path]:
        return sorted(self.folder.glob(f"{PART_PREFIX}*.parquet")) if self.folder.is_dir() else []

    def ids(self) -> set[str]:
        """Ids of every finding in the log (read once, then kept up to date by :meth:`append`)."""
        if self._ids is None:
            self._ids = set()
            for path in self.parts():
                self._ids.update(_read_table(path, columns=["id"]).column("id").to_pylist())
        return self._ids

    def clear(self) -> None:
        """Remove the log's files (a run that starts from empty)."""
        for path in self.parts():
            path.unlink(missing_ok=True)
        self._ids = None
        self._noted = False

    def append(self, findings: list[dict[str, Any]], skip: set[str] = frozenset()) -> int:
        """Write the findings whose id is new (not in the log, nor in ``skip``) as one part; returns
        how many were written."""
        known = self.ids()
        new: list[dict[str, Any]] = []
        seen: set[str] = set()
        for f in findings:
            fid = f["id"]
            if fid not in known and fid not in skip and fid not in seen:
                seen.add(fid)
                new.append(f)
        if not new:
            return 0
        if self._before_write is not None and not self._noted:
            self._before_write()
            self._noted = True  # once is enough until the folder is cleared
        self.folder.mkdir(parents=True, exist_ok=True)
        parts = self.parts()
        index = int(parts[-1].stem.removeprefix(PART_PREFIX)) + 1 if parts else 0
        schema = full_schema(LOG_SCHEMA)
        table = pa.table(
            {
                FINDING: [json.dumps(f, ensure_ascii=False) for f in new],
                "id": [f["id"] for f in new],
                "hidden": [bool(f.get("hidden")) for f in new],
            },
            schema=schema,
        )
        _write_atomic(self.folder / f"{PART_PREFIX}{index:06d}.parquet", table)
        known.update(seen)
        if len(parts) + 1 > COMPACT_AT:
            self.compact()
        return len(new)

    def json_lines(self, hidden: bool = True) -> Iterator[str]:
        """Each finding's JSON line in the order recorded, each id once (``hidden=False``: without the
        findings marked hidden, e.g. a judge's control pairs)."""
        seen: set[str] = set()
        for path in self.parts():
            table = _read_table(path)
            for line, fid, is_hidden in zip(
                table.column(FINDING).to_pylist(),
                table.column("id").to_pylist(),
                table.column("hidden").to_pylist(),
                strict=True,
            ):
                if fid in seen or (is_hidden and not hidden):
                    continue
                seen.add(fid)
                yield line

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for line in self.json_lines():
            yield json.loads(line)

    def compact(self) -> None:
        """Merge the parts into one file (in order, each id once). The merged file replaces the first
        part and the others are removed after: a kill in between leaves duplicates that readers skip."""
        parts = self.parts()
        if len(parts) < 2:
            return
        table = pa.concat_tables([_read_table(p) for p in parts])
        ids = table.column("id").to_pylist()
        first: dict[str, int] = {}
        for i, fid in enumerate(ids):
            first.setdefault(fid, i)
        if len(first) < len(ids):
            table = table.take(pa.array(sorted(first.values())))
        _write_atomic(parts[0], table)
        for path in parts[1:]:
            path.unlink(missing_ok=True)
