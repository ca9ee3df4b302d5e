"""How a technique's findings pair up across two runs: what a technique declares to be compared.

A technique that supports ``fairprobe compare`` sets :attr:`fairprobe.technique.registry.Technique.pairing`
to a :class:`Pairing`: which findings are test cases, the key that names the same test case in two
runs, the unit its intervals resample, the slices it is reported by, and the outcomes compared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Finding = dict[str, Any]


@dataclass
class Outcome:
    """One compared outcome of a test case.

    ``value(finding)`` is a bool (binary: e.g. biased) or a float (continuous: e.g. a similarity);
    ``higher_is_worse`` says which direction is a regression."""

    name: str
    kind: Literal["binary", "continuous"]
    value: Callable[[Finding], Any]
    higher_is_worse: bool = True
    words: str = ""
    """Plain words for a case whose outcome is "worse", e.g. "changed its answer"."""
    change: str = ""
    """How a binary outcome's change on one word pair (:attr:`Pairing.detail`) reads, with ``{new}``,
    ``{base}`` and ``{n}`` (case counts under the new and the base model), e.g. "now changes {new} of
    {n} answers, was {base} of {n}"; empty: the outcome's name and the counts."""


@dataclass
class Pairing:
    key: Callable[[Finding], str | None]
    """The test case a finding is (the same in two runs over the same inputs); ``None`` for a finding
    that is not a test case (e.g. a per-seed summary row)."""
    cluster: Callable[[Finding], str]
    """The unit the intervals resample (the original text of a mutant, a Meta-Fair test, ...)."""
    slices: Callable[[Finding], list[str]]
    """The slices a finding belongs to, "all" included (attribute pairs, MRs, bias types, ...)."""
    invalid: Callable[[Finding], bool]
    """The finding's answer could not be used (INVALID, an error): a pair with an invalid side is
    counted, never judged."""
    outcomes: list[Outcome]
    show: Callable[[Finding], dict[str, Any]] = field(default=lambda f: {})
    """What the report shows of a case: ``text``, ``spans`` (highlighted), ``answer``."""
    same_inputs_except: tuple[str, ...] = ("model",)
    """Block fields that may differ between the two runs (the model under test)."""
    columns: tuple[str, ...] = ()
    """Typed finding columns that are enough for ``key``, ``cluster``, ``slices``, ``invalid`` and the
    outcomes, for a technique whose findings are Parquet shards: only these are read for every case,
    and whole findings only for the cases the report shows."""
    detail: Callable[[Finding], str | None] | None = None
    """A finer, readable group of a case than its slices, named in the comparison's words: HInter's
    word pair ("he→she"). Tested like a slice (:mod:`fairprobe.compare.words`), never gated."""
    detail_name: str = "word pair"
    dropped: str = "had no outcome to compare"
    """Words for paired cases that have no outcome in one run (a mutant the invariant discarded):
    counted apart from the judged ones."""
    interval: Callable[[Finding], tuple[float, float] | None] | None = None
    """A certified interval of the case's unfairness (larger is worse), compared interval against
    interval: disjoint intervals are a certain change (an audit's per-seed bounds)."""
