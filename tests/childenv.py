"""Environment of the child processes tests start (the real `fairprobe` executable, workers)."""

from __future__ import annotations

import os
from pathlib import Path


def pythonpath(folder: Path) -> str:
    """``folder`` first on PYTHONPATH, keeping what is already there: a checkout's ``src`` set by the
    developer stays ahead of the installed copy in child processes too."""
    rest = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join([str(folder), *([rest] if rest else [])])
