"""A shard's first chunk is small and the next ones grow (the model gets its first texts after a few
dozen mutants, not 2,000), and that never changes HInter's findings or their order: the same
originals judged with and without the ramp give identical findings (planted classifier, no parser:
fast)."""

import re

from fairprobe.data.datasets import Record
from fairprobe.lexicons.dictionary import load_dictionary
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.cases import FIRST_CHUNK, shard_cases
from fairprobe.methods.hinter.pipeline import judge_chunk, texts_to_run
from fairprobe.models.base import Prediction

RECORDS = [
    Record("a", "The white man told a long story about his life in the city.", None),
    Record("b", "A Chinese actor and his brother run a small shop near the station.", None),
    Record("c", "No people here, only a quiet road.", None),
    Record("d", "The young German woman wrote a letter to her mother.", None),
    Record("e", "An old Indian man and his wife walked to the market.", None),
]


def planted(text: str) -> Prediction:
    """NEG exactly when the text names a woman and one of a few nationalities (an intersection)."""
    words = set(re.findall(r"[a-z]+", text.lower()))
    biased = words & {"woman", "women", "girl", "wife", "mother"} and words & {"nigerian", "kenyan", "black"}
    return Prediction(frozenset({"NEG" if biased else "POS"}))


def _run(block: HInterBlock, ramp: bool) -> tuple[list[int], list[dict]]:
    sizes, findings = [], []
    for chunk in shard_cases(RECORDS, load_dictionary(), block, 0, 1, ramp=ramp):
        sizes.append(sum(len(p.inter) + (len(p.atomic) if p.emit_atomic else 0) for p in chunk))
        outputs = {t: planted(t) for t in texts_to_run(chunk, False)}
        findings.extend(judge_chunk(chunk, outputs, {}, False))
    return sizes, findings


def test_the_chunk_ramp_gives_identical_findings_in_the_same_order():
    block = HInterBlock(
        model="py:m:f",
        attributes=["race", "nationality", "gender"],
        order=2,
        invariant=False,
        person_adjectives=False,
    )
    ramped_sizes, ramped = _run(block, ramp=True)
    fixed_sizes, fixed = _run(block, ramp=False)
    assert ramped == fixed
    assert any(f["biased"] for f in fixed) and any(f["hidden"] for f in fixed)  # the planted bias is there
    assert len(fixed_sizes) == 1  # without the ramp: one chunk of up to 2,000 mutants
    # with it: the model's first texts come after a few dozen mutants, and chunks grow from there
    assert ramped_sizes[0] < 2 * FIRST_CHUNK + 100 < sum(ramped_sizes) and len(ramped_sizes) >= 3
