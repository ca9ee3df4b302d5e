"""The toxicity task's toxic-term list: the paper's Google bad-words list (§4.1, footnote 2) by
default, a filtered copy and the earlier 51 hand-picked terms behind ``toxic_list=...``; the list a model was
trained with is recorded in its folder and is the one its certificate reads sensitive words from."""

from __future__ import annotations

import json

import pytest

from fairprobe.errors import UsageError
from fairprobe.methods.certify import lexicon

from .conftest import train_cli


@pytest.fixture
def restore_lists():
    # a model loaded by an earlier test sets the process's list (its folder's record): start from the default
    lexicon.use_toxic_list(lexicon.DEFAULT_TOXIC_LIST)
    lexicon.use_tokenizer("words")
    yield
    lexicon.use_toxic_list(lexicon.DEFAULT_TOXIC_LIST)
    lexicon.use_tokenizer("words")


def test_the_papers_list_is_the_default_and_the_filtered_option_drops_non_toxic_words(restore_lists):
    lexicon.use_toxic_list(lexicon.DEFAULT_TOXIC_LIST)
    terms = lexicon.toxic_terms()
    assert lexicon.DEFAULT_TOXIC_LIST == "badwordslist"
    assert len(terms) == 408 and terms == sorted(set(terms)) and all(t == t.lower() for t in terms)
    # the paper's example (§4.2) and words of its Tables 3 and 16
    assert {"azzhole", "arse", "motherfucker", "gay", "screwing", "knob", "@$$"} <= set(terms)
    lexicon.use_toxic_list("badwordslist-filtered")
    filtered = lexicon.toxic_terms()
    assert len(filtered) == 362 and set(filtered) < set(terms)
    assert all(lexicon.TOKEN_RE.fullmatch(t) for t in filtered)  # one word token each
    assert {"azzhole", "dyke", "retard"} <= set(filtered)  # slurs stay
    assert not {"gay", "lesbian", "penis", "breasts", "sex", "hell", "@$$", "s.o.b."} & set(filtered)


def test_curated_option_selects_the_51_term_list(restore_lists):
    lexicon.use_toxic_list("curated")
    terms = lexicon.toxic_terms()
    assert len(terms) == 51 and {"stupid", "idiot", "fuck"} <= set(terms) and "azzhole" not in terms
    with pytest.raises(
        UsageError,
        match="unknown toxic term list 'google'; choose one of badwordslist, badwordslist-filtered, curated",
    ):
        lexicon.use_toxic_list("google")


def test_toxicity_pretraining_pairs_come_from_the_list_in_use(restore_lists):
    from fairprobe.methods.certify.pretrain import PretrainConfig, pretraining_words

    cfg = PretrainConfig.for_task("toxicity", 3, wordnet=False)
    task_words = "the river flows past an old mill and a small town in the valley".split()
    phase1, _ = pretraining_words("toxicity", task_words, cfg, seed=0)
    similar = [p for p in phase1 if p[2] == 0]
    words = {w for p in similar for w in p[:2]}
    assert "azzhole" in words and "stupid" not in words
    # B.3's recipe: each term paired with 50-100 others, each unordered pair once
    assert 50 * 408 / 2 <= len(similar) <= 100 * 408 and len(set(similar)) == len(similar)
    assert all(sum(w in p[:2] for p in similar) >= 50 for w in ("azzhole", "fuck", "wank"))
    lexicon.use_toxic_list("curated")
    phase1, _ = pretraining_words("toxicity", task_words, cfg, seed=0)
    similar = [p for p in phase1 if p[2] == 0]
    assert len(similar) == 51 * 50 // 2  # a list of 51 keeps every pair, as before
    assert "stupid" in {w for p in similar for w in p[:2]}


def test_model_records_its_list_and_its_certificate_reads_it(tmp_path, restore_lists):
    """A toxicity model (tiny: no pre-training, 1 block, 1 epoch) trained on ``curated`` records it;
    loading it makes the sensitive words the curated ones even when the process used the default."""
    from fairprobe.methods.certify.certificate import Substitutes
    from fairprobe.methods.certify.model import load_model
    from fairprobe.methods.certify.train import TrainConfig, train_task

    assert TrainConfig(task="toxicity").toxic_list == "badwordslist"
    out = tmp_path / "tox"
    small = {"task": "toxicity", "blocks": 1, "epochs": 1, "train_limit": 60, "test_limit": 10}
    train_task(out, TrainConfig(**small, pretrain=False, toxic_list="curated"), log=lambda m: None)
    config = json.loads((out / "config.json").read_text())
    assert config["extra"]["toxic_list"] == "curated"
    lexicon.use_toxic_list("badwordslist")
    loaded = load_model(out)
    assert lexicon.active_toxic_list() == "curated"
    sensitive = Substitutes(loaded, k=5).sensitive
    assert sensitive and sensitive <= set(lexicon.toxic_terms()) and "stupid" in set(lexicon.toxic_terms())
    config["extra"]["toxic_list"] = "badwordslist"
    (out / "config.json").write_text(json.dumps(config))
    load_model(out)
    assert lexicon.active_toxic_list() == "badwordslist"
    del config["extra"]["toxic_list"]  # a model trained before the list was recorded: the 51 terms
    (out / "config.json").write_text(json.dumps(config))
    load_model(out)
    assert lexicon.active_toxic_list() == "curated"


def test_certify_train_rejects_an_unknown_toxic_list(tmp_path):

    r = train_cli(tmp_path / "m", "--task", "toxicity", "--toxic-list", "google")
    assert r.returncode == 2 and "toxic" in r.stderr and "curated" in r.stderr, r.stderr[-800:]
    assert not (tmp_path / "m").exists()  # nothing trained, nothing written


@pytest.mark.slow
def test_certify_train_toxic_list_option_reaches_the_model_folder(tmp_path):

    out = tmp_path / "tox"
    r = train_cli(out, "--task", "toxicity", "--toxic-list", "curated", "--pretrain-epochs", "2")
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads((out / "config.json").read_text())["extra"]["toxic_list"] == "curated"
