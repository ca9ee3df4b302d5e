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

import importlib  # noqa: E402 - after the start-up Ctrl-C handler
import importlib.abc  # noqa: E402
import importlib.util  # noqa: E402
import warnings  # noqa: E402
from typing import Any  # noqa: E402

from fairprobe._version import __version__  # noqa: E402

_MOVED = {
    "spec": "technique.spec",
    "registry": "technique.registry",
    "runner": "run.runner",
    "runfolder": "run.folder",
    "store": "run.store",
    "caching": "run.caching",
    "shards": "run.shards",
    "streaming": "run.streaming",
    "progress": "run.progress",
    "threads": "run.threads",
    "export": "cli.export",
    "cli_common": "cli.common",
    "cli_build": "cli.build",
    "cli_docs": "cli.docs",
    "verdict": "judge.verdict",
    "gates": "judge.gates",
    "thresholds": "judge.thresholds",
    "refusals": "judge.refusals",
    "headline": "judge.headline",
    "datasets": "data.datasets",
    "readers": "data.readers",
    "strict_yaml": "data.strict_yaml",
}
"""Modules that moved out of the package root in 0.x (old name -> new name under ``fairprobe.``).
The old paths (``fairprobe.spec.BlockBase``, ``fairprobe.runner.RunContext``, ...) still import, with a
``DeprecationWarning``, for one release."""


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``fairprobe.<old>`` as the module it moved to (the same module object, so patches and
    ``isinstance`` checks see one module), warning once per import."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        prefix, _, name = fullname.rpartition(".")
        if prefix != "fairprobe" or name not in _MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> Any:
        new = "fairprobe." + _MOVED[spec.name.rpartition(".")[2]]
        warnings.warn(
            f"{spec.name} moved to {new}; import it from there (the old path goes in the next release)",
            DeprecationWarning,
            stacklevel=3,
        )
        return importlib.import_module(new)

    def exec_module(self, module: Any) -> None:
        """The module was imported under its new name already."""


if not any(isinstance(finder, _MovedModules) for finder in _sys.meta_path):
    _sys.meta_path.append(_MovedModules())

_API = ("Run", "run_spec", "techniques")


def _is_submodule(name: str) -> bool:
    from pathlib import Path

    here = Path(__file__).parent
    return name in _MOVED or (here / f"{name}.py").is_file() or (here / name / "__init__.py").is_file()


def __getattr__(name: str) -> Any:
    """``fairprobe.Run``, ``fairprobe.run_spec`` and one function per installed technique, built on
    first use from :mod:`fairprobe.api` (``fairprobe.compare`` is the comparison package, callable)."""
    if name.startswith("_") or name == "api" or (name != "compare" and _is_submodule(name)):
        # a submodule not imported yet (``from fairprobe import interrupts``): the import system
        # loads it when this says "no such attribute"; the technique registry is never asked
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
