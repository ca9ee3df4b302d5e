"""Registers BAFA active fairness auditing with the core: its spec block, pipeline and CLI."""

from __future__ import annotations

from fairprobe.methods.audit.analysis import analyse
from fairprobe.methods.audit.block import AuditBlock
from fairprobe.methods.audit.cli import add_commands
from fairprobe.methods.audit.pairing import PAIRING
from fairprobe.methods.audit.pipeline import execute, validate
from fairprobe.registry import Technique

EXAMPLE = """\
audit:
  model: py:fairprobe.methods.audit.casestudy:adult_case_a   # black box: classifier or chat URI
  data: adult                         # labelled pool: a file, hf:NAME..., or adult (census as text)
  group_col: sex                      # protected attribute (two values compared)
  positive_label: ">50K"              # label whose score is ranked
  strategy: bafa                      # bafa | bafa-bo | cerm-only | stratified | random | bo | power (oracle)
  metric: auc                         # auc (ΔAUC) | dp | eo
  budget: 1000                        # most black-box queries per seed
  epsilon: 0.02                       # stop when the interval's half-width is <= epsilon
  pool_size: 2000                     # seeded sample of the data
  seeds: 3                            # repeat with seeds seed, seed+1, ...; thresholds apply to every seed
  # preset: paper                     # bafa.txt Table 7 instead of the measured defaults
  # interval: nested                  # headline: intersected with earlier rounds (default: raw, the paper's)
  # reference: true                   # also score the whole pool to know the true gap (evaluation)
  thresholds:
    - "upper > 0.10"                  # fail when any seed's interval reaches above 0.10
"""

TECHNIQUE = Technique(
    name="audit",
    summary="query-efficient active fairness auditing of a black box with C-ERM intervals (BAFA)",
    block=AuditBlock,
    execute=execute,
    analyse=analyse,
    model_uri=lambda b: b.model or f"scores:{b.scores}",
    example=EXAMPLE,
    cli=add_commands,
    pairing=PAIRING,
    validate=validate,
    default_gates=("lower>0.1", "upper<-0.1"),  # fairprobe.gates: the whole gap interval beyond 0.1
)
