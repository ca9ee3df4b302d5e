"""``fairprobe audit`` end to end with real black boxes: the Adult case-study model (py:), the
embedded IMDB sentiment classifier, cached scores and the SmolLM2 llama.cpp server."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

CASE_A = "py:fairprobe.methods.audit.casestudy:adult_case_a"
SMALL = [
    "--data",
    "adult",
    "--group-col",
    "sex",
    "--pool-size",
    "200",
    "--features",
    "ngrams",
    "--budget",
    "52",
    "--cerm-steps",
    "40",  # the defaults' 600 steps and 16 refits are for real audits; the tests check behaviour
    "--refits",
    "2",
]


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def _judged(res, s: dict) -> None:
    """The default gates' verdict follows the seeds' intervals (issue 39): pass only when every seed's
    interval lies within ±0.1, fail when every one lies beyond, else inconclusive with the queries a
    pass would need. The small budgets these tests use mostly decide nothing: exit 1, never a pass."""
    seeds = s["metrics"]["seeds"].values()
    if (s["metrics"]["invalid_rate"] or 0) >= 0.5:
        want = "inconclusive"  # too many unreadable answers: nothing is judged
    elif all(-0.1 <= e["lower"] and e["upper"] <= 0.1 for e in seeds):
        want = "pass"
    elif s["metrics"]["lower"] > 0.1 or s["metrics"]["upper"] < -0.1:
        want = "fail"
    else:
        want = "inconclusive"
        assert any(r["status"] != "shown" for r in s["evidence"])
    assert s["verdict"] == want, s["reasons"]
    assert res.returncode == (0 if want == "pass" else 1), res.stderr


def test_bafa_on_case_a_end_to_end_and_cached_rerun(cli, tmp_path: Path) -> None:
    res = cli("audit", "--model", CASE_A, *SMALL, "--epsilon", "0.001", "--reference", "--out", "run1")
    s = _summary(tmp_path / "run1")
    _judged(res, s)
    m = s["metrics"]
    assert m["stopped_by"] == "budget" and m["queries"] == 52
    assert m["lower"] <= m["estimate"] <= m["upper"]
    assert m["error"] == pytest.approx(abs(m["estimate"] - m["true_value"]))
    assert 0.0 <= m["coverage"] <= 1.0 and len(m["coverage_ci"]) == 2
    assert s["audit"]["black_box_calls"] >= 190  # the reference scoring of the pool (some texts repeat)
    rows = list(csv.DictReader(open(tmp_path / "run1" / "trajectory.csv", encoding="utf-8")))
    assert [int(r["queries"]) for r in rows] == [4, 20, 36, 52]
    assert all(float(r["lower"]) <= float(r["upper"]) for r in rows)
    assert re.search(r"bafa: estimate [+-]\d\.\d{4} in \[", res.stdout)
    # progress against the query budget, with a rate and an ETA, on stderr
    # (an ETA shows on the lines before the last once the run is 2 s old; this one takes about 4 s)
    assert re.search(r"seed 0 queries \(budget\): 52/52 \(100%\) [\d.]+/s", res.stderr)
    # Same audit into a fresh folder: every answer comes from the cache, no black-box call.
    res = cli("audit", "--model", CASE_A, *SMALL, "--epsilon", "0.001", "--reference", "--out", "run2")
    s2 = _summary(tmp_path / "run2")
    _judged(res, s2)
    assert s2["audit"]["black_box_calls"] == 0
    assert s2["metrics"]["estimate"] == pytest.approx(m["estimate"])
    # Its trajectory evaluates with `audit evaluate`.
    res = cli("audit", "evaluate", str(tmp_path / "run1" / "trajectory.csv"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("trajectory q@0.02=")


def test_stopping_by_epsilon_and_fail_on(cli, tmp_path: Path) -> None:
    res = cli(
        "audit",
        "--model",
        CASE_A,
        *SMALL,
        "--epsilon",
        "0.45",
        "--cerm-steps",
        "20",
        "--out",
        "r",
        "--fail-on",
        "upper>0.5",
    )
    m = _summary(tmp_path / "r")["metrics"]
    assert m["stopped_by"] == "epsilon" and m["half_width"] <= 0.45 and m["queries"] < 52
    assert res.returncode == (1 if m["upper"] > 0.5 else 0)


def test_offline_scores_file_and_power_oracle(cli, tmp_path: Path) -> None:
    from fairprobe.methods.audit.casestudy import adult_case_b
    from fairprobe.methods.audit.pool import adult_rows

    rows = adult_rows("test")
    preds = adult_case_b([r["text"] for r in rows])
    with open(tmp_path / "scores.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "score"])
        for r, p in zip(rows, preds, strict=True):
            w.writerow([r["id"], round(p.scores[">50K"] * 100)])  # 0-100 confidences, as in case B
    res = cli(
        "audit", "--scores", "scores.csv", *SMALL, "--strategy", "power", "--epsilon", "0.001", "--out", "p"
    )
    s = _summary(tmp_path / "p")
    _judged(res, s)
    assert s["metrics"]["queries"] == 52 and s["audit"]["oracle_strategy"] is True
    assert s["model"]["uri"] == "scores:scores.csv"
    assert "true_value" in s["metrics"]  # the file scores the whole pool
    res = cli("audit", "--model", CASE_A, *SMALL, "--strategy", "power", "--out", "q")
    assert res.returncode == 2 and "oracle" in res.stderr


def test_usage_errors_are_one_line(cli, tmp_path: Path) -> None:
    res = cli("audit", "--data", "adult", "--group-col", "sex", "--out", "x")
    assert res.returncode == 2 and "--model" in res.stderr and "Traceback" not in res.stderr
    res = cli(
        "audit",
        "--model",
        CASE_A,
        "--data",
        "adult",
        "--group-col",
        "sex",
        "--positive-label",
        "rich",
        "--out",
        "y",
    )
    assert res.returncode == 2 and "positive-label" in res.stderr


def test_spec_block(cli, tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(
        "seed: 1\naudit:\n"
        f"  model: {CASE_A}\n  data: adult\n  group_col: sex\n  pool_size: 150\n  budget: 36\n"
        "  strategy: cerm-only\n  features: ngrams\n  cerm_steps: 20\n  refits: 2\n  metric: eo\n  epsilon: 0.001\n",
        encoding="utf-8",
    )
    res = cli("run", "spec.yaml", "--out", "runs")
    s = _summary(tmp_path / "runs" / "audit")
    _judged(res, s)
    assert s["metrics"]["metric"] == "eo" and s["metrics"]["queries"] == 36


_MALE = {"he", "him", "his", "man", "men", "actor", "boy", "father", "husband", "brother", "son", "mr"}
_FEMALE = {
    "she",
    "her",
    "hers",
    "woman",
    "women",
    "actress",
    "girl",
    "mother",
    "wife",
    "sister",
    "daughter",
    "mrs",
}


def _imdb_with_gender(path: Path) -> None:
    """IMDB sample with a reproducible group: the review's majority of gendered words (ties → male)."""
    from fairprobe.data.datasets import load_dataset

    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "text", "label", "group"])
        for r in load_dataset("imdb-sample"):
            words = re.findall(r"[a-z]+", r.text.lower())
            female = sum(x in _FEMALE for x in words) > sum(x in _MALE for x in words)
            w.writerow([r.id, r.text, r.label, "female" if female else "male"])


