"""Things a test run builds once and every pytest-xdist worker shares: a folder under the run's temp root.

Under xdist each worker has its own temp folder (``.../pytest-N/popen-gw0``); their parent is the
run's root, shared by the workers and fresh for every run. :func:`built_once` builds a folder there
under a file lock: the first worker to ask builds it, the others wait for it and then read it. Used
for fixtures that train a model (the certificates' tiny model, ~26 s of CPU), so two workers never
train the same model twice. What is built must be read-only for the tests that use it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock


def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temp folder of the whole test run: shared by the xdist workers, this process's own otherwise."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(root: Path, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``root/shared-<name>``, filled by ``build(folder)`` once: ``root`` is
    :func:`run_root` for a fixture built once per test run.

    A build that raises leaves no folder behind (the next worker to ask builds it again and sees the
    same error), so a failure is reported by every test that needs it, never hidden by a half-built
    folder."""
    folder = root / f"shared-{name}"
    done = root / f"shared-{name}.done"
    with FileLock(str(root / f"shared-{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            try:
                build(folder)
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
            done.touch()
    return folder
