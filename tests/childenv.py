"""Environment of the child processes tests start (the real `fairprobe` executable, workers)."""

from __future__ import annotations

import os
from pathlib import Path


def pythonpath(folder: Path) -> str:
    """``folder`` first on PYTHONPATH, keeping what is already there: a checkout's ``src`` set by the
    developer stays ahead of the installed copy in child processes too."""
    rest = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join([str(folder), *([rest] if rest else [])])


def default_sigint() -> None:
    """``preexec_fn`` for a child that a test interrupts: Ctrl-C (SIGINT) back to its default.

    A shell starts background jobs (``make test &``, ``nohup``) with SIGINT ignored, children
    inherit that, and Python then installs no KeyboardInterrupt handler: the test's SIGINT would be
    lost and the run would finish as if never interrupted."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
