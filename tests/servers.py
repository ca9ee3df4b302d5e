"""Local HTTP servers for the model tests.

- :func:`start_llama_server` runs the real llama.cpp OpenAI-compatible server on the packaged
  SmolLM2-135M-Instruct GGUF (a real model, a real HTTP server, on a free loopback port).
- :class:`FaultServer` is a FAKE OpenAI-compatible server, scripted to misbehave (429 with
  Retry-After, 500, slow answers, connection resets, malformed JSON) so the client's retry logic
  can be tested; a real server cannot be made to fail on cue.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def smollm2_gguf() -> Path:
    from fairprobe.models.embedded import smollm2_gguf_path

    return smollm2_gguf_path()


@contextmanager
def start_llama_server(
    port: int | None = None, n_threads: int = 1, timeout_s: float = 120.0
) -> Iterator[str]:
    """Run ``python -m llama_cpp.server`` on SmolLM2 (alias ``smollm2``); yield its ``/v1`` base URL.

    ``n_threads`` defaults to 1: on the shared 2-core test machine, 2 llama.cpp threads next to
    one busy process spin-wait on each other and a 12-token answer takes 10-30 s instead of 0.3 s.
    """
    port = port or free_port()
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(smollm2_gguf()),
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "2048", "--n_threads", str(n_threads),
        "--model_alias", "smollm2",
    ]  # fmt: skip
    log = open(os.devnull, "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with code {proc.returncode}: {' '.join(cmd)}")
            try:
                if httpx.get(f"{base}/models", timeout=2.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server did not answer on {base} within {timeout_s:g} s")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@dataclass
class Received:
    """One request the fake server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float  # time.monotonic() on arrival


@dataclass
class FaultServer:
    """FAKE OpenAI-compatible server (http.server in a thread) that answers from a script.

    ``script`` is consumed one action per ``POST /v1/chat/completions``; when it is empty the
    server answers normally. ``GET /v1/models`` always lists ``model_id``. Actions:

    - ``("429", seconds)`` — HTTP 429 with ``Retry-After: seconds``;
    - ``("500",)`` — HTTP 500;
    - ``("delay", seconds)`` — sleep, then answer normally (longer than the client's timeout);
    - ``("reset",)`` — close the connection with a TCP RST, no response;
    - ``("malformed",)`` — HTTP 200 with a body that is not JSON;
    - ``("status", code, body)`` — HTTP ``code`` with the JSON text ``body``;
    - ``("ok", text)`` — answer ``text``.

    A normal answer is ``"echo: <last user message>"``. Use as a context manager.
    """

    script: list[tuple[Any, ...]] = field(default_factory=list)
    model_id: str = "fault-model"
    received: list[Received] = field(default_factory=list)
    max_in_flight: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._connections: set[socket.socket] = set()

    # -- counters -----------------------------------------------------------------------------
    @property
    def posts(self) -> list[Received]:
        return [r for r in self.received if r.method == "POST"]

    @property
    def post_count(self) -> int:
        return len(self.posts)

    def _next_action(self) -> tuple[Any, ...]:
        with self._lock:
            return self.script.pop(0) if self.script else ("ok", None)

    # -- lifecycle ----------------------------------------------------------------------------
    def __enter__(self) -> FaultServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self) -> None:
                with server._lock:
                    server._connections.discard(self.connection)
                try:
                    super().finish()
                except OSError:  # a reset connection
                    pass

            def _record(self, body: Any) -> None:
                with server._lock:
                    server.received.append(
                        Received(self.command, self.path, dict(self.headers.items()), body, time.monotonic())
                    )

            def _send(self, code: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                self._record(None)
                if self.path.rstrip("/").endswith("/models"):
                    data = {"object": "list", "data": [{"id": server.model_id, "object": "model"}]}
                    self._send(200, json.dumps(data).encode())
                else:
                    self._send(404, b'{"error": "not found"}')

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                self._record(body)
                with server._lock:
                    server._in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server._in_flight)
                try:
                    self._act(server._next_action(), body)
                finally:
                    with server._lock:
                        server._in_flight -= 1

            def _act(self, action: tuple[Any, ...], body: Any) -> None:
                kind = action[0]
                if kind == "429":
                    self._send(
                        429, b'{"error": {"message": "rate limited"}}', {"Retry-After": str(action[1])}
                    )
                elif kind == "500":
                    self._send(500, b'{"error": {"message": "internal error"}}')
                elif kind == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    self.connection.close()
                elif kind == "status":
                    self._send(int(action[1]), str(action[2]).encode())
                elif kind == "malformed":
                    self._send(200, b'{"choices": [{"message": {"content": "trunc')
                else:
                    if kind == "delay":
                        time.sleep(float(action[1]))
                    text = action[1] if kind == "ok" and action[1] is not None else self._echo(body)
                    self._send(200, json.dumps(self._completion(text, body)).encode())

            @staticmethod
            def _echo(body: Any) -> str:
                users = [m["content"] for m in body.get("messages", []) if m.get("role") == "user"]
                return f"echo: {users[-1] if users else ''}"

            @staticmethod
            def _completion(text: str, body: Any) -> dict[str, Any]:
                return {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "model": body.get("model", server.model_id),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 3, "completion_tokens": len(text.split()), "total_tokens": 0},
                }

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

            def handle_error(self, request: Any, client_address: Any) -> None:  # resets are on purpose
                pass

        self._httpd = Server(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            with self._lock:  # close kept-alive connections too: the server is gone
                for conn in list(self._connections):
                    try:
                        conn.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "use FaultServer as a context manager"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def uri(self) -> str:
        return f"openai+{self.base_url}#{self.model_id}"


class CountingProxy:
    """A real forwarding HTTP proxy in front of a real server that records every POST body.

    Used to count model calls *at the server* (issue 2 §5): each chat completion the client sends
    passes through here, is recorded, and is answered by the upstream server.
    """

    def __init__(self, upstream: str):
        self.upstream = upstream.rstrip("/")
        self._lock = threading.Lock()
        self.bodies: list[dict[str, Any]] = []

    def __enter__(self) -> CountingProxy:
        proxy = self
        client = httpx.Client(timeout=120)

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if method == "POST":
                    with proxy._lock:
                        proxy.bodies.append(json.loads(body))
                path = self.path[len("/v1") :] if self.path.startswith("/v1") else self.path
                resp = client.request(
                    method,
                    proxy.upstream + path,
                    content=body or None,
                    headers={"Content-Type": "application/json"},
                )
                self.send_response(resp.status_code)
                self.send_header("Content-Type", resp.headers.get("content-type", "application/json"))
                self.send_header("Content-Length", str(len(resp.content)))
                self.end_headers()
                self.wfile.write(resp.content)

            def do_GET(self) -> None:  # noqa: N802
                self._forward("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._forward("POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self._client = client
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def count(self) -> int:
        with self._lock:
            return len(self.bodies)


class LocalFake:
    """Base of the small FAKE HTTP servers the tests start on 127.0.0.1 (a free port, a daemon
    thread): a subclass gives :meth:`handler`, the request handler class, and its URI from ``port``."""

    def handler(self) -> type:
        raise NotImplementedError

    def __enter__(self):
        from http.server import ThreadingHTTPServer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]
