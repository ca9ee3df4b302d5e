"""What ``fairprobe compare`` writes: the same four files as a run, plus ``summary.md``.

- ``summary.json``: metrics (``delta.<outcome>.<slice>``, ``slices.<outcome>.<slice>`` with both
  models' values, the interval of the difference, raw and Holm-adjusted p-values and a verdict),
  the verdict and its reasons;
- ``findings.jsonl``: one line per paired test case, with both models' outcomes and whether the case
  became worse, better or stayed — up to :data:`~fairprobe.run.findings.JSONL_LIMIT` cases, as for runs;
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
import shutil
from pathlib import Path
from typing import Any

from fairprobe._version import __version__
from fairprobe.compare import conditions, words
from fairprobe.compare.core import Comparison
from fairprobe.compare.pairing import Pairing
from fairprobe.errors import RunStateError
from fairprobe.judge.headline import number, percent
from fairprobe.report.findings_view import INLINE_MAX, VIEW_DIR, FindingView
from fairprobe.report.sections import Analysis, BarChart, Example, Examples, Group, Segment, Table

OUTPUTS = (
    "summary.json",
    "summary.md",
    "findings.jsonl",
    "findings.parquet",
    "report.html",
    "junit.xml",
    VIEW_DIR,
)
MANIFEST = ".fairprobe-written"
MAX_EXAMPLES = 50
MAX_WORSE = 100
"""Lines of "what got worse" in report.html (summary.md shows :data:`MD_WORSE`)."""
MD_WORSE = 10
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
        from fairprobe.run.store import LOCK_FILE

        skip = {MANIFEST, LOCK_FILE, *mine}  # a killed compare's temporary files are removed, not refused
        foreign = sorted(
            p.name for p in out.iterdir() if p.name not in skip and not is_temp_of(p.name, OUTPUTS)
        )
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


def _pairing(comparison: Comparison) -> Pairing | None:
    from fairprobe.technique.registry import get as get_technique

    return get_technique(comparison.base.technique).pairing


def _details(comparison: Comparison) -> list[words.Detail]:
    """The word pairs' changes, computed once per comparison (the headline and the files share them)."""
    cached = comparison.__dict__.get("_details")
    if cached is None:
        cached = comparison.__dict__["_details"] = words.details(comparison, _pairing(comparison))
    return cached


def _kind(comparison: Comparison, outcome: str) -> str:
    pairing = _pairing(comparison)
    kinds = {o.name: o.kind for o in pairing.outcomes} if pairing is not None else {}
    return kinds.get(outcome, "binary")


def _ranked(comparison: Comparison, outcome: str) -> list[tuple[str, Any, str]]:
    """Slices worst first: regressed, improved, unchanged; then the smallest adjusted p, the largest
    change."""
    per = comparison.results[outcome]
    verdicts = comparison.verdicts[outcome]
    rows = [(s, r, verdicts[s]) for s, r in per.items()]
    return sorted(rows, key=lambda x: (ORDER[x[2]], words.slice_order(x[0], x[1].to_json())))


def _value(kind: str, value: float | None) -> str:
    return percent(value) if kind == "binary" else number(value)


def _change(kind: str, r: Any) -> str:
    """``+3.1 points [+0.7, +8.3]`` for a rate; ``+0.042 [+0.01, +0.07]`` for a continuous outcome."""
    if kind == "binary":
        return f"{words.points(r.delta)} {words.points_ci(r.delta_ci)}".strip()
    ci = f" [{number(r.delta_ci[0])}, {number(r.delta_ci[1])}]" if r.delta_ci else ""
    return f"{'+' if (r.delta or 0) > 0 else ''}{number(r.delta)}{ci}"


def _changed(r: Any) -> str:
    return f"{r.discordant[0]} / {r.discordant[1]}" if r.discordant else ""


def _what_got_worse(comparison: Comparison) -> list[str]:
    """What got worse, worst first: the word pairs when the technique names them, else the slices."""
    pairing = _pairing(comparison)
    lines = words.worse_details(_details(comparison), pairing)
    return lines or words.worse_slices(comparison.metrics, pairing)


