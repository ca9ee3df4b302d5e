"""``py:module:function`` and ``py-chat:module:function`` — user Python functions as models (DESIGN.md §3).

- ``py:`` — a classifier function: ``f(texts: list[str]) -> list[str | set[str] | Prediction]``.
- ``py-chat:`` — a chat function: ``f(conversations: list[list[dict]]) -> list[str]``, each
  conversation a list of ``{"role", "content"}`` dicts.

The module is imported from the current directory (added to ``sys.path`` when missing) or from
``PYTHONPATH``.

The fingerprint's weights hash covers what the model is made of, so retrained weights are never
served old answers from the response cache:

- the module's source file;
- the source of every module it uses from its own folder or below (``import helper``,
  ``from helper import f``, and what those use in turn) — project helpers such as ``helper.py``
  next to ``model.py``; installed packages are left out;
- every data file the module *reads while it is imported* (weights loaded at import time, found
  with a ``sys.audit`` hook; Python sources and files of installed packages are left out);
- what an optional module-level ``fingerprint()`` returns: a string (e.g. a version) and/or paths
  (a path or a list of them; folders are hashed file by file). Define it when the function loads
  its weights lazily, inside the call::

      def fingerprint():
          return ["weights.pkl"]       # or "my-model v3"

``fairprobe models check py:module:function`` prints the files and hashes that went in.
A function that raises, or returns a wrong number of answers, is a one-line
:class:`~fairprobe.errors.ModelError` (exit 2), never a traceback.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from fairprobe.errors import ModelCodeError, ModelError, ModelOutputError
from fairprobe.interrupts import model_stop
from fairprobe.models.base import ChatRequest, ChatResponse, Fingerprint, Prediction
from fairprobe.models.hashing import file_sha256, files_sha256

_recording = threading.local()
_hook_installed = False
_reads: dict[str, list[Path]] = {}
"""Data files each imported user module read while it was imported (module name -> paths)."""


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "open":
        return
    paths = getattr(_recording, "paths", None)
    if paths is None or not args:
        return
    path, mode = args[0], args[1] if len(args) > 1 else "r"
    if isinstance(path, int) or (isinstance(mode, str) and any(c in mode for c in "wax+")):
        return
    paths.append(path)


def _install_hook() -> None:
    global _hook_installed
    if not _hook_installed:
        sys.addaudithook(_audit)  # audit hooks cannot be removed: it only records while asked to
        _hook_installed = True


_SKIP_SUFFIXES = {".py", ".pyc", ".pyd", ".so", ".pth", ".dylib", ".dll"}


def _is_model_file(raw: Any) -> Path | None:
    try:
        p = Path(os.fsdecode(raw)).resolve()
    except (TypeError, ValueError, OSError):
        return None
    if p.suffix in _SKIP_SUFFIXES or not p.is_file():
        return None
    text = str(p)
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, "/usr/", "/etc/", "/proc/", "/sys/", "/dev/"}
    if any(text.startswith(x) for x in prefixes if x) or "site-packages" in p.parts:
        return None
    return p


def import_function(target: str, scheme: str) -> tuple[Callable[..., Any], Path | None]:
    """Import ``module:function`` and return the function and the module's file.

    Data files the module reads while it is imported are recorded for its fingerprint
    (:func:`model_inputs`)."""
    module_name, sep, func_name = target.rpartition(":")
    if not sep or not module_name or not func_name:
        raise ModelError(f"{scheme}:{target} must name module:function, e.g. {scheme}:my_model:predict")
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    fresh = module_name not in sys.modules
    _install_hook()
    _recording.paths = []
    argv = sys.argv
    sys.argv = [module_name]  # fairprobe's command line is not the model's to parse (argparse)
    try:
        module = importlib.import_module(module_name)
    except (SystemExit, KeyboardInterrupt) as exc:
        why = model_stop(exc, f"importing {module_name!r} for {scheme}:{target}")
        if why is None:
            raise
        raise ModelCodeError(why) from None
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise ModelError(
                f"cannot import module {module_name!r} for {scheme}:{target}: "
                f"put {module_name.replace('.', '/')}.py in the current directory or on PYTHONPATH"
            ) from exc
        raise ModelError(
            f"module {module_name!r} for {scheme}:{target} needs a missing package: {exc}"
        ) from exc
    except Exception as exc:  # the user's module failed at import: their bug, one line
        raise ModelCodeError(
            f"importing {module_name!r} for {scheme}:{target} raised {type(exc).__name__}: {exc}; "
            "fix the module (run `python -c 'import " + module_name + "'` to see the traceback)"
        ) from exc
    finally:
        sys.argv = argv
        recorded = _recording.paths
        _recording.paths = None
    source = Path(module.__file__) if getattr(module, "__file__", None) else None
    if fresh:
        _reads[module_name] = sorted({p for p in map(_is_model_file, recorded) if p is not None})
    func = getattr(module, func_name, None)
    if not callable(func):
        where = f" ({source})" if source else ""
        raise ModelError(
            f"module {module_name!r}{where} has no function {func_name!r}; fix {scheme}:{target}"
        )
    return func, source


def project_sources(module: Any, source: Path | None) -> list[Path]:
    """Source files of the project modules ``module`` uses: modules it names (``import helper``,
    ``from helper import f``, ``from pkg import helper``), and the ones those name in turn, whose
    file lies in the folder of ``source`` or below it, outside installed packages.

    Read from the module's namespace, not from what happened to be imported first, so the answer
    is the same in every process."""
    if source is None or module is None:
        return []
    folder = source.resolve().parent
    seen: set[str] = {module.__name__}
    out: set[Path] = set()
    stack = [module]
    while stack:
        for value in list(vars(stack.pop()).values()):
            try:
                name = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
            except Exception:  # noqa: BLE001 - an odd object's attribute access: not a module reference
                continue
            if not isinstance(name, str) or name in seen:
                continue
            seen.add(name)
            dep = sys.modules.get(name)
            raw = getattr(dep, "__file__", None)
            if not raw:
                continue
            path = Path(raw).resolve()
            if path.suffix == ".py" and path.is_relative_to(folder) and _is_project_file(path):
                out.add(path)
                stack.append(dep)
    return sorted(out - {source.resolve()})


def _is_project_file(path: Path) -> bool:
    text = str(path)
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    return not any(text.startswith(x) for x in prefixes if x) and "site-packages" not in path.parts


def model_inputs(target: str, func: Callable[..., Any], source: Path | None) -> tuple[str, dict[str, str]]:
    """(weights hash, ``{what: sha256}``) of a ``py:``/``py-chat:`` model: its source file, the project
    modules and files it imported / read at import, and its ``fingerprint()`` hook (see the module
    docstring)."""
    module_name = target.rpartition(":")[0]
    parts: dict[str, str] = {}
    if source is not None and source.is_file():
        parts[f"source:{source}"] = file_sha256(source)
    for path in project_sources(sys.modules.get(module_name), source):
        if path.is_file():
            parts[f"import:{path}"] = file_sha256(path)
    for path in _reads.get(module_name, []):
        if path.is_file() and path != source:
            parts[f"read:{path}"] = file_sha256(path)
    module = sys.modules.get(module_name)
    hook = getattr(module, "fingerprint", None)
    if callable(hook) and hook is not func:
        try:
            value = hook()
        except (SystemExit, KeyboardInterrupt) as exc:
            why = model_stop(exc, f"{module_name}.fingerprint()")
            if why is None:
                raise
            raise ModelError(why) from None
        except Exception as exc:  # noqa: BLE001 - a user hook: one line
            raise ModelError(
                f"{module_name}.fingerprint() raised {type(exc).__name__}: {exc}; fix the hook"
            ) from exc
        items = value if isinstance(value, list | tuple | set) else [value]
        base = source.parent if source is not None else Path.cwd()
        for item in items:
            if isinstance(item, Path) or (isinstance(item, str) and (base / item).exists()):
                p = (base / item) if not Path(item).is_absolute() else Path(item)
                if p.is_dir():
                    parts[f"hook:{p}"] = files_sha256(p, [f for f in sorted(p.rglob("*")) if f.is_file()])
                elif p.is_file():
                    parts[f"hook:{p}"] = file_sha256(p)
                else:
                    raise ModelError(f"{module_name}.fingerprint() names {p}, which does not exist")
            else:
                parts[f"hook:{item!s}"] = hashlib.sha256(str(item).encode("utf-8")).hexdigest()
    if len(parts) <= 1:  # the source alone: the same weights string as before
        return next(iter(parts.values()), ""), parts
    text = "\n".join(f"{k}={v}" for k, v in sorted(parts.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), parts


def _call(func: Callable[..., Any], arg: Any, uri: str) -> Any:
    try:
        return func(arg)
    except (SystemExit, KeyboardInterrupt) as exc:  # a model cannot end fairprobe (exit 0, no report)
        why = model_stop(exc, uri)
        if why is None:
            raise
        raise ModelCodeError(f"{why} (answers so far are cached)") from None
    except Exception as exc:  # the user's function failed: their bug, one line, exit 2
        where = ""
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is not None:
            where = f" at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        raise ModelCodeError(
            f"{uri} raised {type(exc).__name__}: {exc}{where}; fix the function (answers so far are cached)"
        ) from exc


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
        weights, self.fingerprint_inputs = model_inputs(target, self.func, source)
        self.fingerprint = Fingerprint(backend="py", model_id=self.uri, weights=weights)

    def predict(self, texts: list[str]) -> list[Prediction]:
        texts = list(texts)
        out = _check_sequence(_call(self.func, texts, self.uri), len(texts), self.uri, "prediction")
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
        weights, self.fingerprint_inputs = model_inputs(target, self.func, source)
        self.fingerprint = Fingerprint(backend="py-chat", model_id=self.uri, weights=weights)

    def chat(self, requests: list[ChatRequest]) -> list[ChatResponse]:
        requests = list(requests)
        if not requests:
            return []
        start = time.perf_counter()
        out = _check_sequence(
            _call(self.func, [r.message_dicts() for r in requests], self.uri),
            len(requests),
            self.uri,
            "answer",
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
