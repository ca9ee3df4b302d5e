"""The run folder: what may be written there, what may be removed, and when a folder may hold a run.

Rules (DESIGN.md §4, and docs/run-folders.md):

- **fairprobe deletes only what it wrote.** Every file or folder a run writes into its folder is
  recorded in ``run.db`` (the manifest, :meth:`~fairprobe.run.store.Store.note_written`) *before* it is
  written. A run that starts from empty (a fresh spec, ``--overwrite``) removes manifest entries only;
  a file that fairprobe did not write is never removed, whatever its name.
- **A name that fairprobe would write but did not** (your own ``summary.json`` in the folder) is never
  overwritten: the run stops with one line naming it (:func:`claim`).
- **A non-empty folder that is not a run is refused** (exit 2, naming a file in it) unless
  ``--overwrite`` is given; even then its files are left alone.
- **Nothing is removed before the inputs are validated**: the runner calls the technique's own input
  checks and hashes every input file before :func:`open_run` touches the folder.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fairprobe._version import __version__
from fairprobe.errors import FairprobeError, RunStateError
from fairprobe.report.findings_view import VIEW_DIR
from fairprobe.report.writers import remove_own_files
from fairprobe.run.shards import SHARDS_DIR
from fairprobe.run.store import LOCK_FILE, Store
from fairprobe.technique.spec import BlockSpec

REPORT_FILES = ("spec.yaml", "findings.jsonl", "summary.json", "report.html", "junit.xml")
"""Files every run writes (its resolved spec and the four reports)."""

RUN_ARTEFACTS = (
    SHARDS_DIR,
    *REPORT_FILES,
    "error.log",
    "tests.jsonl",
    "prompts.jsonl",
    "prompts.stopping.json",
    "trajectory.csv",
)
"""Every name a run may write into its folder besides ``run.db``. A name is removed only when the
folder's manifest says this fairprobe run wrote it."""

_STORE_FILES = frozenset({"run.db", "run.db-wal", "run.db-shm", "run.db-journal", LOCK_FILE})
MANIFEST_META = "manifest"
"""Meta key set in every run.db whose manifest is kept; a run.db without it predates the manifest."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _foreign_entries(run_dir: Path) -> list[str]:
    """Entries of ``run_dir`` that are not the store, its lock, or fairprobe's hidden temporary files."""
    try:
        names = sorted(p.name for p in run_dir.iterdir())
    except OSError:
        return []
    return [n for n in names if n not in _STORE_FILES and not n.startswith(".")]


def check_run_folder(run_dir: Path, *, overwrite: bool) -> None:
    """Refuse a folder that cannot hold this run, before anything is created or removed in it.

    A path that is a file is refused; a non-empty folder that holds no fairprobe run (no ``run.db``)
    is refused unless ``overwrite`` (and then its files are still left alone)."""
    if _exists(run_dir) and not run_dir.is_dir():
        raise RunStateError(f"--out {run_dir} is a file, not a folder; choose a folder for the run")
    if not run_dir.is_dir() or (run_dir / "run.db").is_file():
        return
    foreign = _foreign_entries(run_dir)
    if foreign and not overwrite:
        raise RunStateError(
            f"{run_dir} is not empty and holds no fairprobe run (it has {foreign[0]!r}"
            f"{f' and {len(foreign) - 1} more' if len(foreign) > 1 else ''}); choose a new or empty "
            "folder for --out, or pass --overwrite to write beside those files (fairprobe never deletes "
            "files it did not write)"
        )


def claim(run_dir: Path, store: Store, name: str) -> Path:
    """The path of ``name`` in the run folder, recorded as written by this run.

    A file of that name that fairprobe did not write is never overwritten: :class:`RunStateError`
    naming it (exit 2). The manifest is written before the file, so a kill between the two can only
    leave a manifest entry without its file, never a file fairprobe would not know it wrote."""
    path = run_dir / name
    if name not in store.written():
        if _exists(path):
            raise RunStateError(
                f"{path} exists and was not written by fairprobe; move or rename it (fairprobe would "
                "overwrite it), or choose another --out"
            )
        store.note_written(name)
    return path


def adopt_legacy(run_dir: Path, store: Store) -> None:
    """A run.db from before the manifest: the run artefacts it holds were written by fairprobe."""
    if store.get_meta(MANIFEST_META) is None and store.get_meta("spec_hash") is not None:
        for name in RUN_ARTEFACTS:
            if _exists(run_dir / name):
                store.note_written(name)
    store.set_meta(**{MANIFEST_META: "1"})


def remove_written(run_dir: Path, store: Store) -> None:
    """Remove what the manifest says this folder's runs wrote; a symlink is removed, never followed.
    In a folder it wrote, only fairprobe's own files go (:func:`remove_own_files`)."""
    removed = []
    for name in sorted(store.written()):
        path = run_dir / name
        if path.is_dir() and not path.is_symlink():
            remove_own_files(path)
            if path.is_dir():  # the user's files keep it: it stays fairprobe's folder (their files stay)
                continue
        elif _exists(path):
            path.unlink()
        removed.append(name)
    store.forget_written(removed)


def discard_fresh(run_dir: Path, made_folder: bool) -> None:
    """Undo a first run into ``run_dir`` that was refused before it recorded anything: its
    ``run.db`` (with the files its manifest lists) and ``run.lock`` would make the folder look like
    a run, so that a plain run later accepted a folder of the user's files it had refused."""
    try:
        with Store(run_dir / "run.db") as store:
            remove_written(run_dir, store)
        for name in ("run.db", "run.db-wal", "run.db-shm", "run.db-journal", "run.lock"):
            (run_dir / name).unlink(missing_ok=True)
        if made_folder:
            run_dir.rmdir()  # only when empty: a file of someone else's keeps it
    except OSError:
        pass


