"""Judge evaluation against human labels (metafair.txt §5.2 RQ1, Table 3 columns).

A labels file holds one JSON object per line: the test (``mr``, ``source``, ``follow_up``), the
model's answers (``source_response``, ``follow_up_response``; for MR8–MR10 ``follow_up`` is the
follow-up prompt as sent, embedding R) and the human ``label`` (``BIASED`` or ``UNBIASED``).

Each judge group (one judge, or several voting by majority) judges every case ``repeat`` times
(repeat i is request repeat i). Reported per group, as in Table 3: weighted precision, recall and F1
(BIASED vs not, weighted by class support), ROC AUC of the share of BIASED verdicts across repeats,
and stability — the share of cases whose verdict is the same in every repeat.

Every group is also scored on the packaged control pairs (:mod:`.controls`): identical answer pairs
(right verdict UNBIASED) and planted biased pairs (right verdict BIASED). Control accuracy needs no
human labels, so ``judge-eval`` without a labels file scores the controls alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fairprobe.data.readers import jsonl_rows, require_file
from fairprobe.errors import DataError
from fairprobe.methods.metafair.controls import load_controls
from fairprobe.methods.metafair.evaluate import JudgeItem
from fairprobe.methods.metafair.relations import relations
from fairprobe.oracles.llm_judge import LLMJudge, majority


def read_labels(path: str | Path) -> list[dict[str, Any]]:
    p = require_file(Path(path), "labels file", "give a JSONL file of judged tests with a 'label' field")
    rows = []
    for n, row in jsonl_rows(p, "labels file", "write one object per line"):
        missing = [
            k
            for k in ("mr", "source", "follow_up", "source_response", "follow_up_response", "label")
            if k not in row
        ]
        if missing:
            raise DataError(f"{p}:{n}: missing field(s) {', '.join(missing)}")
        if (
            not isinstance(row["mr"], str)
            or row["mr"] not in relations()
            or not relations()[row["mr"]].uses_judge
        ):
            raise DataError(f"{p}:{n}: mr must be one of MR1 … MR10 (the judge MRs), got {row['mr']!r}")
        label = str(row["label"]).upper()
        if label not in ("BIASED", "UNBIASED"):
            raise DataError(f"{p}:{n}: label must be BIASED or UNBIASED, got {row['label']!r}")
        rows.append({**row, "label": label})
    if not rows:
        raise DataError(f"{p} holds no labelled cases")
    return rows


def score(labels: list[str], runs: list[list[str]]) -> dict[str, Any]:
    """Table 3 metrics from human ``labels`` and ``runs[case][repeat]`` verdicts."""
    from sklearn.metrics import precision_recall_fscore_support, roc_auc_score

    y_true = [int(label == "BIASED") for label in labels]
    shares = [sum(v == "BIASED" for v in vs) / len(vs) for vs in runs]
    y_pred = [int(s > 0.5) for s in shares]
    p, r, f1, _ = precision_recall_fscore_support(y_true, y_pred, average="weighted", zero_division=0)
    auc = float(roc_auc_score(y_true, shares)) if len(set(y_true)) == 2 else None
    stability = sum(len(set(vs)) == 1 for vs in runs) / len(runs)
    return {
        "precision": float(p),
        "recall": float(r),
        "f1": float(f1),
        "roc_auc": auc,
        "stability": stability,
        "cases": len(labels),
    }


def evaluate_group(rows: list[dict[str, Any]], judges: list[LLMJudge], repeat: int) -> dict[str, Any]:
    """Judge every labelled case ``repeat`` times with the (majority of) ``judges`` and score the group."""
    table = relations()
    items = [
        JudgeItem(table[r["mr"]], r["source"], r["follow_up"], r["source_response"], r["follow_up_response"])
        for r in rows
    ]
    questions = [item.prompts(swap=False)[0] for item in items]
    runs: list[list[str]] = [[] for _ in rows]
    for i in range(repeat):
        per_judge = [judge.judge(questions, repeat=i) for judge in judges]
        for k in range(len(rows)):
            runs[k].append(majority([pj[k] for pj in per_judge]).verdict)
    return {**score([r["label"] for r in rows], runs), "verdicts": runs}


def evaluate_controls(judges: list[LLMJudge], repeat: int) -> dict[str, Any]:
    """Share of the packaged control pairs the (majority of) ``judges`` get right, every repeat counted:
    overall, on identical pairs and on planted biased pairs, with counts."""
    controls = list(load_controls())
    questions = [c.item().prompts(swap=False)[0] for c in controls]
    correct: dict[str, list[bool]] = {"identical": [], "planted": []}
    for i in range(repeat):
        per_judge = [judge.judge(questions, repeat=i) for judge in judges]
        for k, c in enumerate(controls):
            correct[c.control].append(majority([pj[k] for pj in per_judge]).verdict == c.expected)
    both = correct["identical"] + correct["planted"]
    out: dict[str, Any] = {}
    for name, flags in (
        ("control", both),
        ("identical", correct["identical"]),
        ("planted", correct["planted"]),
    ):
        out[f"{name}_accuracy"] = sum(flags) / len(flags) if flags else None
        out[f"{name}_correct"] = sum(flags)
        out[f"{name}_accuracy_n"] = len(flags)
    return out
