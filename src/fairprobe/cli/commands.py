"""The ``fairprobe`` command line: one sub-command per technique plus run / report / demo / init.

Exit codes (:mod:`fairprobe.judge.verdict`):

- 0: the run passed (every threshold holds, enough valid answers, something was tested), or it
  had no fairness gate at all ("measured (no fairness gate)");
- 1: a threshold failed, or the run is inconclusive (no data, or too many INVALID answers);
- 2: a usage or input error (one red line, no traceback);
- 3: an internal error (one line on screen; the traceback is saved to ``error.log`` in the run
  folder, or to a temporary file outside a run).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from importlib.resources import files
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from fairprobe._version import __version__
from fairprobe.cli.common import (
    VERDICT_RULES,
    FailOn,
    compare_groups,
    finish,
    out,
    parse_fail_on,
    show_headline,
)
from fairprobe.errors import FairprobeError, RunInterrupted, UsageError


def _no_flag_metavar() -> None:
    """Typer's rich help shows ``<bool>`` in the type column of every flag (``--version``, ``--help``,
    ``--allow-empty``): a flag takes no value, so its type column stays empty, as the options
    generated from block fields already have (:mod:`fairprobe.cli.build`)."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx):  # type: ignore[no-untyped-def]
        return None if self.is_flag and self.metavar is None else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_no_flag_metavar()

app = typer.Typer(
    name="fairprobe",
    help="Test language models for unfair, biased behaviour.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
models_app = typer.Typer(help="Inspect model backends.", no_args_is_help=True)
app.add_typer(models_app, name="models")

err = Console(stderr=True, emoji=False)


def _version(value: bool) -> None:
    if value:
        print(f"fairprobe {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="print the version and exit")
    ] = False,
    allow_empty: Annotated[
        bool,
        typer.Option(
            "--allow-empty",
            help="pass thresholds whose metric has no data (n = 0) and runs that tested nothing "
            "(by default both fail)",
        ),
    ] = False,
    accept_untested: Annotated[
        bool,
        typer.Option(
            "--accept-untested",
            help="pass on the attributes shown within the gate only, when others lack the evidence "
            "(by default such a run is inconclusive); the verdict names what was not shown",
        ),
    ] = False,
    max_invalid_rate: Annotated[
        float | None,
        typer.Option(
            "--max-invalid-rate",
            min=0.0,
            max=1.0,
            help="a run with this share of INVALID answers or more is inconclusive (default 0.5)",
        ),
    ] = None,
    no_default_gates: Annotated[
        bool,
        typer.Option(
            "--no-default-gates",
            help="judge nothing unless --fail-on or the spec's thresholds: say so (the verdict is "
            "'measured (no fairness gate)', exit 0)",
        ),
    ] = False,
) -> None:
    """fairprobe: HInter, Meta-Fair, CAFFE, fairness certificates and BAFA behind one spec and one report.

    Exit codes: 0 pass, 1 threshold failed or inconclusive, 2 usage/input error, 3 internal error."""
    VERDICT_RULES.clear()
    if allow_empty:
        VERDICT_RULES["allow_empty"] = True
    if accept_untested:
        VERDICT_RULES["accept_untested"] = True
    if max_invalid_rate is not None:
        VERDICT_RULES["max_invalid_rate"] = max_invalid_rate
    if no_default_gates:
        VERDICT_RULES["default_gates"] = False


def with_rules(block):
    """``block`` (a :class:`~fairprobe.technique.spec.BlockSpec`) with the root verdict options applied."""
    return dataclasses.replace(block, **VERDICT_RULES)


@app.command()
def run(
    spec: Annotated[Path, typer.Argument(help="spec file (YAML); write one with `fairprobe init`")],
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="base folder; each block runs into OUT/NAME")
    ] = None,
    overwrite: Annotated[
        bool, typer.Option(help="replace a run of a different spec in the same folder")
    ] = False,
    fail_on: FailOn = None,
) -> None:
    """Run every technique block of a spec file, one run directory per block."""
    from fairprobe.run.runner import run_block
    from fairprobe.technique.spec import load_spec

    blocks, settings = load_spec(spec)
    thresholds = parse_fail_on(fail_on)
    base = out_dir or Path(settings.get("out", "fairprobe-runs"))
    outcomes = [
        run_block(with_rules(b), base / b.name, overwrite=overwrite, fail_on=thresholds) for b in blocks
    ]
    finish(outcomes + compare_groups(blocks, base))


