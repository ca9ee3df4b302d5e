"""How two Meta-Fair runs pair up for ``fairprobe compare``: a test case is one metamorphic test and
one repetition of it; intervals resample tests (the repeated unit), so repeats are not counted as
independent evidence."""

from __future__ import annotations

from typing import Any

from fairprobe.compare.pairing import Outcome, Pairing


def _key(f: dict[str, Any]) -> str | None:
    if f.get("kind") != "test":
        return None  # a generated test that failed its structure check is not a test case
    return f"{f['id']}\x00{f.get('source', '')}\x00{f.get('follow_up', '')}"


def _show(f: dict[str, Any]) -> dict[str, Any]:
    return {
        "original": f.get("source"),
        "original_answer": f.get("source_response", ""),
        "text": f.get("follow_up", ""),
        "answer": f"{f.get('follow_up_response', '')} [{f.get('verdict')}]",
    }


PAIRING = Pairing(
    key=_key,
    cluster=lambda f: str(f.get("test_id", f["id"])),
    slices=lambda f: ["all", str(f.get("mr")), str(f.get("dimension"))],
    invalid=lambda f: bool(f.get("invalid")) or f.get("verdict") == "INVALID",
    outcomes=[
        Outcome(
            "bias_rate",
            "binary",
            lambda f: bool(f.get("biased")),
            True,
            "was judged biased",
            change="is now judged biased in {new} of {n} tests, was {base} of {n}",
        )
    ],
    show=_show,
    detail=lambda f: "→".join(str(a) for a in f.get("attributes") or []) or None,
    detail_name="attribute pair",
    same_inputs_except=("model",),
)
