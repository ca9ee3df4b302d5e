"""Planted intersectional bias (issue 3 §8): a py: classifier flips its answer exactly when a text holds
both a word of a chosen nationality list and one of a chosen gender list (the demonyms were race
words until issue 39 filed them under nationality). fairprobe must report every such
valid intersectional mutant as biased and hidden, and nothing else."""

import json
import re

PLANTED = """
import re
RACE = {"black", "nigerian", "kenyan"}
GENDER = {"woman", "women", "girl"}

def planted(text):
    words = set(re.findall(r"[a-z]+", text.lower()))
    return bool(words & RACE) and bool(words & GENDER)

def classify(texts):
    return ["NEG" if planted(t) else "POS" for t in texts]
"""

TEXTS = [
    "The white man told a long story about his life in the city.",
    "A Chinese actor and his brother run a small shop near the station.",
    "My Irish uncle is a tall man who loves old movies.",
    "The Mexican boy waited for his father outside the theater.",
    "An Italian gentleman and his son cooked dinner for the whole family.",
    "The film follows a thin French man and his journey across the desert.",
    "Nothing in this review mentions any person at all.",
]


def _planted(text):
    words = set(re.findall(r"[a-z]+", text.lower()))
    return bool(words & {"black", "nigerian", "kenyan"}) and bool(words & {"woman", "women", "girl"})


def test_planted_intersectional_bias_is_found_exactly(cli, tmp_path):
    assert not any(_planted(t) for t in TEXTS)
    (tmp_path / "planted.py").write_text(PLANTED)
    (tmp_path / "texts.jsonl").write_text(
        "".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(TEXTS))
    )
    r = cli(
        "hinter",
        "--model",
        "py:planted:classify",
        "--data",
        "texts.jsonl",
        "--attributes",
        "nationality,gender,body",
        "--order",
        "2",
        "--out",
        "run",
    )
    # issue 39: nothing fails (the planted pair's interval over 7 texts reaches below 5%), and 7 texts
    # cannot show any attribute within 5%: inconclusive (exit 1), never a pass
    assert r.returncode == 1, r.stderr
    # under 10,000 findings since the demonyms map onto 21 others (issue 39), so findings.jsonl is
    # written (tests/outputs covers the Parquet-only case); `fairprobe export` writes the same lines
    written = (tmp_path / "run/findings.jsonl").read_text()
    assert cli("export", "run", "--output", "exported.jsonl").returncode == 0
    assert (tmp_path / "exported.jsonl").read_text() == written
    findings = [json.loads(line) for line in (tmp_path / "run/findings.jsonl").read_text().splitlines()]
    inter = [f for f in findings if f["kind"] == "intersectional"]
    atomic = [f for f in findings if f["kind"] == "atomic"]
    expected = [f["valid"] and _planted(f["text"]) for f in inter]
    assert sum(expected) >= 5, "the planted rule must fire on several valid mutants"
    assert [f["biased"] for f in inter] == expected
    assert [f["hidden"] for f in inter] == expected
    assert not any(f["biased"] or f["hidden"] for f in atomic)
    # Only nationality+gender mutants can hold both planted words.
    pairs = {tuple(f["attributes"]) for f, e in zip(inter, expected, strict=True) if e}
    assert pairs == {("nationality", "gender")}
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    assert summary["verdict"] == "inconclusive" and summary["reasons"][0].startswith("not enough evidence")
    m = summary["metrics"]
    assert m["hidden_rate"] == 1.0
    assert m["error_rate"]["atomic"] == 0.0
    assert m["error_rate"]["by_pair"]["nationality+body"] == 0.0
    assert m["error_rate"]["by_pair"]["gender+body"] == 0.0
    valid_rg = [f for f in inter if f["valid"] and f["attributes"] == ["nationality", "gender"]]
    assert m["error_rate"]["by_pair"]["nationality+gender"] == sum(expected) / len(valid_rg)
    lo, hi = m["error_rate"]["by_pair"]["nationality+gender_ci"]
    assert lo <= m["error_rate"]["by_pair"]["nationality+gender"] <= hi
    assert m["counts"]["hidden"] == sum(expected)
    # Venn: every original with a biased nationality+gender mutant is intersectional-only.
    venn = m["venn"]["nationality+gender"]
    assert venn["atomic_only"] == venn["both"] == 0
    assert venn["intersectional_only"] == len(
        {f["original_id"] for f, e in zip(inter, expected, strict=True) if e}
    )
    html = (tmp_path / "run/report.html").read_text()
    assert "Hidden intersectional bias" in html and "<mark>" in html
