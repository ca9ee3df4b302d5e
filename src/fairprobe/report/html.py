"""report.html: one self-contained file (no network) rendered with jinja2 autoescaping.

Model text is untrusted: every string goes through escaping, and the findings table is filled
from a JSON data island by script that only ever assigns ``textContent``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from fairprobe.report.sections import Analysis
from fairprobe.report.svg import bar_chart, radar_chart, venn_chart

MAX_TABLE_FINDINGS = 5000
"""The HTML table shows at most this many findings (failures first); findings.jsonl has all."""

_env = Environment(
    loader=PackageLoader("fairprobe.report", "templates"), autoescape=select_autoescape(["html", "j2"])
)


def _json_island(data: Any) -> Markup:
    """JSON safe to embed in a <script type="application/json"> element."""
    text = json.dumps(data, ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


MAX_CELL = 300
"""Characters of a text cell shown in the findings table (the full text is in findings.jsonl)."""


def _scalar(value: Any) -> Any:
    if isinstance(value, int | float | bool) or value is None:
        return value
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= MAX_CELL else text[:MAX_CELL] + "…"


def table_findings(
    findings: list[dict[str, Any]], analysis: Analysis
) -> tuple[list[str], list[list[Any]], int]:
    """Columns and rows for the findings table, failures first, capped at MAX_TABLE_FINDINGS."""
    columns = analysis.finding_columns or sorted(
        {k for f in findings[:200] for k, v in f.items() if isinstance(v, str | int | float | bool)}
    )
    ordered = findings
    if analysis.failure_field:
        ordered = sorted(findings, key=lambda f: not f.get(analysis.failure_field, False))
    shown = ordered[:MAX_TABLE_FINDINGS]
    rows = [[_scalar(f.get(c)) for c in columns] for f in shown]
    return columns, rows, len(findings) - len(shown)


def _table_sample(findings: Any, analysis: Analysis) -> list[dict[str, Any]]:
    """The findings the table can show: a list as it is; from a :class:`FindingsTable` (millions of
    rows) only the first failures, then the first passes, up to the table's cap."""
    from fairprobe.shards import FindingsTable

    if not isinstance(findings, FindingsTable):
        return findings
    field = analysis.failure_field
    if not field:
        return findings.rows(limit=MAX_TABLE_FINDINGS)
    import pyarrow.compute as pc

    failing = findings.rows(pc.field(field), needs=[field], limit=MAX_TABLE_FINDINGS)
    passing = findings.rows(~pc.field(field), needs=[field], limit=MAX_TABLE_FINDINGS - len(failing))
    return failing + passing


def render_html(path: Path, summary: dict[str, Any], analysis: Analysis, findings: Any) -> None:
    """The HTML report; ``findings`` is a list or a :class:`~fairprobe.shards.FindingsTable` (then
    only a bounded sample is read, so the page stays small whatever the run size)."""
    from fairprobe.headline import interval, key_rows, number
    from fairprobe.report.writers import atomic_write
    from fairprobe.thresholds import flatten_metric_paths, lookup_metric

    shown = _table_sample(findings, analysis)
    columns, rows, hidden = table_findings(shown, analysis)
    hidden += len(findings) - len(shown)
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
    charts = {"bar": bar_chart, "venn": venn_chart, "radar": radar_chart}
    sections = [(s, charts[s.kind](s) if s.kind in charts else None) for s in analysis.sections]
    failure_col = columns.index(analysis.failure_field) if analysis.failure_field in columns else -1
    html = _env.get_template("report.html.j2").render(
        summary=summary,
        headline=headline,
        headline_text=analysis.headline,
        tree=tree,
        reasons=list(zip(summary.get("reasons", []), _anchors(summary), strict=True)),
        sections=sections,
        columns=columns,
        table_data=_json_island({"columns": columns, "rows": rows, "failure_col": failure_col}),
        hidden=hidden,
        total=len(findings),
        summary_json=json.dumps(
            {k: v for k, v in summary.items() if k not in _SHOWN_ABOVE}, indent=2, ensure_ascii=False
        ),
    )
    atomic_write(path, html)


_SHOWN_ABOVE = {"metrics", "reasons", "reason_anchors", "notes", "thresholds", "headline", "top_findings"}
"""Summary fields the report shows in its own sections: left out of the run record below them."""


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
