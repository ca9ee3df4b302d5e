"""The result of a run or a comparison, as :mod:`fairprobe.api` returns it: a typed view of the run
folder (``summary.json``'s verdict, reasons and metrics; the findings from the run's own store)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairprobe.errors import UsageError

if TYPE_CHECKING:
    import pandas


@dataclass
class Run:
    """The result of one run (or of one comparison): its verdict, why, its metrics and where it is."""

    run_dir: Path
    summary: dict[str, Any] = field(repr=False)

    @property
    def verdict(self) -> str:
        """``pass``, ``fail``, ``inconclusive`` or ``incomplete``."""
        return str(self.summary.get("verdict", "pass" if self.passed else "fail"))

    @property
    def passed(self) -> bool:
        return bool(self.summary.get("passed"))

    @property
    def reasons(self) -> list[str]:
        """Why the run did not pass, one sentence each (empty when it passed)."""
        return list(self.summary.get("reasons", []))

    @property
    def metrics(self) -> dict[str, Any]:
        return dict(self.summary.get("metrics", {}))

    @property
    def report(self) -> Path:
        return self.run_dir / "report.html"

    def findings(self) -> Iterator[dict[str, Any]]:
        """Every finding as a dict: from the Parquet shards of a shard-backed run (HInter), from the
        run's Parquet findings log otherwise (what ``fairprobe export`` writes: hidden control findings
        left out; read through ``run.db``'s store, which also reads findings an older fairprobe kept in
        ``run.db``), and from ``findings.jsonl`` (or, above 10,000 cases, ``findings.parquet``) for a comparison."""
        table = self._shards()
        if table is not None:
            yield from table
            return
        if (self.run_dir / "run.db").is_file():
            from fairprobe.run.folder import open_locked

            with open_locked(self.run_dir) as store:
                rows = [f for f in store.iter_findings() if not f.get("hidden")]
            yield from rows
            return
        if (self.run_dir / "findings.parquet").is_file():  # a comparison of over 10,000 cases
            import pyarrow.parquet as pq

            from fairprobe.run.shards import FINDING

            for batch in pq.ParquetFile(self.run_dir / "findings.parquet").iter_batches(columns=[FINDING]):
                yield from (json.loads(line) for line in batch.column(0).to_pylist())
            return
        with (self.run_dir / "findings.jsonl").open(encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    yield json.loads(line)

    def findings_table(self) -> pandas.DataFrame:
        """The findings as a pandas DataFrame (needs pandas): a shard-backed run's typed Parquet
        columns, read column by column; otherwise one row per finding dict."""
        try:
            import pandas as pd
        except ImportError:
            raise UsageError("findings_table() needs pandas: pip install pandas") from None
        table = self._shards()
        if table is not None:
            from fairprobe.run.shards import FINDING

            names = [n for n in table.schema.names if n != FINDING]
            return table.columns(names).to_pandas()
        return pd.DataFrame(list(self.findings()))

    def _shards(self) -> Any:
        """The run's :class:`~fairprobe.run.shards.FindingsTable` when its technique writes shards."""
        technique = self.summary.get("technique")
        if not technique or not (self.run_dir / "run.db").is_file():
            return None
        from fairprobe.run.shards import SHARDS_DIR, FindingsTable, shard_files
        from fairprobe.technique.registry import get

        tech = get(str(technique))
        if tech.finding_schema is None:
            return None
        return FindingsTable.from_files(shard_files(self.run_dir / SHARDS_DIR), tech.finding_schema)
