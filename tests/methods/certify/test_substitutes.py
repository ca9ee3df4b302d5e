"""User substitute lists are read as the model reads text (issue 20: "young man", "Mr.")."""

from __future__ import annotations

import json

import pytest
import torch

from fairprobe.methods.certify.certificate import (
    Substitutes,
    VerifierSettings,
    certify,
    load_substitute_file,
)
from fairprobe.methods.certify.data import Example


def linf(loaded, a: str, b: str) -> float:
    idx = {w: i for i, w in enumerate(loaded.vocab)}
    e = loaded.module.tok.weight.detach()
    return float((e[idx.get(a, 1)] - e[idx.get(b, 1)]).abs().max())


@pytest.fixture
def user_list(tmp_path):
    path = tmp_path / "subs.json"
    path.write_text(
        json.dumps(
            {
                "Female.": ["Woman!", "FEMALE", "young woman"],
                "is male": ["is female", "is a man"],
            }
        )
    )
    return load_substitute_file(path)


def test_punctuation_and_case_are_tokenised_away(loaded, user_list):
    subs = Substitutes(loaded, user=user_list)
    pairs = dict(subs.of("female."))
    # "Woman!" is the vocabulary word "woman" to the model, not <unk>
    assert pairs["woman!"] == pytest.approx(linf(loaded, "female", "woman"))
    assert pairs["woman!"] != pytest.approx(linf(loaded, "female", "<unk>"))
    assert "female" not in pairs  # the word itself, once tokenised, is no substitute


def test_multi_word_phrases_match_and_compare_position_by_position(loaded, user_list):
    subs = Substitutes(loaded, user=user_list)
    text = "A person's workclass is Private, sex is male, race is White."
    assert subs.words_in(text) == ["is male"]
    pairs = dict(subs.of("is male"))
    assert pairs["is female"] == pytest.approx(linf(loaded, "male", "female"))  # "is" == "is"
    assert pairs["is a man"] == float("inf")  # three tokens for two: no box covers it


def test_a_substitute_that_changes_length_blocks_the_certificate(loaded, user_list):
    subs = Substitutes(loaded, user=user_list)
    example = Example("x", "A person's workclass is Private, sex is female, race is White.", 0)
    record = certify(loaded, example, subs, VerifierSettings(steps=2, baseline=False))
    assert record["uncovered_substitutes"] == {"female.": ["young woman"]}
    assert record["threshold"] is None and record["word_thresholds"]["female."] is None
    assert record["certified"] is False
    json.dumps(record, allow_nan=False)  # strict JSON: no Infinity
    assert torch.isfinite(torch.tensor(record["eps_star"]))
