"""SIGINT, in one place: whose Ctrl-C is it, and what it stops.

Every SIGINT handler fairprobe installs is :func:`_handler` here. It raises the in-process models'
stop flag (:mod:`fairprobe.models.stop`, only a flag: a model stops at its next token), records the
press and raises ``KeyboardInterrupt`` as Python's own handler does. It is installed two ways:

- :func:`install`, first thing in the command line: from then on a Ctrl-C is recorded as the
  user's. Model code that raises ``KeyboardInterrupt`` itself (or calls ``sys.exit``) is then told
  apart by :func:`user_pressed`: it is an error of that model (exit 2, the run ``incomplete``, its
  reports written), never a way for a model to end fairprobe with exit 0 and no report.
- :func:`stop_on_sigint`, around every command and every run (the Python API too): re-arms the stop
  flag, and where SIGINT still has Python's default handler installs this one for the length of the
  run, then puts the default back.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_pressed = threading.Event()
_installed = threading.Event()


def _handler(signum: int, frame: FrameType | None) -> None:
    from fairprobe.models.stop import request_stop  # here, not at the top: `fairprobe` starts fast

    if _installed.is_set():  # the command line's: "since install()"
        _pressed.set()
    request_stop()  # in-process models stop at their next token (fairprobe.models.stop)
    raise KeyboardInterrupt


def install() -> None:
    """Record the user's Ctrl-C (main thread only; a no-op elsewhere). A SIGINT that the shell
    ignores (a background job) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        return
    signal.signal(signal.SIGINT, _handler)
    _installed.set()


@contextmanager
def stop_on_sigint() -> Iterator[None]:
    """For the length of a run: Ctrl-C sets the stop flag, then raises ``KeyboardInterrupt`` as usual.

    The flag is cleared first (a new run starts un-stopped). The handler is installed only in the
    main thread and only where SIGINT has Python's default handler: under :func:`install` it is
    already there; a background job started with SIGINT ignored keeps ignoring it; a caller's own
    handler is left alone."""
    from fairprobe.models.stop import clear_stop

    clear_stop()
    installed = False
    if threading.current_thread() is threading.main_thread():
        try:
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                signal.signal(signal.SIGINT, _handler)
                installed = True
        except ValueError:  # pragma: no cover - not the main interpreter
            pass
    try:
        yield
    finally:
        if installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def user_pressed() -> bool:
    """True once the user pressed Ctrl-C (or the process got SIGINT) since :func:`install`."""
    return _pressed.is_set()


def model_stop(exc: BaseException, who: str) -> str | None:
    """The error text when ``exc`` is a model's own ``SystemExit``/``KeyboardInterrupt``, else ``None``
    (the user's Ctrl-C, or any other exception, goes its own way)."""
    if isinstance(exc, SystemExit):
        return (
            f"{who} called sys.exit({exc.code!r}); a model cannot end fairprobe: return the answers (or "
            "raise an exception) instead"
        )
    # Without the handler (fairprobe used from Python) every KeyboardInterrupt is taken for the user's.
    if isinstance(exc, KeyboardInterrupt) and _installed.is_set() and not user_pressed():
        return f"{who} raised KeyboardInterrupt itself (no Ctrl-C was pressed); fix the model code"
    return None
