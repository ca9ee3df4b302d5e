"""HTTP transports for the OpenAI-compatible backend, driven by one asyncio event loop per endpoint.

Why not a thread per request: at 256 requests in flight on a 2-core machine, 256 threads each
driving a synchronous ``httpx`` client spend the cores on the GIL and on the client's own locking
(about half of 256 / latency requests/s was reached). One event loop thread per endpoint waits on
every connection at once and spends CPU only when bytes arrive.

Two transports, one interface (``await transport.request(method, url, body) -> HTTPResponse``):

- :class:`PlainHTTP` — a lean HTTP/1.1 keep-alive client on asyncio streams, for plain ``http://``
  endpoints reached without a proxy (a local llama.cpp / vLLM / Ollama server, the usual case for
  high concurrency). It speaks just what a chat-completions exchange needs: ``Content-Length`` or
  ``chunked`` bodies, ``Connection: close``, basic auth from the URL.
  From :data:`~fairprobe.models.http_process.PROCESS_CONCURRENCY` (128) requests in flight on it
  runs in a worker process (:mod:`fairprobe.models.http_process`), out of the driver's GIL.
- :class:`HttpxTransport` — ``httpx.AsyncClient`` for everything else (``https://``, proxies from
  the environment, HTTP/1.1 features the lean client does not speak).

Both raise :class:`ConnectFailed` (nothing listens), :class:`TimedOut` (no answer within the
timeout) and :class:`BrokenConnection` (reset, closed mid-answer, unreadable HTTP), which the
backend retries like it did ``httpx``'s errors.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import urllib.request
from collections import deque
from collections.abc import Coroutine
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
CLIENT_CONNECTIONS = 32
"""Connections per ``httpx.AsyncClient`` (:class:`HttpxTransport`)."""


class TransportFailed(Exception):
    """A request that got no HTTP answer."""


class ConnectFailed(TransportFailed):
    """Nothing accepted the connection (server not running, wrong port)."""


class TimedOut(TransportFailed):
    """No complete answer within the timeout."""


class BrokenConnection(TransportFailed):
    """The connection was reset or closed mid-answer, or the answer was not HTTP/1.x."""


@dataclass
class HTTPResponse:
    """What a transport hands back: status, lower-cased headers, the body bytes."""

    status_code: int
    headers: dict[str, str] = field(default_factory=dict)
    content: bytes = b""

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)


class LoopThread:
    """One asyncio event loop on a daemon thread (one per endpoint): a run interrupted with Ctrl-C
    does not wait on it, and what it was sending is dropped with the process."""

    def __init__(self, name: str):
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=f"fairprobe-{name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Future[Any]:
        """Schedule ``coro`` on the loop; its result (or error) lands in the returned future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def on_loop(self) -> bool:
        return threading.current_thread() is self._thread


def proxied(url: str) -> bool:
    """Whether the environment routes ``url`` through a proxy (``HTTP_PROXY``/``ALL_PROXY`` minus
    ``NO_PROXY``); loopback never is."""
    host = urlsplit(url).hostname or ""
    if host in _LOOPBACK:
        return False
    proxies = urllib.request.getproxies_environment()
    if not (proxies.get("http") or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass_environment(host, proxies)


class PlainHTTP:
    """Lean HTTP/1.1 keep-alive client for one ``http://host:port`` (see the module docstring).

    Idle connections are kept (up to ``connections``) and reused; one the server closed while idle
    is noticed (end of stream already seen) and dropped before use. A request that fails midway is
    not re-sent here: the backend's retry loop decides (and counts it)."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout: float, connections: int):
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.timeout = timeout
        self.connections = max(1, connections)
        host_header = parts.netloc.rpartition("@")[2]
        fixed = {"Host": host_header, "Accept": "application/json", "User-Agent": "fairprobe"}
        if parts.username is not None:  # a key written into the URL: HTTP basic auth, as httpx sends it
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            fixed["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        fixed.update(headers)
        self._head = "".join(f"{k}: {v}\r\n" for k, v in fixed.items())
        self._idle: deque[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = deque()

    async def request(self, method: str, url: str, body: Any = None) -> HTTPResponse:
        try:
            async with asyncio.timeout(self.timeout):
                return await self._exchange(method, url, body)
        except TimeoutError:
            raise TimedOut(f"no answer within {self.timeout:g} s") from None

    async def _connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        while self._idle:
            reader, writer = self._idle.pop()
            if not reader.at_eof() and not writer.is_closing():
                return reader, writer
            writer.close()
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port, limit=2**20)
        except OSError as exc:
            raise ConnectFailed(str(exc)) from None
        return reader, writer

    async def _exchange(self, method: str, url: str, body: Any) -> HTTPResponse:
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        payload = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
        head = f"{method} {target} HTTP/1.1\r\n{self._head}"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        reader, writer = await self._connection()
        keep = False
        try:
            writer.write(head.encode("latin-1") + b"\r\n" + payload)
            response, keep = await self._read(reader)
            return response
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError) as exc:
            raise BrokenConnection(type(exc).__name__) from None
        finally:
            if keep and len(self._idle) < self.connections:
                self._idle.append((reader, writer))
            else:
                writer.close()

    @staticmethod
    async def _read(reader: asyncio.StreamReader) -> tuple[HTTPResponse, bool]:
        """One response; and whether the connection may be reused."""
        lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        if not version.startswith("HTTP/1."):
            raise ValueError("not an HTTP/1.x answer")
        status = int(rest[:3])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                        pass
                    break
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
            content = b"".join(chunks)
        elif "content-length" in headers:
            content = await reader.readexactly(int(headers["content-length"]))
        elif status in (204, 304) or 100 <= status < 200:
            content = b""
        else:  # no length: the body runs to the end of the connection
            content, keep = await reader.read(), False
        return HTTPResponse(status, headers, content), keep

    async def aclose(self) -> None:
        while self._idle:
            self._idle.pop()[1].close()


class HttpxTransport:
    """``httpx.AsyncClient`` behind the same interface (https, proxies: ``trust_env`` except for
    loopback, as before). One client per :data:`CLIENT_CONNECTIONS` connections, used in turn: one
    httpx pool serving hundreds of requests at once spends its time managing itself."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout: float, connections: int):
        import httpx

        self._httpx = httpx
        host = urlsplit(base_url).hostname or ""
        size = min(max(1, connections), CLIENT_CONNECTIONS)
        self._clients = [
            httpx.AsyncClient(
                headers=headers,
                timeout=httpx.Timeout(timeout),
                limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
                trust_env=host not in _LOOPBACK,
            )
            for _ in range(-(-max(1, connections) // CLIENT_CONNECTIONS))
        ]
        self._turn = 0
        self.timeout = timeout

    async def request(self, method: str, url: str, body: Any = None) -> HTTPResponse:
        httpx = self._httpx
        self._turn = (self._turn + 1) % len(self._clients)
        try:
            response = await self._clients[self._turn].request(method, url, json=body)
        except httpx.TimeoutException:
            raise TimedOut(f"no answer within {self.timeout:g} s") from None
        except httpx.ConnectError as exc:
            raise ConnectFailed(str(exc)) from None
        except httpx.TransportError as exc:
            raise BrokenConnection(type(exc).__name__) from None
        return HTTPResponse(response.status_code, {k.lower(): v for k, v in response.headers.items()},
                            response.content)  # fmt: skip

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()
