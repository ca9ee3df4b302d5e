"""Progress for long runs: a rich bar with rate and ETA on a terminal, plain log lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class _RateColumn(ProgressColumn):
    def render(self, task):  # type: ignore[no-untyped-def]
        from rich.text import Text

        return Text(f"{task.speed or 0.0:.1f}/s")


class ProgressReporter:
    """``with ProgressReporter("executing", total) as p: p.advance(n)``.

    On a TTY it draws a bar (count, rate, ETA); otherwise it writes a line at most every
    ``interval`` seconds and one at the end, e.g. ``executing: 120/400 (30%) 41.2/s eta 7s``.
    """

    def __init__(self, label: str, total: int, *, stream: TextIO | None = None, interval: float = 5.0):
        self.label = label
        self.total = max(0, total)
        self.done = 0
        self.stream = stream or sys.stderr
        self.interval = interval
        self._tty = self.stream.isatty()
        self._bar: Progress | None = None
        self._start = time.monotonic()
        self._last = 0.0

    def __enter__(self) -> ProgressReporter:
        self._start = time.monotonic()
        if self._tty:
            self._bar = Progress(
                TextColumn("{task.description}", markup=False),  # run names are user text
                BarColumn(),
                MofNCompleteColumn(),
                TaskProgressColumn(),
                _RateColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
            return
        now = time.monotonic()
        if now - self._last >= self.interval:
            self._last = now
            self._log()

    def _log(self) -> None:
        elapsed = max(time.monotonic() - self._start, 1e-9)
        speed = self.done / elapsed
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        eta = f" eta {max(self.total - self.done, 0) / speed:.0f}s" if speed > 0 and self.total else ""
        print(f"{self.label}: {self.done}/{self.total}{pct} {speed:.1f}/s{eta}", file=self.stream, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
        else:
            self._log()
