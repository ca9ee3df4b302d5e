"""The CI skip check (tests/expected_skips.py): a skip fails a CI run unless the reviewed list has it.

Each case runs a real pytest session (pytester, in process; the xdist case starts 2 workers) on a small test file with the
plugin loaded as the project's conftest loads it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from childenv import pythonpath
from expected_skips import ListError, parse_list

pytest_plugins = ["pytester"]

PLUGIN_DIR = Path(__file__).resolve().parent

TESTS = """
import pytest

def test_runs():
    assert True

def test_needs_gpu():
    pytest.skip("no GPU on this machine")

@pytest.mark.skipif(True, reason="Chromium is not installed")
def test_browser():
    pass

@pytest.mark.xfail(reason="known bug", strict=True)
def test_known_bug():
    assert False
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("PYTHONPATH", pythonpath(PLUGIN_DIR))  # for the subprocess runs
    pytester.makeconftest('pytest_plugins = ["expected_skips"]')
    pytester.makepyfile(test_things=TESTS)
    return pytester


def _expect(pytester: pytest.Pytester, text: str) -> None:
    (pytester.path / "tests").mkdir(exist_ok=True)
    (pytester.path / "tests" / "expected_skips.txt").write_text(text)


def test_outside_ci_a_skip_is_reported_but_does_not_fail(project):
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=2, xfailed=1)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*unexpected skips: 2, would fail the run in CI (CI=true)*",
            "test_things.py::test_browser: Chromium is not installed",
            "test_things.py::test_needs_gpu: no GPU on this machine",
        ]
    )


def test_in_ci_an_unlisted_skip_fails_the_run_and_is_named(project, monkeypatch):
    monkeypatch.setenv("CI", "true")
    _expect(project, "test_things.py::test_needs_gpu | needs a GPU; the CI machine has none\n")
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=2, xfailed=1)  # an xfail is not a skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*expected skips*",
            "test_things.py::test_needs_gpu  (1 skipped in this run): needs a GPU; the CI machine has none",
            "*unexpected skips: 1, FAIL the run*",
            "test_things.py::test_browser: Chromium is not installed",
        ]
    )


def test_in_ci_listed_skips_pass_and_are_printed_at_the_end(project, monkeypatch):
    monkeypatch.setenv("CI", "true")
    _expect(
        project, "# reviewed\ntest_things.py::test_needs_gpu | needs a GPU\ntest_things.py::test_b* | demo\n"
    )
    result = project.runpytest("-p", "no:cacheprovider")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*expected skips*", "*test_needs_gpu  (1 skipped in this run): needs a GPU"])
    result.stdout.no_fnmatch_line("*unexpected skips*")


def test_a_failing_test_keeps_its_exit_status(project, monkeypatch):
    monkeypatch.setenv("CI", "true")
    project.makepyfile(test_broken="def test_x():\n    assert False\n")
    result = project.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_the_option_turns_the_check_on_and_off(project, monkeypatch):
    assert project.runpytest("-p", "no:cacheprovider", "--strict-skips").ret == 1
    monkeypatch.setenv("CI", "true")
    assert project.runpytest("-p", "no:cacheprovider", "--no-strict-skips").ret == 0


def test_a_skip_at_collection_counts_too(project, monkeypatch):
    monkeypatch.setenv("CI", "true")
    project.makepyfile(test_module='import pytest\npytest.importorskip("no_such_module_here")\n')
    _expect(project, "test_things.py::* | demo\n")
    result = project.runpytest("-p", "no:cacheprovider")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["test_module.py: could not import 'no_such_module_here'*"])


def test_the_check_works_under_xdist(project, monkeypatch):
    pytest.importorskip("xdist")
    monkeypatch.setenv("CI", "true")
    _expect(project, "test_things.py::test_needs_gpu | needs a GPU\n")
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*unexpected skips: 1, FAIL the run*", "test_things.py::test_browser: *"])


def test_a_list_line_without_a_reason_is_an_error():
    assert parse_list("# c\n\ntests/a.py::t | GPU only  # note\n") == [
        type(parse_list("x | y")[0])("tests/a.py::t", "GPU only", 3)
    ]
    with pytest.raises(ListError, match=r"list.txt:2: write 'TEST_ID \| REASON'"):
        parse_list("a | b\ntests/a.py::t\n", "list.txt")


def test_a_malformed_list_stops_the_run_with_one_line(project):
    _expect(project, "test_things.py::test_needs_gpu\n")
    result = project.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*expected_skips.txt:1: write 'TEST_ID | REASON'*"])
