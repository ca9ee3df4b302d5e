"""SQLite (WAL) store: response cache and run records (DESIGN.md §4); findings beside it in Parquet.

One :class:`Store` wraps one SQLite file. A run directory holds ``run.db``; the global response
cache lives at ``~/.cache/fairprobe/cache.db`` (override with ``FAIRPROBE_CACHE``; set it to
``off`` to disable). This module knows nothing about models: cached values are opaque JSON keyed
by ``(fingerprint key, request key)``.

Answers are stored compactly, because a large run asks for millions: the request key as a 16-byte
BLAKE2b digest, the fingerprint as a small integer, and each distinct answer once (a classifier
gives a handful of distinct answers over a million texts). A store written by an older fairprobe
(table ``responses``) is still read.

Findings are not in SQLite: :meth:`Store.add_findings` appends them to the Parquet log in the run
folder's ``findings/`` (:class:`~fairprobe.run.shards.FindingsLog`), keyed by a stable id so a re-run
never duplicates one; ``run.db`` keeps no copy. Findings in the ``findings`` table of a run.db from
an older fairprobe are still read, before the log's.

Writes happen in one transaction per batch, so a killed run loses at most the batch in flight.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from fairprobe.errors import RunStateError
from fairprobe.run.shards import SHARDS_DIR, FindingsLog

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS responses (
    fingerprint TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    PRIMARY KEY (fingerprint, request)
);
CREATE TABLE IF NOT EXISTS findings (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS models (fingerprint TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS written (name TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS fingerprints (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS answers (
    fp INTEGER NOT NULL,
    request BLOB NOT NULL,
    payload INTEGER NOT NULL,
    PRIMARY KEY (fp, request)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS payloads (id INTEGER PRIMARY KEY, hash INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS payloads_by_hash ON payloads (hash);
"""
# ``responses`` and ``findings`` are the tables of older stores: read, never written.


def request_digest(request: str) -> bytes:
    """The 16-byte key under which a request's answer is stored (BLAKE2b of the request key)."""
    return hashlib.blake2b(request.encode("utf-8"), digest_size=16).digest()


def _payload_hash(data: str) -> int:
    """A 63-bit hash of an answer's JSON text, to find a stored copy of it (the text is compared too)."""
    return int.from_bytes(hashlib.blake2b(data.encode("utf-8"), digest_size=8).digest(), "big") >> 1


def default_cache_path() -> Path | None:
    """The global cache file, or ``None`` when ``FAIRPROBE_CACHE=off``."""
    env = os.environ.get("FAIRPROBE_CACHE")
    if env is not None:
        return None if env.lower() in {"off", "none", "0", ""} else Path(env)
    return Path.home() / ".cache" / "fairprobe" / "cache.db"


def _how_to_fix(path: Path) -> str:
    if path.name == "run.db":
        return (
            f"delete {path} (the run's findings are lost; cached answers stay in the global cache) and re-run"
        )
    return f"delete {path} (a cache: only answers are lost) or set FAIRPROBE_CACHE=off"