@app.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="run folder")] = Path("fairprobe-runs"),
    overwrite: Annotated[bool, typer.Option(help="replace an earlier demo run of a different spec")] = False,
) -> None:
    """Run the embedded demo spec end to end and print where report.html is."""
    from fairprobe.run.runner import run_block
    from fairprobe.technique.spec import parse_spec

    text = files("fairprobe").joinpath("demo.yaml").read_text(encoding="utf-8")
    blocks = parse_spec(text, "fairprobe/demo.yaml")
    outcomes = [run_block(with_rules(b), out_dir / b.name, overwrite=overwrite) for b in blocks]
    finish(outcomes)  # prints each run's headline, verdict, reasons and top findings


@app.command()
def report(run_dir: Annotated[Path, typer.Argument(help="a run folder (holds run.db)")]) -> None:
    """Re-render findings.jsonl, summary.json, report.html and junit.xml from run.db."""
    from fairprobe.result import Run as RunOutcome
    from fairprobe.run.runner import render_reports

    finish([RunOutcome(run_dir, render_reports(run_dir))])


@app.command()
def export(
    run_dir: Annotated[Path, typer.Argument(help="a run folder (holds run.db)")],
    format: Annotated[str, typer.Option("--format", help="jsonl, csv or parquet")] = "jsonl",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", help="file to write (- for standard output); default RUN_DIR/findings.FORMAT"
        ),
    ] = None,
) -> None:
    """Write a run's findings as JSON lines, CSV or one Parquet file (runs of over 10,000 findings
    keep them in Parquet only, without findings.jsonl)."""
    from fairprobe.cli.export import export as export_findings

    path, n = export_findings(run_dir, format, output)
    if path is not None:
        typer.echo(f"{n} findings written to {path}")


@app.command()
def compare(
    base: Annotated[Path, typer.Argument(help="run folder of the base model (e.g. the one in production)")],
    new: Annotated[Path, typer.Argument(help="run folder of the new model, same technique and inputs")],
    out_dir: Annotated[Path, typer.Option("--out", help="folder for the comparison's reports")] = Path(
        "fairprobe-compare"
    ),
    fail_on: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-on",
            help="fail condition on a change, e.g. 'delta.error_rate.intersectional > 0.01' (repeatable)",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="seed of the bootstrap intervals")] = 0,
) -> None:
    """Did NEW become more biased than BASE? Pairs the two runs' test cases and tests each slice.

    Writes summary.json, summary.md (for a pull request), report.html, junit.xml and findings.jsonl
    (the paired cases). Fails when a slice regressed significantly (Holm-adjusted p < 0.05), or on
    --fail-on conditions such as 'delta.error_rate.intersectional > 0.01'."""
    from fairprobe.compare.call import compare_shown

    thresholds = parse_fail_on(fail_on)
    finish([compare_shown(base, new, out_dir, thresholds, seed, show_headline)])


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="where to write the spec")] = Path("fairprobe.yaml"),
    force: Annotated[bool, typer.Option(help="overwrite an existing file")] = False,
) -> None:
    """Write a commented example spec with one block per installed technique: every option with its
    default and help (from the technique's block), the first block active."""
    from fairprobe.cli.docs import spec_template
    from fairprobe.run.outputs import check_output_file
    from fairprobe.technique.registry import techniques

    check_output_file(path, "spec path")
    if path.exists() and not force:
        raise UsageError(f"{path} exists; pass --force to overwrite it or give another path")
    text = spec_template(str(path), techniques())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    out.print(f"wrote {escape(str(path))}")


@models_app.command("check")
def models_check(uri: Annotated[str, typer.Argument(help="model URI, e.g. embedded:imdb-sentiment")]) -> None:
    """Load a model, send one request, print its fingerprint and latency."""
    from fairprobe.models.check import check_model

    result = check_model(uri)
    out.print_json(json.dumps(result, default=str))


