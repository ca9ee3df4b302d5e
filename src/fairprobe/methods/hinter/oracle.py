"""The model under test as a classifier for HInter's metamorphic oracle (Algorithm 1 line 22).

A classifier URI (``spacy:``, ``hf:`` sequence classifier, ``py:``, ``embedded:imdb-sentiment``) is
used as it is. A chat URI is wrapped in :class:`~fairprobe.models.llm_classifier.LLMClassifier`
with the system prompt and question of the paper's Table 7, few-shot examples (Table 8 style) from
a separate file or a held-out part of the data, never from the texts under test
(:func:`~fairprobe.methods.hinter.tasks.few_shot_split`) and deterministic decoding (temperature 0, the spec's seed). Outputs are
compared as exact label sets; an unparsable LLM answer is the explicit label INVALID.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fairprobe.data.datasets import Dataset
from fairprobe.errors import DataError
from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.tasks import (
    FewShot,
    display_labels,
    load_prompt_template,
    prompt_set,
    template_task,
)
from fairprobe.models.llm_classifier import ClassificationTask
from fairprobe.technique.context import RunContext


def build_model_under_test(
    block: HInterBlock, ctx: RunContext, dataset: Dataset, shots: FewShot | None = None
) -> tuple[Any, dict[str, Any]]:
    """The model under test in this process, cached through ``ctx`` (a chat model at request level)."""
    from fairprobe.models.uri import model_kind

    if model_kind(block.model) == "classifier":
        return ctx.classifier(block.model), {"kind": "classifier", "uri": block.model}
    from fairprobe.models.llm_classifier import LLMClassifier

    task, reverse, info = _llm_task(block, ctx.seed, dataset, shots)
    return _RenamedLabels(LLMClassifier(ctx.chat(block.model), task), reverse), info


@dataclass(frozen=True)
class ModelFactory:
    """Builds the model under test where batches run (a Ray worker), uncached: the driver caches.

    Hashable and picklable; ``task`` is the LLM classification task for chat URIs (None for a
    classifier URI)."""

    uri: str
    task: ClassificationTask | None = field(default=None, hash=False, compare=False)
    reverse: tuple[tuple[str, str], ...] = ()
    task_key: str = ""

    def __call__(self) -> Any:
        from fairprobe.models.uri import load_chat, load_classifier

        if self.task is None:
            return load_classifier(self.uri)
        from fairprobe.models.llm_classifier import LLMClassifier

        return _RenamedLabels(LLMClassifier(load_chat(self.uri), self.task), dict(self.reverse))


def model_factory(
    block: HInterBlock, seed: int, dataset: Dataset, shots: FewShot | None = None
) -> tuple[ModelFactory, dict[str, Any]]:
    """The same model under test as :func:`build_model_under_test`, as a factory for executor tasks."""
    from fairprobe.models.uri import model_kind

    if model_kind(block.model) == "classifier":
        return ModelFactory(block.model), {"kind": "classifier", "uri": block.model}
    task, reverse, info = _llm_task(block, seed, dataset, shots)
    key = json.dumps([repr(task), sorted(reverse.items())])
    return ModelFactory(block.model, task, tuple(sorted(reverse.items())), key), info


def _llm_task(
    block: HInterBlock, seed: int, dataset: Dataset, few_shot: FewShot | None
) -> tuple[ClassificationTask, dict[str, str], dict[str, Any]]:
    """Table 7 prompts (or the user's prompt template), Table 8-style few-shot examples and
    deterministic decoding for a chat URI."""
    few_shot = few_shot or FewShot([], "none")
    if block.prompt_template is not None:
        return template_task(load_prompt_template(block.prompt_template), block, seed, dataset, few_shot)
    prompts = prompt_set(block.task, block.data)
    shots = few_shot.examples
    labels = block.labels or sorted(set(dataset.label_set) | {g for _, gold in shots for g in gold})
    if not labels:
        raise DataError(
            "an LLM under test needs a label set: give the data a label column (label_col) or list labels: in the block"
        )
    names = display_labels(prompts, labels)
    task = ClassificationTask(
        labels=[names[label] for label in labels],
        system_prompt=prompts.system.replace("[LABELS]", ", ".join(names[label] for label in labels)),
        question="{text}\n\n" + prompts.question,
        few_shot=[(text, [names.get(label, label) for label in gold]) for text, gold in shots],
        multi_label=prompts.multi_label,
        none_answer=prompts.none_answer,
        temperature=0.0,
        seed=seed,
    )
    reverse = {v: k for k, v in names.items()}
    info = {
        "kind": "llm",
        "uri": block.model,
        "task": block.task or "inferred",
        "few_shot": len(shots),
        "few_shot_source": few_shot.source,
        "labels": labels,
    }
    return task, reverse, info


class _RenamedLabels:
    """Maps the LLM's display labels back to the dataset's raw labels (Positive -> POS)."""

    def __init__(self, inner: Any, reverse: dict[str, str]):
        self.inner = inner
        self.reverse = reverse
        self.fingerprint = inner.fingerprint

    def predict(self, texts: list[str]) -> list[Any]:
        return self._rename(self.inner.predict(texts))

    def predict_async(self, texts: list[str], on_item: Any = None) -> Any:
        """:meth:`predict` without waiting (the LLM's requests go to its endpoint now)."""
        from fairprobe.models.scheduler import Pending, submit_predict

        pending = submit_predict(self.inner, texts, on_item)
        return Pending(lambda: self._rename(pending.result()), pending.outstanding, pending.cancel)

    def _rename(self, preds: list[Any]) -> list[Any]:
        from fairprobe.models.base import Prediction

        return [Prediction(frozenset(self.reverse.get(x, x) for x in p.labels), p.scores) for p in preds]
