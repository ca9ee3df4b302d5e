"""`fairprobe compare`: paired statistics, and two planted HInter models that differ on one slice only."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from reliability.helpers import assert_one_red_line

from fairprobe.compare.paired import holm, mcnemar_exact, paired_binary, paired_continuous, wilcoxon_p

# -- the statistics ---------------------------------------------------------------------------------


def test_mcnemar_exact_matches_the_binomial_tail():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(10, 0) == pytest.approx(2 * 0.5**10)
    # 8 vs 2: two-sided tail P(X <= 2 | n=10, 1/2) * 2 = 2 * 56/1024
    assert mcnemar_exact(8, 2) == pytest.approx(2 * 56 / 1024)


def test_holm_adjusts_step_down_and_keeps_order():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]) == [0.5]
    assert holm([0.9, 0.001]) == pytest.approx([0.9, 0.002])


def test_a_paired_binary_difference_resamples_clusters():
    base = np.zeros(40, dtype=bool)
    new = base.copy()
    new[:10] = True  # ten cases became biased, all in the first two clusters
    clustered = paired_binary(base, new, [str(i // 5) for i in range(40)], seed=1)
    independent = paired_binary(base, new, [str(i) for i in range(40)], seed=1)
    assert clustered.delta == pytest.approx(0.25) and clustered.discordant == (10, 0)
    assert clustered.p == pytest.approx(2 * 0.5**10)
    width = clustered.delta_ci[1] - clustered.delta_ci[0]
    assert width > independent.delta_ci[1] - independent.delta_ci[0]


def test_identical_outcomes_give_p_one_and_no_change():
    same = np.array([True, False, True, False])
    r = paired_binary(same, same, ["a", "a", "b", "b"])
    assert r.p == 1.0 and r.delta == 0.0
    c = paired_continuous(np.array([0.1, 0.5, 0.7]), np.array([0.1, 0.5, 0.7]), ["a", "b", "c"])
    assert c.p == 1.0 and c.delta == 0.0
    assert wilcoxon_p(np.array([0.0, 0.0])) == 1.0


# -- HInter end to end: the new model adds a bias on gender and keeps race as it was ----------------

TEXTS = [
    f"The {person} said the {thing} was {quality}."
    for person in ("woman", "man", "girl", "boy", "Black man", "white woman", "Asian girl", "mother")
    for thing in ("film", "plot", "cast", "ending", "music")
    for quality in ("good", "bad")
]
BASE = """
def classify(texts):
    return ["NEG" if "bad" in t else "POS" for t in texts]
