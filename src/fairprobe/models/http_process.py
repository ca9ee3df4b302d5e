"""The lean HTTP client in its own process, for hundreds of requests in flight.

Why: at 256 requests in flight the in-process client makes a few thousand socket calls a second on
the endpoint's loop thread, each of which gives up the GIL; while the driver (HInter's generation,
prompt building, judging, storing) computes, the loop thread waits for the GIL after every one of
them (up to the 5 ms switch interval), and the model runs dry in stretches. Here the sockets live in
a worker process (:mod:`fairprobe.models.http_worker`) with its own GIL and core: the loop thread
only hands requests over and takes answers back, one batch per turn of its loop each way.

:class:`ProcessTransport` has the interface of the in-process transports
(``await request(method, url, body) -> HTTPResponse``, raising ``ConnectFailed`` / ``TimedOut`` /
``BrokenConnection``), so the backend's retries, back-off, 429 handling, redaction, cancellation
and storing are the same code. A worker that dies fails what it had in flight with
``BrokenConnection`` (retried by the backend) and the next request starts a new one.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fairprobe.models import transport as _transport
from fairprobe.models.http_worker import frame, read_frame
from fairprobe.models.transport import BrokenConnection, HTTPResponse

PROCESS_CONCURRENCY = 128
"""From this many requests in flight on, plain ``http://`` endpoints use :class:`ProcessTransport`."""

_FAILURES = {
    "ConnectFailed": _transport.ConnectFailed,
    "TimedOut": _transport.TimedOut,
    "BrokenConnection": _transport.BrokenConnection,
}


class ProcessTransport:
    """The lean keep-alive client (:class:`~fairprobe.models.transport.PlainHTTP`) run in a worker
    process (see the module docstring). Used on one event loop (the endpoint's)."""

    queues_ahead = True
    """The worker sends at most :attr:`connections` requests at once and queues the rest in order
    (see :meth:`~fairprobe.models.scheduler.EndpointScheduler.attach`)."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout: float, connections: int):
        self._settings = (base_url, dict(headers), timeout, connections)
        self.connections = connections
        self.timeout = timeout
        self._ids = itertools.count()
        self._waiting: dict[int, asyncio.Future[HTTPResponse]] = {}
        self._outbox: list[tuple[int, str, str, Any]] = []
        self._writer: asyncio.StreamWriter | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._starting: asyncio.Lock | None = None
        self._reading: asyncio.Task[None] | None = None
        self.started = 0
        """Worker processes started so far (a test reads it)."""

    async def request(self, method: str, url: str, body: Any = None) -> HTTPResponse:
        writer = self._writer
        if writer is None or writer.is_closing():
            writer = await self._start()
        loop = asyncio.get_running_loop()
        rid = next(self._ids)
        answer: asyncio.Future[HTTPResponse] = loop.create_future()
        self._waiting[rid] = answer
        self._outbox.append((rid, method, url, body))
        if len(self._outbox) == 1:
            loop.call_soon(self._flush, writer)
        # the worker times the request out; this only guards against a worker that hangs. A request
        # queued in the worker waits at most one timeout for its turn (the scheduler hands it at most
        # ``connections`` beyond those in flight, each of which ends within a timeout), then has its own.
        try:
            async with asyncio.timeout(2 * self.timeout + 10):
                return await answer
        except TimeoutError:
            raise _transport.TimedOut(f"no answer within {self.timeout:g} s") from None
        finally:
            self._waiting.pop(rid, None)

    def _flush(self, writer: asyncio.StreamWriter) -> None:
        batch, self._outbox = self._outbox, []
        if writer.is_closing():  # the worker went away meanwhile: what this batch waits on fails
            for rid, *_ in batch:
                self._fail(rid, BrokenConnection("the HTTP worker process exited"))
            return
        writer.write(frame(batch))

    def _fail(self, rid: int, error: Exception) -> None:
        answer = self._waiting.get(rid)
        if answer is not None and not answer.done():
            answer.set_exception(error)

    async def _start(self) -> asyncio.StreamWriter:
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._writer is not None and not self._writer.is_closing():
                return self._writer
            ours, theirs = socket.socketpair()
            package_root = str(Path(__file__).resolve().parents[2])
            env = {
                **os.environ,
                "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])),
            }
            worker = Path(__file__).with_name("http_worker.py")
            self._process = subprocess.Popen(
                [sys.executable, str(worker), str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # Ctrl-C goes to the parent, which decides what stops
            )
            theirs.close()
            self.started += 1
            reader, writer = await asyncio.open_connection(sock=ours, limit=2**24)
            writer.write(frame(self._settings))
            self._writer = writer
            self._reading = asyncio.get_running_loop().create_task(self._read_answers(reader, writer))
            # it waits for answers until the worker goes; at exit the endpoint's (daemon) loop is
            # dropped with it pending, which is expected: no "Task was destroyed" line on stderr
            self._reading._log_destroy_pending = False  # type: ignore[attr-defined]
            return writer

    async def _read_answers(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                for rid, status, headers, content, failure in await read_frame(reader):
                    answer = self._waiting.get(rid)
                    if answer is None or answer.done():
                        continue
                    if failure is None:
                        answer.set_result(HTTPResponse(status, headers, content))
                    else:
                        kind, message = failure
                        answer.set_exception(_FAILURES.get(kind, BrokenConnection)(message))
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        writer.close()
        if self._writer is writer:
            self._writer = None
        for rid in list(self._waiting):  # sent to the worker that is gone: retried by the backend
            self._fail(rid, BrokenConnection("the HTTP worker process exited"))
        if self._process is not None:
            self._process.poll()

    async def aclose(self) -> None:
        """Let the worker finish what is in flight and exit (it sees this end close)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def open_transport(base_url: str, headers: dict[str, str], timeout: float, connections: int) -> Any:
    """The transport for ``base_url``: for ``http://`` without a proxy :class:`PlainHTTP`, run in
    a worker process from :data:`PROCESS_CONCURRENCY` requests in
    flight on (:class:`ProcessTransport`); else :class:`HttpxTransport`."""
    parts = urlsplit(base_url)
    if parts.scheme == "http" and not _transport.proxied(base_url):
        if connections >= PROCESS_CONCURRENCY and os.name == "posix":  # it hands the worker a socket fd
            return ProcessTransport(base_url, headers, timeout, connections)
        return _transport.PlainHTTP(base_url, headers, timeout, connections)
    return _transport.HttpxTransport(base_url, headers, timeout, connections)
