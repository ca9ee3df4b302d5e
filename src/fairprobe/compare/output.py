"""What ``fairprobe compare`` writes: the same four files as a run, plus ``summary.md``.

- ``summary.json``: metrics (``delta.<outcome>.<slice>``, ``slices.<outcome>.<slice>`` with both
  models' values, the interval of the difference, raw and Holm-adjusted p-values and a verdict),
  the verdict and its reasons;
- ``findings.jsonl``: one line per paired test case, with both models' outcomes and whether the case
  became worse, better or stayed — up to :data:`~fairprobe.export.JSONL_LIMIT` cases, as for runs;
  above it ``findings.parquet`` instead (a ``finding`` column with each JSON line, and ``id``), so
  comparing two million-mutant runs does not write a gigabyte of JSON;
- ``report.html``: both runs side by side per slice, worst first, and the cases that became worse
  with the changed words highlighted and both models' answers;
- ``junit.xml``: one test case per slice, failing where it regressed;
- ``summary.md``: a short Markdown table for a pull-request comment or ``$GITHUB_STEP_SUMMARY``.

The output folder follows the run folders' rule: fairprobe overwrites only files it wrote there
(listed in ``.fairprobe-written``); a folder holding other files is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fairprobe._version import __version__
from fairprobe.compare.core import Comparison
from fairprobe.errors import RunStateError
from fairprobe.report.sections import (
    Analysis,
    BarChart,
    Example,
    Examples,
    Group,
    Paragraph,
    Segment,
    Table,
    shown,
)

OUTPUTS = ("summary.json", "summary.md", "findings.jsonl", "findings.parquet", "report.html", "junit.xml")
MANIFEST = ".fairprobe-written"
MAX_EXAMPLES = 50
ORDER = {"regressed": 0, "improved": 1, "no significant change": 2}


def prepare_out(out: Path) -> None:
    """Refuse an output folder that holds files fairprobe did not write there; record the outputs."""
    if out.exists() and not out.is_dir():
        raise RunStateError(f"--out {out} is a file; give a folder for the comparison")
    mine: set[str] = set()
    if (out / MANIFEST).is_file():
        mine = set(json.loads((out / MANIFEST).read_text(encoding="utf-8")))
    if out.is_dir():
        from fairprobe.report.writers import is_temp_of
        from fairprobe.store import LOCK_FILE

        skip = {MANIFEST, LOCK_FILE, *mine}  # a killed compare's temporary files are removed, not refused
        foreign = sorted(p.name for p in out.iterdir() if p.name not in skip and not is_temp_of(p.name, OUTPUTS))
        if foreign:
            raise RunStateError(
                f"{out} holds files fairprobe did not write (e.g. {foreign[0]!r}); give --out a new or "
                "empty folder"
            )
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / MANIFEST).write_text(json.dumps(sorted(mine | set(OUTPUTS))), encoding="utf-8")
    except OSError as exc:
        raise RunStateError(f"cannot write to {out}: {exc.strerror}; check --out") from None


def _fmt(value: float | None, signed: bool = False) -> str:
    if value is None:
        return shown(None)
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else ""


def _p(p: float | None) -> str:
    if p is None:
        return shown(None)
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def _ranked(comparison: Comparison, outcome: str) -> list[tuple[str, Any, str]]:
    per = comparison.results[outcome]
    verdicts = comparison.verdicts[outcome]
    rows = [(s, r, verdicts[s]) for s, r in per.items()]
    return sorted(rows, key=lambda x: (ORDER[x[2]], -(x[1].delta or 0), x[0]))


def headline(comparison: Comparison) -> str:
    m = comparison.metrics
    words = []
    for outcome in comparison.results:
        worst = [(s, r) for s, r, v in _ranked(comparison, outcome) if v == "regressed"]
        if worst:
            s, r = worst[0]
            words.append(
                f"{outcome} regressed on {len(worst)} slice(s), most on {s} ({_fmt(r.base)} → {_fmt(r.new)}, "
                f"adjusted p {_p(r.p_adjusted)})"
            )
    text = (
        f"Compared {comparison.new.model} (new) with {comparison.base.model} (base) on {m['paired']} paired "
        f"test cases ({m['invalid']} with an INVALID side, not judged): {m['regressed']} slice(s) regressed, "
        f"{m['improved']} improved."
    )
    return text + (" " + "; ".join(words) + "." if words else "")


def _analysis(comparison: Comparison) -> Analysis:
    sections: list[Any] = [Paragraph("What changed", headline(comparison))]
    groups: list[Group] = []
    for outcome in comparison.results:
        ranked = _ranked(comparison, outcome)
        sections.append(
            Table(
                f"{outcome}: base and new model per slice, worst first",
                [
                    "slice",
                    "cases",
                    "base",
                    "new",
                    "difference",
                    "95% CI",
                    "worse",
                    "better",
                    "p",
                    "p (Holm)",
                    "verdict",
                ],
                [
                    [
                        s,
                        r.n,
                        _fmt(r.base),
                        _fmt(r.new),
                        _fmt(r.delta, signed=True),
                        _ci(r.delta_ci),
                        r.discordant[0] if r.discordant else "",
                        r.discordant[1] if r.discordant else "",
                        _p(r.p),
                        _p(r.p_adjusted),
                        v,
                    ]
                    for s, r, v in ranked
                ],
                caption=f"{ranked[0][1].test if ranked else ''}: paired test per slice; p (Holm) is adjusted "
                "across the slices of this metric. 'worse' / 'better' count the cases that changed.",
            )
        )
        labels, values, cis = [], [], []
        for s, r, _ in ranked[:15]:
            labels += [f"{s} · base", f"{s} · new"]
            values += [r.base, r.new]
            cis += [r.base_ci, r.new_ci]
        sections.append(
            BarChart(
                f"{outcome}: base and new, per slice",
                labels,
                values,
                ci=cis if any(cis) else None,
                caption="95% cluster-bootstrap intervals of each model's own value",
            )
        )
        sections.append(
            BarChart(
                f"{outcome}: difference (new − base) with its 95% interval",
                [s for s, _, _ in ranked[:15]],
                [r.delta for _, r, _ in ranked[:15]],
                ci=[r.delta_ci for _, r, _ in ranked[:15]],
            )
        )
        for s, r, v in ranked:
            groups.append(
                Group(
                    f"{outcome} {s}",
                    r.n,
                    [f"slices.{outcome}.{s}", f"delta.{outcome}.{s}"],
                    f"{v}: {_fmt(r.base)} → {_fmt(r.new)} (p {_p(r.p_adjusted)})",
                )
            )
    worse = [p for p in comparison.pairs if p.get("status") == "became worse" and "base" in p]
    slice_rank = (
        {s: i for i, (s, _, _) in enumerate(_ranked(comparison, next(iter(comparison.results))))}
        if comparison.results
        else {}
    )
    worse.sort(key=lambda p: min((slice_rank.get(s, 1e9) for s in p["slices"] if s != "all"), default=1e9))
    if worse:
        sections.append(
            Examples(
                f"Cases that became worse ({len(worse)}; first {min(len(worse), MAX_EXAMPLES)})",
                [_example(p) for p in worse[:MAX_EXAMPLES]],
            )
        )
    return Analysis(
        comparison.metrics,
        sections=sections,
        groups=groups,
        finding_columns=["id", "status", "slices"],
        failure_field="became_worse",
    )


def _segments(text: str, spans: list[list[int]] | None) -> list[Segment]:
    if not spans:
        return [Segment(text)]
    out, at = [], 0
    for start, end in sorted(spans):
        if start < at:
            continue
        out += [Segment(text[at:start]), Segment(text[start:end], mark=True)]
        at = end
    return out + [Segment(text[at:])]


def _example(pair: dict[str, Any]) -> Example:
    b, n = pair["base"], pair["new"]
    rows = []
    if b.get("original") is not None:
        rows.append(
            (
                "original",
                [Segment(str(b["original"]))],
                f"base {b.get('original_answer', '')} · new {n.get('original_answer', '')}",
            )
        )
    rows.append(("case", _segments(str(b.get("text", pair["id"])), b.get("spans")), ""))
    rows.append(("base model", [Segment(str(b.get("answer", "")))], ""))
    rows.append(("new model", [Segment(str(n.get("answer", "")))], "became worse"))
    return Example(rows)


def summary_markdown(summary: dict[str, Any], comparison: Comparison) -> str:
    lines = [
        f"### fairprobe compare ({summary['technique']}): **{summary['verdict'].upper()}**",
        "",
        headline(comparison),
        "",
    ]
    for reason in summary["reasons"]:
        lines.append(f"- {reason}")
    for outcome in comparison.results:
        lines += [
            "",
            f"| {outcome} slice | cases | base | new | difference (95% CI) | p (Holm) | verdict |",
            "|---|---|---|---|---|---|---|",
        ]
        for s, r, v in _ranked(comparison, outcome)[:15]:
            lines.append(
                f"| {s} | {r.n} | {_fmt(r.base)} | {_fmt(r.new)} | {_fmt(r.delta, True)} {_ci(r.delta_ci)} | "
                f"{_p(r.p_adjusted)} | {'**' + v + '**' if v == 'regressed' else v} |"
            )
    return "\n".join(lines) + "\n"


def write_outputs(out: Path, comparison: Comparison, started: str, finished: str) -> dict[str, Any]:
    from fairprobe.models.redact import redact_secrets
    from fairprobe.report.html import render_html
    from fairprobe.report.writers import atomic_write, write_junit, write_summary

    verdict = comparison.verdict
    summary = {
        "fairprobe_version": __version__,
        "technique": comparison.base.technique,
        "name": f"compare {comparison.base.technique}",
        "kind": "comparison",
        "base": {"folder": str(comparison.base.folder), "model": comparison.base.model},
        "new": {"folder": str(comparison.new.folder), "model": comparison.new.model},
        "model": {"uri": f"{comparison.new.model} vs {comparison.base.model}"},
        "started": started,
        "finished": finished,
        "complete": True,
        "metrics": comparison.metrics,
        "thresholds": verdict.thresholds,
        "verdict": verdict.verdict,
        "reasons": verdict.reasons,
        "passed": verdict.passed,
    }
    summary = redact_secrets(summary)  # a key in a model URI never reaches a report
    findings = [{**p, "became_worse": p.get("status") == "became worse"} for p in comparison.pairs]
    analysis = _analysis(comparison)
    _write_findings(out, findings)
    write_summary(out / "summary.json", summary)
    write_junit(out / "junit.xml", summary, analysis.groups)
    render_html(out / "report.html", summary, analysis, findings)
    atomic_write(out / "summary.md", summary_markdown(summary, comparison))
    return summary


def _write_findings(out: Path, findings: list[dict[str, Any]]) -> None:
    """``findings.jsonl`` for at most :data:`~fairprobe.export.JSONL_LIMIT` paired cases, else
    ``findings.parquet``; the other one, left by an earlier comparison into this folder, is removed
    (both are in the folder's list of what fairprobe wrote, :func:`prepare_out`)."""
    from fairprobe import export
    from fairprobe.report.writers import write_findings

    small = len(findings) <= export.JSONL_LIMIT
    if small:
        write_findings(out / "findings.jsonl", findings)
    else:
        export.write_parquet_file(out / "findings.parquet", findings)
    (out / ("findings.parquet" if small else "findings.jsonl")).unlink(missing_ok=True)
