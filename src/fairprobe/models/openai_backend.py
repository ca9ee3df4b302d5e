"""``openai:MODEL`` and ``openai+http://HOST:PORT/v1#MODEL`` — chat completions over HTTP (DESIGN.md §3).

Any OpenAI-compatible server works (OpenAI, vLLM, Ollama, llama.cpp). A batch is sent with
bounded concurrency (a thread pool of ``concurrency`` workers); each request gets a timeout and is
retried with exponential backoff plus jitter on HTTP 429 / 5xx, connection errors, timeouts and
malformed bodies, waiting ``Retry-After`` seconds when the server sends it.

Secrets: the API key lives only in the HTTP client's headers. It never enters the fingerprint,
a log line, a ``repr`` or an error message (server error text is redacted before it is shown).
"""

from __future__ import annotations

import email.utils
import logging
import random
import re
import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from fairprobe.errors import ModelError, ModelOutputError
from fairprobe.models.base import ChatRequest, ChatResponse, Fingerprint

log = logging.getLogger("fairprobe.models.openai")

OPENAI_BASE_URL = "https://api.openai.com/v1"
_KEY_PATTERN = re.compile(r"sk-[A-Za-z0-9_\-*.]{3,}")
_LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


class _Malformed(Exception):
    """A 200 answer whose body is not a usable chat completion."""


def _retry_after_seconds(response: httpx.Response) -> float | None:
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
        concurrency: requests in flight at once (thread-pool workers).
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
        concurrency: int = 4,
        timeout: float = 60.0,
        retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 60.0,
        probe: bool = True,
    ):
        self.base_url = base_url.rstrip("/")
        if concurrency < 1 or retries < 0 or timeout <= 0 or backoff < 0:
            raise ModelError(
                f"bad options for {self.base_url}: need concurrency >= 1, retries >= 0, timeout > 0, backoff >= 0"
            )
        self.concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self._secret = api_key or ""
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        host = urlsplit(self.base_url).hostname or ""
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(self.timeout),
            limits=httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency),
            trust_env=host not in _LOOPBACK,
        )
        self._jitter = random.Random()
        served = self.served_models() if probe else []
        if model is None:
            if not served:
                raise ModelError(
                    f"{self.base_url} lists no models and the URI names none; add one: openai+{self.base_url}#MODEL"
                )
            model = served[0]
        self.model = model
        if model in served:
            weights = model
        else:  # a single-model server (llama.cpp) answers whatever name is asked for
            weights = ",".join(sorted(served))
        self.fingerprint = Fingerprint(
            backend=backend, model_id=model, weights=weights, params={"base_url": self.base_url}
        )

    # -- helpers ------------------------------------------------------------------------------
    def _redact(self, text: str) -> str:
        if self._secret:
            text = text.replace(self._secret, "***")
        return _KEY_PATTERN.sub("sk-***", text)

    def _unreachable(self) -> ModelError:
        return ModelError(f"cannot reach {self.base_url}: is the server running? {start_hint(self.base_url)}")

    def _http_error(self, response: httpx.Response, url: str) -> ModelError:
        snippet = self._redact(" ".join(response.text.split())[:200])
        code = response.status_code
        if code in (401, 403):
            hint = "check the API key in the environment (OPENAI_API_KEY for openai:)"
        elif code == 404:
            hint = f"check the model name {self.model!r} and the /v1 base URL"
        else:
            hint = "check the request parameters and the model name"
        return ModelError(f"{url} answered HTTP {code}: {snippet or '(empty body)'}; {hint}")

    def served_models(self) -> list[str]:
        """Model ids from ``GET /models``; ``[]`` when the server does not say."""
        url = f"{self.base_url}/models"
        try:
            response = self._client.get(url)
        except httpx.ConnectError:
            raise self._unreachable() from None
        except httpx.TransportError:
            return []
        if response.status_code in (401, 403):
            raise self._http_error(response, url)
        if response.status_code != 200:
            return []
        try:
            data = response.json().get("data", [])
            return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]
        except (ValueError, AttributeError, TypeError):
            return []

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_backoff)
        base = min(self.max_backoff, self.backoff * (2**attempt))
        return base * (1.0 + 0.5 * self._jitter.random())

    @staticmethod
    def _parse(response: httpx.Response, latency: float) -> ChatResponse:
        try:
            data = response.json()
        except ValueError:
            raise _Malformed("body is not JSON") from None
        try:
            choice = data["choices"][0]
            text = (choice.get("message") or {}).get("content") or ""
            usage = data.get("usage") or {}
            if not isinstance(text, str):
                raise TypeError("content is not a string")
            return ChatResponse(
                text=text,
                finish_reason=str(choice.get("finish_reason") or "stop"),
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
                latency_s=latency,
            )
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise _Malformed(f"no usable choices[0].message.content: {exc}") from None

    # -- the protocol -------------------------------------------------------------------------
    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (decoding parameters come from the request)."""
        return {
            "model": self.model,
            "messages": request.message_dicts(),
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "seed": request.effective_seed,
        }

    def _send(self, request: ChatRequest) -> ChatResponse:
        url = f"{self.base_url}/chat/completions"
        body = self.request_body(request)
        kinds: list[str] = []
        problem = ""
        for attempt in range(self.retries + 1):
            retry_after = None
            start = time.perf_counter()
            try:
                response = self._client.post(url, json=body)
            except httpx.TimeoutException:
                kinds.append("timeout")
                problem = f"no answer within timeout={self.timeout:g} s"
            except httpx.ConnectError:
                kinds.append("connect")
                problem = "connection refused"
            except httpx.TransportError as exc:
                kinds.append("transport")
                problem = f"connection broken ({type(exc).__name__})"
            else:
                latency = time.perf_counter() - start
                code = response.status_code
                if code == 200:
                    try:
                        return self._parse(response, latency)
                    except _Malformed as exc:
                        kinds.append("malformed")
                        problem = str(exc)
                elif code == 429 or code >= 500:
                    kinds.append(f"http{code}")
                    problem = f"HTTP {code}"
                    retry_after = _retry_after_seconds(response)
                else:
                    raise self._http_error(response, url)
            if attempt == self.retries:
                break
            delay = self._delay(attempt, retry_after)
            log.warning("%s: %s; retry %d/%d in %.2f s", url, problem, attempt + 1, self.retries, delay)
            time.sleep(delay)
        attempts = len(kinds)
        if kinds[-1] == "connect":
            raise self._unreachable()
        if kinds[-1] == "malformed":
            raise ModelOutputError(
                f"{url} gave a malformed chat completion {attempts} times ({problem}); "
                "check that the server speaks the OpenAI chat API"
            )
        raise ModelError(
            f"{url} failed {attempts} times (last: {problem}); check the server, or raise retries= / timeout="
        )

    def chat(self, requests: list[ChatRequest]) -> list[ChatResponse]:
        """One response per request, same order; up to ``concurrency`` requests in flight."""
        requests = list(requests)
        if len(requests) <= 1 or self.concurrency == 1:
            return [self._send(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests))) as pool:
            futures: list[Future[ChatResponse]] = [pool.submit(self._send, r) for r in requests]
            try:
                return [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"OpenAIChat({self.base_url!r}, model={self.model!r})"
