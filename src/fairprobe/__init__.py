"""fairprobe: test language models for unfair, biased behaviour.

Five published techniques (HInter, Meta-Fair, CAFFE, fairness certificates, BAFA) share one
spec format, one run store and one report format. See ``shared/DESIGN.md`` and the README.

From Python (:mod:`fairprobe.api`, loaded on first use so ``import fairprobe`` stays cheap)::

    run = fairprobe.hinter(model="embedded:imdb-sentiment", limit=5, out="runs/hinter")
    runs = fairprobe.run_spec("fairprobe.yaml")
    diff = fairprobe.compare("runs/base", "runs/new", out="runs/compare")

``fairprobe.<technique>`` exists for every installed technique (``fairprobe.api.techniques()``).
"""

from __future__ import annotations

import _signal  # the C module: `signal` imports enum, which takes ~30 ms
import os as _os
import sys as _sys


def _interrupted_at_start(signum: int, frame: object) -> None:
    """Ctrl-C while the command line is still being imported (about the first second on a loaded
    machine): one line and exit 130, never a ``KeyboardInterrupt`` traceback. Nothing is written
    before :func:`fairprobe.cli.main` replaces this handler."""
    _sys.stderr.write("interrupted: stopped while starting; nothing was written\n")
    _sys.stderr.flush()
    _os._exit(130)


# First thing, before the imports below: only for the `fairprobe` command (never a library import),
# and a SIGINT that the shell ignores (a background job) stays ignored.
if _os.path.basename(_sys.argv[0] if _sys.argv else "").startswith("fairprobe") and (
    _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler
):
    _signal.signal(_signal.SIGINT, _interrupted_at_start)

from typing import Any  # noqa: E402 - after the start-up Ctrl-C handler

from fairprobe._version import __version__  # noqa: E402

_API = ("Run", "run_spec", "techniques")


def __getattr__(name: str) -> Any:
    """``fairprobe.Run``, ``fairprobe.run_spec`` and one function per installed technique, built on
    first use from :mod:`fairprobe.api` (``fairprobe.compare`` is the comparison package, callable)."""
    if name.startswith("_") or name == "api":
        raise AttributeError(f"module 'fairprobe' has no attribute {name!r}")
    from fairprobe.api import Run, run_spec, technique_function, techniques

    if name == "compare":  # loading the API imported the (callable) package, now an attribute
        return globals()["compare"]

    if name in _API:
        return {"Run": Run, "run_spec": run_spec, "techniques": techniques}[name]
    if name in techniques():
        function = technique_function(name)
        globals()[name] = function
        return function
    raise AttributeError(f"module 'fairprobe' has no attribute {name!r}")


def __dir__() -> list[str]:
    from fairprobe.api import techniques

    return sorted({*globals(), *_API, "compare", *techniques()})


__all__ = ["Run", "__version__", "compare", "run_spec"]
