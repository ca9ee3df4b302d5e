"""fairprobe from Python (:mod:`fairprobe.api`): functions generated from the technique blocks, the
typed :class:`~fairprobe.Run`, ``run_spec`` and ``compare``, over real runs of planted ``py:``
classifiers (the real spaCy parser for HInter)."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
from planted_classifiers import BIASED, DATA, FAIR

import fairprobe
from fairprobe.api import RUN_OPTIONS, block_fields
from fairprobe.errors import UsageError
from fairprobe.technique.registry import techniques

HINTER = {"data": "data.csv", "attributes": ["gender"], "order": 1}


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAIRPROBE_CACHE", str(tmp_path / "cache.db"))
    (tmp_path / "apifair.py").write_text(FAIR, encoding="utf-8")
    (tmp_path / "apibiased.py").write_text(BIASED, encoding="utf-8")
    (tmp_path / "data.csv").write_text(DATA, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("name", sorted(techniques()))
def test_one_function_per_technique_with_the_blocks_fields(name: str) -> None:
    technique = techniques()[name]
    function = getattr(fairprobe, name)
    params = inspect.signature(function).parameters
    fields = block_fields(technique)
    assert list(params) == [*fields, *RUN_OPTIONS]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    for field_name, info in fields.items():
        expected = (
            inspect.Parameter.empty if info.is_required() else info.get_default(call_default_factory=True)
        )
        assert params[field_name].default == expected, field_name
        assert f"    {field_name} (" in function.__doc__
        if info.description:
            assert info.description in function.__doc__
    # the docstring carries the technique's summary and its block's paper reference
    assert technique.summary[1:] in function.__doc__
    assert inspect.getdoc(technique.block) in function.__doc__
    assert name in dir(fairprobe)


def test_hinter_docstring_names_the_paper_sections() -> None:
    assert "§3" in fairprobe.hinter.__doc__


def test_unknown_keyword_names_it_and_the_known_ones(work: Path) -> None:
    with pytest.raises(UsageError) as err:
        fairprobe.hinter(model="py:apifair:classify", atributes=["gender"], out="runs/x")
    message = str(err.value)
    assert "atributes" in message and "attributes" in message and "fail_on" in message
    assert not (work / "runs").exists()


def test_values_are_validated_by_the_block_model(work: Path) -> None:
    with pytest.raises(UsageError, match=r"^order=: .*less than or equal to 4"):
        fairprobe.hinter(model="py:apifair:classify", order=9, out="runs/x")
    with pytest.raises(UsageError, match="fail_on: bad threshold"):
        fairprobe.hinter(model="py:apifair:classify", fail_on="error_rate.atomic is high", out="runs/x")
    with pytest.raises(UsageError, match="needs model="):
        fairprobe.hinter(out="runs/x")
    assert not (work / "runs").exists()


def test_shard_backed_run(work: Path) -> None:
    run = fairprobe.hinter(
        model="py:apibiased:classify", **HINTER, out="runs/b", fail_on=["error_rate.atomic>0"]
    )
    assert isinstance(run, fairprobe.Run)
    assert (run.verdict, run.passed) == ("fail", False)
    assert run.reasons == json.loads((work / "runs/b/summary.json").read_text())["reasons"]
    # the reason in words, naming the worst word pair (fairprobe.judge.gates)
    assert "single-substitution mutants" in run.reasons[0] and "above the 0% gate" in run.reasons[0]
    assert "most often he→she" in run.reasons[0]
    assert run.metrics["error_rate"]["atomic"] > 0
    assert run.run_dir == Path("runs/b") and run.report.is_file()
    findings = list(run.findings())
    on_disk = [json.loads(line) for line in (work / "runs/b/findings.jsonl").read_text().splitlines()]
    assert findings == on_disk and len(findings) == run.summary["findings"] > 0
    table = run.findings_table()
    assert len(table) == len(findings)
    assert {"id", "kind", "biased"} <= set(table.columns)
    assert table["biased"].sum() == sum(f["biased"] for f in findings) > 0


def test_run_db_backed_run_and_spec(work: Path) -> None:
    rows = "".join(
        f'"{"a bad" if i % 2 else "a good"} film {i}",{"NEG" if i % 2 else "POS"}\n' for i in range(6)
    )
    (work / "labelled.csv").write_text("text,label\n" + rows, encoding="utf-8")
    (work / "spec.yaml").write_text(
        "accuracy:\n  model: py:apifair:classify\n  data: labelled.csv\n  thresholds: ['accuracy<0.9']\n",
        encoding="utf-8",
    )
    runs = fairprobe.run_spec("spec.yaml", out="specruns")
    assert [(r.run_dir, r.verdict) for r in runs] == [(Path("specruns/accuracy"), "pass")]
    run = runs[0]
    assert run.metrics["accuracy"] == 1.0 and run.reasons == []
    findings = list(run.findings())  # from run.db
    assert len(findings) == 6 and all("id" in f for f in findings)
    assert len(run.findings_table()) == 6


def test_compare_two_runs(work: Path) -> None:
    fairprobe.hinter(model="py:apifair:classify", **HINTER, out="runs/fair")
    fairprobe.hinter(model="py:apibiased:classify", **HINTER, out="runs/biased")
    diff = fairprobe.compare("runs/fair", "runs/biased", out="runs/cmp")
    assert isinstance(diff, fairprobe.Run)
    summary = json.loads((work / "runs/cmp/summary.json").read_text())
    assert diff.verdict == summary["verdict"] and diff.metrics == summary["metrics"]
    pairs = [json.loads(line) for line in (work / "runs/cmp/findings.jsonl").read_text().splitlines()]
    assert list(diff.findings()) == pairs and len(pairs) > 0


def test_the_cli_and_the_api_give_the_same_run(work: Path, cli) -> None:
    r = cli(
        "hinter",
        "--model",
        "py:apibiased:classify",
        "--data",
        "data.csv",
        "--attributes",
        "gender",
        "--order",
        "1",
        "--out",
        "clirun",
        cwd=work,
    )
    assert r.returncode == 1, r.stderr  # the default gates fail the biased model
    run = fairprobe.hinter(model="py:apibiased:classify", **HINTER, out="apirun")
    by_cli = json.loads((work / "clirun/summary.json").read_text())
    assert run.metrics == by_cli["metrics"] and run.summary["spec"] == by_cli["spec"]


def test_import_fairprobe_stays_cheap() -> None:
    code = "import sys, fairprobe; print(sorted(m for m in sys.modules if m.startswith(('fairprobe.', 'pydantic'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['fairprobe._version']"


def test_fairprobe_compare_is_callable_and_documented_in_a_fresh_interpreter() -> None:
    code = (
        "import inspect, fairprobe; print(callable(fairprobe.compare), inspect.signature(fairprobe.compare));"
        "from fairprobe.compare import load_run; print(load_run.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [
        "True (base: 'str | Path', new: 'str | Path', out: 'str | Path' = 'fairprobe-compare', "
        "fail_on: 'list[str] | str | None' = None, seed: 'int' = 0) -> 'Run'",
        "fairprobe.compare.core",
    ]


def test_default_gates_fail_a_biased_model_and_default_gates_false_only_measures(work: Path) -> None:
    gated = fairprobe.hinter(model="py:apibiased:classify", **HINTER, out="runs/gated")
    assert gated.verdict == "fail" and not gated.passed
    assert any("gender" in reason for reason in gated.reasons)
    measured = fairprobe.hinter(
        model="py:apibiased:classify", **HINTER, out="runs/measured", default_gates=False
    )
    assert measured.verdict == "measured" and not measured.passed and measured.metrics == gated.metrics
