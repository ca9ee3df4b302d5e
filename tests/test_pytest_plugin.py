"""The pytest plugin (``fairprobe_run`` fixture, ``@pytest.mark.fairprobe``) run by a real inner pytest
session (``pytester``) over real HInter runs of planted ``py:`` classifiers: a fair one passes, one
that reads "she" as negative fails the test with its reason in the output.

Both ways of loading the plugin are checked: ``-p fairprobe.pytest_plugin`` (a checkout, nothing
installed) and the ``pytest11`` entry point (what ``pip install fairprobe`` gives)."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest
from childenv import pythonpath
from planted_classifiers import BIASED, DATA, FAIR

pytest_plugins = ["pytester"]

SPEC = """\
hinter:
  model: py:{model}:classify
  data: data.csv
  attributes: [gender]
  order: 1
  thresholds: ["error_rate.atomic>0"]
"""
TESTS = """
import pytest


def test_fixture_fair(fairprobe_run):
    run = fairprobe_run(technique="hinter", model="py:fairmodel:classify", data="data.csv",
                        attributes=["gender"], order=1, fail_on=["error_rate.atomic>0"])
    assert run.verdict == "pass" and run.metrics["error_rate"]["atomic_n"] > 0


def test_fixture_biased(fairprobe_run):
    fairprobe_run(technique="hinter", model="py:biasedmodel:classify", data="data.csv",
                  attributes=["gender"], order=1, fail_on=["error_rate.atomic>0"])


def test_fixture_spec_fair(fairprobe_run):
    runs = fairprobe_run("fair.yaml")
    assert [r.verdict for r in runs] == ["pass"]


@pytest.mark.fairprobe(spec="fair.yaml")
def test_marker_fair():
    pass


@pytest.mark.fairprobe(spec="biased.yaml")
def test_marker_biased():
    pass
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("FAIRPROBE_CACHE", str(pytester.path / "cache.db"))
    pytester.makepyfile(fairmodel=FAIR, biasedmodel=BIASED, test_fairness=TESTS)
    (pytester.path / "data.csv").write_text(DATA, encoding="utf-8")
    (pytester.path / "fair.yaml").write_text(SPEC.format(model="fairmodel"), encoding="utf-8")
    (pytester.path / "biased.yaml").write_text(SPEC.format(model="biasedmodel"), encoding="utf-8")
    return pytester


def _check(result: pytest.RunResult) -> None:
    result.assert_outcomes(passed=3, failed=2)
    out = result.stdout.str()
    assert "FAILED test_fairness.py::test_fixture_biased" in out
    assert "FAILED test_fairness.py::test_marker_biased" in out
    # the reason in words, not a traceback of fairprobe's internals
    result.stdout.fnmatch_lines(
        [
            "*fairprobe run hinter: fail (report: *report.html)*",
            "*the model changed its answer for * single-substitution mutants*above the 0% gate*",
        ]
    )
    assert "Traceback" not in out


def test_plugin_loaded_with_dash_p(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # In a child process: an in-process session unloads the modules first imported inside it (pandas,
    # spaCy's registry), and a later test of the same worker then fails to re-import them.
    monkeypatch.setenv("PYTHONPATH", pythonpath(project.path))
    _check(project.runpytest_subprocess("-p", "fairprobe.pytest_plugin", "-p", "no:cacheprovider"))


def test_plugin_loaded_by_its_entry_point(
    project: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the ``pytest11`` entry point in a child pytest, with no ``-p``. A checkout not yet
    re-installed (its package metadata predates the entry point) gets the same entry point from a
    minimal distribution written here, so the discovery path is still the real one."""
    env_path = project.path
    if not any(ep.value == "fairprobe.pytest_plugin" for ep in entry_points(group="pytest11")):
        meta = tmp_path / "site" / "fairprobe_pytest_entry-0.dist-info"
        meta.mkdir(parents=True)
        (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: fairprobe-pytest-entry\nVersion: 0\n")
        (meta / "entry_points.txt").write_text(
            "[pytest11]\nfairprobe.pytest_plugin = fairprobe.pytest_plugin\n", encoding="utf-8"
        )
        env_path = tmp_path / "site"
    monkeypatch.setenv("PYTHONPATH", pythonpath(Path(env_path)))
    _check(project.runpytest_subprocess("-p", "no:cacheprovider"))


INCONCLUSIVE_TESTS = """
import fairprobe


def test_fair_model_on_three_texts(fairprobe_run):
    fairprobe_run(technique="hinter", model="py:fairmodel:classify", data="data.csv",
                  attributes=["gender"], order=1)


def test_the_api_says_the_same(tmp_path):
    run = fairprobe.hinter(model="py:fairmodel:classify", data="data.csv", attributes=["gender"],
                           order=1, out=tmp_path / "api")
    assert run.verdict == "inconclusive" and run.passed is False
    accepted = fairprobe.hinter(model="py:fairmodel:classify", data="data.csv", attributes=["gender"],
                                order=1, out=tmp_path / "api", accept_untested=True)
    assert accepted.verdict == "pass" and accepted.passed is True
    assert accepted.summary["notes"][0].startswith("pass accepted on the shown attributes only")
"""


def test_an_inconclusive_run_fails_the_test_with_the_missing_evidence(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39: a fair model on 3 texts shows nothing within the 5% gate: the default gates make the
    run inconclusive, and a fairprobe test fails with what evidence is missing and how many texts a
    pass would need; ``run.passed`` is false, and ``accept_untested=True`` is the explicit way out."""
    monkeypatch.setenv("FAIRPROBE_CACHE", str(pytester.path / "cache.db"))
    pytester.makepyfile(fairmodel=FAIR, test_inconclusive=INCONCLUSIVE_TESTS)
    (pytester.path / "data.csv").write_text(DATA, encoding="utf-8")
    # in a child process: the inner session imports pandas, which an in-process run would unload
    monkeypatch.setenv("PYTHONPATH", pythonpath(pytester.path))
    result = pytester.runpytest_subprocess("-p", "fairprobe.pytest_plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*fairprobe run hinter: inconclusive (report: *report.html)*",
            "*not enough evidence that gender is within the 5% gate: *texts would be needed*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
