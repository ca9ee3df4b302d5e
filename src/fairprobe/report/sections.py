"""What a technique's analysis hands to the report writers.

A technique computes an :class:`Analysis` from its findings: nested metrics for
``summary.json``, report sections for ``report.html`` and finding groups for ``junit.xml``.
Sections are plain data; the HTML writer escapes every string in them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

NO_DATA = "no data"
"""How a metric without data (``None``: a rate over zero cases) reads in reports and summaries."""


def shown(value: float | None, fmt: str = "{:.3f}") -> str:
    """``value`` formatted with ``fmt``, or :data:`NO_DATA` for ``None``."""
    return NO_DATA if value is None else fmt.format(value)


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""
    kind: str = "table"
    anchor: str = ""
    """The section's id in report.html (``#anchor``), for links from the verdict's reasons."""


@dataclass
class BarChart:
    """Horizontal bars, one per label, with optional 95% intervals ``ci[i] = (lo, hi)``; a value or
    interval of ``None`` is drawn as "no data"."""

    title: str
    labels: list[str]
    values: list[float | None]
    ci: list[tuple[float, float] | None] | None = None
    unit: str = ""
    max_value: float | None = None
    caption: str = ""
    kind: str = "bar"


@dataclass
class VennChart:
    """Two-set Venn counts: ``only_a``, ``only_b``, ``both``, ``neither`` for sets named a and b."""

    title: str
    a: str
    b: str
    only_a: int
    only_b: int
    both: int
    neither: int
    caption: str = ""
    kind: str = "venn"


@dataclass
class RadarChart:
    """One axis per item (e.g. a sentence); ``values[i]`` is plotted along axis i and joined into a
    polygon; ``reference`` draws a dashed circle (e.g. a threshold) with ``reference_label``.
    Used for the certificates' ε* against the threshold t (certificates paper, Figures 2–3)."""

    title: str
    labels: list[str]
    values: list[float]
    reference: float | None = None
    reference_label: str = ""
    series_label: str = ""
    caption: str = ""
    kind: str = "radar"


@dataclass
class Segment:
    """A run of text; ``mark`` highlights it (e.g. a replaced word)."""

    text: str
    mark: bool = False


@dataclass
class Example:
    """One worked example: labelled rows of (possibly highlighted) text with an output beside each."""

    rows: list[tuple[str, list[Segment], str]]


@dataclass
class Examples:
    title: str
    examples: list[Example]
    caption: str = ""
    kind: str = "examples"


@dataclass
class Paragraph:
    title: str
    text: str
    kind: str = "text"


Section = Table | BarChart | VennChart | RadarChart | Examples | Paragraph


@dataclass
class Group:
    """A group of findings, one JUnit testcase. It fails when a failing threshold's metric path
    starts with one of ``metric_prefixes``."""

    name: str
    count: int
    metric_prefixes: list[str] = field(default_factory=list)
    detail: str = ""


@dataclass
class Explanation:
    """How one metric reads in words, for the verdict's reasons (:mod:`fairprobe.judge.gates`).

    ``text`` says what was counted, with ``{count}`` and ``{n}`` filled from the rate and its
    ``_n`` ("the model changed its answer for {count} of {n} gender mutants"); ``worst`` names the
    finding behind it most often ("most often he→she (9 of 40)"); ``anchor`` is the report section
    that lists them; ``percent`` says the metric is a share (shown as 3.8%), else a plain number;
    ``label`` names a gated quantity in the evidence table and its reasons ("seed 0")."""

    text: str
    worst: str = ""
    anchor: str = ""
    percent: bool = True
    label: str = ""


@dataclass
class Analysis:
    metrics: dict[str, Any]
    sections: list[Section] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    """Extra summary fields (e.g. which parser ran); merged into ``summary.json``."""
    finding_columns: list[str] = field(default_factory=list)
    """Finding fields shown in the report's findings table (all scalar fields when empty)."""
    failure_field: str | None = None
    """Boolean finding field that marks a finding as a failure (highlighted, filterable)."""
    finding_view: Callable[[dict[str, Any]], Any] | None = None
    """How the report's findings view shows one finding: a function returning a
    :class:`fairprobe.report.findings_view.FindingView` (its text, edits, answers, verdict)."""
    implied_thresholds: list[tuple[str, str] | tuple[str, str, str]] = field(default_factory=list)
    """Fail conditions the test cases carry themselves, as ``(METRIC OP VALUE, source)`` (e.g. a
    CAFFE case's expected fairness level), or ``(METRIC OP VALUE, source, reason)`` with the reason
    in words a failure gives; judged with the user's thresholds."""
    explanations: dict[str, Explanation] = field(default_factory=dict)
    """Metric path -> how it reads in words (the verdict's reasons); see :class:`Explanation`."""
    headline: str = ""
    """A short plain-language summary of what the run found, written from the metrics."""
    key_metrics: list[tuple[str, ...]] = field(default_factory=list)
    """(label, metric path) of the few metrics that matter most, shown first in the report; a third
    item ``"share"`` shows the value as a percentage whatever its name."""
    top_findings: list[str] = field(default_factory=list)
    """The worst findings in a few words each, worst first (the command line prints three)."""
    coverage: dict[str, Any] = field(default_factory=dict)
    """What the run tested: ``tested`` (attribute -> counts) and ``untested`` (requested attribute ->
    why it produced nothing: "the dictionary has no religion words"). Shown at the top of the report
    and in ``summary.json``; a requested attribute with no data is never silent."""
    inconclusive: list[str] = field(default_factory=list)
    """Reasons, in words, why the run's measurements cannot be trusted (e.g. a judge that failed its
    control pairs). Any reason makes the verdict "inconclusive", whatever the thresholds say."""
    condition_words: Callable[[str, dict[str, Any]], tuple[str, str, str]] | None = None
    """``(condition text, its result in summary.json's thresholds)`` -> (the condition, what was
    measured, where it came from) in words, for report.html's condition table; ``None``: the
    condition as written and the measured number."""
    counts_line: str = ""
    """What was tested, in words, at the top of report.html (default: "tested N · invalid M")."""
