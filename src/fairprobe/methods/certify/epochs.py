"""Per-epoch progress lines for ``fairprobe certify train`` (pre-training and classifier training).

Training takes minutes to tens of minutes on a CPU; a silent command looks hung. Each phase writes
a line after its first epoch, then at most every ``interval`` seconds, and after its last epoch:
``pre-training (sensitive words): epoch 12/150, loss 0.0213, 0.41 s/epoch, eta 57s``. The ETA is
the mean epoch time so far times the epochs left (an upper bound when early stopping ends sooner).
"""

from __future__ import annotations

import time
from collections.abc import Callable


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m {sec:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


class EpochLog:
    """``log = EpochLog("training", total, print); log.epoch(i, "loss 0.3")`` after epoch ``i`` (1-based)."""

    def __init__(self, phase: str, total: int, log: Callable[[str], None] | None, interval: float = 5.0):
        self.phase = phase
        self.total = total
        self.log = log
        self.interval = interval
        self.start = time.monotonic()
        self._last: float | None = None

    def epoch(self, done: int, values: str) -> None:
        if self.log is None:
            return
        now = time.monotonic()
        final = done >= self.total
        if not (self._last is None or final or now - self._last >= self.interval):
            return
        self._last = now
        per = (now - self.start) / max(done, 1)
        left = max(self.total - done, 0) * per
        tail = "done" if final else f"eta {_duration(left)}"
        self.log(f"{self.phase}: epoch {done}/{self.total}, {values}, {per:.2f} s/epoch, {tail}")
