"""CPU threads for the in-process numeric work of a run (torch, BLAS), chosen so as not to oversubscribe.

torch and the BLAS libraries start one thread per core they see, whatever else the machine runs.
On a shared or small machine that is slower, not faster: on 2 cores at a load of 4–5 the default
audit spent 2.8–5 s per query against 0.35 s with one thread. ``threads: auto`` (the default of the
blocks that run torch) takes the cores this process may use (``os.sched_getaffinity``) less the
ones already busy (the 1-minute load average), at least one; a number pins it.

:func:`thread_limit` applies a setting for the length of a run and restores the previous one after
(the Python API runs in the caller's process): ``torch.set_num_threads`` when torch is loaded, the
BLAS pools through ``threadpoolctl``, and ``OMP_NUM_THREADS``/``MKL_NUM_THREADS``/... for libraries
loaded later and for worker processes started during the run.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field


def _check(value: Any) -> int | str:
    """``"auto"`` or a whole number >= 1 (a numeric string is accepted: command-line values)."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise ValueError(f"threads must be 'auto' or a whole number >= 1, not {value!r}")


Threads = Annotated[int | Literal["auto"], BeforeValidator(_check)]
"""A block's ``threads`` value: a positive count, or ``"auto"``."""

THREADS_DESCRIPTION = (
    "CPU threads for torch and BLAS in this run: auto = the cores free now (CPU affinity less the "
    "1-minute load average, at least 1), or a number"
)


def threads_field() -> Any:
    """The ``threads`` field of a block that runs torch (audit, certify)."""
    return Field(default="auto", description=THREADS_DESCRIPTION)


_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS has one, else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def free_cores() -> int:
    """Usable cores not already busy: affinity less the 1-minute load average (rounded up), at least 1."""
    cores = usable_cores()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # Windows
        return cores
    return max(1, min(cores, cores - math.ceil(load - 0.25)))


def resolve(threads: Threads | None) -> int:
    """The thread count a setting stands for (``None`` and ``"auto"``: :func:`free_cores`)."""
    if threads is None or threads == "auto":
        return free_cores()
    return int(threads)


@contextmanager
def thread_limit(threads: Threads | None) -> Iterator[int]:
    """Run the body with torch and BLAS limited to ``resolve(threads)`` threads; yields the count.

    Environment variables are set for libraries loaded (and processes started) inside the body;
    torch, if loaded, and the BLAS pools already loaded are set directly. All are restored after."""
    n = resolve(threads)
    saved_env = {k: os.environ.get(k) for k in _ENV}
    for key in _ENV:
        os.environ[key] = str(n)
    torch = sys.modules.get("torch")
    saved_torch = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(n)
    limiter = None
    try:
        from threadpoolctl import threadpool_limits

        limiter = threadpool_limits(limits=n)
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        pass
    try:
        yield n
    finally:
        if limiter is not None:
            limiter.restore_original_limits()
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.set_num_threads(saved_torch if saved_torch is not None else usable_cores())


def apply_torch(n: int) -> None:
    """Set torch's intra-op threads to ``n`` (for code that imports torch inside a run, after
    :func:`thread_limit` started: torch reads ``OMP_NUM_THREADS`` at import, this makes it sure)."""
    import torch

    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
