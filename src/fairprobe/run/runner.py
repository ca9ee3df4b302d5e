"""Runs one technique block into a run directory, resumably, and writes its reports.

Run directory rules (DESIGN.md §4): a folder without ``run.db`` starts fresh; one whose ``run.db``
holds the same resolved spec resumes (what is done is skipped); a different spec is an error
(exit 2) unless ``overwrite``. Reports are always re-computable from ``run.db``
(:func:`render_reports`, used by ``fairprobe report``).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fairprobe._version import __version__
from fairprobe.errors import (
    DataError,
    FairprobeError,
    InternalError,
    ModelCodeError,
    RunInterrupted,
    RunStateError,
)
from fairprobe.interrupts import model_stop, stop_on_sigint
from fairprobe.judge.evidence import fill_coverage
from fairprobe.judge.gates import explainer, namer, worder
from fairprobe.judge.thresholds import DEFAULT_MAX_INVALID_RATE, Threshold, walk_metric
from fairprobe.judge.verdict import decide, incomplete
from fairprobe.models import meter
from fairprobe.models.redact import redact_secrets
from fairprobe.models.stop import request_stop
from fairprobe.models.uri import check_block_uris
from fairprobe.report.html import render_html
from fairprobe.report.writers import write_junit, write_summary
from fairprobe.result import Run
from fairprobe.run.findings import stored_findings, write_jsonl_if_small
from fairprobe.run.folder import (
    ModelChanged,
    adopt_legacy,
    claim,
    discard_fresh,
    now,
    open_locked,
    open_run,
    recorded_nothing,
    start_from_empty,
)
from fairprobe.run.shards import FindingsTable
from fairprobe.run.store import Store, default_cache_path
from fairprobe.run.threads import thread_limit
from fairprobe.technique.context import RunContext
from fairprobe.technique.registry import get as get_technique
from fairprobe.technique.spec import BlockSpec


def check_thresholds(technique: Any, spec: BlockSpec, thresholds: list[Threshold]) -> None:
    """Fail before the run starts when a threshold names a metric the technique does not report.

    Techniques do not declare their metrics up front, so this analyses zero findings and checks
    each threshold's dotted path against the metrics that gives. A path into a dict that is empty
    without data (per-group metrics, keyed by what the data holds) is accepted; a technique whose
    analysis cannot run on zero findings is not checked here (the verdict reports it later)."""
    from fairprobe.errors import UsageError
    from fairprobe.judge.thresholds import flatten_metric_paths

    if not thresholds:
        return
    try:
        findings: Any = []
        if technique.finding_schema is not None:
            findings = FindingsTable.from_dicts([], technique.finding_schema)
        metrics = technique.analyse(spec.block, findings, spec.seed).metrics
    except Exception:  # noqa: BLE001 - an analysis that needs data cannot tell; the verdict will
        return
    for threshold in thresholds:
        if not _metric_may_exist(metrics, threshold.metric):
            known = ", ".join(flatten_metric_paths(metrics)) or "(none)"
            raise UsageError(
                f"threshold {threshold}: {spec.technique} has no metric {threshold.metric!r}; "
                f"known metrics: {known}"
            )


def _metric_may_exist(metrics: Any, path: str) -> bool:
    """Whether ``path`` names a metric, or leads into a dict that is empty without data (keyed by
    groups, pairs, ... that only the run will know). A ``*`` path is checked up to its first ``*``."""
    if "*" in path.split("."):
        prefix = path.partition("*")[0].rstrip(".")
        node, rest = walk_metric(metrics, prefix) if prefix else (metrics, "")
        return isinstance(node, dict) and (not rest or not node)
    node, rest = walk_metric(metrics, path)
    if rest:
        return isinstance(node, dict) and not node
    return not isinstance(node, dict)


def run_block(
    spec: BlockSpec,
    run_dir: Path,
    *,
    overwrite: bool = False,
    fail_on: list[Threshold] | None = None,
    quiet: bool = False,
) -> Run:
    """Execute one block (resuming what is done), then write the four report files.

    A run that stops before it finishes (an input or model error, Ctrl-C, a bug) keeps what is done
    and writes its reports with the verdict "incomplete" (never "pass"); a re-run resumes."""
    technique = get_technique(spec.technique)
    thresholds = [*spec.thresholds, *(fail_on or [])]
    check_thresholds(technique, spec, thresholds)
    # A URI's undocumented ?option (?password=...) is refused before spec.yaml or run.db holds it.
    check_block_uris(spec.block.model_dump(mode="json"))
    # Default gates when the user set none; none at all after `thresholds: []` / --no-default-gates.
    gates = list(technique.default_gates) if spec.default_gates and not thresholds else []
    evidence = list(technique.evidence_gates) if gates else []
    no_gate = not thresholds and not spec.default_gates
    if technique.validate is not None:
        technique.validate(spec.block)  # input errors before the folder is touched
    fresh = not (run_dir / "run.db").exists()  # a refused first run leaves no run.db behind
    made_folder = not run_dir.exists()
    store = open_run(spec, run_dir, overwrite=overwrite)
    rules = json.dumps(
        {
            "allow_empty": spec.allow_empty,
            "max_invalid_rate": spec.max_invalid_rate,
            "no_gate": no_gate,
            "accept_untested": spec.accept_untested,
            "evidence": evidence,
        }
    )
    store.set_meta(
        thresholds=json.dumps([str(t) for t in thresholds]),
        default_gates=json.dumps(gates),
        verdict_rules=rules,
    )
    cache_path = default_cache_path()
    try:
        cache = Store(cache_path) if cache_path is not None else None
    except BaseException:
        store.close()
        raise
    ctx = RunContext(run_dir, store, cache, spec.seed, spec.name, quiet=quiet)
    try:  # a changed model leaves the run as it was: nothing of this invocation is recorded yet
        try:
            ctx.verify_models(spec.resolved()["block"])
        except ModelChanged:
            if not overwrite:
                raise
            start_from_empty(spec, run_dir, store)  # --overwrite: test the new model from scratch
            claim(run_dir, store, "spec.yaml").write_text(spec.resolved_yaml(), encoding="utf-8")
            store.set_meta(
                thresholds=json.dumps([str(t) for t in thresholds]),
                default_gates=json.dumps(gates),
                verdict_rules=rules,
            )
            ctx = RunContext(run_dir, store, cache, spec.seed, spec.name, quiet=quiet)
    except BaseException:
        for s in (cache, store):
            if s is not None:
                s.close()
        if fresh:  # e.g. a model that cannot be loaded: nothing was recorded
            discard_fresh(run_dir, made_folder)
        raise
    store.set_meta(stopped="it did not finish (killed, or still running)")
    started = time.monotonic()
    meter.reset()
    try:
        try:
            with stop_on_sigint(), thread_limit(getattr(spec.block, "threads", "auto")) as ctx.threads:
                technique.execute(spec.block, ctx)
        except UnicodeDecodeError as exc:  # a reader that did not say which file: still exit 2
            raise DataError(
                f"an input file of block {spec.name!r} is not UTF-8 text ({exc.reason}); re-save "
                "its data/dictionary/case/tests files as UTF-8"
            ) from exc
        except (KeyboardInterrupt, SystemExit, RunInterrupted) as exc:
            # Code run for a model (any backend) that exits or raises KeyboardInterrupt itself is an
            # error of that model; only the user's Ctrl-C interrupts the run (fairprobe.interrupts).
            if not isinstance(exc, RunInterrupted):
                why = model_stop(exc, f"code run by block {spec.name!r} (its model)")
                if why is not None:
                    raise ModelCodeError(why) from None
            request_stop()  # in-process models stop at their next token
            raise RunInterrupted(
                f"the findings so far are kept in {run_dir}; run the same command again to resume"
            ) from None
    except FairprobeError as exc:
        # Keep what is done readable: findings so far, marked incomplete. A re-run resumes.
        why = (
            "it was interrupted (Ctrl-C)"
            if isinstance(exc, RunInterrupted)
            else f"it stopped at an error: {exc}"
        )
        _record_throughput(store, started)
        # A model whose code fails (or exits) at its first call still gets its reports: a CI job reads
        # junit.xml and summary.json, and must see "incomplete", never no report at all.
        kept = _partial_reports(run_dir, store, why, always=isinstance(exc, ModelCodeError))
        if fresh and not kept:
            discard_fresh(run_dir, made_folder)
        raise
    except Exception as exc:
        # A bug: the traceback goes to the run folder, one line to the screen (exit 3).
        log = write_error_log(run_dir, store)
        _record_throughput(store, started)
        _partial_reports(run_dir, store, f"internal error ({type(exc).__name__})")
        raise InternalError(
            f"internal error ({type(exc).__name__}: {exc}); traceback saved to {log}; "
            "findings so far are kept and a re-run resumes; please report it"
        ) from exc
    finally:
        with contextlib.suppress(Exception):
            ctx.close_models()  # a llama.cpp server started for the run stops with it (?server=1)
        if cache is not None:
            cache.close()
    _record_throughput(store, started)
    store.set_meta(finished=now(), elapsed_s=f"{time.monotonic() - started:.3f}", stopped="")
    ctx.log(f"executed in {time.monotonic() - started:.1f}s; writing reports")
    try:
        summary = render_reports(run_dir, store=store)
    finally:
        store.close()  # also releases the run folder's lock
    return Run(run_dir, summary)


def _record_throughput(store: Store, started: float) -> None:
    """This invocation's chat-model token counts and speeds (cached answers not counted), for
    ``summary.json``'s ``llm_throughput``; nothing when no chat model answered."""
    throughput = meter.summary(time.monotonic() - started)
    if throughput is not None:
        store.set_meta(llm_throughput=json.dumps(throughput))


