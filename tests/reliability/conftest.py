"""Fixtures of the reliability suite: a tiny labelled CSV and `py:` models written into tmp_path.

Every test runs the real `fairprobe` executable (the ``cli`` fixture of ``tests/conftest.py``) or
the real store/backends; faults that cannot be produced otherwise use FAKE servers, named so."""

from __future__ import annotations

from pathlib import Path

import pytest

CSV = "id,text,label\n" + "".join(
    f"r{i},{'a good film' if i % 2 else 'a bad film'} number {i},{'POS' if i % 2 else 'NEG'}\n"
    for i in range(6)
)

KEYWORD_MODEL = """
def classify(texts):
    return ["NEG" if "bad" in t else "POS" for t in texts]
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "data.csv").write_text(CSV, encoding="utf-8")
    (tmp_path / "kw.py").write_text(KEYWORD_MODEL, encoding="utf-8")
    return tmp_path
