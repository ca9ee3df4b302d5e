"""One rule for every file fairprobe writes outside a run (issue 40): never over a run's own files,
never into a non-empty folder it did not create (unless --overwrite, and then only what it wrote),
checked before any work. Every test runs the real `fairprobe` executable in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairprobe.run.outputs import MANIFEST, check_output_folder, claim_output_folder
from reliability.helpers import assert_one_red_line

RUN_FILES = ("run.db", "summary.json", "spec.yaml", "junit.xml", "report.html", "run.lock", "findings.jsonl")


@pytest.fixture
def run(cli, work: Path) -> Path:
    (work / "spec.yaml").write_text(
        "accuracy:\n  model: py:kw:classify\n  data: data.csv\n", encoding="utf-8"
    )
    r = cli("run", "spec.yaml", "--out", "runs")
    assert r.returncode in (0, 1), r.stderr
    return work / "runs" / "accuracy"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and not p.name.startswith("run.db")
    }


def test_export_never_writes_over_a_file_of_the_run(cli, run: Path):
    before = _snapshot(run)
    db = (run / "run.db").read_bytes()
    for name in RUN_FILES:
        r = cli("export", str(run), "--format", "csv", "--output", str(run / name))
        assert_one_red_line(r, "a file of the fairprobe run", name)
    assert _snapshot(run) == before and (run / "run.db").read_bytes() == db
    report = cli("report", str(run))
    assert report.returncode in (0, 1), report.stderr
    assert json.loads((run / "summary.json").read_text())["findings"] == 6  # the findings are all there


def test_export_never_writes_into_the_runs_findings_folder_but_beside_it_is_fine(cli, run: Path):
    assert_one_red_line(cli("export", str(run), "--output", str(run / "findings" / "x.jsonl")), "findings")
    r = cli("export", str(run), "--format", "csv", "--output", str(run / "mine.csv"))
    assert r.returncode == 0, r.stderr
    assert (run / "mine.csv").read_text().count("\n") == 7


@pytest.mark.parametrize(
    "args",
    [
        ["init", "{run}/summary.json", "--force"],
        ["caffe", "kb", "build", "--output", "{run}/report.html"],
        ["lexicon", "extract", "sbic.csv", "--output", "{run}/junit.xml"],
        ["metafair", "generate", "--generator", "embedded:smollm2", "--output", "{run}/spec.yaml"],
    ],
    ids=["init", "kb-build", "lexicon-extract", "metafair-generate"],
)
def test_every_writer_refuses_a_runs_own_file_before_any_work(cli, run: Path, args: list[str]):
    (run.parent.parent / "sbic.csv").write_text("targetMinority,targetCategory\nwomen,gender\n")
    before = _snapshot(run)
    r = cli(*[a.format(run=run) for a in args])
    assert_one_red_line(r, "a file of the fairprobe run")
    assert _snapshot(run) == before


def test_certify_train_refuses_a_non_empty_folder_it_did_not_create(cli, work: Path):
    mine = work / "models"
    mine.mkdir()
    for name in ("config.json", "meta.json", "notes.txt"):
        (mine / name).write_text(f"my {name}")
    r = cli("certify", "train", "--task", "toxicity", "--model-out", "models", timeout=120)
    assert_one_red_line(r, "not empty", "--overwrite")
    # --overwrite writes beside the user's files, but never over one of the model's names it did not write
    r = cli("certify", "train", "--task", "toxicity", "--model-out", "models", "--overwrite", timeout=120)
    assert_one_red_line(r, "config.json", "was not written by fairprobe")
    assert {p.name: p.read_text() for p in mine.iterdir()} == {
        "config.json": "my config.json", "meta.json": "my meta.json", "notes.txt": "my notes.txt"
    }  # fmt: skip
    # the current folder (the issue's `--model-out .`) is a non-empty folder too
    r = cli("certify", "train", "--task", "toxicity", "--model-out", ".", timeout=120)
    assert_one_red_line(r, "not empty")


def test_certify_train_refuses_a_run_folder(cli, run: Path):
    r = cli("certify", "train", "--task", "toxicity", "--model-out", str(run), "--overwrite", timeout=120)
    assert_one_red_line(r, "is a fairprobe run folder")


def test_a_folder_fairprobe_created_takes_its_own_files_again_and_keeps_the_users(tmp_path: Path):
    writes = ("model.pt", "config.json")
    folder = tmp_path / "m"
    check_output_folder(folder, "--model-out", writes)  # new: fine
    claim_output_folder(folder, writes)
    (folder / "model.pt").write_text("weights")
    assert json.loads((folder / MANIFEST).read_text()) == ["config.json", "model.pt"]
    check_output_folder(folder, "--model-out", writes)  # its own files: fine without --overwrite
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(Exception, match="not empty"):
        check_output_folder(folder, "--model-out", writes)
    check_output_folder(folder, "--model-out", writes, overwrite=True)  # beside notes.txt
    assert (folder / "notes.txt").read_text() == "mine"