def _partial_reports(run_dir: Path, store: Store, why: str, *, always: bool = False) -> bool:
    """Reports of a run that stopped early, with the verdict "incomplete" and why it stopped. A run
    that recorded nothing (stopped at an input error) writes none, unless ``always`` (the model under
    test failed: the reports say so). ``why`` is stored redacted: a model's exception text may hold
    a URI's password or an echoed ``Authorization`` header. Returns whether the run is kept (False:
    it recorded nothing and wrote no report)."""
    from fairprobe.models.redact import redact_secrets

    kept = True
    try:
        store.set_meta(stopped=redact_secrets(why))
        if always or not recorded_nothing(store, run_dir):
            render_reports(run_dir, store=store, complete=False)
        else:
            kept = False
    except Exception:  # noqa: BLE001 - the original error matters more than a partial report
        pass
    store.close()
    return kept


def write_error_log(folder: Path, store: Store | None = None) -> Path:
    """Save the traceback being handled to ``folder/error.log`` (recorded in the run's manifest when
    ``store`` is given) and return its path; a temporary file when the folder cannot take it."""
    import tempfile
    import traceback

    text = f"{now()} fairprobe {__version__}\n{traceback.format_exc()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = claim(folder, store, "error.log") if store is not None else folder / "error.log"
        path.write_text(text, encoding="utf-8")
    except (OSError, FairprobeError):
        path = Path(tempfile.mkdtemp(prefix="fairprobe-error-")) / "error.log"
        path.write_text(text, encoding="utf-8")
    return path


