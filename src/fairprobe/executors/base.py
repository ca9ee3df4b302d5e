"""The executor protocol and the in-process executor."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

ShardFn = Callable[..., Iterator[Any]]
"""``fn(payload, *args)`` yields a shard's chunks; it must be a module-level (importable) function."""

Consume = Callable[[int, Iterator[Any]], None]
"""``consume(index, chunks)`` handles one shard on the driver and writes it atomically."""


class Executor(Protocol):
    name: str

    def run_shards(
        self, fn: ShardFn, shards: Iterable[tuple[int, Any]], args: tuple[Any, ...], consume: Consume
    ) -> None: ...

    def info(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class LocalExecutor:
    """Everything in this process, shard after shard (the reference the Ray executor must equal)."""

    name = "local"

    def run_shards(
        self, fn: ShardFn, shards: Iterable[tuple[int, Any]], args: tuple[Any, ...], consume: Consume
    ) -> None:
        for index, payload in shards:
            consume(index, fn(payload, *args))

    def info(self) -> dict[str, Any]:
        return {"kind": self.name}

    def close(self) -> None:
        pass