def test_imdb_sentiment_black_box(cli, tmp_path: Path) -> None:
    _imdb_with_gender(tmp_path / "imdb.csv")
    res = cli(
        "audit",
        "--model",
        "embedded:imdb-sentiment",
        "--data",
        "imdb.csv",
        "--group-col",
        "group",
        "--positive-label",
        "POS",
        "--strategy",
        "random",
        "--budget",
        "60",
        "--epsilon",
        "0.001",
        "--reference",
        "--out",
        "imdb",
    )
    s = _summary(tmp_path / "imdb")
    _judged(res, s)
    assert s["audit"]["groups"] == ["male", "female"]
    assert -1.0 <= s["metrics"]["true_value"] <= 1.0
    assert s["metrics"]["queries"] == 60


@pytest.mark.slow
def test_imdb_bafa_minilm(cli, tmp_path: Path) -> None:
    _imdb_with_gender(tmp_path / "imdb.csv")
    res = cli(
        "audit",
        "--model",
        "embedded:imdb-sentiment",
        "--data",
        "imdb.csv",
        "--group-col",
        "group",
        "--positive-label",
        "POS",
        "--features",
        "minilm",
        "--cerm-steps",
        "60",
        "--refits",
        "0",
        "--budget",
        "200",
        "--epsilon",
        "0.0001",
        "--reference",
        "--out",
        "imdb",
    )
    _judged(res, _summary(tmp_path / "imdb"))
    m = _summary(tmp_path / "imdb")["metrics"]
    assert m["stopped_by"] == "pool" and m["lower"] <= m["true_value"] <= m["upper"]


def test_llm_scorer_through_llama_server(cli, tmp_path: Path, llama_server: str) -> None:
    """SmolLM2 behind a real llama.cpp server as a 0-100 confidence scorer (the paper's Bias-in-Bios
    setup), audited with BAFA's C-ERM intervals on a small pool; a re-run asks the server nothing."""
    args = [
        "audit",
        "--model",
        f"openai+{llama_server}#smollm2",
        "--data",
        "adult",
        "--group-col",
        "sex",
        "--positive-label",
        ">50K",
        "--pool-size",
        "60",
        "--features",
        "ngrams",
        "--cerm-steps",
        "15",
        "--strategy",
        "bafa",
        "--budget",
        "8",
        "--epsilon",
        "0.001",
        "--k",
        "4",
    ]
    res = cli(*args, "--out", "llm", timeout=600)
    s = _summary(tmp_path / "llm")
    _judged(res, s)
    m = s["metrics"]
    assert m["queries"] == 8 and m["stopped_by"] == "budget"
    assert -1.0 <= m["lower"] <= m["estimate"] <= m["upper"] <= 1.0
    assert s["audit"]["black_box_calls"] == 8
    assert 0 <= s["audit"]["invalid_answers"] <= 8
    # Unparsable chat answers are counted in the metrics too (issue 18).
    assert m["cases"] == 8 and m["invalid"] == s["audit"]["invalid_answers"]
    assert m["invalid_rate"] == pytest.approx(m["invalid"] / 8)
    rows = list(csv.DictReader(open(tmp_path / "llm" / "trajectory.csv", encoding="utf-8")))
    assert [int(r["queries"]) for r in rows] == [4, 8]
    res = cli(*args, "--out", "llm2", timeout=600)
    s2 = _summary(tmp_path / "llm2")
    _judged(res, s2)
    assert s2["audit"]["black_box_calls"] == 0 and s2["metrics"]["estimate"] == pytest.approx(m["estimate"])
