"""LLM classification prompts of HInter's Table 7 and few-shot selection in the style of Table 8.

When the model under test is a chat model, HInter's oracle classifies through
:class:`fairprobe.models.llm_classifier.LLMClassifier` with these prompts, deterministic decoding
(temperature 0, fixed seed, as §4 "Prompt Configuration" asks), and exact label matching.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fairprobe.data.datasets import Dataset, Record, load_dataset
from fairprobe.errors import DataError, SpecError
from fairprobe.models.llm_classifier import ClassificationTask


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


TEMPLATE_KEYS = ("system", "user", "labels", "few_shot")
"""Keys of a prompt template file; ``few_shot`` is optional."""


@dataclass(frozen=True)
class PromptTemplate:
    """A user's own classification task for a chat model under test, beside the five Table 7 sets.

    HInter's oracle needs a classifier; a template turns any chat model into one (a loan officer, a
    CV screener...) without writing a ``py:`` wrapper. Answers are read by the same label parser as
    the Table 7 sets (:class:`~fairprobe.models.llm_classifier.LabelParser`): the answer word of each
    label, matched as a whole phrase, negations and echoed questions excluded; no label is INVALID.
    """

    system: str
    user: str
    """User message with ``{text}`` (and optionally ``{labels}``)."""
    labels: dict[str, str]
    """Dataset label -> the answer word the model is asked for (the same word for a list)."""
    few_shot: str | None
    """Labelled examples file (CSV/JSONL with text and label), resolved beside the template."""
    source: str


def load_prompt_template(path: str | Path) -> PromptTemplate:
    """Read and check a prompt template YAML file; every problem is one line naming the file and key.

    The file holds ``system`` (text), ``user`` (text with ``{text}``), ``labels`` (a list of answer
    words, or a mapping dataset label -> answer word) and optionally ``few_shot`` (a CSV/JSONL file
    of ``text,label`` rows, relative to the template)."""
    from fairprobe.data.readers import read_text, require_file
    from fairprobe.data.strict_yaml import load_yaml

    p = require_file(Path(path).expanduser(), "prompt template", "give a YAML file with system, user, labels")
    where = f"prompt template {p}"
    data = load_yaml(read_text(p, "prompt template"), str(p), SpecError)
    if not isinstance(data, dict):
        raise SpecError(f"{where}: expected a mapping with the keys system, user, labels (and few_shot)")
    unknown = sorted(str(k) for k in data if k not in TEMPLATE_KEYS)
    if unknown:
        raise SpecError(f"{where}: unknown key {unknown[0]!r}; the keys are {', '.join(TEMPLATE_KEYS)}")
    for key in ("system", "user", "labels"):
        if key not in data or data[key] is None:
            raise SpecError(f"{where}: missing key '{key}' ({_KEY_HELP[key]})")
    for key in ("system", "user"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise SpecError(f"{where}: '{key}' must be non-empty text ({_KEY_HELP[key]})")
    if "{text}" not in data["user"]:
        raise SpecError(f"{where}: 'user' has no {{text}} placeholder; add one where the text goes")
    labels = _template_labels(data["labels"], where)
    few_shot = data.get("few_shot")
    if few_shot is not None:
        if not isinstance(few_shot, str) or not few_shot.strip():
            raise SpecError(f"{where}: 'few_shot' must be a file path (CSV or JSONL of text,label rows)")
        shots = Path(few_shot).expanduser()
        shots = shots if shots.is_absolute() else p.parent / shots
        if not shots.is_file():
            raise SpecError(
                f"{where}: few_shot file {shots} not found; give a CSV/JSONL of text,label rows "
                "(a path relative to the template)"
            )
        few_shot = str(shots)
    return PromptTemplate(data["system"].strip(), data["user"], labels, few_shot, str(p))


_KEY_HELP = {
    "system": "the system prompt",
    "user": "the user message, with {text} where the text goes",
    "labels": "a list of answer words, or a mapping label: answer word",
}


def _template_labels(value: object, where: str) -> dict[str, str]:
    if isinstance(value, list):
        pairs = [(str(v), str(v)) for v in value]
    elif isinstance(value, dict):
        pairs = [(str(k), str(v)) for k, v in value.items()]
    else:
        raise SpecError(f"{where}: 'labels' must be {_KEY_HELP['labels']}")
    pairs = [(k.strip(), v.strip()) for k, v in pairs]
    if len(pairs) < 2 or any(not k or not v for k, v in pairs):
        raise SpecError(f"{where}: 'labels' needs at least two non-empty labels")
    words = [v.casefold() for _, v in pairs]
    if len(set(words)) != len(words) or len({k for k, _ in pairs}) != len(pairs):
        raise SpecError(f"{where}: 'labels' repeat; give each label and answer word once")
    return dict(pairs)


def template_task(
    template: PromptTemplate, block: Any, seed: int, dataset: Dataset, few_shot: FewShot
) -> tuple[ClassificationTask, dict[str, str], dict[str, Any]]:
    """The LLM classification task of a prompt template, the map answer word -> data label, and the
    model info for the summary. Decoding is deterministic (temperature 0, the run's seed), as for the
    Table 7 sets."""
    names = template.labels
    unknown = sorted(set(dataset.label_set) - set(names))
    if unknown:
        raise DataError(
            f"the data has label(s) {unknown} that prompt template {template.source} does not list; "
            "add them under labels:"
        )
    by_word = {word.casefold(): raw for raw, word in names.items()}

    def word(label: str) -> str:  # few-shot files may give the data label or the answer word
        raw = label if label in names else by_word.get(label.casefold(), label)
        return names.get(raw, label)

    task = ClassificationTask(
        labels=list(names.values()),
        system_prompt=template.system,
        question=template.user,
        few_shot=[(text, [word(g) for g in gold]) for text, gold in few_shot.examples],
        temperature=0.0,
        seed=seed,
    )
    info = {
        "kind": "llm",
        "uri": block.model,
        "task": f"prompt template {Path(template.source).name}",
        "prompt_template": template.source,
        "few_shot": len(few_shot.examples),
        "few_shot_source": few_shot.source,
        "labels": list(names),
    }
    return task, {w: raw for raw, w in names.items()}, info


def template_few_shot(prompt_template: str | None, few_shot_data: str | None) -> str | None:
    """The few-shot examples file: ``few_shot_data`` when given, else the template's ``few_shot``."""
    if few_shot_data is not None or prompt_template is None:
        return few_shot_data
    return load_prompt_template(prompt_template).few_shot
