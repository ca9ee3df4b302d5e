"""The suite's files are handed out longest first (tests/suite_order.py); a real pytest session on a
few small files (pytester, in process) shows the order it collects them in."""

from __future__ import annotations

import pytest
import suite_order

pytest_plugins = ["pytester"]

CONFTEST = """
import pytest
pytest_plugins = ["suite_order"]

@pytest.fixture
def tiny_model():
    return "built"
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_a="def test_a1():\n    pass\n\ndef test_a2():\n    pass\n",
        test_b="def test_b1():\n    pass\n",
        test_c="def test_c1(tiny_model):\n    pass\n",
        test_d="def test_d1():\n    pass\n",
        test_e="def test_e1():\n    pass\n",
    )
    return pytester


def _collected(pytester: pytest.Pytester) -> list[str]:
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    return [line for line in result.outlines if "::" in line]


def test_files_are_collected_longest_first_and_keep_their_tests_in_order(project, monkeypatch):
    monkeypatch.setattr(suite_order, "COSTS", {"test_b.py": 30.0, "test_a.py": 10.0, "test_e.py": 20.0})
    monkeypatch.setattr(suite_order, "BUILT_IN_BACKGROUND", {})
    assert _collected(project) == [
        "test_b.py::test_b1",
        "test_e.py::test_e1",
        "test_a.py::test_a1",
        "test_a.py::test_a2",
        "test_c.py::test_c1",  # not measured: after the measured ones, in collection order
        "test_d.py::test_d1",
    ]


def test_a_file_using_a_fixture_built_in_the_background_waits_for_its_head_start(project, monkeypatch):
    costs = {"test_c.py": 50.0, "test_a.py": 10.0, "test_b.py": 8.0, "test_d.py": 5.0, "test_e.py": 1.0}
    monkeypatch.setattr(suite_order, "COSTS", costs)
    monkeypatch.setattr(suite_order, "BUILT_IN_BACKGROUND", {"tiny_model": 15.0})
    files = [line.split("::")[0] for line in _collected(project)]
    # the longest file uses the model: it comes once 18 s of other files (a, b) are handed out
    assert list(dict.fromkeys(files)) == ["test_a.py", "test_b.py", "test_c.py", "test_d.py", "test_e.py"]


def test_costs_are_read_from_the_durations_lines():
    text = """
============================= slowest durations =============================
29.00s setup    tests/methods/certify/test_pipeline.py::test_summary_has_the_issue_metrics
1.50s call     tests/methods/certify/test_pipeline.py::test_rerun_resumes_without_reverifying
0.25s teardown tests/core/test_store.py::test_x[a::b]
(3 durations < 0.005s hidden.  Use -vv to show these durations.)
"""
    assert suite_order.costs_from_durations(text) == {
        "tests/methods/certify/test_pipeline.py": 30.5,
        "tests/core/test_store.py": 0.25,
    }
