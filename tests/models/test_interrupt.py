"""Ctrl-C during a model-bound HInter run over HTTP: the run stops promptly (exit 130, one line),
requests not sent yet are dropped, what was answered is kept, and the same command again asks the
server only for what it has not answered. Real CLI, real HTTP; the server is the FAKE fixed-latency
one (a real server cannot be made to answer slowly enough to be interrupted mid-run, on cue)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from childenv import default_sigint, pythonpath
from latency_server import LatencyServer
from servers import free_port

TEXTS = [
    "The white man told a long story about his life in the city.",
    "The Mexican boy waited for his father outside the theater.",
    "An old Indian man and his wife walked to the market.",
]
SHOTS = [{"text": "A great film.", "label": "POS"}, {"text": "A dull film.", "label": "NEG"}]


def _served(log: Path) -> list[str]:
    """The last user message of each request the server answered (its log: arrived, answered, text)."""
    return [line.split("\t", 2)[2] for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.slow
@pytest.mark.parametrize("concurrency", [4, 128])  # 128: the HTTP client runs in a worker process
def test_ctrl_c_over_http_stops_promptly_keeps_answers_and_a_rerun_asks_only_the_rest(tmp_path, concurrency):
    (tmp_path / "shots.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SHOTS))
    rows = [json.dumps({"id": f"t{i}", "text": t, "label": "POS"}) for i, t in enumerate(TEXTS)]
    (tmp_path / "texts.jsonl").write_text("\n".join(rows) + "\n")
    env = {**os.environ, "FAIRPROBE_CACHE": str(tmp_path / "cache.db"), "PYTHONPATH": pythonpath(tmp_path)}
    exe = Path(sys.executable).parent / "fairprobe"
    logs = [tmp_path / "served1.log", tmp_path / "served2.log"]
    port = free_port()  # the same endpoint both times: the base URL is part of the model's fingerprint
    with LatencyServer(latency=0.5, log=str(logs[0]), port=port) as server:
        args = [str(exe), "hinter", "--model", server.uri(concurrency=concurrency), "--data", "texts.jsonl",
                "--task", "imdb", "--few-shot-data", "shots.jsonl", "--attributes", "race,gender,age,body",
                "--order", "2", "--no-invariant", "--out", "run"]  # fmt: skip
        proc = subprocess.Popen(
            args,
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=default_sigint,
        )
        deadline = time.monotonic() + 120
        while len(_served(logs[0])) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        posts = server.posts
        time.sleep(1.0)
        assert server.posts == posts  # nothing is sent after the process is gone
    assert proc.returncode == 130, err
    assert "Traceback" not in err and any(line.startswith("interrupted:") for line in err.splitlines()), err
    # one wave answered before the interrupt, one in flight then (finished); the hundreds queued dropped
    assert posts < 32 + 2 * concurrency
    first = len(_served(logs[0]))
    with LatencyServer(latency=0.01, log=str(logs[1]), port=port):
        done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode in (0, 1), done.stderr
    again = _served(logs[1])
    assert not set(_served(logs[0])) & set(again)  # nothing answered before the interrupt is asked again
    assert first + len(again) == len(set(_served(logs[0])) | set(again))
    assert len(again) > 100  # the rest (hundreds of mutants) was asked only now


@pytest.mark.slow
def test_ctrl_c_25_seconds_into_an_in_process_smollm2_run_exits_130_within_5_seconds(tmp_path):
    """Issue 43: an in-process llama.cpp model used to finish its whole batch after Ctrl-C (minutes).
    Real CLI, the embedded SmolLM2 as the README's loan officer: SIGINT 25 s in (mid-generation or
    mid-prompt, wherever the run is), exit 130 within 5 s, the one resume line and no traceback;
    the same command then resumes (answers stored before the interrupt are not asked again)."""
    pytest.importorskip("llama_cpp")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "FAIRPROBE_CACHE": str(tmp_path / "cache.db"), "PYTHONPATH": pythonpath(tmp_path)}
    exe = Path(sys.executable).parent / "fairprobe"
    args = [str(exe), "hinter", "--model", "embedded:smollm2",
            "--prompt-template", str(root / "examples/loan/loan_classifier.yaml"),
            "--data", str(root / "examples/loan/loan_applications.csv"),
            "--attributes", "gender,race", "--order", "1", "--out", "run"]  # fmt: skip
    proc = subprocess.Popen(
        args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=default_sigint,
    )  # fmt: skip
    time.sleep(25)
    assert proc.poll() is None, "the run finished before the interrupt: make it longer"
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    took = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert took <= 5.0, f"exit took {took:.1f} s after SIGINT"
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("interrupted:")]
    assert len(lines) == 1 and "run the same command again to resume" in lines[0], err
    from fairprobe.run.store import Store

    store = Store(tmp_path / "run" / "run.db")
    try:  # the answers of the first 25 s are counted (and kept: the run resumes from them)
        assert json.loads(store.get_meta("llm_throughput"))["requests"] > 0
        assert "interrupted" in store.get_meta("stopped")
    finally:
        store.close()
