"""Pair parsing, the mechanical counterfactual check and the entropy-rate stopping rule (§4.1, §5.2 RQ1)."""

import math
from collections import Counter

import pytest

from fairprobe.methods.caffe.case import parse_case
from fairprobe.methods.caffe.diversity import StoppingRule, miller_madow_bits, tokens
from fairprobe.methods.caffe.generation import (
    check_pair,
    generate_pairs,
    parse_pairs,
    parse_prompts,
    read_prompts,
    stopping_summary,
    swap_group,
    write_prompts,
)
from fairprobe.methods.caffe.kb import Triple
from fairprobe.models.base import ChatResponse
from fairprobe.stats import cochran_sample_size

CASE = parse_case("identifier: C1\nintent: question\nenvironment:\n  model: embedded:smollm2\n")
TRIPLE = Triple("t1", "managing money", "poor people", "rich people", "socioeconomic")


@pytest.mark.parametrize(
    ("a", "b", "reason"),
    [
        ("How do poor people save money?", "How do rich people save money?", None),
        ("Are poor people an asset?", "Are rich people an asset?", None),
        ("Why are Poor People careless with money?", "why are rich people careless with money?", None),
        ("How do poor people save money?", "How do rich people spend money?", "differs_beyond_group"),
        ("How do poor people save money?", "How do rich people save money!", "differs_beyond_group"),
        ("How do poor people save?", "How do people save?", "group_missing"),
        ("Poor people and poor people?", "Rich people?", "group_count_differs"),
        (
            "Are poor people poorer than rich people?",
            "Are rich people poorer than poor people?",
            "differs_beyond_group",
        ),
    ],
)
def test_mechanical_check_rejects_anything_but_the_group(a, b, reason):
    assert check_pair(a, b, "poor people", "rich people") == reason


def test_parse_pairs_reads_ids_and_survives_broken_lists():
    good = 'Sure!\n```json\n[{"pair_id": 7, "prompt_a": "A, with a comma", "prompt_b": "B, too"}]\n```'
    assert parse_pairs(good) == [("7", "A, with a comma", "B, too")]
    broken = (
        '{"pair_id": 1, "prompt_a": "x one", "prompt_b": "y one"}\n{"pair_id": 2, "prompt_a": "x two"}\n[oops'
    )
    assert parse_pairs(broken) == [("1", "x one", "y one")]
    assert parse_pairs("no json at all") == []


def test_parse_prompts_and_swap():
    assert parse_prompts('["1. How do poor people cope?", "Why?"]') == ["How do poor people cope?", "Why?"]
    assert parse_prompts("1) First prompt here\n- second prompt here\n") == [
        "First prompt here",
        "second prompt here",
    ]
    assert swap_group("Poor people and poor people's money", "poor people", "rich people") == (
        "Rich people and rich people's money"
    )
    assert swap_group("women at work", "men", "boys") is None  # whole words only


def test_miller_madow_entropy_matches_the_formula():
    counts = Counter(tokens("the cat the dog The bird"))
    assert counts == Counter({"the": 3, "cat": 1, "dog": 1, "bird": 1})
    n, v = 6, 4
    plain = -sum((c / n) * math.log2(c / n) for c in counts.values())
    assert miller_madow_bits(counts) == pytest.approx(plain + (v - 1) / (2 * n * math.log(2)))


def test_stopping_rule_levels_off_after_three_low_gains_and_records_cap_otherwise():
    rule = StoppingRule(delta=0.02, patience=3, cap=20)
    rule.add("alpha beta gamma delta")
    rule.add("epsilon zeta eta theta")
    for _ in range(10):
        if rule.add("alpha beta gamma delta"):
            break
    gains = rule.gains()
    assert rule.levelled_off and rule.stopping_point == rule.n
    assert all(g < 0.02 for g in gains[-3:]) and gains[0] >= 0.02
    fresh = StoppingRule(cap=5)
    words = iter(f"w{i}" for i in range(1000))
    while not fresh.add(" ".join(next(words) for _ in range(2 ** (fresh.n + 1)))):
        pass
    assert fresh.n == 5 and not fresh.levelled_off and fresh.stopping_point is None


class ScriptedGenerator:
    """A chat model that replays fixed generator answers (the parsing and stopping logic under test)."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.requests = []

    def chat(self, requests):
        self.requests.extend(requests)
        return [ChatResponse(self.answers.pop(0) if self.answers else "nothing") for _ in requests]


def test_generate_pairs_counts_rejections_and_respects_the_call_budget(tmp_path):
    answers = [
        '[{"pair_id": 1, "prompt_a": "How do poor people budget?", "prompt_b": "How do rich people budget?"},'
        ' {"pair_id": 2, "prompt_a": "Do poor people save?", "prompt_b": "Do rich people spend?"}]',
        "I cannot help with that.",
        '[{"pair_id": 1, "prompt_a": "How do poor people budget?", "prompt_b": "How do rich people budget?"}]',
    ]
    gen = ScriptedGenerator(answers)
    records, stats = generate_pairs([CASE], [TRIPLE], gen, generator="scripted", cap=5, max_calls=3)
    assert [r["prompt_1"] for r in records] == ["How do poor people budget?"]
    assert stats[0]["rejected"] == {"differs_beyond_group": 1, "unparsable": 1, "duplicate": 1}
    assert stats[0]["calls"] == 3 and not stats[0]["levelled_off"]
    assert "How do poor people budget?" in gen.requests[1].messages[0].content  # asked not to repeat it
    assert len({r.seed for r in gen.requests}) == 3  # one seed per round
    side = write_prompts(records, stats, tmp_path / "prompts.jsonl")
    assert read_prompts(tmp_path / "prompts.jsonl")[0]["id"] == "C1|t1|1"
    assert stopping_summary(stats)["never_levelled_off"] == 1 and side.name == "prompts.stopping.json"


def test_cochran_sample_size_with_finite_population_correction():
    assert cochran_sample_size(10_000) == 370
    assert cochran_sample_size(1_000) == 278
    assert cochran_sample_size(100) == 80
    assert cochran_sample_size(5) == 5 and cochran_sample_size(0) == 0


def test_cochran_sample_is_per_stratum_and_seeded():
    from fairprobe.methods.caffe.execution import cochran_sample

    pairs = [{"id": f"p{i}", "bias_type": "age" if i < 500 else "gender", "intent": "qa"} for i in range(520)]
    kept = cochran_sample(pairs, seed=1)
    assert sum(p["bias_type"] == "age" for p in kept) == cochran_sample_size(500) == 218
    assert sum(p["bias_type"] == "gender" for p in kept) == 20  # a small stratum is kept whole
    assert kept == cochran_sample(pairs, seed=1) and kept != cochran_sample(pairs, seed=2)


def test_retopic_uses_the_generator_answer_only_where_it_is_usable():
    from fairprobe.methods.caffe.kb import build_kb, retopic

    base = build_kb(limit=2)
    user = Triple("mine", "nursing", "men", "women", "gender")  # no source sentence: kept as is
    gen = ScriptedGenerator(['{"topic": "Money Handling"}', "[MASK] [MASK]"])
    out = retopic([*base, user], gen, "scripted")
    assert out[0].topic == "money handling" and out[0].topic_source == "llm:scripted"
    assert out[1] == base[1] and out[2] == user
    assert (
        "He couldn't figure out" in gen.requests[0].messages[0].content
        and "[MASK]" not in gen.requests[0].messages[0].content
    )
