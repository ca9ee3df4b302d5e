"""``?server=1``: the GGUF behind a llama.cpp server that fairprobe starts, health-checks and stops
(issue 43). Real SmolLM2 GGUF, real ``python -m llama_cpp.server``, real CLI; a handful of requests.
The server process must be gone after a run, after ``close()`` and after a Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from childenv import default_sigint, pythonpath

from fairprobe.errors import ModelError
from fairprobe.models.uri import check_model_uri, load_chat

ROOT = Path(__file__).resolve().parents[2]
LOAN = ROOT / "examples/loan"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, reaped by nobody yet, counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return not _alive(pid)


def _server_pid(text: str) -> int | None:
    m = re.search(r"llama\.cpp server started on 127\.0\.0\.1:\d+ \(pid (\d+)\)", text)
    return int(m.group(1)) if m else None


def test_the_server_option_is_checked_in_one_line_before_anything_starts():
    assert check_model_uri("embedded:smollm2?server=1") and check_model_uri("gguf:./m.gguf?server=true")
    with pytest.raises(ModelError, match=r"server='maybe' of embedded:smollm2 must be 1 .* or 0"):
        check_model_uri("embedded:smollm2?server=maybe")
    with pytest.raises(ModelError, match="only gguf:PATH and embedded:smollm2 models can be served"):
        check_model_uri("spacy:./model?server=1")
    with pytest.raises(ModelError, match="only gguf:PATH and embedded:smollm2"):
        check_model_uri("embedded:imdb-sentiment?server=1")
    with pytest.raises(ModelError, match="startup_timeout"):
        check_model_uri("embedded:smollm2?server=1&startup_timeout=0")
    # an option the served backend does not take is refused before a server is started
    with pytest.raises(ModelError, match="unknown option 'n_batch'"):
        load_chat("embedded:smollm2?server=1&n_batch=4")
    with pytest.raises(ModelError, match="does not exist"):
        load_chat("gguf:/nonexistent/model.gguf?server=1")


@pytest.mark.slow
def test_a_served_smollm2_answers_through_the_openai_client_and_stops_on_close(capfd):
    pytest.importorskip("llama_cpp.server")
    from fairprobe.models.base import ChatRequest

    model = load_chat("embedded:smollm2?server=1")
    pid = _server_pid(capfd.readouterr().err)
    try:
        assert pid is not None and _alive(pid)
        fp = model.fingerprint.to_json()
        # its own fingerprint: not the in-process one (answers are not guaranteed the same), no port
        assert fp["backend"] == "llama.cpp-server" and fp["model_id"] == "embedded:smollm2"
        assert (
            len(fp["weights"]) == 64 and fp["params"]["n_ctx"] == 8192 and "127.0.0.1" not in json.dumps(fp)
        )
        requests = [
            ChatRequest.of(f"Say the word {w}.", max_tokens=8, seed=1) for w in ("yes", "no", "maybe")
        ]
        answers = model.chat(requests)
        assert len(answers) == 3 and all(a.text.strip() for a in answers)
        assert all(a.completion_tokens > 0 for a in answers)
        assert [a.text for a in model.chat(requests[:1])] == [answers[0].text]  # same request, same answer
    finally:
        model.close()
    assert pid is not None and _gone_within(pid, 10), "the server outlived close()"
    model.close()  # idempotent


def _run(tmp_path: Path, rows: int) -> list[str]:
    lines = (LOAN / "loan_applications.csv").read_text().splitlines()
    (tmp_path / "loan.csv").write_text("\n".join(lines[: rows + 1]) + "\n")
    return [str(Path(sys.executable).parent / "fairprobe"), "hinter", "--model", "embedded:smollm2?server=1",
            "--prompt-template", str(LOAN / "loan_classifier.yaml"), "--data", "loan.csv",
            "--attributes", "gender", "--order", "1", "--out", "run"]  # fmt: skip


@pytest.mark.slow
def test_a_run_from_python_stops_its_server_before_it_returns(tmp_path, capfd, monkeypatch):
    """The run closes what it started (not only at interpreter exit): a notebook keeps no server."""
    pytest.importorskip("llama_cpp.server")
    import fairprobe

    monkeypatch.chdir(tmp_path)
    lines = (LOAN / "loan_applications.csv").read_text().splitlines()
    (tmp_path / "loan.csv").write_text("\n".join(lines[:2]) + "\n")
    run = fairprobe.hinter(model="embedded:smollm2?server=1", data="loan.csv", attributes=["gender"], order=1,
                           prompt_template=str(LOAN / "loan_classifier.yaml"), out="run")  # fmt: skip
    pid = _server_pid(capfd.readouterr().err)
    assert pid is not None and not _alive(pid), "the server was still running when the run returned"
    assert run.summary["metrics"]["tested"] > 0


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "FAIRPROBE_CACHE": str(tmp_path / "cache.db"), "PYTHONPATH": pythonpath(tmp_path)}


@pytest.mark.slow
def test_a_run_with_a_served_model_leaves_no_server_behind(tmp_path):
    pytest.importorskip("llama_cpp.server")
    done = subprocess.run(_run(tmp_path, 1), cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    pid = _server_pid(done.stderr)
    assert pid is not None, done.stderr
    assert _gone_within(pid, 5), "the llama.cpp server outlived the run"
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    assert summary["metrics"]["tested"] > 0 and summary["llm_throughput"]["requests"] > 0


@pytest.mark.slow
def test_ctrl_c_during_a_served_run_exits_130_and_stops_the_server(tmp_path):
    pytest.importorskip("llama_cpp.server")
    err_path = tmp_path / "stderr.txt"
    with err_path.open("w") as err_file:
        proc = subprocess.Popen(_run(tmp_path, 10), cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.DEVNULL,
                                stderr=err_file, text=True, preexec_fn=default_sigint)  # fmt: skip
        try:
            deadline = time.monotonic() + 240
            pid = None
            while pid is None and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.2)
                pid = _server_pid(err_path.read_text())
            assert pid is not None and _alive(pid), err_path.read_text()
            time.sleep(3)  # a few answers in
            assert proc.poll() is None, "the run finished before the interrupt: make it longer"
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
            took = time.monotonic() - sent
        finally:
            proc.kill()
    err = err_path.read_text()
    assert proc.returncode == 130, err
    assert took <= 10, f"exit took {took:.1f} s after SIGINT"
    assert "Traceback" not in err and any(line.startswith("interrupted:") for line in err.splitlines()), err
    assert _gone_within(pid, 5), "the llama.cpp server outlived the interrupted run"
