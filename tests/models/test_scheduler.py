"""The shared request scheduler: requests stay in flight across batches up to the endpoint's bound,
answers come back in request order, HTTP 429 lowers the bound and success raises it again, a server
that dies mid-run keeps every answer it gave, and a progress line counts retries instead of printing
each one. Real HTTP throughout: the FAKE fixed-latency server of ``latency_server.py`` (a real server
cannot be made to answer with a known latency, out of order, or to die on cue) and the FAKE 429
server of ``servers.py``."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from latency_server import LatencyServer, echo
from servers import FaultServer, free_port

from fairprobe.errors import ModelError
from fairprobe.models import ChatRequest, load_chat
from fairprobe.models.http_process import ProcessTransport
from fairprobe.models.scheduler import (
    HOSTED_CONCURRENCY,
    LOCAL_CONCURRENCY,
    EndpointScheduler,
    Lookahead,
    Pending,
    default_concurrency,
)
from fairprobe.models.transport import PlainHTTP
from fairprobe.run.caching import CachedChatModel
from fairprobe.run.progress import ProgressReporter
from fairprobe.run.store import Store

FAST = {"backoff": 0.0, "timeout": 10.0}


def _requests(prefix: str, n: int) -> list[ChatRequest]:
    return [ChatRequest.of(f"{prefix} {i}") for i in range(n)]


def test_requests_stay_in_flight_across_batches_up_to_the_bound_in_order(tmp_path):
    with LatencyServer(latency=0.05, jitter=0.1) as server, Store(tmp_path / "run.db") as store:
        model = CachedChatModel(load_chat(server.uri(), concurrency=6, **FAST), [store])
        batches = [_requests(f"batch {b}", 4) for b in range(8)]  # 4 per batch: a barrier would cap at 4
        pending = [model.chat_async(batch) for batch in batches]
        answers = [p.result() for p in pending]
        stored = store.get_responses(model.fingerprint.key, [r.cache_key() for b in batches for r in b])
    assert [[a.text for a in batch] for batch in answers] == [
        [f"echo: {r.messages[-1].content}" for r in batch] for batch in batches
    ]
    assert server.max_in_flight == 6  # the bound, reached across batches, never passed
    assert model.calls == 32 and server.posts == 32
    assert len(stored) == 32  # each answer stored as it arrived


def test_a_request_in_flight_for_an_earlier_batch_is_not_sent_twice(tmp_path):
    with LatencyServer(latency=0.1) as server, Store(tmp_path / "run.db") as store:
        model = CachedChatModel(load_chat(server.uri(), concurrency=4, **FAST), [store])
        first = model.chat_async(_requests("same", 3))
        second = model.chat_async(_requests("same", 3))  # asked again before the first answers came
        assert [a.text for a in first.result()] == [a.text for a in second.result()]
    assert server.posts == 3


def test_default_concurrency_follows_the_endpoint():
    assert default_concurrency("http://127.0.0.1:8080/v1") == LOCAL_CONCURRENCY
    assert default_concurrency("http://192.168.1.20:8000/v1") == LOCAL_CONCURRENCY
    assert default_concurrency("https://api.openai.com/v1") == HOSTED_CONCURRENCY
    with LatencyServer() as server:
        assert load_chat(server.uri(), **FAST).concurrency == LOCAL_CONCURRENCY


def test_429_halves_the_bound_once_per_burst_and_success_raises_it_again():
    scheduler = EndpointScheduler("test", 8, cooldown=60.0)
    for _ in range(5):  # one burst of 429s counts once
        scheduler.throttled()
    assert scheduler.limit == 4 and scheduler.throttles == 5
    for _ in range(4 + 5 + 6 + 7):  # `limit` answers in a row give one more slot
        scheduler.succeeded()
    assert scheduler.limit == 8
    scheduler.succeeded()
    assert scheduler.limit == 8  # never above the configured concurrency


def test_one_worker_transport_gets_queue_ahead_room_until_a_429_a_second_transport_or_a_lower_bound():
    scheduler = EndpointScheduler("test", 8, cooldown=60.0)
    assert scheduler.room() == 8  # no transport that queues: the bound itself
    worker = ProcessTransport("http://x/v1", {}, 5, 8)
    scheduler.attach(worker)
    assert scheduler.room() == 16  # 8 in flight at the server, 8 more waiting in the worker
    scheduler.throttled()
    assert scheduler.room() == 4  # after a 429 the worker gets no more than the lowered bound
    for _ in range(4 + 5 + 6 + 7):
        scheduler.succeeded()
    assert scheduler.room() == 16
    plain = PlainHTTP("http://x/v1", {}, 5, 8)
    scheduler.attach(plain)  # it sends whatever it is handed: nothing extra for anyone
    assert scheduler.room() == 8
    scheduler.detach(plain)
    assert scheduler.room() == 16
    scheduler.resize(4)  # a later model asked for 4: the worker's 8 could pass it
    assert scheduler.room() == 4


def test_http_429_from_a_fake_server_lowers_concurrency_and_every_request_is_answered(tmp_path):
    with FaultServer(script=[("429", 0)] * 6) as fault, Store(tmp_path / "run.db") as store:
        model = CachedChatModel(load_chat(fault.uri, concurrency=8, retries=8, **FAST), [store])
        answers = model.chat(_requests("q", 12))
        scheduler = model.inner.scheduler
    assert [a.text for a in answers] == [f"echo: q {i}" for i in range(12)]
    assert scheduler.throttles == 6
    assert scheduler.limit < 8  # 12 answers after a halving to 4 are not enough to climb back to 8


def test_a_slot_is_not_held_while_a_request_waits_out_its_back_off():
    scheduler = EndpointScheduler("test", 1)
    events: list[str] = []

    async def holder(gate: asyncio.Event) -> None:
        async with scheduler.slot():
            events.append("holder in")
            await gate.wait()
        events.append("holder out")

    async def other() -> None:
        async with scheduler.slot():
            events.append("other in")

    async def main() -> None:
        gate = asyncio.Event()
        first = asyncio.ensure_future(holder(gate))
        await asyncio.sleep(0)
        second = asyncio.ensure_future(other())
        await asyncio.sleep(0.05)
        assert events == ["holder in"]  # bound of 1: the other waits
        gate.set()
        await asyncio.gather(first, second)

    scheduler.run(main()).result(5)
    assert events == ["holder in", "holder out", "other in"]
    assert scheduler.in_flight == 0 and scheduler.peak == 1


def test_lookahead_keeps_a_backlog_of_small_items_instead_of_a_fixed_number_of_items():
    submitted: list[int] = []
    at_first_finish: list[int] = []

    def submit(i):
        submitted.append(i)
        return Pending(lambda: i, lambda: 2)  # two requests each, unanswered until waited on

    def finish(i, answer):
        if not at_first_finish:
            at_first_finish.append(len(submitted))

    Lookahead(submit, finish, backlog=40).run(iter(range(30)))
    assert at_first_finish == [20]  # 40 requests queued (a cap of 8 items held 16)


def test_lookahead_prepares_the_next_item_while_the_model_answers_and_finishes_in_order():
    events: list[str] = []
    gate = {i: threading.Event() for i in range(4)}

    def items():
        for i in range(4):
            events.append(f"prepare {i}")
            yield i

    def submit(i):
        if i == 1:  # item 0 is answered only after item 1 was prepared: the driver did not wait on it
            gate[0].set()
        gate[i].set() if i else None
        return Pending(lambda: gate[i].wait(5) and i, lambda: 0 if gate[i].is_set() else 1)

    Lookahead(submit, lambda i, answer: events.append(f"finish {answer}"), backlog=2).run(items())
    assert events.index("prepare 1") < events.index("finish 0")
    assert [e for e in events if e.startswith("finish")] == [f"finish {i}" for i in range(4)]


def test_a_server_dying_mid_run_keeps_what_it_answered_and_a_rerun_asks_only_the_rest(tmp_path):
    port = free_port()
    logs = [tmp_path / "served1.log", tmp_path / "served2.log"]

    def serve(log: Path) -> subprocess.Popen:
        here = Path(__file__).resolve().parents[1]
        proc = subprocess.Popen(
            [sys.executable, str(here / "latency_server.py"), "--port", str(port), "--latency", "0.1",
             "--log", str(log)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stdout is not None and proc.stdout.readline().startswith("serving")
        return proc

    batches = [_requests(f"batch {b}", 10) for b in range(4)]
    server = serve(logs[0])
    with Store(tmp_path / "run.db") as store:
        model = CachedChatModel(load_chat(f"openai+http://127.0.0.1:{port}/v1#planted", concurrency=4,
                                          retries=0, **FAST), [store])  # fmt: skip
        pending = [model.chat_async(batch) for batch in batches]
        deadline = time.monotonic() + 30
        while (
            not logs[0].exists() or len(logs[0].read_text().splitlines()) < 12
        ) and time.monotonic() < deadline:
            time.sleep(0.01)
        server.kill()  # the server dies mid-run, with requests in flight
        server.wait()
        with pytest.raises(ModelError, match="cannot reach|failed"):
            for p in pending:
                p.result()
        keys = [r.cache_key() for b in batches for r in b]
        kept = store.get_responses(model.fingerprint.key, keys)
        assert 8 <= len(kept) < 40  # what was answered before the kill (in-flight answers may be lost)
    server = serve(logs[1])
    try:
        with Store(tmp_path / "run.db") as store:
            model = CachedChatModel(load_chat(f"openai+http://127.0.0.1:{port}/v1#planted", **FAST), [store])
            answers = [a.text for b in batches for a in model.chat([r for r in b])]
    finally:
        server.kill()
        server.wait()
    assert answers == [f"echo: batch {b} {i}" for b in range(4) for i in range(10)]
    asked_again = logs[1].read_text().splitlines()
    assert len(asked_again) == 40 - len(kept)  # each kept answer is reused, every other one asked once


def test_progress_counts_retries_on_its_line_instead_of_printing_each():
    stream = io.StringIO()
    with FaultServer(script=[("500",)] * 3) as fault:
        model = load_chat(fault.uri, concurrency=1, retries=5, **FAST)
        with ProgressReporter("run: asking", 2, stream=stream, interval=0.0) as bar:
            for request in _requests("q", 2):
                model.chat([request])
                bar.advance(0.5)
                bar.advance(0.5)  # fractions of an item: per-answer progress
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith("run: asking: 2/2 (100%)") and lines[-1].endswith(", 3 retries")
    assert not any("retry" in line and "retries" not in line for line in lines)


def _until(condition, what: str) -> None:
    """Wait for ``condition()`` (a bound on a wait, not on how long anything takes)."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.005)


