"""Few-shot examples for a chat model under test never come from the texts under test (issue 20:
the demo put reviews 131, 181 and 22 with their gold labels into the prompt and then tested them)."""

import json

from fairprobe.data.datasets import load_dataset
from fairprobe.methods.hinter.tasks import few_shot_split


def _split(dataset, **kw):
    args = dict(data="imdb-sample", few_shot_data=None, limit=None)
    args.update(kw)
    return few_shot_split(dataset, 3, 0, **args)


def test_examples_come_from_rows_beyond_the_limit():
    tested = load_dataset("imdb-sample", limit=20)
    kept, shots = _split(tested, limit=20)
    assert len(shots.examples) == 3 and kept.records == tested.records
    texts = {r.text[:600] for r in tested.records}
    assert not any(text in texts for text, _ in shots.examples)
    assert {tuple(g) for _, g in shots.examples} == {("NEG",), ("POS",)}  # every answer shown
    assert "beyond limit" in shots.source


def test_without_spare_rows_examples_are_held_out_of_the_test():
    tested = load_dataset("imdb-sample")
    kept, shots = _split(tested)
    assert len(shots.examples) == 3 and len(kept.records) == len(tested.records) - 3
    kept_texts = {r.text for r in kept.records}
    held = [r for r in tested.records if r.id in shots.held_out]
    assert len(held) == 3 and not any(r.text in kept_texts for r in held)
    assert sorted(r.text[:600] for r in held) == sorted(t for t, _ in shots.examples)


def test_examples_file_never_repeats_a_tested_text(tmp_path):
    tested = load_dataset("imdb-sample", limit=5)
    rows = [{"text": tested.records[0].text, "label": "POS"}, {"text": "Loved it.", "label": "POS"}]
    rows.append({"text": "Hated it.", "label": "NEG"})
    (tmp_path / "shots.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    kept, shots = _split(tested, few_shot_data=str(tmp_path / "shots.jsonl"), limit=5)
    assert kept.records == tested.records
    assert sorted(t for t, _ in shots.examples) == ["Hated it.", "Loved it."]
