"""The Ray executor: shards as streaming-generator tasks, model batches as bounded concurrent tasks.

- **Cluster**: ``address`` (``--ray-address``), else ``RAY_ADDRESS``, else a local cluster started
  here (and stopped at the end). Workers get the driver's working directory (Ray's ``working_dir``
  runtime environment, honouring ``.gitignore``) and ``PYTHONPATH``, so ``py:`` models and relative
  imports resolve on every node.
- **Shards**: each shard is one Ray task that streams its chunks back as it makes them; at most
  ``max_in_flight`` shards run ahead of the one the driver is consuming, and each keeps at most two
  unconsumed chunks in the object store (back-pressure), so driver and store memory stay bounded.
  Shards are consumed in order, so results equal the local executor's row for row.
- **Lost workers**: a shard task is not retried by Ray (its chunks may be half consumed); the driver
  drops the half-written shard and starts it again, up to ``retries`` times. Model batches are
  stateless and use Ray's own retries.
- Errors raised by fairprobe code inside a task (a bad dictionary, a model error) come back as the
  same one-line :class:`~fairprobe.errors.FairprobeError`.
"""

from __future__ import annotations

import os
import socket
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from pathlib import Path
from typing import Any

import ray
from ray import exceptions as rex

from fairprobe.errors import FairprobeError, UsageError, WorkerLostError
from fairprobe.executors.base import Consume, ShardFn
from fairprobe.models.base import Classifier, Fingerprint, Prediction

_LOST = (
    rex.WorkerCrashedError,
    rex.NodeDiedError,
    rex.ObjectLostError,
    rex.OwnerDiedError,
    rex.LocalRayletDiedError,
    rex.RaySystemError,
    rex.TaskCancelledError,
)

ModelFactory = Callable[[], Classifier]
"""Builds the model under test where batches run; hashable (one instance per worker process)."""

_MODELS: dict[Hashable, Classifier] = {}


def model_of(factory: ModelFactory) -> Classifier:
    """The model ``factory`` builds, built once per process (workers serve many batches)."""
    if factory not in _MODELS:
        _MODELS[factory] = factory()
    return _MODELS[factory]


# Never shipped to workers: environments, VCS data, run stores, caches.
_EXCLUDES = [".venv", "venv", ".git", "__pycache__", "*.db", "*.db-wal", "*.parquet", "fairprobe-runs"]


@ray.remote(num_returns="streaming", max_retries=0, _generator_backpressure_num_objects=2)
def fairprobe_shard(fn: ShardFn, payload: Any, *args: Any) -> Iterator[Any]:
    """One shard of work, streaming its chunks (process title ``ray::fairprobe_shard``)."""
    yield from fn(payload, *args)


@ray.remote(max_retries=3)
def fairprobe_predict(factory: ModelFactory, texts: list[str]) -> list[dict[str, Any]]:
    """One batch through the model under test, built once per worker process."""
    return [p.to_json() for p in model_of(factory).predict(texts)]


def _value(ref: Any) -> Any:
    """``ray.get`` with fairprobe's errors: a lost worker is :class:`WorkerLostError`, a fairprobe
    error raised in a task is that error again."""
    try:
        return ray.get(ref)
    except rex.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, FairprobeError):
            raise cause from None
        if isinstance(cause, _LOST):
            raise WorkerLostError(str(cause).splitlines()[0]) from None
        raise
    except _LOST as exc:
        raise WorkerLostError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None


def _runtime_env(working_dir: bool) -> dict[str, Any]:
    env: dict[str, Any] = {}
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if paths:
        env["env_vars"] = {"PYTHONPATH": os.pathsep.join(str(Path(p).resolve()) for p in paths)}
    if working_dir:
        env["working_dir"] = os.getcwd()
        env["excludes"] = list(_EXCLUDES)
    return env


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a ``HOST:PORT`` where no Ray head listens (Ray itself retries for minutes)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return  # "auto", ray:// client addresses: left to Ray
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise UsageError(
            f"no Ray head answers at {address} ({exc.strerror or exc}); start one with `ray start --head` "
            "or leave --ray-address and RAY_ADDRESS unset for a local cluster"
        ) from None


