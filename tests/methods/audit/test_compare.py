"""Two real black boxes audited on the same pool and compared: the packaged Adult case-study models
A (ΔAUC ≈ 0.14) and B (≈ 0.03), through `fairprobe audit --model A --model B`."""

from __future__ import annotations

import json

from .test_cli import CASE_A, SMALL

CASE_B = "py:fairprobe.methods.audit.casestudy:adult_case_b"


def test_two_black_boxes_audited_on_the_same_pool_and_compared_seed_by_seed(cli, tmp_path):
    r = cli("audit", "--model", CASE_A, "--model", CASE_B, *SMALL, "--seeds", "2", "--out", "two")
    assert r.returncode in (0, 1), r.stdout + r.stderr
    folders = sorted(p.name for p in (tmp_path / "two").iterdir())
    assert len(folders) == 3 and folders[0].startswith("compare-")
    m = json.loads((tmp_path / "two" / folders[0] / "summary.json").read_text())["metrics"]
    assert m["paired"] == 2 and m["paired_share"] == 1.0
    intervals = m["intervals"]
    assert intervals["worse"] + intervals["better"] + intervals["overlap"] == 2
    assert {c["case"] for c in intervals["cases"]} == {"seed 0", "seed 1"}
    # Swapped, the per-seed intervals swap their verdicts.
    back = cli("compare", f"two/{folders[2]}", f"two/{folders[1]}", "--out", "back")
    assert back.returncode in (0, 1), back.stdout + back.stderr
    b = json.loads((tmp_path / "back" / "summary.json").read_text())["metrics"]["intervals"]
    assert (b["worse"], b["better"]) == (intervals["better"], intervals["worse"])
    # in words (issue 43): no metric path on the screen, in summary.md or in report.html
    from words_check import metric_words_problems, visible_text

    html = visible_text((tmp_path / "back" / "report.html").read_text())
    for text in (back.stdout, (tmp_path / "back" / "summary.md").read_text(), html):
        assert not metric_words_problems(text), metric_words_problems(text)
    assert "a slice got worse beyond chance" in html


def test_runs_of_two_techniques_are_refused_with_one_line(cli, tmp_path):
    from reliability.helpers import assert_one_red_line

    r = cli("audit", "--model", CASE_A, *SMALL, "--out", "audit")
    assert r.returncode in (0, 1), r.stderr
    (tmp_path / "data.csv").write_text("text,label\na good film,POS\na bad film,NEG\n")
    (tmp_path / "spec.yaml").write_text("accuracy:\n  model: py:kw:classify\n  data: data.csv\n")
    (tmp_path / "kw.py").write_text(
        "def classify(texts):\n    return ['NEG' if 'bad' in t else 'POS' for t in texts]\n"
    )
    assert cli("run", "spec.yaml", "--out", "runs").returncode in (0, 1)
    assert_one_red_line(cli("compare", "audit", "runs/accuracy", "--out", "cmp"), "same technique")
