"""Fairness regression between two models: ``fairprobe compare BASE NEW`` (see :mod:`.core`).

The package is also callable: ``fairprobe.compare(base, new, out=...)`` is
:func:`fairprobe.compare.call.compare` (a package and a function cannot share the name ``fairprobe.compare``
otherwise: importing the package would replace the function)."""

import inspect
import sys
import types
from typing import Any

from fairprobe.compare.call import compare as _compare
from fairprobe.compare.core import Comparison, compare_runs, load_run
from fairprobe.compare.pairing import Outcome, Pairing

__all__ = ["Comparison", "Outcome", "Pairing", "compare_runs", "load_run"]


class _CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Compare two run folders: see :func:`fairprobe.compare.call.compare`."""
        return _compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
__signature__ = inspect.signature(_compare)  # what help() and IDEs show for fairprobe.compare(...)
