"""The HTTP transports under the OpenAI-compatible backend: which one serves an endpoint, the HTTP/1.1
answers the lean client must read (chunked, Connection: close, no length, a keep-alive connection the
server closed while idle), a request cancelled before it was sent is never sent, and the httpx
transport maps its errors like the lean one. Real sockets throughout; the raw-bytes server below is a
FAKE (a real OpenAI-compatible server cannot be made to pick its framing on cue)."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest
from latency_server import LatencyServer
from servers import free_port

from fairprobe.models import ChatRequest, http_process, load_chat
from fairprobe.models.http_process import ProcessTransport, open_transport
from fairprobe.models.scheduler import EndpointScheduler, retry_count
from fairprobe.models.transport import (
    ConnectFailed,
    HttpxTransport,
    PlainHTTP,
    TimedOut,
)

FAST = {"backoff": 0.0, "timeout": 5.0}


@pytest.fixture(params=["in-process", "worker"])
def where(request, monkeypatch):
    """Each lean-client test twice: on the endpoint's loop, and in the worker process (which the
    client uses from PROCESS_CONCURRENCY requests in flight on; lowered here to 1)."""
    if request.param == "worker":
        monkeypatch.setattr(http_process, "PROCESS_CONCURRENCY", 1)
    return request.param


def _check_where(model, where: str) -> None:
    kind = ProcessTransport if where == "worker" else PlainHTTP
    assert isinstance(model._transport, kind)


MODELS = b'{"data": [{"id": "raw"}]}'


def _completion(text: str) -> bytes:
    body = {"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
    return json.dumps(body).encode()


class RawServer:
    """FAKE HTTP server answering each request on a connection with scripted raw bytes; ``GET``
    requests get the model list. ``close_after`` closes every connection after that many answers."""

    def __init__(self, answers: list[bytes], close_after: int | None = None):
        self.answers = list(answers)
        self.close_after = close_after
        self.connections = 0
        self.posts = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buffer, served = b"", 0
        with conn:
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = next(
                    (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")),
                    0,
                )  # fmt: skip
                while len(buffer) < length:
                    buffer += conn.recv(65536)
                buffer = buffer[length:]
                if head.startswith(b"GET"):
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(MODELS) + MODELS)
                else:
                    self.posts += 1
                    answer = self.answers.pop(0)
                    conn.sendall(answer)
                    if (
                        b"Connection: close" in answer
                        or b"Content-Length" not in answer.split(b"\r\n\r\n")[0]
                    ):
                        if b"chunked" not in answer:
                            return
                served += 1
                if self.close_after is not None and served >= self.close_after:
                    return

    @property
    def uri(self) -> str:
        return f"openai+http://127.0.0.1:{self.port}/v1#raw"

    def close(self) -> None:
        self.sock.close()


def _ask(server: RawServer, *texts: str) -> list[str]:
    model = load_chat(server.uri, **FAST)
    return [a.text for a in model.chat([ChatRequest.of(t) for t in texts])]


def test_plain_http_without_a_proxy_gets_the_lean_client_https_and_proxies_get_httpx(monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert isinstance(open_transport("http://127.0.0.1:8000/v1", {}, 5, 4), PlainHTTP)
    assert isinstance(open_transport("http://gpu-box:8000/v1", {}, 5, 4), PlainHTTP)
    assert isinstance(open_transport("https://api.openai.com/v1", {}, 5, 4), HttpxTransport)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert isinstance(open_transport("http://gpu-box:8000/v1", {}, 5, 4), HttpxTransport)
    assert isinstance(open_transport("http://127.0.0.1:8000/v1", {}, 5, 4), PlainHTTP)  # loopback: never
    monkeypatch.setenv("NO_PROXY", "gpu-box")
    assert isinstance(open_transport("http://gpu-box:8000/v1", {}, 5, 4), PlainHTTP)


def test_chunked_close_delimited_and_connection_close_answers_are_read(where):
    first, second, third = (
        _completion("chunked answer"),
        _completion("until close"),
        _completion("then close"),
    )
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (first[:10], first[10:]))
        + b"0\r\nX-Trailer: 1\r\n\r\n"
    )
    no_length = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + second
    close = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(third) + third
    server = RawServer([chunked, no_length, close])
    try:
        before = retry_count()
        model = load_chat(server.uri, concurrency=1, **FAST)
        _check_where(model, where)
        answers = [model.chat([ChatRequest.of(f"q{i}")])[0].text for i in range(3)]
    finally:
        server.close()
    assert answers == ["chunked answer", "until close", "then close"]
    assert retry_count() == before  # each framing read as it is, none retried


def test_a_connection_the_server_closed_while_idle_is_not_reused(where):
    ok = _completion("fine")
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(ok) + ok
    server = RawServer([answer] * 3, close_after=1)  # keep-alive promised, then closed after each answer
    try:
        before = retry_count()
        model = load_chat(server.uri, concurrency=1, **FAST)
        _check_where(model, where)
        time.sleep(0.3)  # the model-list probe's connection is closed the same way: let it land first
        texts = []
        for i in range(3):
            texts.append(model.chat([ChatRequest.of(f"q{i}")])[0].text)
            time.sleep(
                0.3
            )  # the close reaches the client while the connection is idle (a busy machine: slower)
    finally:
        server.close()
    assert texts == ["fine"] * 3 and server.posts == 3
    assert retry_count() == before  # a stale connection is dropped before use, not tried and retried


def test_a_request_cancelled_before_it_was_sent_is_never_sent(where):
    with LatencyServer(latency=0.3) as server:
        model = load_chat(server.uri(), concurrency=1, **FAST)
        _check_where(model, where)
        futures = [model.submit(ChatRequest.of(f"q{i}")) for i in range(3)]
        time.sleep(0.1)  # the first is in flight, the others wait for its place
        assert not futures[0].cancel()  # in flight: it runs to its answer
        assert futures[2].cancel()
        assert futures[0].result(5).text == "echo: q0" and futures[1].result(5).text == "echo: q1"
        time.sleep(0.4)
        assert server.posts == 2  # q2 was dropped without being sent
    assert futures[2].cancelled()


def test_the_httpx_transport_answers_and_maps_its_errors():
    scheduler = EndpointScheduler("httpx-test", 2)
    with LatencyServer(latency=0.01) as server:
        transport = HttpxTransport(server.base_url, {}, 5.0, 2)
        body = {"model": "planted", "messages": [{"role": "user", "content": "hi"}]}
        response = scheduler.run(
            transport.request("POST", f"{server.base_url}/chat/completions", body)
        ).result(10)
        assert (
            response.status_code == 200 and response.json()["choices"][0]["message"]["content"] == "echo: hi"
        )
    with LatencyServer(latency=2.0) as slow:
        transport = HttpxTransport(slow.base_url, {}, 0.2, 2)
        with pytest.raises(TimedOut):
            scheduler.run(transport.request("POST", f"{slow.base_url}/chat/completions", body)).result(10)
    closed = f"http://127.0.0.1:{free_port()}/v1"
    for kind in (HttpxTransport, PlainHTTP):
        with pytest.raises(ConnectFailed):
            scheduler.run(kind(closed, {}, 2.0, 2).request("GET", f"{closed}/models")).result(10)


def test_hundreds_in_flight_go_through_a_worker_process_that_is_restarted_when_it_dies(monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    many = http_process.PROCESS_CONCURRENCY
    assert isinstance(open_transport("http://127.0.0.1:8000/v1", {}, 5, many), ProcessTransport)
    assert isinstance(open_transport("http://127.0.0.1:8000/v1", {}, 5, many - 1), PlainHTTP)
    assert isinstance(open_transport("https://api.openai.com/v1", {}, 5, many), HttpxTransport)
    with LatencyServer(latency=0.5) as server:
        model = load_chat(server.uri(), concurrency=many, **FAST)
        transport = model._transport
        assert transport.started == 1  # the model-list probe went through it
        before = retry_count()
        future = model.submit(ChatRequest.of("q0"))
        deadline = time.monotonic() + 5
        while server.posts < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        transport._process.kill()  # the worker dies with the request in flight
        assert future.result(10).text == "echo: q0"  # retried through a new worker
        assert transport.started == 2 and retry_count() == before + 1
        answers = model.chat([ChatRequest.of(f"r{i}") for i in range(300)])
        assert [a.text for a in answers] == [f"echo: r{i}" for i in range(300)]
        assert server.max_in_flight > 100  # hundreds in flight at once through one worker


def test_the_worker_queues_requests_beyond_the_bound_and_never_sends_more_than_it(monkeypatch):
    """The scheduler hands the worker up to twice the bound, so the next request follows an answer
    inside the worker; the server still never sees more than the bound at once."""
    monkeypatch.setattr(http_process, "PROCESS_CONCURRENCY", 1)
    with LatencyServer(latency=0.1, jitter=0.05) as server:
        model = load_chat(server.uri(), concurrency=4, **FAST)
        assert isinstance(model._transport, ProcessTransport)
        answers = model.chat([ChatRequest.of(f"r{i}") for i in range(40)])
        assert [a.text for a in answers] == [f"echo: r{i}" for i in range(40)]
        assert server.max_in_flight == 4  # the worker's own bound: never passed
        assert model.scheduler.peak == 8  # four more were waiting in the worker
