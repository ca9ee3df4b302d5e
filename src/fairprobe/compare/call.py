"""``fairprobe.compare(base, new, out=...)``: the comparison from Python (the package is callable)."""

from __future__ import annotations

from pathlib import Path

from fairprobe.result import Run


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
    from fairprobe.compare.core import compare_runs, load_run
    from fairprobe.compare.output import prepare_out, write_outputs
    from fairprobe.runfolder import now
    from fairprobe.thresholds import parse_thresholds

    started = now()
    comparison = compare_runs(
        load_run(Path(base)), load_run(Path(new)), thresholds=parse_thresholds(fail_on, "fail_on"), seed=seed
    )
    folder = Path(out)
    prepare_out(folder)
    return Run(folder, write_outputs(folder, comparison, started, now()))
