"""LLM judge: verdict parsing, bounded retries on malformed JSON, majority voting (fairprobe.oracles.llm_judge).

The judge model here is a real ``py-chat:`` chat function that answers by the content it is shown,
so the retry and voting arithmetic can be checked exactly.
"""

import pytest

from fairprobe.errors import ModelOutputError
from fairprobe.models.uri import load_chat
from fairprobe.oracles.llm_judge import LLMJudge, Verdict, majority, pair_prompt, parse_verdict

JUDGE = """
import json
CALLS = []

def judge(conversations):
    out = []
    for conv in conversations:
        CALLS.append(conv)
        text = conv[1]["content"]
        if "MALFORMED-ONCE" in text and len(conv) == 2:
            out.append("I think it is biased, honestly.")
        elif "MALFORMED-ALWAYS" in text:
            out.append("no json here")
        elif "BAD-VERDICT" in text:
            out.append('{"verdict": "MAYBE", "severity": "LOW", "explanation": "x"}')
        else:
            verdict = "BIASED" if "nurse" in text.split("Follow-up response")[1] else "UNBIASED"
            sev = "HIGH" if verdict == "BIASED" else "N/A"
            out.append("<think>check</think>```json\\n" + json.dumps(
                {"verdict": verdict, "severity": sev, "explanation": "R' says 'nurse'"}) + "\\n```")
    return out
"""


@pytest.fixture
def judge_module(tmp_path, monkeypatch):
    (tmp_path / "scripted_judge.py").write_text(JUDGE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    import scripted_judge

    importlib.reload(scripted_judge)
    return scripted_judge


@pytest.mark.parametrize(
    "text,verdict,severity",
    [
        ('{"verdict": "BIASED", "severity": "HIGH", "explanation": "x"}', "BIASED", "HIGH"),
        ('Sure! {"Verdict": "biased", "Severity": "medium", "explanation": "x"}', "BIASED", "MODERATE"),
        ('{"verdict": "UNBIASED", "severity": "HIGH"}', "UNBIASED", "N/A"),  # severity only for BIASED
        (
            '<think>{"verdict": "BIASED"}</think>{"verdict": "INDETERMINABLE", "severity": "N/A"}',
            "INDETERMINABLE",
            "N/A",
        ),
    ],
)
def test_parse_verdict(text, verdict, severity):
    v = parse_verdict(text)
    assert (v.verdict, v.severity) == (verdict, severity)


@pytest.mark.parametrize(
    "text", ["BIASED", '{"verdict": "MAYBE"}', '{"verdict": "BIASED", "severity": "EXTREME"}', "[1, 2]"]
)
def test_parse_verdict_rejects_malformed(text):
    with pytest.raises(ModelOutputError):
        parse_verdict(text)


def test_majority_and_confidence():
    b, u, i = Verdict("BIASED", "LOW"), Verdict("UNBIASED"), Verdict("INVALID")
    c = majority([b, Verdict("BIASED", "HIGH"), u])
    assert c.verdict == "BIASED" and c.confidence == pytest.approx(2 / 3) and c.severity == "HIGH"
    assert majority([u]).confidence == 1.0
    split = majority([b, u, i])
    assert split.verdict == "INDETERMINABLE" and split.confidence == pytest.approx(1 / 3)


def test_judge_retries_malformed_answers_then_gives_invalid(judge_module):
    judge = LLMJudge(load_chat("py-chat:scripted_judge:judge"), retries=2, name="scripted")
    items = [
        ("open_ended", pair_prompt("P", "P'", "R: teacher", "R': nurse")),
        ("open_ended", pair_prompt("P", "P'", "R: teacher", "R': teacher")),
        ("open_ended", "MALFORMED-ONCE " + pair_prompt("P", "P'", "a", "nurse")),
        ("open_ended", "MALFORMED-ALWAYS"),
        ("open_ended", "BAD-VERDICT"),
    ]
    verdicts = judge.judge(items)
    assert [v.verdict for v in verdicts] == ["BIASED", "UNBIASED", "BIASED", "INVALID", "INVALID"]
    assert [v.attempts for v in verdicts] == [1, 1, 2, 3, 3]
    assert verdicts[0].severity == "HIGH" and "nurse" in verdicts[0].explanation
    assert "no JSON" in verdicts[3].error and "MAYBE" in verdicts[4].error
    # 5 first answers + 3 retries of round 2 + 2 retries of round 3; a retry continues the conversation
    assert len(judge_module.CALLS) == 10
    retry = [c for c in judge_module.CALLS if len(c) == 4]
    assert retry and retry[0][2]["role"] == "assistant" and "not usable" in retry[0][3]["content"]
