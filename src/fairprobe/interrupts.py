"""Whose Ctrl-C is it? The user's, or a model's code raising ``KeyboardInterrupt`` (or ``SystemExit``)?

The command line installs :func:`install` first thing: a SIGINT handler that records the user's
Ctrl-C and then raises ``KeyboardInterrupt`` as Python's own handler does. Model code that raises
``KeyboardInterrupt`` itself (or calls ``sys.exit``) is then told apart by :func:`user_pressed`: it is
an error of that model (exit 2, the run ``incomplete``, its reports written), never a way for a
model to end fairprobe with exit 0 and no report.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

_pressed = threading.Event()
_installed = threading.Event()


def _handler(signum: int, frame: FrameType | None) -> None:
    from fairprobe.models.stop import request_stop

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
