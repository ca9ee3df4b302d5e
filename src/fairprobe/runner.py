"""Runs one technique block into a run directory, resumably, and writes its reports.

Run directory rules (DESIGN.md §4): a folder without ``run.db`` starts fresh; one whose ``run.db``
holds the same resolved spec resumes (what is done is skipped); a different spec is an error
(exit 2) unless ``overwrite``. Reports are always re-computable from ``run.db``
(:func:`render_reports`, used by ``fairprobe report``).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairprobe._version import __version__
from fairprobe.caching import CachedChatModel, CachedClassifier
from fairprobe.errors import DataError, FairprobeError, InternalError, RunInterrupted, RunStateError
from fairprobe.export import stored_findings, write_jsonl_if_small
from fairprobe.gates import explainer
from fairprobe.models import meter
from fairprobe.models.redact import redact_secrets, redact_uri
from fairprobe.models.stop import request_stop, stop_on_sigint
from fairprobe.progress import ProgressReporter
from fairprobe.registry import get as get_technique
from fairprobe.report.html import render_html
from fairprobe.report.writers import write_junit, write_summary
from fairprobe.runfolder import (
    ModelChanged,
    adopt_legacy,
    block_strings,
    claim,
    fingerprint_changed,
    model_key,
    now,
    open_locked,
    open_run,
    recorded_models,
    recorded_nothing,
    start_from_empty,
)
from fairprobe.shards import FindingsTable
from fairprobe.spec import BlockSpec
from fairprobe.store import Store, default_cache_path
from fairprobe.threads import thread_limit
from fairprobe.thresholds import DEFAULT_MAX_INVALID_RATE, Threshold, walk_metric
from fairprobe.verdict import decide, incomplete


class RunContext:
    """What a technique's ``execute`` gets: cached models, the findings store, progress, logging."""

    def __init__(
        self, run_dir: Path, store: Store, cache: Store | None, seed: int, name: str, quiet: bool = False
    ):
        self.run_dir = run_dir
        self.store = store
        self.cache = cache
        self.seed = seed
        self.name = name
        self.quiet = quiet
        self._models: dict[tuple[str, str], Any] = {}
        self.info: dict[str, Any] = store.get_state("info", {}) or {}
        self.threads = 1
        """CPU threads torch and BLAS may use in this run (the block's ``threads``, resolved)."""

    # -- models ---------------------------------------------------------------------------------
    def _stores(self) -> list[Store]:
        return [self.store] + ([self.cache] if self.cache is not None else [])

    def classifier(self, uri: str, **options: Any) -> CachedClassifier:
        """The classifier at ``uri``, loaded once per run and cached by (fingerprint, text)."""
        from fairprobe.models.uri import load_classifier

        return self._model("classifier", uri, options, lambda: load_classifier(uri, **options))

    def chat(self, uri: str, **options: Any) -> CachedChatModel:
        """The chat model at ``uri``, loaded once per run and cached by (fingerprint, request)."""
        from fairprobe.models.uri import load_chat

        return self._model("chat", uri, options, lambda: load_chat(uri, **options))

    def _model(self, kind: str, uri: str, options: dict[str, Any], load: Any) -> Any:
        key = (kind, uri + json.dumps(options, sort_keys=True, default=str))
        if key not in self._models:
            inner = load()
            self._check_model(kind, uri, inner.fingerprint)
            wrapper = CachedClassifier if kind == "classifier" else CachedChatModel
            self._models[key] = wrapper(inner, self._stores())
        return self._models[key]

    def _check_model(self, kind: str, uri: str, fingerprint: Any) -> None:
        """One run, one model: a model whose fingerprint differs from the one this run recorded for
        the same URI (retrained weights, edited ``py:`` code, another served model) stops the run
        with exit 2 instead of mixing two models' answers in one run."""
        state = model_key(kind, uri)
        recorded = self.store.get_state(state)
        if recorded is not None and recorded.get("fingerprint") != fingerprint.key:
            raise fingerprint_changed(
                fingerprint.model_id, recorded["fingerprint"], fingerprint.key, self.run_dir
            )
        if recorded is None:
            self.store.set_state(state, {"kind": kind, "fingerprint": fingerprint.key})

    def verify_models(self, block: dict[str, Any]) -> None:
        """Load again every model this run recorded that the block still names, so a resumed or
        finished run notices a changed model even when nothing is left to ask it."""
        recorded = recorded_models(self.store)
        if not recorded:
            return
        for text in sorted(block_strings(block)):
            if model_key("classifier", text) in recorded:
                self.classifier(text)
            if model_key("chat", text) in recorded:
                self.chat(text)

    def output(self, name: str) -> Path:
        """Where to write ``name`` in the run folder (recorded in the run's manifest first; a file of
        that name that fairprobe did not write stops the run instead of being overwritten)."""
        return claim(self.run_dir, self.store, name)

    def wrap_classifier(self, classifier: Any, chunk_size: int = 64) -> CachedClassifier:
        """Cache an already-built classifier (e.g. an ``LLMClassifier`` over a chat model); misses go
        to it ``chunk_size`` at a time."""
        return CachedClassifier(classifier, self._stores(), chunk_size=chunk_size)

    # -- findings -------------------------------------------------------------------------------
    def done_ids(self) -> set[str]:
        return self.store.finding_ids()

    def add_findings(self, findings: Iterable[dict[str, Any]], state: dict[str, Any] | None = None) -> int:
        """Record a batch of findings (each with a unique ``id``) in one transaction."""
        return self.store.add_findings(findings, state)

    def record_info(self, **items: Any) -> None:
        """Facts about the run for the summary (e.g. which parser model ran); a key in a model URI
        among them is stored as ``***``."""
        self.info.update(redact_secrets(items))
        self.store.set_state("info", self.info)

    def progress(self, label: str, total: int) -> ProgressReporter:
        return ProgressReporter(f"{self.name}: {label}", total, stream=sys.stderr)

    def log(self, message: str) -> None:
        if not self.quiet:
            print(f"[{self.name}] {redact_uri(message)}", file=sys.stderr, flush=True)


