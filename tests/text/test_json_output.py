import pytest

from fairprobe.errors import ModelOutputError
from fairprobe.text.json_output import extract_json


def test_extracts_from_prose_fences_and_wrappers():
    assert extract_json('[{"a": 1}]') == [{"a": 1}]
    assert extract_json('Sure! Here:\n```json\n[{"a": "x]"}]\n```\nDone.') == [{"a": "x]"}]
    assert extract_json("Here you go: [1, 2] and also [3]") == [1, 2]
    assert extract_json('{"tests": [{"mr": "MR1"}]}') == [{"mr": "MR1"}]
    assert extract_json('prefix {"verdict": "yes"} suffix', expect=dict) == {"verdict": "yes"}


def test_unparsable_or_truncated_is_a_model_output_error():
    with pytest.raises(ModelOutputError, match="no JSON list"):
        extract_json('[{"a": 1}, {"b": ')
    with pytest.raises(ModelOutputError):
        extract_json("I cannot help with that.")
