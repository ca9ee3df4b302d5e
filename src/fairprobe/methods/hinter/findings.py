"""The layout of HInter's findings in Parquet shards (the typed columns beside each JSON line).

Every HInter finding is one row of ``<run>/findings/shard-NNNNNN.parquet`` (see
:mod:`fairprobe.run.shards`); these are the columns typed for metrics and queries. Absent optional
fields (``false_positive`` without ``score_discarded``, ``fluency`` without a scorer, ``population``
without ``max_mutants_per_text``) are null. ``invalid``: either side's answer was INVALID (issue 16);
``population``: the original's mutants of this kind before sampling; ``score_shift``: for a
classifier that gives scores, the score of the original's label in the mutant minus in the original
(null without scores or with an INVALID side; :func:`fairprobe.methods.hinter.pipeline.score_shift`).
"""

from __future__ import annotations

import pyarrow as pa

from fairprobe.run.shards import SHARDS_DIR

FINDING_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("original_id", pa.string()),
        ("kind", pa.string()),
        ("order", pa.int32()),
        ("attributes", pa.list_(pa.string())),
        ("key", pa.string()),
        ("valid", pa.bool_()),
        ("invalid", pa.bool_()),
        ("biased", pa.bool_()),
        ("hidden", pa.bool_()),
        ("parents", pa.list_(pa.string())),
        ("population", pa.int64()),
        ("original_output", pa.list_(pa.string())),
        ("mutant_output", pa.list_(pa.string())),
        ("false_positive", pa.bool_()),
        ("fluency", pa.float64()),
        ("original_fluency", pa.float64()),
        ("score_shift", pa.float64()),
    ]
)

__all__ = ["FINDING_SCHEMA", "SHARDS_DIR"]
