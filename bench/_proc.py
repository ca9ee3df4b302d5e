"""What the benchmarks share about a child process they time."""

from __future__ import annotations

import subprocess
import time


def peak_rss(proc: subprocess.Popen, interval: float = 0.02) -> int:
    """Wait for ``proc`` and return its peak resident memory in bytes (this child alone, sampled
    every ``interval`` seconds; a sample missed as the process exits is skipped)."""
    import psutil

    watch, peak = psutil.Process(proc.pid), 0
    while proc.poll() is None:
        try:
            peak = max(peak, watch.memory_info().rss)
        except psutil.Error:
            pass
        time.sleep(interval)
    return peak
