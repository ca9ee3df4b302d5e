"""Meta-Fair: metamorphic bias testing of generative LLMs (shared/seeds/metafair.txt).

Fourteen metamorphic relations (§3.1, Table 1) turn a source prompt into a follow-up prompt with a
demographic change; the model under test answers both, and an oracle (Table 2) — an LLM judge for
MR1–MR10, numeric difference, answer inequality or Spearman's ρ for MR11–MR14 — decides whether the
answers reveal bias. Tests come from a generator LLM, a file, or the shipped hand-written set.
"""

from fairprobe.methods.metafair.technique import TECHNIQUE

__all__ = ["TECHNIQUE"]
