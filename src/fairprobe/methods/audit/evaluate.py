"""Evaluation of audit trajectories across seeds (bafa.txt App. A.5.1, Table 1).

A trajectory is a list of rounds of one replicate (seed or run): the number of black-box queries
so far ``T`` and the absolute error ``err`` of the estimate at that point. Across replicates:

- **queries to ε** (:func:`queries_to_epsilon`): average ``err`` over replicates at each ``T``
  (group by ``T``), keep ``T >= 36``, the first ``T`` whose mean is ``<= ε`` (``t_ε`` of A.5.1);
  the definition is kept as published, but note that it counts the *first* crossing: a wide early
  interval whose midpoint lands near the truth by chance counts, even if later rounds drift away;
- **error at 250** (:func:`error_at`): per replicate *that reached* ``T = 250`` queries, linear
  interpolation of ``err`` at ``T = 250``; mean ± SD across those replicates. A replicate that ended
  earlier is left out, as the authors' evaluation code does (it has no error *at* 250; carrying its
  last error forward would count a run that was cut off as if it had gone on; in the released
  BAFA-BO CivilComments file 2 of 20 runs end before 250). The SD is the population SD (``ddof=0``): that is what reproduces
  Table 1 from the released files (e.g. stratified on CivilComments 0.064 ± 0.038; the sample SD
  would give 0.039, and 0.058 instead of the paper's 0.056 for power sampling);
- **normalised AUEC over the first 1000 queries** (:func:`auec`): per replicate that reached
  ``T = 1000``, trapezoid of ``err`` over ``T`` with ``T = 0`` prepended at the first error,
  divided by 1000; mean over those replicates (``None`` when none did). The paper's protocol
  carried the last error forward to 1000; for a run that ended before 1000 that invents its
  later errors, so such runs are left out (``auec(..., carry=True)`` gives the published
  carry-forward, which the released baseline files need: their runs all reach 1000 anyway);
- **coverage**: share of rounds whose interval ``[lower, upper]`` holds the true value.

Replicates that **stopped early** by the audit's stopping rule (``stopped_by`` ``epsilon`` or
``pool`` in fairprobe's ``trajectory.csv``; :attr:`Trajectories.stopped`) have given their answer:
for queries to ε their final error stands at every later budget, so a seed that stopped is still
counted in the mean instead of dropping out of it (which left only the slow seeds in the mean).
Means over fewer than :data:`MIN_REPLICATES` replicates are reported with a note saying so.

Files: the CSV layouts of the paper's released trajectories (BAFA: ``T_size`` / ``err_active``
keyed by ``run_id``; baselines: ``t_size`` / ``abs_error_roc_auc_diff`` keyed by ``seed``) and
fairprobe's own ``trajectory.csv`` (``queries`` / ``error`` keyed by ``seed``) are read by
:func:`read_trajectories`, and so is the aggregated layout of the released C-ERM ablation plot
file (``source, strategy, T, n, mean, std``: one mean curve over ``n`` replicates, evaluated as
such, see :func:`read_trajectories`); files of no known layout give ``None`` (the CLI skips them
with a note).
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MIN_T = 36
"""Smallest budget considered for queries-to-ε (the paper's protocol: budgets >= 36)."""
STOPPED_EARLY = ("epsilon", "pool")
"""``stopped_by`` values of a run that ended by its stopping rule rather than its budget."""
MIN_REPLICATES = 5
"""Fewer replicates than this and a mean over them is flagged as too few to compare strategies
(the paper used 20 seeds; with 1–4 a single lucky or unlucky seed decides the figure)."""


@dataclass
class Trajectories:
    """Per-replicate error curves of one strategy: ``curves[rep] = (T array, err array)`` sorted by T."""

    name: str
    strategy: str
    curves: dict[str, tuple[np.ndarray, np.ndarray]]
    covered: list[bool] | None = None
    stopped: frozenset[str] = frozenset()
    """Replicates that ended by the stopping rule (their final answer stands for larger budgets)."""
    aggregated: int | None = None
    """For an aggregated file: the number of replicates behind its single mean curve ``curves["mean"]``
    (with its SD per ``T`` in :attr:`sd`); ``None`` for per-replicate files."""
    sd: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def replicates(self) -> int:
        return self.aggregated if self.aggregated is not None else len(self.curves)


# (T column, error column, replicate columns in order of preference, strategy column)
_LAYOUTS: list[tuple[str, str, tuple[str, ...], str | None]] = [
    ("T_size", "err_active", ("run_id", "seed"), "strategy"),
    ("t_size", "abs_error_roc_auc_diff", ("run_id", "seed"), "strategy"),
    ("queries", "error", ("seed",), "strategy"),
]


def _float(text: str | None) -> float | None:
    if text is None or text.strip() == "":
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


_AGGREGATED = {"strategy", "T", "n", "mean", "std"}


def _read_aggregated(path: Path, reader: csv.DictReader) -> list[Trajectories]:
    """The released C-ERM ablation plot file: per (source, strategy), mean and SD of err per ``T``."""
    points: dict[str, list[tuple[float, float, float, float]]] = defaultdict(list)
    for row in reader:
        t, mean, sd, n = (_float(row.get(c)) for c in ("T", "mean", "std", "n"))
        if t is None or mean is None or n is None:
            continue
        name = "-".join(
            x for x in ((row.get("source") or "").strip(), (row.get("strategy") or "").strip()) if x
        )
        points[name or path.stem].append((t, mean, 0.0 if sd is None else sd, n))
    out = []
    for strategy, pts in points.items():
        pts.sort()
        arr = np.array(pts, dtype=float)
        out.append(
            Trajectories(
                path.stem,
                strategy,
                {"mean": (arr[:, 0], arr[:, 1])},
                aggregated=int(arr[:, 3].max()),
                sd=(arr[:, 0], arr[:, 2]),
            )
        )
    return out


def read_trajectories(path: Path) -> list[Trajectories] | None:
    """All strategies' trajectories in one CSV file, or ``None`` when its columns match no known layout."""
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        columns = set(reader.fieldnames or [])
        if _AGGREGATED <= columns:
            return _read_aggregated(path, reader) or None
        layout = next((lay for lay in _LAYOUTS if lay[0] in columns and lay[1] in columns), None)
        if layout is None:
            return None
        t_col, e_col, rep_cols, s_col = layout
        rep_col = next((c for c in rep_cols if c in columns), None)
        points: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
        cover: dict[str, list[bool]] = defaultdict(list)
        stopped: dict[str, set[str]] = defaultdict(set)
        for row in reader:
            t, e = _float(row.get(t_col)), _float(row.get(e_col))
            if t is None or e is None:
                continue
            strategy = (row.get(s_col) or "").strip() if s_col and s_col in columns else ""
            strategy = strategy or path.stem
            rep = row.get(rep_col, "") if rep_col else ""
            points[strategy][rep].append((t, e))
            if (row.get("stopped_by") or "").strip() in STOPPED_EARLY:
                stopped[strategy].add(rep)
            if {"lower", "upper", "true_value"} <= columns:
                lo, hi, true = _float(row["lower"]), _float(row["upper"]), _float(row["true_value"])
                if lo is not None and hi is not None and true is not None:
                    cover[strategy].append(lo - 1e-12 <= true <= hi + 1e-12)
    out = []
    for strategy, reps in points.items():
        curves = {}
        for rep, pts in reps.items():
            pts.sort(key=lambda p: p[0])
            arr = np.array(pts, dtype=float)
            curves[rep] = (arr[:, 0], arr[:, 1])
        out.append(
            Trajectories(path.stem, strategy, curves, cover.get(strategy), frozenset(stopped[strategy]))
        )
    return out


def queries_to_epsilon(
    traj: Trajectories, epsilon: float, min_t: float = MIN_T, sustained: bool = False
) -> int | None:
    """First budget ``T >= min_t`` at which the mean error over replicates is ``<= ε`` (A.5.1 ``t_ε``).

    ``sustained=True`` (not in the paper): the first ``T`` from which the mean error stays ``<= ε`` at
    every later budget. The published first crossing counts a budget where the midpoints of wide
    intervals happen to average near the truth, even when the mean error rises above ε again
    (Adult case B, held-out seeds: first crossing at 116 queries, mean error 0.023 at 250).

    A replicate in :attr:`Trajectories.stopped` contributes its final error at every budget past
    its last round (it stopped: that answer stands), so the mean still counts it."""
    sums: dict[float, list[float]] = defaultdict(list)
    for ts, errs in traj.curves.values():
        for t, e in zip(ts, errs, strict=True):
            sums[float(t)].append(float(e))
    grid = sorted(sums)
    for rep in traj.stopped:
        if rep in traj.curves:
            ts, errs = traj.curves[rep]
            last_t, last_e = float(ts[-1]), float(errs[-1])
            for t in grid:
                if t > last_t:
                    sums[t].append(last_e)
    below = [(t, float(np.mean(sums[t])) <= epsilon) for t in grid if t >= min_t]
    if not sustained:
        return next((int(t) for t, ok in below if ok), None)
    first = None
    for t, ok in reversed(below):
        if not ok:
            break
        first = int(t)
    return first


def _interp(ts: np.ndarray, errs: np.ndarray, at: float) -> float:
    # Mean over duplicate T values first, so np.interp sees a strictly increasing x.
    uniq, inverse = np.unique(ts, return_inverse=True)
    means = np.bincount(inverse, weights=errs) / np.bincount(inverse)
    return float(np.interp(at, uniq, means))


def reached(traj: Trajectories, at: float) -> int:
    """How many replicates reached ``T = at`` queries (an aggregated file: its ``n`` when its curve did)."""
    count = sum(1 for ts, _ in traj.curves.values() if len(ts) and float(ts.max()) >= at)
    if traj.aggregated is not None:
        return traj.aggregated if count else 0
    return count


def error_at(traj: Trajectories, at: float = 250) -> tuple[float | None, float | None]:
    """Mean ± SD (population, ``ddof=0``) across the replicates that reached ``T = at`` of the error
    interpolated there; ``(None, None)`` when none did. An aggregated file gives its mean curve and
    SD curve interpolated at ``at``."""
    if traj.aggregated is not None:
        if not reached(traj, at):
            return None, None
        (ts, means), sd = traj.curves["mean"], traj.sd
        assert sd is not None
        return _interp(ts, means, at), _interp(sd[0], sd[1], at)
    values = np.array([_interp(ts, errs, at) for ts, errs in traj.curves.values() if float(ts.max()) >= at])
    if values.size == 0:
        return None, None
    return float(values.mean()), float(values.std(ddof=0))


def auec(traj: Trajectories, t_max: float = 1000, carry: bool = False) -> float | None:
    """Normalised area under the error curve over the first ``t_max`` queries, mean over the
    replicates that reached ``t_max`` (``carry=True``: over all, the last error carried forward, as
    published); ``None`` when no replicate counts."""
    areas = []
    for ts, errs in traj.curves.values():
        if not carry and float(ts.max()) < t_max:
            continue
        uniq, inverse = np.unique(ts, return_inverse=True)
        means = np.bincount(inverse, weights=errs) / np.bincount(inverse)
        x = np.concatenate([[0.0], uniq])
        y = np.concatenate([[means[0]], means])
        keep = x <= t_max
        x, y = x[keep], y[keep]
        if x[-1] < t_max:
            x = np.append(x, t_max)
            y = np.append(y, y[-1])
        areas.append(float(np.trapezoid(y, x)) / t_max)
    return float(np.mean(areas)) if areas else None


def summarise(traj: Trajectories) -> dict[str, Any]:
    """The Table 1 figures of one strategy: queries to ε = 0.02 / 0.05 (first crossing, and sustained:
    see :func:`queries_to_epsilon`), error at 250, AUEC@1000,
    coverage, how many replicates each figure rests on, and a ``note`` when they are too few."""
    mean, sd = error_at(traj, 250)
    out: dict[str, Any] = {
        "replicates": traj.replicates,
        "stopped_early": len(traj.stopped),
        "queries_to_0.02": queries_to_epsilon(traj, 0.02),
        "queries_to_0.05": queries_to_epsilon(traj, 0.05),
        "queries_to_0.02_sustained": queries_to_epsilon(traj, 0.02, sustained=True),
        "queries_to_0.05_sustained": queries_to_epsilon(traj, 0.05, sustained=True),
        "error_at_250": mean,
        "error_at_250_sd": sd,
        "error_at_250_replicates": reached(traj, 250),
        "auec_1000": auec(traj),
        "auec_1000_replicates": reached(traj, 1000),
    }
    if traj.covered:
        out["coverage"] = sum(traj.covered) / len(traj.covered)
    notes = []
    if traj.replicates < MIN_REPLICATES:
        notes.append(
            f"only {traj.replicates} replicate(s): too few for a mean over seeds "
            f"(use at least {MIN_REPLICATES}; the paper used 20)"
        )
    for key, at in (("error_at_250", 250), ("auec_1000", 1000)):
        n = out[f"{key}_replicates"]
        if n < traj.replicates:
            notes.append(
                f"{key}: {traj.replicates - n} of {traj.replicates} replicate(s) ended before "
                f"{at} queries and are left out"
            )
    if notes:
        out["note"] = "; ".join(notes)
    return out


def format_line(name: str, s: dict[str, Any]) -> str:
    """``<name> q@0.02=N q@0.05=N err@250=M±S auec@1000=A`` (``N`` is ``-`` when never reached).

    Exactly these fields, so scripts can parse the line; coverage (when the file has intervals and
    the true value) is in ``summary.json`` only."""

    def q(v: int | None) -> str:
        return "-" if v is None else str(v)

    err = "-" if s["error_at_250"] is None else f"{s['error_at_250']:.3f}±{s['error_at_250_sd']:.3f}"
    area = "-" if s["auec_1000"] is None else f"{s['auec_1000']:.3f}"
    return (
        f"{name} q@0.02={q(s['queries_to_0.02'])} q@0.05={q(s['queries_to_0.05'])} "
        f"err@250={err} auec@1000={area}"
    )


def trajectory_files(paths: list[Path]) -> list[Path]:
    """CSV files among ``paths`` (folders are searched recursively, sorted)."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(sorted(p.rglob("*.csv")))
        elif p.is_file():
            files.append(p)
    return files


def evaluate_paths(paths: list[Path]) -> tuple[dict[str, dict[str, Any]], list[str], list[str]]:
    """Evaluate every trajectory file: ``(metrics by name, output lines, notes on skipped files)``.

    The name is ``<file stem>`` when the file holds one strategy, else ``<file stem>.<strategy>``.
    """
    metrics: dict[str, dict[str, Any]] = {}
    lines: list[str] = []
    notes: list[str] = []
    for path in trajectory_files(paths):
        try:
            found = read_trajectories(path)
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            notes.append(f"skipped {path}: cannot read it ({exc})")
            continue
        if not found:
            notes.append(
                f"skipped {path}: no known trajectory layout (need T_size/err_active, "
                "t_size/abs_error_roc_auc_diff or queries/error columns)"
            )
            continue
        for traj in found:
            name = traj.name if len(found) == 1 else f"{traj.name}.{traj.strategy}"
            s = summarise(traj)
            metrics[name] = s
            lines.append(format_line(name, s))
            if "note" in s:
                notes.append(f"{name}: {s['note']}")
    return metrics, lines, notes
