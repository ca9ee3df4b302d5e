import pytest

from fairprobe.errors import SpecError
from fairprobe.technique.block import BlockBase
from fairprobe.technique.spec import Threshold, lookup_metric, parse_spec


class DemoBlock(BlockBase):
    model: str
    limit: int = 10


TECHS = {"demo": DemoBlock}


def test_blocks_resolve_with_defaults_seed_and_thresholds():
    text = "seed: 7\nthresholds: ['a.b > 0.5']\ndemo:\n  model: m\n  thresholds: ['c < 1']\n"
    (block,) = parse_spec(text, "s.yaml", TECHS)
    assert block.name == "demo" and block.seed == 7
    assert block.block.limit == 10
    assert [str(t) for t in block.thresholds] == ["a.b>0.5", "c<1"]


def test_list_of_blocks_get_unique_names_and_duplicate_names_fail():
    blocks = parse_spec("demo:\n  - model: a\n  - model: b\n", "s.yaml", TECHS)
    assert [b.name for b in blocks] == ["demo-1", "demo-2"]
    with pytest.raises(SpecError, match="two blocks are named 'x'"):
        parse_spec("demo:\n  - {model: a, name: x}\n  - {model: b, name: x}\n", "s.yaml", TECHS)


def test_resolved_hash_changes_with_options_not_with_thresholds():
    a = parse_spec("demo:\n  model: m\n", "s", TECHS)[0]
    b = parse_spec("demo:\n  model: m\n  thresholds: ['x>1']\n", "s", TECHS)[0]
    c = parse_spec("demo:\n  model: m\n  limit: 3\n", "s", TECHS)[0]
    assert a.resolved_hash() == b.resolved_hash() != c.resolved_hash()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("demo:\n  model: m\n  limt: 3\n", r"s.yaml:3: unknown field 'demo.limt'"),
        ("demo:\n  model: m\n  limit: lots\n", r"s.yaml:3: demo.limit: Input should be a valid integer"),
        ("demo:\n  limit: 3\n", r"s.yaml:1: demo.model: Field required"),
        ("nosuch:\n  model: m\n", r"s.yaml:1: unknown technique block 'nosuch'; known: demo"),
        ("demo: [\n", r"s.yaml:2: malformed YAML"),
        ("", "the spec is empty"),
        ("seed: 1\n", "no technique block"),
        ("thresholds: ['accuracy is good']\ndemo: {model: m}\n", "bad threshold"),
    ],
)
def test_malformed_specs_give_one_line_with_file_and_line(text, message):
    with pytest.raises(SpecError, match=message) as info:
        parse_spec(text, "s.yaml", TECHS)
    assert "\n" not in str(info.value)


def test_threshold_grammar_and_metric_lookup():
    t = Threshold.parse("error_rate.by_pair.race+gender >= 0.25")
    assert (t.metric, t.op, t.value) == ("error_rate.by_pair.race+gender", ">=", 0.25)
    metrics = {"error_rate": {"by_pair": {"race+gender": 0.3}, "atomic": 0.1}}
    assert lookup_metric(metrics, t.metric) == 0.3
    assert t.fails(0.3) and not t.fails(0.2)
    with pytest.raises(SpecError, match="available: error_rate.by_pair.race\\+gender, error_rate.atomic"):
        lookup_metric(metrics, "error_rate.nope")


def test_execution_only_settings_do_not_change_the_resume_hash():
    from fairprobe.methods.hinter.block import HInterBlock

    techs = {"hinter": HInterBlock}
    (local,) = parse_spec("hinter:\n  model: py:m:f\n", "s.yaml", techs)
    (ray,) = parse_spec(
        "hinter:\n  model: py:m:f\n  executor: ray\n  ray_address: 10.0.0.1:6379\n  chunk_mutants: 50\n",
        "s.yaml",
        techs,
    )
    assert ray.block.executor == "ray" and ray.resolved()["block"]["executor"] == "ray"
    assert local.resolved_hash() == ray.resolved_hash()  # a local run may resume on a cluster
    (other,) = parse_spec("hinter:\n  model: py:m:f\n  batch_originals: 8\n", "s.yaml", techs)
    assert other.resolved_hash() != local.resolved_hash()  # shards differ: not the same run
    with pytest.raises(SpecError):
        parse_spec("hinter:\n  model: py:m:f\n  executor: spark\n", "s.yaml", techs)
