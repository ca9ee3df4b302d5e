"""fairprobe as a pytest plugin: fairness checks that fail a test with the run's reasons.

Registered through the ``pytest11`` entry point (installed with fairprobe; without installing, load it
with ``pytest -p fairprobe.pytest_plugin``)::

    def test_sentiment_is_fair(fairprobe_run):
        fairprobe_run(technique="hinter", model="py:mymodel:classify", data="texts.csv",
                      attributes=["gender"], order=1, fail_on=["error_rate.atomic>0.1"])

    @pytest.mark.fairprobe(spec="fairprobe.yaml")
    def test_spec_passes():
        pass

A run whose verdict is not ``pass`` (a fail condition holds, too many INVALID answers, nothing
tested) fails the test with one line per reason; the report's path is in the message.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from fairprobe.api import Run


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fairprobe(spec=PATH, out=None): run the spec file's blocks before the test and fail it "
        "unless every run passes",
    )


def _fail_unless_passed(runs: list[Run]) -> None:
    """``pytest.fail`` naming each run that did not pass, its verdict, reasons and report."""
    lines = []
    for run in runs:
        if run.passed:
            continue
        name = run.summary.get("name") or run.run_dir.name
        lines.append(f"fairprobe run {name}: {run.verdict} (report: {run.report})")
        lines += [f"  {reason}" for reason in run.reasons] or ["  (no reason recorded)"]
    if lines:
        pytest.fail("\n".join(lines), pytrace=False)


def _runner(base: Path) -> Callable[..., Run | list[Run]]:
    def run(spec: str | Path | None = None, *, technique: str | None = None, **options: Any) -> Any:
        """``run("spec.yaml")`` runs every block of a spec (a list of runs); ``run(technique="hinter",
        **fields)`` runs one block (a run). Either fails the test unless every run passed."""
        from fairprobe import api

        if (spec is None) == (technique is None):
            raise TypeError("fairprobe_run: give a spec path or technique=NAME, not both")
        if spec is not None:
            out = options.pop("out", None)
            overwrite = options.pop("overwrite", False)
            if options:
                raise TypeError(f"fairprobe_run(spec): unexpected options {', '.join(sorted(options))}")
            runs = api.run_spec(spec, out=base if out is None else out, overwrite=overwrite)
            _fail_unless_passed(runs)
            return runs
        options.setdefault("out", base / str(technique))
        result = api.technique_function(str(technique))(**options)
        _fail_unless_passed([result])
        return result

    return run


@pytest.fixture
def fairprobe_run(tmp_path: Path) -> Callable[..., Any]:
    """Run fairprobe blocks into ``tmp_path/fairprobe`` (or ``out=``) and fail the test unless they
    pass; returns the :class:`~fairprobe.api.Run` (or the list of runs of a spec)."""
    return _runner(tmp_path / "fairprobe")


_SPEC_RUN = pytest.StashKey[tuple[Path, Path]]()


@pytest.fixture(autouse=True)
def _fairprobe_marker(request: pytest.FixtureRequest) -> None:
    """``@pytest.mark.fairprobe(spec=PATH, out=None)``: where the spec is (a relative path is read
    from the test file's folder) and where it runs (the test's ``tmp_path`` unless ``out``); the run
    itself is part of the test's call (:func:`pytest_runtest_call`), so a biased model is a failed
    test, not a setup error."""
    marker = request.node.get_closest_marker("fairprobe")
    if marker is None:
        return
    spec = marker.kwargs.get("spec") or (marker.args[0] if marker.args else None)
    if spec is None:
        raise pytest.UsageError(f"{request.node.nodeid}: @pytest.mark.fairprobe needs spec=PATH")
    path = Path(spec)
    if not path.is_absolute():
        path = Path(request.node.path).parent / path
    out = marker.kwargs.get("out")
    base = Path(out) if out else request.getfixturevalue("tmp_path") / "fairprobe"
    request.node.stash[_SPEC_RUN] = (path, base)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """Run a ``@pytest.mark.fairprobe`` spec before the test body; fail the test unless it passes."""
    spec_run = item.stash.get(_SPEC_RUN, None)
    if spec_run is not None:
        path, base = spec_run
        _runner(base)(path)
