"""Log-likelihood scorers: ``log P(continuation | context)`` summed over the continuation's tokens, as
lm-evaluation-harness's ``loglikelihood`` requests compute it (the likelihood benchmarks need it).

- ``embedded:smollm2`` / ``gguf:PATH``: in-process llama.cpp, logits of every position
  (``logits_all``); the sequence starts with the model's BOS token (its EOS when it has none, as
  lm-eval's HF model prefixes an empty context), so the first word is scored too.
- ``openai+http(s)://HOST:PORT/v1#MODEL``: an OpenAI-compatible ``/v1/completions`` server (vLLM)
  asked with ``echo`` and ``logprobs``, lm-eval's ``gguf``/``local-completions`` method: the echoed
  prompt tokens whose offset is at or after the context's end are summed (a first prompt token has
  no log-probability and is left out). llama-cpp-python's server (0.3.x) misaligns its echoed
  log-probabilities for a model that adds no BOS token; fairprobe recognises it (``owned_by: me``),
  starts every prompt with the model's BOS text, which aligns them, and scores a sentence's first
  token with one more request (:meth:`CompletionsScorer._llama_cpp_python_bos`).
- ``hf:PATH``: a Hugging Face model (transformers, :mod:`.scoring_hf`): a causal LM gives the same sum
  as the in-process GGUF (``hf:PATH/NAME.gguf`` reads a GGUF file, dequantised); a masked LM
  (``*ForMaskedLM``) gives the CrowS-Pairs authors' pseudo-log-likelihood (:mod:`.mlm`), for
  CrowS-Pairs only: :func:`check_likelihood_model` refuses it for the other benchmarks with one line.

A chat-only model (``openai:``, ``py-chat:``) has no likelihood: :func:`load_scorer` refuses it with
one line. Scores are cached through the run's store like every model answer: the scorer is wrapped
as a classifier whose input is the JSON ``[context, continuation]`` and whose scores are
``logprob`` and ``tokens``, so a cached re-run asks the model nothing.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import numpy as np
from scipy.special import log_softmax

from fairprobe.errors import ModelError
from fairprobe.models.base import INVALID, Fingerprint, Prediction
from fairprobe.models.hashing import file_sha256
from fairprobe.models.uri import parse_uri, split_query

LIKELIHOOD_SCHEMES = ("embedded", "gguf", "openai+http", "openai+https", "hf")


def supports_likelihood(uri: str) -> bool:
    u = parse_uri(uri)
    if u.scheme == "embedded":
        return u.target == "smollm2"
    return u.scheme in LIKELIHOOD_SCHEMES


class GGUFScorer:
    """In-process llama.cpp log-likelihoods of a ``.gguf`` file."""

    def __init__(self, path: str, model_id: str, n_ctx: int = 2048, n_threads: int = 1):
        from llama_cpp import Llama

        self._llama = Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            logits_all=True,
            verbose=False,
        )
        bos = self._llama.token_bos()
        self._prefix = [bos if bos is not None and bos >= 0 else self._llama.token_eos()]
        self._lock = threading.Lock()
        self.fingerprint = Fingerprint(
            backend="gguf-loglik", model_id=model_id, weights=file_sha256(path), params={"prefix": "bos"}
        )

    def _tokens(self, text: str) -> list[int]:
        return list(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else []

    def loglik(self, context: str, continuation: str) -> tuple[float, int]:
        return self.loglik_many(context, [continuation])[0]

    def loglik_many(self, context: str, continuations: list[str]) -> list[tuple[float, int]]:
        """Scores of several continuations of one context: the context is evaluated once and its KV
        cache kept (BBQ's three answers, DiscrimEval's yes/no); a whole sentence (empty context) and a
        continuation whose tokens merge with the context's last token are evaluated whole."""
        ctx = self._prefix + self._tokens(context)
        base = len(ctx)
        out = []
        with self._lock:
            fresh = True
            for continuation in continuations:
                whole = self._prefix + self._tokens(context + continuation)
                if len(whole) > self._llama.n_ctx():
                    raise ModelError(
                        f"a benchmark item of {len(whole)} tokens does not fit the "
                        f"{self._llama.n_ctx()}-token context"
                    )
                if context and whole[:base] == ctx and len(whole) > base:
                    if fresh:
                        self._llama.reset()
                        self._llama.eval(ctx)
                        fresh = False
                    self._llama.n_tokens = base  # keep the context's KV cache, drop the last continuation
                    self._llama.eval(whole[base:])
                    start = base
                else:  # a merge across the boundary: score the whole sequence from scratch
                    start = base
                    while start > 1 and whole[:start] != ctx[:start]:
                        start -= 1
                    self._llama.reset()
                    self._llama.eval(whole)
                    fresh = True
                logits = np.asarray(self._llama.scores[start - 1 : len(whole) - 1], dtype=np.float64)
                picked = log_softmax(logits, axis=-1)[np.arange(len(whole) - start), whole[start:]]
                out.append((float(picked.sum()), len(whole) - start))
        return out