def headline(comparison: Comparison) -> str:
    """One paragraph: who was compared on how many cases, where it got worse (worst first), and the
    worst word pair."""
    m = comparison.metrics
    pairing = _pairing(comparison)
    dropped = pairing.dropped if pairing is not None else "had no outcome to compare"
    text = (
        f"Compared {comparison.new.model} (new) with {comparison.base.model} (base) on "
        f"{words.counted(words.counts(comparison), dropped)}."
    )
    worse, better = [], []
    for o in comparison.results:
        ranked = _ranked(comparison, o)
        for verdict, into in (("regressed", worse), ("improved", better)):
            names = [s if s != "all" else "all cases" for s, _, v in ranked if v == verdict]
            if names:
                if len(names) > 5:
                    shown = ", ".join(names[:5]) + f" and {len(names) - 5} more"
                else:
                    shown = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
                into.append(f"the {words.label(o)} on {shown}")
    if worse:
        text += f" Got worse beyond chance: {'; '.join(worse)}."
    else:
        text += " No slice got worse beyond chance."
    if better:
        text += f" Got better: {'; '.join(better)}."
    certain = (m.get("intervals") or {}).get("worse", 0)
    if certain:
        text += f" {certain} certified interval(s) lie wholly above the base model's."
    top = words.worse_details(_details(comparison), pairing)
    if top:
        name = pairing.detail_name if pairing is not None else "word pair"
        text += f" Worst {name}: {top[0]}."
    return text


def _details_table(comparison: Comparison) -> Table | None:
    found = _details(comparison)
    if not found:
        return None
    pairing = _pairing(comparison)
    name = pairing.detail_name if pairing is not None else "word pair"
    rank = {"regressed": 0, "improved": 1, "no significant change": 2}
    found = sorted(found, key=lambda d: (rank[d.verdict], d.result.p_adjusted or 1.0, d.name))
    return Table(
        f"{name.capitalize()}s that changed an outcome, worst first ({len(found)})",
        [name, "outcome", "cases", "base", "new", "change (95% CI)", "up / down", "adjusted p", "verdict"],
        [
            [
                d.name,
                words.label(d.outcome),
                d.result.n,
                percent(d.result.base),
                percent(d.result.new),
                _change("binary", d.result),
                _changed(d.result),
                words.p_value(d.result.p_adjusted),
                d.verdict,
            ]
            for d in found
        ],
        caption=f"Each {name}'s cases under both models; 'up / down' counts the cases whose outcome turned "
        f"on / off under the new model; McNemar's exact test, adjusted across the {name}s with Tarone's "
        f"method (Biometrics 1990). {name.capitalize()}s explain; the verdict is decided on the slices.",
        anchor="changed-words",
    )


