"""What matters most in a certificates run: the share of sentences certified fair (Eq. 4) in words,
and the sentences furthest from a certificate first (the smallest ε* / t), for the verdict's
reasons, the report's headline and the command line's worst findings."""

from __future__ import annotations

from typing import Any

from fairprobe.judge.headline import number, percent
from fairprobe.report.sections import Explanation, Table

SENTENCES = "rank-sentences"


def _margin(f: dict[str, Any]) -> float:
    """ε* / t: below 1 the sentence is not certified; the smaller, the further from a certificate."""
    t = f.get("threshold")
    return f["eps_star"] / t if t else float("inf")


def ranked(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The main model's decided sentences, furthest from a certificate first."""
    decided = [
        f
        for f in findings
        if f.get("variant", "main") == "main"
        and not f.get("invalid")
        and isinstance(f.get("eps_star"), int | float)
    ]
    return sorted(decided, key=lambda f: (bool(f.get("certified")), _margin(f), str(f.get("sentence_id"))))


def _snippet(f: dict[str, Any], width: int = 60) -> str:
    text = str(f.get("sentence") or f.get("sentence_id") or f.get("id"))
    return text if len(text) <= width else text[: width - 1] + "…"


def explanations(metrics: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Explanation]:
    worst = next((f for f in rows if not f.get("certified")), None)
    return {
        "fairness_score": Explanation(
            f"{metrics.get('certified', 0)} of {metrics.get('sentences', 0)} decided sentences were certified fair",
            (
                f"furthest from a certificate: “{_snippet(worst)}” (ε* {number(worst['eps_star'])} vs "
                f"t {number(worst.get('threshold'))})"
                if worst is not None
                else ""
            ),
            SENTENCES,
            label="the certified share",
        )
    }


def headline(metrics: dict[str, Any]) -> str:
    decided = metrics.get("sentences") or 0
    if not decided:
        return "no sentence was decided by the verifier: nothing was measured"
    certified = metrics.get("certified") or 0
    said = f"{number(certified)} of {number(decided)} sentences were certified fair ({percent(certified / decided)})"
    if certified == decided:
        return f"{said}: no substitution of their sensitive words can change the prediction"
    if not certified:
        return f"{said}: for none could the verifier prove that substituting its sensitive words leaves the prediction unchanged"
    return (
        f"{said}: for these, no substitution of their sensitive words can change the prediction; "
        "for the others the verifier could not prove it"
    )


def table(rows: list[dict[str, Any]]) -> Table:
    return Table(
        "Sentences furthest from a certificate first",
        ["sentence", "certified", "ε*", "t", "ε* / t"],
        [
            [
                _snippet(f),
                "yes" if f.get("certified") else "no",
                number(f["eps_star"]),
                number(f.get("threshold")),
                number(_margin(f)),
            ]
            for f in rows
        ],
        caption="ε* / t below 1: the verified radius does not reach the sensitive words' substitutes, so "
        "the sentence has no certificate.",
        anchor=SENTENCES,
    )


def top_findings(rows: list[dict[str, Any]], limit: int = 3) -> list[str]:
    return [
        f"not certified: “{_snippet(f, 50)}” (ε* / t = {number(_margin(f))})"
        for f in rows[:limit]
        if not f.get("certified")
    ]


KEY_METRICS = [
    ("sentences attempted", "tested"),
    ("undecided (INVALID)", "invalid_rate"),
    ("certified fair (fairness score)", "fairness_score"),
    ("model accuracy", "accuracy"),
    ("median ε*", "eps_star.median"),
    ("threshold t", "threshold"),
]
