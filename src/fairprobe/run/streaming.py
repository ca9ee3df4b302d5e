"""An output JSONL file written record by record, so long generation is never lost (DESIGN.md §4).

Generators (``metafair generate``, ``caffe generate``) run for minutes to hours. Each finished record
is appended with one ``write`` and a flush: a killed run leaves a valid file of every record made so
far, and a re-run reads them back (:attr:`AppendLog.existing`) and skips that work. A line cut off by
the kill (no final newline) is dropped when the file is opened again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any


def in_flight(chat: object) -> int:
    """How many requests a generator sends together before writing what they made: as many as the
    backend answers at once (an HTTP model's ``concurrency``), 1 for an in-process model."""
    inner = getattr(chat, "inner", chat)  # a CachedChatModel's model
    return max(1, int(getattr(inner, "concurrency", 1) or 1))


class AppendLog:
    """``with AppendLog(path, fresh=False) as log: log.existing ...; log.write(record)``.

    Args:
        path: the JSONL file; created with its parent folders when missing.
        fresh: start an empty file even when one exists (``--overwrite``).
    """

    def __init__(self, path: str | Path, *, fresh: bool = False):
        self.path = Path(path)
        self.existing: list[dict[str, Any]] = []
        """Records already in the file (complete JSON-object lines), in file order."""
        self.dropped = 0
        """Lines of the existing file that were not a complete JSON object (kept in the file as they are,
        except a cut-off last line, which is removed)."""
        self._fh: IO[str] | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if fresh or not self.path.is_file():
            self.path.write_text("", encoding="utf-8")
            return
        text = self.path.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):  # the last write was cut off by a kill
            text = text[: text.rfind("\n") + 1]
            self.dropped += 1
            self.path.write_text(text, encoding="utf-8")
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                self.dropped += 1
                continue
            if isinstance(record, dict):
                self.existing.append(record)
            else:
                self.dropped += 1

    def __enter__(self) -> AppendLog:
        self._fh = self.path.open("a", encoding="utf-8")
        return self

    def write(self, record: dict[str, Any]) -> None:
        """Append one record as one line, flushed to the OS at once."""
        assert self._fh is not None, "use AppendLog as a context manager"
        self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._fh.flush()

    def rewrite(self, records: list[dict[str, Any]]) -> None:
        """Replace the file's content by ``records`` atomically (write a temporary file, then rename)."""
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        if self._fh is not None:
            self._fh.close()
        os.replace(tmp, self.path)
        self.existing = list(records)
        if self._fh is not None:
            self._fh = self.path.open("a", encoding="utf-8")

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