def _analysis(comparison: Comparison) -> Analysis:
    sections: list[Any] = []
    worse = _what_got_worse(comparison)
    if worse:
        sections.append(
            Table(
                "What got worse, worst first",
                ["", "change"],
                [[i, line] for i, line in enumerate(worse[:MAX_WORSE], 1)],
                anchor="what-got-worse",
            )
        )
    groups: list[Group] = []
    for outcome in comparison.results:
        ranked = _ranked(comparison, outcome)
        kind = _kind(comparison, outcome)
        sections.append(
            Table(
                f"{words.label(outcome)}: base and new model per slice, worst first",
                [
                    "slice",
                    "cases",
                    "base",
                    "new",
                    "change (95% CI)",
                    "up / down",
                    "p",
                    "adjusted p",
                    "verdict",
                ],
                [
                    [
                        s,
                        r.n,
                        _value(kind, r.base),
                        _value(kind, r.new),
                        _change(kind, r),
                        _changed(r),
                        words.p_value(r.p),
                        words.p_value(r.p_adjusted),
                        v,
                    ]
                    for s, r, v in ranked
                ],
                caption=f"{ranked[0][1].test if ranked else ''}: paired test per slice; the adjusted p is "
                "Holm's across the slices of this outcome. 'up / down' count the cases whose outcome turned "
                "on / off under the new model. 'cases' counts the judged cases only.",
            )
        )
        scale = 100.0 if kind == "binary" else 1.0
        unit = "%" if kind == "binary" else ""

        def scaled(ci: Any, k: float = scale) -> Any:
            return (ci[0] * k, ci[1] * k) if ci else None

        labels, values, cis = [], [], []
        for s, r, _ in ranked[:15]:
            labels += [f"{s} · base", f"{s} · new"]
            values += [None if r.base is None else r.base * scale, None if r.new is None else r.new * scale]
            cis += [scaled(r.base_ci), scaled(r.new_ci)]
        sections.append(
            BarChart(
                f"{words.label(outcome)}: base and new, per slice",
                labels,
                values,
                ci=cis if any(cis) else None,
                unit=unit,
                caption="95% cluster-bootstrap intervals of each model's own value",
            )
        )
        sections.append(
            BarChart(
                f"{words.label(outcome)}: change (new − base) with its 95% interval"
                + (", percentage points" if kind == "binary" else ""),
                [s for s, _, _ in ranked[:15]],
                [None if r.delta is None else r.delta * scale for _, r, _ in ranked[:15]],
                ci=[scaled(r.delta_ci) for _, r, _ in ranked[:15]],
            )
        )
        for s, r, v in ranked:
            groups.append(
                Group(
                    f"{outcome} {s}",
                    r.n,
                    [f"slices.{outcome}.{s}", f"delta.{outcome}.{s}"],
                    f"{v}: {_value(kind, r.base)} → {_value(kind, r.new)} ({words.adjusted(r.p_adjusted)})",
                )
            )
    table = _details_table(comparison)
    if table is not None:
        sections.append(table)
    worse_cases = [p for p in comparison.pairs if p.get("status") == "became worse" and "base" in p]
    slice_rank = (
        {s: i for i, (s, _, _) in enumerate(_ranked(comparison, next(iter(comparison.results))))}
        if comparison.results
        else {}
    )
    worse_cases.sort(
        key=lambda p: min((slice_rank.get(s, 1e9) for s in p["slices"] if s != "all"), default=1e9)
    )
    if worse_cases:
        sections.append(
            Examples(
                f"Cases that became worse ({len(worse_cases)}; first {min(len(worse_cases), MAX_EXAMPLES)})",
                [_example(p) for p in worse_cases[:MAX_EXAMPLES]],
            )
        )
    first = next(iter(comparison.results), None)
    key_metrics: list[tuple[str, ...]] = [("paired test cases judged", "judged")]
    if first is not None and "all" in comparison.results[first]:
        share = ("share",) if _kind(comparison, first) == "binary" else ()
        key_metrics += [
            (f"{words.label(first)}, base model (all judged cases)", f"slices.{first}.all.base", *share),
            (f"{words.label(first)}, new model (all judged cases)", f"slices.{first}.all.new", *share),
        ]
    key_metrics += [
        ("slices that got worse beyond chance", "regressed"),
        ("slices that got better", "improved"),
    ]
    return Analysis(
        comparison.metrics,
        sections=sections,
        groups=groups,
        finding_columns=["id", "status", "slices"],
        failure_field="became_worse",
        finding_view=_view,
        headline=headline(comparison),
        key_metrics=key_metrics,
        top_findings=worse,
        condition_words=conditions.words_of(comparison.metrics, _pairing(comparison)),
        counts_line=words.counts_line(comparison, _pairing(comparison)),
    )


_UNSHOWN = "(not shown: only the cases that changed keep their text here; findings.jsonl has every case)"


