"""``gguf:PATH`` — a GGUF model run in-process by llama.cpp (DESIGN.md §3).

Requests are answered one at a time with ``Llama.create_chat_completion`` (the chat template
stored in the GGUF file). The context is reset before every request: llama.cpp otherwise reuses
the KV cache of a shared prompt prefix, and a prefix-cached evaluation can give slightly
different logits than a fresh one, so the same request at temperature 0 could get two answers.
The weights hash is the sha256 of the file, cached in-process by (path, size, mtime).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from fairprobe.errors import ContextLengthError, ModelError, ModelOutputError
from fairprobe.models.base import ChatRequest, ChatResponse, Fingerprint
from fairprobe.models.context import is_context_overflow
from fairprobe.models.hashing import file_sha256


class GGUFChat:
    """A llama.cpp chat model loaded from one ``.gguf`` file.

    Args:
        path: the GGUF file.
        n_ctx: context length in tokens.
        n_threads: CPU threads llama.cpp uses.
        seed: the model's default seed (each request also sends its own).
        model_id: name shown in the fingerprint (default: ``gguf:<file name>``).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        n_ctx: int = 2048,
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
        try:
            self._llama = Llama(
                model_path=str(self.path),
                n_ctx=int(n_ctx),
                n_threads=int(n_threads),
                seed=int(seed),
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise ModelError(f"llama.cpp cannot load {self.path}: {exc}; is it a valid GGUF file?") from exc
        self.n_ctx = int(n_ctx)
        self._lock = threading.Lock()
        self.fingerprint = Fingerprint(
            backend="gguf",
            model_id=model_id or f"gguf:{self.path.name}",
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
            error = ContextLengthError if is_context_overflow(str(exc)) else ModelError
            raise error(f"llama.cpp rejected a request to {self.path.name}: {exc}; raise n_ctx=") from exc
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

    def chat(self, requests: list[ChatRequest]) -> list[ChatResponse]:
        """One response per request, same order (sequential: llama.cpp runs one sequence at a time)."""
        with self._lock:
            return [self._one(r) for r in requests]

    def __repr__(self) -> str:
        return f"GGUFChat({str(self.path)!r})"
