"""One tiny Adult model (and its no-pre-training twin) per test session, trained through the real CLI.

Sizes are cut down (800 sentences, 2 blocks, 2 epochs, short pre-training) so the whole package's
tests run in well under two minutes on two cores; the recipe is the real one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from runshared import built_once, run_root

from fairprobe.methods.certify import lexicon

FAST = [
    "--blocks",
    "2",
    "--epochs",
    "2",
    "--train-limit",
    "800",
    "--pretrain-epochs",
    "20",
    "--semantic-epochs",
    "3",
    "--semantic-pairs",
    "800",
    "--pretrain-final-epochs",
    "2",
    "--threads",
    "1",
]


def train_cli(out: Path, *extra: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "fairprobe"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    args = [str(exe), "certify", "train", "--out", str(out), *FAST, *extra]
    if not lexicon.wordnet_available():
        args.append("--no-wordnet")
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)


def _build_tiny_model(folder: Path) -> None:
    r = train_cli(folder / "adult", "--task", "adult-gender", "--ablation")
    assert r.returncode == 0, r.stderr[-2000:]
    (folder / "train.stderr").write_text(r.stderr)  # the progress lines (test_progress.py)


def _build_in_background(root: Path) -> None:
    try:
        built_once(root, "certify-adult", _build_tiny_model)
    except BaseException:  # noqa: BLE001 - the fixture builds again and reports the failure
        pass


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start training the tiny model (~26 s of CPU) on a background thread as soon as the run knows
    a test needs it, so no worker sits waiting for it when its first certificate test starts (the
    files that use it are not handed out first: tests/suite_order.py)."""
    if any("tiny_model" in getattr(item, "fixturenames", ()) for item in session.items):
        root = run_root(session.config._tmp_path_factory)  # type: ignore[attr-defined]
        threading.Thread(target=_build_in_background, args=(root,), daemon=True).start()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """Trained once per test run: the xdist workers share it (read-only) through the run's temp root."""
    return built_once(run_root(tmp_path_factory), "certify-adult", _build_tiny_model) / "adult"


@pytest.fixture(scope="session")
def loaded(tiny_model):
    from fairprobe.methods.certify.model import load_model

    return load_model(tiny_model)
