"""``gguf:PATH`` — a GGUF model run in-process by llama.cpp (DESIGN.md §3).

Requests are answered one at a time with ``Llama.create_chat_completion`` (the chat template
stored in the GGUF file). The weights hash is the sha256 of the file, cached in-process by
(path, size, mtime).

Speed (issue 43). Two things made this backend about 10× slower than ``python -m llama_cpp.server``
on the same file, found by timing one loan-example request (119 prompt tokens, 3 answer tokens):

- **Threads.** llama.cpp's worker threads spin-wait for each other at every step. With 2 threads on
  a 2-core machine that also runs the driver (or other jobs), one thread is often descheduled and
  the other spins: 23 s per request against 3.0 s with one thread (load 15-19). ``n_threads``
  now defaults to the cores not already busy (:func:`fairprobe.run.threads.free_cores`, 1-minute load
  average), at least 1; ``?n_threads=N`` pins it. Threads do not change answers.
- **The shared prompt prefix.** Every request of a task repeats the same system prompt and
  few-shot turns; the server keeps their KV cache between requests, while this backend reset the
  context and read the whole prompt again. Resetting was there for determinism: a prefix-cached
  evaluation can give slightly different logits than a fresh one. Now the prompt is always
  evaluated in two fixed parts, the *pinned prefix* (every message but the last, as the chat
  template renders it) and the rest: when the KV cache already holds that prefix it is kept,
  otherwise the context is reset and the prefix evaluated on its own first. Either way the same
  tokens are evaluated in the same two steps, so a request's answer does not depend on which
  request came before it (tested). A template whose prefix does not render as a token prefix of
  the whole prompt falls back to a reset and one evaluation. The fingerprint says
  ``prompt_eval: prefix-split`` so answers cached by the old one-step evaluation are not reused.

Ctrl-C (issue 43): generation checks :func:`fairprobe.models.stop.stop_requested` between tokens
(a pass-through logits processor, which then forces the end-of-text token: an exception raised in
it would be swallowed by ctypes) and between requests, and raises
:class:`~fairprobe.errors.RunInterrupted`, so an interrupted run exits within a token's time, not
after the batch; nothing cut short is returned or cached. The same hook times the prompt
evaluation (up to the first sampled token) and the generation, recorded in
:mod:`fairprobe.models.meter` as prompt and generation tokens/s.

Context size: by default the context is the one the model was trained for (read from the GGUF
metadata), capped at :data:`AUTO_CTX_CAP` tokens so that a model trained for 128k tokens does not
allocate a huge KV cache. SmolLM2-135M was trained for 8,192 tokens, so its context is 8,192: the
longest Meta-Fair generator prompt (about 2,100 tokens with MR1) fits with room for the answer. A
larger context costs memory (about 190 MB of KV cache for SmolLM2 at 8,192), not time: llama.cpp
attends over the cells in use. ``?n_ctx=N`` on the URI (``embedded:smollm2?n_ctx=4096``) sets it;
a prompt that does not fit raises :class:`~fairprobe.errors.ContextLengthError` naming that option.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fairprobe.errors import ContextLengthError, ModelError, ModelOutputError, RunInterrupted
from fairprobe.models import meter
from fairprobe.models.base import ChatRequest, ChatResponse, Fingerprint
from fairprobe.models.context import is_context_overflow
from fairprobe.models.hashing import file_sha256
from fairprobe.models.stop import raise_if_stopped, stop_requested

AUTO_CTX_CAP = 8192
"""Largest context chosen when ``n_ctx`` is not given (the model's trained context, at most this)."""


class GGUFChat:
    """A llama.cpp chat model loaded from one ``.gguf`` file.

    Args:
        path: the GGUF file.
        n_ctx: context length in tokens; default: the model's trained context, at most
            :data:`AUTO_CTX_CAP` (8,192 for SmolLM2-135M).
        n_threads: CPU threads llama.cpp uses; default: the cores not already busy, at least 1.
        seed: the model's default seed (each request also sends its own).
        model_id: name shown in the fingerprint (default: ``gguf:<file name>``).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        seed: int = 0,
        model_id: str | None = None,
    ):
        self.path = Path(path).expanduser()
        if not self.path.is_file():
            raise ModelError(f"GGUF file {self.path} does not exist; give the path of a .gguf model file")
        try:
            from llama_cpp import Llama
        except ImportError as exc:  # pragma: no cover - installed by `make install`
            raise ModelError("gguf: models need llama-cpp-python: pip install 'fairprobe[llama]'") from exc

        if n_threads is None:
            from fairprobe.run.threads import free_cores

            n_threads = free_cores()
        self.n_threads = int(n_threads)

        def load(size: int) -> Llama:
            return Llama(
                model_path=str(self.path),
                n_ctx=size,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,  # llama.cpp's default: every core, busy or not
                seed=int(seed),
                verbose=False,
            )

        try:
            self._llama = load(AUTO_CTX_CAP if n_ctx is None else int(n_ctx))
            trained = int(self._llama._model.n_ctx_train()) or None
            if n_ctx is None:
                n_ctx = AUTO_CTX_CAP
                if trained is not None and trained < AUTO_CTX_CAP:  # a model trained for less: its own size
                    n_ctx = trained
                    self._llama = load(trained)
        except (ValueError, RuntimeError) as exc:
            raise ModelError(f"llama.cpp cannot load {self.path}: {exc}; is it a valid GGUF file?") from exc
        self.n_ctx = int(n_ctx)
        self.trained_ctx = trained
        self.model_id = model_id or f"gguf:{self.path.name}"
        self._lock = threading.Lock()
        self.fingerprint = Fingerprint(
            backend="gguf",
            model_id=self.model_id,
            weights=file_sha256(self.path),
            params={"n_ctx": self.n_ctx, "prompt_eval": "prefix-split"},
        )
        self._prefix_formatter = _prefix_formatter(self._llama)
        self._pin: list[int] = []
        self._evaluated = 0
        self._first_token_at: float | None = None
        original = self._llama.generate
        self._llama.generate = self._generate_pinned(original)  # type: ignore[method-assign]

    def _prefix_tokens(self, messages: list[dict[str, Any]]) -> list[int]:
        """The pinned prefix: every message but the last, rendered by the chat template without the
        assistant's turn, tokenized as llama-cpp-python tokenizes a chat prompt; [] when unknown."""
        if self._prefix_formatter is None or len(messages) < 2:
            return []
        try:
            text = self._prefix_formatter(messages=messages[:-1]).prompt
        except Exception:  # noqa: BLE001 - a template that cannot render a prefix: no pinning
            return []
        return list(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def _generate_pinned(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """``Llama.generate`` with the prompt evaluated as pinned prefix + rest (see module doc)."""
        llama = self._llama

        def generate(tokens: Any, *args: Any, **kwargs: Any) -> Any:
            tokens = list(tokens)
            pin = self._pin
            if pin and len(tokens) > len(pin) and tokens[: len(pin)] == pin:
                held = llama.n_tokens >= len(pin) and list(llama.input_ids[: len(pin)]) == pin
                if held:
                    llama.n_tokens = len(pin)  # generate() drops the KV cells past the prefix
                    self._evaluated = len(tokens) - len(pin)
                else:
                    llama.reset()
                    llama.eval(pin)
                    self._evaluated = len(tokens)
            else:
                llama.reset()
                self._evaluated = len(tokens)
            return original(tokens, *args, **kwargs)

        return generate

    def _watch(self, input_ids: Any, scores: Any) -> Any:
        """Pass-through logits processor, called before each sampled token: times the first token
        (the prompt is read by then) and stops generation between tokens on Ctrl-C."""
        if self._first_token_at is None:
            self._first_token_at = time.perf_counter()
        if stop_requested():  # an exception here would be swallowed by ctypes: end the answer instead
            scores[:] = -float("inf")
            scores[self._llama.token_eos()] = 0.0
        return scores

    def _one(self, request: ChatRequest) -> ChatResponse:
        raise_if_stopped()
        start = time.perf_counter()
        messages = request.message_dicts()
        self._pin = self._prefix_tokens(messages)
        self._first_token_at = None
        try:
            constrained = (
                {"response_format": {"type": "json_object", "schema": request.json_schema}}
                if request.json_schema is not None
                else {}
            )  # llama.cpp compiles the schema into a grammar
            out = self._llama.create_chat_completion(
                messages=messages,
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                seed=request.effective_seed,
                logits_processor=[self._watch],
                **constrained,
            )
        except ValueError as exc:  # e.g. prompt longer than the context
            if is_context_overflow(str(exc)):
                raise ContextLengthError(self._overflow_message(str(exc))) from exc
            raise ModelError(f"llama.cpp rejected a request to {self.path.name}: {exc}") from exc
        if stop_requested():  # the answer was cut short at Ctrl-C: never returned, never cached
            self._llama.reset()
            raise RunInterrupted("stopped by Ctrl-C")
        end = time.perf_counter()
        latency = end - start
        try:
            choice = out["choices"][0]
            usage = out.get("usage") or {}
            response = ChatResponse(
                text=choice["message"].get("content") or "",
                finish_reason=str(choice.get("finish_reason") or "stop"),
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
                latency_s=latency,
            )
            first = self._first_token_at or end
            meter.record(
                prompt_tokens=response.prompt_tokens,
                completion_tokens=response.completion_tokens,
                prompt_evaluated=self._evaluated,
                prompt_s=first - start,
                generation_s=end - first,
            )
            return response
        except (KeyError, IndexError, TypeError) as exc:  # pragma: no cover - llama.cpp's own format
            raise ModelOutputError(f"llama.cpp returned an unexpected completion: {exc}") from exc

    def _overflow_message(self, detail: str) -> str:
        """One line that says how long the prompt is, the context, and the option that raises it."""
        m = re.search(r"Requested tokens \((\d+)\)", detail)
        size = f"{m.group(1)} tokens" if m else "longer than the context"
        head = f"a prompt to {self.model_id} is {size}, over its context of {self.n_ctx} tokens"
        base = self.model_id if self.model_id.startswith("embedded:") else f"gguf:{self.path}"
        if self.trained_ctx and self.n_ctx < self.trained_ctx:
            want = self.trained_ctx if not m else min(self.trained_ctx, _round_up(int(m.group(1)) + 512))
            return f"{head}; raise it with the model URI option ?n_ctx=N (e.g. {base}?n_ctx={want})"
        trained = f" (the model was trained for {self.trained_ctx})" if self.trained_ctx else ""
        return f"{head}{trained}; shorten the prompt, or raise ?n_ctx=N on the model URI ({base}?n_ctx=N)"

    def chat(self, requests: list[ChatRequest]) -> list[ChatResponse]:
        """One response per request, same order (sequential: llama.cpp runs one sequence at a time)."""
        return self.chat_each(requests, None)

    def chat_each(
        self, requests: list[ChatRequest], on_answer: Callable[[int, ChatResponse], None] | None
    ) -> list[ChatResponse]:
        """:meth:`chat`, calling ``on_answer(index, response)`` as each answer is ready, so a caller
        stores it (and moves its progress bar) at once instead of after the whole batch."""
        out: list[ChatResponse] = []
        with self._lock:
            for index, request in enumerate(requests):
                response = self._one(request)
                out.append(response)
                if on_answer is not None:
                    on_answer(index, response)
        return out

    def __repr__(self) -> str:
        return f"GGUFChat({str(self.path)!r})"


def _prefix_formatter(llama: Any) -> Any:
    """The GGUF's own chat template without the assistant's turn (the pinned prefix's renderer), as
    llama-cpp-python builds it for ``chat_template.default``; ``None`` for another chat format."""
    template = llama.metadata.get("tokenizer.chat_template")
    if llama.chat_format != "chat_template.default" or llama.chat_handler is not None or not template:
        return None
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    def text(token: int) -> str:
        return llama._model.token_get_text(token) if token != -1 else ""

    eos, bos = text(llama.token_eos()), text(llama.token_bos())
    return Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos, add_generation_prompt=False)


def _round_up(tokens: int, step: int = 1024) -> int:
    return -(-tokens // step) * step
