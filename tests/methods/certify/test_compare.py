"""Two real certified models compared through the CLI: the tiny model and its no-pre-training twin,
certified on the same sentences by one `certify verify --model A --model B` command."""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow  # the suite's budget (39 s): the other techniques' compare tests run by default
def test_two_models_certified_and_compared_sentence_by_sentence(cli, tmp_path, tiny_model):
    twin = tiny_model / "no-pretraining"
    r = cli("certify", "verify", "--model", str(tiny_model), "--model", str(twin), "--n", "4", "--steps", "6",
            "--ablation-model", "none", "--out", "two")  # fmt: skip
    assert r.returncode in (0, 1), r.stdout + r.stderr
    folders = sorted(p.name for p in (tmp_path / "two").iterdir())
    assert len(folders) == 3 and folders[0].startswith("compare-")
    summary = json.loads((tmp_path / "two" / folders[0] / "summary.json").read_text())
    m = summary["metrics"]
    assert summary["technique"] == "certify" and m["paired"] >= 1
    assert set(m["slices"]) == {"certified", "eps_star"}
    assert summary["verdict"] in ("pass", "fail", "inconclusive")
    from words_check import metric_words_problems, visible_text  # in words (issue 43)

    html = visible_text((tmp_path / "two" / folders[0] / "report.html").read_text())
    for text in ((tmp_path / "two" / folders[0] / "summary.md").read_text(), html):
        assert not metric_words_problems(text), metric_words_problems(text)
    # The same model against itself: nothing changes, p = 1.
    same = cli("compare", f"two/{folders[1]}", f"two/{folders[1]}", "--out", "same")
    assert same.returncode == 0, same.stdout + same.stderr
    slices = json.loads((tmp_path / "same" / "summary.json").read_text())["metrics"]["slices"]
    assert all(s["p"] == 1.0 for per in slices.values() for s in per.values())