def render_reports(
    run_dir: Path, *, store: Store | None = None, complete: bool | None = None
) -> dict[str, Any]:
    """(Re-)write summary.json, report.html, junit.xml and (for runs of at most
    :data:`~fairprobe.run.findings.JSONL_LIMIT` findings) findings.jsonl from ``run.db`` and the findings.

    A run that did not finish gets the verdict "incomplete", whatever its metrics say. Without
    ``store`` (``fairprobe report``) the run folder is locked first: a folder a live run is writing is
    refused."""
    own = store is None
    if store is None:
        if run_dir.is_file() or not (run_dir / "run.db").is_file():
            raise RunStateError(f"{run_dir} has no run.db; give the --out folder of a fairprobe run")
        store = open_locked(run_dir)
        adopt_legacy(run_dir, store)
    try:
        technique_name = store.get_meta("technique")
        if technique_name is None:
            raise RunStateError(f"{run_dir}/run.db records no run; run a spec into it first")
        technique = get_technique(technique_name)
        resolved = json.loads(store.get_meta("spec_json") or "{}")
        verdict_settings = json.loads(store.get_meta("verdict_settings") or "{}")
        block = technique.block.model_validate({**resolved["block"], **verdict_settings})
        store.compact_findings()  # one Parquet file for the findings logged batch by batch
        findings: Any = stored_findings(run_dir, store, technique)
        analysis = technique.analyse(block, findings, resolved["seed"])
        if isinstance(
            findings, list
        ):  # hidden findings (e.g. a judge's control pairs) feed the analysis only
            findings = [f for f in findings if not f.get("hidden")]
        thresholds = [Threshold.parse(t) for t in json.loads(store.get_meta("thresholds") or "[]")]
        rules = json.loads(store.get_meta("verdict_rules") or "{}")
        gates = json.loads(store.get_meta("default_gates") or "null")
        if gates is None:  # a run folder from before default gates: judged as a new run would be
            gates = [] if thresholds or rules.get("no_gate") else list(technique.default_gates)
        evidence = rules.get("evidence")
        if evidence is None:  # a run folder from before pass conditions: as a new run would be
            evidence = list(technique.evidence_gates) if gates else []
        implied = [] if rules.get("no_gate") else analysis.implied_thresholds
        coverage = fill_coverage(analysis.coverage, store.get_state("info", {}) or {})
        verdict = decide(
            analysis.metrics,
            thresholds,
            implied=[(Threshold.parse(t), *rest) for t, *rest in implied],
            gates=[Threshold.parse(t) for t in gates],
            explain=explainer(analysis.metrics, analysis.explanations),
            allow_empty=bool(rules.get("allow_empty", False)),
            max_invalid_rate=float(rules.get("max_invalid_rate", DEFAULT_MAX_INVALID_RATE)),
            inconclusive_reasons=analysis.inconclusive,
            evidence=[Threshold.parse(t) for t in evidence],
            accept_untested=bool(rules.get("accept_untested", False)),
            worded=worder(analysis.metrics, analysis.explanations),
            untested=coverage.get("untested"),
            named=namer(analysis.explanations),
            unit=technique.evidence_unit,
            interval=technique.evidence_interval,
        )
        finished = store.get_meta("finished")
        stopped = store.get_meta("stopped")
        if complete is None:
            complete = finished is not None and not stopped
        if not complete:
            verdict = incomplete(verdict, stopped or "it did not finish", len(findings))
        models = store.models()
        summary: dict[str, Any] = {
            "fairprobe_version": __version__,
            "technique": technique_name,
            "name": store.get_meta("name"),
            "model": {"uri": technique.model_uri(block), "fingerprints": models},
            "decoding": {m["model_id"]: m.get("params", {}) for m in models},
            "started": store.get_meta("started"),
            "finished": finished,
            "complete": complete,
            "seed": resolved["seed"],
            "findings": len(findings),
            "metrics": analysis.metrics,
            "thresholds": verdict.thresholds,
            "verdict": verdict.verdict,
            "reasons": verdict.reasons,
            "reason_anchors": verdict.anchors,
            "notes": verdict.notes,
            "passed": verdict.passed,
            "evidence": verdict.evidence,
            "accept_untested": bool(rules.get("accept_untested", False)),
            "coverage": coverage,
            "headline": analysis.headline,
            "top_findings": analysis.top_findings,
            "spec": resolved["block"],
            **({"llm_throughput": json.loads(t)} if (t := store.get_meta("llm_throughput")) else {}),
            **(store.get_state("info", {}) or {}),
            **analysis.info,
        }
        summary = redact_secrets(summary)  # a key in a model URI never reaches a report
        write_jsonl_if_small(run_dir, store, findings)  # above the limit: `fairprobe export`
        write_summary(claim(run_dir, store, "summary.json"), summary)
        write_junit(claim(run_dir, store, "junit.xml"), summary, analysis.groups)
        render_html(
            claim(run_dir, store, "report.html"),
            summary,
            analysis,
            findings,
            claim=lambda name: claim(run_dir, store, name),  # the paged findings' folder
        )
        return summary
    finally:
        if own:
            store.close()