class RayExecutor:
    """Runs shards and model batches on a Ray cluster (see the module docstring)."""

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus: int | None = None,
        max_in_flight: int | None = None,
        retries: int = 3,
        working_dir: bool = True,
        log: Callable[[str], None] | None = None,
    ):
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.retries = retries
        self._log = log or (lambda message: None)
        self._owns = False
        if not ray.is_initialized():
            if self.address is not None:
                _check_reachable(self.address)
            try:
                ray.init(
                    address=self.address,
                    num_cpus=num_cpus if self.address is None else None,
                    runtime_env=_runtime_env(working_dir),
                    include_dashboard=False,
                    logging_level="ERROR",
                    log_to_driver=False,
                )
            except (ConnectionError, ValueError, RuntimeError, rex.AuthenticationError) as exc:
                where = self.address or "a new local cluster"
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise UsageError(
                    f"cannot start Ray on {where}: {first}; start a head with `ray start --head` and pass "
                    "its address with --ray-address, or run from a smaller working directory"
                ) from None
            self._owns = True
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.max_in_flight = max_in_flight
        self._reserved = 0

    def info(self) -> dict[str, Any]:
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        return {
            "kind": self.name,
            "address": self.address or "local",
            "nodes": len(nodes),
            "cpus": int(ray.cluster_resources().get("CPU", 0)),
        }

    def run_shards(
        self, fn: ShardFn, shards: Iterable[tuple[int, Any]], args: tuple[Any, ...], consume: Consume
    ) -> None:
        refs = tuple(ray.put(a) for a in args)  # shipped once, shared by every shard task
        # A shard task holds its CPU while it waits for the driver (back-pressure), and the driver
        # waits for model tasks: leave the model tasks their CPUs, or the cluster deadlocks.
        in_flight = self.max_in_flight or max(1, self.cpus - self._reserved)
        todo = iter(shards)
        window: deque[tuple[int, Any, Any]] = deque()

        def submit() -> None:
            for index, payload in todo:
                window.append((index, payload, fairprobe_shard.remote(fn, payload, *refs)))
                return

        for _ in range(in_flight):
            submit()
        try:
            while window:
                index, payload, gen = window.popleft()
                for attempt in range(self.retries + 1):
                    try:
                        consume(index, (_value(ref) for ref in gen))
                        break
                    except WorkerLostError as exc:
                        if attempt == self.retries:
                            raise WorkerLostError(
                                f"shard {index} lost its worker {attempt + 1} times ({exc}); finished shards "
                                "are kept: run the same command again to resume"
                            ) from None
                        self._log(f"shard {index} lost its worker ({exc}); starting it again")
                        gen = fairprobe_shard.remote(fn, payload, *refs)
                submit()
        finally:
            for _, _, gen in window:
                ray.cancel(gen, force=True)

    def classifier(
        self, factory: ModelFactory, fingerprint: Fingerprint, *, batch: int, concurrency: int
    ) -> RayClassifier:
        usable = min(concurrency, self.cpus - 1)  # a 1-CPU cluster runs model tasks beside the shard
        self._reserved = max(self._reserved, usable)
        return RayClassifier(factory, fingerprint, batch=batch, concurrency=concurrency, cpu=usable > 0)

    def close(self) -> None:
        if self._owns and ray.is_initialized():
            ray.shutdown()


class RayClassifier:
    """The model under test as Ray tasks: ``batch`` texts per task, at most ``concurrency`` in flight
    (the bound a model endpoint sees), results in input order."""

    def __init__(
        self,
        factory: ModelFactory,
        fingerprint: Fingerprint,
        *,
        batch: int,
        concurrency: int,
        cpu: bool = True,
    ):
        self.fingerprint = fingerprint
        self._task = fairprobe_predict.options(num_cpus=1 if cpu else 0)
        self.batch = max(1, batch)
        self.concurrency = max(1, concurrency)
        self._factory = ray.put(factory)

    def predict(self, texts: list[str]) -> list[Prediction]:
        batches = [texts[i : i + self.batch] for i in range(0, len(texts), self.batch)]
        results: list[list[dict[str, Any]] | None] = [None] * len(batches)
        in_flight: dict[Any, int] = {}
        cursor = 0
        while cursor < len(batches) or in_flight:
            while cursor < len(batches) and len(in_flight) < self.concurrency:
                in_flight[self._task.remote(self._factory, batches[cursor])] = cursor
                cursor += 1
            done, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in done:
                results[in_flight.pop(ref)] = _value(ref)
        return [Prediction.from_json(p) for part in results for p in part or []]
