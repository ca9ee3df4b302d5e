"""pytest plugin: in CI a skipped test fails the run unless it is on the reviewed list of expected skips.

A skip hides a test that did not run; on a fresh machine ``make test`` installs everything the
suite needs (WordNet, Chromium, the model packages), so a skip there means the install step or a
test is broken. The list (``tests/expected_skips.txt`` unless the ini option
``expected_skips_file`` says otherwise) holds one expected skip a line::

    tests/path/test_file.py::test_name  |  why it may skip (for example: needs a GPU)

The test id may be an ``fnmatch`` pattern (``tests/gpu/*``); the reason is required. ``#`` starts a
comment. The check is on when the environment variable ``CI`` is true (``.ci/run`` sets it) or with
``--strict-skips``. Then an unexpected skip turns the exit status into 1 (tests failed) and the
summary at the end names it with its skip reason; the expected skips are printed in every case. It
works under pytest-xdist: the controller sees every worker's reports.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

DEFAULT_FILE = "tests/expected_skips.txt"


@dataclass(frozen=True)
class Expected:
    pattern: str
    reason: str
    line: int


class ListError(ValueError):
    """The expected-skips list has a line without a test id or without a reason."""


def parse_list(text: str, source: str = DEFAULT_FILE) -> list[Expected]:
    """The entries of an expected-skips list; a malformed line raises :class:`ListError`."""
    entries = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        pattern, sep, reason = (part.strip() for part in line.partition("|"))
        if not sep or not pattern or not reason:
            raise ListError(
                f"{source}:{n}: write 'TEST_ID | REASON' (the reason is required): {raw.strip()!r}"
            )
        entries.append(Expected(pattern, reason, n))
    return entries


def strict_from_env() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes", "on"}


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
        return reason.removeprefix("Skipped: ")
    return str(longrepr)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--strict-skips",
        action="store_true",
        dest="strict_skips",
        default=None,
        help="fail the run on a skip that is not on the expected-skips list (on by default when CI=true)",
    )
    parser.addoption("--no-strict-skips", action="store_false", dest="strict_skips", help="turn it off")
    parser.addini("expected_skips_file", "the reviewed list of expected skips", default=DEFAULT_FILE)


class SkipCheck:
    def __init__(self, config: pytest.Config):
        self.config = config
        option = config.getoption("strict_skips")
        self.strict = strict_from_env() if option is None else bool(option)
        self.path = Path(config.rootpath, config.getini("expected_skips_file"))
        self.expected = parse_list(self.path.read_text(), str(self.path)) if self.path.is_file() else []
        self.skips: dict[str, str] = {}  # node id -> skip reason
        self.unexpected: dict[str, str] = {}

    def _record(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        if report.skipped and not hasattr(report, "wasxfail"):
            self.skips.setdefault(report.nodeid, _skip_reason(report))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._record(report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self._record(report)

    def match(self, nodeid: str) -> Expected | None:
        for entry in self.expected:
            if fnmatch.fnmatchcase(nodeid, entry.pattern) or nodeid == entry.pattern:
                return entry
        return None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.unexpected = {n: r for n, r in self.skips.items() if self.match(n) is None}
        if self.strict and self.unexpected and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        tr = terminalreporter
        where = self.path.relative_to(self.config.rootpath) if self.path.is_file() else self.path
        tr.section("expected skips", sep="-")
        if not self.expected:
            tr.write_line(f"none listed in {where}")
        for entry in self.expected:
            hits = sum(1 for n in self.skips if fnmatch.fnmatchcase(n, entry.pattern) or n == entry.pattern)
            tr.write_line(f"{entry.pattern}  ({hits} skipped in this run): {entry.reason}")
        if self.unexpected:
            verdict = "FAIL the run" if self.strict else "would fail the run in CI (CI=true)"
            tr.section(f"unexpected skips: {len(self.unexpected)}, {verdict}", sep="-", red=True, bold=True)
            for nodeid, reason in sorted(self.unexpected.items()):
                tr.write_line(f"{nodeid}: {reason}")
            tr.write_line(f"Install what they need (`make install`), or add them with a reason to {where}.")


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: the controller checks the whole run
        return
    try:
        check = SkipCheck(config)
    except ListError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.pluginmanager.register(check, "expected_skips_check")
