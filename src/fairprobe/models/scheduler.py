"""One request scheduler per model endpoint, shared by every technique: model-bound runs stay model-bound.

Two pieces keep a model busy and the driver busy at the same time:

- :class:`EndpointScheduler` — the requests to one endpoint (an OpenAI-compatible base URL) run as
  coroutines on one event loop thread, at most ``limit`` of them talking to the server at any moment, across
  every batch, shard and model object that uses that endpoint: no barrier per chunk, so the slowest
  request of a batch never idles the others. HTTP 429 halves ``limit`` (at most once per
  ``cooldown`` seconds, so one burst of 429s counts once); every ``limit`` answers in a row without a
  429 raise it by one again, up to the configured concurrency (additive increase, multiplicative
  decrease). A request waiting out a back-off does not hold a slot.
- :class:`Lookahead` — a driver loop that prepares work item after item (generation, the invariant),
  submits each item's model calls at once, and finishes items (judging, storing) strictly in the
  order they were prepared, as soon as their answers are in. It prepares the next item while the
  model answers the current ones, up to a bounded backlog, so the driver never waits on the model
  while it has work, and the model never waits on the driver while there are requests to send.

The default concurrency comes from the endpoint (:func:`default_concurrency`): 16 for a server on
this machine or a private network (one local server usually runs one GPU; more requests only queue
inside it and eat their timeout), 32 for a hosted API (lowered by the 429 back-off when the
account's rate limit is lower). ``?concurrency=N`` in the model URI sets it.

Retries are counted here (:func:`retry_count`), so a progress line can show them instead of one log
line per retry.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import queue
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

from fairprobe.models.transport import LoopThread

T = TypeVar("T")
P = TypeVar("P")

LOCAL_CONCURRENCY = 16
"""Default requests in flight to a server on this machine or a private network."""
HOSTED_CONCURRENCY = 32
"""Default requests in flight to a hosted API (lowered adaptively on HTTP 429)."""

_lock = threading.Lock()
_retries = 0
_schedulers: dict[str, EndpointScheduler] = {}


def note_retry() -> None:
    """Count one retried request (any backend); shown on the progress line, not logged one per line."""
    global _retries
    with _lock:
        _retries += 1


def retry_count() -> int:
    """Retried requests so far in this process (compare two readings to count a stretch of work)."""
    with _lock:
        return _retries


def is_local_endpoint(base_url: str) -> bool:
    """Whether ``base_url`` is a server on this machine or a private network (not a hosted API)."""
    host = (urlsplit(base_url).hostname or "").strip("[]")
    if host in ("localhost", "") or host.endswith((".local", ".internal", ".lan")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host  # a bare host name (a docker-compose service, a LAN machine)
    return address.is_loopback or address.is_private or address.is_link_local


def default_concurrency(base_url: str) -> int:
    """Requests in flight when the URI does not say: see the module docstring."""
    return LOCAL_CONCURRENCY if is_local_endpoint(base_url) else HOSTED_CONCURRENCY


class EndpointScheduler:
    """Bounded, adaptive concurrency for one endpoint (see the module docstring).

    The endpoint's requests run as coroutines on one event loop thread (:meth:`run`); each network
    attempt is wrapped in ``async with scheduler.slot():`` so at most :attr:`limit` attempts are in
    flight, and reports 429s with :meth:`throttled` and answers with :meth:`succeeded`. Answers are
    handed to their futures on one separate thread (:meth:`deliver`), so the callbacks that store
    them (a SQLite write each) never hold up the loop.
    """

    def __init__(self, name: str, concurrency: int, *, cooldown: float = 1.0):
        self.name = name
        self.concurrency = max(1, int(concurrency))
        self.limit = self.concurrency
        self.cooldown = cooldown
        self.in_flight = 0
        self.peak = 0
        """Most attempts handed to the transport at once (tests and the benchmark read it)."""
        self.throttles = 0
        self._transports: weakref.WeakSet[Any] = weakref.WeakSet()
        self._streak = 0
        self._last_cut = -1e9
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._start_lock = threading.Lock()
        self._queue_lock = threading.Lock()
        self._starting: list[Coroutine[Any, Any, Any]] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loop: LoopThread | None = None
        self._answers: queue.SimpleQueue[list[tuple[Future[Any], Any, BaseException | None]]] = (
            queue.SimpleQueue()
        )
        self._outbox: list[tuple[Future[Any], Any, BaseException | None]] = []

    def resize(self, concurrency: int) -> None:
        """A later model at the same endpoint asked for another concurrency: the latest wins."""
        concurrency = max(1, int(concurrency))
        if concurrency == self.concurrency:
            return
        self.concurrency = self.limit = concurrency
        if self._loop is not None:
            self._loop.loop.call_soon_threadsafe(self._wake)

    @property
    def loop(self) -> LoopThread:
        """The endpoint's event loop thread (started on first use, with the thread that delivers
        answers)."""
        if self._loop is None:
            with self._start_lock:
                if self._loop is None:
                    threading.Thread(target=self._deliver_loop, name=f"fairprobe-{self.name}-answers",
                                     daemon=True).start()  # fmt: skip
                    self._loop = LoopThread(self.name)
        return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Run ``coro`` on the endpoint's loop; its result lands in the returned future."""
        return self.loop.run(coro)

    def start(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Start ``coro`` on the endpoint's loop, which hands its outcome on itself. Coroutines
        started in a burst (a batch of hundreds) wake the loop once, not once each: every wake-up is
        a write to the loop's pipe that, on a busy small machine, costs the loop its turn for the GIL."""
        loop = self.loop
        with self._queue_lock:
            self._starting.append(coro)
            if len(self._starting) > 1:
                return  # a wake-up is on its way and will start this one too
        loop.loop.call_soon_threadsafe(self._start_all)

    def _start_all(self) -> None:
        with self._queue_lock:
            starting, self._starting = self._starting, []
        loop = asyncio.get_running_loop()
        for coro in starting:
            task = loop.create_task(coro)
            self._tasks.add(task)  # the loop keeps only weak references to its tasks
            task.add_done_callback(self._tasks.discard)

    def deliver(self, future: Future[T], result: T | None, error: BaseException | None = None) -> None:
        """Complete ``future`` on the answers thread (its callbacks, e.g. a cache write, run there).
        Called on the loop; the answers of one loop turn go to that thread as one batch: a hand-over
        per answer (a thread wake-up each, and on a busy machine a wait for the GIL each) cost the loop
        more than the answer itself at hundreds in flight."""
        self._outbox.append((future, result, error))
        if len(self._outbox) == 1:
            asyncio.get_running_loop().call_soon(self._hand_over)

    def _hand_over(self) -> None:
        batch, self._outbox = self._outbox, []
        self._answers.put(batch)

    def _deliver_loop(self) -> None:
        while True:
            batch = self._answers.get()
            _handing.gathered = gathered = {}
            try:
                for future, result, error in batch:
                    if error is not None:
                        future.set_exception(error)
                    else:
                        future.set_result(result)
            finally:
                _handing.gathered = None
            for flush, items in gathered.values():
                try:
                    flush(items)
                except Exception:  # as a future's callback would be: logged, the thread goes on
                    logging.getLogger("fairprobe.models").exception("storing a batch of answers failed")

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the :attr:`limit` in-flight places for one network attempt (on the loop):
        :meth:`acquire`, then :meth:`release` however the attempt ends."""
        await self.acquire()
        try:
            yield
        finally:
            self.release()

    def attach(self, transport: Any) -> None:
        """``transport`` sends this endpoint's requests (every model on the endpoint attaches its
        own). A transport with ``queues_ahead`` (the HTTP worker process) holds requests beyond its
        ``connections`` itself and sends at most that many at once; while it is the only transport
        on the endpoint and its ``connections`` do not exceed :attr:`limit`, :meth:`room` hands it
        ``connections`` more, so an answer is followed by the next request inside the worker, without
        waiting for this process's loop (on a busy 2-core machine, that wait idled the server in
        stretches at 256 in flight). With a second transport (which may not queue), after a 429
        lowered :attr:`limit`, or after a later model lowered ``concurrency``, nothing extra is
        handed over: the server never sees more than :attr:`limit`."""
        self._transports.add(transport)

    def detach(self, transport: Any) -> None:
        """``transport`` was closed: it no longer counts for :meth:`attach`'s one-transport rule."""
        self._transports.discard(transport)

    def room(self) -> int:
        """Attempts that may be handed to the transports at once: :attr:`limit`, plus the queue-ahead
        allowance of :meth:`attach` while it applies."""
        if len(self._transports) == 1:
            (only,) = self._transports
            ahead = int(getattr(only, "connections", 0)) if getattr(only, "queues_ahead", False) else 0
            if 0 < ahead <= self.limit:
                return self.limit + ahead
        return self.limit

    async def acquire(self) -> None:
        """Take one of the :meth:`room` in-flight places (on the loop), waiting for one if needed.
        A waiter woken by :meth:`_wake` is handed its place, so a newcomer cannot take it first."""
        if self.in_flight >= self.room() or self._waiters:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                elif waiter.done() and not waiter.cancelled():  # handed a place, then cancelled
                    self.in_flight -= 1
                    self._wake()
                raise
        else:
            self.in_flight += 1
        if self.in_flight > self.peak:
            self.peak = self.in_flight

    def release(self) -> None:
        """Give back a place taken with :meth:`acquire` (on the loop)."""
        self.in_flight -= 1
        if self._waiters:
            self._wake()

    def _wake(self) -> None:
        """Hand free places to waiters, first come first served."""
        room = self.room()
        while self.in_flight < room and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)

    def throttled(self) -> None:
        """The server answered 429: halve the limit (once per ``cooldown`` seconds)."""
        self.throttles += 1
        self._streak = 0
        now = time.monotonic()
        if now - self._last_cut >= self.cooldown:
            self._last_cut = now
            self.limit = max(1, self.limit // 2)

    def succeeded(self) -> None:
        """An answer came back: after ``limit`` in a row, allow one more request in flight."""
        if self.limit >= self.concurrency:
            return
        self._streak += 1
        if self._streak >= self.limit:
            self._streak = 0
            self.limit += 1
            self._wake()


_handing = threading.local()


def gather(key: object, item: Any, flush: Callable[[list[Any]], None]) -> bool:
    """Collect ``item`` under ``key`` while an answers thread hands over a batch of answers (in a
    future's callback); once every future of the batch is completed, ``flush(items)`` runs once per
    key with the items in the order they came. So a cache writes the answers of one batch in one
    transaction, not one each (at hundreds of answers a second, transactions and their GIL
    hand-overs were most of that thread's time). Anywhere else it collects nothing and returns False:
    the caller handles ``item`` at once."""
    gathered = getattr(_handing, "gathered", None)
    if gathered is None:
        return False
    entry = gathered.get(key)
    if entry is None:
        entry = gathered[key] = (flush, [])
    entry[1].append(item)
    return True


def scheduler_for(endpoint: str, concurrency: int) -> EndpointScheduler:
    """The process-wide scheduler of ``endpoint`` (one per base URL, shared by every model on it)."""
    with _lock:
        scheduler = _schedulers.get(endpoint)
        if scheduler is None:
            scheduler = _schedulers[endpoint] = EndpointScheduler(
                urlsplit(endpoint).netloc or "model", concurrency
            )
            return scheduler
    scheduler.resize(concurrency)
    return scheduler


class Pending(Generic[T]):
    """Answers that are being computed; :meth:`result` waits for them (in submission order)."""

    def __init__(
        self,
        wait: Callable[[], T],
        outstanding: Callable[[], int] = lambda: 0,
        cancel: Callable[[], None] = lambda: None,
    ):
        self._wait = wait
        self._outstanding = outstanding
        self.cancel = cancel
        """Drop the requests not sent yet (those in flight still finish and are stored)."""
        self._done = False
        self._value: Any = None

    @classmethod
    def ready(cls, value: T) -> Pending[T]:
        pending: Pending[T] = cls(lambda: value)
        return pending

    def outstanding(self) -> int:
        """Requests of this batch not answered yet (0 once :meth:`result` returned)."""
        return 0 if self._done else self._outstanding()

    def result(self) -> T:
        if not self._done:
            self._value = self._wait()
            self._done = True
        return self._value


_model_threads: weakref.WeakKeyDictionary[Any, ThreadPoolExecutor] = weakref.WeakKeyDictionary()


def submit_predict(
    model: Any, texts: list[str], on_item: Callable[[int], None] | None = None
) -> Pending[Any]:
    """``model.predict(texts)`` without waiting: through the model's own ``predict_async`` (HTTP
    requests on the endpoint's scheduler) when it has one, else on one background thread per model
    (an in-process model: batches run one after another, in order, while the driver works on)."""
    submit = getattr(model, "predict_async", None)
    if submit is not None:
        return submit(texts, on_item=on_item)
    return on_model_thread(model, lambda: model.predict(texts))


def submit_chat(
    model: Any, requests: list[Any], on_item: Callable[[int], None] | None = None
) -> Pending[Any]:
    """``model.chat(requests)`` without waiting (see :func:`submit_predict`)."""
    submit = getattr(model, "chat_async", None)
    if submit is not None:
        return submit(requests, on_item=on_item)
    return on_model_thread(model, lambda: model.chat(requests))


def on_model_thread(model: Any, call: Callable[[], T]) -> Pending[T]:
    """Run ``call`` on ``model``'s background thread (one per model object: its calls stay in order)."""
    with _lock:
        pool = _model_threads.get(model)
        if pool is None:
            pool = _model_threads[model] = ThreadPoolExecutor(1, thread_name_prefix="fairprobe-model")
    future = pool.submit(call)
    return Pending(future.result, lambda: 0 if future.done() else 1, future.cancel)


def release_model_thread(model: Any) -> None:
    """Stop the background thread of ``model`` (when its run ends)."""
    with _lock:
        pool = _model_threads.pop(model, None)
    if pool is not None:
        pool.shutdown(wait=False)


def backlog_for(model: Any, floor: int = 2) -> int:
    """Unanswered requests a :class:`Lookahead` keeps queued for ``model``: twice its endpoint's
    concurrency (so the next batch is queued before the current one drains), else ``floor`` (an
    in-process model: one batch running, one ready)."""
    seen: set[int] = set()
    while model is not None and id(model) not in seen:
        seen.add(id(model))
        scheduler = getattr(model, "scheduler", None)
        if isinstance(scheduler, EndpointScheduler):
            return max(floor, 2 * scheduler.concurrency)
        model = getattr(model, "inner", None) or getattr(model, "chat_model", None)
    return floor


class Lookahead(Generic[P, T]):
    """Prepare, submit and finish work items in order, with the model busy in between.

    ``run(items)`` pulls items from ``items`` (an iterator whose ``next`` does the driver's
    preparation, e.g. generation and the invariant), calls ``submit(item) -> Pending`` at once, and
    calls ``finish(item, answers)`` for the oldest item when the backlog is full or its answers are
    in, so finishing order equals item order (deterministic findings). The driver always prepares
    one item beyond the oldest unfinished one; it waits only when ``backlog`` requests are
    unanswered (or ``depth`` items wait); ``backlog`` should exceed the endpoint's concurrency
    (:func:`backlog_for`), so the model never runs dry while the driver finishes an item. ``depth``
    only bounds how many prepared items are held; it is large enough that small items (CAFFE's
    batches of 32 requests) do not cap the requests in flight below ``backlog`` (at 8 items they
    held 256 requests in flight at most, and none queued behind them).
    """

    def __init__(
        self,
        submit: Callable[[P], Pending[Any]],
        finish: Callable[[P, Any], None],
        *,
        backlog: int = 64,
        depth: int = 64,
    ):
        self.submit = submit
        self.finish = finish
        self.backlog = max(1, backlog)
        self.depth = max(1, depth)
        self.waited_s = 0.0
        """Seconds the driver spent waiting on answers (with nothing else to do)."""

    def run(self, items: Iterable[P]) -> None:
        queue: deque[tuple[P, Pending[Any]]] = deque()
        try:
            for item in items:
                queue.append((item, self.submit(item)))
                # finish what is answered already, and wait when the backlog is full
                while queue and (
                    queue[0][1].outstanding() == 0
                    or len(queue) >= self.depth
                    or (len(queue) >= 2 and sum(p.outstanding() for _, p in queue) >= self.backlog)
                ):
                    self._finish_oldest(queue)
            while queue:
                self._finish_oldest(queue)
        except BaseException:
            for _, pending in queue:  # stop: what is not sent yet is dropped...
                pending.cancel()
            for _, pending in queue:  # ...and what is in flight lands in the cache before leaving
                try:
                    pending.result()
                except BaseException:  # noqa: BLE001 - the first error is the one raised
                    pass
            raise

    def _finish_oldest(self, queue: deque[tuple[P, Pending[Any]]]) -> None:
        item, pending = queue[0]
        start = time.perf_counter()
        answers = pending.result()
        self.waited_s += time.perf_counter() - start
        queue.popleft()
        self.finish(item, answers)


def ordered_map(fn: Callable[[P], T], items: Iterable[P], workers: int) -> Iterator[T]:
    """``map(fn, items)`` with up to ``workers`` calls running at once on threads, results yielded in
    item order. For batch functions that call a model several times in a row (execute, then ask
    follow-ups, then a judge): while one batch waits on its judge, the next ones keep the endpoint
    busy. On an error the calls already running finish (their answers reach the cache), the others
    are dropped, and the first error in item order is raised."""
    if workers <= 1:
        yield from map(fn, items)
        return
    queue: deque[Future[T]] = deque()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fairprobe-batch") as pool:
        try:
            for item in items:
                queue.append(pool.submit(fn, item))
                while queue and (queue[0].done() or len(queue) >= 2 * workers):
                    yield queue.popleft().result()
            while queue:
                yield queue.popleft().result()
        except BaseException:
            for future in queue:
                future.cancel()
            raise


def batch_workers(model: Any, requests_per_batch: int, most: int = 32) -> int:
    """Batches to run at once so that ``model``'s endpoint always has work: enough batches to fill
    :func:`backlog_for` requests, at least 2 (one in the model, one being judged)."""
    return max(2, min(most, backlog_for(model) // max(1, requests_per_batch) + 1))
