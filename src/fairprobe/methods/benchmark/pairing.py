"""How two benchmark runs pair up for ``fairprobe compare``: a test case is one benchmark item (its id
is the upstream row, so two models' runs over the same set pair item by item); intervals resample
the item's cluster (BBQ template, StereoSet target term, ...). The outcome compared is whether the
model's answer to the item was the biased one (the more-stereotypical sentence more likely, BBQ's
biased answer, a coreference error on an anti-stereotypical sentence)."""

from __future__ import annotations

from typing import Any

from fairprobe.compare.pairing import Outcome, Pairing


def _show(f: dict[str, Any]) -> dict[str, Any]:
    text = f.get("sent_more") or f.get("sentence") or f.get("question") or f.get("prompt", "")[:200]
    return {"text": str(text), "answer": "biased" if f.get("biased") else "not biased"}


PAIRING = Pairing(
    key=lambda f: str(f["id"]),
    cluster=lambda f: str(f.get("cluster", f["id"])),
    slices=lambda f: ["all", str(f.get("category"))],
    invalid=lambda f: bool(f.get("invalid")),
    outcomes=[
        Outcome("biased_rate", "binary", lambda f: bool(f.get("biased")), True, "gave the biased answer")
    ],
    show=_show,
)