def _check_reserved(run_dir: Path, store: Store) -> None:
    """Before any work: a report file of someone else's in the folder stops the run at once, rather
    than after hours of model calls when the reports are written. ``report-findings/`` (a large
    report's paged findings) is one of them, though not every run writes it: it is never adopted
    as fairprobe's (:data:`RUN_ARTEFACTS`), so a folder of that name is only ever the user's."""
    mine = store.written()
    for name in (SHARDS_DIR, *REPORT_FILES, VIEW_DIR):
        if name not in mine and _exists(run_dir / name):
            raise RunStateError(
                f"{run_dir / name} exists and was not written by fairprobe; move or rename it (the run "
                "writes a file of that name), or choose another --out"
            )


def open_locked(run_dir: Path, *, shared: bool = False) -> Store:
    """The folder's ``run.db``, with the folder locked for as long as the store is open (a second
    run, or a ``report`` of a live run, fails at once naming the PID that holds it). ``shared``: a
    reader's lock (a comparison), held by several readers at once but never beside a run."""
    from fairprobe.run.store import RunLock

    lock = RunLock(run_dir, shared=shared).acquire()
    try:
        store = Store(run_dir / "run.db")
    except BaseException:
        lock.release()
        raise
    store.run_lock = lock
    return store


def recorded_nothing(store: Store, run_dir: Path) -> bool:
    """True for a run that stopped before it recorded any work (e.g. at an input error): replacing it
    loses nothing, so a corrected command needs no --overwrite."""
    from fairprobe.run.shards import shard_files

    if store.get_meta("finished") is not None or store.count_findings():
        return False
    if shard_files(run_dir / SHARDS_DIR):
        return False
    return not {k for k in store.state_keys("") if k != "info" and not k.startswith("model:")}


def open_run(spec: BlockSpec, run_dir: Path, *, overwrite: bool = False) -> Store:
    """Open (or create) the run store for ``spec`` in ``run_dir``, enforcing the resume rules.

    The folder is locked (``run.lock``) for as long as the returned store is open: a second run into
    it fails at once. A run starts from empty (the files its manifest lists are removed) when
    ``run.db`` records no run, and with ``overwrite`` when it records another spec: the run records
    are cleared in one transaction first, so a run killed half-way through the clean-up also starts
    from empty."""

    spec_hash = spec.resolved_hash()  # hashes (and checks) the input files before touching run_dir
    check_run_folder(run_dir, overwrite=overwrite)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunStateError(f"cannot create run folder {run_dir}: {exc.strerror}; check --out") from None
    store = open_locked(run_dir)
    try:
        from fairprobe.report.writers import remove_stale_temps

        # A run killed between a report's temporary file and its rename left it; the lock says no
        # live writer owns it.
        remove_stale_temps(run_dir, (*RUN_ARTEFACTS, "findings.csv", "findings.parquet"))
        adopt_legacy(run_dir, store)
        previous = store.get_meta("spec_hash")
        if previous is not None and previous != spec_hash:
            if not overwrite and not recorded_nothing(store, run_dir):
                changed = _what_changed(store, spec)
                raise RunStateError(
                    f"{run_dir} holds a run of a different spec{changed}; pass --overwrite "
                    "to replace it or choose another --out"
                )
            previous = None
        _check_reserved(run_dir, store)
        if previous is None:
            start_from_empty(spec, run_dir, store, spec_hash)
        store.set_meta(verdict_settings=json.dumps(spec.verdict_settings()))
        claim(run_dir, store, "spec.yaml").write_text(spec.resolved_yaml(), encoding="utf-8")
    except BaseException:
        store.close()
        raise
    return store


def start_from_empty(spec: BlockSpec, run_dir: Path, store: Store, spec_hash: str | None = None) -> None:
    """Forget the folder's run and remove what it wrote: the run records are cleared in one
    transaction first (a kill after it leaves a folder that holds no run, and the manifest, which
    survives the clearing, still names the files to remove on the next start)."""
    store.clear_run()
    store.set_meta(**{MANIFEST_META: "1"})
    remove_written(run_dir, store)
    store.set_meta(
        spec_hash=spec_hash or spec.resolved_hash(),
        spec_json=json.dumps(spec.resolved()),
        inputs=json.dumps(spec.input_hashes()),
        technique=spec.technique,
        name=spec.name,
        started=now(),
        fairprobe_version=__version__,
    )


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


# -- the model under test belongs to the run ------------------------------------------------------


def model_key(kind: str, uri: str) -> str:
    """The state key of a model a run loaded: a hash of its kind and URI (a URI may hold a secret,
    so it is never stored as it is)."""
    return "model:" + hashlib.sha256(f"{kind}\0{uri}".encode()).hexdigest()[:32]


def recorded_models(store: Store) -> dict[str, dict[str, Any]]:
    return {k: store.get_state(k) for k in store.state_keys("model:")}


def block_strings(value: Any) -> set[str]:
    """Every string in a block's resolved fields (model URIs among them)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(block_strings(v) for v in value.values())) if value else set()
    if isinstance(value, list | tuple):
        return set().union(*(block_strings(v) for v in value)) if value else set()
    return set()


class ModelChanged(RunStateError):
    """The run folder holds answers of another version of a model the spec names."""


def fingerprint_changed(uri_shown: str, old: str, new: str, run_dir: Path) -> ModelChanged:
    return ModelChanged(
        f"{run_dir} holds results of another version of model {uri_shown} (fingerprint {old[:12]}, now "
        f"{new[:12]}: its weights, code or served model changed); pass --overwrite to test the new "
        "model from scratch, or choose another --out"
    )
