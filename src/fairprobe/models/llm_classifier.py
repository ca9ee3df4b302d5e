"""``LLMClassifier`` — a chat model used as a :class:`Classifier` (DESIGN.md §3).

A :class:`ClassificationTask` gives the label set, a system prompt, a question template with
``{text}``, few-shot examples and decoding parameters. Each text becomes one chat request; the
free-text answer is mapped to labels by :class:`LabelParser`:

- a label (or one of its aliases) counts when it occurs case-insensitively as a whole phrase
  (word boundaries on both sides), longest surface form first, and each stretch of the answer is
  matched once: with labels ``Waivers`` and ``No Waivers``, the answer "No Waivers" gives only
  ``No Waivers``, never a substring hit on ``Waivers``;
- single-label tasks: exactly one distinct label must be found, otherwise :data:`INVALID`
  (no label, or two different labels as in "positive, not negative");
- multi-label tasks: the set of labels found, :data:`INVALID` when none is found — unless the
  task names a ``none_answer`` (HInter Table 8's ECtHR example answers "None": no article
  violated) and the answer says it as a whole phrase and names no label: then the empty set.

Unparsable answers are counted in :attr:`LLMClassifier.invalid_count`, so the INVALID rate can be
reported beside every metric: Meta-Fair (Table 5) reports invalid responses "due to output errors
(e.g., incorrect format)" apart from its bias verdicts, and its judge has an INVALID label too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fairprobe.errors import SpecError
from fairprobe.models.base import (
    INVALID,
    ChatModel,
    ChatRequest,
    ChatResponse,
    Fingerprint,
    Prediction,
    canonical_json,
    sha256_hex,
)

DEFAULT_SINGLE_PROMPT = (
    "You are a text classifier. Answer with exactly one label from: {labels}. Answer with the label only."
)
DEFAULT_MULTI_PROMPT = (
    "You are a text classifier. Answer with every label that applies, separated by commas, "
    "chosen from: {labels}. Answer with the labels only."
)


def _fill(template: str, labels: tuple[str, ...], text: str | None = None) -> str:
    """Fill ``{labels}`` and ``{text}`` by plain replacement (texts may contain braces)."""
    out = template.replace("{labels}", ", ".join(labels))
    return out.replace("{text}", text) if text is not None else out


@dataclass(frozen=True)
class ClassificationTask:
    """What an :class:`LLMClassifier` asks, and how its answers are read.

    Attributes:
        labels: the label set (distinct case-insensitively; ``INVALID`` is reserved).
        system_prompt: system message; ``{labels}`` is replaced by the comma-joined labels.
            Empty: a default asking for one label (or every applicable label when multi-label).
        question: user message template; ``{text}`` is replaced by the text, ``{labels}`` as above.
        few_shot: ``(text, label)`` or ``(text, [labels])`` examples sent as earlier turns.
        multi_label: answers name a set of labels instead of one.
        temperature, max_tokens, seed: decoding parameters of every request.
        aliases: extra surface forms per label, e.g. ``{"POS": ["positive"]}``.
        none_answer: multi-label only: the answer meaning "no label applies" (ECtHR: "None"); it
            parses to the empty set and is what few-shot examples with no label answer.
    """

    labels: tuple[str, ...]
    system_prompt: str = ""
    question: str = "Text: {text}\nLabel:"
    few_shot: tuple[tuple[str, str | tuple[str, ...]], ...] = ()
    multi_label: bool = False
    temperature: float = 0.0
    max_tokens: int = 16
    seed: int = 0
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    none_answer: str = ""

    def __post_init__(self) -> None:
        labels = tuple(str(lab) for lab in self.labels)
        object.__setattr__(self, "labels", labels)
        shots = tuple(
            (str(t), lab if isinstance(lab, str) else tuple(str(x) for x in lab)) for t, lab in self.few_shot
        )
        object.__setattr__(self, "few_shot", shots)
        object.__setattr__(
            self, "aliases", {str(k): tuple(str(a) for a in v) for k, v in self.aliases.items()}
        )
        if not labels:
            raise SpecError("classification task has no labels; list at least two under labels:")
        lowered = [lab.casefold() for lab in labels]
        if len(set(lowered)) != len(lowered) or any(not lab.strip() for lab in labels):
            raise SpecError(
                f"classification labels must be distinct and non-empty (case-insensitively): {list(labels)}"
            )
        if INVALID.casefold() in lowered:
            raise SpecError(f"{INVALID!r} is reserved for unparsable answers; rename that label")
        if "{text}" not in self.question:
            raise SpecError(f"the question template {self.question!r} has no {{text}} placeholder; add one")
        for text, lab in shots:
            given = [lab] if isinstance(lab, str) else list(lab)
            if not self.multi_label and len(given) != 1:
                raise SpecError(
                    f"few-shot example {text!r:.40} has {len(given)} labels in a single-label task"
                )
            unknown = [g for g in given if g not in labels]
            if unknown:
                raise SpecError(
                    f"few-shot example {text!r:.40} uses unknown labels {unknown}; use {list(labels)}"
                )
        unknown_alias = [k for k in self.aliases if k not in labels]
        if unknown_alias:
            raise SpecError(f"aliases given for unknown labels {unknown_alias}; use {list(labels)}")
        if self.max_tokens < 1:
            raise SpecError("max_tokens of a classification task must be >= 1")
        if self.none_answer and not self.multi_label:
            raise SpecError(
                "none_answer needs a multi-label task (a single-label answer always names a label)"
            )

    def to_json(self) -> dict[str, Any]:
        return {
            "labels": list(self.labels),
            "system_prompt": self.system_prompt,
            "question": self.question,
            "few_shot": [[t, lab if isinstance(lab, str) else list(lab)] for t, lab in self.few_shot],
            "multi_label": self.multi_label,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "aliases": {k: list(v) for k, v in sorted(self.aliases.items())},
            **({"none_answer": self.none_answer} if self.none_answer else {}),
        }

    def hash(self) -> str:
        """Stable hash of everything that shapes the requests and their parsing."""
        return sha256_hex(canonical_json(self.to_json()))[:16]


class LabelParser:
    """Maps a free-text answer to one label, a set of labels, or :data:`INVALID`."""

    def __init__(
        self,
        labels: list[str] | tuple[str, ...],
        aliases: dict[str, tuple[str, ...]] | None = None,
        multi_label: bool = False,
        none_answer: str = "",
    ):
        self.labels = tuple(labels)
        self.multi_label = multi_label
        words = none_answer.split()
        self._none = (
            re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)", re.IGNORECASE)
            if words
            else None
        )
        forms: dict[str, str] = {}
        for label in self.labels:
            for form in (label, *((aliases or {}).get(label, ()))):
                key = " ".join(form.split()).casefold()
                if key and forms.setdefault(key, label) != label:
                    raise SpecError(f"surface form {form!r} is given for two labels; keep each alias unique")
        self._forms = forms
        ordered = sorted(forms, key=lambda f: (-len(f), f))
        alternatives = (r"\s+".join(re.escape(word) for word in form.split()) for form in ordered)
        self._pattern = re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)", re.IGNORECASE)

    def find(self, answer: str) -> list[str]:
        """Distinct labels mentioned in ``answer``, in order of first mention."""
        found: dict[str, None] = {}
        for match in self._pattern.finditer(answer):
            found.setdefault(self._forms[" ".join(match.group(0).split()).casefold()], None)
        return list(found)

    def parse(self, answer: str) -> Prediction:
        found = self.find(answer)
        if self.multi_label:
            if not found and self._none is not None and self._none.search(answer):
                return Prediction(frozenset())
            return Prediction(frozenset(found) if found else frozenset([INVALID]))
        return Prediction(frozenset(found) if len(found) == 1 else frozenset([INVALID]))


class LLMClassifier:
    """A :class:`ChatModel` + a :class:`ClassificationTask` = a :class:`Classifier`.

    ``invalid_count`` counts answers parsed as :data:`INVALID` over the classifier's lifetime;
    ``last_responses`` holds the raw responses of the latest :meth:`predict` call.
    """

    def __init__(self, chat_model: ChatModel, task: ClassificationTask):
        self.chat_model = chat_model
        self.task = task
        self.parser = LabelParser(task.labels, task.aliases, task.multi_label, task.none_answer)
        self.invalid_count = 0
        self.answered_count = 0
        self.last_responses: list[ChatResponse] = []
        inner = chat_model.fingerprint
        self.fingerprint = Fingerprint(
            backend="llm-classifier",
            model_id=inner.model_id,
            weights=inner.key,
            params={
                "chat": inner.to_json(),
                "task": task.hash(),
                "temperature": task.temperature,
                "max_tokens": task.max_tokens,
                "seed": task.seed,
            },
        )

    def messages(self, text: str) -> list[dict[str, str]]:
        """The conversation sent for ``text``: system prompt, few-shot turns, the question."""
        task = self.task
        system = task.system_prompt or (DEFAULT_MULTI_PROMPT if task.multi_label else DEFAULT_SINGLE_PROMPT)
        out = [{"role": "system", "content": _fill(system, task.labels)}]
        for shot_text, shot_label in task.few_shot:
            answer = shot_label if isinstance(shot_label, str) else ", ".join(shot_label)
            answer = answer or task.none_answer
            out.append({"role": "user", "content": _fill(task.question, task.labels, shot_text)})
            out.append({"role": "assistant", "content": answer})
        out.append({"role": "user", "content": _fill(task.question, task.labels, text)})
        return out

    def requests(self, texts: list[str]) -> list[ChatRequest]:
        t = self.task
        return [
            ChatRequest.of(
                self.messages(text), temperature=t.temperature, max_tokens=t.max_tokens, seed=t.seed
            )
            for text in texts
        ]

    def parse(self, answer: str) -> Prediction:
        return self.parser.parse(answer)

    def predict(self, texts: list[str]) -> list[Prediction]:
        responses = self.chat_model.chat(self.requests(list(texts)))
        preds = [self.parse(r.text) for r in responses]
        self.last_responses = list(responses)
        self.answered_count += len(preds)
        self.invalid_count += sum(1 for p in preds if INVALID in p.labels)
        return preds

    @property
    def invalid_rate(self) -> float:
        return self.invalid_count / self.answered_count if self.answered_count else 0.0

    def __repr__(self) -> str:
        return f"LLMClassifier({self.chat_model!r}, labels={list(self.task.labels)})"
