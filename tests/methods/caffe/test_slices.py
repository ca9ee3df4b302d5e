"""CAFFE's group-pair slices (issue 39): one slice per unordered group pair of a case, named in words,
counted over usable prompt pairs, with the interval corrected for the group pairs tested."""

from __future__ import annotations

from fairprobe.judge.evidence import adjusted_interval
from fairprobe.methods.caffe.slices import GROUP_PAIR, explanations, family, labels


def _pair(
    i: int, g1: str, g2: str, fail: bool, bias: str = "gender", case: str = "TC-1", invalid: bool = False
):
    return {"id": f"{case}|{i}", "case": case, "bias_type": bias, "group_1": g1, "group_2": g2,
            "fail": fail, "invalid": invalid, "actual_fairness_level": 0.2 if fail else 0.95}  # fmt: skip


def test_both_orders_of_a_pair_are_one_slice_named_by_the_more_frequent_order():
    found = [_pair(0, "women", "men", True), _pair(1, "women", "men", False), _pair(2, "men", "women", True)]
    assert set(labels(found).values()) == {"women vs men"}
    rates = family(found)[GROUP_PAIR]["rates"]
    assert (rates["women vs men_count"], rates["women vs men_n"], rates["women vs men_texts"]) == (2, 3, 3)


def test_labels_name_the_bias_type_or_the_case_only_when_needed_and_drop_dots():
    found = [
        _pair(0, "Black", "white", True, bias="race-color"),
        _pair(1, "Black", "white", False, bias="socioeconomic"),
        _pair(2, "Mr. Smith", "Ms. Smith", False, case="TC-2"),
    ]
    assert sorted(labels(found).values()) == [
        "Black vs white (race-color) in TC-1",
        "Black vs white (socioeconomic) in TC-1",
        "Mr Smith vs Ms Smith in TC-2",
    ]


def test_invalid_pairs_are_left_out_and_the_interval_is_corrected_for_the_pairs_tested():
    found = [_pair(i, "women", "men", True) for i in range(8)]
    found += [_pair(10 + i, f"g{i}", f"h{i}", False) for i in range(11)]
    found.append(_pair(99, "nuns", "monks", True, invalid=True))
    node = family(found)[GROUP_PAIR]
    assert node["tested"] == 12 and "nuns vs monks" not in node["rates"]
    assert node["rates"]["women vs men_adj_ci"] == adjusted_interval(1.0, 8, 12)
    (path,) = explanations(family(found))  # only a pair with a pair answered unalike reads in words
    assert path == "slices.group_pair.rates.women vs men"
    how = explanations(family(found))[path]
    assert how.text == "women vs men: {count} of {n} prompt pairs answered unalike"
    assert how.worst.startswith("adjusted for the 12 group pairs tested (Bonferroni: ")
