"""HInter's LLM label parsing (issue 20): ECtHR's "None" answer (Table 8, example 3) is the empty
label set "no violation", not INVALID; few-shot examples with no label answer "None"."""

from fairprobe.data.datasets import from_rows
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.oracle import _llm_task
from fairprobe.methods.hinter.tasks import FewShot
from fairprobe.models.base import INVALID
from fairprobe.models.llm_classifier import LabelParser, LLMClassifier


def _task():
    rows = [{"text": "The applicant was born in 1960.", "labels": ["Article 6"]}, {"text": "x", "labels": []}]
    data = from_rows(rows)
    block = HInterBlock(model="py-chat:m:f", data="ecthr_a.jsonl", task="ecthr_a")
    shots = FewShot([("The applicant was born in 1941.", [])], "file")
    return _llm_task(block, 0, data, shots)[0]


def test_none_answer_parses_to_no_violation():
    task = _task()
    parser = LabelParser(task.labels, task.aliases, task.multi_label, task.none_answer)
    assert parser.parse("None").labels == frozenset()
    assert parser.parse("Answer: None.").labels == frozenset()
    assert parser.parse("Answer: Article 6").labels == frozenset({"Article 6"})
    assert parser.parse("I cannot tell").labels == frozenset({INVALID})
    assert parser.parse("Nonetheless unclear").labels == frozenset({INVALID})


def test_empty_few_shot_answer_is_none():
    task = _task()
    messages = LLMClassifier.messages(type("C", (), {"task": task})(), "text")
    assistant = [m["content"] for m in messages if m["role"] == "assistant"]
    assert assistant == ["None"]
