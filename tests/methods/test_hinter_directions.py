"""Issue 39, the rest for HInter: the mean score shift per word pair and group with its interval
clustered by text (informative, never a gate); both directions of a word pair on the texts that allow
both, and texts that change both ways shown as fragile; a requested attribute missing from a user's
dictionary named in the coverage (the run goes on with the others; none left: one line, exit 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from fairprobe.judge.evidence import SHOWN, slice_family
from fairprobe.judge.thresholds import Threshold
from fairprobe.judge.verdict import INCONCLUSIVE, PASS, decide
from fairprobe.methods.hinter import slices
from fairprobe.methods.hinter.pipeline import score_shift
from fairprobe.models.base import Prediction
from fairprobe.stats import cluster_mean_intervals, invalid_fields

LOANS = Path(__file__).resolve().parents[1] / "data" / "loans16.csv"

# The APPROVE score drops by 0.30-0.50 (by the text's word count) when the text mentions "she"/"her":
# answers flip on some texts only, and every mutant that introduces "she" moves the score.
MODELS = """
import re

from fairprobe.models.base import Prediction


def _approve(t):
    words = re.findall(r"[a-z]+", t.lower())
    return 0.9 - (0.3 + 0.05 * (len(words) % 5)) * bool({"she", "her"} & set(words))


def scored(texts):
    out = []
    for t in texts:
        p = _approve(t)
        out.append(Prediction(frozenset(["APPROVE" if p >= 0.5 else "DENY"]), {"APPROVE": p, "DENY": 1 - p}))
    return out


def labels_only(texts):
    return [p.labels for p in scored(texts)]


def blind(texts):
    return ["DENY" if "missed" in t else "APPROVE" for t in texts]


def she_denier(texts):
    return ["DENY" if {"she", "her"} & set(re.findall(r"[a-z]+", t.lower())) else "APPROVE" for t in texts]
"""

GENDER_ONLY = """
gender:
  - swap:
      - [he, she]
      - [his, her]
