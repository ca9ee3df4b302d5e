"""A shard's first chunk is small and the next ones grow (the model gets its first texts after a few
dozen mutants, not 2,000), and that never changes HInter's findings or their order: the same
originals judged with and without the ramp give identical findings (planted classifier, no parser:
fast)."""

import re

from fairprobe.datasets import Record
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
        model="-", attributes=["race", "gender"], order=2, invariant=False, person_adjectives=False
    )
    ramped_sizes, ramped = _run(block, ramp=True)
    fixed_sizes, fixed = _run(block, ramp=False)
    assert ramped == fixed
    assert any(f["biased"] for f in fixed) and any(f["hidden"] for f in fixed)  # the planted bias is there
    assert len(fixed_sizes) == 1  # without the ramp: one chunk of up to 2,000 mutants
    # with it: the model's first texts come after a few dozen mutants, and chunks grow from there
    assert ramped_sizes[0] < 2 * FIRST_CHUNK + 100 < sum(ramped_sizes) and len(ramped_sizes) >= 3


class _Loading:
    """The parser warm-up as the run sees it in its first second: still loading."""

    def loading(self) -> bool:
        return True


def test_the_first_shards_originals_go_to_the_model_while_the_parser_loads_and_are_not_sent_again(
    tmp_path, monkeypatch
):
    from fairprobe.caching import CachedClassifier
    from fairprobe.methods.hinter.pipeline import _originals_first
    from fairprobe.models.scheduler import submit_predict
    from fairprobe.models.uri import load_classifier
    from fairprobe.store import Store

    (tmp_path / "batches_mod.py").write_text(
        "BATCHES = []\ndef classify(texts):\n    BATCHES.append(list(texts))\n    return ['POS' for _ in texts]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import batches_mod

    shards = [(0, RECORDS[:3] + RECORDS[:1]), (1, RECORDS[3:])]
    block = HInterBlock(model="-", attributes=["race", "gender"], invariant=False, person_adjectives=False)
    with Store(tmp_path / "run.db") as store:
        model = CachedClassifier(load_classifier("py:batches_mod:classify"), [store])
        early = _originals_first(model, shards, _Loading())
        chunk = next(shard_cases(shards[0][1], load_dictionary(), block, 0, 1))
        texts = texts_to_run(chunk, False)
        answers = submit_predict(model, texts).result()
        early.result()
        # the model's first batch: the first shard's originals, once each, before any mutant
        assert batches_mod.BATCHES[0] == [r.text for r in RECORDS[:3]]
        sent = [t for batch in batches_mod.BATCHES for t in batch]
        # nothing asked twice: the chunk's originals were answered already, the shard's others wait
        assert len(sent) == len(set(sent)) and set(sent) == set(texts) | set(batches_mod.BATCHES[0])
        assert len(answers) == len(texts)
        assert _originals_first(model, [], _Loading()).result() is None  # nothing to run: nothing sent
