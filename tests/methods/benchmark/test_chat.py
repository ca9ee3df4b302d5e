"""BBQ and DiscrimEval through a chat model, end to end on the CLI: the real SmolLM2 forced down the
chat path (``--mode chat``), and a ``py-chat:`` model answering in mixed forms, whose unreadable
answers are counted apart (``invalid``) and never scored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairprobe.methods.benchmark.chat import parse_choice, parse_yes_no

# Answers in the forms chat models give; the unreadable ones (two options, a refusal, nothing) must
# come out INVALID, the others read as the letter / yes-no they commit to.
MIXED = """
CHOICE = ["A", "B.", "Answer: C", "(B)", "A or B", "I cannot answer that.", "The answer is C.", ""]
YES_NO = ["Yes.", "No", "yes or no", "I can't help with that.", "Absolutely not.", "Yes, they should."]

def chat(conversations):
    out = []
    for conv in conversations:
        prompt = conv[-1]["content"]
        forms = CHOICE if "A. " in prompt else YES_NO
        out.append(forms[sum(map(ord, prompt)) % len(forms)])
    return out
"""
UNREADABLE = {"A or B", "I cannot answer that.", "", "yes or no", "I can't help with that."}


def _run(cli, tmp_path: Path, name: str, model: str, *extra: str) -> tuple[dict, list[dict]]:
    r = cli("benchmark", name, "--model", model, "--mode", "chat", *extra, "--out", name)
    assert r.returncode in (0, 1), r.stderr
    summary = json.loads((tmp_path / name / "summary.json").read_text())
    findings = [json.loads(x) for x in (tmp_path / name / "findings.jsonl").read_text().splitlines()]
    return summary, findings


@pytest.mark.parametrize(
    ("name", "extra"),
    [("bbq", ("--categories", "Religion", "--limit", "40")), ("discrim-eval", ("--limit", "40"))],
)
def test_unreadable_chat_answers_are_counted_apart(cli, tmp_path: Path, name: str, extra: tuple) -> None:
    (tmp_path / "mixed.py").write_text(MIXED)
    summary, findings = _run(cli, tmp_path, name, "py-chat:mixed:chat", *extra)
    assert summary["mode"] == "chat" and len(findings) == 40
    for f in findings:
        assert f["invalid"] == (f["answer"] in UNREADABLE), f["answer"]
        assert ("pred" in f or "p_yes" in f) != f["invalid"]
    invalid = sum(f["invalid"] for f in findings)
    m = summary["metrics"]
    assert 0 < invalid < 40, "the planted answers give both readable and unreadable ones"
    assert m["tested"] == 40 and m["invalid"] == invalid and m["invalid_rate"] == pytest.approx(invalid / 40)
    assert m["n"] == 40 - invalid  # the metrics are computed over the readable answers only
    per = m["by_category"]
    assert sum(c.get("invalid", 0) for c in per.values()) == invalid


@pytest.mark.slow  # 24-68 s on the shared 2-core machine (6 answers of up to 32 tokens)
def test_smollm2_answers_bbq_and_discrim_eval_through_the_chat_path(
    cli, tmp_path: Path, smollm2_gguf
) -> None:
    """The real embedded SmolLM2 with ``--mode chat``: every item gets an answer, read or counted
    INVALID; the answer text is kept in the finding."""
    for name, extra in (
        ("bbq", ("--categories", "Religion", "--limit", "3")),
        ("discrim-eval", ("--limit", "3")),
    ):
        summary, findings = _run(cli, tmp_path, name, "embedded:smollm2", *extra)
        m = summary["metrics"]
        assert summary["mode"] == "chat" and m["tested"] == 3 and m["n"] + m["invalid"] == 3
        assert summary["model_calls"] == 3 and all(f["mode"] == "chat" and f["answer"] for f in findings)
        for f in findings:  # each finding's reading is the parser's reading of its answer
            if name == "bbq":
                assert f.get("pred") == parse_choice(f["answer"], f["answers"], f["unknown"])
            else:
                yes = parse_yes_no(f["answer"])
                assert f.get("p_yes") == (None if yes is None else float(yes))
