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
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fairprobe import __version__
from fairprobe.caching import CachedChatModel, CachedClassifier
from fairprobe.errors import DataError, FairprobeError, InternalError, RunStateError
from fairprobe.progress import ProgressReporter
from fairprobe.registry import get as get_technique
from fairprobe.report.html import render_html
from fairprobe.report.writers import write_findings, write_json_lines, write_junit, write_summary
from fairprobe.shards import SHARDS_DIR, FindingsTable, shard_files
from fairprobe.spec import DEFAULT_MAX_INVALID_RATE, BlockSpec, Threshold, walk_metric
from fairprobe.store import Store, default_cache_path
from fairprobe.verdict import decide


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


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

    # -- models ---------------------------------------------------------------------------------
    def _stores(self) -> list[Store]:
        return [self.store] + ([self.cache] if self.cache is not None else [])

    def classifier(self, uri: str, **options: Any) -> CachedClassifier:
        """The classifier at ``uri``, loaded once per run and cached by (fingerprint, text)."""
        key = ("classifier", uri + json.dumps(options, sort_keys=True, default=str))
        if key not in self._models:
            from fairprobe.models.uri import load_classifier

            self._models[key] = CachedClassifier(load_classifier(uri, **options), self._stores())
        return self._models[key]

    def chat(self, uri: str, **options: Any) -> CachedChatModel:
        """The chat model at ``uri``, loaded once per run and cached by (fingerprint, request)."""
        key = ("chat", uri + json.dumps(options, sort_keys=True, default=str))
        if key not in self._models:
            from fairprobe.models.uri import load_chat

            self._models[key] = CachedChatModel(load_chat(uri, **options), self._stores())
        return self._models[key]

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
        """Facts about the run for the summary (e.g. which parser model ran)."""
        self.info.update(items)
        self.store.set_state("info", self.info)

    def progress(self, label: str, total: int) -> ProgressReporter:
        return ProgressReporter(f"{self.name}: {label}", total, stream=sys.stderr)

    def log(self, message: str) -> None:
        if not self.quiet:
            print(f"[{self.name}] {message}", file=sys.stderr, flush=True)


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


RUN_ARTEFACTS = (
    SHARDS_DIR,
    "findings.jsonl",
    "summary.json",
    "report.html",
    "junit.xml",
    "error.log",
    "spec.yaml",
    "tests.jsonl",
    "prompts.jsonl",
    "trajectory.csv",
)
"""What a run writes into its folder besides ``run.db``: removed when a run starts from empty (a
fresh folder, ``--overwrite``, or replacing a run that recorded nothing). Other files are left."""


def _remove_artefacts(run_dir: Path) -> None:
    import shutil

    for name in RUN_ARTEFACTS:
        path = run_dir / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


def _recorded_nothing(store: Store, run_dir: Path) -> bool:
    """True for a run that stopped before it recorded any work (e.g. at an input error): replacing it
    loses nothing, so a corrected command needs no --overwrite."""
    if store.get_meta("finished") is not None or store.count_findings():
        return False
    if shard_files(run_dir / SHARDS_DIR):
        return False
    return not (store.state_keys("") - {"info"})


def open_run(spec: BlockSpec, run_dir: Path, *, overwrite: bool = False) -> Store:
    """Open (or create) the run store for ``spec`` in ``run_dir``, enforcing the resume rules.

    The folder is locked (``run.lock``) for as long as the returned store is open: a second run into
    it fails at once. A run starts from empty (:data:`RUN_ARTEFACTS` removed) when ``run.db`` records
    no run, and with ``overwrite`` when it records another spec: the run records are cleared in one
    transaction first, so a run killed half-way through the clean-up also starts from empty."""
    from fairprobe.store import RunLock

    spec_hash = spec.resolved_hash()  # hashes (and checks) the input files before touching run_dir
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunStateError(f"cannot create run folder {run_dir}: {exc.strerror}; check --out") from None
    lock = RunLock(run_dir).acquire()
    try:
        store = Store(run_dir / "run.db")
    except BaseException:
        lock.release()
        raise
    store.run_lock = lock
    previous = store.get_meta("spec_hash")
    if previous is not None and previous != spec_hash:
        if not overwrite and not _recorded_nothing(store, run_dir):
            changed = _what_changed(store, spec)
            store.close()
            raise RunStateError(
                f"{run_dir} holds a run of a different spec{changed}; pass --overwrite "
                "to replace it or choose another --out"
            )
        store.clear_run()  # the atomic step: from here on the folder holds no run
        previous = None
    if previous is None:
        _remove_artefacts(run_dir)
        store.set_meta(
            spec_hash=spec_hash,
            spec_json=json.dumps(spec.resolved()),
            inputs=json.dumps(spec.input_hashes()),
            technique=spec.technique,
            name=spec.name,
            started=_now(),
            fairprobe_version=__version__,
        )
    (run_dir / "spec.yaml").write_text(spec.resolved_yaml(), encoding="utf-8")
    return store