def _view(pair: dict[str, Any]) -> FindingView:
    """A paired case in the report's findings view: the case, both models' answers side by side, its
    status ("became worse"), filterable by slice and word pair. An unchanged case (most of 100,000)
    has no text here and takes the short path."""
    status = str(pair.get("status", ""))
    detail = pair.get("detail")
    slices = pair.get("slices") or []
    attribute = " · ".join(s for s in slices if s != "all")
    b = pair.get("base") or {}
    text = str(b.get("text") or "")
    if not text:
        return FindingView(
            id=pair["id"].replace("\x00", " · "),
            verdict=status,
            failed=status == "became worse",
            left=_UNSHOWN,
            left_label="paired case",
            right_label="",
            changes=[detail] if detail else [],
            attribute=attribute,
            pairs=[detail] if detail else [],
            group=status,
        )
    n = pair.get("new") or {}
    original = b.get("original")
    changes = [f"{words.label(o)}: {c}" for o, c in (pair.get("changes") or {}).items()]
    notes = [("slices", ", ".join(slices))]
    if original is not None:
        notes.append(
            ("original answers", f"base {b.get('original_answer', '')} · new {n.get('original_answer', '')}")
        )
    return FindingView(
        id=pair["id"].replace("\x00", " · "),
        verdict=status,
        failed=status == "became worse",
        left=text,
        edits=[(s, e, text[s:e]) for s, e in sorted(b.get("spans") or []) if 0 <= s <= e <= len(text)],
        left_label="base model",
        right_label="new model",
        left_answer=str(b.get("answer", "")),
        right_answer=str(n.get("answer", "")),
        changes=([detail] if detail else []) + changes,
        attribute=attribute,
        pairs=[detail] if detail else [],
        group=status,
        notes=notes,
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
    """The pull-request comment: the verdict, the headline, the reasons, what got worse (worst first)
    and one table per outcome, in percentages; no metric paths."""
    lines = [
        f"### fairprobe compare ({summary['technique']}): **{summary['verdict'].upper()}**",
        "",
        headline(comparison),
        "",
    ]
    for reason in summary["reasons"]:
        lines.append(f"- {reason}")
    worse = _what_got_worse(comparison)
    if worse:
        lines += ["", "**What got worse**, worst first:", ""]
        lines += [f"{i}. {line}" for i, line in enumerate(worse[:MD_WORSE], 1)]
        if len(worse) > MD_WORSE:
            lines.append(f"\n…and {len(worse) - MD_WORSE} more in report.html.")
    for outcome in comparison.results:
        kind = _kind(comparison, outcome)
        ranked = _ranked(comparison, outcome)
        lines += [
            "",
            f"| {words.label(outcome)}: slice | cases | base | new | change (95% CI) | adjusted p | verdict |",
            "|---|--:|--:|--:|---|--:|---|",
        ]
        for s, r, v in ranked[:15]:
            lines.append(
                f"| {s} | {r.n:,} | {_value(kind, r.base)} | {_value(kind, r.new)} | {_change(kind, r)} | "
                f"{words.p_value(r.p_adjusted)} | {'**' + v + '**' if v == 'regressed' else v} |"
            )
        if len(ranked) > 15:
            lines.append(f"\n{len(ranked) - 15} more slices in report.html.")
    lines += [
        "",
        "<sub>cases: the paired cases judged under both models; changes of a rate are in percentage "
        "points; adjusted p: Holm across the slices (pairs named above: Tarone), a change is beyond chance "
        "below 0.05.</sub>",
    ]
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
    analysis = _analysis(comparison)  # first: it names each case's word pair (``detail``)
    findings = [{**p, "became_worse": p.get("status") == "became worse"} for p in comparison.pairs]
    summary["top_findings"] = analysis.top_findings[:10]
    _write_findings(out, findings)
    write_summary(out / "summary.json", summary)
    write_junit(out / "junit.xml", summary, analysis.groups)
    view = out / VIEW_DIR
    if len(findings) <= INLINE_MAX and view.is_dir() and not view.is_symlink():
        shutil.rmtree(view)  # pages of an earlier, larger comparison into this folder (ours: prepare_out)
    render_html(out / "report.html", summary, analysis, findings, claim=lambda name: out / name)
    atomic_write(out / "summary.md", summary_markdown(summary, comparison))
    return summary


def _write_findings(out: Path, findings: list[dict[str, Any]]) -> None:
    """``findings.jsonl`` for at most :data:`~fairprobe.run.findings.JSONL_LIMIT` paired cases, else
    ``findings.parquet``; the other one, left by an earlier comparison into this folder, is removed
    (both are in the folder's list of what fairprobe wrote, :func:`prepare_out`)."""
    from fairprobe.report.writers import write_findings
    from fairprobe.run import findings as export

    small = len(findings) <= export.JSONL_LIMIT
    if small:
        write_findings(out / "findings.jsonl", findings)
    else:
        export.write_parquet_file(out / "findings.parquet", findings)
    (out / ("findings.parquet" if small else "findings.jsonl")).unlink(missing_ok=True)
