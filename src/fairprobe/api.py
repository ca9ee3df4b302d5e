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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairprobe.compare.call import compare, compare_groups
from fairprobe.errors import UsageError
from fairprobe.judge.thresholds import DEFAULT_MAX_INVALID_RATE, parse_thresholds
from fairprobe.result import Run

__all__ = ["Run", "compare", "run_spec", "run_technique", "technique_function", "techniques"]

if TYPE_CHECKING:
    from fairprobe.technique.registry import Technique

RUN_OPTIONS = (
    "out",
    "seed",
    "overwrite",
    "fail_on",
    "allow_empty",
    "max_invalid_rate",
    "default_gates",
    "accept_untested",
)
"""Keyword arguments every technique function takes besides its block's fields."""


def _run(outcome: Any) -> Run:
    return Run(Path(outcome.run_dir), outcome.summary)


def block_fields(technique: Technique) -> dict[str, Any]:
    """The technique's own block fields (pydantic ``FieldInfo`` by name), in declaration order: the
    same fields as its command-line options (:func:`fairprobe.cli.build.own_fields`); the inherited
    verdict fields are the run options above (``out`` names the folder, ``fail_on`` holds the
    thresholds)."""
    from fairprobe.cli.build import own_fields

    return own_fields(technique.block)


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
    default_gates: bool = True,
    accept_untested: bool = False,
) -> Run:
    """Run technique ``name`` with block ``options`` into ``out``: what every generated technique
    function calls. Unknown options are a :class:`~fairprobe.errors.UsageError` naming the known
    ones; values are validated by the block model, as in a spec file."""
    from fairprobe.run.runner import run_options
    from fairprobe.technique.registry import get

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
        fail_on=parse_thresholds(fail_on, "fail_on"),
        allow_empty=allow_empty,
        max_invalid_rate=DEFAULT_MAX_INVALID_RATE if max_invalid_rate is None else max_invalid_rate,
        default_gates=default_gates,
        accept_untested=accept_untested,
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
        "    fail_on: fail conditions METRIC OP VALUE, e.g. 'error_rate.atomic>0.1'; they replace the",
        "        technique's default fairness gates",
        "    allow_empty: pass thresholds whose metric has no data, and runs that tested nothing",
        f"    max_invalid_rate: inconclusive at this share of INVALID answers (default {DEFAULT_MAX_INVALID_RATE})",
        "    default_gates: False judges nothing: the verdict is 'measured' (no fairness gate)",
        "    accept_untested: pass on the attributes shown within the gate only (others lack evidence)",
        "",
        "Returns a fairprobe.Run (verdict, passed, reasons, metrics, report, findings()).",
    ]
    return "\n".join(lines)


def technique_function(name: str) -> Callable[..., Run]:
    """The Python function of technique ``name``: keyword-only arguments named, defaulted and
    documented from its block model, plus :data:`RUN_OPTIONS`."""
    from pydantic_core import PydanticUndefined

    from fairprobe.technique.registry import get

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
        "default_gates": True,
        "accept_untested": False,
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
    from fairprobe.technique.registry import techniques as installed

    return list(installed())


def run_spec(path: str | Path, out: str | Path | None = None, overwrite: bool = False) -> list[Run]:
    """Run every block of a spec file, as ``fairprobe run SPEC``: one run folder per block under
    ``out`` (default: the spec's ``out:``, else ``fairprobe-runs``), then, for a block with several
    ``models:``, each model compared with the first. Returns every run and comparison."""
    from fairprobe.run.runner import run_block
    from fairprobe.technique.spec import load_spec

    blocks, settings = load_spec(Path(path))
    base = Path(out) if out is not None else Path(settings.get("out", "fairprobe-runs"))
    outcomes = [run_block(b, base / b.name, overwrite=overwrite) for b in blocks]
    return [_run(o) for o in outcomes + compare_groups(blocks, base)]
