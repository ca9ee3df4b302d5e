"""The HTTP client process behind :class:`~fairprobe.models.http_process.ProcessTransport`.

Run as a script (``python http_worker.py FD``) with one end of a socket pair on ``FD``; it imports
nothing of fairprobe but :mod:`fairprobe.models.transport` (loaded from its file, stdlib only), so it
starts in a fraction of a second. It reads batches of requests, sends each with
:class:`~fairprobe.models.transport.PlainHTTP` (keep-alive connections, the timeout, every HTTP/1.1
detail the in-process client handles) and writes the answers back in batches, one per turn of its
event loop. It decides nothing: retries, back-off, 429 handling, ordering and storing stay in the
parent, which sees the same answers and the same three failures (``ConnectFailed``, ``TimedOut``,
``BrokenConnection``) as from the in-process client. At most ``connections`` requests are sent at
once; the parent may hand over more (its scheduler's queue-ahead room), which wait here in the order
they came, so an answer is followed by the next request without a round trip through the parent.

Frames, both ways: a 4-byte big-endian length, then a pickled list. Parent to worker: the settings
``(base_url, headers, timeout, connections)`` once, then lists of ``(id, method, url, body)``.
Worker to parent: lists of ``(id, status, headers, content, None)`` or ``(id, None, None, None,
(failure class name, message))``.

Ctrl-C belongs to the parent (the worker ignores SIGINT and runs in its own session): on Ctrl-C the
parent stops sending, and what is in flight is still answered and stored. When the parent goes away
(its end of the socket closes) the worker finishes what is in flight and exits.
"""

from __future__ import annotations

import asyncio
import importlib.util
import pickle
import signal
import socket
import struct
import sys
from pathlib import Path
from typing import Any

_LENGTH = struct.Struct(">I")


def frame(items: Any) -> bytes:
    """One frame: length, then the pickled ``items``."""
    data = pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(data)) + data


async def read_frame(reader: asyncio.StreamReader) -> Any:
    """The next frame's items; ``asyncio.IncompleteReadError`` at the end of the stream."""
    (size,) = _LENGTH.unpack(await reader.readexactly(_LENGTH.size))
    return pickle.loads(await reader.readexactly(size))


def _transport_module() -> Any:
    """:mod:`fairprobe.models.transport`, loaded from its file without importing the package."""
    spec = importlib.util.spec_from_file_location(
        "_fairprobe_transport", Path(__file__).with_name("transport.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


async def serve(fd: int) -> None:
    transport_module = _transport_module()
    reader, writer = await asyncio.open_connection(sock=socket.socket(fileno=fd), limit=2**24)
    base_url, headers, timeout, connections = await read_frame(reader)
    client = transport_module.PlainHTTP(base_url, headers, timeout, connections)
    sending = asyncio.Semaphore(connections)  # the parent may hand over more: they wait here, in order
    loop = asyncio.get_running_loop()
    outbox: list[tuple[Any, ...]] = []
    tasks: set[asyncio.Task[None]] = set()

    def flush() -> None:
        nonlocal outbox
        batch, outbox = outbox, []
        if not writer.is_closing():
            writer.write(frame(batch))

    async def one(rid: int, method: str, url: str, body: Any) -> None:
        try:
            async with sending:
                response = await client.request(method, url, body)
            item: tuple[Any, ...] = (rid, response.status_code, response.headers, response.content, None)
        except transport_module.TransportFailed as exc:
            item = (rid, None, None, None, (type(exc).__name__, str(exc)))
        except Exception as exc:  # noqa: BLE001 - anything else: a broken exchange, retried by the parent
            item = (rid, None, None, None, ("BrokenConnection", f"{type(exc).__name__}: {exc}"))
        outbox.append(item)
        if len(outbox) == 1:
            loop.call_soon(flush)

    try:
        while True:
            for request in await read_frame(reader):
                task = loop.create_task(one(*request))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass  # the parent closed its end (or exited): finish what is in flight, then leave
    if tasks:
        await asyncio.wait(set(tasks))
    await client.aclose()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(serve(int(sys.argv[1])))


if __name__ == "__main__":
    sys.path.pop(0)  # this folder's modules must not shadow the standard library's
    main()
