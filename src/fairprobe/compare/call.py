"""Comparisons that write their reports into folders, for Python and the command line:
``fairprobe.compare(base, new, out=...)`` (the package is callable) and the comparisons of a spec's
``models: [A, B, ...]`` or of ``--model A --model B``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from fairprobe.result import Run


def _write(folder: Path, comparison: Any, started: str, show: Callable[[str], None] | None) -> Run:
    """The comparison's reports in ``folder`` (refused when it holds files fairprobe did not write);
    ``show`` gets its one-line headline."""
    from fairprobe.compare.output import OUTPUTS, headline, prepare_out, write_outputs
    from fairprobe.report.writers import remove_stale_temps
    from fairprobe.run.folder import now
    from fairprobe.run.store import RunLock

    prepare_out(folder)
    lock = RunLock(folder).acquire()  # two comparisons into one folder: the second is refused at once
    try:
        remove_stale_temps(folder, OUTPUTS)  # a kill -9 between a temporary file and its rename
        summary = write_outputs(folder, comparison, started, now())
    finally:
        lock.release()
    if show is not None:
        show(headline(comparison))
    return Run(folder, summary)


def compare(
    base: str | Path,
    new: str | Path,
    out: str | Path = "fairprobe-compare",
    fail_on: list[str] | str | None = None,
    seed: int = 0,
) -> Run:
    """Did the model of run folder ``new`` become more biased than that of ``base``? As
    ``fairprobe compare BASE NEW``: pairs the two runs' test cases, tests each slice, writes the
    comparison's reports into ``out`` and returns them as a :class:`~fairprobe.result.Run` (its
    findings are the paired cases)."""
    return compare_shown(base, new, out, fail_on, seed, None)


def compare_shown(
    base: str | Path,
    new: str | Path,
    out: str | Path,
    fail_on: list[Any] | str | None,
    seed: int,
    show: Callable[[str], None] | None,
) -> Run:
    """:func:`compare`, handing its one-line headline to ``show`` (the command line prints it)."""
    from fairprobe.compare.core import compare_runs, load_run
    from fairprobe.judge.thresholds import parse_thresholds
    from fairprobe.run.folder import now

    thresholds = parse_thresholds(fail_on, "fail_on")
    check_seed(seed)
    started = now()
    comparison = compare_runs(load_run(Path(base)), load_run(Path(new)), thresholds=thresholds, seed=seed)
    check_metrics(comparison.metrics, thresholds)
    return _write(Path(out), comparison, started, show)


def check_seed(seed: Any) -> None:
    """A bootstrap seed is a whole number from 0 to 2**32 - 1 (numpy's range): else one line, exit 2."""
    from fairprobe.errors import UsageError

    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise UsageError(f"--seed {seed!r} must be a whole number from 0 to {2**32 - 1}")


def check_metrics(metrics: dict[str, Any], thresholds: list[Any]) -> None:
    """A ``--fail-on`` naming no metric of the comparison is a typo (exit 2, nothing written), not a
    failed comparison."""
    from fairprobe.errors import UsageError
    from fairprobe.judge.thresholds import flatten_metric_paths
    from fairprobe.run.runner import _metric_may_exist

    for threshold in thresholds:
        if not _metric_may_exist(metrics, threshold.metric):
            known = ", ".join(p for p in flatten_metric_paths(metrics) if p.startswith("delta."))
            raise UsageError(
                f"--fail-on {threshold}: the comparison has no metric {threshold.metric!r}; "
                f"e.g. {known or 'regressed'}"
            )


def compare_folders(
    first: Path, others: list[Path], into: Path, show: Callable[[str], None] | None = None
) -> list[Run]:
    """Compare each run folder of ``others`` with ``first``, into ``into/compare-<other's name>``."""
    from fairprobe.compare.core import compare_runs, load_run
    from fairprobe.run.folder import now

    base = load_run(first)
    runs = []
    for other in others:
        started = now()
        runs.append(
            _write(into / f"compare-{other.name}", compare_runs(base, load_run(other)), started, show)
        )
    return runs


def compare_groups(blocks: Iterable[Any], base: Path, show: Callable[[str], None] | None = None) -> list[Run]:
    """For blocks expanded from ``models: [A, B, ...]``: compare every model's run with the first
    model's, into ``OUT/<group>/compare-<model>`` beside the runs."""
    groups: dict[str, list[Path]] = {}
    for b in blocks:
        if b.group is not None:
            groups.setdefault(b.group, []).append(base / b.name)
    runs = []
    for group, folders in groups.items():
        runs += compare_folders(folders[0], folders[1:], base / group, show)
    return runs
