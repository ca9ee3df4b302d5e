"""HInter command options and bad input, on a fast keyword classifier (`py:`)."""

import json

import pytest

MODEL = """
def classify(texts):
    # Flips on "woman" only: atomic gender mutants man->woman are biased.
    return ["NEG" if "woman" in t.lower() else "POS" for t in texts]
"""

TEXTS = [
    "The white man walked into the room and sat down.",
    "A tall man and his Irish friend watched a movie.",
    "This sentence has no sensitive words in it.",
]


@pytest.fixture
def setup(tmp_path):
    (tmp_path / "kw.py").write_text(MODEL)
    (tmp_path / "t.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS))
    return tmp_path


def _findings(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_no_invariant_marks_every_mutant_valid_and_order_3_adds_triples(cli, setup):
    r = cli(
        "--no-default-gates",  # about the option, not the verdict (the planted model is biased)
        "hinter",
        "--model",
        "py:kw:classify",
        "--data",
        "t.jsonl",
        "--attributes",
        "nationality,gender,body",  # "his Irish friend": a nationality word since issue 39
        "--order",
        "3",
        "--no-invariant",
        "--out",
        "run",
    )
    assert r.returncode == 0, r.stderr
    findings = _findings(setup / "run/findings.jsonl")
    assert findings and all(f["valid"] for f in findings)
    triples = [f for f in findings if len(f["attributes"]) == 3]
    assert triples and all(f["kind"] == "intersectional" and len(f["parents"]) == 3 for f in triples)
    summary = json.loads((setup / "run/summary.json").read_text())
    pairs = set(summary["metrics"]["error_rate"]["by_pair"])
    assert pairs >= {"nationality+gender", "nationality+gender+body"}
    # Atomic man->woman mutants flip the keyword model.
    assert any(f["biased"] and f["kind"] == "atomic" and f["attributes"] == ["gender"] for f in findings)
    assert "parser" not in summary  # no parser ran


def test_score_discarded_counts_false_positives(cli, setup):
    r = cli(
        "--no-default-gates",  # about the option, not the verdict (the planted model is biased)
        "hinter",
        "--model",
        "py:kw:classify",
        "--data",
        "t.jsonl",
        "--attributes",
        "race,gender",
        "--score-discarded",
        "--out",
        "run",
    )
    assert r.returncode == 0, r.stderr
    findings = _findings(setup / "run/findings.jsonl")
    discarded = [f for f in findings if not f["valid"]]
    assert all("false_positive" in f and f["mutant_output"] is not None for f in discarded)
    assert not any(f["biased"] for f in discarded)  # discarded mutants never count as bias
    summary = json.loads((setup / "run/summary.json").read_text())
    fp = summary["metrics"]["false_positives"]
    assert fp["atomic"] + fp["intersectional"] == sum(f["false_positive"] for f in discarded)
    assert summary["parser"].startswith("en_core_web_sm")


def test_user_csv_dictionary(cli, setup):
    (setup / "pairs.csv").write_text("attribute,word,replacement\ngender,man,woman\nrace,white,Black\n")
    r = cli(
        "--no-default-gates",  # about the option, not the verdict (the planted model is biased)
        "hinter",
        "--model",
        "py:kw:classify",
        "--data",
        "t.jsonl",
        "--attributes",
        "race,gender",
        "--dictionary",
        "pairs.csv",
        "--no-invariant",
        "--out",
        "run",
    )
    assert r.returncode == 0, r.stderr
    findings = _findings(setup / "run/findings.jsonl")
    pairs = {tuple(rep[1:]) for f in findings for rep in f["replacements"]}
    assert pairs == {("man", "woman"), ("white", "Black")}
    inter = [f for f in findings if f["kind"] == "intersectional"]
    assert [f["text"] for f in inter] == ["The Black woman walked into the room and sat down."]


def _error(r):
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    return r.stderr.strip().splitlines()[-1]


def test_bad_input_is_one_clear_line(cli, setup):
    line = _error(
        cli(
            "hinter",
            "--model",
            "py:kw:classify",
            "--data",
            "t.jsonl",
            "--attributes",
            "race,caste",
            "--out",
            "r1",
        )
    )
    assert "caste" in line and "race" in line
    (setup / "empty.csv").write_text("text\n")
    assert (
        "empty"
        in _error(cli("hinter", "--model", "py:kw:classify", "--data", "empty.csv", "--out", "r2")).lower()
    )
    assert "order" in _error(
        cli(
            "hinter",
            "--model",
            "py:kw:classify",
            "--data",
            "t.jsonl",
            "--attributes",
            "race",
            "--order",
            "2",
            "--out",
            "r3",
        )
    )
    (setup / "bad.csv").write_text("attribute,word,replacement\ngender,man\n")
    line = _error(
        cli(
            "hinter",
            "--model",
            "py:kw:classify",
            "--data",
            "t.jsonl",
            "--dictionary",
            "bad.csv",
            "--out",
            "r4",
        )
    )
    assert "bad.csv" in line and "line 2" in line


def test_lexicon_extract_on_a_social_bias_frames_file(cli, tmp_path):
    from pathlib import Path

    sample = Path(__file__).parents[1] / "data" / "sbic_sample.csv"
    r = cli("lexicon", "extract", str(sample), "--out", "cands.csv")
    assert r.returncode == 0, r.stderr
    rows = (tmp_path / "cands.csv").read_text().splitlines()
    assert rows[0].startswith("attribute,word,replacement") and len(rows) > 1


def test_fluency_scores_originals_valid_and_discarded_side_by_side(cli, setup):
    r = cli(
        "--no-default-gates",  # about the option, not the verdict (the planted model is biased)
        "hinter",
        "--model",
        "py:kw:classify",
        "--data",
        "t.jsonl",
        "--attributes",
        "race,gender",
        "--fluency",
        "embedded:smollm2",
        "--max-mutants-per-text",
        "6",
        "--out",
        "run",
    )
    assert r.returncode == 0, r.stderr
    findings = _findings(setup / "run/findings.jsonl")
    assert all(isinstance(f["fluency"], float) and isinstance(f["original_fluency"], float) for f in findings)
    fl = json.loads((setup / "run/summary.json").read_text())["metrics"]["fluency"]
    assert fl["n_original"] == 2  # the third text has no sensitive words, so no mutants
    assert fl["n_valid"] + fl["n_discarded"] == len(findings)
    assert fl["original_mean"] < 0  # mean token log-likelihood
    assert "Grammatical validity" in (setup / "run/report.html").read_text()
