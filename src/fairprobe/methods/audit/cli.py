"""``fairprobe audit ...`` (run an audit) and ``fairprobe audit evaluate PATH...`` (Table 1 figures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from fairprobe.cli.build import technique_command
from fairprobe.methods.audit.block import AuditBlock


def _one_source(values: dict) -> None:
    from fairprobe.errors import UsageError

    if (not values.get("model")) == (values.get("scores") is None):
        raise UsageError("give exactly one of --model (a black-box URI) or --scores (a CSV of cached scores)")


def _headline(m: dict) -> str | None:
    if m.get("estimate") is None:
        return None
    seeds = m.get("seeds") or {}
    lines = [
        f"{m['strategy']}: estimate {m['estimate']:+.4f} in [{m['lower']:+.4f}, {m['upper']:+.4f}] "
        f"after {m['queries']} queries (stopped by {m['stopped_by']}; {m['interval']} interval"
        + (f", hull over {len(seeds)} seeds" if len(seeds) > 1 else "")
        + ")"
    ]
    if len(seeds) > 1:
        for name, e in seeds.items():
            lines.append(
                f"  seed {name}: {e['estimate']:+.4f} in [{e['lower']:+.4f}, {e['upper']:+.4f}] "
                f"after {e['queries']} queries ({e['stopped_by']})"
            )
    return "\n".join(lines)


def add_commands(app: typer.Typer) -> None:
    audit = typer.Typer(
        help="BAFA: active fairness auditing of a black box with C-ERM intervals (a heuristic, not a certificate)."
    )
    app.add_typer(audit, name="audit")

    technique_command(
        audit,
        "audit",
        AuditBlock,
        callback=True,
        doc="Estimate a fairness gap of a black box within ε with as few queries as possible (BAFA).",
        describe=_headline,
        check=_one_source,
    )

    @audit.command("evaluate")
    def evaluate(
        paths: Annotated[list[Path], typer.Argument(help="trajectory CSV files or folders of them")],
        out: Annotated[Path | None, typer.Option("--out", help="folder for summary.json")] = None,
    ) -> None:
        """Table 1 figures per (file, strategy): queries to ε, error at 250, normalised AUEC@1000."""
        from fairprobe import __version__
        from fairprobe.data.readers import check_output_dir
        from fairprobe.errors import DataError
        from fairprobe.methods.audit.evaluate import evaluate_paths

        if out is not None:
            check_output_dir(out, "--out")
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise DataError(f"{missing[0]} does not exist; give trajectory CSV files or folders of them")
        metrics, lines, notes = evaluate_paths(paths)
        for note in notes:
            typer.echo(f"note: {note}", err=True)
        if not lines:
            raise DataError("no trajectory file of a known layout among the given paths")
        for line in lines:
            typer.echo(line)
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            summary = {
                "fairprobe_version": __version__,
                "technique": "audit-evaluate",
                "model": None,
                "started": None,
                "finished": None,
                "metrics": metrics,
                "thresholds": {},
                "passed": True,
                "files": [str(p) for p in paths],
                "notes": notes,
            }
            (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
