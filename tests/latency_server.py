"""FAKE OpenAI-compatible server with a known latency per request, answering through a planted function.

A real server cannot be made to answer every request in exactly 200 ms, nor out of order on cue,
nor to die mid-run and come back with the same answers, so the scheduler's tests and
``bench/throughput.py`` use this one. Each ``POST /v1/chat/completions`` sleeps ``latency`` seconds
(plus up to ``jitter`` seconds, drawn from the request body's hash, so answers of one batch arrive
out of order but every run has the same timings), then answers ``planted(messages)``, the same
function a ``py-chat:`` model would use. ``GET /v1/models`` lists ``model_id``. With ``log`` set,
each answered request is appended to that file as one line, ``ARRIVED<TAB>ANSWERED<TAB>last user
message`` (Unix times), so a test can see which requests reached the server, and how often, and a
benchmark how long the server was busy.

As a process (for benchmarks: its threads do not share the client's GIL)::

    python tests/latency_server.py --port 8123 --latency 0.2 --planted module:function
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Planted = Callable[[list[dict[str, str]]], str]


def echo(messages: list[dict[str, str]]) -> str:
    users = [m["content"] for m in messages if m.get("role") == "user"]
    return f"echo: {users[-1] if users else ''}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # 256 clients connect at once
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:  # a client gone mid-answer
        pass


class LatencyServer:
    """FAKE server (see the module docstring); a context manager serving on a free port."""

    def __init__(
        self,
        planted: Planted = echo,
        *,
        latency: float = 0.2,
        jitter: float = 0.0,
        model_id: str = "planted",
        log: str | None = None,
        port: int = 0,
    ):
        self.planted, self.latency, self.jitter = planted, latency, jitter
        self.model_id, self.log, self._port = model_id, log, port
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.posts = 0
        self.answered = 0  # chat answers written to their sockets

    def _delay(self, raw: bytes) -> float:
        if not self.jitter:
            return self.latency
        frac = int(hashlib.sha256(raw).hexdigest()[:8], 16) / 0xFFFFFFFF
        return self.latency + self.jitter * frac

    def __enter__(self) -> LatencyServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.model_id, "object": "model"}]})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw)
                arrived = time.time()
                with server.lock:
                    server.in_flight += 1
                    server.posts += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    time.sleep(server._delay(raw))
                    text = server.planted(body.get("messages", []))
                except Exception as exc:  # a broken planted function: say so, do not drop the connection
                    self._send(500, {"error": {"message": f"planted function failed: {exc!r}"}})
                    return
                finally:
                    with server.lock:
                        server.in_flight -= 1
                if server.log:
                    users = [m["content"] for m in body.get("messages", []) if m.get("role") == "user"]
                    line = (users[-1] if users else "").replace("\n", " ")
                    with server.lock, open(server.log, "a", encoding="utf-8") as fh:
                        fh.write(f"{arrived:.4f}\t{time.time():.4f}\t{line}\n")
                self._send(
                    200,
                    {
                        "id": "chatcmpl-planted",
                        "object": "chat.completion",
                        "model": server.model_id,
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    },
                )
                with server.lock:
                    server.answered += 1

        self.httpd = _Server(("127.0.0.1", self._port), Handler)
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def uri(self, **options: Any) -> str:
        query = "&".join(f"{k}={v}" for k, v in options.items())
        return f"openai+{self.base_url}{'?' + query if query else ''}#{self.model_id}"


def load_planted(spec: str) -> Planted:
    """``module:function`` (the module importable from the working directory), or ``echo``."""
    if spec == "echo":
        return echo
    module, _, name = spec.partition(":")
    sys.path.insert(0, os.getcwd())
    return getattr(importlib.import_module(module), name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--jitter", type=float, default=0.0)
    parser.add_argument("--planted", default="echo", help="module:function taking messages, returning text")
    parser.add_argument("--model-id", default="planted")
    parser.add_argument("--log", default=None)
    args = parser.parse_args()
    server = LatencyServer(
        load_planted(args.planted),
        latency=args.latency,
        jitter=args.jitter,
        model_id=args.model_id,
        log=args.log,
        port=args.port,
    )
    with server:
        print(f"serving {server.base_url}", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
