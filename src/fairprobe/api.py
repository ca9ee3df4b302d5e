"""fairprobe from Python: one function per installed technique, ``run_spec`` and ``compare``.

Every technique function is generated from the technique's spec block (a pydantic model), so its
keyword arguments are exactly the block's fields, with the same defaults, validation and error
messages as the spec file and the command line (one declaration per option)::

    import fairprobe

    run = fairprobe.hinter(model="embedded:imdb-sentiment", limit=5, out="runs/hinter")
    run.passed, run.reasons, run.metrics["error_rate"]
    for finding in run.findings(): ...

Each call runs into a run folder (resumable, like ``fairprobe run``) and returns a :class:`Run`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairprobe.errors import UsageError
from fairprobe.thresholds import DEFAULT_MAX_INVALID_RATE

if TYPE_CHECKING:
    import pandas

    from fairprobe.registry import Technique

RUN_OPTIONS = ("out", "seed", "overwrite", "fail_on", "allow_empty", "max_invalid_rate")
"""Keyword arguments every technique function takes besides its block's fields."""

_VERDICT_FIELDS = frozenset({"name", "seed", "thresholds", "allow_empty", "max_invalid_rate"})
"""Fields every block inherits from ``BlockBase``; in Python they are the run options above
(``out`` names the folder, ``fail_on`` holds the thresholds)."""


@dataclass
class Run:
    """The result of one run (or of one comparison): its verdict, why, its metrics and where it is."""

    run_dir: Path
    summary: dict[str, Any] = field(repr=False)

    @property
    def verdict(self) -> str:
        """``pass``, ``fail``, ``inconclusive`` or ``incomplete``."""
        return str(self.summary.get("verdict", "pass" if self.passed else "fail"))

    @property
    def passed(self) -> bool:
        return bool(self.summary.get("passed"))

    @property
    def reasons(self) -> list[str]:
        """Why the run did not pass, one sentence each (empty when it passed)."""
        return list(self.summary.get("reasons", []))

    @property
    def metrics(self) -> dict[str, Any]:
        return dict(self.summary.get("metrics", {}))

    @property
    def report(self) -> Path:
        return self.run_dir / "report.html"

    def findings(self) -> Iterator[dict[str, Any]]:
        """Every finding as a dict: from the Parquet shards of a shard-backed run (HInter), from
        ``run.db`` otherwise (what ``findings.jsonl`` holds: hidden control findings left out), and
        from ``findings.jsonl`` for a comparison (the paired cases)."""
        table = self._shards()
        if table is not None:
            yield from table
            return
        if (self.run_dir / "run.db").is_file():
            from fairprobe.runfolder import open_locked

            with open_locked(self.run_dir) as store:
                rows = [f for f in store.iter_findings() if not f.get("hidden")]
            yield from rows
            return
        with (self.run_dir / "findings.jsonl").open(encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    yield json.loads(line)

    def findings_table(self) -> pandas.DataFrame:
        """The findings as a pandas DataFrame (needs pandas): a shard-backed run's typed Parquet
        columns, read column by column; otherwise one row per finding dict."""
        try:
            import pandas as pd
        except ImportError:
            raise UsageError("findings_table() needs pandas: pip install pandas") from None
        table = self._shards()
        if table is not None:
            from fairprobe.shards import FINDING

            names = [n for n in table.schema.names if n != FINDING]
            return table.columns(names).to_pandas()
        return pd.DataFrame(list(self.findings()))

    def _shards(self) -> Any:
        """The run's :class:`~fairprobe.shards.FindingsTable` when its technique writes shards."""
        technique = self.summary.get("technique")
        if not technique or not (self.run_dir / "run.db").is_file():
            return None
        from fairprobe.registry import get
        from fairprobe.shards import SHARDS_DIR, FindingsTable, shard_files

        tech = get(str(technique))
        if tech.finding_schema is None:
            return None
        return FindingsTable.from_files(shard_files(self.run_dir / SHARDS_DIR), tech.finding_schema)


def _run(outcome: Any) -> Run:
    return Run(Path(outcome.run_dir), outcome.summary)


def parse_thresholds(fail_on: list[str] | str | None) -> list[Any]:
    """``fail_on`` (``"error_rate.atomic>0.1"`` or a list of them) as thresholds; a bad one is a
    :class:`~fairprobe.errors.UsageError` naming ``fail_on``."""
    from fairprobe.errors import FairprobeError
    from fairprobe.thresholds import Threshold

    items = [fail_on] if isinstance(fail_on, str) else list(fail_on or [])
    try:
        return [t if isinstance(t, Threshold) else Threshold.parse(t) for t in items]
    except FairprobeError as exc:
        raise UsageError(f"fail_on: {exc}") from None


def block_fields(technique: Technique) -> dict[str, Any]:
    """The technique's own block fields (pydantic ``FieldInfo`` by name), in declaration order."""
    return {n: f for n, f in technique.block.model_fields.items() if n not in _VERDICT_FIELDS}


def run_technique(
    name: str,
    options: dict[str, Any],
    out: str | Path,
    *,
    seed: int = 0,
    overwrite: bool = False,
    fail_on: list[str] | str | None = None,
    allow_empty: bool = False,
    max_invalid_rate: float | None = None,
) -> Run:
    """Run technique ``name`` with block ``options`` into ``out``: what every generated technique
    function calls. Unknown options are a :class:`~fairprobe.errors.UsageError` naming the known
    ones; values are validated by the block model, as in a spec file."""
    from fairprobe.registry import get
    from fairprobe.runner import run_options

    technique = get(name)
    known = block_fields(technique)
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise UsageError(
            f"fairprobe.{name}() got unknown option(s) {', '.join(unknown)}; "
            f"known: {', '.join([*known, *RUN_OPTIONS])}"
        )
    outcome = run_options(
        name,
        options,
        Path(out),
        seed=seed,
        overwrite=overwrite,
        fail_on=parse_thresholds(fail_on),
        allow_empty=allow_empty,
        max_invalid_rate=DEFAULT_MAX_INVALID_RATE if max_invalid_rate is None else max_invalid_rate,
        option_name=lambda f: f"{f}=",
    )
    return _run(outcome)


def _docstring(technique: Technique) -> str:
    """The technique's summary, its block's docstring (which names the paper's sections) and one
    line per field with its description."""
    lines = [technique.summary[:1].upper() + technique.summary[1:] + ".", ""]
    doc = inspect.getdoc(technique.block)
    if doc:
        lines += [doc, ""]
    lines.append("Options (the spec block's fields):")
    for fname, info in block_fields(technique).items():
        default = (
            "required" if info.is_required() else f"default {info.get_default(call_default_factory=True)!r}"
        )
        lines.append(f"    {fname} ({default}): {info.description or ''}".rstrip(": "))
    lines += [
        "",
        "Run options:",
        "    out: the run folder (default runs/<technique>); a finished run there is resumed",
        "    seed: seed of every random choice",
        "    overwrite: replace a run of different options in ``out``",
        "    fail_on: fail conditions METRIC OP VALUE, e.g. 'error_rate.atomic>0.1'",
        "    allow_empty: pass thresholds whose metric has no data, and runs that tested nothing",
        f"    max_invalid_rate: inconclusive at this share of INVALID answers (default {DEFAULT_MAX_INVALID_RATE})",
        "",
        "Returns a fairprobe.Run (verdict, passed, reasons, metrics, report, findings()).",
    ]
    return "\n".join(lines)


def technique_function(name: str) -> Callable[..., Run]:
    """The Python function of technique ``name``: keyword-only arguments named, defaulted and
    documented from its block model, plus :data:`RUN_OPTIONS`."""
    from pydantic_core import PydanticUndefined

    from fairprobe.registry import get

    technique = get(name)
    fields = block_fields(technique)
    params = []
    for fname, info in fields.items():
        default = (
            inspect.Parameter.empty if info.is_required() else info.get_default(call_default_factory=True)
        )
        if default is PydanticUndefined:
            default = inspect.Parameter.empty
        params.append(inspect.Parameter(fname, inspect.Parameter.KEYWORD_ONLY, default=default))
    run_params = {
        "out": Path("runs") / name,
        "seed": 0,
        "overwrite": False,
        "fail_on": None,
        "allow_empty": False,
        "max_invalid_rate": DEFAULT_MAX_INVALID_RATE,
    }
    params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v) for k, v in run_params.items()]

    def call(**kwargs: Any) -> Run:
        run = {k: kwargs.pop(k, v) for k, v in run_params.items()}
        missing = [f for f, info in fields.items() if info.is_required() and f not in kwargs]
        if missing and not (set(kwargs) - set(fields)):
            raise UsageError(f"fairprobe.{name}() needs {', '.join(f'{m}=' for m in missing)}")
        return run_technique(name, kwargs, **run)

    call.__name__ = call.__qualname__ = name
    call.__module__ = "fairprobe"
    call.__doc__ = _docstring(technique)
    call.__signature__ = inspect.Signature(params, return_annotation=Run)  # type: ignore[attr-defined]
    return call


