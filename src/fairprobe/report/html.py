"""report.html rendered with jinja2 autoescaping; nothing is loaded from the network.

Model text is untrusted: every string goes through escaping, and the findings view is filled from
JSON data by script that only ever assigns ``textContent`` (:mod:`fairprobe.report.findings_view`).
A small run's report is one file; a large run's findings are paged from files in the sibling
``report-findings/`` folder, claimed in the run folder's manifest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from importlib.resources import files
from itertools import chain, islice
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from fairprobe.report.findings_view import CHUNK, INLINE_MAX, default_view, source_digest, write_view
from fairprobe.report.sections import Analysis
from fairprobe.report.svg import bar_chart, radar_chart, venn_chart

_env = Environment(
    loader=PackageLoader("fairprobe.report", "templates"), autoescape=select_autoescape(["html", "j2"])
)


def _json_island(data: Any) -> Markup:
    """JSON safe to embed in a <script type="application/json"> element."""
    text = json.dumps(data, ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


MAX_VIEW_FINDINGS = 200_000
"""The findings view pages through at most this many findings (failures first); findings.jsonl has all."""


def _ordered(findings: Any, analysis: Analysis) -> Iterator[dict[str, Any]]:
    """Findings in display order, failures first, at most :data:`MAX_VIEW_FINDINGS`; a
    :class:`FindingsTable` (millions of rows) is streamed one record batch at a time."""
    from fairprobe.run.shards import FindingsTable

    field = analysis.failure_field
    if isinstance(findings, FindingsTable):
        if field:
            import pyarrow.compute as pc

            lines = chain(
                findings.json_lines(pc.field(field), needs=[field]),
                findings.json_lines(~pc.field(field) | pc.field(field).is_null(), needs=[field]),
            )
        else:
            lines = findings.json_lines()
        return (json.loads(line) for line in islice(lines, MAX_VIEW_FINDINGS))
    ordered = sorted(findings, key=lambda f: not f.get(field, False)) if field else findings
    return iter(ordered[:MAX_VIEW_FINDINGS])


def _pages_source(findings: Any, summary: dict[str, Any], analysis: Analysis) -> str | None:
    """What the paged findings view is made from, as a digest (:func:`source_digest`): the content of
    the run's finding files and everything else the pages depend on. None (never reused) for
    findings held in memory."""
    from fairprobe._version import __version__
    from fairprobe.run.shards import FindingsTable

    if not isinstance(findings, FindingsTable) or findings.files is None or len(findings) <= INLINE_MAX:
        return None
    params = {
        "fairprobe": __version__,
        "technique": summary.get("technique"),
        "spec": summary.get("spec"),
        "failure_field": analysis.failure_field,
        "max_findings": MAX_VIEW_FINDINGS,
        "chunk": CHUNK,
    }
    return source_digest(findings.files, params)


def _columns(findings: Any, analysis: Analysis) -> list[str]:
    if analysis.finding_columns:
        return analysis.finding_columns
    sample = findings[:200] if isinstance(findings, list) else []
    return sorted({k for f in sample for k, v in f.items() if isinstance(v, str | int | float | bool)})


def render_html(
    path: Path,
    summary: dict[str, Any],
    analysis: Analysis,
    findings: Any,
    claim: Callable[[str], Path] | None = None,
) -> None:
    """The HTML report; ``findings`` is a list or a :class:`~fairprobe.run.shards.FindingsTable` (read as
    a stream). ``claim(name)`` returns the path of a sibling file the report may write and records it
    in the run folder's manifest; without it every finding is written inline."""
    from fairprobe.judge.evidence import coverage_lines, table_rows
    from fairprobe.judge.headline import interval, key_rows, number
    from fairprobe.judge.thresholds import flatten_metric_paths, lookup_metric
    from fairprobe.report.writers import atomic_write

    view = analysis.finding_view or default_view(analysis.failure_field, _columns(findings, analysis))
    data = write_view(
        map(view, _ordered(findings, analysis)),
        len(findings),
        path.parent,
        claim,
        source=_pages_source(findings, summary, analysis),
    )
    metrics = summary["metrics"]
    # What matters first (a sentence, the technique's key metrics as people read them), then the
    # whole metric tree, collapsed; a rate's `_n` sibling is shown in its row, not as a row of its own.
    headline = key_rows(metrics, analysis.key_metrics)
    tree = [
        (
            metric,
            number(lookup_metric(metrics, metric)),
            interval(_ci_of(metrics, metric), share=False),
            _sibling(metrics, metric, "_n"),
        )
        for metric in flatten_metric_paths(metrics)
        if not metric.endswith("_n")
    ]
    conditions = _conditions(summary, analysis)
    charts = {"bar": bar_chart, "venn": venn_chart, "radar": radar_chart}
    sections = [(s, charts[s.kind](s) if s.kind in charts else None) for s in analysis.sections]
    html = _env.get_template("report.html.j2").render(
        summary=summary,
        headline=headline,
        headline_text=analysis.headline,
        coverage_lines=coverage_lines(summary.get("coverage") or {}),
        evidence_rows=table_rows(summary.get("evidence") or []),
        conditions=conditions,
        counts_line=analysis.counts_line,
        tree=tree,
        reasons=list(zip(summary.get("reasons", []), _anchors(summary), strict=True)),
        sections=sections,
        view_inline=Markup("".join(data.inline)),
        view_files=data.files,
        view_script=Markup(_asset("findings.js")),
        view_css=Markup(_asset("findings.css")),
        shown=data.total,
        total=len(findings),
        summary_json=json.dumps(
            {k: v for k, v in summary.items() if k not in _SHOWN_ABOVE}, indent=2, ensure_ascii=False
        ),
    )
    atomic_write(path, html)


