"""``py:module:function`` and ``py-chat:module:function`` — user Python functions as models (DESIGN.md §3).

- ``py:`` — a classifier function: ``f(texts: list[str]) -> list[str | set[str] | Prediction]``.
- ``py-chat:`` — a chat function: ``f(conversations: list[list[dict]]) -> list[str]``, each
  conversation a list of ``{"role", "content"}`` dicts.

The module is imported from the current directory (added to ``sys.path`` when missing) or from
``PYTHONPATH``. The fingerprint's weights hash is the sha256 of the module's source file.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fairprobe.errors import ModelError, ModelOutputError
from fairprobe.models.base import ChatRequest, ChatResponse, Fingerprint, Prediction
from fairprobe.models.hashing import file_sha256


def import_function(target: str, scheme: str) -> tuple[Callable[..., Any], Path | None]:
    """Import ``module:function`` and return the function and the module's file."""
    module_name, sep, func_name = target.rpartition(":")
    if not sep or not module_name or not func_name:
        raise ModelError(f"{scheme}:{target} must name module:function, e.g. {scheme}:my_model:predict")
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise ModelError(
                f"cannot import module {module_name!r} for {scheme}:{target}: "
                f"put {module_name.replace('.', '/')}.py in the current directory or on PYTHONPATH"
            ) from exc
        raise ModelError(
            f"module {module_name!r} for {scheme}:{target} needs a missing package: {exc}"
        ) from exc
    source = Path(module.__file__) if getattr(module, "__file__", None) else None
    func = getattr(module, func_name, None)
    if not callable(func):
        where = f" ({source})" if source else ""
        raise ModelError(
            f"module {module_name!r}{where} has no function {func_name!r}; fix {scheme}:{target}"
        )
    return func, source


def _check_sequence(out: Any, n: int, uri: str, what: str) -> Sequence[Any]:
    if isinstance(out, (str, bytes)) or not isinstance(out, Sequence):
        raise ModelOutputError(
            f"{uri} returned {type(out).__name__}; return a list with one {what} per input"
        )
    if len(out) != n:
        raise ModelOutputError(
            f"{uri} returned {len(out)} {what}s for {n} inputs; return one per input, same order"
        )
    return out


class PyClassifier:
    """A Python function ``list[str] -> list[str | set[str] | Prediction]`` as a :class:`Classifier`."""

    def __init__(self, target: str):
        self.uri = f"py:{target}"
        self.func, source = import_function(target, "py")
        self.fingerprint = Fingerprint(
            backend="py",
            model_id=self.uri,
            weights=file_sha256(source) if source and source.is_file() else "",
        )

    def predict(self, texts: list[str]) -> list[Prediction]:
        texts = list(texts)
        out = _check_sequence(self.func(texts), len(texts), self.uri, "prediction")
        preds = []
        for i, value in enumerate(out):
            try:
                preds.append(Prediction.of(value))
            except TypeError:
                raise ModelOutputError(
                    f"{self.uri} returned {type(value).__name__} {value!r:.60} at position {i}; "
                    "return a label str, a set of label strs or a Prediction"
                ) from None
        return preds

    def __repr__(self) -> str:
        return f"PyClassifier({self.uri!r})"


class PyChat:
    """A Python function ``list[list[{"role", "content"}]] -> list[str]`` as a :class:`ChatModel`.

    Decoding parameters of the requests are not passed to the function; the latency of each
    response is the batch's wall time divided by the batch size.
    """

    def __init__(self, target: str):
        self.uri = f"py-chat:{target}"
        self.func, source = import_function(target, "py-chat")
        self.fingerprint = Fingerprint(
            backend="py-chat",
            model_id=self.uri,
            weights=file_sha256(source) if source and source.is_file() else "",
        )

    def chat(self, requests: list[ChatRequest]) -> list[ChatResponse]:
        requests = list(requests)
        if not requests:
            return []
        start = time.perf_counter()
        out = _check_sequence(
            self.func([r.message_dicts() for r in requests]), len(requests), self.uri, "answer"
        )
        latency = (time.perf_counter() - start) / len(requests)
        for i, text in enumerate(out):
            if not isinstance(text, str):
                raise ModelOutputError(
                    f"{self.uri} returned {type(text).__name__} {text!r:.60} at position {i}; return a list of str"
                )
        return [ChatResponse(text=text, latency_s=latency) for text in out]

    def __repr__(self) -> str:
        return f"PyChat({self.uri!r})"
