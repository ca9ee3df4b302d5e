"""Progress for long runs: a rich bar on a terminal, plain log lines otherwise.

Progress moves per item: techniques call :meth:`ProgressReporter.advance` as each model answer
arrives (from any thread; a fraction of an item is fine, e.g. one answer of an original's forty
mutants), not once per batch. The rate and ETA are smoothed over the last ``window`` seconds, so
they follow the current speed without swinging with every batch. HTTP retries are counted on the
line (``3 retries``) instead of each printing its own line.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from fairprobe.models import meter
from fairprobe.models.scheduler import retry_count

FIRST_LINE_S = 5.0
"""Off a terminal, the first progress line comes this many seconds after the start at the latest."""


class _StatusColumn(ProgressColumn):
    """Done/total, smoothed rate, ETA and retries, read from the reporter (not rich's own speed)."""

    def __init__(self, reporter: ProgressReporter):
        super().__init__()
        self.reporter = reporter

    def render(self, task):  # type: ignore[no-untyped-def]
        return Text(self.reporter.status(with_label=False))


class ProgressReporter:
    """``with ProgressReporter("executing", total) as p: p.advance(n)``.

    On a TTY it draws a bar (count, rate, ETA, retries); otherwise it writes a line at most every
    ``interval`` seconds and one at the end, e.g. ``executing: 120/400 (30%) 41.2/s eta 7s``.
    ``advance`` may be called from several threads and with fractions of an item. Off a TTY a
    heartbeat line (``..., 45s elapsed``) also comes every ``heartbeat`` seconds while nothing
    advances (a slow model still on its first answers), so a log never goes silent; the first comes
    :data:`FIRST_LINE_S` seconds after the start. While chat models answer, the line also counts
    their answers and tokens/s (``, 12 LLM answers, 143 tok/s``): a unit of progress (an original
    and its mutants) can be tens of requests.
    """

    def __init__(
        self,
        label: str,
        total: int,
        *,
        stream: TextIO | None = None,
        interval: float = 5.0,
        window: float = 30.0,
        heartbeat: float = 15.0,
    ):
        self.label = label
        self.total = max(0, total)
        self.done: float = 0
        self.stream = stream or sys.stderr
        self.interval = interval
        self.window = window
        self._tty = self.stream.isatty()
        self._bar: Progress | None = None
        self._start = time.monotonic()
        self._last = 0.0
        self._lock = threading.RLock()
        self._samples: deque[tuple[float, float]] = deque()
        self._retries0 = retry_count()
        self.heartbeat = heartbeat
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self._said = self._start

    def __enter__(self) -> ProgressReporter:
        self._start = time.monotonic()
        self._samples.append((self._start, 0.0))
        self._retries0 = retry_count()
        self._meter0 = meter.snapshot()
        if self._tty:
            self._bar = Progress(
                TextColumn("{task.description}", markup=False),  # run names are user text
                BarColumn(),
                TaskProgressColumn(),
                _StatusColumn(self),
                TimeElapsedColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total)
        elif self.heartbeat > 0:
            # the first line within FIRST_LINE_S of the start, even while the first answers come
            self._said = self._start - max(0.0, self.heartbeat - FIRST_LINE_S)
            self._beat = threading.Thread(target=self._beat_loop, name="fairprobe-progress", daemon=True)
            self._beat.start()
        return self

    def _beat_loop(self) -> None:
        while not self._stop.wait(min(self.heartbeat, self.interval, 0.25)):
            with self._lock:
                now = time.monotonic()
                if now - self._said >= self.heartbeat:
                    self._said = now
                    print(
                        f"{self.status()}, {_duration(now - self._start)} elapsed",
                        file=self.stream,
                        flush=True,
                    )

    def advance(self, n: float = 1) -> None:
        with self._lock:
            self.done += n
            now = time.monotonic()
            if not self._samples or now - self._samples[-1][0] >= 0.2:  # bounded memory at any rate
                self._samples.append((now, self.done))
            while len(self._samples) > 2 and now - self._samples[1][0] > self.window:
                self._samples.popleft()
            if self._bar is not None:
                self._bar.update(self._task, completed=self.done)
                return
            if now - self._last >= self.interval:
                self._last = now
                self._log()

    @property
    def retries(self) -> int:
        """Requests retried since this reporter started (any backend)."""
        return retry_count() - self._retries0

    def rate(self) -> float:
        """Items per second over the last ``window`` seconds (the whole run while it is shorter)."""
        with self._lock:
            now = time.monotonic()
            t0, d0 = self._samples[0] if self._samples else (self._start, 0.0)
            span = now - t0
            return (self.done - d0) / span if span > 1e-9 else 0.0

    def status(self, *, with_label: bool = True) -> str:
        """``120/400 (30%) 41.2/s eta 7s, 3 retries`` (the label first when ``with_label``)."""
        speed = self.rate()
        done = int(self.done + 1e-9)
        pct = f" ({100 * done / self.total:.0f}%)" if self.total and with_label else ""
        left = max(self.total - self.done, 0)
        settled = time.monotonic() - self._start >= 2.0  # no ETA from the first answer or two
        eta = f" eta {_duration(left / speed)}" if speed > 0 and self.total and left > 0 and settled else ""
        retries = self.retries
        extra = f", {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
        head = f"{self.label}: " if with_label else ""
        return f"{head}{done}/{self.total}{pct} {speed:.1f}/s{eta}{self._llm()}{extra}"

    def _llm(self) -> str:
        """``, 12 LLM answers, 143 tok/s`` while chat models answer in this reporter's span (the
        requests and tokens a run's unit of progress hides: an original is tens of requests)."""
        now = meter.snapshot()
        answers = int(now.get("requests", 0) - self._meter0.get("requests", 0))
        if answers <= 0:
            return ""
        tokens = sum(now.get(k, 0) - self._meter0.get(k, 0) for k in ("prompt_tokens", "completion_tokens"))
        span = time.monotonic() - self._start
        rate = f", {tokens / span:.0f} tok/s" if span > 1e-9 else ""
        return f", {answers} LLM answer{'s' if answers != 1 else ''}{rate}"

    def _log(self) -> None:
        self._said = time.monotonic()
        print(self.status(), file=self.stream, flush=True)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        if self._bar is not None:
            self._bar.stop()
        else:
            self._log()


class Credit:
    """Moves ``bar`` by ``items`` in all, a share per model answer (``answered``) and the rest when
    the work is finished (``settle``): per-answer progress for work counted in larger units (an
    original and its mutants, a test and its follow-ups), never counted twice. Thread-safe."""

    def __init__(self, bar: ProgressReporter, items: float, answers: int):
        self.bar, self.items = bar, items
        self.share = items / answers if answers else 0.0
        self.given = 0.0
        self.closed = False
        self._lock = threading.Lock()

    def answered(self, n: int = 1) -> None:
        with self._lock:
            if self.closed:
                return
            step = min(n * self.share, self.items - self.given)
            self.given += step
        if step > 0:
            self.bar.advance(step)

    def settle(self) -> None:
        with self._lock:
            self.closed = True
            rest = self.items - self.given
            self.given = self.items
        if rest > 0:
            self.bar.advance(rest)


def _duration(seconds: float) -> str:
    """``7s``, ``3m05s``, ``2h04m``: an ETA a person reads at a glance."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