class Store:
    """One SQLite file in WAL mode. Thread-safe for the batch-level use fairprobe makes of it.

    A file that is not a SQLite database (or is damaged) is a :class:`RunStateError` that names it
    and says how to fix it, never a traceback."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunStateError(f"cannot create {self.path.parent}: {exc.strerror}; check the path") from None
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            self._lock = threading.Lock()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._db.execute("SELECT COUNT(*) FROM meta").fetchone()
            self._legacy_responses = (
                self._db.execute("SELECT 1 FROM responses LIMIT 1").fetchone() is not None
            )
            self._legacy_findings = self._db.execute("SELECT 1 FROM findings LIMIT 1").fetchone() is not None
        except sqlite3.DatabaseError as exc:
            try:
                self._db.close()
            except Exception:  # noqa: BLE001 - the open error is the one to report
                pass
            text = str(exc)
            if "locked" in text or "busy" in text:
                raise RunStateError(
                    f"{self.path} is locked by another process for over 30 s; wait for it, "
                    "or point FAIRPROBE_CACHE at another file"
                ) from None
            if isinstance(exc, sqlite3.OperationalError):  # unable to open, read-only, ...
                raise RunStateError(
                    f"cannot open store {self.path}: {exc}; check the path is writable"
                ) from None
            raise RunStateError(
                f"{self.path} is damaged or not a fairprobe store ({exc}); {_how_to_fix(self.path)}"
            ) from None
        self._fp_ids: dict[str, int] = {}
        self._payload_ids: dict[str, int] = {}
        self._findings = FindingsLog(self.path.parent / SHARDS_DIR, lambda: self.note_written(SHARDS_DIR))

    def close(self) -> None:
        self._db.close()
        lock = getattr(self, "run_lock", None)
        if lock is not None:
            self.run_lock = None
            lock.release()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- meta / state -------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, **items: str) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(items.items()))
            self._db.execute("COMMIT")

    def get_state(self, key: str, default: Any = None) -> Any:
        row = self._db.execute("SELECT value FROM state WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def state_keys(self, prefix: str) -> set[str]:
        """State keys that start with ``prefix`` (e.g. per-item "done" markers)."""
        rows = self._db.execute(
            "SELECT key FROM state WHERE key >= ? AND key < ?", (prefix, prefix + "\uffff")
        )
        return {r[0] for r in rows}

    def set_state(self, key: str, value: Any) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO state VALUES (?, ?)", (key, json.dumps(value)))

    # -- response cache -----------------------------------------------------------------------
    def _fingerprint_id(self, fingerprint: str, create: bool) -> int | None:
        if fingerprint not in self._fp_ids:
            row = self._db.execute("SELECT id FROM fingerprints WHERE key=?", (fingerprint,)).fetchone()
            if row is None and create:
                row = (
                    self._db.execute("INSERT INTO fingerprints (key) VALUES (?)", (fingerprint,)).lastrowid,
                )
            if row is None:
                return None
            self._fp_ids[fingerprint] = row[0]
        return self._fp_ids[fingerprint]

    def get_responses(self, fingerprint: str, requests: list[str]) -> dict[str, Any]:
        """Cached responses for ``requests`` (request keys) under ``fingerprint``; misses are absent."""
        found: dict[str, Any] = {}
        fp = self._fingerprint_id(fingerprint, create=False)
        if fp is not None:
            by_digest = {request_digest(r): r for r in requests}
            digests = list(by_digest)
            for start in range(0, len(digests), 500):
                chunk = digests[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    "SELECT a.request, p.data FROM answers a JOIN payloads p ON p.id = a.payload "
                    f"WHERE a.fp=? AND a.request IN ({marks})",
                    (fp, *chunk),
                )
                found.update((by_digest[d], json.loads(data)) for d, data in rows)
        if self._legacy_responses:  # answers stored by an older fairprobe
            missing = [r for r in requests if r not in found]
            for start in range(0, len(missing), 500):
                chunk = missing[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT request, response FROM responses WHERE fingerprint=? AND request IN ({marks})",
                    (fingerprint, *chunk),
                )
                found.update((req, json.loads(resp)) for req, resp in rows)
        return found

    def _payload(self, data: str) -> int:
        """The row id of an answer's JSON text in ``payloads``, inserted when new (inside a transaction).
        Ids are small sequential integers, so each answer row stays a few bytes."""
        pid = self._payload_ids.get(data)
        if pid is not None:
            return pid
        digest = _payload_hash(data)
        rows = self._db.execute("SELECT id, data FROM payloads WHERE hash=?", (digest,)).fetchall()
        pid = next((i for i, text in rows if text == data), None)
        if pid is None:
            pid = self._db.execute(
                "INSERT INTO payloads (hash, data) VALUES (?, ?)", (digest, data)
            ).lastrowid
        if len(self._payload_ids) < 100_000:  # chat answers are all distinct: keep the memo bounded
            self._payload_ids[data] = pid
        return pid

    def put_responses(self, fingerprint: str, items: dict[str, Any]) -> None:
        """Store responses in one transaction."""
        if not items:
            return
        with self._lock:
            self._db.execute("BEGIN")
            try:
                fp = self._fingerprint_id(fingerprint, create=True)
                rows = [
                    (fp, request_digest(req), self._payload(json.dumps(resp, separators=(",", ":"))))
                    for req, resp in items.items()
                ]
                self._db.executemany("INSERT OR REPLACE INTO answers VALUES (?, ?, ?)", rows)
            except BaseException:
                self._db.execute("ROLLBACK")
                self._fp_ids.clear()
                self._payload_ids.clear()
                raise
            self._db.execute("COMMIT")

    def record_model(self, fingerprint: str, data: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO models VALUES (?, ?)", (fingerprint, json.dumps(data)))

    def models(self) -> list[dict[str, Any]]:
        return [json.loads(r[0]) for r in self._db.execute("SELECT data FROM models ORDER BY fingerprint")]

    # -- findings -----------------------------------------------------------------------------
    def add_findings(self, findings: Iterable[dict[str, Any]], state: dict[str, Any] | None = None) -> int:
        """Append findings (each with a unique ``id``) to the run folder's Parquet log; already stored
        ids are kept. ``state`` items are written after the findings are in place, so progress markers
        never run ahead of the findings they describe. Returns the number of new findings."""
        added = self._findings.append(list(findings), skip=self._legacy_ids())
        if state:
            with self._lock:
                self._db.execute("BEGIN")
                for key, value in state.items():
                    self._db.execute("INSERT OR REPLACE INTO state VALUES (?, ?)", (key, json.dumps(value)))
                self._db.execute("COMMIT")
        return added

    def _legacy_ids(self) -> set[str]:
        if not self._legacy_findings:
            return set()
        return {r[0] for r in self._db.execute("SELECT id FROM findings")}

    def finding_ids(self) -> set[str]:
        return self._legacy_ids() | self._findings.ids()

    def iter_findings(self) -> Iterator[dict[str, Any]]:
        """Every finding in the order recorded (those of an older run.db first), hidden ones included."""
        legacy = set()
        if self._legacy_findings:
            for fid, data in self._db.execute("SELECT id, data FROM findings ORDER BY seq"):
                legacy.add(fid)
                yield json.loads(data)
        for finding in self._findings:
            if finding["id"] not in legacy:
                yield finding

    def count_findings(self) -> int:
        return len(self.finding_ids())

    def compact_findings(self) -> None:
        """Merge the findings log's per-batch files into one (done when the reports are written)."""
        self._findings.compact()

    # -- manifest of the files a run wrote ---------------------------------------------------------
    def note_written(self, name: str) -> None:
        """Record that fairprobe (re)writes ``name`` in the run folder: only such names are ever
        removed when the folder starts a new run. Recorded *before* the file is written."""
        with self._lock:
            self._db.execute("INSERT OR IGNORE INTO written VALUES (?)", (name,))

    def written(self) -> set[str]:
        """Names (relative to the run folder) of the files and folders fairprobe wrote there."""
        return {r[0] for r in self._db.execute("SELECT name FROM written")}

    def forget_written(self, names: Iterable[str]) -> None:
        with self._lock:
            self._db.executemany("DELETE FROM written WHERE name=?", [(n,) for n in names])

    def clear_run(self) -> None:
        """Forget findings, state and meta (used by ``--overwrite``); the response cache stays, and so
        does the manifest of written files: the findings log in ``findings/`` is removed by name
        afterwards, with the other files the run wrote."""
        with self._lock:
            self._db.execute("BEGIN")
            for table in ("findings", "state", "meta", "models"):
                self._db.execute(f"DELETE FROM {table}")
            self._db.execute("COMMIT")
        self._legacy_findings = False
        self._findings.clear()