def test_answers_arriving_together_are_stored_in_one_transaction_and_complete_after_it(tmp_path):
    """The 40 answers are made to arrive together whatever the machine's load: the server holds
    them until all 40 requests are in, and the client's loop is held while they are written, so
    the loop finds all 40 on its sockets at once."""
    release = threading.Event()

    def held(messages):  # the echo answer, once every request has reached the server
        release.wait(60)
        return echo(messages)

    with LatencyServer(held, latency=0.0) as server, Store(tmp_path / "run.db") as store:
        writes: list[int] = []
        put = store.put_responses

        def counted(fingerprint, items):  # the real write, counted
            writes.append(len(items))
            put(fingerprint, items)

        store.put_responses = counted  # type: ignore[method-assign]
        chat = load_chat(server.uri(), concurrency=40, **FAST)
        model = CachedChatModel(chat, [store])
        requests = _requests("together", 40)
        futures = [model._send(r.cache_key(), r) for r in requests]
        _until(lambda: server.in_flight == 40, "the 40 requests to reach the server")
        loop_held, loop_free = threading.Event(), threading.Event()
        chat.scheduler.loop.loop.call_soon_threadsafe(lambda: (loop_held.set(), loop_free.wait(60)))
        assert loop_held.wait(60)
        release.set()
        _until(lambda: server.answered == 40, "the 40 answers to be written")
        loop_free.set()
        stored_when_done = []
        for r, f in zip(requests, futures, strict=True):
            f.result(10)  # done: its answer is in the store already
            stored_when_done.append(bool(store.get_responses(model.fingerprint.key, [r.cache_key()])))
    assert all(stored_when_done)
    assert sum(writes) == 40  # every answer stored once...
    assert len(writes) < 40  # ...in fewer transactions than answers (one per answer before batching)


def test_a_request_answered_while_a_later_batch_is_being_sent_is_not_sent_again(tmp_path):
    with LatencyServer(latency=0.2) as server, Store(tmp_path / "run.db") as store:
        model = CachedChatModel(load_chat(server.uri(), concurrency=4, **FAST), [store])
        first = model.chat_async(_requests("same", 1))
        lookup = model._lookup

        def slow_lookup(keys):  # the real lookup; then the first answer lands before the batch is sent
            found = lookup(keys)
            first.result()
            return found

        model._lookup = slow_lookup  # type: ignore[method-assign]
        second = model.chat_async(_requests("same", 1) + _requests("other", 1))
        assert [a.text for a in second.result()] == ["echo: same 0", "echo: other 0"]
    assert server.posts == 2  # "same 0" once, "other 0" once
