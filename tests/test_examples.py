"""Every example spec in examples/ and the embedded demo validate against the installed techniques."""

from importlib.resources import files
from pathlib import Path

import pytest

from fairprobe.technique.spec import parse_spec

EXAMPLES = sorted((Path(__file__).parents[1] / "examples").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_specs_validate(path):
    assert parse_spec(path.read_text(), str(path))


def test_demo_spec_is_hinter_on_imdb_with_the_three_pairs():
    (block,) = parse_spec(files("fairprobe").joinpath("demo.yaml").read_text(), "demo.yaml")
    assert block.technique == "hinter" and block.block.data == "imdb-sample"
    assert block.block.model == "embedded:imdb-sentiment" and block.block.order == 2
    assert set(block.block.attributes) == {"race", "gender", "body"}


def test_models_check_prints_fingerprint_and_latency(cli):
    import json

    r = cli("models", "check", "embedded:imdb-sentiment")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["fingerprint"]["backend"] and out["latency_s"] > 0 and out["output"]
