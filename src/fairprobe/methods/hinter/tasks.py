"""LLM classification prompts of HInter's Table 7 and few-shot selection in the style of Table 8.

When the model under test is a chat model, HInter's oracle classifies through
:class:`fairprobe.models.llm_classifier.LLMClassifier` with these prompts, deterministic decoding
(temperature 0, fixed seed, as §4 "Prompt Configuration" asks), and exact label matching.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from fairprobe.datasets import Dataset, Record, load_dataset
from fairprobe.errors import DataError, SpecError


@dataclass(frozen=True)
class PromptSet:
    system: str
    question: str
    multi_label: bool
    label_names: dict[str, str] | None = None
    """Display names for the dataset's raw labels (e.g. IMDB's POS -> Positive)."""
    none_answer: str = ""
    """Multi-label: the answer for "no label applies" (Table 8's ECtHR example answers "None")."""


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
        none_answer="None",
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


@dataclass(frozen=True)
class FewShot:
    """Few-shot examples for a chat model under test, and where they came from."""

    examples: list[tuple[str, list[str]]]
    source: str
    held_out: frozenset[str] = frozenset()
    """Ids of dataset rows used as examples and therefore removed from the texts under test."""


def few_shot_examples(
    pool: list[Record], k: int, seed: int, exclude_texts: set[str] | frozenset[str] = frozenset()
) -> list[tuple[str, list[str]]]:
    """``k`` labelled examples of ``pool``, never a text in ``exclude_texts``, each label once first.

    Table 8 uses three fixed examples per dataset; here they are drawn (seeded) from data the user
    gives, so any dataset works. Texts are shortened to their first 600 characters, as in Table 8's
    excerpts. There is no fallback to excluded texts: fewer (or no) examples rather than a tested
    text with its gold label in the prompt (issue 20).
    """
    chosen = _choose(pool, k, seed, exclude_texts)
    return [(r.text[:600], sorted(r.labels or ())) for r in chosen]


def _choose(pool: list[Record], k: int, seed: int, exclude_texts: set[str] | frozenset[str]) -> list[Record]:
    candidates = [r for r in pool if r.labels and r.text not in exclude_texts]
    rng = random.Random(seed)
    rng.shuffle(candidates)
    chosen: list[Record] = []
    seen: set[tuple[str, ...]] = set()
    for record in candidates:  # one per label first, so the model sees every answer
        key = tuple(sorted(record.labels or ()))
        if key not in seen and len(chosen) < k:
            chosen.append(record)
            seen.add(key)
    for record in candidates:
        if len(chosen) >= k:
            break
        if record not in chosen:
            chosen.append(record)
    return chosen


def few_shot_split(
    dataset: Dataset, k: int, seed: int, *, data: str, few_shot_data: str | None, limit: int | None, **columns
) -> tuple[Dataset, FewShot]:
    """The texts under test and the few-shot examples, disjoint (issue 20: examples were drawn from
    the tested reviews with their gold labels).

    In order: a separate file ``few_shot_data``; the rows of ``data`` beyond ``limit`` (never
    tested); else a held-out split: ``k`` labelled rows (at most half the data) are removed from the
    texts under test.
    """
    tested_texts = {r.text for r in dataset.records}
    if k <= 0:
        return dataset, FewShot([], "none")
    if few_shot_data:
        pool = load_dataset(few_shot_data, seed=seed).records
        shots = few_shot_examples(pool, k, seed, tested_texts)
        if not shots:
            raise DataError(
                f"few_shot_data {few_shot_data!r} has no labelled row outside the texts under test; "
                "give a file with a label column"
            )
        return dataset, FewShot(shots, f"file {few_shot_data}")
    if limit is not None:
        full = load_dataset(data, limit=None, seed=seed, **columns)
        tested_ids = {r.id for r in dataset.records}
        beyond = [r for r in full.records if r.id not in tested_ids]
        shots = few_shot_examples(beyond, k, seed, tested_texts)
        if shots:
            return dataset, FewShot(shots, f"rows of {data} beyond limit {limit} (not tested)")
    chosen = _choose(dataset.records, min(k, len(dataset.records) // 2), seed, frozenset())
    held = frozenset(r.id for r in chosen)
    kept = [r for r in dataset.records if r.id not in held]
    kept_texts = {r.text for r in kept}
    chosen = [r for r in chosen if r.text not in kept_texts]  # a duplicate text stays under test
    shots = [(r.text[:600], sorted(r.labels or ())) for r in chosen]
    return replace(dataset, records=kept), FewShot(
        shots, f"held out from {data}: {len(held)} row(s) not tested", held
    )


def display_labels(prompts: PromptSet, labels: list[str]) -> dict[str, str]:
    """Raw label -> the name the LLM sees (and answers with)."""
    if prompts is TABLE7["imdb"]:
        return {label: _IMDB_NAMES.get(label, label) for label in labels}
    return {label: label for label in labels}
