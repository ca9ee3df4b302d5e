"""Model code cannot end fairprobe (issue 40): ``sys.exit`` or a ``KeyboardInterrupt`` raised by an
in-process model, in its call or at its import, is an error of that model: exit 2, one line, the run
``incomplete`` with its reports (a CI job reads junit.xml, never a green nothing). A ``py:`` module
is imported with a clean ``sys.argv``: fairprobe's options are not the model's to parse."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from reliability.helpers import assert_one_red_line

MODELS = {
    "exit_in_call": "import sys\ndef classify(texts):\n    sys.exit(0)\n",
    "exit_at_import": "import sys\nsys.exit(0)\ndef classify(texts):\n    return ['POS'] * len(texts)\n",
    "interrupt_in_call": "def classify(texts):\n    raise KeyboardInterrupt\n",
}

ARGPARSE_MODEL = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--threshold", type=float, default=0.5)
ARGS = parser.parse_args()  # reads sys.argv: fairprobe's own options would stop it with a usage line
def classify(texts):
    return ["NEG" if "bad" in t else "POS" for t in texts]
"""


def _spec(work: Path, module: str) -> str:
    (work / "spec.yaml").write_text(
        f"accuracy:\n  model: py:{module}:classify\n  data: data.csv\n", encoding="utf-8"
    )
    return "spec.yaml"


@pytest.mark.parametrize("module", ["exit_in_call", "interrupt_in_call"])
def test_a_model_that_exits_in_its_call_fails_the_run_with_its_reports(cli, work: Path, module: str):
    (work / f"{module}.py").write_text(MODELS[module], encoding="utf-8")
    r = cli("run", _spec(work, module), "--out", "runs")
    line = assert_one_red_line(r, f"py:{module}:classify")
    assert "sys.exit(0)" in line or "KeyboardInterrupt" in line
    run = work / "runs" / "accuracy"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["verdict"] == "incomplete" and summary["passed"] is False
    suite = ET.parse(run / "junit.xml").getroot()
    assert int(suite.get("errors")) == 1 and "incomplete" in suite.find(".//error").get("message")


def test_a_model_that_exits_at_import_is_one_line_and_exit_2(cli, work: Path):
    (work / "exit_at_import.py").write_text(MODELS["exit_at_import"], encoding="utf-8")
    r = cli("run", _spec(work, "exit_at_import"), "--out", "runs")
    assert_one_red_line(r, "importing 'exit_at_import'", "sys.exit(0)")


def test_a_model_module_that_parses_sys_argv_sees_a_clean_one(cli, work: Path):
    (work / "argparse_model.py").write_text(ARGPARSE_MODEL, encoding="utf-8")
    r = cli("run", _spec(work, "argparse_model"), "--out", "runs")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "usage:" not in r.stderr.lower()
    assert json.loads((work / "runs" / "accuracy" / "summary.json").read_text())["findings"] == 6
