"""Unequal refusals in HInter: a model that gives no usable answer whenever "Asian" appears, and a
stable label otherwise, has no measured bias error left (its INVALID pairs are left out of every
rate), yet it treats one group differently. It must fail, with the reason in words — through the
real CLI, the real parser and a real `py:` classifier."""

import json

import numpy as np

from fairprobe.methods.hinter.analysis import analyse
from fairprobe.methods.hinter.block import HInterBlock

REFUSES_ASIAN = """
def classify(texts):
    return ["INVALID" if "Asian" in t else "POS" for t in texts]
"""

TEXTS = [
    "The white man told a long story about his life in the city.",
    "A Chinese actor and his brother run a small shop near the station.",
    "My Irish uncle is a tall man who loves old movies.",
    "The Mexican boy waited for his father outside the theater.",
    "An Italian gentleman and his son cooked dinner for the whole family.",
]


# Every race word can become "Asian" or "Black": half the race mutants name an Asian person.
DICTIONARY = "attribute,word,replacement\n" + "".join(
    f"race,{w},{r}\n" for w in ("white", "Chinese", "Irish", "Mexican", "Italian") for r in ("Asian", "Black")
) + "".join(
    f"gender,{w},{r}\n"
    for w, r in [("man", "woman"), ("boy", "girl"), ("his", "her"), ("brother", "sister"), ("father", "mother"),
                 ("son", "daughter"), ("gentleman", "lady"), ("uncle", "aunt")]
)  # fmt: skip


def _write(tmp_path):
    (tmp_path / "refuses.py").write_text(REFUSES_ASIAN)
    (tmp_path / "dictionary.csv").write_text(DICTIONARY)
    (tmp_path / "texts.jsonl").write_text(
        "".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(TEXTS))
    )


def _run(cli, tmp_path, *extra):
    _write(tmp_path)
    return cli(
        "hinter", "--model", "py:refuses:classify", "--data", "texts.jsonl", "--attributes", "race,gender",
        "--dictionary", "dictionary.csv", "--out", "run", *extra,
    )  # fmt: skip


def test_a_model_that_refuses_one_group_fails(cli, tmp_path):
    assert not any("Asian" in t for t in TEXTS)
    r = _run(cli, tmp_path)
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    m = summary["metrics"]
    # the INVALID pairs are left out of the error rate: it is 0, and used to decide a PASS
    assert m["error_rate"]["atomic"] == 0.0 and 0 < m["invalid_rate"] < 0.5
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert summary["verdict"] == "fail" and summary["passed"] is False
    findings = [json.loads(x) for x in (tmp_path / "run/findings.jsonl").read_text().splitlines()]
    answered = [f for f in findings if f["valid"] and f["mutant_output"] is not None]
    refused = [f for f in answered if f["mutant_output"] == ["INVALID"]]
    assert refused and all("Asian" in f["text"] for f in refused)
    assert m["asymmetric_invalid_rate"] == len(refused) / len(answered)
    lo, hi = m["asymmetric_invalid_rate_ci"]
    assert lo < m["asymmetric_invalid_rate"] < hi
    race = m["asymmetric_invalid"]["by_attribute"]
    atomic_race = [f for f in answered if f["kind"] == "atomic" and f["attributes"] == ["race"]]
    assert race["race_n"] == len(atomic_race) and race["race"] > 0.05
    assert race["race_most_refused"] == ["Asian"]
    assert m["asymmetric_invalid"]["by_attribute"]["gender"] == 0.0
    words = m["asymmetric_invalid"]["by_group_word"]
    assert words["Asian"] == 1.0 and words["Asian_refused"] == words["Asian_count"] > 0
    gate = summary["thresholds"]["asymmetric_invalid.by_attribute.race>0.05"]
    assert gate["passed"] is False and gate["source"].startswith("default")
    assert summary["thresholds"]["asymmetric_invalid.by_attribute.gender>0.05"]["passed"] is True
    reason = next(x for x in summary["reasons"] if "race mutants" in x)
    assert "one side only" in reason and "'Asian'" in reason and "max_asymmetric_invalid_rate 0.05" in reason
    assert f"{race['race_count']} of {race['race_n']} race mutants" in reason
    html = (tmp_path / "run/report.html").read_text()
    assert "Unequal refusals" in html and "Asian" in html


