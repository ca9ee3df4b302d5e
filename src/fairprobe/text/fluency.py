"""Grammatical validity of texts: HInter RQ2 (mutants vs originals) and RQ3.3 (valid vs discarded mutants).

The paper (hinter.txt §5, RQ2 and RQ3.3, Figures 6 and 9) scored originals and mutants with Grammarly,
a closed service. Two open replacements, both ``score(texts) -> list[float]`` (same order, cached
in-process by text):

- :class:`LanguageToolScorer` — a client of a LanguageTool HTTP server (``POST {url}/v2/check`` with
  form fields ``text`` and ``language``). Score: rule matches per 100 words; **lower is better**.
- :class:`LMFluencyScorer` — mean per-token log-likelihood under a small causal LM run by llama.cpp,
  ``(1/n) * sum_i log p(t_i | t_<i)`` over the n tokens of the text; **higher is better**.

Each scorer says its direction in ``higher_is_better``; HInter compares means of the same scorer
across originals, valid mutants and discarded mutants, never raw values across scorers.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import httpx

from fairprobe.errors import ModelError, ModelOutputError

_WORD = re.compile(r"\w+(?:['’-]\w+)*")


def count_words(text: str) -> int:
    """Words of ``text``: runs of letters/digits, keeping inner apostrophes and hyphens (``don't`` = 1)."""
    return len(_WORD.findall(text))


class FluencyScorer(Protocol):
    """What HInter needs from a grammatical-validity scorer."""

    name: str
    higher_is_better: bool

    def score(self, texts: Sequence[str]) -> list[float]: ...


class LanguageToolScorer:
    """Grammar/spelling errors per 100 words, from a LanguageTool server (RQ2/RQ3.3 in place of Grammarly).

    ``url`` is the server root (``http://localhost:8081``; a trailing ``/v2`` is accepted). Start one with
    ``java -cp languagetool-server.jar org.languagetool.server.HTTPServer --port 8081``.
    ``disabled_categories`` (e.g. ``("TYPOS", "STYLE")``) is sent as the API's ``disabledCategories``.
    Score of one text: ``100 * len(matches) / count_words(text)``; an empty text scores 0.
    """

    higher_is_better = False

    def __init__(
        self,
        url: str,
        language: str = "en-US",
        disabled_categories: Sequence[str] = (),
        timeout: float = 60.0,
    ) -> None:
        root = url.rstrip("/")
        root = root[: -len("/v2")] if root.endswith("/v2") else root
        if not root.startswith(("http://", "https://")):
            raise ModelError(f"LanguageTool URL {url!r} must start with http:// or https://")
        self.url = root
        self.language = language
        self.disabled_categories = tuple(disabled_categories)
        self.name = f"languagetool:{root}"
        self.cache: dict[str, float] = {}
        self._client = httpx.Client(timeout=timeout)

    def check(self, text: str) -> list[dict[str, Any]]:
        """The server's ``matches`` for ``text`` (each a dict with ``message``, ``offset``, ``rule``, ...)."""
        form = {"text": text, "language": self.language}
        if self.disabled_categories:
            form["disabledCategories"] = ",".join(self.disabled_categories)
        endpoint = f"{self.url}/v2/check"
        try:
            resp = self._client.post(endpoint, data=form, headers={"Accept": "application/json"})
        except httpx.TransportError as exc:
            raise ModelError(
                f"LanguageTool server at {self.url} is unreachable ({type(exc).__name__}); start it or fix the URL"
            ) from exc
        if resp.status_code != 200:
            first = (resp.text.strip().splitlines() or [""])[0][:200]
            raise ModelOutputError(f"LanguageTool at {endpoint} answered HTTP {resp.status_code}: {first}")
        try:
            body = resp.json()
        except ValueError as exc:
            raise ModelOutputError(
                f"LanguageTool at {endpoint} did not answer JSON; is it a LanguageTool server?"
            ) from exc
        matches = body.get("matches") if isinstance(body, dict) else None
        if not isinstance(matches, list):
            raise ModelOutputError(f"LanguageTool at {endpoint} answered JSON without a 'matches' list")
        return matches

    def score(self, texts: Sequence[str]) -> list[float]:
        """Errors per 100 words of each text (lower is better)."""
        for text in dict.fromkeys(texts):
            if text not in self.cache:
                words = count_words(text)
                self.cache[text] = 100.0 * len(self.check(text)) / words if words else 0.0
        return [self.cache[t] for t in texts]

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> LanguageToolScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def resolve_gguf(model: str) -> Path:
    """``embedded:smollm2``, ``gguf:PATH`` or a plain path to a ``.gguf`` file."""
    if model == "embedded:smollm2":
        from fairprobe.models.embedded import smollm2_gguf_path

        return smollm2_gguf_path()
    if model.startswith("embedded:"):
        raise ModelError(f"no embedded fluency model {model!r}; use embedded:smollm2 or gguf:PATH")
    path = Path(model.removeprefix("gguf:")).expanduser()
    if not path.is_file():
        raise ModelError(f"GGUF file {path} not found; give gguf:PATH to a .gguf model or embedded:smollm2")
    return path


class LMFluencyScorer:
    """Mean per-token log-likelihood of each text under a small causal LM (llama.cpp, in-process).

    For the tokens ``t_1..t_n`` of a text, preceded by one context token ``t_0`` (the model's BOS, or
    its document separator ``<|endoftext|>`` when it adds no BOS), the score is
    ``(1/n) * sum_{i=1..n} log softmax(logits_{i-1})[t_i]`` in nats; higher is more fluent. Texts longer
    than ``n_ctx - 1`` tokens are scored on their first ``n_ctx - 1`` tokens. A text with no tokens
    scores NaN. Deterministic: no sampling is involved.
    """

    higher_is_better = True

    def __init__(
        self, model: str = "embedded:smollm2", n_ctx: int = 512, n_threads: int | None = None
    ) -> None:
        if n_ctx < 8:
            raise ModelError(f"n_ctx={n_ctx} is too small for fluency scoring; use at least 8 (default 512)")
        self.path = resolve_gguf(model)
        self.name = f"lm:{self.path.name}"
        self.n_ctx = n_ctx
        self.n_threads = n_threads or min(4, os.cpu_count() or 1)
        self.cache: dict[str, float] = {}
        self._llm: Any = None
        self._context: list[int] = []

    def _load(self) -> Any:
        if self._llm is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise ModelError("LM fluency needs llama-cpp-python; pip install 'fairprobe[llama]'") from exc
            try:
                llm = Llama(
                    model_path=str(self.path),
                    n_ctx=self.n_ctx,
                    n_batch=min(self.n_ctx, 512),
                    logits_all=True,
                    n_threads=self.n_threads,
                    verbose=False,
                )
            except (ValueError, RuntimeError) as exc:
                raise ModelError(
                    f"llama.cpp cannot load {self.path}: {exc}; is it a valid GGUF model?"
                ) from exc
            self._context = self._context_tokens(llm)
            self._llm = llm
        return self._llm

    @staticmethod
    def _context_tokens(llm: Any) -> list[int]:
        probe = llm.tokenize(b"a", add_bos=True)
        if probe != llm.tokenize(b"a", add_bos=False):
            return probe[:1]  # the model prepends its own BOS
        sep = llm.tokenize(b"<|endoftext|>", add_bos=False, special=True)
        if len(sep) == 1:
            return sep
        bos = llm.token_bos()
        return [bos if bos >= 0 else llm.token_eos()]

    def _score_one(self, text: str) -> float:
        import numpy as np

        llm = self._load()
        body = llm.tokenize(text.encode("utf-8"), add_bos=False)[: self.n_ctx - len(self._context)]
        if not body:
            return math.nan
        tokens = self._context + body
        llm.reset()
        llm.eval(tokens)
        k = len(self._context)
        logits = np.asarray(llm.scores[k - 1 : len(tokens) - 1], dtype=np.float64)  # row j predicts token j+1
        top = logits.max(axis=1)
        log_z = top + np.log(np.exp(logits - top[:, None]).sum(axis=1))
        log_p = logits[np.arange(len(body)), body] - log_z
        return float(log_p.mean())

    def score(self, texts: Sequence[str]) -> list[float]:
        """Mean token log-likelihood (nats) of each text (higher is better)."""
        for text in dict.fromkeys(texts):
            if text not in self.cache:
                self.cache[text] = self._score_one(text)
        return [self.cache[t] for t in texts]
