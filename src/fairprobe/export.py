"""Findings out of a run folder as JSON lines, CSV or Parquet (``fairprobe export``).

A run keeps its findings in Parquet under ``findings/`` (HInter's shards, or the findings log of
the other techniques; see :mod:`fairprobe.shards`). ``findings.jsonl`` is an export of them: the
run writes it into its folder only while the run has at most :data:`JSONL_LIMIT` findings (a
million-mutant HInter run would make it near 1 GB, 17× its Parquet shards); above that,
``fairprobe export RUN_DIR`` writes it, or a CSV or a single Parquet file, on demand.

Every format holds the findings the reports show (a judge's hidden control findings are left out),
in the order they were recorded:

- ``jsonl`` — one JSON object per line, byte for byte what ``findings.jsonl`` holds;
- ``csv`` — one column per top-level field, in order of first appearance; lists and objects as JSON
  text, a missing or null field as an empty cell;
- ``parquet`` — the run's own layout: a ``finding`` column with each JSON line, then the typed
  columns (HInter: kind, valid, biased, ...; other techniques: id, hidden).
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from fairprobe.errors import UsageError
from fairprobe.shards import FINDING, LOG_SCHEMA, SHARDS_DIR, FindingsTable, shard_files
from fairprobe.store import Store

JSONL_LIMIT = 10_000
"""Runs with at most this many findings get ``findings.jsonl`` in their folder (a few MB at most);
larger runs keep their findings in Parquet only (``fairprobe export`` writes the JSON lines)."""

FORMATS = ("jsonl", "csv", "parquet")

JSONL = "findings.jsonl"


def stored_findings(run_dir: Path, store: Store, technique: Any) -> FindingsTable | list[dict[str, Any]]:
    """What the analysis reads: the shard table of a sharded technique (by column, bounded memory),
    else every logged finding (hidden ones included) as a list."""
    if technique.finding_schema is not None:
        return FindingsTable.from_files(shard_files(run_dir / SHARDS_DIR), technique.finding_schema)
    return list(store.iter_findings())


def json_lines(findings: FindingsTable | list[dict[str, Any]]) -> Iterator[str]:
    """The shown findings (no hidden ones) as JSON lines, in order."""
    if isinstance(findings, FindingsTable):
        yield from findings.json_lines()
        return
    for f in findings:
        if not f.get("hidden"):
            yield json.dumps(f, ensure_ascii=False)


def write_jsonl_if_small(run_dir: Path, store: Store, findings: FindingsTable | list[dict[str, Any]]) -> bool:
    """Write ``findings.jsonl`` when the run has at most :data:`JSONL_LIMIT` findings; above it, remove
    the one an earlier render of this run wrote (it would be stale). Returns whether it was written."""
    from fairprobe.report.writers import write_json_lines
    from fairprobe.runfolder import claim

    if len(findings) <= JSONL_LIMIT:
        write_json_lines(claim(run_dir, store, JSONL), json_lines(findings))
        return True
    if JSONL in store.written():
        (run_dir / JSONL).unlink(missing_ok=True)
    return False


def _csv_rows(lines: Any) -> Iterator[dict[str, Any]]:
    for line in lines():
        yield json.loads(line)


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return value


def _write_csv(fh: Any, lines: Any) -> int:
    columns: dict[str, None] = {}
    for row in _csv_rows(lines):  # first pass: the columns, in order of first appearance
        columns.update(dict.fromkeys(row))
    writer = csv.DictWriter(fh, fieldnames=list(columns), restval="", lineterminator="\n")
    writer.writeheader()
    n = 0
    for row in _csv_rows(lines):
        writer.writerow({k: _cell(v) for k, v in row.items()})
        n += 1
    return n


def _write_parquet(path: Path, findings: FindingsTable | list[dict[str, Any]]) -> int:
    if isinstance(findings, FindingsTable):
        schema = findings.schema
        with pq.ParquetWriter(path, schema, compression="zstd") as writer:
            n = 0
            for table in findings._tables(list(schema.names)):
                writer.write_table(table)
                n += table.num_rows
        return n
    shown = [f for f in findings if not f.get("hidden")]
    table = pa.table(
        {
            FINDING: [json.dumps(f, ensure_ascii=False) for f in shown],
            "id": [f["id"] for f in shown],
            "hidden": [False] * len(shown),
        },
        schema=pa.schema([pa.field(FINDING, pa.string(), nullable=False), *LOG_SCHEMA]),
    )
    pq.write_table(table, path, compression="zstd")
    return table.num_rows


def write_parquet_file(path: Path, findings: FindingsTable | list[dict[str, Any]]) -> int:
    """``findings`` (each with an ``id``) as one Parquet file in the layout of ``--format parquet``,
    written to a temporary name and renamed when whole. Returns the count."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    try:
        n = _write_parquet(tmp, findings)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return n


def export(run_dir: Path, fmt: str = "jsonl", output: Path | None = None) -> tuple[Path | None, int]:
    """Write the findings of ``run_dir`` in ``fmt`` to ``output`` (default: ``findings.<fmt>`` in the
    run folder, recorded in its manifest; ``-``: standard output, jsonl and csv only). Returns the
    path written (``None`` for standard output) and the number of findings."""
    from fairprobe.outputs import check_output_file
    from fairprobe.registry import get as get_technique
    from fairprobe.report.writers import write_json_lines
    from fairprobe.runfolder import claim, open_locked

    if fmt not in FORMATS:
        raise UsageError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")
    if run_dir.is_file() or not (run_dir / "run.db").is_file():
        raise UsageError(f"{run_dir} has no run.db; give the --out folder of a fairprobe run")
    if output is not None and str(output) == "-" and fmt == "parquet":
        raise UsageError("--output -: Parquet is binary; give a file name")
    if output is not None and str(output) != "-":
        check_output_file(output, "--output")
    with open_locked(run_dir) as store:
        name = store.get_meta("technique")
        if name is None:
            raise UsageError(f"{run_dir}/run.db records no run; run a spec into it first")
        findings = stored_findings(run_dir, store, get_technique(name))
        if output is None:
            output = claim(run_dir, store, f"findings.{fmt}")

        def lines() -> Iterator[str]:
            return json_lines(findings)

        if str(output) == "-":
            if fmt == "jsonl":
                n = 0
                for line in lines():
                    sys.stdout.write(line + "\n")
                    n += 1
            else:
                n = _write_csv(sys.stdout, lines)
            sys.stdout.flush()
            return None, n
        output.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "jsonl":
            return output, write_json_lines(output, lines())
        tmp = output.parent / f".{output.name}.{os.getpid()}.tmp"  # renamed when whole
        try:
            if fmt == "csv":
                with tmp.open("w", encoding="utf-8", newline="") as fh:
                    n = _write_csv(fh, lines)
            else:
                n = _write_parquet(tmp, findings)
            os.replace(tmp, output)
        finally:
            tmp.unlink(missing_ok=True)
        return output, n
