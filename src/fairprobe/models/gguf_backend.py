"""``gguf:PATH`` — a GGUF model run in-process by llama.cpp (DESIGN.md §3).

Requests are answered one at a time with ``Llama.create_chat_completion`` (the chat template
stored in the GGUF file). The context is reset before every request: llama.cpp otherwise reuses
the KV cache of a shared prompt prefix, and a prefix-cached evaluation can give slightly
different logits than a fresh one, so the same request at temperature 0 could get two answers.
The weights hash is the sha256 of the file, cached in-process by (path, size, mtime).

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
from pathlib import Path

from fairprobe.errors import ContextLengthError, ModelError, ModelOutputError
from fairprobe.models.base import ChatRequest, ChatResponse, Fingerprint
from fairprobe.models.context import is_context_overflow
from fairprobe.models.hashing import file_sha256

AUTO_CTX_CAP = 8192
"""Largest context chosen when ``n_ctx`` is not given (the model's trained context, at most this)."""


class GGUFChat:
    """A llama.cpp chat model loaded from one ``.gguf`` file.

    Args:
        path: the GGUF file.
        n_ctx: context length in tokens; default: the model's trained context, at most
            :data:`AUTO_CTX_CAP` (8,192 for SmolLM2-135M).
        n_threads: CPU threads llama.cpp uses.
        seed: the model's default seed (each request also sends its own).
        model_id: name shown in the fingerprint (default: ``gguf:<file name>``).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        n_ctx: int | None = None,
        n_threads: int = 2,
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

        def load(size: int) -> Llama:
            return Llama(
                model_path=str(self.path), n_ctx=size, n_threads=int(n_threads), seed=int(seed), verbose=False
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
            params={"n_ctx": self.n_ctx},
        )

    def _one(self, request: ChatRequest) -> ChatResponse:
        start = time.perf_counter()
        try:
            self._llama.reset()
            constrained = (
                {"response_format": {"type": "json_object", "schema": request.json_schema}}
                if request.json_schema is not None
                else {}
            )  # llama.cpp compiles the schema into a grammar
            out = self._llama.create_chat_completion(
                messages=request.message_dicts(),
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                seed=request.effective_seed,
                **constrained,
            )
        except ValueError as exc:  # e.g. prompt longer than the context
            if is_context_overflow(str(exc)):
                raise ContextLengthError(self._overflow_message(str(exc))) from exc
            raise ModelError(f"llama.cpp rejected a request to {self.path.name}: {exc}") from exc
        latency = time.perf_counter() - start
        try:
            choice = out["choices"][0]
            usage = out.get("usage") or {}
            return ChatResponse(
                text=choice["message"].get("content") or "",
                finish_reason=str(choice.get("finish_reason") or "stop"),
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
                latency_s=latency,
            )
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
        with self._lock:
            return [self._one(r) for r in requests]

    def __repr__(self) -> str:
        return f"GGUFChat({str(self.path)!r})"


def _round_up(tokens: int, step: int = 1024) -> int:
    return -(-tokens // step) * step
