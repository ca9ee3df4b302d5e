"""Registers the certificates technique with the core: its spec block, pipeline stages and CLI."""

from __future__ import annotations

from fairprobe.methods.certify.analysis import analyse
from fairprobe.methods.certify.block import CertifyBlock
from fairprobe.methods.certify.cli import add_commands
from fairprobe.methods.certify.pairing import PAIRING
from fairprobe.methods.certify.pipeline import execute, validate
from fairprobe.technique.registry import Technique

# A runnable block: the values `fairprobe init` sets; every other field is written from the block
# model, commented out, with its default and help.
EXAMPLE = """\
certify:
  model: models/adult-gender          # written by `fairprobe certify train --task adult-gender --model-out ...`
"""

TECHNIQUE = Technique(
    name="certify",
    summary="formal fairness certificates of a small transformer (zonotope verification)",
    block=CertifyBlock,
    execute=execute,
    analyse=analyse,
    model_uri=lambda b: b.model,
    example=EXAMPLE,
    cli=add_commands,
    pairing=PAIRING,
    validate=validate,
    # fairprobe.judge.gates / fairprobe.judge.evidence: fail when the certified share's whole 95% interval
    # (Clopper–Pearson over the decided sentences) lies below one half; pass only when it lies at or above
    default_gates=("upper(fairness_score)<0.5",),
    evidence_gates=("lower(fairness_score)>=0.5",),
    evidence_unit="sentences",
    evidence_interval="clopper-pearson",
)