class CompletionsScorer:
    """``/v1/completions`` with ``echo`` + ``logprobs`` (llama.cpp server, vLLM)."""

    def __init__(self, base_url: str, model: str, timeout: float = 120.0):
        import httpx

        self._client = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout)
        self.model = model
        served = self._served_id()
        self.fingerprint = Fingerprint(
            backend="completions-loglik",
            model_id=f"{base_url}#{model}",
            weights=served,
            params={"bos_prefix": self._bos} if self._llama_cpp_python else {},
        )

    def _served_id(self) -> str:
        try:
            models = self._client.get("/models").json().get("data", [])
        except Exception as exc:  # noqa: BLE001 - any transport error is one line
            raise ModelError(f"cannot reach the completions server {self._client.base_url}: {exc}") from None
        self._bos = ""
        self._llama_cpp_python = any(m.get("owned_by") == "me" for m in models)  # its server says so
        if self._llama_cpp_python:
            self._bos = self._llama_cpp_python_bos()
        return ",".join(sorted(m.get("id", "") for m in models)) or self.model

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        resp = self._client.post(path, json={"model": self.model, **body})
        if resp.status_code != 200:
            raise ModelError(f"the completions server answered {resp.status_code}: {resp.text[:200]}")
        return resp.json()

    def _echo(self, prompt: str) -> dict[str, Any]:
        body = {"prompt": prompt, "max_tokens": 1, "echo": True, "logprobs": 1, "temperature": 0.0}
        return self._post("/completions", body)["choices"][0]["logprobs"]

    def _llama_cpp_python_bos(self) -> str:
        """The text to start every prompt with on llama-cpp-python's server: ``""`` when its echo is
        already aligned, else the model's BOS token text.

        Its echo (``Llama._create_completion``, 0.3.x) pairs the prompt's token *i* with the logits
        of position *i* (which predict token *i + 1*) unless the prompt's first token is the model's
        BOS, which it drops first; for a model that adds no BOS (SmolLM2) every echoed value is
        ``log p(x_i | x_<=i)``, not a shift of the right ones (measured: " rope" at -7.24, -9.32
        in-process). A prompt that starts with the BOS token's text is tokenized with it
        (``special=True``), and then the echoed log-probabilities equal in-process llama.cpp's to
        four decimals (upstream: abetlen/llama-cpp-python#1276, #1471). Each candidate prefix is checked against a value the server computes right:
        the log-probability of one generated token (forced by a logit bias, reported unbiased)."""
        probe = "The capital of France is Paris."
        for prefix in ("", *BOS_CANDIDATES):
            echo = self._echo(prefix + probe)
            if len(echo["tokens"]) < 4 or echo["token_logprobs"][2] is None:
                continue
            truth = self._forced(prefix + probe[: echo["text_offset"][2]], echo["tokens"][2])
            if truth is not None and abs(truth - echo["token_logprobs"][2]) < 1e-3:
                return prefix
        raise ModelError(
            "llama-cpp-python's server misaligns echoed log-probabilities for a model that adds no BOS "
            "token, and this model's BOS text is none fairprobe knows; score the same file in-process "
            "with gguf:PATH, or serve it with vLLM"
        )

    def _forced(self, prompt: str, token: str) -> float | None:
        """``log P(token | prompt)`` from one greedy token with ``token`` forced by a logit bias
        (llama-cpp-python reports the unbiased log-probability); ``None`` when the server did not
        generate exactly ``token``."""
        body = {"prompt": prompt, "max_tokens": 1, "logprobs": 1, "temperature": 0.0,
                "logit_bias": {token: 100.0}, "logit_bias_type": "tokens"}  # fmt: skip
        lp = self._post("/completions", body)["choices"][0]["logprobs"]
        if lp["tokens"][:1] != [token] or lp["token_logprobs"][0] is None:
            return None
        return float(lp["token_logprobs"][0])

    def _first_token(self, token: str) -> float:
        """``log P(token | BOS)`` on llama-cpp-python's server, which echoes no log-probability for a
        prompt's first token: one token after the BOS text, forced (:meth:`_forced`)."""
        value = self._forced(self._bos, token) if self._bos else None
        if value is None:
            raise ModelError(
                f"llama-cpp-python's server gives no log-probability for a sentence's first token ({token!r}) "
                "of this model; score the same file in-process with gguf:PATH, or serve it with vLLM"
            )
        return value

    def loglik(self, context: str, continuation: str) -> tuple[float, int]:
        lp = self._echo(self._bos + context + continuation)  # offsets count from after the BOS text
        end = len(context) + len(continuation)
        total, n = 0.0, 0
        for i, (offset, value) in enumerate(zip(lp["text_offset"], lp["token_logprobs"], strict=False)):
            if offset >= end:
                break
            if offset < len(context):
                continue
            if value is None and i == 0 and self._llama_cpp_python:
                value = self._first_token(lp["tokens"][0])
            if value is not None:
                total += float(value)
                n += 1
        if n == 0:
            raise ModelError(
                "the completions server returned no log-probabilities for the continuation (echo unsupported?)"
            )
        return total, n


