"""The ``accuracy:`` spec block: execute a classifier over a dataset and score it against labels."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from pydantic import Field

from fairprobe.data.datasets import load_dataset
from fairprobe.errors import DataError
from fairprobe.models.base import INVALID
from fairprobe.report.sections import Analysis, BarChart, Group, Table, shown
from fairprobe.stats import invalid_fields, rate_with_ci
from fairprobe.technique.block import BlockBase
from fairprobe.technique.context import RunContext
from fairprobe.technique.registry import Technique

BATCH = 32


class AccuracyBlock(BlockBase):
    model: str = Field(description="classifier URI, e.g. embedded:imdb-sentiment")
    data: str = Field(
        description="dataset: a CSV/JSONL/Parquet file, imdb-sample, or hf:NAME[:CONFIG][:SPLIT]"
    )
    text_col: str | None = Field(default=None, description="text column (auto-detected when unset)")
    label_col: str | None = Field(default=None, description="gold label column (auto-detected when unset)")
    limit: int | None = Field(default=None, ge=1, description="score the first N texts")


def _labelled(block: AccuracyBlock, seed: int) -> Any:
    dataset = load_dataset(
        block.data, text_col=block.text_col, label_col=block.label_col, limit=block.limit, seed=seed
    )
    if not dataset.records or dataset.records[0].labels is None:
        raise DataError(f"dataset {block.data} has no label column; name it with label_col")
    return dataset


def validate(block: AccuracyBlock) -> None:
    """The labelled data, checked before the run folder is touched."""
    _labelled(block, 0)


def execute(block: AccuracyBlock, ctx: RunContext) -> None:
    dataset = _labelled(block, ctx.seed)
    done = ctx.done_ids()
    todo = [r for r in dataset.records if r.id not in done]
    ctx.log(f"{len(dataset.records)} texts, {len(done)} already done")
    model = ctx.classifier(block.model)
    with ctx.progress("classifying", len(todo)) as bar:
        for start in range(0, len(todo), BATCH):
            batch = todo[start : start + BATCH]
            predictions = model.predict([r.text for r in batch])
            findings = []
            for record, pred in zip(batch, predictions, strict=True):
                expected = sorted(record.labels or [])
                got = sorted(pred.labels)
                findings.append(
                    {
                        "id": record.id,
                        "text": record.text,
                        "expected": expected,
                        "predicted": got,
                        "scores": pred.scores,
                        "correct": got == expected,
                    }
                )
            ctx.add_findings(findings)
            bar.advance(len(batch))


def analyse(block: AccuracyBlock, findings: list[dict[str, Any]], seed: int) -> Analysis:
    correct = [f["correct"] for f in findings]
    acc, acc_ci = rate_with_ci(correct, seed=seed)
    by_label: dict[str, list[bool]] = defaultdict(list)
    for f in findings:
        by_label["+".join(f["expected"])].append(f["correct"])
    per_label = {}
    for label in sorted(by_label):
        value, ci = rate_with_ci(by_label[label], seed=seed)
        per_label[label] = {"recall": value, "recall_ci": ci, "n": len(by_label[label])}
    confusion = Counter(("+".join(f["expected"]), "+".join(f["predicted"])) for f in findings)
    labels = sorted({k for pair in confusion for k in pair})
    # An answer the model's parser could not read counts as wrong (it never inflates accuracy) and is
    # counted as invalid, so a model that answers nothing usable is inconclusive, not "accurate 0%".
    invalid = sum(INVALID in f["predicted"] for f in findings)
    metrics = {
        **invalid_fields(invalid, len(findings)),
        "accuracy": acc,
        "accuracy_ci": acc_ci,
        "n": len(findings),
        "by_label": per_label,
    }
    return Analysis(
        metrics=metrics,
        sections=[
            BarChart(
                "Recall by true label",
                list(per_label),
                [v["recall"] for v in per_label.values()],
                ci=[tuple(v["recall_ci"] or (0.0, 0.0)) for v in per_label.values()],
                max_value=1.0,
                caption="Bars: share of texts of that label predicted correctly; whiskers: 95% bootstrap CI.",
            ),
            Table(
                "Confusion matrix (rows: expected, columns: predicted)",
                ["expected \\ predicted", *labels],
                [[e, *(confusion.get((e, p), 0) for p in labels)] for e in labels],
            ),
        ],
        groups=[
            Group(f"label {label}", v["n"], [f"by_label.{label}"], f"recall {shown(v['recall'])}")
            for label, v in per_label.items()
        ]
        + [Group("overall", len(findings), ["accuracy", "n"], f"accuracy {shown(acc)}")],
        finding_columns=["id", "expected", "predicted", "correct", "text"],
        failure_field=None,
    )


# A runnable block: the values `fairprobe init` sets; every other field is written from the block
# model, commented out, with its default and help.
EXAMPLE = """\
accuracy:
  model: embedded:imdb-sentiment      # any classifier URI (spacy:, hf:, py:, embedded:, ...)
  data: imdb-sample
  thresholds: ["accuracy < 0.7"]
"""

TECHNIQUE = Technique(
    name="accuracy",
    summary="classify a labelled dataset and report accuracy with a 95% CI (sanity baseline)",
    block=AccuracyBlock,
    execute=execute,
    analyse=analyse,
    model_uri=lambda b: b.model,
    example=EXAMPLE,
    validate=validate,
)
