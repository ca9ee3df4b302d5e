"""The executor protocol and the in-process executor."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, Protocol

from fairprobe.models.base import Classifier, Fingerprint

ShardFn = Callable[..., Iterator[Any]]
"""``fn(payload, *args)`` yields a shard's chunks; it must be a module-level (importable) function."""

Consume = Callable[[int, Iterator[Any]], None]
"""``consume(index, chunks)`` handles one shard on the driver and writes it atomically."""

ModelFactory = Callable[[], Classifier]
"""Builds the model under test where batches run; hashable (one instance per worker process)."""


class Executor(Protocol):
    name: str

    def run_shards(
        self, fn: ShardFn, shards: Iterable[tuple[int, Any]], args: tuple[Any, ...], consume: Consume
    ) -> None: ...

    def classifier(
        self, factory: ModelFactory, fingerprint: Fingerprint, *, batch: int, concurrency: int
    ) -> Classifier: ...

    def info(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


_MODELS: dict[Hashable, Classifier] = {}


def model_of(factory: ModelFactory) -> Classifier:
    """The model ``factory`` builds, built once per process (workers serve many batches)."""
    if factory not in _MODELS:
        _MODELS[factory] = factory()
    return _MODELS[factory]


class LocalExecutor:
    """Everything in this process, shard after shard (the reference the Ray executor must equal)."""

    name = "local"

    def run_shards(
        self, fn: ShardFn, shards: Iterable[tuple[int, Any]], args: tuple[Any, ...], consume: Consume
    ) -> None:
        for index, payload in shards:
            consume(index, fn(payload, *args))

    def classifier(
        self, factory: ModelFactory, fingerprint: Fingerprint, *, batch: int, concurrency: int
    ) -> Classifier:
        return model_of(factory)

    def info(self) -> dict[str, Any]:
        return {"kind": self.name}

    def close(self) -> None:
        pass
