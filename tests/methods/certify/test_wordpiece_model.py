"""A WordPiece model end to end through the real CLI (``certify train --tokenizer wordpiece``): the
table has BERT's 30,522 rows, the model directory records its tokeniser, loading it makes text read
as WordPiece, and t and the substitutes come from the WordPiece table (Eq. 3)."""

from __future__ import annotations

import json

import pytest

from fairprobe.methods.certify import lexicon

from .conftest import train_cli

pytestmark = pytest.mark.slow  # one training run, ~40 s on two shared cores


def test_wordpiece_model_trains_loads_and_reads_text_as_pieces(tmp_path):
    from fairprobe.methods.certify.certificate import Substitutes, token_ids
    from fairprobe.methods.certify.data import load_adult
    from fairprobe.methods.certify.model import load_model

    out = tmp_path / "wp"
    r = train_cli(
        out,
        "--task",
        "adult-gender",
        "--tokenizer",
        "wordpiece",
        "--augment-balance",
        "--augment-prob",
        "0.3",
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "synonym augmentation (App. B.5)" in r.stderr
    assert json.loads((out / "config.json").read_text())["extra"]["tokenizer"] == "wordpiece"
    try:
        loaded = load_model(out)
        assert len(loaded.vocab) == 30522 and loaded.vocab[1] == "[UNK]"
        assert lexicon.active_tokenizer() == "wordpiece"
        text = load_adult("test")[0].text  # "Self-emp-inc"-style values split into known pieces
        ids = token_ids(loaded, text)
        assert 1 not in ids and len(ids) > len(lexicon.words(text))
        subs = Substitutes(loaded, k=50)
        assert {"female", "male"} <= subs.sensitive
        near = dict(subs.of("female"))
        assert len(near) == 50 and 0 < subs.threshold("female") < 0.05  # pre-training tightened the cluster
    finally:
        lexicon.use_tokenizer("words")
