"""``fairprobe export RUN_DIR``: a run's findings as JSON lines, CSV or Parquet, on demand.

The formats and what they hold are described in :mod:`fairprobe.run.findings`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

from fairprobe.errors import UsageError
from fairprobe.run.findings import FORMATS, json_lines, stored_findings, write_csv, write_parquet_file


def export(run_dir: Path, fmt: str = "jsonl", output: Path | None = None) -> tuple[Path | None, int]:
    """Write the findings of ``run_dir`` in ``fmt`` to ``output`` (default: ``findings.<fmt>`` in the
    run folder, recorded in its manifest; ``-``: standard output, jsonl and csv only). Returns the
    path written (``None`` for standard output) and the number of findings."""
    from fairprobe.report.writers import write_json_lines
    from fairprobe.run.folder import claim, open_locked
    from fairprobe.run.outputs import check_output_file
    from fairprobe.technique.registry import get as get_technique

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
                n = write_csv(sys.stdout, lines)
            sys.stdout.flush()
            return None, n
        output.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "jsonl":
            return output, write_json_lines(output, lines())
        if fmt == "parquet":
            return output, write_parquet_file(output, findings)
        tmp = output.parent / f".{output.name}.{os.getpid()}.tmp"  # renamed when whole
        try:
            with tmp.open("w", encoding="utf-8", newline="") as fh:
                n = write_csv(fh, lines)
            os.replace(tmp, output)
        finally:
            tmp.unlink(missing_ok=True)
        return output, n