@dataclass
class RunOutcome:
    run_dir: Path
    summary: dict[str, Any]

    @property
    def passed(self) -> bool:
        return bool(self.summary["passed"])

    @property
    def verdict(self) -> str:
        return str(self.summary.get("verdict", "pass" if self.passed else "fail"))

    @property
    def report(self) -> Path:
        return self.run_dir / "report.html"


def check_thresholds(technique: Any, spec: BlockSpec, thresholds: list[Threshold]) -> None:
    """Fail before the run starts when a threshold names a metric the technique does not report.

    Techniques do not declare their metrics up front, so this analyses zero findings and checks
    each threshold's dotted path against the metrics that gives. A path into a dict that is empty
    without data (per-group metrics, keyed by what the data holds) is accepted; a technique whose
    analysis cannot run on zero findings is not checked here (the verdict reports it later)."""
    from fairprobe.errors import UsageError
    from fairprobe.thresholds import flatten_metric_paths

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
) -> RunOutcome:
    """Execute one block (resuming what is done), then write the four report files.

    A run that stops before it finishes (an input or model error, Ctrl-C, a bug) keeps what is done
    and writes its reports with the verdict "incomplete" (never "pass"); a re-run resumes."""
    technique = get_technique(spec.technique)
    thresholds = [*spec.thresholds, *(fail_on or [])]
    check_thresholds(technique, spec, thresholds)
    # Default gates when the user set none; none at all after `thresholds: []` / --no-default-gates.
    gates = list(technique.default_gates) if spec.default_gates and not thresholds else []
    no_gate = not thresholds and not spec.default_gates
    if technique.validate is not None:
        technique.validate(spec.block)  # input errors before the folder is touched
    store = open_run(spec, run_dir, overwrite=overwrite)
    rules = json.dumps(
        {"allow_empty": spec.allow_empty, "max_invalid_rate": spec.max_invalid_rate, "no_gate": no_gate}
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
        except (KeyboardInterrupt, RunInterrupted):
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
        _partial_reports(run_dir, store, why)
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
        if cache is not None:
            cache.close()
    _record_throughput(store, started)
    store.set_meta(finished=now(), elapsed_s=f"{time.monotonic() - started:.3f}", stopped="")
    ctx.log(f"executed in {time.monotonic() - started:.1f}s; writing reports")
    try:
        summary = render_reports(run_dir, store=store)
    finally:
        store.close()  # also releases the run folder's lock
    return RunOutcome(run_dir, summary)


def _record_throughput(store: Store, started: float) -> None:
    """This invocation's chat-model token counts and speeds (cached answers not counted), for
    ``summary.json``'s ``llm_throughput``; nothing when no chat model answered."""
    throughput = meter.summary(time.monotonic() - started)
    if throughput is not None:
        store.set_meta(llm_throughput=json.dumps(throughput))


def _partial_reports(run_dir: Path, store: Store, why: str) -> None:
    """Reports of a run that stopped early, with the verdict "incomplete" and why it stopped. A run
    that recorded nothing (stopped at an input error) writes none: there is nothing to show."""
    try:
        store.set_meta(stopped=why)
        if not recorded_nothing(store, run_dir):
            render_reports(run_dir, store=store, complete=False)
    except Exception:  # noqa: BLE001 - the original error matters more than a partial report
        pass
    store.close()


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
    :data:`~fairprobe.export.JSONL_LIMIT` findings) findings.jsonl from ``run.db`` and the findings.

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
        block = technique.block.model_validate(resolved["block"])
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
        implied = [] if rules.get("no_gate") else analysis.implied_thresholds
        verdict = decide(
            analysis.metrics,
            thresholds,
            implied=[(Threshold.parse(t), *rest) for t, *rest in implied],
            gates=[Threshold.parse(t) for t in gates],
            explain=explainer(analysis.metrics, analysis.explanations),
            allow_empty=bool(rules.get("allow_empty", False)),
            max_invalid_rate=float(rules.get("max_invalid_rate", DEFAULT_MAX_INVALID_RATE)),
            inconclusive_reasons=analysis.inconclusive,
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
    option_name: Callable[[str], str] | None = None,
) -> RunOutcome:
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
        raise UsageError(f"{option}: {e['msg']}") from None
    spec = BlockSpec(
        technique_name,
        out.name or technique_name,
        block,
        seed,
        list(fail_on or []),
        allow_empty=allow_empty,
        max_invalid_rate=max_invalid_rate,
        default_gates=default_gates,
    )
    return run_block(spec, out, overwrite=overwrite)
