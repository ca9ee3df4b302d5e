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
from fairprobe.errors import FairprobeError, InternalError, RunStateError
from fairprobe.progress import ProgressReporter
from fairprobe.registry import get as get_technique
from fairprobe.report.html import render_html
from fairprobe.report.writers import write_findings, write_json_lines, write_junit, write_summary
from fairprobe.shards import SHARDS_DIR, FindingsTable, shard_files
from fairprobe.spec import DEFAULT_MAX_INVALID_RATE, BlockSpec, Threshold
from fairprobe.verdict import decide
from fairprobe.store import Store, default_cache_path


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


def open_run(spec: BlockSpec, run_dir: Path, *, overwrite: bool = False) -> Store:
    """Open (or create) the run store for ``spec`` in ``run_dir``, enforcing the resume rules."""
    run_dir.mkdir(parents=True, exist_ok=True)
    store = Store(run_dir / "run.db")
    previous = store.get_meta("spec_hash")
    if previous is not None and previous != spec.resolved_hash():
        if not overwrite:
            store.close()
            raise RunStateError(
                f"{run_dir} holds a run of a different spec; pass --overwrite to replace it or choose another --out"
            )
        store.clear_run()
        previous = None
    if previous is None:
        store.set_meta(
            spec_hash=spec.resolved_hash(),
            spec_json=json.dumps(spec.resolved()),
            technique=spec.technique,
            name=spec.name,
            started=_now(),
            fairprobe_version=__version__,
        )
    (run_dir / "spec.yaml").write_text(spec.resolved_yaml(), encoding="utf-8")
    return store


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
    store = open_run(spec, run_dir, overwrite=overwrite)
    thresholds = [*spec.thresholds, *(fail_on or [])]
    store.set_meta(
        thresholds=json.dumps([str(t) for t in thresholds]),
        verdict_rules=json.dumps({"allow_empty": spec.allow_empty, "max_invalid_rate": spec.max_invalid_rate}),
    )
    cache_path = default_cache_path()
    cache = Store(cache_path) if cache_path is not None else None
    ctx = RunContext(run_dir, store, cache, spec.seed, spec.name, quiet=quiet)
    started = time.monotonic()
    try:
        technique.execute(spec.block, ctx)
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
    summary = render_reports(run_dir, store=store)
    store.close()
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
        thresholds = [Threshold.parse(t) for t in json.loads(store.get_meta("thresholds") or "[]")]
        rules = json.loads(store.get_meta("verdict_rules") or "{}")
        verdict = decide(
            analysis.metrics,
            thresholds,
            implied=[(Threshold.parse(t), source) for t, source in analysis.implied_thresholds],
            allow_empty=bool(rules.get("allow_empty", False)),
            max_invalid_rate=float(rules.get("max_invalid_rate", DEFAULT_MAX_INVALID_RATE)),
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
