"""Cached model calls: each distinct input goes to the model once (DESIGN.md §1, "execute").

:class:`CachedClassifier` and :class:`CachedChatModel` wrap a model of either protocol. A batch is
de-duplicated, looked up in the run store and then the global cache (by fingerprint key and
request key), and only the misses are sent to the model, in chunks; each answered chunk is written
in one transaction before the next is sent, so a killed run loses at most one chunk. A model that
answers one request at a time (``chat_each``, the HTTP backends) has each answer stored as it
arrives: a request that finally fails, or a kill -9, loses no answered request of its chunk.

Models that can send one request without waiting (``submit``, the HTTP backends) are not chunked at
all: :meth:`CachedChatModel.chat_async` sends every miss to the endpoint's scheduler at once
(:mod:`fairprobe.models.scheduler` bounds what is in flight), stores each answer as it arrives,
and returns a :class:`~fairprobe.models.scheduler.Pending`, so a pipeline can prepare its next batch
while these are answered. A request already in flight for an earlier batch is not sent twice.

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

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future
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
from fairprobe.models.scheduler import Pending, gather, on_model_thread
from fairprobe.run.store import Store


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

    def _lookup(self, keys: list[str]) -> dict[str, Any]:
        """Stored answers of ``keys`` (run store, then global cache; global hits copied into the run
        store so the run directory is self-contained)."""
        found: dict[str, Any] = {}
        unique = list(dict.fromkeys(keys))
        for store in self._stores:
            missing = [k for k in unique if k not in found]
            if not missing:
                break
            found.update(store.get_responses(self._fp, missing))
        if found and self._stores:
            self._stores[0].put_responses(self._fp, dict(found))
        self.hits += len(found)
        return found

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
        found = self._lookup(list(unique))
        if on_chunk and found:
            on_chunk(sum(1 for k in keys if k in found))
        todo = [k for k in unique if k not in found]
        for start in range(0, len(todo), self.chunk_size):
            chunk = todo[start : start + self.chunk_size]
            if call_each is not None:

                def store_one(index: int, output: Any, chunk: list[str] = chunk) -> None:
                    if self.keep(output):
                        one = {chunk[index]: encode(output)}
                        for store in self._stores:
                            store.put_responses(self._fp, one)
                    if on_chunk:  # progress per answer, not per chunk (an in-process LLM is slow)
                        on_chunk(sum(1 for k in keys if k == chunk[index]))

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
            if on_chunk and call_each is None:
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

    @property
    def runs_in_order(self) -> bool:
        """Whether :meth:`predict_async` runs each batch on this model's one background thread, one
        after another (an in-process model), instead of sending its requests to an endpoint at once;
        a batch then sees every answer an earlier batch stored."""
        return getattr(self.inner, "predict_async", None) is None

    def predict(self, texts: list[str], on_chunk: Callable[[int], None] | None = None) -> list[Prediction]:
        keys = [sha256_hex(t) for t in texts]

        def call(batch: list[str]) -> list[Prediction]:
            return [checked_prediction(p) for p in self.inner.predict(batch)]

        def decode(data: Any) -> Prediction:  # answers cached before non-finite scores were checked
            return checked_prediction(Prediction.from_json(data))

        return self._resolve(keys, list(texts), call, Prediction.to_json, decode, on_chunk)

    def predict_async(
        self, texts: list[str], on_item: Callable[[int], None] | None = None
    ) -> Pending[list[Prediction]]:
        """:meth:`predict` without waiting. Over an LLM classifier whose chat model sends requests
        one by one, each request goes to the endpoint's scheduler at once; any other model runs
        its batch on a background thread (one per model, batches in order)."""
        texts = list(texts)
        if self.runs_in_order:
            return on_model_thread(self, lambda: self.predict(texts))
        inner_async = self.inner.predict_async  # type: ignore[attr-defined]
        keys = [sha256_hex(t) for t in texts]
        found = self._lookup(keys)
        if on_item and found:
            on_item(sum(1 for k in keys if k in found))
        todo = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in found))
        pending = inner_async(todo, on_item=on_item) if todo else Pending.ready([])

        def wait() -> list[Prediction]:
            outputs = [checked_prediction(p) for p in pending.result()]
            new = {sha256_hex(t): o.to_json() for t, o in zip(todo, outputs, strict=True)}
            kept = {k: new[k] for k, o in zip(new, outputs, strict=True) if self.keep(o)}
            for store in self._stores:
                store.put_responses(self._fp, kept)
            self.calls += len(todo)
            found.update(new)
            return [checked_prediction(Prediction.from_json(found[k])) for k in keys]

        return Pending(wait, pending.outstanding, pending.cancel)


class CachedChatModel(_CachedCalls):
    """A :class:`ChatModel` whose responses are cached by (fingerprint, request incl. seed + repeat);
    an empty answer is returned but not cached."""

    keep = staticmethod(lambda response: bool(response.text.strip()))

    def __init__(self, inner: ChatModel, stores: Sequence[Store], chunk_size: int = 16):
        super().__init__(inner.fingerprint, stores, chunk_size)
        self.inner = inner
        self._in_flight: dict[str, Future[ChatResponse]] = {}
        self._flight_lock = threading.Lock()

    def chat(
        self, requests: list[ChatRequest], on_chunk: Callable[[int], None] | None = None
    ) -> list[ChatResponse]:
        if hasattr(self.inner, "submit"):  # no chunks: the endpoint's scheduler bounds what is in flight
            return self.chat_async(requests, on_item=on_chunk).result()
        return self._chat_chunked(requests, on_chunk)

    def chat_async(
        self, requests: list[ChatRequest], on_item: Callable[[int], None] | None = None
    ) -> Pending[list[ChatResponse]]:
        """:meth:`chat` without waiting: cached answers at once, every miss submitted to the model's
        endpoint now (stored the moment it is answered; ``on_item(1)`` per answer, from the thread
        that received it). ``result()`` returns the answers in request order, or raises the first
        error once the requests already in flight have finished (those that were not started are
        dropped, as in :meth:`~fairprobe.models.openai_backend.OpenAIChat.chat_each`)."""
        requests = list(requests)
        if not hasattr(self.inner, "submit"):  # in-process: per answer when it has chat_each
            return on_model_thread(self, lambda: self.chat(requests, on_chunk=on_item))
        keys = [r.cache_key() for r in requests]
        # what is in flight first, then the stores: an answer leaves the in-flight table only after
        # it is stored, so a request answered while this batch is being sent is not sent twice
        with self._flight_lock:
            futures: dict[str, Future[ChatResponse]] = {
                k: self._in_flight[k] for k in keys if k in self._in_flight
            }
        found = self._lookup([k for k in keys if k not in futures])
        if on_item and found:
            on_item(sum(1 for k in keys if k in found))
        counts: dict[str, int] = {}
        for key, request in zip(keys, requests, strict=True):
            if key in found:
                continue
            counts[key] = counts.get(key, 0) + 1
            if key not in futures:
                futures[key] = self._send(key, request)
        for key, future in futures.items():
            if on_item:
                future.add_done_callback(lambda f, n=counts[key]: f.exception() is None and on_item(n))

        def outstanding() -> int:
            return sum(1 for f in futures.values() if not f.done())

        def wait() -> list[ChatResponse]:
            error: BaseException | None = None
            for future in futures.values():
                try:
                    future.result()
                except CancelledError:
                    continue
                except Exception as exc:  # noqa: BLE001 - raised below, after the others finished
                    if error is None:
                        error = exc
                        cancel()
            if error is not None:
                raise error
            answers = {k: f.result() for k, f in futures.items()}
            return [answers[k] if k in answers else ChatResponse.from_json(found[k]) for k in keys]

        def cancel() -> None:
            for f in futures.values():
                f.sent.cancel()  # type: ignore[attr-defined]

        return Pending(wait, outstanding, cancel)

    def _send(self, key: str, request: ChatRequest) -> Future[ChatResponse]:
        """One miss to the endpoint (or the future of the same request already in flight). The
        returned future completes only after the answer is stored, so a caller that saw every
        future done may close the stores."""
        with self._flight_lock:
            future = self._in_flight.get(key)
            if future is not None:
                return future
            future = self._in_flight[key] = Future()
            self.calls += 1
        future.set_running_or_notify_cancel()

        def store(sent: Future[ChatResponse]) -> None:
            if not gather(self, (key, sent, future), self._store_answers):  # a batch: one transaction
                self._store_answers([(key, sent, future)])

        sent = self.inner.submit(request)  # type: ignore[attr-defined]
        future.sent = sent  # type: ignore[attr-defined]  # so a failed batch can drop what has not started
        sent.add_done_callback(store)
        return future

    def _store_answers(self, items: list[tuple[str, Future[ChatResponse], Future[ChatResponse]]]) -> None:
        """Store the answers of ``(key, sent, future)`` in one transaction per store, then complete
        each ``future`` (after the write: a caller that saw it done may close the stores)."""
        failed: BaseException | None = None
        try:  # whatever fails here, every future below still completes
            kept = {
                key: sent.result().to_json()
                for key, sent, _ in items
                if not sent.cancelled() and sent.exception() is None and self.keep(sent.result())
            }
            for s in self._stores:
                s.put_responses(self._fp, kept)
        except BaseException as exc:  # noqa: BLE001 - a failed write is the callers' error
            failed = exc
        finally:
            with self._flight_lock:
                for key, _, _ in items:
                    self._in_flight.pop(key, None)
        for _, sent, future in items:
            if sent.cancelled():
                future.set_exception(CancelledError())
            elif (error := sent.exception() or failed) is not None:
                future.set_exception(error)
            else:
                future.set_result(sent.result())

    def _chat_chunked(
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
