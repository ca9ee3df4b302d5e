"""Inline SVG charts, built as escaped markup (no scripts, no network)."""

from __future__ import annotations

from markupsafe import Markup, escape

from fairprobe.report.sections import BarChart, VennChart


def bar_chart(chart: BarChart) -> Markup:
    """Horizontal bars with optional 95% interval whiskers."""
    row_h, label_w, bar_w, pad = 26, 190, 380, 10
    height = pad * 2 + row_h * max(len(chart.labels), 1)
    top = chart.max_value or max([*(hi for _, hi in (chart.ci or [])), *chart.values, 1e-9])
    scale = bar_w / top if top > 0 else 0.0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{label_w + bar_w + 90}" height="{height}" '
        f'aria-label="{escape(chart.title)}">'
    ]
    for i, (label, value) in enumerate(zip(chart.labels, chart.values, strict=True)):
        y = pad + i * row_h
        w = max(value * scale, 0.0)
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 17}" text-anchor="end" class="lbl">{escape(label)}</text>'
            f'<rect x="{label_w}" y="{y + 4}" width="{w:.1f}" height="{row_h - 8}" class="bar"/>'
        )
        if chart.ci:
            lo, hi = chart.ci[i]
            x1, x2 = label_w + lo * scale, label_w + hi * scale
            parts.append(
                f'<line x1="{x1:.1f}" x2="{x2:.1f}" y1="{y + row_h / 2}" y2="{y + row_h / 2}" class="ci"/>'
                f'<line x1="{x1:.1f}" x2="{x1:.1f}" y1="{y + 8}" y2="{y + row_h - 8}" class="ci"/>'
                f'<line x1="{x2:.1f}" x2="{x2:.1f}" y1="{y + 8}" y2="{y + row_h - 8}" class="ci"/>'
            )
        parts.append(
            f'<text x="{label_w + max(w, (chart.ci[i][1] * scale) if chart.ci else 0) + 6:.1f}" y="{y + 17}" '
            f'class="val">{value:.3g}{escape(chart.unit)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def venn_chart(chart: VennChart) -> Markup:
    """Two overlapping circles with the four counts (the "neither" count sits outside)."""
    a, b = escape(chart.a), escape(chart.b)
    return Markup(
        '<svg xmlns="http://www.w3.org/2000/svg" role="img" width="420" height="230" '
        f'aria-label="{escape(chart.title)}">'
        '<circle cx="160" cy="115" r="85" class="set-a"/><circle cx="260" cy="115" r="85" class="set-b"/>'
        f'<text x="115" y="120" class="cnt">{chart.only_a}</text>'
        f'<text x="210" y="120" class="cnt" text-anchor="middle">{chart.both}</text>'
        f'<text x="290" y="120" class="cnt">{chart.only_b}</text>'
        f'<text x="110" y="222" class="lbl">{a}</text><text x="250" y="222" class="lbl">{b}</text>'
        f'<text x="405" y="22" class="lbl" text-anchor="end">neither: {chart.neither}</text>'
        "</svg>"
    )
