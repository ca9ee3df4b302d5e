"""Weights hashes for model fingerprints (DESIGN.md §3, "fingerprint").

A fingerprint must change when the weights change and stay the same otherwise, so the response
cache (DESIGN.md §4) never serves answers of one model for another. File hashes are cached
in-process, keyed by (absolute path, size, mtime), so a run hashes each weights file once.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable
from pathlib import Path

_CHUNK = 1 << 20
_cache: dict[tuple[str, int, int], str] = {}
_lock = threading.Lock()


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes, cached in-process by (path, size, mtime_ns)."""
    p = Path(path).resolve()
    st = p.stat()
    key = (str(p), st.st_size, st.st_mtime_ns)
    with _lock:
        hit = _cache.get(key)
    if hit is not None:
        return hit
    digest = hashlib.sha256()
    with p.open("rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
    value = digest.hexdigest()
    with _lock:
        _cache[key] = value
    return value


def files_sha256(root: str | Path, files: Iterable[str | Path]) -> str:
    """One hex sha256 over several files: each file's path relative to ``root`` and its hash.

    The order of ``files`` does not matter; missing files are skipped.
    """
    base = Path(root).resolve()
    parts = []
    for f in files:
        p = Path(f).resolve()
        if p.is_file():
            rel = p.relative_to(base).as_posix() if p.is_relative_to(base) else p.name
            parts.append(f"{rel}:{file_sha256(p)}")
    return hashlib.sha256("\n".join(sorted(parts)).encode("utf-8")).hexdigest()
