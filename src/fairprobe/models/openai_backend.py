"""``openai:MODEL`` and ``openai+http://HOST:PORT/v1#MODEL`` — chat completions over HTTP (DESIGN.md §3).

Any OpenAI-compatible server works (OpenAI, vLLM, Ollama, llama.cpp). Requests go through the
endpoint's :class:`~fairprobe.models.scheduler.EndpointScheduler`: at most ``concurrency`` in flight
across every batch and every model object on the same base URL (default from the endpoint: 16 for a
local or private-network server, 32 for a hosted API), halved adaptively on HTTP 429. Each request
gets a timeout and is retried with exponential backoff plus jitter on HTTP 429 / 5xx, connection
errors, timeouts and malformed bodies, waiting ``Retry-After`` seconds when the server sends it
(outside its in-flight slot). Retries are counted on the progress line, not logged one per line.

Secrets: the API key lives only in the HTTP client's headers. It never enters the fingerprint,
a log line, a ``repr`` or an error message (server error text is redacted before it is shown); a
key written into the base URL (``http://user:KEY@host/v1``) is sent as HTTP basic auth and shown
everywhere as ``***`` (:func:`~fairprobe.models.uri.redact_uri`).

The served model id keys the response cache (it is part of the fingerprint), so it must read the
same on every run: a ``GET /models`` that answers 404, an HTML page or JSON without a ``data`` list
is an error (exit 2) naming the URL and what came back, never a silently new cache key. A server
without that endpoint is used with ``?probe=false``: the fingerprint then keys on the model name
in the URI.

An answer whose content is ``null`` or empty is retried like a malformed one (within ``retries``),
unless the server says it stopped at ``max_tokens``; an empty answer that is finally returned is
never cached (:mod:`fairprobe.run.caching`), so the next run asks again.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import math
import random
import re
import time
from collections.abc import Callable
from concurrent.futures import CancelledError, Future, as_completed
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from fairprobe.errors import ContextLengthError, ModelError, ModelOutputError
from fairprobe.models import meter
from fairprobe.models.base import ChatRequest, ChatResponse, Fingerprint
from fairprobe.models.context import is_context_overflow
from fairprobe.models.http_process import open_transport
from fairprobe.models.redact import control_character, redact_uri
from fairprobe.models.scheduler import default_concurrency, note_retry, scheduler_for
from fairprobe.models.transport import (
    BrokenConnection,
    ConnectFailed,
    HTTPResponse,
    TimedOut,
    TransportFailed,
)

log = logging.getLogger("fairprobe.models.openai")

OPENAI_BASE_URL = "https://api.openai.com/v1"
_KEY_PATTERN = re.compile(r"sk-[A-Za-z0-9_\-*.]{3,}")


class _Malformed(Exception):
    """A 200 answer whose body is not a usable chat completion."""


class _Unreadable(Exception):
    """A 200 ``GET /models`` answer that is not a model list."""


def _retry_after_seconds(response: HTTPResponse) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date), else ``None``."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _tally(kinds: list[str]) -> str:
    """``["http429", "http500", "malformed"]`` -> ``"1 HTTP 429, 1 HTTP 500, 1 malformed"``."""
    counts: dict[str, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{n} {k.replace('http', 'HTTP ')}" for k, n in counts.items())


def start_hint(base_url: str) -> str:
    """What to tell a user whose server at ``base_url`` cannot be reached."""
    parts = urlsplit(base_url)
    if parts.hostname and parts.hostname.endswith("openai.com"):
        return "check your network connection and proxy settings"
    port = parts.port or 8000
    host = parts.hostname or "127.0.0.1"
    return (
        f"start it with `python -m llama_cpp.server --model MODEL.gguf --host {host} --port {port}` "
        f"(or `vllm serve MODEL --port {port}`, `ollama serve`), or fix HOST:PORT in the URI"
    )


class OpenAIChat:
    """Chat completions from an OpenAI-compatible ``/v1`` endpoint.

    Args:
        base_url: the ``/v1`` base URL, e.g. ``http://127.0.0.1:8000/v1``.
        model: the model name to request; ``None`` takes the first id the server lists.
        api_key: bearer token (from the environment, never from a spec file).
        backend: backend name written in the fingerprint.
        concurrency: requests in flight at once to this endpoint (shared by every model object on the
            same base URL); ``None`` chooses from the endpoint (:func:`~fairprobe.models.scheduler.default_concurrency`).
        timeout: seconds per HTTP request (connect, read, write each).
        retries: retries after the first attempt (so ``retries + 1`` attempts at most).
        backoff: first backoff delay in seconds; doubles each retry, plus up to 50% jitter.
        max_backoff: cap on one backoff delay (and on an honoured ``Retry-After``).
        probe: ask ``GET /models`` at load time for the served model id (fails fast if unreachable).
    """

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        *,
        api_key: str | None = None,
        backend: str = "openai-compatible",
        concurrency: int | None = None,
        timeout: float = 60.0,
        retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 60.0,
        probe: bool = True,
    ):
        self.base_url = base_url.rstrip("/")
        self.shown_url = redact_uri(self.base_url)
        """The base URL as it may be printed or stored (a key in it replaced by ``***``)."""
        if concurrency is None:
            concurrency = default_concurrency(self.base_url)
        if not (
            concurrency >= 1
            and retries >= 0
            and math.isfinite(timeout)
            and timeout > 0
            and math.isfinite(backoff)
            and backoff >= 0
        ):
            raise ModelError(
                f"bad options for {self.shown_url}: need concurrency >= 1, retries >= 0, timeout > 0, "
                "backoff >= 0, all finite"
            )
        self.concurrency = int(concurrency)
        self.scheduler = scheduler_for(self.base_url, self.concurrency)
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self._secret = api_key or ""
        if api_key and control_character(api_key) is not None:  # a CR/LF would inject headers
            raise ModelError(
                f"the API key for {self.shown_url} holds a control character "
                f"({control_character(api_key)}); export it again without it"
            )
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # Requests are coroutines on the endpoint's event loop (fairprobe.models.transport): a
        # thread per request in flight burns a small machine's cores at a few hundred in flight.
        self._transport = open_transport(self.base_url, headers, self.timeout, self.concurrency)
        self.scheduler.attach(self._transport)
        self._jitter = random.Random()
        served = self.served_models() if probe else []
        if model is None:
            if not served:
                raise ModelError(
                    f"{self.shown_url} lists no models and the URI names none; add one: openai+{self.shown_url}#MODEL"
                )
            model = served[0]
        self.model = model
        if model in served or not probe:  # probe=false: keyed on the URI's name, as a probe naming it
            weights = model
        else:  # a single-model server (llama.cpp) answers whatever name is asked for
            weights = ",".join(sorted(served))
        self.fingerprint = Fingerprint(
            backend=backend, model_id=model, weights=weights, params={"base_url": self.shown_url}
        )

    # -- helpers ------------------------------------------------------------------------------
    def _redact(self, text: str) -> str:
        if self._secret:
            text = text.replace(self._secret, "***")
        password = urlsplit(self.base_url).password
        if password and len(password) >= 6:  # a key in the URL, echoed by the server
            text = text.replace(password, "***")
        return _KEY_PATTERN.sub("sk-***", redact_uri(text))

    def _unreachable(self) -> ModelError:
        return ModelError(
            f"cannot reach {self.shown_url}: is the server running? {start_hint(self.base_url)}"
        )

    def _http_error(self, response: HTTPResponse, url: str) -> ModelError:
        url = redact_uri(url)
        snippet = self._redact(" ".join(response.text.split())[:200])
        code = response.status_code
        if code in (401, 403):
            hint = "check the API key in the environment (OPENAI_API_KEY for openai:)"
        elif code == 404:
            hint = f"check the model name {self.model!r} and the /v1 base URL"
        elif code in (400, 413) and is_context_overflow(snippet):
            return ContextLengthError(
                f"{url} answered HTTP {code}: {snippet}; the prompt is longer than the model's context: "
                "shorten it or serve the model with a larger context (llama-server -c N)"
            )
        else:
            hint = "check the request parameters and the model name"
        return ModelError(f"{url} answered HTTP {code}: {snippet or '(empty body)'}; {hint}")

    def served_models(self) -> list[str]:
        """Model ids from ``GET /models``, retried like a chat request on a transient failure
        (timeout, 429, 5xx), since the served id is part of the fingerprint: a flaky ``/models`` must
        not give the same model another cache key. An answer that is not a model list (404 or another
        4xx, an HTML page, JSON without ``data``) is a :class:`ModelError` naming what came back:
        guessing would give the same model another cache key (use ``?probe=false`` for a server
        without ``/models``)."""
        url = f"{self.base_url}/models"
        shown = redact_uri(url)
        problem = ""
        for attempt in range(self.retries + 1):
            try:
                response = self.scheduler.run(self._transport.request("GET", url)).result()
            except ConnectFailed:
                raise self._unreachable() from None
            except TransportFailed as exc:
                problem, retry_after = f"{type(exc).__name__}", None
            else:
                code = response.status_code
                if code in (401, 403):
                    raise self._http_error(response, url)
                if code == 200:
                    try:
                        return self._model_ids(response)
                    except _Unreadable as exc:
                        raise self._no_model_list(shown, str(exc)) from None
                if code != 429 and code < 500:
                    raise self._no_model_list(shown, f"HTTP {code}: {self._body_snippet(response)}")
                problem, retry_after = f"HTTP {code}", _retry_after_seconds(response)
            if attempt < self.retries:
                time.sleep(self._delay(attempt, retry_after))
        raise ModelError(
            f"{shown} failed {self.retries + 1} times (last: {problem}); the served model id keys the "
            "response cache, so fairprobe does not guess it; check the server, or raise retries "
            "(add ?retries=8&timeout=120 to the model URI)"
        )

    def _body_snippet(self, response: HTTPResponse) -> str:
        kind = response.headers.get("content-type", "").split(";")[0].strip()
        text = " ".join(response.text.split())
        if kind == "text/html" or text.lower().startswith(("<!doctype", "<html")):
            return "an HTML page"
        return repr(self._redact(text[:80])) if text else "(empty body)"

    def _no_model_list(self, shown: str, what: str) -> ModelError:
        return ModelError(
            f"GET {shown} gave no model list ({what}); the served model id keys the response cache, so "
            "fairprobe does not guess it: fix the base URL (it usually ends in /v1), or add ?probe=false "
            "to the model URI for a server without /models (the cache then keys on the #MODEL name)"
        )

    def _model_ids(self, response: HTTPResponse) -> list[str]:
        """The ids of a ``{"data": [{"id": ...}, ...]}`` body; :class:`_Unreadable` otherwise."""
        try:
            data = response.json()
        except (ValueError, RecursionError):  # RecursionError: JSON nested 100k deep
            raise _Unreadable(f"HTTP 200 with {self._body_snippet(response)}, not JSON") from None
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise _Unreadable(f"HTTP 200 with JSON that has no data list: {self._body_snippet(response)}")
        return [str(m["id"]) for m in items if isinstance(m, dict) and "id" in m]

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_backoff)
        base = min(self.max_backoff, self.backoff * (2**attempt))
        return base * (1.0 + 0.5 * self._jitter.random())

    @staticmethod
    def _parse(response: HTTPResponse, latency: float) -> ChatResponse:
        try:
            data = response.json()
        except ValueError:
            raise _Malformed("body is not JSON") from None
        except RecursionError:
            raise _Malformed("body is JSON nested too deep to read") from None
        try:
            choice = data["choices"][0]
            text = (choice.get("message") or {}).get("content")
            text = "" if text is None else text
            usage = data.get("usage") or {}
            if not isinstance(text, str):
                raise TypeError("content is not a string")
            answer = ChatResponse(
                text=text,
                finish_reason=str(choice.get("finish_reason") or "stop"),
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
                latency_s=latency,
            )
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise _Malformed(f"no usable choices[0].message.content: {exc}") from None
        if text.strip():  # an empty answer is retried, not counted
            meter.record(prompt_tokens=answer.prompt_tokens, completion_tokens=answer.completion_tokens)
        return answer

    # -- the protocol -------------------------------------------------------------------------
    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (decoding parameters come from the request).

        A ``json_schema`` request asks for constrained decoding: OpenAI's ``json_schema`` response
        format on api.openai.com; llama.cpp's ``{"type": "json_object", "schema": ...}`` elsewhere
        (llama-cpp-python's server rejects the ``json_schema`` type; vLLM and Ollama accept
        ``json_object``)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": request.message_dicts(),
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "seed": request.effective_seed,
        }
        if request.json_schema is not None:
            if (urlsplit(self.base_url).hostname or "").endswith("openai.com"):
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": request.json_schema, "strict": False},
                }
            else:
                body["response_format"] = {"type": "json_object", "schema": request.json_schema}
        return body

    async def _send(self, request: ChatRequest, outer: Future[ChatResponse]) -> None:
        """Ask ``request`` (retrying as the module docstring says) on the endpoint's loop, and hand
        the answer or the final error to ``outer``. A request cancelled before its first attempt got
        a place in flight is dropped (``outer`` cancelled, nothing sent)."""
        try:
            answer = await self._attempts(request, outer)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            if outer.running() or outer.set_running_or_notify_cancel():  # not when it was dropped
                self.scheduler.deliver(outer, None, exc)
            if not isinstance(exc, Exception):
                raise
            return
        if answer is not None:
            self.scheduler.deliver(outer, answer)

    async def _attempts(self, request: ChatRequest, outer: Future[ChatResponse]) -> ChatResponse | None:
        url = f"{self.base_url}/chat/completions"
        shown = redact_uri(url)
        body = self.request_body(request)
        kinds: list[str] = []
        problem = ""
        for attempt in range(self.retries + 1):
            retry_after = None
            await self.scheduler.acquire()  # one place in flight for this attempt (released below)
            try:
                if attempt == 0 and not outer.set_running_or_notify_cancel():
                    return None  # dropped before it was sent (a batch failed, a run was stopped)
                start = time.perf_counter()
                try:
                    response = await self._transport.request("POST", url, body)
                except TimedOut:
                    response = None
                    kinds.append("timeout")
                    problem = f"no answer within timeout={self.timeout:g} s"
                except ConnectFailed:
                    response = None
                    kinds.append("connect")
                    problem = "connection refused"
                except BrokenConnection as exc:
                    response = None
                    kinds.append("transport")
                    problem = f"connection broken ({exc})"
            finally:
                self.scheduler.release()
            if response is not None:
                latency = time.perf_counter() - start
                code = response.status_code
                if code == 200:
                    self.scheduler.succeeded()
                    try:
                        answer = self._parse(response, latency)
                    except _Malformed as exc:
                        kinds.append("malformed")
                        problem = str(exc)
                    else:
                        if answer.text.strip() or answer.finish_reason == "length" or attempt == self.retries:
                            return answer  # an empty final answer is returned, and never cached
                        kinds.append("empty")
                        problem = "empty answer (content null or empty)"
                elif code == 429 or code >= 500:
                    if code == 429:
                        self.scheduler.throttled()
                    kinds.append(f"http{code}")
                    problem = f"HTTP {code}"
                    retry_after = _retry_after_seconds(response)
                else:
                    raise self._http_error(response, url)
            if attempt == self.retries:
                break
            delay = self._delay(attempt, retry_after)
            note_retry()  # counted on the progress line; one log line per retry would drown it
            log.debug("%s: %s; retry %d/%d in %.2f s", shown, problem, attempt + 1, self.retries, delay)
            await asyncio.sleep(delay)  # outside the slot: a back-off holds no place in flight
        attempts = len(kinds)
        if kinds[-1] == "connect":
            raise self._unreachable()
        tally = _tally(kinds)
        if all(k == "malformed" for k in kinds):
            raise ModelOutputError(
                f"{shown} gave a malformed chat completion {attempts} times ({problem}); "
                "check that the server speaks the OpenAI chat API"
            )
        if kinds[-1] == "malformed":  # say what the other attempts were: 429s and 500s are not the API
            raise ModelOutputError(
                f"{shown} failed {attempts} attempts ({tally}; the last: {problem}); check the server "
                "(its load and that it speaks the OpenAI chat API)"
            )
        counted = f"{tally}; " if len(set(kinds)) > 1 else ""  # mixed kinds: say each, not only the last
        raise ModelError(
            f"{shown} failed {attempts} times ({counted}last: {problem}); check the server, or raise retries / "
            f"timeout (now {self.retries} / {self.timeout:g} s): add ?retries=8&timeout=120 to the "
            "model URI, in the spec or on the command line"
        )

    def chat(self, requests: list[ChatRequest]) -> list[ChatResponse]:
        """One response per request, same order; up to ``concurrency`` requests in flight."""
        return self.chat_each(requests, None)

    def submit(self, request: ChatRequest) -> Future[ChatResponse]:
        """Send ``request`` on the endpoint's scheduler; the future holds its answer (or error).
        Cancelling it drops the request if it is still waiting for a place in flight; once sent, it
        runs to its answer (which reaches the future's callbacks, e.g. the cache)."""
        outer: Future[ChatResponse] = Future()
        self.scheduler.start(self._send(request, outer))
        return outer

    def chat_each(
        self, requests: list[ChatRequest], on_answer: Callable[[int, ChatResponse], None] | None
    ) -> list[ChatResponse]:
        """:meth:`chat`, calling ``on_answer(index, response)`` (in this thread) as each answer
        arrives, so a caller can store it at once. When a request finally fails, the requests
        already in flight still finish (and reach ``on_answer``); requests not yet started are
        dropped; then the first error is raised."""
        requests = list(requests)
        results: list[ChatResponse | None] = [None] * len(requests)
        error: BaseException | None = None
        futures: dict[Future[ChatResponse], int] = {self.submit(r): i for i, r in enumerate(requests)}
        try:
            for future in as_completed(futures):
                try:
                    response = future.result()
                except CancelledError:
                    continue
                except Exception as exc:  # noqa: BLE001 - raised below, after the others
                    if error is None:
                        error = exc
                        for f in futures:
                            f.cancel()
                    continue
                results[futures[future]] = response
                if on_answer is not None:
                    on_answer(futures[future], response)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
        if error is not None:
            raise error
        return results  # type: ignore[return-value]

    def close(self) -> None:
        """Close the idle connections (requests still in flight finish on their own)."""
        self.scheduler.run(self._transport.aclose())
        self.scheduler.detach(self._transport)

    def __repr__(self) -> str:
        return f"OpenAIChat({self.shown_url!r}, model={self.model!r})"
