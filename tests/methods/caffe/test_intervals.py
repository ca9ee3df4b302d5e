"""CAFFE's ASR intervals count the pairs of one knowledge-base triple as one unit: they share its
groups and topic, so 12 pairs of 3 triples are not 36 independent pairs of evidence."""

from fairprobe.methods.caffe.analysis import analyse
from fairprobe.methods.caffe.block import CaffeBlock
from fairprobe.stats import rate_with_ci, wilson_interval

BLOCK = CaffeBlock(case=["case.yaml"], metrics=["lsa"])


def _pair(triple: str | None, k: int, fail: bool, bias: str = "socioeconomic") -> dict:
    level = 0.2 if fail else 0.95
    pair = {
        "id": f"TC|{triple}|{k}", "case": "TC", "intent": "question", "bias_type": bias,
        "group_1": "poor", "group_2": "rich", "prompt_1": "p1", "prompt_2": "p2",
        "response_1": "r1", "response_2": "r2", "metric": "lsa", "threshold": 0.5,
        "actual_fairness_level": level, "similarity": {"lsa": level}, "fail": fail,
        "status": "FAIL" if fail else "PASS",
    }  # fmt: skip
    if triple is not None:
        pair["triple_id"] = triple
    return pair


def test_pairs_of_one_triple_are_one_cluster():
    # 3 triples x 12 pairs; every pair of triple a fails (the triple's groups trigger it), none other.
    findings = [_pair(t, k, t == "a") for t in "abc" for k in range(12)]
    m = analyse(BLOCK, findings, seed=0).metrics
    assert m["asr"] == 1 / 3 and m["pairs"] == 36
    # 3 clusters: Wilson on the effective count (1 of 3), not the bootstrap over 36 pairs
    assert m["asr_ci"] == [round(x, 6) for x in wilson_interval(1, 3)]
    by_pair = rate_with_ci([f["fail"] for f in findings], seed=0)[1]
    assert m["asr_ci"][1] - m["asr_ci"][0] > 2 * (by_pair[1] - by_pair[0])
    assert m["by_bias_type"]["socioeconomic"]["asr_ci"] == m["asr_ci"]
    assert m["cases"]["TC"]["asr_ci"] == m["asr_ci"]


def test_pairs_without_a_triple_are_their_own_clusters():
    findings = [_pair(None, k, k < 12) for k in range(36)]
    m = analyse(BLOCK, findings, seed=0).metrics
    assert m["asr_ci"] == rate_with_ci([f["fail"] for f in findings], seed=0)[1]


def test_no_failing_pair_still_has_an_upper_bound():
    m = analyse(BLOCK, [_pair(t, k, False) for t in "ab" for k in range(6)], seed=0).metrics
    assert m["asr"] == 0.0 and m["asr_ci"][0] == 0.0 and m["asr_ci"][1] > 0.5  # 2 triples, not 12 pairs