LOCK_FILE = "run.lock"
"""File in a run folder that a running ``fairprobe`` holds locked (with its PID inside)."""


class RunLock:
    """An exclusive lock on a run folder, so two runs never write the same ``run.db`` and shards.

    ``fcntl.flock`` on ``<run>/run.lock``: the operating system drops it when the process dies (even
    on kill -9), so a stale file never blocks a later run. A second run gets a
    :class:`RunStateError` at once naming the PID that holds it. Where ``fcntl`` is missing
    (Windows) the lock is a no-op."""

    def __init__(self, folder: Path, *, shared: bool = False):
        self.path = Path(folder) / LOCK_FILE
        self.shared = shared
        self._fh: Any = None

    def acquire(self) -> RunLock:
        """Take the lock, or fail at once. A ``shared`` lock is a reader's (a comparison reading its
        input runs): any number of readers hold it side by side; a run (exclusive) waits for none."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return self
        fh = self.path.open("a+")
        try:
            fcntl.flock(fh.fileno(), (fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            pid = fh.read().strip() or "?"
            fh.close()
            raise RunStateError(
                f"run folder {self.path.parent} in use by PID {pid}; wait for that run to finish "
                "or choose another --out"
            ) from None
        if self.shared:  # the file names the writer's PID; a reader leaves it as it is
            self._fh = fh
            return self
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._fh = fh
        return self

    def release(self) -> None:
        if self._fh is not None:
            self._fh.close()  # closing the descriptor drops the flock
            self._fh = None
