"""The technique registry: how a technique plugs in without touching the core.

A technique package exposes a :class:`Technique` object and declares it as an entry point in the
``fairprobe.techniques`` group (see pyproject.toml). The CLI's ``run`` command and spec validation
look techniques up here; third-party packages can add their own the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from fairprobe.errors import SpecError

if TYPE_CHECKING:
    import typer

    from fairprobe.compare.pairing import Pairing
    from fairprobe.report.sections import Analysis
    from fairprobe.technique.block import BlockBase
    from fairprobe.technique.context import RunContext


@dataclass
class Technique:
    """One technique: its spec block and the pipeline stages the runner calls.

    - ``execute(block, ctx)`` generates test cases, calls models through ``ctx`` (cached) and judges,
      writing findings with ``ctx.add_findings`` in batches; it must skip what ``ctx.done_ids()``
      holds, so a killed run resumes.
    - ``analyse(block, findings, seed)`` is a pure function of the stored findings: metrics with CIs,
      report sections and groups. ``fairprobe report`` re-runs it from ``run.db``.
    - ``model_uri(block)`` names the model under test for the summary.
    - ``validate(block)`` optionally checks the block's inputs (data, lexicons, attributes) without
      calling a model; the runner calls it before the run folder is touched, so an input error
      removes nothing.
    - ``cli`` optionally adds a sub-command (``fairprobe NAME ...``).
    """

    name: str
    summary: str
    block: type[BlockBase]
    execute: Callable[[Any, RunContext], None]
    analyse: Callable[[Any, list[dict[str, Any]], int], Analysis]
    model_uri: Callable[[Any], str]
    example: str = ""
    """Commented YAML for `fairprobe init`."""
    cli: Callable[[typer.Typer], None] | None = None
    finding_schema: Any = None
    """A ``pyarrow.Schema`` when findings are written as Parquet shards (:mod:`fairprobe.run.shards`);
    ``analyse`` then receives a :class:`~fairprobe.run.shards.FindingsTable` instead of a list."""
    extra: dict[str, Any] = field(default_factory=dict)
    validate: Callable[[Any], None] | None = None
    pairing: Pairing | None = None
    """How two runs' findings pair up for ``fairprobe compare`` (:mod:`fairprobe.compare`)."""
    default_gates: tuple[str, ...] = ()
    """Fail conditions (``METRIC OP VALUE``) applied when a block sets no ``thresholds:`` and no
    ``--fail-on`` is given (:mod:`fairprobe.judge.gates` says why each was chosen)."""
    evidence_gates: tuple[str, ...] = ()
    """Pass conditions that go with the default gates (``upper(error_rate.by_attribute.*)<=0.05``):
    the run passes only when each holds for every attribute with data (:mod:`fairprobe.judge.evidence`);
    else, when nothing fails, it is inconclusive."""
    evidence_unit: str = "texts"
    """What the gated intervals are over, in the reasons and the count a pass would need: texts,
    sentences, queries, items."""
    evidence_interval: str = "wilson"
    """The interval the technique puts beside a gated share (``wilson`` or ``clopper-pearson``), so
    the count a pass would need is searched with the same one."""


_LOAD_ERRORS: dict[str, str] = {}


@cache
def techniques() -> dict[str, Technique]:
    """All installed techniques, by block name.

    A technique package that fails to import does not take the whole CLI down: it is left out, a
    warning line goes to stderr, and :func:`load_errors` says why (tests assert it is empty).
    """
    import sys

    found: dict[str, Technique] = {}
    for ep in entry_points(group="fairprobe.techniques"):
        try:
            tech = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not break every command
            _LOAD_ERRORS[ep.name] = f"{type(exc).__name__}: {exc}"
            print(
                f"fairprobe: warning: technique '{ep.name}' failed to load ({_LOAD_ERRORS[ep.name]})",
                file=sys.stderr,
            )
            continue
        if not isinstance(tech, Technique):
            raise TypeError(f"entry point {ep.value} is not a fairprobe Technique")
        found[tech.name] = tech
    return dict(sorted(found.items()))


def load_errors() -> dict[str, str]:
    """Techniques that failed to load, with the reason."""
    techniques()
    return dict(_LOAD_ERRORS)


def get(name: str) -> Technique:
    try:
        return techniques()[name]
    except KeyError:
        raise SpecError(f"unknown technique '{name}'; installed: {', '.join(techniques())}") from None


def block_models() -> dict[str, type[BlockBase]]:
    return {name: tech.block for name, tech in techniques().items()}
