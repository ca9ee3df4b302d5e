"""One process-wide "stop now" flag for in-process models (Ctrl-C within seconds, DESIGN.md §4).

A run's driver gets Ctrl-C as ``KeyboardInterrupt`` in the main thread, but an in-process model
(llama.cpp, a transformers model) answers on a background thread that Python cannot interrupt:
before this flag, that thread finished its whole batch (minutes for SmolLM2) before the process
could exit. The runner calls :func:`request_stop` the moment SIGINT arrives; a model checks
:func:`stop_requested` between requests and between generated tokens and raises
:class:`~fairprobe.errors.RunInterrupted`, so nothing half-generated is returned or cached.
:func:`clear_stop` re-arms the flag when the next run starts (the Python API runs in one process).

This module is only the flag. SIGINT itself is handled in one place, :mod:`fairprobe.interrupts`:
its handler raises the flag first, then ``KeyboardInterrupt`` (when a model generates on the main
thread, the handler can run inside llama.cpp's per-token callback, where ctypes swallows the
``KeyboardInterrupt``; the flag still ends the answer and :class:`RunInterrupted` carries the stop on).
"""

from __future__ import annotations

import threading

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
