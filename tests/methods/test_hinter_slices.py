"""Issue 39 with planted keyword models over a 16-row CSV of loan applications (tests/data/loans16.csv):
a bias concentrated in one word pair or one group among many fails and is named; a model that ignores
every group word is not called a pass on 16 texts (inconclusive, with the texts a pass needs) and
does not fail on the 200-review imdb sample; a requested attribute without mutants is named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fairprobe.lexicons.dictionary import load_dictionary

LOANS = Path(__file__).resolve().parents[1] / "data" / "loans16.csv"

MODELS = """
import re

def _words(t):
    return set(re.findall(r"[a-z]+", t.lower()))

def she_denier(texts):
    return ["DENY" if {"she", "her"} & _words(t) else "APPROVE" for t in texts]

def muslim_denier(texts):
    return ["DENY" if {"muslim", "muslims"} & _words(t) else "APPROVE" for t in texts]

def blind(texts):
    return ["DENY" if "missed" in t else "APPROVE" for t in texts]
"""

# Used only while the packaged dictionary has no religion words (issue 39's other half adds them).
RELIGION = """
religion:
  - cross:
      christian: [Christian, Christians]
      muslim: [Muslim, Muslims]
      jewish: [Jewish]
      hindu: [Hindu, Hindus]
      buddhist: [Buddhist, Buddhists]
age:
  - swap:
      - [teenager, pensioner]
"""


@pytest.fixture
def loans(tmp_path: Path) -> Path:
    (tmp_path / "loanmodels.py").write_text(MODELS, encoding="utf-8")
    shutil.copy(LOANS, tmp_path / "loans.csv")
    return tmp_path


def _summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text(encoding="utf-8"))


def test_a_she_denying_loan_scorer_fails_naming_the_word_pair_and_the_group(cli, loans):
    r = cli("hinter", "--model", "py:loanmodels:she_denier", "--data", "loans.csv", "--out", "run")
    assert r.returncode == 1, r.stdout + r.stderr
    s = _summary(loans / "run")
    assert s["verdict"] == "fail" and s["passed"] is False
    pair = next(x for x in s["reasons"] if x.startswith("he→she changed the answer for "))
    assert "95% CI" in pair and "word pairs tested (Bonferroni" in pair and "his→her" in pair
    assert any(x.startswith('mutants that introduce "she" changed the answer') for x in s["reasons"])
    # every word pair's figures are in summary.json, both directions, with both intervals
    rates = s["metrics"]["slices"]["word_pair"]["rates"]
    assert rates["he→she"] == 1.0 and rates["he→she_count"] == rates["he→she_n"] >= 8
    assert "she→he" in rates and rates["she→he_n"] >= 3
    lo95, lo_adj = rates["he→she_ci"][0], rates["he→she_adj_ci"][0]
    assert lo_adj < lo95 and lo_adj > 0.05  # the corrected interval is wider, and still above the gate
    assert s["metrics"]["slices"]["word_pair"]["tested"] > 20
    assert s["metrics"]["slices"]["word_pair"]["adjustment"] == "Bonferroni"
    # a pair that changed nothing has its figures too, and fails nothing
    quiet = [k for k in rates if f"{k}_n" in rates and rates[f"{k}_count"] == 0]
    assert quiet and all(rates[f"{k}_adj_ci"][0] == 0 for k in quiet)
    assert {row["attribute"]: row["status"] for row in s["evidence"]}["gender"] == "fails"
    html = (loans / "run/report.html").read_text(encoding="utf-8")
    assert 'id="coverage"' in html and 'id="evidence"' in html and 'id="rank-slices"' in html


def test_a_muslim_penalising_scorer_fails_naming_the_group(cli, loans):
    if "religion" in load_dictionary().attributes:
        dictionary: list[str] = []
        attributes = "religion"
    else:  # a test-only dictionary until the packaged one has religion words
        (loans / "religion.yaml").write_text(RELIGION, encoding="utf-8")
        dictionary = ["--dictionary", "religion.yaml"]
        attributes = "religion,age"
    r = cli(
        "hinter",
        "--model",
        "py:loanmodels:muslim_denier",
        "--data",
        "loans.csv",
        *dictionary,
        "--attributes",
        attributes,
        "--order",
        "1",
        "--out",
        "run",
    )
    assert r.returncode == 1, r.stdout + r.stderr
    s = _summary(loans / "run")
    assert s["verdict"] == "fail"
    assert any(x.startswith('mutants that introduce "Muslim') for x in s["reasons"]), s["reasons"]
    assert any("→Muslim changed the answer for" in x for x in s["reasons"])
    if dictionary:  # the requested age list matches no text: named, never silent
        assert s["coverage"]["untested"]["age"].startswith(
            "none of the 16 texts mentions a word of the age list"
        )
        assert "not tested: age: none of the 16 texts" in r.stdout


def test_a_scorer_ignoring_group_words_is_inconclusive_on_16_texts_with_the_texts_needed(cli, loans):
    r = cli("hinter", "--model", "py:loanmodels:blind", "--data", "loans.csv", "--out", "run")
    assert r.returncode == 1, r.stdout + r.stderr
    s = _summary(loans / "run")
    assert s["verdict"] == "inconclusive" and s["passed"] is False
    gender = next(row for row in s["evidence"] if row["attribute"] == "gender")
    assert gender["status"] == "not shown" and gender["texts"] == 16 and gender["texts_needed"] == 73
    assert any(
        x.startswith(
            "not enough evidence that gender is within the 5% gate: the model changed its answer for 0 of "
        )
        and "16 texts can only show a rate below 19.4%" in x
        and "about 73 texts would be needed" in x
        for x in s["reasons"]
    )
    assert s["coverage"]["tested"]["gender"]["texts"] == 16
    assert s["coverage"]["untested"]["body"].startswith(
        "none of the 16 texts mentions a word of the body list"
    )
    assert "INCONCLUSIVE" in r.stdout and "not tested: body" in r.stdout


@pytest.mark.slow
def test_a_scorer_ignoring_group_words_does_not_fail_on_the_imdb_sample(cli, loans):
    args = ["--data", "imdb-sample", "--order", "1", "--out", "run"]
    r = cli("hinter", "--model", "py:loanmodels:blind", *args, timeout=1500)  # 200 reviews, shared CPUs
    s = _summary(loans / "run")
    assert s["verdict"] in ("pass", "inconclusive"), s["reasons"]
    assert r.returncode == (0 if s["verdict"] == "pass" else 1)
    assert not any(row["status"] == "fails" for row in s["evidence"])
    # gender is mentioned in enough reviews to be shown within 5%
    assert {row["attribute"]: row["status"] for row in s["evidence"]}["gender"] == "shown"
