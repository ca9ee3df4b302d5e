"""Findings do not depend on how many requests are in flight: planted HInter and Meta-Fair runs through
the real CLI against a FAKE fixed-latency HTTP server (answers arrive out of order: each request waits
a latency drawn from its body) give the same findings, in the same order, at concurrency 1 and 64 —
and at 64 more than one batch's worth of requests is in flight at once (no barrier per chunk)."""

import json
import re

import pytest
from latency_server import LatencyServer

from methods.metafair.test_pipeline import JUDGE, MUT, TESTS

RACE = {"black", "nigerian", "kenyan"}
GENDER = {"woman", "women", "girl"}


def planted_sentiment(messages):
    """Negative exactly when the text under test names both a planted race and a planted gender."""
    words = set(re.findall(r"[a-z]+", messages[-1]["content"].lower()))
    return "Negative" if words & RACE and words & GENDER else "Positive"


def _chat_fn(source, name):
    namespace = {}
    exec(source, namespace)  # a scripted py-chat model of the Meta-Fair pipeline test, served over HTTP
    return lambda messages: namespace[name]([messages])[0]


def _findings(path, *uris):
    text = path.read_text()
    for uri in uris:  # a judge's name is its URI, whose port and concurrency differ between the runs
        text = text.replace(uri, "URI")
    return [json.loads(line) for line in text.splitlines()]


TEXTS = [
    "The white man told a long story about his life in the city.",
    "The Mexican boy waited for his father outside the theater.",
]
SHOTS = [{"text": "A great film.", "label": "POS"}, {"text": "A dull film.", "label": "NEG"}]


def test_hinter_findings_identical_at_concurrency_1_and_64(cli, tmp_path):
    (tmp_path / "shots.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SHOTS))
    (tmp_path / "texts.jsonl").write_text(
        "".join(json.dumps({"id": f"t{i}", "text": t, "label": "POS"}) + "\n" for i, t in enumerate(TEXTS))
    )
    runs, peaks = {}, {}
    for n in (1, 64):
        with LatencyServer(planted_sentiment, latency=0.002, jitter=0.02) as server:
            r = cli(
                "hinter", "--model", server.uri(concurrency=n), "--data", "texts.jsonl", "--task", "imdb",
                "--attributes", "race,gender", "--order", "2", "--few-shot-data", "shots.jsonl",
                "--out", f"run{n}",
            )  # fmt: skip
            assert r.returncode in (0, 1), r.stderr
            peaks[n] = server.max_in_flight
        runs[n] = _findings(tmp_path / f"run{n}/findings.jsonl")
    assert any(f["biased"] for f in runs[1])  # the planted bias is found
    assert runs[1] == runs[64]
    assert peaks[1] == 1 and peaks[64] > 16, peaks


@pytest.fixture
def metafair_tests(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the scripted model logs its calls to calls.log in the working folder
    rows = [
        {"mr": m, "dimension": d, "attributes": a, "source": s, "follow_up": f} for m, d, a, s, f in TESTS
    ]
    (tmp_path / "tests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_metafair_findings_identical_at_concurrency_1_and_64(cli, metafair_tests):
    runs, peaks = {}, {}
    for n in (1, 64):
        with (
            LatencyServer(_chat_fn(MUT, "chat"), latency=0.01, jitter=0.05) as model,
            LatencyServer(_chat_fn(JUDGE, "judge"), latency=0.01, jitter=0.05, model_id="judge") as judge,
        ):
            r = cli(
                "metafair", "run", "--model", model.uri(concurrency=n), "--judge", judge.uri(concurrency=n),
                "--tests", "tests.jsonl", "--repeat", "3", "--judge-controls", "0", "--out", f"run{n}",
            )  # fmt: skip
            assert r.returncode == 1, r.stderr  # the planted model is biased
            peaks[n] = model.max_in_flight
            runs[n] = _findings(metafair_tests / f"run{n}/findings.jsonl", judge.uri(concurrency=n))
    assert [f["verdict"] for f in runs[1] if f["kind"] == "test"].count("BIASED") == 12
    assert runs[1] == runs[64]
    assert peaks[1] == 1 and peaks[64] > 16, peaks
