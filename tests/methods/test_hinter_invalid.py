"""Issue 16 for HInter: INVALID answers are never bias, a run that tested nothing (or could not read
the model) is inconclusive (exit 1), and every rate over zero cases is null — through the real CLI
with real `py-chat:` models and the real parser."""

import json

from fairprobe.methods.hinter.analysis import analyse
from fairprobe.methods.hinter.block import HInterBlock

GIBBERISH = """
def chat(conversations):
    return ["zzz qqq" for _ in conversations]
"""

# Parses for the originals, but answers gibberish whenever the text mentions a woman: the original
# -> INVALID flips that the old oracle counted as "biased".
FLAKY = """
def chat(conversations):
    out = []
    for conv in conversations:
        text = conv[-1]["content"].lower()
        out.append("no idea, sorry" if " woman" in text or " women" in text else "Positive")
    return out
"""

TEXTS = [
    "The white man told a long story about his life in the city.",
    "My Irish uncle is a tall man who loves old movies.",
    "The Mexican boy waited for his father outside the theater.",
]

NO_PEOPLE = [
    "The plot moves slowly and the music is loud.",
    "Nothing in this review mentions anything at all.",
]

SHOTS = [{"text": "A great film.", "label": "POS"}, {"text": "A dull film.", "label": "NEG"}]


def _write(tmp_path, name, texts):
    (tmp_path / "shots.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SHOTS))
    (tmp_path / name).write_text(
        "".join(json.dumps({"id": f"t{i}", "text": t, "label": "POS"}) + "\n" for i, t in enumerate(texts))
    )


def _hinter(cli, model, data, out, *extra):
    return cli(
        "hinter",
        "--model",
        model,
        "--data",
        data,
        "--task",
        "imdb",
        "--attributes",
        "race,gender",
        "--out",
        out,
        "--few-shot-data",
        "shots.jsonl",
        *extra,
    )


def test_all_invalid_model_is_inconclusive_never_pass(cli, tmp_path):
    (tmp_path / "gibberish.py").write_text(GIBBERISH)
    _write(tmp_path, "texts.jsonl", TEXTS)
    r = _hinter(
        cli, "py-chat:gibberish:chat", "texts.jsonl", "run", "--fail-on", "error_rate.intersectional>0.05"
    )
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "inconclusive" in (r.stdout + r.stderr).lower()
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    m = summary["metrics"]
    assert summary["verdict"] == "inconclusive" and summary["passed"] is False
    assert m["tested"] > 0 and m["invalid"] == m["tested"] and m["invalid_rate"] == 1.0
    # Every answer INVALID: nothing was judged, so every rate is "no data", never 0.0.
    assert m["error_rate"]["intersectional"] is None and m["error_rate"]["intersectional_ci"] is None
    assert m["error_rate"]["atomic"] is None and m["hidden_rate"] is None
    assert m["error_rate"]["intersectional_invalid"] > 0
    findings = [json.loads(x) for x in (tmp_path / "run/findings.jsonl").read_text().splitlines()]
    assert not any(f["biased"] for f in findings)
    assert all(f["invalid"] for f in findings if f["valid"])
    html = (tmp_path / "run/report.html").read_text()
    assert "no data" in html
    # the bar chart keeps every mutation's row and draws "no data" in it (it used to drop the rows)
    assert html.count('class="val">no data</text>') >= 2


def test_empty_dataset_no_mutants_is_inconclusive(cli, tmp_path):
    _write(tmp_path, "none.jsonl", NO_PEOPLE)
    r = cli(
        "hinter",
        "--model",
        "embedded:imdb-sentiment",
        "--data",
        "none.jsonl",
        "--attributes",
        "race,gender",
        "--out",
        "run",
        "--fail-on",
        "error_rate.intersectional>0.05",
    )
    assert r.returncode == 1, (r.stdout, r.stderr)
    text = (r.stdout + r.stderr).lower()
    assert "inconclusive" in text or "no data" in text
    m = json.loads((tmp_path / "run/summary.json").read_text())["metrics"]
    assert m["tested"] == 0 and m["invalid_rate"] is None
    assert m["error_rate"]["intersectional"] is None and m["error_rate"]["intersectional_n"] == 0
    assert m["mutants"]["atomic"]["generated"] == 0
    assert (tmp_path / "run/report.html").is_file()


def test_invalid_flip_is_invalid_not_biased(cli, tmp_path):
    (tmp_path / "flaky.py").write_text(FLAKY)
    _write(tmp_path, "texts.jsonl", TEXTS)
    r = _hinter(cli, "py-chat:flaky:chat", "texts.jsonl", "run")
    findings = [json.loads(x) for x in (tmp_path / "run/findings.jsonl").read_text().splitlines()]
    flips = [f for f in findings if f["valid"] and f["mutant_output"] == ["INVALID"]]
    assert flips, "the planted model must answer gibberish for some valid mutants"
    assert all(f["invalid"] and not f["biased"] and not f["hidden"] for f in flips)
    # The model says Positive everywhere else: no real bias, so every rate with data is 0.
    assert not any(f["biased"] for f in findings)
    m = json.loads((tmp_path / "run/summary.json").read_text())["metrics"]
    assert m["invalid"] == len(flips) and m["tested"] == sum(1 for f in findings if f["valid"])
    assert m["error_rate"]["atomic"] == 0.0
    assert m["error_rate"]["atomic_invalid"] + m["error_rate"]["intersectional_invalid"] == len(flips)
    assert r.returncode == 1, (r.stdout, r.stderr)
    if m["invalid_rate"] < 0.5:
        # no bias error, but answers for men and none for women: unequal refusal fails the run
        summary = json.loads((tmp_path / "run/summary.json").read_text())
        assert summary["verdict"] == "fail"
        assert any("one side only" in x and "gender mutants" in x for x in summary["reasons"])


def test_rates_over_zero_cases_are_none_in_analysis():
    block = HInterBlock(model="py:x:y", attributes=["race", "gender"])
    analysis = analyse(block, [], seed=0)
    m = analysis.metrics
    assert m["tested"] == 0 and m["invalid"] == 0 and m["invalid_rate"] is None
    assert m["error_rate"]["atomic"] is None and m["error_rate"]["by_pair"]["race+gender"] is None
    assert m["hidden_share_by_pair"]["race+gender"] is None
    assert m["rq4_1"]["atomic_with_intersectional"] is None
    assert m["originals_with_bias"]["intersectional"] is None
