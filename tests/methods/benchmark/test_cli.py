"""``fairprobe benchmark NAME`` end to end: the real executable, the embedded SmolLM2 (in-process
llama.cpp log-likelihoods), chat models through the chat path, input errors, compare by item."""

from __future__ import annotations

import json
import math
from pathlib import Path

# A chat model that always picks the answer naming the stereotyped group in BBQ Religion questions
# (it knows the stereotyped groups of the items it is asked) and one that always says it cannot tell.
CHAT = """
UNKNOWN = ("unknown", "cannot be determined", "can't be determined", "not answerable", "not known",
           "not enough info", "not enough information", "cannot answer", "can't answer", "undetermined")

def chat(conversations):
    out = []
    for conv in conversations:
        lines = conv[-1]["content"].splitlines()
        options = [l[3:] for l in lines if l[:3] in ("A. ", "B. ", "C. ")]
        unknown = next(i for i, o in enumerate(options) if o.lower().rstrip(".") in UNKNOWN)
        if {biased}:
            pick = next((i for i, o in enumerate(options) if "muslim" in o.lower() or "jewish" in o.lower()), 0)
        else:
            pick = unknown
        out.append("Answer: " + "ABC"[pick])
    return out
"""


def _summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text())


def test_crows_pairs_on_embedded_smollm2_and_cached_rerun(cli, tmp_path: Path, smollm2_gguf: Path) -> None:
    r = cli("benchmark", "crows-pairs", "--model", "embedded:smollm2", "--limit", "6", "--out", "first")
    assert r.returncode in (0, 1), r.stderr
    s = _summary(tmp_path / "first")
    m = s["metrics"]
    assert m["tested"] == 6 and m["n"] == 6 and m["invalid"] == 0
    assert 0.0 <= m["pct_stereotype"] <= 1.0 and m["likelihood_diff"] > 0
    assert s["dataset"]["version"]["crows_pairs_anonymized.csv"].startswith("dfb36986ce")
    assert s["dataset"]["subset"] == {"items": 6, "of": 1508, "limit": 6, "seed": 0,
                                      "categories": s["dataset"]["subset"]["categories"]}  # fmt: skip
    assert s["model_calls"] == 12  # two sentences per pair
    findings = [json.loads(x) for x in (tmp_path / "first" / "findings.jsonl").read_text().splitlines()]
    assert all(math.isfinite(f["score_more"]) and f["score_more"] < 0 for f in findings)
    # the same items again, into a new folder: every score comes from the global cache
    r = cli("benchmark", "crows-pairs", "--model", "embedded:smollm2", "--limit", "6", "--out", "second")
    assert r.returncode in (0, 1), r.stderr
    again = _summary(tmp_path / "second")
    assert again["model_calls"] == 0 and again["cached_answers"] == 12
    assert again["metrics"]["pct_stereotype"] == m["pct_stereotype"]


def test_likelihood_benchmark_refuses_a_chat_only_model(cli, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(CHAT.replace("{biased}", "False"))
    r = cli("benchmark", "stereoset", "--model", "py-chat:m:chat", "--out", "run")
    assert r.returncode == 2
    assert "chat-only" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_bad_data_is_one_line_exit_2(cli, tmp_path: Path) -> None:
    (tmp_path / "short.csv").write_text("sent_more,sent_less,stereo_antistereo,bias_type\na,b,stereo,age\n")
    r = cli("benchmark", "crows-pairs", "--model", "embedded:smollm2", "--data", "short.csv", "--out", "run")
    assert r.returncode == 2 and "published file has 1508" in r.stderr, r.stderr
    r = cli("benchmark", "bbq", "--model", "embedded:smollm2", "--categories", "Religon", "--out", "run")
    assert r.returncode == 2 and "unknown BBQ category 'Religon'" in r.stderr, r.stderr


def test_bbq_through_the_chat_path_and_compare(cli, tmp_path: Path) -> None:
    for name, biased in (("fair", False), ("biased", True)):
        (tmp_path / f"{name}.py").write_text(CHAT.replace("{biased}", str(biased)))
        r = cli("benchmark", "bbq", "--model", f"py-chat:{name}:chat", "--categories", "Religion",
                "--limit", "120", "--mode", "chat", "--out", name)  # fmt: skip
        assert r.returncode in (0, 1), r.stderr
    fair, biased = _summary(tmp_path / "fair")["metrics"], _summary(tmp_path / "biased")["metrics"]
    assert fair["invalid"] == 0 and fair["accuracy_ambig"] == 1.0  # "cannot tell" is right when ambiguous
    assert fair["bias_ambig"] is None  # no non-unknown answer: the bias score is undefined, not 0
    # it names a group in ambiguous contexts: wrong, and a bias score is defined
    assert biased["accuracy_ambig"] < 0.5 and biased["bias_ambig"] is not None
    assert set(biased["by_category"]) == {"Religion"}
    r = cli("compare", "fair", "biased", "--out", "cmp")
    assert r.returncode in (0, 1), r.stderr
    assert (tmp_path / "cmp" / "summary.json").is_file()
