"""`fairprobe certify verify` end to end: certificates, summary metrics, report, resume, errors."""

from __future__ import annotations

import json

import pytest

REQUIRED = {
    "model_hash",
    "sentence",
    "label",
    "eps_star",
    "threshold",
    "substitutes",
    "verifier",
    "seconds",
    "certified",
}


@pytest.fixture(scope="module")
def run(tiny_model, tmp_path_factory):
    import os
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path_factory.mktemp("certify-run") / "run"
    exe = Path(sys.executable).parent / "fairprobe"
    env = {**os.environ, "FAIRPROBE_CACHE": str(out.parent / "cache.db"), "OMP_NUM_THREADS": "1"}

    def call(*extra: str) -> subprocess.CompletedProcess:
        args = [str(exe), "certify", "verify", "--model", str(tiny_model), "--n", "4", "--out", str(out)]
        return subprocess.run(
            [*args, "--steps", "6", *extra], capture_output=True, text=True, env=env, timeout=600
        )

    first = call()
    # four sentences never decide the default gate (4 of 4 certified is 39.8–100%): inconclusive, exit 1
    assert first.returncode == 1, first.stderr[-2000:]
    (out.parent / "verify.stderr").write_text(first.stderr)
    return out, call


def test_summary_has_the_issue_metrics(run):
    out, _ = run
    m = json.loads((out / "summary.json").read_text())["metrics"]
    assert m["sentences"] == 4
    assert 0.0 <= m["fairness_score"] <= 1.0 and len(m["fairness_score_ci"]) == 2
    assert 0.0 < m["accuracy"] <= 1.0
    assert m["threshold"] > 0
    eps = m["eps_star"]
    assert 0 <= eps["min"] <= eps["median"] <= eps["max"]
    assert m["ibp"]["eps_star_median"] <= eps["median"]
    # the no-pre-training ablation (trained by the fixture with --ablation) is certified on the same sentences
    ab = m["ablation"]["no_pretraining"]
    assert ab["sentences"] == 4
    assert ab["threshold"] > m["threshold"]  # gender words are far apart without pre-training
    assert ab["fairness_score"] <= m["fairness_score"]


def test_four_sentences_are_inconclusive_with_the_sentences_a_pass_would_need(run):
    """Issue 39: the certified share of 4 sentences cannot show that at least half are certified
    (before, a point value of 50% or more passed); the reason says how many sentences would."""
    out, _ = run
    s = json.loads((out / "summary.json").read_text())
    (row,) = s["evidence"]
    assert s["verdict"] == "inconclusive" and row["status"] == "not shown" and row["unit"] == "sentences"
    assert row["attribute"] == "the certified share" and row["count"] == 4
    assert s["reasons"][0].startswith("not enough evidence that the certified share is at least 50%: ")
    if row["rate"] > 0.5:  # at a share above one half, some number of sentences would show it
        assert row["needed"] > 4 and f"about {row['needed']:,} sentences would be needed" in s["reasons"][0]
    else:
        assert row["needed"] is None and "no number of sentences" in s["reasons"][0]
    html = (out / "report.html").read_text()
    assert 'id="evidence"' in html and "the certified share" in html


def test_one_json_certificate_per_sentence(run):
    out, _ = run
    rows = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]
    assert len(rows) == 8 and {r["variant"] for r in rows} == {"main", "no-pretraining"}
    for r in rows:
        assert REQUIRED <= set(r)
        assert r["certified"] == (r["eps_star"] >= r["threshold"])
        assert r["substitutes"] and all(len(v) == 50 for v in r["substitutes"].values())
        assert r["threshold"] == pytest.approx(
            max(d for v in r["substitutes"].values() for _, d in v), abs=1e-7
        )
    main = sorted(r["sentence_id"] for r in rows if r["variant"] == "main")
    assert main == sorted(r["sentence_id"] for r in rows if r["variant"] == "no-pretraining")
    labels = [r["label"] for r in rows if r["variant"] == "main"]
    assert labels.count(0) == labels.count(1) == 2  # balanced, as the paper samples


def test_report_has_the_radar_figure(run):
    out, _ = run
    html = (out / "report.html").read_text()
    assert "<polygon" in html and "stroke-dasharray" in html and "no embedding pre-training" in html


def test_rerun_resumes_without_reverifying(run):
    out, call = run
    before = (out / "findings.jsonl").read_text()
    again = call()
    assert again.returncode == 1, again.stderr
    assert "(4 done)" in again.stderr
    assert (out / "findings.jsonl").read_text() == before


def test_bad_inputs_fail_with_one_line(cli, tmp_path, tiny_model):
    r = cli("certify", "verify", "--model", str(tmp_path / "nope"), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "certify train" in r.stderr and "Traceback" not in r.stderr
    r = cli("certify", "train", "--task", "jobs", "--out", str(tmp_path / "m"))
    assert r.returncode == 2 and "adult-gender" in r.stderr
    bad = tmp_path / "subs.json"
    bad.write_text("[1, 2]")
    r = cli(
        "certify",
        "verify",
        "--model",
        str(tiny_model),
        "--out",
        str(tmp_path / "o2"),
        "--substitutes",
        str(bad),
    )
    assert r.returncode == 2 and "list of substitutes" in r.stderr


def test_user_substitute_list(tiny_model, tmp_path):
    from fairprobe.methods.certify.certificate import Substitutes, load_substitute_file
    from fairprobe.methods.certify.model import load_model

    path = tmp_path / "subs.csv"
    path.write_text("female,woman\nfemale,zzzunknownword\nmale,man\n")
    loaded = load_model(tiny_model)
    subs = Substitutes(loaded, user=load_substitute_file(path))
    assert subs.sensitive == {"female", "male"}
    pairs = dict(subs.of("female"))
    e = loaded.module.tok.weight.detach()
    idx = {w: i for i, w in enumerate(loaded.vocab)}
    assert pairs["woman"] == pytest.approx(float((e[idx["woman"]] - e[idx["female"]]).abs().max()))
    assert pairs["zzzunknownword"] == pytest.approx(float((e[1] - e[idx["female"]]).abs().max()))  # <unk>
    assert subs.threshold("female") == max(pairs.values())


def test_each_sentence_is_shown_with_its_radii_as_it_finishes(run):
    out, _ = run
    err = (out.parent / "verify.stderr").read_text()
    rows = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]
    for r in rows:
        line = next(x for x in err.splitlines() if f"{r['variant']} {r['sentence_id']}: ε* " in x)
        assert f"{r['eps_star']:.2e}" in line and f"t {r['threshold']:.2e}" in line
        assert ("not certified" in line) == (not r["certified"])


def test_every_certificate_has_an_attack_radius_above_its_proven_radius(run):
    out, _ = run
    rows = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]
    flipped = [r for r in rows if r["attack_radius"] is not None]
    assert flipped  # the 2-block test model is flipped well inside the search range
    for r in flipped:
        assert r["eps_star"] <= r["attack_radius"]
        assert r["verifier_gap"] >= 1.0
    m = json.loads((out / "summary.json").read_text())["metrics"]
    a = m["attack"]
    assert a["sentences"] == 4 and a["gap"]["median"] >= 1.0
    assert a["radius"]["min"] >= m["eps_star"]["min"]
    assert m["fairness_score"] <= a["certifiable_share_upper"]  # a sound verifier never beats the attack
    html = (out / "report.html").read_text()
    assert "How loose is the verifier?" in html and "attack radius" in html


def test_sentences_can_come_from_the_training_split_as_in_the_paper(tiny_model, tmp_path, cli):
    r = cli(
        "certify",
        "verify",
        "--model",
        str(tiny_model),
        "--sentences-from",
        "train",
        "--n",
        "2",
        "--steps",
        "2",
        "--no-baseline",
        "--no-attack",
        "--ablation-model",
        "none",  # no second model, although tiny_model has one
        "--out",
        str(tmp_path / "run"),
    )
    assert r.returncode in (0, 1), r.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "run" / "findings.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(x["sentence_id"].startswith("adult-train-") for x in rows)
    assert all(x["eval_data"] == "adult-gender training split" and "attack_radius" not in x for x in rows)
