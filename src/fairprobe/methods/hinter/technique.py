"""Registers HInter with the core: its spec block, pipeline stages and CLI commands."""

from __future__ import annotations

from fairprobe.methods.hinter.analysis import analyse
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.cli import add_commands
from fairprobe.methods.hinter.findings import FINDING_SCHEMA
from fairprobe.methods.hinter.pairing import PAIRING
from fairprobe.methods.hinter.pipeline import execute, validate
from fairprobe.registry import Technique

EXAMPLE = """\
hinter:
  model: embedded:imdb-sentiment      # classifier URI, or a chat URI (asked with the paper's Table 7 prompts)
  data: imdb-sample                   # CSV / JSONL / Parquet, imdb-sample, or hf:NAME[:CONFIG][:SPLIT]
  attributes: [race, gender, body]    # from the bias dictionary
  order: 2                            # 1 = atomic only, 2 = + pairs, 3 = + triples
  # limit: 50                         # first N texts
  # max_mutants_per_text: 20          # seeded sample per text and kind
  # invariant: true                   # dependency invariant (Algorithms 3-4)
  # score_discarded: false            # count false positives of discarded mutants (RQ3.2)
  # dictionary: my_pairs.csv          # header attribute,word,replacement
  # fluency: embedded:smollm2         # grammatical validity of texts (RQ2)
  # executor: ray                     # shards on a Ray cluster (fairprobe[ray]); default local
  # ray_address: HEAD:6379            # else RAY_ADDRESS, else a local cluster
  # batch_originals: 16               # originals per shard (one Parquet file, the resume unit)
  thresholds:
    - "error_rate.intersectional > 0.10"
"""

TECHNIQUE = Technique(
    name="hinter",
    summary="intersectional metamorphic bias testing with hidden-bias analysis (HInter)",
    block=HInterBlock,
    execute=execute,
    analyse=analyse,
    model_uri=lambda b: b.model,
    example=EXAMPLE,
    cli=add_commands,
    finding_schema=FINDING_SCHEMA,
    validate=validate,
    pairing=PAIRING,
    default_gates=(  # fairprobe.gates: a group whose whole error-rate interval lies above 5%
        "lower(error_rate.by_attribute.*)>0.05",
        "lower(error_rate.by_pair.*)>0.05",
    ),
)
