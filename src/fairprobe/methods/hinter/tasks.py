"""LLM classification prompts of HInter's Table 7 and few-shot selection in the style of Table 8.

When the model under test is a chat model, HInter's oracle classifies through
:class:`fairprobe.models.llm_classifier.LLMClassifier` with these prompts, deterministic decoding
(temperature 0, fixed seed, as §4 "Prompt Configuration" asks), and exact label matching.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from fairprobe.datasets import Dataset
from fairprobe.errors import SpecError


@dataclass(frozen=True)
class PromptSet:
    system: str
    question: str
    multi_label: bool
    label_names: dict[str, str] | None = None
    """Display names for the dataset's raw labels (e.g. IMDB's POS -> Positive)."""


# Table 7, verbatim; [LABELS] is replaced by the label set.
TABLE7: dict[str, PromptSet] = {
    "imdb": PromptSet(
        "Your task is to determine whether the emotional tone or attitude in the provided Internet Movie "
        "Database (IMDB) review is positive or negative.",
        "Is the expressed sentiment conveyed in the text positive or negative?",
        multi_label=False,
    ),
    "ecthr_a": PromptSet(
        "Identify any violations of the specified European Court of Human Rights (ECTHR) articles ([LABELS]) "
        "based on the provided factual paragraph. Only answer with the following format: Answer: Article X, "
        "Article X, Article X …",
        "Which articles of the European Court of Human Rights are violated in this case, if any?",
        multi_label=True,
    ),
    "eurlex": PromptSet(
        "Given a document from the EUR-Lex portal containing European Union (EU) legislation predict its "
        "relevant EuroVoc labels among [LABELS].",
        "Which are the relevant EuroVoc labels of the provided European Union legislation?",
        multi_label=True,
    ),
    "ledgar": PromptSet(
        "Identify the single main theme among the specified labels ([LABELS]) within a provided contract "
        "provision in the Electronic Data Gathering, Analysis, and Retrieval database sourced from the US "
        "Securities and Exchange Commission.",
        "Which label represents the single main topic of the provided contract provision?",
        multi_label=False,
    ),
    "scotus": PromptSet(
        "Identify the single main issue area ([LABELS]) in the provided US Supreme Court opinions. Only answer "
        "with the relevant area following the format: Answer: X.",
        "Which single-label represents the relevant issue area of the provided court opinion?",
        multi_label=False,
    ),
}

_IMDB_NAMES = {
    "POS": "Positive",
    "NEG": "Negative",
    "pos": "Positive",
    "neg": "Negative",
    "1": "Positive",
    "0": "Negative",
}


def infer_task(data: str) -> str | None:
    """The Table 7 prompt set that fits a dataset name (``imdb-sample``, ``hf:lex_glue:ledgar``, ...)."""
    lowered = data.lower()
    for key in ("ecthr_a", "eurlex", "ledgar", "scotus", "imdb"):
        if key in lowered:
            return key
    return None


def prompt_set(task: str | None, data: str) -> PromptSet:
    name = task or infer_task(data)
    if name is None:
        raise SpecError(
            f"cannot tell which Table 7 prompt set fits '{data}' for an LLM model; set task: to one of "
            f"{', '.join(TABLE7)}"
        )
    if name not in TABLE7:
        raise SpecError(f"unknown task '{name}'; use one of {', '.join(TABLE7)}")
    return TABLE7[name]


def few_shot_examples(dataset: Dataset, k: int, seed: int, exclude: set[str]) -> list[tuple[str, list[str]]]:
    """``k`` labelled examples from the dataset, outside the tested texts, covering each label once first.

    Table 8 uses three fixed examples per dataset; here they are drawn (seeded) from the user's data so
    any dataset works. Texts are shortened to their first 600 characters, as in Table 8's excerpts.
    """
    pool = [r for r in dataset.records if r.id not in exclude and r.labels]
    if not pool:
        pool = [r for r in dataset.records if r.labels]
    rng = random.Random(seed)
    rng.shuffle(pool)
    chosen, seen = [], set()
    for record in pool:  # one per label first, so the model sees every answer
        key = tuple(sorted(record.labels or ()))
        if key not in seen and len(chosen) < k:
            chosen.append(record)
            seen.add(key)
    for record in pool:
        if len(chosen) >= k:
            break
        if record not in chosen:
            chosen.append(record)
    return [(r.text[:600], sorted(r.labels or ())) for r in chosen]


def display_labels(prompts: PromptSet, labels: list[str]) -> dict[str, str]:
    """Raw label -> the name the LLM sees (and answers with)."""
    if prompts is TABLE7["imdb"]:
        return {label: _IMDB_NAMES.get(label, label) for label in labels}
    return {label: label for label in labels}
