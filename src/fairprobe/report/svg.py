"""Inline SVG charts, built as escaped markup (no scripts, no network)."""

from __future__ import annotations

import math

from markupsafe import Markup, escape

from fairprobe.report.sections import BarChart, RadarChart, VennChart


def bar_chart(chart: BarChart) -> Markup:
    """Horizontal bars with optional 95% interval whiskers."""
    row_h, label_w, bar_w, pad = 26, 190, 380, 10
    height = pad * 2 + row_h * max(len(chart.labels), 1)
    # A value or interval of None is "no data": no bar, and the words instead of a number.
    cis = [c if c is not None and None not in c else None for c in (chart.ci or [])]
    known = [v for v in chart.values if v is not None]
    top = chart.max_value or max([*(c[1] for c in cis if c), *known, 1e-9])
    scale = bar_w / top if top > 0 else 0.0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{label_w + bar_w + 90}" height="{height}" '
        f'aria-label="{escape(chart.title)}">'
    ]
    for i, (label, value) in enumerate(zip(chart.labels, chart.values, strict=True)):
        y = pad + i * row_h
        ci = cis[i] if chart.ci else None
        if value is None:
            parts.append(
                f'<text x="{label_w - 6}" y="{y + 17}" text-anchor="end" class="lbl">{escape(label)}</text>'
                f'<text x="{label_w + 6}" y="{y + 17}" class="val">no data</text>'
            )
            continue
        w = max(value * scale, 0.0)
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 17}" text-anchor="end" class="lbl">{escape(label)}</text>'
            f'<rect x="{label_w}" y="{y + 4}" width="{w:.1f}" height="{row_h - 8}" class="bar"/>'
        )
        if ci:
            lo, hi = ci
            x1, x2 = label_w + lo * scale, label_w + hi * scale
            parts.append(
                f'<line x1="{x1:.1f}" x2="{x2:.1f}" y1="{y + row_h / 2}" y2="{y + row_h / 2}" class="ci"/>'
                f'<line x1="{x1:.1f}" x2="{x1:.1f}" y1="{y + 8}" y2="{y + row_h - 8}" class="ci"/>'
                f'<line x1="{x2:.1f}" x2="{x2:.1f}" y1="{y + 8}" y2="{y + row_h - 8}" class="ci"/>'
            )
        parts.append(
            f'<text x="{label_w + max(w, (ci[1] * scale) if ci else 0) + 6:.1f}" y="{y + 17}" '
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


def radar_chart(chart: RadarChart) -> Markup:
    """Radar plot: one spoke per label, the values as a filled polygon (linear scale from the centre),
    the reference as a dashed circle; spokes whose value reaches the reference are drawn solid."""
    size, cx, cy, rad = 460, 230, 220, 170
    top = max([*chart.values, chart.reference or 0.0, 1e-300])
    n = max(len(chart.values), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{size + 160}" height="{size}" '
        f'aria-label="{escape(chart.title)}">'
    ]
    points = []
    for i, (label, value) in enumerate(zip(chart.labels, chart.values, strict=True)):
        angle = -math.pi / 2 + 2 * math.pi * i / n
        dx, dy = math.cos(angle), math.sin(angle)
        ok = chart.reference is None or value >= chart.reference
        dash = "" if ok else ' stroke-dasharray="2 3"'
        parts.append(
            f'<line x1="{cx}" y1="{cy}" x2="{cx + rad * dx:.1f}" y2="{cy + rad * dy:.1f}" '
            f'stroke="#c9ced6" stroke-width="1"{dash}/>'
        )
        r = rad * max(value, 0.0) / top
        points.append(f"{cx + r * dx:.1f},{cy + r * dy:.1f}")
        if n <= 60:
            parts.append(
                f'<text x="{cx + (rad + 12) * dx:.1f}" y="{cy + (rad + 12) * dy + 4:.1f}" '
                f'text-anchor="middle" class="lbl" font-size="9">{escape(label)}</text>'
            )
    if points:
        parts.append(
            f'<polygon points="{" ".join(points)}" fill="#4c72b0" fill-opacity="0.35" stroke="#4c72b0"/>'
        )
    if chart.reference is not None:
        rr = rad * chart.reference / top
        parts.append(
            f'<circle cx="{cx}" cy="{cy}" r="{rr:.1f}" fill="none" stroke="#dd6a5a" stroke-width="2" '
            'stroke-dasharray="6 4"/>'
        )
    legend_x = size + 10
    parts.append(
        f'<rect x="{legend_x}" y="20" width="12" height="12" fill="#4c72b0" fill-opacity="0.35" stroke="#4c72b0"/>'
        f'<text x="{legend_x + 18}" y="30" class="lbl">{escape(chart.series_label)}</text>'
        f'<line x1="{legend_x}" y1="50" x2="{legend_x + 12}" y2="50" stroke="#dd6a5a" stroke-width="2" '
        'stroke-dasharray="4 2"/>'
        f'<text x="{legend_x + 18}" y="54" class="lbl">{escape(chart.reference_label)}</text>'
        f'<text x="{legend_x}" y="78" class="lbl">outer ring = {top:.3g}</text>'
        "</svg>"
    )
    return Markup("".join(parts))