BOS_CANDIDATES = ("<|im_start|>", "<s>", "<|begin_of_text|>", "<|endoftext|>", "<bos>", "<|startoftext|>",
                  "[BOS]", "<|bos|>")  # fmt: skip
"""BOS token texts of common GGUF models, probed on llama-cpp-python's server."""


class ScorerClassifier:
    """A scorer behind the :class:`~fairprobe.models.base.Classifier` protocol, so the run's cache
    stores its answers: input ``json.dumps([context, continuation])``, scores ``logprob``/``tokens``."""

    def __init__(self, scorer: Any):
        self.scorer = scorer
        self.fingerprint = scorer.fingerprint
        self.likelihood: str = getattr(scorer, "likelihood", "causal")
        """Which likelihood the scores are: ``causal`` or ``masked-lm-pll``."""
        self.method: str | None = getattr(scorer, "method", None)
        """The summary's words for it where they differ from the benchmark's default."""

    def requests(self, name: str, item: dict[str, Any]) -> list[tuple[str, str]]:
        """The (context, continuation) requests of benchmark ``name``'s item (lm-eval's conventions)."""
        from fairprobe.methods.benchmark.execute import requests

        return requests(name, item)

    def predict(self, texts: list[str]) -> list[Prediction]:
        requests = [json.loads(t) for t in texts]
        by_context: dict[str, list[int]] = {}
        for i, (context, _) in enumerate(requests):
            by_context.setdefault(context, []).append(i)
        out: list[Prediction] = [Prediction(frozenset([INVALID]))] * len(texts)
        many = getattr(self.scorer, "loglik_many", None)
        for context, indices in by_context.items():
            conts = [requests[i][1] for i in indices]
            try:
                scores = many(context, conts) if many else [self.scorer.loglik(context, c) for c in conts]
            except ModelError as exc:
                if "does not fit" not in str(exc):
                    raise
                continue  # too long for the context: INVALID, counted apart
            for i, (logprob, tokens) in zip(indices, scores, strict=True):
                out[i] = Prediction(frozenset(["scored"]), {"logprob": logprob, "tokens": float(tokens)})
        return out


