"""Registers HInter with the core: its spec block, pipeline stages and CLI commands."""

from __future__ import annotations

from fairprobe.methods.hinter.analysis import analyse
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.cli import add_commands
from fairprobe.methods.hinter.findings import FINDING_SCHEMA
from fairprobe.methods.hinter.pairing import PAIRING
from fairprobe.methods.hinter.pipeline import execute, validate
from fairprobe.technique.registry import Technique

# A runnable block: the values `fairprobe init` sets; every other field is written from the block
# model, commented out, with its default and help.
EXAMPLE = """\
hinter:
  model: embedded:imdb-sentiment      # a classifier URI, or a chat URI (asked with the paper's Table 7 prompts)
  thresholds: ["error_rate.intersectional > 0.10"]
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
    default_gates=(  # fairprobe.judge.gates: a group whose whole error-rate interval lies above 5%
        "lower(error_rate.by_attribute.*)>0.05",
        "lower(error_rate.by_pair.*)>0.05",
        "lower_adj(slices.word_pair.rates.*)>0.05",  # fairprobe.judge.evidence: corrected for the pairs tested
        "lower_adj(slices.group.rates.*)>0.05",
    ),
    evidence_gates=("upper(error_rate.by_attribute.*)<=0.05",),  # pass = shown within the gate
)
