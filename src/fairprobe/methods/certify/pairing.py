"""How two certification runs pair up for ``fairprobe compare``: a test case is one sentence. Two
outcomes: whether the sentence was certified fair (every substitution of its gendered words and
synonyms within the radius keeps the decision; fewer certified is worse) and its certified radius ε*
(smaller is worse)."""

from __future__ import annotations

from typing import Any

from fairprobe.compare.pairing import Outcome, Pairing


def _show(f: dict[str, Any]) -> dict[str, Any]:
    return {
        "text": f.get("sentence", ""),
        "answer": f"prediction {f.get('prediction')}, ε* {f.get('eps_star')}, certified {f.get('certified')}",
    }


PAIRING = Pairing(
    key=lambda f: str(f.get("sentence", f["id"])),
    cluster=lambda f: str(f.get("sentence", f["id"])),
    slices=lambda f: ["all", f"label {f.get('label')}"],
    invalid=lambda f: bool(f.get("invalid")),
    outcomes=[
        Outcome("certified", "binary", lambda f: bool(f.get("certified")), False, "lost its certificate"),
        Outcome("eps_star", "continuous", lambda f: f.get("eps_star"), False),
    ],
    show=_show,
    same_inputs_except=("model", "ablation_model"),
)