def _what_changed(store: Store, spec: BlockSpec) -> str:
    """`` (data=x.csv changed)`` when the settings are the same but an input file's content is not."""
    try:
        if json.loads(store.get_meta("spec_json") or "null") != spec.resolved():
            return ""
        old = json.loads(store.get_meta("inputs") or "{}")
    except (ValueError, FairprobeError):
        return ""
    changed = [k for k, v in spec.input_hashes().items() if old.get(k) != v]
    return f" (the content of {', '.join(changed)} changed)" if changed else ""


def check_thresholds(technique: Any, spec: BlockSpec, thresholds: list[Threshold]) -> None:
    """Fail before the run starts when a threshold names a metric the technique does not report.

    Techniques do not declare their metrics up front, so this analyses zero findings and checks
    each threshold's dotted path against the metrics that gives. A path into a dict that is empty
    without data (per-group metrics, keyed by what the data holds) is accepted; a technique whose
    analysis cannot run on zero findings is not checked here (the verdict reports it later)."""
    from fairprobe.errors import UsageError
    from fairprobe.spec import flatten_metric_paths

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
    groups, pairs, ... that only the run will know)."""
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
    """Execute one block (resuming what is done), then write the four report files."""
    technique = get_technique(spec.technique)
    thresholds = [*spec.thresholds, *(fail_on or [])]
    check_thresholds(technique, spec, thresholds)
    store = open_run(spec, run_dir, overwrite=overwrite)
    store.set_meta(
        thresholds=json.dumps([str(t) for t in thresholds]),
        verdict_rules=json.dumps(
            {"allow_empty": spec.allow_empty, "max_invalid_rate": spec.max_invalid_rate}
        ),
    )
    cache_path = default_cache_path()
    try:
        cache = Store(cache_path) if cache_path is not None else None
    except BaseException:
        store.close()
        raise
    ctx = RunContext(run_dir, store, cache, spec.seed, spec.name, quiet=quiet)
    started = time.monotonic()
    try:
        try:
            technique.execute(spec.block, ctx)
        except UnicodeDecodeError as exc:  # a reader that did not say which file: still exit 2
            raise DataError(
                f"an input file of block {spec.name!r} is not UTF-8 text ({exc.reason}); re-save "
                "its data/dictionary/case/tests files as UTF-8"
            ) from exc
    except (FairprobeError, KeyboardInterrupt):
        # Keep what is done readable: findings so far, marked incomplete. A re-run resumes.
        _partial_reports(run_dir, store)
        raise
    except Exception as exc:
        # A bug: the traceback goes to the run folder, one line to the screen (exit 3).
        log = write_error_log(run_dir)
        _partial_reports(run_dir, store)
        raise InternalError(
            f"internal error ({type(exc).__name__}: {exc}); traceback saved to {log}; "
            "findings so far are kept and a re-run resumes; please report it"
        ) from exc
    finally:
        if cache is not None:
            cache.close()
    store.set_meta(finished=_now(), elapsed_s=f"{time.monotonic() - started:.3f}")
    ctx.log(f"executed in {time.monotonic() - started:.1f}s; writing reports")
    try:
        summary = render_reports(run_dir, store=store)
    finally:
        store.close()  # also releases the run folder's lock
    return RunOutcome(run_dir, summary)


def _partial_reports(run_dir: Path, store: Store) -> None:
    try:
        render_reports(run_dir, store=store, complete=False)
    except Exception:  # noqa: BLE001 - the original error matters more than a partial report
        pass
    store.close()


def write_error_log(folder: Path) -> Path:
    """Save the traceback being handled to ``folder/error.log`` and return its path."""
    import traceback

    path = folder / "error.log"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{_now()} fairprobe {__version__}\n{traceback.format_exc()}", encoding="utf-8")
    except OSError:
        import tempfile

        path = Path(tempfile.gettempdir()) / "fairprobe-error.log"
        path.write_text(traceback.format_exc(), encoding="utf-8")
    return path


def render_reports(
    run_dir: Path, *, store: Store | None = None, complete: bool | None = None
) -> dict[str, Any]:
    """(Re-)write findings.jsonl, summary.json, report.html and junit.xml from ``run.db``."""
    own = store is None
    if store is None:
        if not (run_dir / "run.db").is_file():
            raise RunStateError(f"{run_dir} has no run.db; give the --out folder of a fairprobe run")
        store = Store(run_dir / "run.db")
    try:
        technique_name = store.get_meta("technique")
        if technique_name is None:
            raise RunStateError(f"{run_dir}/run.db records no run; run a spec into it first")
        technique = get_technique(technique_name)
        resolved = json.loads(store.get_meta("spec_json") or "{}")
        block = technique.block.model_validate(resolved["block"])
        findings: Any
        if technique.finding_schema is not None:  # Parquet shards, read by column
            files = shard_files(run_dir / SHARDS_DIR)
            findings = FindingsTable.from_files(files, technique.finding_schema)
        else:
            findings = list(store.iter_findings())
        analysis = technique.analyse(block, findings, resolved["seed"])
        if isinstance(
            findings, list
        ):  # hidden findings (e.g. a judge's control pairs) feed the analysis only
            findings = [f for f in findings if not f.get("hidden")]
        thresholds = [Threshold.parse(t) for t in json.loads(store.get_meta("thresholds") or "[]")]
        rules = json.loads(store.get_meta("verdict_rules") or "{}")
        verdict = decide(
            analysis.metrics,
            thresholds,
            implied=[(Threshold.parse(t), source) for t, source in analysis.implied_thresholds],
            allow_empty=bool(rules.get("allow_empty", False)),
            max_invalid_rate=float(rules.get("max_invalid_rate", DEFAULT_MAX_INVALID_RATE)),
            inconclusive_reasons=analysis.inconclusive,
        )
        finished = store.get_meta("finished")
        if complete is None:
            complete = finished is not None
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
            "passed": verdict.passed,
            "spec": resolved["block"],
            **(store.get_state("info", {}) or {}),
            **analysis.info,
        }
        if isinstance(findings, FindingsTable):
            write_json_lines(run_dir / "findings.jsonl", findings.json_lines())
        else:
            write_findings(run_dir / "findings.jsonl", findings)
        write_summary(run_dir / "summary.json", summary)
        write_junit(run_dir / "junit.xml", summary, analysis.groups)
        render_html(run_dir / "report.html", summary, analysis, findings)
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
) -> RunOutcome:
    """Run a technique from command-line options (the same validation as a spec block)."""
    from pydantic import ValidationError

    from fairprobe.errors import UsageError

    technique = get_technique(technique_name)
    try:
        block = technique.block.model_validate({k: v for k, v in options.items() if v is not None})
    except ValidationError as exc:
        e = exc.errors()[0]
        option = "--" + str(e["loc"][0]).replace("_", "-") if e["loc"] else technique_name
        raise UsageError(f"{option}: {e['msg']}") from None
    spec = BlockSpec(
        technique_name,
        out.name or technique_name,
        block,
        seed,
        list(fail_on or []),
        allow_empty=allow_empty,
        max_invalid_rate=max_invalid_rate,
    )
    return run_block(spec, out, overwrite=overwrite)
