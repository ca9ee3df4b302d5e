"""findings.jsonl, summary.json and junit.xml writers."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from fairprobe.report.sections import NO_DATA, Group


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _temp_for(path: Path) -> tuple[int, str]:
    """A temporary file beside ``path`` with the permissions a plain ``open`` would give."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.chmod(tmp, 0o666 & ~_umask())
    return fd, tmp


def is_temp_of(name: str, outputs: Iterable[str]) -> bool:
    """Whether ``name`` is a temporary file of one of ``outputs`` (``.report.html.k2j4_x9q``, or
    export's ``.findings.csv.<pid>.tmp``): left behind only by a writer killed before its rename."""
    return name.startswith(".") and any(name.startswith(f".{o}.") for o in outputs)


def remove_stale_temps(folder: Path, outputs: Iterable[str]) -> list[str]:
    """Remove the temporary files of ``outputs`` in ``folder`` (call it holding the folder's lock, so
    no live writer owns them); returns their names."""
    outputs = tuple(outputs)
    removed = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for p in entries:
        if is_temp_of(p.name, outputs) and p.is_file() and not p.is_symlink():
            p.unlink(missing_ok=True)
            removed.append(p.name)
    return removed


_OWN_IN_FOLDER = re.compile(
    r"^\.?(shard-\d+\.parquet|part-\d+\.parquet|index\.js|chunk-\d+\.js|manifest\.json)(\..*)?$"
)
"""What fairprobe writes inside ``findings/`` and ``report-findings/`` (and their temporary files)."""


def remove_own_files(folder: Path) -> None:
    """Empty a folder fairprobe wrote (``findings/``, ``report-findings/``) of its own files only, and
    remove it when nothing else is left: a file of yours put there is kept, never deleted."""
    for path in sorted(folder.iterdir()):
        if _OWN_IN_FOLDER.match(path.name) and (path.is_file() or path.is_symlink()):
            path.unlink()
    try:
        folder.rmdir()
    except OSError:  # not empty: the user's files stay
        pass


def atomic_write(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a reader never sees a half-written report."""
    fd, tmp = _temp_for(path)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def write_findings(path: Path, findings: Iterable[dict[str, Any]]) -> int:
    """One JSON object per line, in the order findings were recorded. Returns the count."""
    return write_json_lines(path, (json.dumps(f, ensure_ascii=False) for f in findings))


def write_json_lines(path: Path, lines: Iterable[str]) -> int:
    """Already-encoded JSON lines, streamed to a temporary file and renamed. Returns the count."""
    fd, tmp = _temp_for(path)
    n = 0
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line)
            fh.write("\n")
            n += 1
    os.replace(tmp, path)
    return n


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")


def write_junit(path: Path, summary: dict[str, Any], groups: list[Group]) -> None:
    """One testcase per finding group plus one per threshold; failures where thresholds fail."""
    failing = [t for t, r in summary["thresholds"].items() if not r["passed"]]
    failing_metrics = {summary["thresholds"][t]["metric"]: t for t in failing}
    suite_name = f"fairprobe.{summary['technique']}.{summary.get('name', summary['technique'])}"
    suite = ET.Element("testsuite", name=suite_name)
    cases = 0
    failures = 0
    for group in groups:
        case = ET.SubElement(suite, "testcase", classname=suite_name, name=group.name)
        cases += 1
        hit = [
            failing_metrics[m]
            for m in failing_metrics
            if any(m == p or m.startswith(p + ".") for p in group.metric_prefixes)
        ]
        if hit:
            failures += 1
            fail = ET.SubElement(case, "failure", message="; ".join(hit))
            fail.text = "\n".join(f"{t}: actual {summary['thresholds'][t]['actual']}" for t in hit)
        out = ET.SubElement(case, "system-out")
        out.text = f"{group.count} findings. {group.detail}".strip()
    for text, result in summary["thresholds"].items():
        case = ET.SubElement(suite, "testcase", classname=f"{suite_name}.thresholds", name=text)
        cases += 1
        if not result["passed"]:
            failures += 1
            fail = ET.SubElement(case, "failure", message=result.get("reason") or f"{text} holds")
            actual = NO_DATA if result["actual"] is None else result["actual"]
            fail.text = f"actual {result['metric']} = {actual}"
    # The verdict itself: an inconclusive run (no data, too many INVALID answers) fails CI too.
    verdict = summary.get("verdict", "pass" if summary.get("passed") else "fail")
    shown = "measured (no fairness gate)" if verdict == "measured" else verdict
    case = ET.SubElement(suite, "testcase", classname=f"{suite_name}.verdict", name=f"verdict: {shown}")
    cases += 1
    errors = 0
    if verdict == "incomplete":  # the run did not finish: an error, not a test result
        errors += 1
        fail = ET.SubElement(case, "error", message="incomplete run")
        fail.text = "\n".join(summary.get("reasons", []))
    elif verdict == "measured":  # no fail condition at all: says so, fails nothing
        ET.SubElement(case, "system-out").text = "measured (no fairness gate): " + "\n".join(
            summary.get("reasons", [])
        )
    elif verdict != "pass":
        failures += 1
        fail = ET.SubElement(case, "failure", message=verdict)
        fail.text = "\n".join(summary.get("reasons", []))
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suites = ET.Element("testsuites", tests=str(cases), failures=str(failures), errors=str(errors))
    suites.append(suite)
    ET.indent(suites)
    atomic_write(
        path, '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )
