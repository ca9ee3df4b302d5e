"""What a technique's ``execute`` receives: :class:`RunContext`, the one door to models, the
findings store, progress lines and the run's log. Part of the technique contract
(:mod:`fairprobe.technique`): technique packages import it from here, never from the runner.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fairprobe.models.redact import redact_secrets, redact_uri
from fairprobe.run.caching import CachedChatModel, CachedClassifier
from fairprobe.run.folder import block_strings, claim, fingerprint_changed, model_key, recorded_models
from fairprobe.run.progress import ProgressReporter
from fairprobe.run.store import Store


class RunContext:
    """What a technique's ``execute`` gets: cached models, the findings store, progress, logging."""

    def __init__(
        self, run_dir: Path, store: Store, cache: Store | None, seed: int, name: str, quiet: bool = False
    ):
        self.run_dir = run_dir
        self.store = store
        self.cache = cache
        self.seed = seed
        self.name = name
        self.quiet = quiet
        self._models: dict[tuple[str, str], Any] = {}
        self.info: dict[str, Any] = store.get_state("info", {}) or {}
        self.threads = 1
        """CPU threads torch and BLAS may use in this run (the block's ``threads``, resolved)."""

    # -- models ---------------------------------------------------------------------------------
    def _stores(self) -> list[Store]:
        return [self.store] + ([self.cache] if self.cache is not None else [])

    def classifier(self, uri: str, **options: Any) -> CachedClassifier:
        """The classifier at ``uri``, loaded once per run and cached by (fingerprint, text)."""
        from fairprobe.models.uri import load_classifier

        return self._model("classifier", uri, options, lambda: load_classifier(uri, **options))

    def chat(self, uri: str, **options: Any) -> CachedChatModel:
        """The chat model at ``uri``, loaded once per run and cached by (fingerprint, request)."""
        from fairprobe.models.uri import load_chat

        return self._model("chat", uri, options, lambda: load_chat(uri, **options))

    def _model(self, kind: str, uri: str, options: dict[str, Any], load: Any) -> Any:
        key = (kind, uri + json.dumps(options, sort_keys=True, default=str))
        if key not in self._models:
            inner = load()
            self._check_model(kind, uri, inner.fingerprint)
            wrapper = CachedClassifier if kind == "classifier" else CachedChatModel
            self._models[key] = wrapper(inner, self._stores())
        return self._models[key]

    def close_models(self) -> None:
        """Stop what this run's models started (a llama.cpp server of ``?server=1``,
        :mod:`fairprobe.models.llama_server`); the runner calls it when the run ends, however it ends."""
        for wrapper in self._models.values():
            model: Any = wrapper
            for _ in range(4):  # CachedChatModel -> LLMClassifier -> CachedChatModel -> the backend
                if getattr(model, "closes_with_run", False):
                    model.close()
                    break
                model = getattr(model, "inner", None) or getattr(model, "chat_model", None)
                if model is None:
                    break

    def _check_model(self, kind: str, uri: str, fingerprint: Any) -> None:
        """One run, one model: a model whose fingerprint differs from the one this run recorded for
        the same URI (retrained weights, edited ``py:`` code, another served model) stops the run
        with exit 2 instead of mixing two models' answers in one run."""
        state = model_key(kind, uri)
        recorded = self.store.get_state(state)
        if recorded is not None and recorded.get("fingerprint") != fingerprint.key:
            raise fingerprint_changed(
                fingerprint.model_id, recorded["fingerprint"], fingerprint.key, self.run_dir
            )
        if recorded is None:
            self.store.set_state(state, {"kind": kind, "fingerprint": fingerprint.key})

    def verify_models(self, block: dict[str, Any]) -> None:
        """Load again every model this run recorded that the block still names, so a resumed or
        finished run notices a changed model even when nothing is left to ask it."""
        recorded = recorded_models(self.store)
        if not recorded:
            return
        for text in sorted(block_strings(block)):
            if model_key("classifier", text) in recorded:
                self.classifier(text)
            if model_key("chat", text) in recorded:
                self.chat(text)

    def output(self, name: str) -> Path:
        """Where to write ``name`` in the run folder (recorded in the run's manifest first; a file of
        that name that fairprobe did not write stops the run instead of being overwritten)."""
        return claim(self.run_dir, self.store, name)

    def wrap_classifier(self, classifier: Any, chunk_size: int = 64) -> CachedClassifier:
        """Cache an already-built classifier (e.g. an ``LLMClassifier`` over a chat model); misses go
        to it ``chunk_size`` at a time."""
        return CachedClassifier(classifier, self._stores(), chunk_size=chunk_size)

    # -- findings -------------------------------------------------------------------------------
    def done_ids(self) -> set[str]:
        return self.store.finding_ids()

    def add_findings(self, findings: Iterable[dict[str, Any]], state: dict[str, Any] | None = None) -> int:
        """Record a batch of findings (each with a unique ``id``) in one transaction."""
        return self.store.add_findings(findings, state)

    def record_info(self, **items: Any) -> None:
        """Facts about the run for the summary (e.g. which parser model ran); a key in a model URI
        among them is stored as ``***``."""
        self.info.update(redact_secrets(items))
        self.store.set_state("info", self.info)

    def progress(self, label: str, total: int) -> ProgressReporter:
        return ProgressReporter(f"{self.name}: {label}", total, stream=sys.stderr)

    def log(self, message: str) -> None:
        if not self.quiet:
            print(f"[{self.name}] {redact_uri(message)}", file=sys.stderr, flush=True)
