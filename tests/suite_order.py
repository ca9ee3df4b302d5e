"""pytest plugin: the test files run longest first, so that the xdist workers finish together.

``make test`` runs ``pytest -n JOBS --dist loadfile --no-loadscope-reorder``: xdist hands a worker
the next file, in collection order, whenever the worker has two tests or fewer left. Its default
order (``--loadscope-reorder``) is by number of tests, most first, which puts the long end-to-end
files with few tests (the 100,000-finding report, the certificates' pipeline, the Ray cluster, the
SmolLM2 conversations) at the end of the run, where one worker ran them alone while the other had
nothing left to do. Here the files are ordered by :data:`COSTS`, their measured seconds, longest
first (the longest-processing-time rule: what is left at the end is small); files not listed keep
their collection order after the listed ones. Tests inside a file keep their order.

The seconds are the sum of each test's setup, call and teardown (``--durations=0``) on the 2-core
machine. To measure them again (the files, or the whole suite)::

    pytest -q -p no:cacheprovider --durations=0 -n 2 --dist loadfile tests/... > durations.txt
    python tests/suite_order.py durations.txt      # prints COSTS, longest first

A file missing from the table, or a stale number, only makes the order less good, never a test wrong.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict

import pytest

COSTS: dict[str, float] = {
    # The slowest tests of four clean-clone runs of `make test` (2026-11-29, 2 idle cores; the 25
    # durations each run prints), summed per file, the longest of the four for each test. Only the
    # long files need to be here: the rest are short, and come after them in collection order.
    "tests/methods/test_hinter_ray.py": 83.7,
    "tests/methods/audit/test_cli.py": 50.5,
    "tests/methods/certify/test_pipeline.py": 42.6,
    "tests/models/test_gguf_backend.py": 32.7,
    "tests/methods/certify/test_soundness.py": 27.4,
    "tests/methods/metafair/test_judge_controls.py": 26.9,
    "tests/methods/test_hinter_options.py": 25.5,
    "tests/methods/audit/test_compare.py": 22.1,
    "tests/methods/test_compare_techniques.py": 19.7,
    "tests/core/test_findings_view.py": 17.2,
    "tests/reliability/test_output_rule.py": 16.2,
    "tests/core/test_gates.py": 14.6,
    "tests/methods/caffe/test_real_llm.py": 14.4,
    "tests/methods/audit/test_seeds_and_intervals.py": 13.9,
    "tests/methods/test_kill_resume.py": 11.9,
    "tests/oracles/test_llm_judge.py": 11.8,
    "tests/methods/caffe/test_planted.py": 9.9,
    "tests/methods/certify/test_verifier_relaxation.py": 9.2,
    "tests/core/test_compare_words.py": 8.7,
    "tests/methods/test_hinter_template.py": 8.6,
    "tests/outputs/test_threads.py": 8.4,
    # 74 short tests that call the CLI: ~26 CPU-s through the fork helper (tests/forkcli.py), 2026-11-29
    "tests/reliability/test_bad_input_more.py": 26.0,
}
"""Seconds per test file (path from the repository root), measured as the module docstring says."""


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


BUILT_IN_BACKGROUND = {"tiny_model": 160.0}
"""Run-wide fixtures that start building in the background when the collection is done (the
certificates' tiny model, tests/methods/certify/conftest.py), with the seconds of other files
handed out before the first file that uses one, so that no worker waits for the build."""


def file_order(items: list[pytest.Item]) -> list[str]:
    """The files of ``items``, longest first; equal or unknown ones in collection order; a file that
    uses a fixture of :data:`BUILT_IN_BACKGROUND` after that many seconds of other files."""
    files: dict[str, set[str]] = {}
    for item in items:
        files.setdefault(file_of(item.nodeid), set()).update(getattr(item, "fixturenames", ()))
    order = sorted(files, key=lambda f: -COSTS.get(f, 0.0))  # stable: the rest keep their order
    for fixture, head_start in BUILT_IN_BACKGROUND.items():
        users = [f for f in order if fixture in files[f]]
        rest = [f for f in order if fixture not in files[f]]
        done, at = 0.0, 0
        while at < len(rest) and done < head_start:
            done += COSTS.get(rest[at], 0.0)
            at += 1
        order = rest[:at] + sorted(users + rest[at:], key=lambda f: -COSTS.get(f, 0.0))
    return order


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Items grouped by :func:`file_order`; tests inside a file keep their order."""
    rank = {f: i for i, f in enumerate(file_order(items))}
    items.sort(key=lambda item: rank[file_of(item.nodeid)])


def costs_from_durations(text: str) -> dict[str, float]:
    """Seconds per file from pytest's ``--durations`` lines (``12.34s call tests/x.py::test_y``)."""
    totals: dict[str, float] = defaultdict(float)
    for m in re.finditer(r"^\s*([\d.]+)s (?:setup|call|teardown)\s+(\S+)", text, re.M):
        totals[file_of(m.group(2))] += float(m.group(1))
    return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


if __name__ == "__main__":
    merged: dict[str, float] = defaultdict(float)
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as fh:
            for name, seconds in costs_from_durations(fh.read()).items():
                merged[name] += seconds
    print("COSTS: dict[str, float] = {")
    for name, seconds in sorted(merged.items(), key=lambda kv: -kv[1]):
        print(f'    "{name}": {seconds:.1f},')
    print("}")
