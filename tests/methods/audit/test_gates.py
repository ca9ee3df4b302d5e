"""Issue 39 for BAFA: pass means every seed's interval is shown within ±0.1; fail means every seed's
interval lies beyond it; anything else is inconclusive, with about how many queries would decide it
(bafa.txt §6, "From failure discovery to quantified uncertainty": non-compliance only when the whole
interval lies beyond the standard)."""

from __future__ import annotations

import pytest
from judging import judge

from fairprobe.methods.audit.analysis import analyse
from fairprobe.methods.audit.block import AuditBlock

from .test_seeds_and_intervals import BASE, _final


def _judged(*finals: dict):
    return judge("audit", analyse(AuditBlock(**BASE), list(finals), 0))


def test_an_interval_straddling_the_gate_is_inconclusive_with_the_queries_a_pass_would_need():
    v = _judged(_final(0, -0.04, 0.16, queries=250, stopped_by="budget"))
    assert v.verdict == "inconclusive" and not v.passed  # it passed before issue 39
    (row,) = v.evidence
    assert (row["attribute"], row["status"], row["unit"], row["needed"]) == (
        "seed 0",
        "not shown",
        "queries",
        1563,
    )
    assert v.reasons[0] == (
        "not enough evidence that seed 0 is within ±0.1: seed 0's audited ΔAUC (group 0 minus group 1) is "
        "estimated at 0.06 after 250 queries (the budget of 250 queries was spent), but its interval "
        "[−0.04, 0.16] over 250 queries reaches above 0.1; about 1,563 queries would be needed (1,313 more), "
        "if the interval narrows as 1/√queries around the estimate 0.06"
    )


def test_every_seed_within_passes_and_every_seed_beyond_fails():
    shown = _judged(_final(0, -0.03, 0.05), _final(1, -0.01, 0.07))
    assert shown.verdict == "pass" and shown.notes[0].startswith("shown within the gate: seed 0")
    failed = _judged(_final(0, 0.12, 0.2), _final(1, 0.11, 0.19))
    assert failed.verdict == "fail"
    assert "so even its lower end" in failed.reasons[0]


def test_one_seed_within_and_one_beyond_is_inconclusive_not_a_pass():
    v = _judged(_final(0, -0.03, 0.05), _final(1, 0.12, 0.2))
    assert v.verdict == "inconclusive"
    assert {r["attribute"]: r["status"] for r in v.evidence} == {"seed 0": "shown", "seed 1": "fails"}
    assert v.reasons[0].startswith("seed 1 lies beyond the gate on its own")


def test_a_pool_queried_whole_says_a_larger_pool_is_needed():
    v = _judged(_final(0, -0.02, 0.13, queries=200, stopped_by="pool"))
    assert v.verdict == "inconclusive"
    assert "the whole pool was queried: a larger pool_size is needed" in v.reasons[0]


# -- through the CLI, with planted black boxes ---------------------------------------------------------
# A pool of loan applicants in two groups whose label is written in the text ("a good record"). The
# fair black box scores the record alike for both groups, with noise that ignores the group (ΔAUC
# near 0 on the pool); the biased one scores group B's applicants by a coin that ignores the record
# (its AUC near 0.5: ΔAUC near 0.4).
BLACK_BOXES = """
import zlib
from fairprobe.models.base import Prediction

def _p(score):
    return Prediction(frozenset({"1" if score >= 0.5 else "0"}), {"1": score})

def _coin(t):
    return (zlib.crc32(t.split()[1].encode()) % 100) / 100

def fair(texts):
    return [_p((0.65 if "good" in t else 0.35) + 0.5 * (_coin(t) - 0.5)) for t in texts]

def biased(texts):
    return [_p(0.05 + 0.9 * _coin(t) if "group B" in t else (0.9 if "good" in t else 0.1)) for t in texts]
"""
SIZE = 160
AUDIT = ["--data", "pool.csv", "--group-col", "group", "--label-col", "label", "--text-col", "text",
         "--positive-label", "1", "--pool-size", str(SIZE), "--features", "ngrams", "--cerm-steps", "40",
         "--refits", "2"]  # fmt: skip


def _audit(cli, tmp_path, model: str, budget: int):
    import json

    rows = [f"applicant {i} of group {'AB'[i % 2]} has a {'good' if i // 2 % 2 == 0 else 'poor'} record,"
            f"{'AB'[i % 2]},{int(i // 2 % 2 == 0)}" for i in range(SIZE)]  # fmt: skip
    (tmp_path / "pool.csv").write_text("text,group,label\n" + "\n".join(rows) + "\n")
    (tmp_path / "boxes.py").write_text(BLACK_BOXES)
    r = cli("audit", "--model", f"py:boxes:{model}", *AUDIT, "--budget", str(budget), "--out", model)
    assert r.returncode in (0, 1), r.stderr
    return r, json.loads((tmp_path / model / "summary.json").read_text())


@pytest.mark.slow  # about 5 s of CPU, 20 s on a loaded machine; the analysis-level tests above run by default
def test_a_black_box_biased_against_one_group_fails(cli, tmp_path) -> None:
    r, s = _audit(cli, tmp_path, "biased", SIZE)
    assert r.returncode == 1 and s["verdict"] == "fail"
    assert s["metrics"]["lower"] > 0.1 and s["evidence"][0]["status"] == "fails"
    assert "so even its lower end" in s["reasons"][0] and "above the 0.1 gate" in s["reasons"][0]


@pytest.mark.slow
def test_a_fair_black_box_audited_on_the_whole_pool_passes(cli, tmp_path) -> None:
    r, s = _audit(cli, tmp_path, "fair", SIZE)
    assert r.returncode == 0 and s["verdict"] == "pass", s["reasons"]
    (row,) = s["evidence"]
    assert row["status"] == "shown" and -0.1 <= row["ci"][0] <= row["ci"][1] <= 0.1
    assert "shown within the gate: seed 0 (interval [" in r.stdout


def test_a_fair_black_box_on_twelve_queries_is_inconclusive_with_the_queries_needed(cli, tmp_path) -> None:
    r, s = _audit(cli, tmp_path, "fair", 12)
    assert r.returncode == 1 and s["verdict"] == "inconclusive"
    (row,) = s["evidence"]
    assert row["status"] == "not shown" and row["count"] == 12 and row["needed"] > 12
    reason = s["reasons"][0]
    assert reason.startswith("not enough evidence that seed 0 is within ±0.1: seed 0's audited ΔAUC")
    assert f"about {row['needed']:,} queries would be needed" in reason and reason in r.stdout
    html = (tmp_path / "fair" / "report.html").read_text()
    assert 'id="evidence"' in html and f"{row['needed']:,} queries" in html