class PairScorerClassifier(ScorerClassifier):
    """The masked-LM scorer behind the classifier protocol. A sentence's pseudo-log-likelihood
    depends on its pair (only the tokens both sentences share are masked), so a request is
    ``json.dumps([partner, sentence])``; ``logprob`` is the score rounded as ``metric.py`` rounds it
    (a tie is neutral), ``pll`` the unrounded sum, ``tokens`` the tokens masked."""

    def requests(self, name: str, item: dict[str, Any]) -> list[tuple[str, str]]:
        if name != "crows-pairs":
            raise ModelError(_masked_refusal(name))
        return [(item["sent_less"], item["sent_more"]), (item["sent_more"], item["sent_less"])]

    def predict(self, texts: list[str]) -> list[Prediction]:
        from fairprobe.methods.benchmark.mlm import ROUND

        out = []
        for text in texts:
            partner, sentence = json.loads(text)
            try:
                total, tokens = self.scorer.pll(sentence, partner)
            except ModelError as exc:
                if "does not fit" not in str(exc):
                    raise
                out.append(Prediction(frozenset([INVALID])))
                continue
            scores = {"logprob": round(total, ROUND), "pll": total, "tokens": float(tokens)}
            out.append(Prediction(frozenset(["scored"]), scores))
        return out


def _masked_refusal(benchmark: str) -> str:
    why = (
        "StereoSet scores a masked LM by filling the blank (its eval_discriminative_models.py), which "
        "fairprobe does not implement"
        if benchmark == "stereoset"
        else f"{benchmark} compares answer likelihoods given a context, which needs a causal LM"
    )
    return (
        f"a masked LM scores only crows-pairs (the authors' pseudo-log-likelihood); {why}: use a causal "
        "LM (embedded:smollm2, gguf:PATH, an hf: *ForCausalLM model)"
    )


def check_likelihood_model(uri: str, benchmark: str) -> None:
    """Refuse, with one line and without loading weights, an ``hf:`` model that scores no likelihood
    (a classifier, an encoder without an LM head) or a masked LM for a benchmark other than
    CrowS-Pairs."""
    u = parse_uri(split_query(uri)[0])
    if u.scheme != "hf":
        return
    from fairprobe.methods.benchmark.scoring_hf import likelihood_kind

    if likelihood_kind(u.target) == "masked" and benchmark != "crows-pairs":
        raise ModelError(f"hf:{u.target} is a masked LM: {_masked_refusal(benchmark)}")


def load_scorer(uri: str) -> ScorerClassifier:
    """The log-likelihood scorer of ``uri``; one-line :class:`ModelError` for a chat-only model."""
    text, options = split_query(uri)
    u = parse_uri(text)
    if not supports_likelihood(uri):
        raise ModelError(
            f"{u.shown} is a chat-only model: this benchmark scores sentence log-likelihoods, which a chat "
            "endpoint does not return; use embedded:smollm2, gguf:PATH, hf:PATH or an OpenAI-compatible "
            "/v1/completions server (openai+http://HOST:PORT/v1#MODEL)"
        )
    n_ctx = int(options.get("n_ctx", 2048))
    threads = int(options.get("n_threads", 1))  # 1: on a shared, loaded CPU, 2 threads ran 8x slower
    if u.scheme == "embedded":
        from fairprobe.models.embedded import smollm2_gguf_path

        return ScorerClassifier(
            GGUFScorer(str(smollm2_gguf_path()), "embedded:smollm2", n_ctx=n_ctx, n_threads=threads)
        )
    if u.scheme == "gguf":
        from pathlib import Path

        path = Path(u.target).expanduser()
        if not path.is_file():
            raise ModelError(f"GGUF file {path} does not exist; give the path of a .gguf model file")
        return ScorerClassifier(GGUFScorer(str(path), f"gguf:{path.name}", n_ctx=n_ctx, n_threads=threads))
    if u.scheme == "hf":
        from fairprobe.methods.benchmark import scoring_hf

        if scoring_hf.likelihood_kind(u.target) == "masked":
            return PairScorerClassifier(scoring_hf.masked_scorer(u.target))
        return ScorerClassifier(scoring_hf.HFCausalScorer(u.target))
    return ScorerClassifier(
        CompletionsScorer(u.target, u.fragment, timeout=float(options.get("timeout", 120)))
    )
