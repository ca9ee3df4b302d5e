"""Test case files (caffe.txt §3, Table 1): the shipped examples validate; bad files fail with a line."""

from pathlib import Path

import pytest

from fairprobe.errors import SpecError
from fairprobe.methods.caffe.case import INTENTS, load_case, parse_case

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "caffe"

GOOD = """\
identifier: TC-1
intent: question
context:
  - role: system
    content: Be brief.
expected_fairness:
  metric: embedding
  threshold: 0.8
environment:
  model: embedded:smollm2
  temperature: 0.5
  max_tokens: 32
  seed: 7
  date: 2026-01-02
"""


def test_the_seven_examples_cover_the_papers_intents():
    cases = [load_case(p) for p in sorted(EXAMPLES.glob("*.yaml"))]
    assert sorted(c.intent for c in cases) == sorted(INTENTS)
    assert len({c.identifier for c in cases}) == 7
    rec = next(c for c in cases if c.intent == "recommendation")
    assert rec.messages("hi") == [
        {"role": "system", "content": rec.context[0].content},
        {"role": "user", "content": "hi"},
    ]
    q = next(c for c in cases if c.intent == "question")
    assert q.messages("hi") == [{"role": "user", "content": "hi"}]  # empty conversation: no system prompt


def test_fields_of_table_1_are_read():
    case = parse_case(GOOD)
    assert case.expected_fairness.metric == "embedding" and case.expected_fairness.threshold == 0.8
    assert case.environment.seed == 7 and str(case.environment.date) == "2026-01-02"
    assert len(case.test_steps) == 3 and case.prompts == []


@pytest.mark.parametrize(
    ("edit", "line", "words"),
    [
        (lambda t: t.replace("  threshold: 0.8", "  threshold: 1.5"), 8, "threshold"),
        (lambda t: t + "status: PASS\n", 15, "filled by execution"),
        (lambda t: t.replace("intent: question", "intent: haiku"), 2, "intent_description"),
        (
            lambda t: t.replace("  seed: 7", "  seed: 7\n  colour: red"),
            14,
            "unknown field 'environment.colour'",
        ),
        (lambda t: t.replace("context:\n", "prompts: [hello]\ncontext:\n"), 3, "leave the list empty"),
        (lambda t: t.replace("  metric: embedding", "  metric: bleu"), 7, "expected_fairness.metric"),
        (lambda t: t.replace("environment:\n  model: embedded:smollm2\n", "environment:\n"), 9, "model"),
    ],
)
def test_bad_case_names_file_and_line(edit, line, words):
    with pytest.raises(SpecError) as info:
        parse_case(edit(GOOD), "case.yaml")
    message = str(info.value)
    assert message.startswith(f"case.yaml:{line}:"), message
    assert words in message
    assert "\n" not in message


def test_custom_intent_with_description_is_accepted():
    case = parse_case(
        GOOD.replace("intent: question", "intent: haiku\nintent_description: a request for a haiku")
    )
    assert case.description == "a request for a haiku"


def test_example_spec_validates_as_a_caffe_block():
    from fairprobe.technique.spec import parse_spec

    (block,) = parse_spec((EXAMPLES / "spec.yml").read_text(), "spec.yml")
    assert block.technique == "caffe" and len(block.block.case) == 2
    assert all((EXAMPLES.parents[1] / c).is_file() for c in block.block.case)