_SHOWN_ABOVE = {
    "metrics",
    "reasons",
    "reason_anchors",
    "notes",
    "thresholds",
    "headline",
    "top_findings",
    "evidence",
    "coverage",
}
"""Summary fields the report shows in its own sections: left out of the run record below them."""


def _conditions(summary: dict[str, Any], analysis: Analysis) -> list[tuple[str, str, bool, str]]:
    """The condition table's rows: (condition, measured, passed, from), in the analysis's words when
    it gives them (:attr:`~fairprobe.report.sections.Analysis.condition_words`), else as written."""
    rows = []
    for text, r in (summary.get("thresholds") or {}).items():
        if analysis.condition_words is not None:
            condition, actual, source = analysis.condition_words(text, r)
        else:
            actual = "no data" if r.get("actual") is None else f"{r['actual']:.4g}"
            if r.get("actual") is not None and r.get("path") and r["path"] != r.get("metric"):
                actual += f" ({r['path']})"
            condition, source = text, r.get("source") or "spec"
        rows.append((condition, actual, bool(r.get("passed")), source))
    return rows


def _anchors(summary: dict[str, Any]) -> list[str]:
    """Per reason, the report section that lists the findings behind it ("" when none)."""
    reasons = summary.get("reasons", [])
    anchors = list(summary.get("reason_anchors") or [])
    return (anchors + [""] * len(reasons))[: len(reasons)]


def _sibling(metrics: dict[str, Any], path: str, suffix: str) -> Any:
    """The ``<name><suffix>`` sibling of a metric (e.g. ``_ci``, ``_n``), or None."""
    parent_path, _, leaf = path.rpartition(".")
    node: Any = metrics
    for part in parent_path.split(".") if parent_path else []:
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node.get(f"{leaf}{suffix}") if isinstance(node, dict) else None


def _ci_of(metrics: dict[str, Any], path: str) -> list[float] | None:
    """The `<name>_ci` sibling of a metric, when the analysis computed one."""
    ci = _sibling(metrics, path, "_ci")
    return ci if isinstance(ci, list) and len(ci) == 2 else None


def _asset(name: str) -> str:
    return files("fairprobe.report").joinpath("assets", name).read_text(encoding="utf-8")


_TAG = re.compile(r"<\s*br\s*/?\s*>|<\s*/?\s*p\s*>", re.IGNORECASE)
_FORMAT = re.compile(r"<\s*/?\s*(?:i|b|em|strong|u|span|div)\s*>", re.IGNORECASE)


def text_html(text: str) -> Markup:
    """Dataset text as HTML: ``<br />`` and ``<p>`` become line breaks, bare formatting tags
    (``<i>``, ``<b>``, ...) are dropped, everything else is escaped (shown, never interpreted)."""
    from markupsafe import escape

    parts = _TAG.split(_FORMAT.sub("", text))
    return Markup("<br>").join(escape(p) for p in parts)


_env.filters["text_html"] = text_html
