"""The technique contract, checked for every installed technique (a sixth one is covered the day it
is registered): its block, its example, its gates, its field markers and its place in the API."""

from __future__ import annotations

import pytest

import fairprobe
from fairprobe.judge.thresholds import Threshold
from fairprobe.technique.block import BlockBase, marked_fields, verdict_only_fields
from fairprobe.technique.registry import techniques
from fairprobe.technique.spec import parse_spec

NAMES = sorted(techniques())


def test_the_published_techniques_are_registered() -> None:
    assert {"hinter", "metafair", "caffe", "certify", "audit"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_block_stages_and_docs(name: str) -> None:
    tech = techniques()[name]
    assert issubclass(tech.block, BlockBase)
    assert callable(tech.execute) and callable(tech.analyse) and callable(tech.model_uri)
    undocumented = [f for f, info in tech.block.model_fields.items() if not info.description]
    assert not undocumented, f"{name} block fields without a description: {undocumented}"
    for gate in tech.default_gates:
        Threshold.parse(gate)  # a malformed default gate would only fail at run time
    if tech.default_gates:  # a technique that gates fairness can be compared run against run
        assert tech.pairing is not None
    assert callable(getattr(fairprobe, name))


@pytest.mark.parametrize("name", NAMES)
def test_the_example_spec_validates(name: str) -> None:
    blocks = parse_spec(techniques()[name].example, f"{name} example")
    assert [b.technique for b in blocks] == [name]


@pytest.mark.parametrize("name", NAMES)
def test_field_markers_keep_their_promises(name: str) -> None:
    tech = techniques()[name]
    blocks = parse_spec(tech.example, "example")
    spec = blocks[0]
    assert {"thresholds", "allow_empty", "max_invalid_rate"} <= verdict_only_fields(tech.block)
    # a verdict-only field never changes what decides the findings (the resume hash)
    for field in verdict_only_fields(tech.block) - set(BlockBase.model_fields):
        info = tech.block.model_fields[field]
        other = spec.block.model_copy(update={field: 0.5 if info.annotation is float else info.default})
        changed = type(spec)(**{**spec.__dict__, "block": other})
        assert changed.resolved_hash() == spec.resolved_hash(), field
    # a model-URI field refuses a malformed URI when the spec is validated
    for field in marked_fields(tech.block, "model_uri"):
        bad = "[nosuch:thing]" if tech.block.model_fields[field].annotation == list[str] else "nosuch:thing"
        text = tech.example.replace(f"{name}:\n", f"{name}:\n  {field}: {bad}\n", 1)
        text = "\n".join(
            line
            for i, line in enumerate(text.splitlines())
            if not (line.strip().startswith(f"{field}:") and "nosuch" not in line)
        )
        with pytest.raises(fairprobe.errors.SpecError, match="unknown model URI scheme 'nosuch'"):
            parse_spec(text, "spec.yaml")
