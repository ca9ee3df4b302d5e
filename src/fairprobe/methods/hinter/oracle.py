"""The model under test as a classifier for HInter's metamorphic oracle (Algorithm 1 line 22).

A classifier URI (``spacy:``, ``hf:`` sequence classifier, ``py:``, ``embedded:imdb-sentiment``) is
used as it is. A chat URI is wrapped in :class:`~fairprobe.models.llm_classifier.LLMClassifier`
with the system prompt and question of the paper's Table 7, few-shot examples drawn from the
dataset (Table 8 style) and deterministic decoding (temperature 0, the spec's seed). Outputs are
compared as exact label sets; an unparsable LLM answer is the explicit label INVALID.
"""

from __future__ import annotations

from typing import Any

from fairprobe.datasets import Dataset
from fairprobe.errors import DataError
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.tasks import display_labels, few_shot_examples, prompt_set
from fairprobe.runner import RunContext


def build_model_under_test(
    block: HInterBlock, ctx: RunContext, dataset: Dataset
) -> tuple[Any, dict[str, Any]]:
    from fairprobe.models.uri import model_kind

    if model_kind(block.model) == "classifier":
        return ctx.classifier(block.model), {"kind": "classifier", "uri": block.model}
    from fairprobe.models.llm_classifier import ClassificationTask, LLMClassifier

    prompts = prompt_set(block.task, block.data)
    labels = block.labels or dataset.label_set
    if not labels:
        raise DataError(
            "an LLM under test needs a label set: give the data a label column (label_col) or list labels: in the block"
        )
    names = display_labels(prompts, labels)
    tested = {r.id for r in dataset.records}
    shots = few_shot_examples(dataset, block.few_shot, ctx.seed, exclude=tested) if block.few_shot else []
    task = ClassificationTask(
        labels=[names[label] for label in labels],
        system_prompt=prompts.system.replace("[LABELS]", ", ".join(names[label] for label in labels)),
        question="{text}\n\n" + prompts.question,
        few_shot=[(text, [names.get(label, label) for label in gold]) for text, gold in shots],
        multi_label=prompts.multi_label,
        temperature=0.0,
        seed=ctx.seed,
    )
    classifier = LLMClassifier(ctx.chat(block.model), task)
    reverse = {v: k for k, v in names.items()}
    info = {
        "kind": "llm",
        "uri": block.model,
        "task": block.task or "inferred",
        "few_shot": len(shots),
        "labels": labels,
    }
    return _RenamedLabels(classifier, reverse), info


class _RenamedLabels:
    """Maps the LLM's display labels back to the dataset's raw labels (Positive -> POS)."""

    def __init__(self, inner: Any, reverse: dict[str, str]):
        self.inner = inner
        self.reverse = reverse
        self.fingerprint = inner.fingerprint

    def predict(self, texts: list[str]) -> list[Any]:
        from fairprobe.models.base import Prediction

        out = []
        for pred in self.inner.predict(texts):
            out.append(Prediction(frozenset(self.reverse.get(x, x) for x in pred.labels), pred.scores))
        return out
