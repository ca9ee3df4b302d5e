"""Control pairs: the LLM judge as a measured instrument (metafair.txt §3.2.2, Figure 4; §5.2 RQ1).

Meta-Fair trusts an LLM judge for MR1–MR10 (Table 2) and measures judges once, against human labels
(§5.2, Table 3). A run cannot assume its judge is one of those: a weak judge (SmolLM2-135M) answers
BIASED for byte-identical answers, and the bias rate then measures the judge, not the model. So every
run with an LLM judge also sends it a fixed, seeded sample of **control pairs** whose verdict is known:

- ``identical`` — MR1–MR7 pairs whose two answers are the same text (R′ = R). Nothing in R′ can follow
  the demographic change (§3.1.1: "any substantial differences in the responses may indicate bias";
  there are none), so the right verdict is UNBIASED.
- ``planted`` — pairs with a clearly biased follow-up answer, a few per MR family (data file
  ``control_pairs.yaml``): R′ attributes a negative trait to the group, refuses only for the group,
  recommends a lower salary, …; for the inverted MRs (MR8–MR10, §3.1.8–§3.1.10) a wrong Yes/No (a
  group-tailored answer accepted for everyone, or generally valid advice rejected). The right verdict
  is BIASED.

Control verdicts are stored as hidden findings (``kind: judge_control``, ``hidden: true``): they are
never written to findings.jsonl, never counted as findings and never enter a bias rate. Their accuracy
goes to ``metrics.judge``; below ``judge_min_control_accuracy`` the run is inconclusive.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import yaml

from fairprobe.methods.metafair.evaluate import JudgeItem, judge_all
from fairprobe.methods.metafair.relations import relations
from fairprobe.oracles.llm_judge import LLMJudge
from fairprobe.report.sections import Table
from fairprobe.stats import rate_with_ci

KIND = "judge_control"
"""``kind`` of a control finding (hidden from findings.jsonl and from every rate)."""


@dataclass(frozen=True)
class ControlPair:
    """One control: a judge question whose right verdict is known."""

    id: str
    mr: str
    control: str  # "identical" | "planted"
    source: str
    follow_up: str
    source_response: str
    follow_up_response: str
    expected: str  # "UNBIASED" | "BIASED"
    why: str

    def item(self) -> JudgeItem:
        """The judge question, built as a run builds it (MR8–MR10: P′ embeds R)."""
        rel = relations()[self.mr]
        follow_up = (
            rel.follow_up_prompt(self.follow_up, self.source_response) if rel.inverted else self.follow_up
        )
        return JudgeItem(rel, self.source, follow_up, self.source_response, self.follow_up_response)


@cache
def load_controls() -> tuple[ControlPair, ...]:
    """Every control pair: the planted pairs of the data file, and an identical pair made from each
    MR1–MR7 planted pair (same prompts, R′ = R: only the answers differ between the two controls)."""
    text = files("fairprobe.methods.metafair").joinpath("control_pairs.yaml").read_text(encoding="utf-8")
    out: list[ControlPair] = []
    for row in yaml.safe_load(text)["pairs"]:
        assert relations()[row["mr"]].uses_judge, f"control pair {row['id']}: {row['mr']} has no judge"
        base = dict(mr=row["mr"], source=row["source"], follow_up=row["follow_up"])
        out.append(
            ControlPair(
                id=f"planted:{row['id']}",
                control="planted",
                source_response=row["source_response"],
                follow_up_response=row["biased_response"],
                expected="BIASED",
                why=row["why"],
                **base,
            )
        )
        if not relations()[row["mr"]].inverted:
            out.append(
                ControlPair(
                    id=f"identical:{row['id']}",
                    control="identical",
                    source_response=row["source_response"],
                    follow_up_response=row["source_response"],
                    expected="UNBIASED",
                    why="byte-identical answers cannot differ because of the demographic change",
                    **base,
                )
            )
    return tuple(out)


def sample_controls(judged_mrs: set[str], n: int, seed: int) -> list[ControlPair]:
    """A fixed, seeded sample of ``n`` controls: half identical, half planted (planted gets the odd one).

    Controls of the MRs this run judges come first (same judge templates as its tests); the rest of
    the pool tops a kind up when those are too few (MR8–MR10 have no identical pairs)."""
    rng = random.Random(f"metafair-judge-controls:{seed}")
    chosen: list[ControlPair] = []
    for control, k in (("identical", n // 2), ("planted", n - n // 2)):
        pool = [c for c in load_controls() if c.control == control]
        own = [c for c in pool if c.mr in judged_mrs]
        rest = [c for c in pool if c.mr not in judged_mrs]
        rng.shuffle(own)
        rng.shuffle(rest)
        chosen.extend((own + rest)[:k])
    return chosen


def judge_controls(controls: list[ControlPair], judges: list[LLMJudge]) -> list[dict[str, Any]]:
    """Hidden findings with the (majority) verdict of ``judges`` on each control pair."""
    outcomes = judge_all([c.item() for c in controls], judges, swap_check=False)
    return [
        {
            "id": f"control:{c.id}",
            "kind": KIND,
            "hidden": True,
            "mr": c.mr,
            "control": c.control,
            "expected": c.expected,
            "verdict": o.verdict,
            "severity": o.severity,
            "correct": o.verdict == c.expected,
            "judges": [{k: j[k] for k in ("judge", "verdict", "severity", "error")} for j in o.judges],
        }
        for c, o in zip(controls, outcomes, strict=True)
    ]


def _share(correct: list[bool], seed: int) -> dict[str, Any]:
    value, ci = rate_with_ci(correct, seed=seed)
    return {"accuracy": value, "accuracy_ci": ci, "correct": sum(correct), "n": len(correct)}


def control_metrics(findings: list[dict[str, Any]], judges: list[str], seed: int) -> dict[str, Any]:
    """``metrics.judge``: control accuracy overall, on identical and on planted pairs, and per judge."""
    controls = [f for f in findings if f["kind"] == KIND]
    overall = _share([f["correct"] for f in controls], seed)
    out: dict[str, Any] = {
        "judges": list(judges),
        "control_accuracy": overall["accuracy"],
        "control_accuracy_ci": overall["accuracy_ci"],
        "control_accuracy_n": overall["n"],
        "control_correct": overall["correct"],
    }
    for control in ("identical", "planted"):
        part = _share([f["correct"] for f in controls if f["control"] == control], seed)
        out[f"{control}_accuracy"] = part["accuracy"]
        out[f"{control}_accuracy_ci"] = part["accuracy_ci"]
        out[f"{control}_accuracy_n"] = part["n"]
        out[f"{control}_correct"] = part["correct"]
    out["by_judge"] = {
        uri: _share(
            [j["verdict"] == f["expected"] for f in controls for j in f["judges"] if j["judge"] == uri], seed
        )
        for uri in judges
    }
    out["controls"] = [
        {"id": f["id"].removeprefix("control:")}
        | {k: f[k] for k in ("mr", "control", "expected", "verdict", "severity", "correct")}
        for f in controls
    ]
    return out


def describe_judges(judges: list[str]) -> str:
    return f"the judge {judges[0]}" if len(judges) == 1 else f"the judges {', '.join(judges)} (majority vote)"


def control_reasons(judge: dict[str, Any], min_accuracy: float) -> list[str]:
    """Why the run is inconclusive because of its judge (empty when the judge passed its controls)."""
    acc = judge["control_accuracy"]
    if acc is None or acc >= min_accuracy:
        return []
    wrong = []
    for control, label in (("identical", "identical answer pairs"), ("planted", "planted biased pairs")):
        n, ok = judge[f"{control}_accuracy_n"], judge[f"{control}_correct"]
        if n and ok < n:
            wrong.append(f"{ok} of {n} {label}")
    return [
        f"{describe_judges(judge['judges'])} judged {judge['control_correct']} of {judge['control_accuracy_n']} "
        f"control pairs correctly ({acc:.0%}; {', '.join(wrong)}), below judge_min_control_accuracy "
        f"{min_accuracy:g}: its verdicts cannot be trusted; use a stronger judge model"
    ]


def control_section(judge: dict[str, Any], min_accuracy: float) -> Table:
    """Report table: the judge's score on its control pairs, by kind."""

    def row(label: str, key: str) -> list[Any]:
        n, acc = judge[f"{key}_accuracy_n"], judge[f"{key}_accuracy"]
        if not n:
            return [label, 0, "no data"]
        lo, hi = judge[f"{key}_accuracy_ci"]
        return [label, n, f"{judge[f'{key}_correct']}/{n} ({acc:.0%}) [{lo:.0%}, {hi:.0%}]"]

    rows = [
        row("identical answers (must be UNBIASED)", "identical"),
        row("planted biased answers (must be BIASED)", "planted"),
        row("all control pairs", "control"),
    ]
    return Table(
        "Judge control pairs",
        ["control pairs", "pairs", "judged correctly [95% CI]"],
        rows,
        caption=f"{describe_judges(judge['judges']).capitalize()} also judged pairs whose verdict is known "
        f"(never counted as findings or in a bias rate). Below {min_accuracy:g} accuracy the run is "
        "inconclusive: the judge's verdicts cannot be trusted.",
    )


def analyse_controls(
    judges: list[str], min_accuracy: float, controls: list[dict[str, Any]], seed: int
) -> tuple[dict[str, Any] | None, list[str], list[Table]]:
    """(``metrics.judge``, inconclusive reasons, report sections) of a run's control findings.

    ``metrics.judge`` is there whenever the run has a judge (so a threshold on
    ``judge.control_accuracy`` is known before the run); its accuracies are ``null`` with ``_n: 0`` when
    no control pair was sent (no judged MR, or ``judge_controls: 0``), and then nothing is gated."""
    if not judges:
        return None, [], []
    judge = control_metrics(controls, judges, seed)
    if not controls:
        return judge, [], []
    return judge, control_reasons(judge, min_accuracy), [control_section(judge, min_accuracy)]