"""
GENDER_BIASED = """
GENDER = {"woman", "women", "girl", "girls", "mother", "she", "her", "female", "lady"}
def classify(texts):
    out = []
    for t in texts:
        words = set(t.lower().replace(".", " ").split())
        out.append("NEG" if "bad" in t or words & GENDER else "POS")
    return out
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The two planted models' HInter runs, made once for the module (the real executable)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from childenv import pythonpath

    folder = tmp_path_factory.mktemp("compare")
    (folder / "data.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS))
    (folder / "base.py").write_text(BASE)
    (folder / "new.py").write_text(GENDER_BIASED)
    env = {**os.environ, "FAIRPROBE_CACHE": "off", "PYTHONPATH": pythonpath(folder)}
    exe = Path(sys.executable).parent / "fairprobe"
    for name in ("base", "new"):
        r = subprocess.run(
            [str(exe), "hinter", "--model", f"py:{name}:classify", "--data", "data.jsonl", "--attributes",
             "race,gender", "--order", "1", "--no-invariant", "--out", f"runs/{name}"],
            cwd=folder, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert r.returncode in (0, 1), r.stderr
    return folder


@pytest.fixture
def two_runs(runs, tmp_path):
    """The module's runs, seen from this test's folder (where `cli` runs)."""
    (tmp_path / "runs").symlink_to(runs / "runs")
    return tmp_path


def _slices(folder):
    return json.loads((folder / "summary.json").read_text())["metrics"]["slices"]["error_rate"]


def test_compare_reports_exactly_the_regressed_slice(cli, two_runs):
    r = cli("compare", "runs/base", "runs/new", "--out", "cmp")
    assert r.returncode == 1, r.stderr
    slices = _slices(two_runs / "cmp")
    assert slices["gender"]["verdict"] == "regressed" and slices["gender"]["p_adjusted"] < 0.01
    assert slices["race"]["verdict"] == "no significant change" and slices["race"]["p"] == 1.0
    summary = json.loads((two_runs / "cmp/summary.json").read_text())
    assert summary["verdict"] == "fail" and "got worse on" in summary["reasons"][0]
    assert "gender: 0% → 50%" in summary["reasons"][0]  # the worst slice first, in percent
    md = (two_runs / "cmp/summary.md").read_text()
    assert "| gender |" in md and "**regressed**" in md
    suite = ET.parse(two_runs / "cmp/junit.xml").getroot()
    assert int(suite.get("failures")) >= 1
    html = (two_runs / "cmp/report.html").read_text()
    assert "Cases that became worse" in html and "<mark" in html
    lines = [json.loads(x) for x in (two_runs / "cmp/findings.jsonl").read_text().splitlines()]
    worse = [x for x in lines if x["status"] == "became worse"]
    assert worse and all("gender" in x["slices"] for x in worse)

    swapped = cli("compare", "runs/new", "runs/base", "--out", "cmp2")
    assert swapped.returncode == 0, swapped.stdout + swapped.stderr
    assert _slices(two_runs / "cmp2")["gender"]["verdict"] == "improved"


def test_a_large_comparison_writes_its_cases_as_parquet_not_json_lines(two_runs, monkeypatch):
    """As for runs: findings.jsonl up to the limit, Parquet above it (and the other file removed)."""
    import fairprobe
    from fairprobe.run import findings as export

    out = two_runs / "cmp"
    small = fairprobe.compare(two_runs / "runs/base", two_runs / "runs/new", out=out)
    lines = [json.loads(x) for x in (out / "findings.jsonl").read_text().splitlines()]
    assert len(lines) > 3 and not (out / "findings.parquet").exists()
    monkeypatch.setattr(export, "JSONL_LIMIT", 3)
    large = fairprobe.compare(two_runs / "runs/base", two_runs / "runs/new", out=out)
    assert not (out / "findings.jsonl").exists() and (out / "findings.parquet").is_file()
    assert list(large.findings()) == lines
    assert large.summary["metrics"] == small.summary["metrics"]


def test_a_model_compared_with_itself_passes_with_p_one(cli, two_runs):
    r = cli("compare", "runs/base", "runs/base", "--out", "self")
    assert r.returncode == 0, r.stdout + r.stderr
    slices = _slices(two_runs / "self")
    assert all(s["p"] == 1.0 and s["verdict"] == "no significant change" for s in slices.values())


def test_runs_over_different_inputs_are_inconclusive(cli, two_runs):
    (two_runs / "other.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS[:30]))
    (two_runs / "new.py").write_text(GENDER_BIASED)
    r = cli("hinter", "--model", "py:new:classify", "--data", "other.jsonl", "--attributes", "race,gender",
            "--order", "1", "--no-invariant", "--out", "other")  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    c = cli("compare", "runs/base", "other", "--out", "cmp")
    assert c.returncode == 1
    summary = json.loads((two_runs / "cmp/summary.json").read_text())
    assert summary["verdict"] == "inconclusive"
    assert any("not over the same inputs" in x for x in summary["reasons"])
    assert any("appear in both runs" in x for x in summary["reasons"])


def test_bad_compare_input_is_one_line(cli, two_runs):
    (two_runs / "plain").mkdir()
    assert_one_red_line(cli("compare", "runs/base", "plain", "--out", "cmp"), "not a fairprobe run folder")
    (two_runs / "busy").mkdir()
    (two_runs / "busy" / "mine.txt").write_text("x")
    assert_one_red_line(cli("compare", "runs/base", "runs/new", "--out", "busy"), "did not write")
    assert (two_runs / "busy" / "mine.txt").read_text() == "x"


def test_a_spec_block_with_models_runs_each_and_compares_with_the_first(cli, tmp_path):
    (tmp_path / "data.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS))
    (tmp_path / "base.py").write_text(BASE)
    (tmp_path / "new.py").write_text(GENDER_BIASED)
    (tmp_path / "spec.yaml").write_text(
        "out: runs\nhinter:\n  models: [py:base:classify, py:new:classify]\n  data: data.jsonl\n"
        "  attributes: [race, gender]\n  order: 1\n  invariant: false\n"
    )
    r = cli("run", "spec.yaml")
    assert r.returncode == 1, r.stdout + r.stderr
    folders = sorted(p.name for p in (tmp_path / "runs" / "hinter").iterdir())
    assert len(folders) == 3 and folders[0].startswith("compare-py-new-classify")
    assert folders[1].startswith("py-base-classify") and folders[2].startswith("py-new-classify")
    cmp = tmp_path / "runs" / "hinter" / folders[0]
    assert _slices(cmp)["gender"]["verdict"] == "regressed"
    bad = tmp_path / "bad.yaml"
    bad.write_text("hinter:\n  models: [py:base:classify]\n  data: data.jsonl\n")
    assert_one_red_line(cli("run", "bad.yaml"), "two or more model URIs")


def test_model_repeated_on_the_command_line_runs_each_and_compares(cli, tmp_path):
    (tmp_path / "data.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS))
    (tmp_path / "base.py").write_text(BASE)
    (tmp_path / "new.py").write_text(GENDER_BIASED)
    r = cli("hinter", "--model", "py:base:classify", "--model", "py:new:classify", "--data", "data.jsonl",
            "--attributes", "race,gender", "--order", "1", "--no-invariant", "--out", "two")  # fmt: skip
    assert r.returncode == 1, r.stdout + r.stderr
    names = sorted(p.name for p in (tmp_path / "two").iterdir())
    assert [n.split("-")[0] for n in names] == ["compare", "py", "py"]
    assert _slices(tmp_path / "two" / names[0])["gender"]["verdict"] == "regressed"
    dup = cli("hinter", "--model", "py:base:classify", "--model", "py:base:classify", "--out", "dup")
    assert_one_red_line(dup, "same model twice")