def run_options(
    technique_name: str,
    options: dict[str, Any],
    out: Path,
    *,
    seed: int = 0,
    overwrite: bool = False,
    fail_on: list[Threshold] | None = None,
    allow_empty: bool = False,
    max_invalid_rate: float = DEFAULT_MAX_INVALID_RATE,
    default_gates: bool = True,
    accept_untested: bool = False,
    option_name: Callable[[str], str] | None = None,
) -> Run:
    """Run a technique from command-line options or Python keyword arguments (the same validation
    as a spec block). ``option_name(field)`` says how a bad value's field is named in the one-line
    error: ``--field-name`` by default (the command line), ``field=`` from :mod:`fairprobe.api`."""
    from pydantic import ValidationError

    from fairprobe.errors import UsageError

    technique = get_technique(technique_name)
    try:
        block = technique.block.model_validate({k: v for k, v in options.items() if v is not None})
    except ValidationError as exc:
        e = exc.errors()[0]
        name = option_name or (lambda field: "--" + field.replace("_", "-"))
        option = name(str(e["loc"][0])) if e["loc"] else technique_name
        raise UsageError(f"{option}: {e['msg'].removeprefix('Value error, ')}") from None
    spec = BlockSpec(
        technique_name,
        out.name or technique_name,
        block,
        seed,
        list(fail_on or []),
        allow_empty=allow_empty,
        max_invalid_rate=max_invalid_rate,
        default_gates=default_gates,
        accept_untested=accept_untested,
    )
    return run_block(spec, out, overwrite=overwrite)
