"""``LLMClassifier`` — a chat model used as a :class:`Classifier` (DESIGN.md §3).

A :class:`ClassificationTask` gives the label set, a system prompt, a question template with
``{text}``, few-shot examples and decoding parameters. Each text becomes one chat request; the
free-text answer is mapped to labels by :class:`LabelParser`:

- a label (or one of its aliases) counts when it occurs case-insensitively as a whole phrase, longest
  surface form first, each stretch of the answer matched once: with labels ``Waivers`` and
  ``No Waivers``, the answer "No Waivers" gives only ``No Waivers``; a plural label also matches its
  singular ("Governing Law") and numbered labels read in series ("Articles 5 and 6");
- a negated mention ("not positive", "no violation of Article 8", "Article 3 was not violated") or
  one inside an echoed question ("Positive or negative? Positive.") does not count;
- single-label tasks: the stated answer ("Answer: X", "the sentiment is X") wins over labels named in
  an explanation, else the first sentence's label, else the one label of the answer; no label, or two
  where one is asked ("positive and negative"), is :data:`INVALID`;
- multi-label tasks: the set of labels that count, :data:`INVALID` when none does — unless the
  task names a ``none_answer`` (HInter Table 8's ECtHR example answers "None": no article
  violated) and the answer says it ("None", "No violation"): then the empty set.

The parser's accuracy on chat-style answers is measured by ``bench/oracles.py`` on the hand-labelled
corpus in ``tests/oracles/corpus/labels.jsonl``.

Unparsable answers are counted in :attr:`LLMClassifier.invalid_count`, so the INVALID rate can be
reported beside every metric: Meta-Fair (Table 5) reports invalid responses "due to output errors
(e.g., incorrect format)" apart from its bias verdicts, and its judge has an INVALID label too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
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
from fairprobe.models.scheduler import Pending, submit_chat
from fairprobe.oracles.answers import COORDINATED, live_mentions, plain

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


def _singular(word: str) -> str | None:
    """The singular of a plural label word ("Laws" → "Law", "Taxes" → "Tax"), else ``None``."""
    if not word.isalpha() or len(word) < 4 or not word.endswith("s") or word.endswith("ss"):
        return None
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("es") and re.search(r"(?:x|ss|ch|sh|z)es$", word):
        return word[:-2]
    return word[:-1]


_EXPLICIT = re.compile(
    r"(?:\b(?:answer|label|sentiment|classification|category|topic|theme|area|verdict|review|tone|attitude|"
    r"mood|feeling|overall)\b"
    r"[^.;\n]{0,30}?(?:\bis\b|\bwas\b|:|=|\bwould be\b|\s[-–]\s)"
    r"|\b(?:classify|classified|categori[sz]e|categori[sz]ed|label|labelled|labeled|rate|mark)\b"
    r"[^.;\n]{0,30}?\bas\b"
    r"|\b(?:overall|ultimately|on balance|in the end|in summary|in conclusion)\b[\s,:]*)"
    r"\s*(?:[\w-]+\s+){0,2}$",
    re.IGNORECASE,
)
_NEGATED_AFTER = re.compile(
    r"\s*(?:(?:was|were|is|are|has been|have been)\s+not\b|(?:wasn't|weren't|isn't|aren't)\b|"
    r"(?:does|do)(?:\s+not|n't)\s+apply|not\s+(?:violated|applicable))",
    re.IGNORECASE,
)
_ALTERNATIVE = re.compile(
    r"[\s,;)(]*(?:or|and|/|&|,)\s*(?:maybe|possibly|perhaps|probably)?[\s(]*", re.IGNORECASE
)
_NONE_PHRASES = r"\bno\s+(?:violations?|articles?|labels?)\b|\bnot\s+violated\b|\bnone\s+of\b"


class LabelParser:
    """Maps a free-text answer to one label, a set of labels, or :data:`INVALID`.

    Reading a chat model's answer (markdown removed first):

    - a label counts as a whole phrase, case-insensitively, longest surface form first; a plural
      label also matches its singular ("Governing Law" for "Governing Laws"); numbered labels sharing
      a word are read in series ("Articles 5 and 6" → Article 5, Article 6);
    - mentions that are negated ("not positive", "no violation of Article 8", "Article 3 was not
      violated", "more positive than negative") or sit in an echoed question ("Positive or
      negative? Positive.") do not count;
    - single-label: an explicit statement ("Answer: X", "the sentiment is X", "I'd classify it as
      X") wins, else the first sentence's label ("Negative. … a few scenes are positive"), else the
      one label in the whole answer; two labels where one is expected ("A or B") → INVALID;
    - multi-label: every label that counts; none → the empty set when the task names a
      ``none_answer`` and the answer says it ("None", "No violation"), else INVALID.
    """

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
            re.compile(
                r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)|" + _NONE_PHRASES, re.IGNORECASE
            )
            if words
            else None
        )
        forms: dict[str, str] = {}
        for label in self.labels:
            for form in (label, *((aliases or {}).get(label, ()))):
                key = " ".join(form.split()).casefold()
                if key and forms.setdefault(key, label) != label:
                    raise SpecError(f"surface form {form!r} is given for two labels; keep each alias unique")
        for key, label in list(forms.items()):
            *head, last = key.split(" ")
            single = _singular(last)
            if single:
                forms.setdefault(" ".join([*head, single]), label)  # never overrides a real form
        self._forms = forms
        ordered = sorted(forms, key=lambda f: (-len(f), f))
        alternatives = (r"\s+".join(re.escape(word) for word in form.split()) for form in ordered)
        self._pattern = re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)", re.IGNORECASE)
        series: dict[str, dict[str, str]] = {}
        for key, label in forms.items():
            m = re.fullmatch(r"([a-z]+) (\d+)", key)
            if m:
                series.setdefault(m.group(1), {})[m.group(2)] = label
        self._series = [
            (
                re.compile(  # "Articles 5 and 6", "Art. 6", "Arts. 3, 5 and 6"
                    rf"(?<!\w)(?:{re.escape(prefix)}s?\s+(?=\d+\s*(?:,\s*and|,|and|&|or)\s*\d)"
                    rf"|{re.escape(prefix[:3])}s?\.\s*)(\d+(?:\s*(?:,\s*and|,|and|&|or)\s*\d+)*)(?!\w)",
                    re.IGNORECASE,
                ),
                numbers,
            )
            for prefix, numbers in series.items()
        ]

    def _mentions(self, text: str) -> list[tuple[int, int, str]]:
        """``(start, end, label)`` of each label mention in ``text``, in order."""
        found = {
            m.start(): (m.end(), self._forms[" ".join(m.group(0).split()).casefold()])
            for m in self._pattern.finditer(text)
        }
        for pattern, numbers in self._series:
            for m in pattern.finditer(text):
                for k, n in enumerate(re.finditer(r"\d+", m.group(1))):
                    if n.group(0) in numbers:  # the first number's mention starts at "Art." / "Articles"
                        start = m.start() if k == 0 else m.start(1) + n.start()
                        if not any(a <= start < b for a, (b, _) in found.items()):
                            found[start] = (m.start(1) + n.end(), numbers[n.group(0)])
        return [(start, end, label) for start, (end, label) in sorted(found.items())]

    def find(self, answer: str) -> list[str]:
        """Distinct labels mentioned in ``answer``, in order of first mention (negated ones included)."""
        return list(dict.fromkeys(label for _, _, label in self._mentions(plain(answer))))

    def _live(self, text: str) -> list[tuple[int, str]]:
        """Mentions that count: not negated (before or after: "Article 3 was not violated"), not in a
        question ("Positive or negative? Positive.")."""
        spans = []
        for start, end, label in self._mentions(text):
            stop = re.search(r"[.!?\n]|$", text[end:])
            if stop and stop.group(0) == "?":
                continue
            spans.append((start, end, label))
        after = {start for start, end, _ in spans if _NEGATED_AFTER.match(text[end:])}
        for (s1, e1, _), (s2, _, _) in reversed(
            list(zip(spans, spans[1:], strict=False))
        ):  # "Articles 3 and 5 were not"
            if s2 in after and COORDINATED.fullmatch(text[e1:s2]):
                after.add(s1)
        return [(pos, label) for pos, label in live_mentions(text, spans) if pos not in after]

    def parse(self, answer: str) -> Prediction:
        text = plain(answer)
        live = self._live(text)
        if self.multi_label:
            if live:
                return Prediction(frozenset(label for _, label in live))
            if self._none is not None and self._none.search(text):
                return Prediction(frozenset())
            return Prediction(frozenset([INVALID]))
        # sentences, and a subordinate clause after a comma ("positive, although … negative") apart
        sentences = [
            (m.start(), m.end())
            for m in re.finditer(
                r"(?:[^.!?;\n,]|,(?!\s*(?:although|though|even though|even if|despite|while|whereas)\b))+"
                r"[.!?;\n,]*",
                text,
            )
        ]

        def sentence_of(pos: int) -> tuple[int, int]:
            return next((a, b) for a, b in sentences if a <= pos < b)

        explicit = {label for pos, label in live if _EXPLICIT.search(text[sentence_of(pos)[0] : pos])}
        if len(explicit) > 1:
            return Prediction(frozenset([INVALID]))
        if explicit:
            (label,) = explicit  # unless offered with an alternative: "Answer: Economic Activity or Unions"
            at = next(p for p, lab in live if lab == label)
            later = [p for p, lab in live if p > at and lab != label]
            found = self._pattern.match(text, at)
            if later and _ALTERNATIVE.fullmatch(text[found.end() if found else at + len(label) : later[0]]):
                return Prediction(frozenset([INVALID]))
            return Prediction(frozenset([label]))
        if live:
            span = sentence_of(live[0][0])
            first = {lab for p, lab in live if span[0] <= p < span[1]}
            if len(first) == 1:
                return Prediction(frozenset(first))
            if len(first) > 1:
                return Prediction(frozenset([INVALID]))
        return Prediction(frozenset([INVALID]))


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
        return self._read(self.chat_model.chat(self.requests(list(texts))))

    def predict_async(
        self, texts: list[str], on_item: Callable[[int], None] | None = None
    ) -> Pending[list[Prediction]]:
        """:meth:`predict` without waiting: the requests go to the chat model's endpoint now
        (:func:`~fairprobe.models.scheduler.submit_chat`); ``result()`` parses the answers."""
        pending = submit_chat(self.chat_model, self.requests(list(texts)), on_item)
        return Pending(lambda: self._read(pending.result()), pending.outstanding, pending.cancel)

    def _read(self, responses: list[ChatResponse]) -> list[Prediction]:
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
