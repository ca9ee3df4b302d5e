"""The one rule for every file or folder fairprobe writes outside a run folder.

``export --output``, ``certify train --model-out``, ``init``, ``metafair generate --output``,
``caffe kb build --output`` and ``hinter extract --output`` (the lexicon) all call
:func:`check_output_file` or :func:`check_output_folder` *before any work*, so a mistyped path never
costs an hour of training or generation, and never costs a user's data:

- **never over a run's own files**: a path inside a run folder (one holding ``run.db``) or a
  comparison folder whose first part is a name the run writes (``run.db``, ``summary.json``,
  ``findings/``, ``run.lock``, ...) is refused, whatever the command;
- **never into a non-empty folder fairprobe did not create**: a folder output (a trained model) that
  already holds files and no ``.fairprobe-written`` manifest is refused unless ``--overwrite``; even
  then only the names fairprobe writes are written, and one of those that fairprobe did not write
  is refused, never replaced.

A folder fairprobe creates gets the manifest (:func:`claim_output_folder`) before its files are
written, so a later command knows which files are its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from fairprobe.errors import UsageError

MANIFEST = ".fairprobe-written"
"""Names fairprobe wrote into a folder outside a run (the same file a comparison folder keeps)."""


def _run_owned_names() -> frozenset[str]:
    from fairprobe.report.findings_view import VIEW_DIR
    from fairprobe.run.folder import _STORE_FILES, RUN_ARTEFACTS

    exports = {f"findings.{fmt}" for fmt in ("jsonl", "csv", "parquet")}
    return frozenset({*_STORE_FILES, *RUN_ARTEFACTS, VIEW_DIR, *exports, "summary.md", MANIFEST})


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _listed(folder: Path) -> set[str]:
    try:
        names = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return {n for n in names if isinstance(n, str)} if isinstance(names, list) else set()


def run_file_owner(path: Path) -> Path | None:
    """The run (or comparison) folder whose own file ``path`` is, else ``None``: ``path`` lies in a
    folder holding ``run.db`` (or a comparison's manifest) under a name such a folder writes."""
    real = _real(path)
    owned = _run_owned_names()
    for folder in real.parents:
        if not _is_run_folder(folder):
            continue
        first = real.relative_to(folder).parts[0]
        if first in owned or first in _listed(folder):
            return folder
    return real if _is_run_folder(real) else None


def _is_run_folder(folder: Path) -> bool:
    """A run folder (``run.db``) or a comparison folder (a manifest that lists ``summary.json``)."""
    return (folder / "run.db").is_file() or "summary.json" in _listed(folder)


def _refuse_run_file(path: Path, option: str) -> None:
    owner = run_file_owner(path)
    if owner is not None:
        raise UsageError(
            f"{option} {path} is a file of the fairprobe run in {owner}; writing it would destroy that "
            "run's results: give a path outside the run folder (or a name the run does not write)"
        )


def check_output_file(path: Path, option: str) -> Path:
    """An output file, checked before any work: not empty, not a folder, not under a file, in a
    writable folder (:func:`fairprobe.data.readers.check_output_file`), and never a run's own file."""
    from fairprobe.data.readers import check_output_file as check_writable

    check_writable(path, option)
    _refuse_run_file(path, option)
    return path


def check_output_folder(path: Path, option: str, writes: Iterable[str], *, overwrite: bool = False) -> Path:
    """An output folder that will receive the entries ``writes``, checked before any work.

    Refused: a run (or comparison) folder or a folder inside one's own files; a non-empty folder
    with no fairprobe manifest unless ``overwrite``; and, even with ``overwrite``, a folder holding
    an entry of a name in ``writes`` that fairprobe did not write there (it is never replaced)."""
    from fairprobe.data.readers import check_output_dir

    check_output_dir(path, option)
    if _is_run_folder(_real(path)):
        raise UsageError(
            f"{option} {path} is a fairprobe run folder; give a new or empty folder (its results "
            "would be mixed with or replaced by these files)"
        )
    _refuse_run_file(path, option)
    if not path.is_dir():
        return path
    mine = _listed(path)
    entries = sorted(p.name for p in path.iterdir() if p.name != MANIFEST)
    foreign = [n for n in entries if n not in mine]
    if not foreign:
        return path
    if not overwrite:
        raise UsageError(
            f"{option} {path} is not empty and was not created by fairprobe (it has {foreign[0]!r}"
            f"{f' and {len(foreign) - 1} more' if len(foreign) > 1 else ''}); give a new or empty folder, "
            "or pass --overwrite to write beside those files (fairprobe never replaces files it did not write)"
        )
    clash = [n for n in foreign if n in set(writes)]
    if clash:
        raise UsageError(
            f"{option} {path / clash[0]} exists and was not written by fairprobe; move or rename it "
            "(--overwrite replaces only what fairprobe wrote), or give another folder"
        )
    return path


def claim_output_folder(path: Path, writes: Iterable[str]) -> Path:
    """Create ``path`` if needed and record ``writes`` in its manifest, before they are written."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        names = sorted(_listed(path) | set(writes))
        (path / MANIFEST).write_text(json.dumps(names), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write to {path}: {exc.strerror}; give another folder") from None
    return path


__all__ = ["MANIFEST", "check_output_file", "check_output_folder", "claim_output_folder", "run_file_owner"]
