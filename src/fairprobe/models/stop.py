"""One process-wide "stop now" flag for in-process models (Ctrl-C within seconds, DESIGN.md §4).

A run's driver gets Ctrl-C as ``KeyboardInterrupt`` in the main thread, but an in-process model
(llama.cpp, a transformers model) answers on a background thread that Python cannot interrupt:
before this flag, that thread finished its whole batch (minutes for SmolLM2) before the process
could exit. The runner calls :func:`request_stop` the moment SIGINT arrives; a model checks
:func:`stop_requested` between requests and between generated tokens and raises
:class:`~fairprobe.errors.RunInterrupted`, so nothing half-generated is returned or cached.
:func:`clear_stop` re-arms the flag when the next run starts (the Python API runs in one process).

The flag is set by the SIGINT handler itself (:func:`stop_on_sigint`, installed by the command line
and by every run), not where ``KeyboardInterrupt`` is caught: when a model generates on the main
thread, the handler can run inside llama.cpp's per-token callback, where ctypes swallows the
``KeyboardInterrupt``; the flag still ends the answer and :class:`RunInterrupted` carries the stop on.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fairprobe.errors import RunInterrupted

_stop = threading.Event()


def request_stop() -> None:
    """Ask every in-process model to stop at its next token or request."""
    _stop.set()


def stop_requested() -> bool:
    return _stop.is_set()


def clear_stop() -> None:
    _stop.clear()


def raise_if_stopped() -> None:
    """Raise :class:`RunInterrupted` when a stop was requested (called by models between steps)."""
    if _stop.is_set():
        raise RunInterrupted("stopped by Ctrl-C")


def _on_sigint(signum: int, frame: Any) -> None:
    request_stop()
    raise KeyboardInterrupt


@contextmanager
def stop_on_sigint() -> Iterator[None]:
    """For the length of a run: Ctrl-C sets the stop flag, then raises ``KeyboardInterrupt`` as usual.

    Only in the main thread and only where SIGINT has Python's default handler (a background job
    started with SIGINT ignored keeps ignoring it; a caller's own handler is left alone)."""
    clear_stop()
    installed = False
    if threading.current_thread() is threading.main_thread():
        try:
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                signal.signal(signal.SIGINT, _on_sigint)
                installed = True
        except ValueError:  # pragma: no cover - not the main interpreter
            pass
    try:
        yield
    finally:
        if installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)