def techniques() -> list[str]:
    """Names of the installed techniques: each is a function ``fairprobe.<name>``."""
    from fairprobe.registry import techniques as installed

    return list(installed())


def run_spec(path: str | Path, out: str | Path | None = None, overwrite: bool = False) -> list[Run]:
    """Run every block of a spec file, as ``fairprobe run SPEC``: one run folder per block under
    ``out`` (default: the spec's ``out:``, else ``fairprobe-runs``), then, for a block with several
    ``models:``, each model compared with the first. Returns every run and comparison."""
    from fairprobe.cli_common import compare_groups
    from fairprobe.runner import run_block
    from fairprobe.spec import load_spec

    blocks, settings = load_spec(Path(path))
    base = Path(out) if out is not None else Path(settings.get("out", "fairprobe-runs"))
    outcomes = [run_block(b, base / b.name, overwrite=overwrite) for b in blocks]
    return [_run(o) for o in outcomes + compare_groups(blocks, base)]


def compare(
    base: str | Path,
    new: str | Path,
    out: str | Path = "fairprobe-compare",
    fail_on: list[str] | str | None = None,
    seed: int = 0,
) -> Run:
    """Did the model of run folder ``new`` become more biased than that of ``base``? As
    ``fairprobe compare BASE NEW``: pairs the two runs' test cases, tests each slice, writes the
    comparison's reports into ``out`` and returns them as a :class:`Run` (its findings are the
    paired cases)."""
    from fairprobe.compare import compare_runs, load_run
    from fairprobe.compare.output import prepare_out, write_outputs
    from fairprobe.runfolder import now

    started = now()
    comparison = compare_runs(
        load_run(Path(base)), load_run(Path(new)), thresholds=parse_thresholds(fail_on), seed=seed
    )
    folder = Path(out)
    prepare_out(folder)
    return Run(folder, write_outputs(folder, comparison, started, now()))
