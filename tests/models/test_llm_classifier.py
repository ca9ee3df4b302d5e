"""Label parsing and the LLMClassifier wrapper (the real-LLM run is in test_openai_server.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fairprobe.errors import SpecError
from fairprobe.models import INVALID, ClassificationTask, LabelParser, LLMClassifier, load_chat

CONTRACT = ["Waivers", "No Waivers", "Uncapped Liability"]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("No Waivers", {"No Waivers"}),  # the pitfall: never also "Waivers"
        ("no   waivers.", {"No Waivers"}),
        ("Label: WAIVERS", {"Waivers"}),
        ("The clause is about waivers.", {"Waivers"}),
        ("Waivers, waivers!", {"Waivers"}),  # one label said twice is still one label
        ("Waivers or No Waivers", {INVALID}),  # two different labels
        ("Waiverscheck", {INVALID}),  # no substring hits
        ("I cannot tell.", {INVALID}),
        ("", {INVALID}),
    ],
)
def test_single_label_parser(answer: str, expected: set[str]) -> None:
    assert LabelParser(CONTRACT).parse(answer).labels == expected


def test_multi_label_parser_and_aliases() -> None:
    multi = LabelParser(CONTRACT, multi_label=True)
    assert multi.parse("No Waivers, Uncapped Liability").labels == {"No Waivers", "Uncapped Liability"}
    assert multi.parse("Waivers and no waivers").labels == {"Waivers", "No Waivers"}
    assert multi.parse("none of them").labels == {INVALID}
    assert multi.find("uncapped liability; no waivers") == ["Uncapped Liability", "No Waivers"]
    sentiment = LabelParser(["POS", "NEG"], aliases={"POS": ("positive",), "NEG": ("negative",)})
    assert sentiment.parse("It is Positive.").labels == {"POS"}
    assert sentiment.parse("positive and negative").labels == {INVALID}
    assert sentiment.parse("(negative)").labels == {"NEG"}
    assert sentiment.parse("positively").labels == {INVALID}


def test_task_validation_is_one_line_spec_errors() -> None:
    with pytest.raises(SpecError, match="no {text} placeholder"):
        ClassificationTask(labels=["a", "b"], question="Classify this")
    with pytest.raises(SpecError, match="distinct"):
        ClassificationTask(labels=["Yes", "yes"])
    with pytest.raises(SpecError, match="reserved"):
        ClassificationTask(labels=["ok", "invalid"])
    with pytest.raises(SpecError, match="unknown labels"):
        ClassificationTask(labels=["a", "b"], few_shot=[("x", "c")])
    with pytest.raises(SpecError, match="2 labels in a single-label task"):
        ClassificationTask(labels=["a", "b"], few_shot=[("x", ["a", "b"])])


CHAT_MODULE = """
SEEN = []

def answer(conversations):
    SEEN.extend(conversations)
    out = []
    for conv in conversations:
        text = conv[-1]["content"]
        if "both" in text:
            out.append("It is positive and also negative.")
        elif "refuse" in text:
            out.append("I would rather not say.")
        elif "good" in text:
            out.append("Positive.")
        else:
            out.append("negative")
    return out
"""


def test_llm_classifier_builds_prompts_parses_and_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "fp_llmclf_chat.py").write_text(CHAT_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    chat = load_chat("py-chat:fp_llmclf_chat:answer")
    task = ClassificationTask(
        labels=["positive", "negative"],
        system_prompt="Classify reviews as {labels}.",
        question="Review: {text} {braces}\nAnswer:",
        few_shot=[("fine film", "positive")],
        max_tokens=4,
        seed=3,
    )
    clf = LLMClassifier(chat, task)
    preds = clf.predict(["a good film", "a dull film", "both", "refuse"])
    assert [p.labels for p in preds] == [{"positive"}, {"negative"}, {INVALID}, {INVALID}]
    assert clf.invalid_count == 2 and clf.answered_count == 4
    clf.predict(["refuse"])
    assert clf.invalid_count == 3
    conv = sys.modules["fp_llmclf_chat"].SEEN[0]
    assert conv == [
        {"role": "system", "content": "Classify reviews as positive, negative."},
        {"role": "user", "content": "Review: fine film {braces}\nAnswer:"},
        {"role": "assistant", "content": "positive"},
        {"role": "user", "content": "Review: a good film {braces}\nAnswer:"},
    ]
    request = clf.requests(["x"])[0]
    assert (request.temperature, request.max_tokens, request.seed) == (0.0, 4, 3)
    # the fingerprint follows both the chat model and the task
    other = LLMClassifier(chat, ClassificationTask(labels=["positive", "negative"], max_tokens=4, seed=3))
    assert clf.fingerprint.key != other.fingerprint.key
    assert clf.fingerprint.params["chat"] == chat.fingerprint.to_json()
    assert clf.fingerprint.key == LLMClassifier(chat, task).fingerprint.key
