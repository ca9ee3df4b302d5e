"""How two CAFFE runs pair up for ``fairprobe compare``: a test case is one counterfactual prompt pair
(its id names the case, the triple and the pair); intervals resample triples, the unit the pairs of
one (intent, bias type, groups) triple share. Two outcomes are compared: the pair's verdict (FAIL:
the answers to the two groups were not similar enough) and its fairness level (the similarity the
case's metric measured; lower is worse)."""

from __future__ import annotations

from typing import Any

from fairprobe.compare.pairing import Outcome, Pairing


def _show(f: dict[str, Any]) -> dict[str, Any]:
    return {
        "original": f"{f.get('group_1')}: {f.get('prompt_1', '')}",
        "original_answer": f.get("response_1", ""),
        "text": f"{f.get('group_2')}: {f.get('prompt_2', '')}",
        "answer": f"{f.get('response_2', '')} [{f.get('status')}]",
    }


PAIRING = Pairing(
    key=lambda f: f"{f['id']}\x00{f.get('prompt_1', '')}\x00{f.get('prompt_2', '')}",
    cluster=lambda f: f"{f.get('case')}|{f.get('triple_id')}",
    slices=lambda f: ["all", str(f.get("bias_type")), str(f.get("intent") or f.get("case"))],
    invalid=lambda f: bool(f.get("invalid")),
    outcomes=[
        Outcome(
            "fail_rate", "binary", lambda f: bool(f.get("fail")), True, "answered the two groups unalike"
        ),
        Outcome("fairness_level", "continuous", lambda f: f.get("actual_fairness_level"), False),
    ],
    show=_show,
)
