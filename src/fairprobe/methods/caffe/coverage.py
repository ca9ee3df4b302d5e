"""What a CAFFE run tested, and why a requested bias type produced no prompt pairs (issue 39: a
requested attribute with no data is never silent).

Requested bias types: ``bias_types`` when the block names them; otherwise, for a run that generates
its pairs, every bias type of the knowledge base (CrowS-Pairs' nine by default: caffe.txt §4.1), and,
for a run of a prompts file, the bias types the file holds for the run's cases. A requested type
without a usable pair is named with why: the seeded ``--triples`` sample drew none of its triples, the
generator wrote no valid pair for them, the prompts file has none, or every pair had an empty answer.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from fairprobe.methods.caffe.block import CaffeBlock
from fairprobe.methods.caffe.slices import TRIPLES, UNIT, labels


def coverage(block: CaffeBlock, findings: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """``{"tested": {bias type: counts}, "untested": {bias type: why}}`` for ``summary.json``."""
    usable = [f for f in findings if not f.get("invalid")]
    label_of = labels(usable)
    pairs: Counter[str] = Counter(str(f["bias_type"]) for f in usable)
    triples: dict[str, set[str]] = defaultdict(set)
    groups: dict[str, set[str]] = defaultdict(set)
    for f in usable:
        triples[str(f["bias_type"])].add(str(f.get("triple_id") or f["id"]))
        groups[str(f["bias_type"])].add(label_of[str(f["id"])])
    tested = {
        b: {UNIT: pairs[b], TRIPLES: len(triples[b]), "group pairs": len(groups[b])} for b in sorted(pairs)
    }
    ran: Counter[str] = Counter(str(f["bias_type"]) for f in findings)
    untested = {}
    for bias, why in _requested(block, findings, seed).items():
        if bias in tested:
            continue
        if ran[bias]:
            untested[bias] = f"all {ran[bias]} of its prompt pairs had an empty answer (INVALID)"
        else:
            untested[bias] = why
    return {"tested": tested, "untested": untested}


def _requested(block: CaffeBlock, findings: list[dict[str, Any]], seed: int) -> dict[str, str]:
    """Requested bias type -> why it would have no pair if none was run."""
    cases = sorted({str(f.get("case")) for f in findings})
    if block.prompts:
        return _from_prompts(block, cases)
    try:
        return _from_kb(block, seed)
    except Exception:  # noqa: BLE001 - the knowledge base may have moved since the run: say less
        return {b: "no prompt pair was run for it" for b in block.bias_types}


def _from_prompts(block: CaffeBlock, cases: list[str]) -> dict[str, str]:
    from fairprobe.methods.caffe.generation import read_prompts

    name = Path(str(block.prompts)).name
    try:
        records = read_prompts(str(block.prompts))
    except Exception:  # noqa: BLE001 - the prompts file may have moved since the run
        records = []
    held = Counter(str(r["bias_type"]) for r in records if not cases or str(r["case"]) in cases)
    wanted = block.bias_types or sorted(held)
    where = f"case {', '.join(cases)}" if cases else "the run's cases"
    out = {}
    for bias in wanted:
        if not held[bias]:
            out[bias] = f"the prompts file {name} has no {bias} pair for {where}"
        else:
            out[bias] = f"none of the {held[bias]} {bias} pairs of {name} was run (--sample kept none)"
    return out


def _from_kb(block: CaffeBlock, seed: int) -> dict[str, str]:
    from fairprobe.methods.caffe.kb import build_kb, load_kb, sample_triples

    kb = load_kb(block.kb) if block.kb else build_kb()
    source = "the knowledge base" if block.kb else "the CrowS-Pairs knowledge base"
    in_kb = Counter(t.bias_type for t in kb)
    drawn = Counter(t.bias_type for t in sample_triples(kb, block.triples, block.bias_types, seed))
    out = {}
    for bias in block.bias_types or sorted(in_kb):
        if not in_kb[bias]:
            out[bias] = f"{source} has no {bias} triple"
        elif not drawn[bias]:
            out[bias] = (
                f"the seeded sample (--triples {block.triples}) drew none of its {in_kb[bias]:,} {bias} "
                "triple(s); raise --triples or name it with --bias-types"
            )
        else:
            out[bias] = (
                f"the generator {block.generator} wrote no valid prompt pair for its {drawn[bias]} "
                "triple(s) (see prompts.stopping.json); use a stronger --generator"
            )
    return out