def _add_technique_commands() -> None:
    from fairprobe.technique.registry import techniques

    for tech in techniques().values():
        if tech.cli is not None:
            tech.cli(app)


PATH_OPTIONS = ("--out", "--output", "--model-out")
"""Options that name a folder or file to write."""


def _check_out_options(argv: list[str]) -> None:
    """``--out ''`` would make the current directory the run folder (``--output ''`` the current
    folder a file): refused before anything runs."""
    for i, arg in enumerate(argv):
        option, value = arg, None
        if arg in PATH_OPTIONS and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.split("=", 1)[0] in PATH_OPTIONS and "=" in arg:
            option, value = arg.split("=", 1)
        if value is not None and not value.strip():
            raise UsageError(f"{option} is empty; give it a folder (or file) name, e.g. {option} runs/hinter")


def main() -> None:
    from fairprobe import interrupts

    interrupts.install()  # from here on a Ctrl-C is recorded as the user's, and raises KeyboardInterrupt
    for stream in (sys.stdout, sys.stderr):  # LANG=C, PYTHONIOENCODING=ascii: '·' shown as '?', no crash
        try:
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass
    try:
        _check_out_options(sys.argv[1:])
        _add_technique_commands()
        # Ctrl-C also stops an in-process model mid-answer, in every command
        with interrupts.stop_on_sigint():
            app()
    except KeyboardInterrupt:  # outside a command (while its options were read or commands added)
        _stop("interrupted", "stopped by Ctrl-C before any work; nothing was written", 130)
    except SystemExit as exc:
        if exc.code == 130 and interrupts.user_pressed():  # Typer turns Ctrl-C into a silent exit 130
            _stop(
                "interrupted",
                "stopped by Ctrl-C; files are written whole or not at all, so run the command again",
                130,
            )
        raise
    except RunInterrupted as exc:
        _stop("interrupted", str(exc), exc.exit_code)
    except FairprobeError as exc:
        _stop("error", str(exc), exc.exit_code)
    except OSError as exc:
        import errno

        if exc.errno != errno.ENAMETOOLONG:
            _internal_error(exc)
        name = str(exc.filename or "")
        _stop(
            "error",
            f"a file name is too long ({len(name)} characters in {_shorten(name, 80)!r}; most file systems "
            "allow 255 bytes per name): shorten the --out folder, --output file or block name",
            2,
        )
    except UnicodeDecodeError as exc:
        # A reader that did not go through fairprobe.data.readers: still one line and an input error.
        _stop("error", f"an input file is not UTF-8 text ({exc}); save it as UTF-8 and run again", 2)
    except Exception as exc:  # noqa: BLE001 - a bug: one line on screen, the traceback in a file
        _internal_error(exc)
    finally:
        _ignore_late_ctrl_c()


def _ignore_late_ctrl_c() -> None:
    """The command is done (its files written, its exit code chosen): a Ctrl-C from here on is
    ignored. Python puts SIGINT back to the system default while the interpreter shuts down, and a
    Ctrl-C in that window killed the process by the signal, with no line and no exit code."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        try:
            if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
        except ValueError:  # pragma: no cover - not the main interpreter
            pass


def _internal_error(exc: BaseException) -> None:
    import tempfile

    from fairprobe.run.runner import write_error_log

    log = write_error_log(Path(tempfile.mkdtemp(prefix="fairprobe-error-")))
    _stop("internal error", f"{type(exc).__name__}: {exc}; traceback saved to {log}; please report it", 3)


MAX_LINE = 2000
"""Characters of an error line shown at most: a 2 MB block name must not print a 2 MB line."""


def _shorten(text: str, most: int = MAX_LINE) -> str:
    if len(text) <= most:
        return text
    keep = most // 2
    return f"{text[:keep]}…({len(text) - 2 * keep} characters)…{text[-keep:]}"


def _stop(label: str, message: str, code: int) -> None:
    """One red line on stderr (user text escaped, never read as console markup; a key in a model
    URI shown as ``***``; at most :data:`MAX_LINE` characters, on one line), then exit."""
    from fairprobe.models.redact import redact_uri

    message = _shorten(" ".join(redact_uri(message).splitlines()))
    err.print(f"[red]{label}:[/] {escape(message)}", highlight=False, soft_wrap=True)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
