"""Cached model calls: each distinct input goes to the model once (DESIGN.md §1, "execute").

:class:`CachedClassifier` and :class:`CachedChatModel` wrap a model of either protocol. A batch is
de-duplicated, looked up in the run store and then the global cache (by fingerprint key and
request key), and only the misses are sent to the model, in chunks; each answered chunk is written
in one transaction before the next is sent, so a killed run loses at most one chunk. A model that
answers one request at a time (``chat_each``, the HTTP backends) has each answer stored as it
arrives: a request that finally fails, or a kill -9, loses no answered request of its chunk.

Two kinds of answer are never used as they came:

- an empty chat answer (content ``null``, ``""`` or blank) is returned but never stored, so a
  transient empty answer is asked again on the next run instead of staying INVALID for ever
  (the HTTP backends already retry it within their retry budget); an LLM classifier over a cached
  chat model does not store its INVALID labels either, for the same reason;
- a prediction with a score that is not a finite number (``nan``, ``inf``) is an INVALID answer
  (:func:`~fairprobe.models.base.checked_prediction`): counted as invalid by every technique, never
  used as a number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fairprobe.models.base import (
    INVALID,
    ChatModel,
    ChatRequest,
    ChatResponse,
    Classifier,
    Fingerprint,
    Prediction,
    checked_prediction,
    sha256_hex,
)
from fairprobe.store import Store


class _CachedCalls:
    """Shared lookup / call / write-back logic for both protocols."""

    keep: Callable[[Any], bool] = staticmethod(lambda output: True)
    """Whether an answer may be stored (an empty chat answer is not)."""

    def __init__(self, fingerprint: Fingerprint, stores: Sequence[Store], chunk_size: int):
        self.fingerprint = fingerprint
        self._stores = [s for s in stores if s is not None]
        self._fp = fingerprint.key
        self.chunk_size = max(1, chunk_size)
        self.calls = 0
        """Number of inputs actually sent to the model (cache misses)."""
        self.hits = 0
        for store in self._stores:
            store.record_model(self._fp, fingerprint.to_json())

    def _resolve(
        self,
        keys: list[str],
        items: list[Any],
        call: Callable[[list[Any]], list[Any]],
        encode: Callable[[Any], Any],
        decode: Callable[[Any], Any],
        on_chunk: Callable[[int], None] | None,
        call_each: Callable[[list[Any], Callable[[int, Any], None]], list[Any]] | None = None,
    ) -> list[Any]:
        unique: dict[str, Any] = {}
        for key, item in zip(keys, items, strict=True):
            unique.setdefault(key, item)
        found: dict[str, Any] = {}
        for store in self._stores:
            missing = [k for k in unique if k not in found]
            if not missing:
                break
            hits = store.get_responses(self._fp, missing)
            found.update(hits)
        if found and self._stores:
            # Copy global-cache hits into the run store so the run directory is self-contained.
            self._stores[0].put_responses(self._fp, {k: v for k, v in found.items()})
        self.hits += len(found)
        if on_chunk and found:
            on_chunk(sum(1 for k in keys if k in found))
        todo = [k for k in unique if k not in found]
        for start in range(0, len(todo), self.chunk_size):
            chunk = todo[start : start + self.chunk_size]
            if call_each is not None:

                def store_one(index: int, output: Any, chunk: list[str] = chunk) -> None:
                    if not self.keep(output):
                        return
                    one = {chunk[index]: encode(output)}
                    for store in self._stores:
                        store.put_responses(self._fp, one)

                outputs = call_each([unique[k] for k in chunk], store_one)
            else:
                outputs = call([unique[k] for k in chunk])
            if len(outputs) != len(chunk):
                from fairprobe.errors import ModelOutputError

                raise ModelOutputError(
                    f"model {self.fingerprint.model_id} returned {len(outputs)} answers for {len(chunk)} inputs"
                )
            encoded = {k: encode(o) for k, o in zip(chunk, outputs, strict=True)}
            kept = {k: v for (k, v), o in zip(encoded.items(), outputs, strict=True) if self.keep(o)}
            for store in self._stores:
                store.put_responses(self._fp, kept)
            found.update(encoded)
            self.calls += len(chunk)
            if on_chunk:
                on_chunk(sum(1 for k in keys if k in encoded))
        return [decode(found[k]) for k in keys]


class CachedClassifier(_CachedCalls):
    """A :class:`Classifier` whose predictions are cached by (fingerprint, text)."""

    def __init__(self, inner: Classifier, stores: Sequence[Store], chunk_size: int = 64):
        super().__init__(inner.fingerprint, stores, chunk_size)
        self.inner = inner
        chat_model = getattr(inner, "chat_model", None)  # an LLMClassifier: cache its chat answers too
        if (
            chat_model is not None
            and hasattr(chat_model, "chat_each")
            and not isinstance(chat_model, CachedChatModel)
        ):
            inner.chat_model = CachedChatModel(chat_model, stores)  # type: ignore[attr-defined]
        if isinstance(getattr(inner, "chat_model", None), CachedChatModel):
            # Its chat answers are cached below: an INVALID label is not stored here, so an empty
            # answer (never cached) is asked again next run; an unparsable one is re-read for free.
            self.keep = lambda prediction: INVALID not in prediction.labels

    def predict(self, texts: list[str], on_chunk: Callable[[int], None] | None = None) -> list[Prediction]:
        keys = [sha256_hex(t) for t in texts]

        def call(batch: list[str]) -> list[Prediction]:
            return [checked_prediction(p) for p in self.inner.predict(batch)]

        def decode(data: Any) -> Prediction:  # answers cached before non-finite scores were checked
            return checked_prediction(Prediction.from_json(data))

        return self._resolve(keys, list(texts), call, Prediction.to_json, decode, on_chunk)


class CachedChatModel(_CachedCalls):
    """A :class:`ChatModel` whose responses are cached by (fingerprint, request incl. seed + repeat);
    an empty answer is returned but not cached."""

    keep = staticmethod(lambda response: bool(response.text.strip()))

    def __init__(self, inner: ChatModel, stores: Sequence[Store], chunk_size: int = 16):
        super().__init__(inner.fingerprint, stores, chunk_size)
        self.inner = inner

    def chat(
        self, requests: list[ChatRequest], on_chunk: Callable[[int], None] | None = None
    ) -> list[ChatResponse]:
        keys = [r.cache_key() for r in requests]
        each = getattr(self.inner, "chat_each", None)
        return self._resolve(
            keys,
            list(requests),
            self.inner.chat,
            ChatResponse.to_json,
            ChatResponse.from_json,
            on_chunk,
            call_each=each,
        )
