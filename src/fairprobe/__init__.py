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

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from typing import Any

from fairprobe._version import __version__

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


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModules())

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
