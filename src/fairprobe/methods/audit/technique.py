"""Registers BAFA active fairness auditing with the core: its spec block, pipeline and CLI."""

from __future__ import annotations

from fairprobe.methods.audit.analysis import analyse
from fairprobe.methods.audit.block import AuditBlock
from fairprobe.methods.audit.cli import add_commands
from fairprobe.methods.audit.pairing import PAIRING
from fairprobe.methods.audit.pipeline import execute, validate
from fairprobe.technique.registry import Technique

# A runnable block: the values `fairprobe init` sets; every other field is written from the block
# model, commented out, with its default and help.
EXAMPLE = """\
audit:
  model: py:fairprobe.methods.audit.casestudy:adult_case_a
  data: adult
  group_col: sex
  positive_label: ">50K"
  seeds: 3
  thresholds: ["upper > 0.10"]         # fail when any seed's interval reaches above 0.10
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
    # fairprobe.judge.gates: fail when every seed's interval lies wholly beyond ±0.1 (the hull's ends);
    # fairprobe.judge.evidence: pass only when every seed's interval lies within [-0.1, 0.1]
    default_gates=("lower>0.1", "upper<-0.1"),
    evidence_gates=("upper(seeds.*.estimate)<=0.1", "lower(seeds.*.estimate)>=-0.1"),
    evidence_unit="queries",
)