def test_the_gate_follows_max_asymmetric_invalid_rate(cli, tmp_path):
    (tmp_path / "spec.yaml").write_text(
        "hinter:\n  model: py:refuses:classify\n  data: texts.jsonl\n  attributes: [race, gender]\n"
        "  dictionary: dictionary.csv\n  max_asymmetric_invalid_rate: 0.6\n"
    )
    _write(tmp_path)
    r = cli("run", "spec.yaml", "--out", "runs")
    summary = json.loads((tmp_path / "runs/hinter/summary.json").read_text())
    # nothing fails; a few texts cannot show the error rates within 5%, so the run is inconclusive
    # (issue 39), never a pass
    assert r.returncode == 1 and summary["verdict"] == "inconclusive", (r.stdout, summary["reasons"])
    assert all(t["passed"] for t in summary["thresholds"].values())
    assert summary["reasons"][0].startswith("not enough evidence that ")
    race = summary["thresholds"]["asymmetric_invalid.by_attribute.race>0.6"]
    assert race["passed"] is True and 0.05 < race["actual"] <= 0.6


def _finding(original, key, attributes, original_output, mutant_output, kind="atomic"):
    return {
        "id": f"{original}|{key}", "original_id": original, "kind": kind, "order": len(attributes),
        "attributes": attributes, "key": key, "valid": True,
        "invalid": "INVALID" in original_output + mutant_output, "biased": False, "hidden": False,
        "parents": [], "original_output": original_output, "mutant_output": mutant_output,
    }  # fmt: skip


def test_refused_original_counts_for_the_word_replaced():
    # The original names the Asian man and is refused; its mutants to other groups are answered.
    findings = [
        _finding("a", "race:Asian>white", ["race"], ["INVALID"], ["POS"]),
        _finding("a", "race:Asian>Black", ["race"], ["INVALID"], ["POS"]),
        _finding("b", "race:white>Black", ["race"], ["POS"], ["POS"]),
        _finding("c", "race:white>Asian", ["race"], ["POS"], ["INVALID"]),
        _finding("d", "race:Black>Asian", ["race"], ["INVALID"], ["INVALID"]),  # both sides: not unequal
    ]
    m = analyse(HInterBlock(model="py:x:y", attributes=["race"], order=1), findings, seed=0).metrics
    assert m["asymmetric_invalid_rate"] == 3 / 5 and m["asymmetric_invalid_rate_n"] == 5
    words = m["asymmetric_invalid"]["by_group_word"]
    assert words["Asian_refused"] == 3 and words["white_refused"] == 0 and words["Black_refused"] == 0
    assert words["Asian"] == 0.5 and words["white"] == 1.0  # by the word substituted in
    assert m["asymmetric_invalid"]["by_attribute"]["race_most_refused"] == ["Asian"]
    # 4 originals: fewer than 10 clusters, so Wilson on the effective count, never zero width
    lo, hi = m["asymmetric_invalid_rate_ci"]
    assert 0 < lo < 0.6 < hi < 1
    assert np.isclose(m["asymmetric_invalid"]["by_attribute"]["race"], 3 / 5)


COUNTING_REFUSES_ASIAN = """
def classify(texts):
    with open("calls.log", "a") as log:
        log.write(f"{len(texts)}\\n")
    return ["INVALID" if "Asian" in t else "POS" for t in texts]
"""


def test_a_verdict_only_change_rejudges_a_finished_run_without_asking_the_model(cli, tmp_path):
    # max_asymmetric_invalid_rate decides the verdict, never the test cases: a finished run re-run
    # with another limit resumes (no --overwrite), asks the model nothing and is judged anew.
    _write(tmp_path)
    (tmp_path / "refuses.py").write_text(COUNTING_REFUSES_ASIAN)
    args = ["hinter", "--model", "py:refuses:classify", "--data", "texts.jsonl", "--attributes", "race,gender",
            "--dictionary", "dictionary.csv", "--out", "run"]  # fmt: skip
    first = cli(*args)
    calls = (tmp_path / "calls.log").read_text()
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    assert first.returncode == 1 and summary["verdict"] == "fail"
    assert summary["thresholds"]["asymmetric_invalid.by_attribute.race>0.05"]["passed"] is False

    second = cli(*args, "--max-asymmetric-invalid-rate", "0.6")
    assert second.returncode in (0, 1), second.stderr
    assert "different spec" not in second.stderr
    assert (tmp_path / "calls.log").read_text() == calls  # no model call
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    assert "asymmetric_invalid.by_attribute.race>0.05" not in summary["thresholds"]
    assert summary["thresholds"]["asymmetric_invalid.by_attribute.race>0.6"]["passed"] is True
    assert "max_asymmetric_invalid_rate: 0.6" in (tmp_path / "run/spec.yaml").read_text()
