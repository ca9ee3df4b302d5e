"""The command line: the ``fairprobe`` Typer app (:mod:`.commands`), the options built from each technique's
block (:mod:`.build`), what every command shares (:mod:`.common`), ``fairprobe init``'s commented
template (:mod:`.docs`) and ``fairprobe export`` (:mod:`.export`).

``fairprobe.cli:main`` is the console script; ``app`` and ``main`` are loaded on first use, so that
importing a sub-module (``fairprobe.cli.common``) does not build the whole app.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name in ("app", "main"):
        from fairprobe.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module 'fairprobe.cli' has no attribute {name!r}")
