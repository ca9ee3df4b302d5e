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

from typing import Any

from fairprobe._version import __version__

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