"""


@pytest.fixture
def loans(tmp_path: Path) -> Path:
    (tmp_path / "scoredmodels.py").write_text(MODELS, encoding="utf-8")
    (tmp_path / "gender.yaml").write_text(GENDER_ONLY, encoding="utf-8")
    shutil.copy(LOANS, tmp_path / "loans.csv")
    return tmp_path


def _summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text(encoding="utf-8"))


# --- the interval of a mean, clustered by text -------------------------------------------------


def test_the_clustered_interval_is_the_t_interval_with_one_mutant_per_text():
    values = np.array([-0.2, -0.35, -0.1, -0.4, -0.3])
    mean, lo, hi, n, k = cluster_mean_intervals(np.zeros(5), np.arange(5), values, 1)
    want = sps.t.interval(0.95, 4, loc=values.mean(), scale=sps.sem(values))
    assert mean[0] == pytest.approx(values.mean()) and (lo[0], hi[0]) == pytest.approx(want)
    assert n[0] == 5 and k[0] == 5


def test_the_clustered_interval_counts_texts_not_mutants_and_needs_two_texts():
    # group 0: three texts, one of them with three mutants; group 1: one text; group 2: none
    groups = np.array([0, 0, 0, 0, 0, 1, 1])
    texts = np.array([0, 0, 0, 1, 2, 3, 3])
    values = np.array([-0.5, -0.5, -0.5, 0.1, 0.0, -0.2, -0.4])
    mean, lo, hi, n, k = cluster_mean_intervals(groups, texts, values, 3)
    mu = values[:5].mean()  # the mean over mutants
    sums, counts = np.array([-1.5, 0.1, 0.0]), np.array([3, 1, 1])
    se = np.sqrt(3 / 2 * ((sums - counts * mu) ** 2).sum()) / 5  # CR1, Cameron & Miller (2015)
    half = sps.t.ppf(0.975, 2) * se
    assert mean[0] == pytest.approx(mu) and (lo[0], hi[0]) == pytest.approx((mu - half, mu + half))
    assert (n[0], k[0]) == (5, 3)
    naive = sps.t.interval(0.95, 4, loc=mu, scale=sps.sem(values[:5]))  # mutants as if independent
    assert hi[0] - lo[0] > naive[1] - naive[0]
    assert mean[1] == pytest.approx(-0.3) and np.isnan(lo[1]) and np.isnan(hi[1])  # one text
    assert np.isnan(mean[2]) and n[2] == 0


def test_the_score_shift_of_a_mutant_is_read_on_the_originals_label():
    original = Prediction(frozenset(["APPROVE"]), {"APPROVE": 0.9, "DENY": 0.1})
    mutant = Prediction(frozenset(["DENY"]), {"APPROVE": 0.3, "DENY": 0.7})
    assert score_shift(original, mutant) == pytest.approx(-0.6)
    both = Prediction(frozenset(["a", "b"]), {"a": 0.8, "b": 0.6})
    assert score_shift(both, Prediction(frozenset(["a"]), {"a": 0.7, "b": 0.2})) == pytest.approx(-0.25)
    assert score_shift(original, Prediction(frozenset(["DENY"]))) is None  # labels only
    assert score_shift(Prediction(frozenset(["APPROVE"])), mutant) is None
    assert score_shift(original, None) is None


# --- both directions, fragile texts, score shifts per slice -------------------------------------

KEYS = ["gender:he>she", "gender:she>he", "gender:his>her", "race:Black>white"]


def _families(rows: list[tuple[int, int, bool, float]]) -> dict:
    key, text, flip, shift = (np.array(c) for c in zip(*rows, strict=True))
    attrs = np.array([1 if KEYS[k].startswith("race") else 0 for k in key])
    return slices.families(KEYS, key, flip.astype(bool), text, attrs, shift.astype(float))


def test_both_directions_on_the_texts_that_allow_both_and_a_text_changing_both_ways_is_fragile():
    fam = _families(
        [
            (0, 0, True, -0.6), (1, 0, True, 0.5),  # text 0 has "he" and "she": changes both ways
            (0, 1, True, -0.4), (1, 1, False, 0.1),  # text 1: he→she only
            (0, 2, True, -0.5), (2, 2, True, -0.5),  # text 2: he→she and his→her, the same way
            (1, 3, False, 0.0),  # text 3: she→he, no "he" to swap back
            (3, 4, False, np.nan),  # text 4: a race pair without scores
        ]
    )  # fmt: skip
    both = fam["word_pair"]["both_directions"]
    assert both["he→she"] == {"reverse": "she→he", "texts": 2, "only_this": 1, "only_reverse": 0, "both": 1}
    assert both["she→he"] == {"reverse": "he→she", "texts": 2, "only_this": 0, "only_reverse": 1, "both": 1}
    assert "his→her" not in both and "Black→white" not in both  # their reverse was not tested
    # text 0 changed under every swap, both ways: fragile; text 2 changed only towards "she"/"her": not
    assert fam["fragile_texts"] == 1
    rates = fam["word_pair"]["rates"]
    assert (rates["he→she_count"], rates["he→she_fragile"]) == (3, 1)
    assert (rates["his→her_count"], rates["his→her_fragile"]) == (1, 0)
    assert fam["group"]["rates"]["she_fragile"] == 1 and fam["group"]["rates"]["her_fragile"] == 0
    shift = fam["word_pair"]["score_shift"]
    assert shift["gated"] is False and shift["interval"].startswith("95% cluster-robust t")
    values = shift["values"]
    assert values["he→she"] == pytest.approx(-0.5) and values["he→she_n"] == 3 and values["he→she_texts"] == 3
    lo, hi = values["he→she_ci"]
    assert lo < -0.5 < hi
    assert values["his→her_ci"] is None  # one text: no interval
    assert "Black→white" not in values  # no scores: no shift, the rate is still there
    assert "Black→white" in rates
    group = fam["group"]["score_shift"]["values"]
    assert group["she"] == pytest.approx(-0.5) and group["he"] == pytest.approx(0.2)
    # the word-pair table sets both directions side by side, with the shifts
    table = slices.table(fam)
    row = next(r for r in table.rows if r[0] == "he→she")
    assert table.columns[7] == "both directions, same texts" and row[7] == (
        "2 texts: 1 this way only, 0 reverse only, 1 both"
    )
    assert table.columns[-1] == "mean score shift (95% CI)" and row[-1].startswith("−0.500 (−")
    assert "never a gate" in table.caption


def test_without_scores_there_is_no_score_shift_and_the_gates_never_read_one():
    fam = _families([(0, 0, True, np.nan), (1, 1, False, np.nan)])
    assert "score_shift" not in fam["word_pair"] and "score_shift" not in fam["group"]
    assert "mean score shift (95% CI)" not in slices.table(fam).columns
    scored = _families([(0, 0, True, -0.9), (0, 1, True, -0.8)])
    gate = Threshold.parse("lower_adj(slices.word_pair.rates.*)>0.05")
    paths = [p for p, _ in gate.resolve({"slices": scored})]
    assert paths == ["slices.word_pair.rates.he→she"]  # the shift is beside the rates, not a slice


# --- a requested attribute with no words: named, and no plain pass --------------------------------


def test_an_untested_requested_attribute_keeps_a_shown_run_from_a_plain_pass():
    metrics = {
        **invalid_fields(0, 500),
        "error_rate": {"by_attribute": {"gender": 0.0, "gender_ci": [0.0, 0.02], "gender_n": 900,
                                        "gender_texts": 180, "religion": None, "religion_n": 0}},
        "slices": {"word_pair": slice_family([], what="word pairs")},
    }  # fmt: skip
    show = [Threshold.parse("upper(error_rate.by_attribute.*)<=0.05")]
    fails = [Threshold.parse("lower(error_rate.by_attribute.*)>0.05")]
    why = {"religion": "the dictionary has no religion words"}
    v = decide(metrics, [], gates=fails, evidence=show, untested=why)
    assert v.verdict == INCONCLUSIVE and not v.passed
    assert v.reasons[0] == "religion was requested but not tested: the dictionary has no religion words"
    assert "ask only for attributes your dictionary and texts cover" in v.reasons[-1]
    assert {r["attribute"]: r["status"] for r in v.evidence}["gender"] == SHOWN
    accepted = decide(metrics, [], gates=fails, evidence=show, untested=why, accept_untested=True)
    assert accepted.verdict == PASS
    assert (
        "pass accepted without testing religion (accept_untested): the dictionary has no religion words"
        in accepted.notes
    )
    assert not any(n.startswith("not tested (no data)") for n in accepted.notes)  # said once, with why
    assert decide(metrics, [], gates=fails, evidence=show).verdict == PASS  # no coverage: as before


def test_a_user_dictionary_without_a_requested_attribute_runs_the_others_and_names_it(cli, loans):
    base = ["hinter", "--data", "loans.csv", "--dictionary", "gender.yaml", "--order", "1"]
    r = cli(*base, "--model", "py:scoredmodels:she_denier", "--attributes", "gender,religion", "--out", "a")
    assert r.returncode == 1, r.stdout + r.stderr
    s = _summary(loans / "a")
    assert s["verdict"] == "fail"  # an untested attribute never hides a failure
    assert s["coverage"]["untested"] == {"religion": "the dictionary has no religion words"}
    assert "not tested: religion: the dictionary has no religion words" in r.stdout
    assert s["coverage"]["tested"]["gender"]["texts"] == 16
    r = cli(*base, "--model", "py:scoredmodels:blind", "--out", "b", "--attributes", "religion,gender")
    s = _summary(loans / "b")
    assert s["verdict"] == "inconclusive" and r.returncode == 1  # gender over 16 texts, religion untested
    assert "religion was requested but not tested: the dictionary has no religion words" in s["reasons"]
    r = cli(
        "--accept-untested", *base, "--model", "py:scoredmodels:blind", "--attributes",
        "religion,gender", "--out", "b",
    )  # fmt: skip
    s = _summary(loans / "b")
    assert s["verdict"] == "pass" and r.returncode == 0, s["reasons"]
    assert any(n.startswith("pass accepted without testing religion (accept_untested)") for n in s["notes"])
    # none of the requested attributes has words: nothing to run, one line, exit 2, no run folder
    r = cli(*base, "--model", "py:scoredmodels:blind", "--attributes", "religion,age", "--out", "c")
    assert r.returncode == 2, r.stdout + r.stderr
    (line,) = [x for x in r.stderr.splitlines() if x.strip()]
    assert "gender.yaml has no words for the attribute(s) asked for (religion, age)" in line
    assert "it has words for: gender" in line and "Traceback" not in r.stderr
    assert not (loans / "c").exists()


def test_a_scoring_classifier_gets_the_mean_score_shift_per_word_pair_and_group(cli, loans):
    args = ["hinter", "--data", "loans.csv", "--attributes", "gender", "--order", "1"]
    r = cli(*args, "--model", "py:scoredmodels:scored", "--out", "s")
    assert r.returncode in (0, 1), r.stdout + r.stderr
    s = _summary(loans / "s")
    pairs = s["metrics"]["slices"]["word_pair"]
    values = pairs["score_shift"]["values"]
    # every mutant that brings in "she" lowers the APPROVE score by 0.30-0.50; taking "she" out raises it
    assert -0.5 <= values["he→she"] <= -0.3 and values["he→she_n"] == pairs["rates"]["he→she_n"]
    assert values["he→she_texts"] == pairs["rates"]["he→she_texts"] >= 8
    lo, hi = values["he→she_ci"]
    assert lo < values["he→she"] < hi < 0
    # the summary's means are the findings' own shifts, averaged over the mutants of each slice
    findings = [json.loads(x) for x in (loans / "s/findings.jsonl").read_text(encoding="utf-8").splitlines()]
    for pair in ("he→she", "she→he"):
        key = "gender:" + pair.replace("→", ">")
        shifts = [f["score_shift"] for f in findings if f["key"] == key and f["valid"]]
        assert len(shifts) == values[f"{pair}_n"] and values[pair] == pytest.approx(np.mean(shifts), abs=1e-6)
    # "she"→"he" raises the APPROVE score: an approved original gains, a denied one loses its DENY score
    assert all(abs(x) <= 0.5 for x in shifts) and values["she→he_texts"] == pairs["rates"]["she→he_texts"]
    groups = s["metrics"]["slices"]["group"]["score_shift"]["values"]
    assert -0.5 <= groups["she"] <= -0.3 and groups["she_texts"] >= 8
    assert pairs["score_shift"]["gated"] is False
    assert not any("score_shift" in t for t in s["thresholds"])  # informative only
    html = (loans / "s/report.html").read_text(encoding="utf-8")
    assert "mean score shift (95% CI)" in html and 'id="rank-group-words"' in html
    r = cli(*args, "--model", "py:scoredmodels:labels_only", "--out", "l")
    s = _summary(loans / "l")
    assert "score_shift" not in s["metrics"]["slices"]["word_pair"]  # labels only: nothing to average
    assert s["metrics"]["slices"]["word_pair"]["rates"]["he→she_n"] == pairs["rates"]["he→she_n"]
