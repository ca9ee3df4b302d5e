"""Where a technique's sharded work runs: in this process (``local``) or on a Ray cluster (``ray``).

Both executors run shards the same way, so a pipeline is written once:

- :meth:`run_shards` — run a generator function over shards of work and hand each shard's chunks,
  in shard order, to a ``consume`` callback on the driver (which judges and writes them). A shard
  whose worker is lost is started again from its beginning; ``consume`` must therefore write a
  shard atomically (see :class:`fairprobe.run.shards.ShardWriter`).
- the Ray executor also offers ``classifier`` — a model under test callable from the driver whose
  batches run as cluster tasks (at most ``concurrency`` in flight per model endpoint); with the
  local executor the pipeline calls its model in-process, through the run's cache.

Results never depend on the executor: shards are fixed before anything runs and consumed in order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fairprobe.errors import UsageError
from fairprobe.executors.base import Executor, LocalExecutor

EXECUTORS = ("local", "ray")


def make_executor(
    kind: str, *, address: str | None = None, log: Callable[[str], None] | None = None, **options: Any
) -> Executor:
    """The executor named ``kind``: ``local``, or ``ray`` (joins ``address`` / ``RAY_ADDRESS``, else
    starts a local Ray cluster)."""
    if kind == "local":
        return LocalExecutor()
    if kind == "ray":
        from fairprobe.executors.raycluster import RayExecutor

        return RayExecutor(address=address, log=log, **options)
    raise UsageError(f"unknown executor '{kind}'; use one of {', '.join(EXECUTORS)}")


__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "make_executor"]
