"""The two model protocols of DESIGN.md §3 and the value types they exchange.

Both protocols are batch-first: a list in, a list out, same length and order.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

INVALID = "INVALID"
"""Label given when a model's free-text answer cannot be parsed into a known label."""


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values give equal strings."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Prediction:
    """A classifier's answer for one text.

    ``labels`` holds one label for single-label models and a set for multi-label ones;
    ``scores`` maps label -> score (probability where the model gives one), possibly empty.
    """

    labels: frozenset[str]
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The single label (sorted-first for multi-label predictions; "" when empty)."""
        return sorted(self.labels)[0] if self.labels else ""

    def to_json(self) -> dict[str, Any]:
        return {"labels": sorted(self.labels), "scores": dict(self.scores)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Prediction:
        return cls(frozenset(data["labels"]), {k: float(v) for k, v in data.get("scores", {}).items()})

    @classmethod
    def of(cls, value: Any) -> Prediction:
        """Coerce a label ``str``, a set/list/tuple of labels, or a ``Prediction``."""
        if isinstance(value, Prediction):
            return value
        if isinstance(value, str):
            return cls(frozenset([value]))
        if isinstance(value, (set, frozenset, list, tuple)) and all(isinstance(v, str) for v in value):
            return cls(frozenset(value))
        raise TypeError(f"cannot turn {type(value).__name__} {value!r} into a Prediction")


def checked_prediction(prediction: Prediction) -> Prediction:
    """``prediction``, or an :data:`INVALID` prediction when one of its scores is not a finite
    number: a ``nan`` or ``inf`` score is an unusable answer, counted as invalid, never a number
    that enters a metric."""
    for value in prediction.scores.values():
        try:
            finite = math.isfinite(float(value))
        except (TypeError, ValueError):
            finite = False
        if not finite:
            return Prediction(frozenset([INVALID]))
    return prediction


@dataclass(frozen=True)
class Message:
    role: str
    content: str

    def to_json(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion request.

    ``repeat`` is the index of a repeated sample: repeat *i* is sent with
    ``seed + i`` (see :attr:`effective_seed`), so repeats are distinct requests, cached one by one.

    ``json_schema`` asks for constrained decoding: the answer must be a JSON value matching this
    JSON Schema. Backends that support it enforce it (llama.cpp ``response_format`` with a schema,
    OpenAI ``json_schema``); the others ignore it, so callers still parse the answer.
    """

    messages: tuple[Message, ...]
    temperature: float = 0.0
    max_tokens: int = 256
    seed: int = 0
    repeat: int = 0
    json_schema: dict[str, Any] | None = field(default=None, hash=False)

    @property
    def effective_seed(self) -> int:
        return self.seed + self.repeat

    @classmethod
    def of(cls, messages: list[dict[str, str]] | str, **params: Any) -> ChatRequest:
        """Build a request from ``[{"role", "content"}, ...]`` or a single user prompt."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        return cls(tuple(Message(m["role"], m["content"]) for m in messages), **params)

    def message_dicts(self) -> list[dict[str, str]]:
        return [m.to_json() for m in self.messages]

    def to_json(self) -> dict[str, Any]:
        return {
            "messages": self.message_dicts(),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "repeat": self.repeat,
            # only when set, so the cache keys of unconstrained requests do not change
            **({"json_schema": self.json_schema} if self.json_schema is not None else {}),
        }

    def cache_key(self) -> str:
        """Key of this request in the response cache (seed already includes the repeat)."""
        body = self.to_json()
        body["seed"] = self.effective_seed
        del body["repeat"]
        return sha256_hex(canonical_json(body))


@dataclass(frozen=True)
class ChatResponse:
    text: str
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": self.latency_s,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChatResponse:
        return cls(**data)


@dataclass(frozen=True)
class Fingerprint:
    """Identity of a model for caching and reports (DESIGN.md §3).

    ``weights`` is a hash of the weights file(s) or the server-reported model id;
    ``params`` holds decoding / inference parameters that change outputs.
    Never put secrets here: fingerprints are written to reports.
    """

    backend: str
    model_id: str
    weights: str = ""
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return sha256_hex(canonical_json(self.to_json()))[:32]

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "model_id": self.model_id,
            "weights": self.weights,
            "params": self.params,
        }


@runtime_checkable
class Classifier(Protocol):
    """Text classifier: ``predict(texts) -> list[Prediction]`` (same length and order)."""

    fingerprint: Fingerprint

    def predict(self, texts: list[str]) -> list[Prediction]: ...


@runtime_checkable
class ChatModel(Protocol):
    """Chat model: ``chat(requests) -> list[ChatResponse]`` (same length and order)."""

    fingerprint: Fingerprint

    def chat(self, requests: list[ChatRequest]) -> list[ChatResponse]: ...
