"""Secrets redacted by structure, not by pattern (issue 40), through the real CLI: a password holding
'@', an undocumented query option (refused before anything is written), an Authorization header a
server echoes, a model's exception text; and a CR/LF in an API key never reaches a socket.

Each secret is a unique token, searched byte for byte in every file of the test's folder (run
folders and the isolated global cache). Server faults come from FAKE servers, named so."""

from __future__ import annotations

import base64
import socket
import threading
from pathlib import Path

import pytest
from servers import FaultServer, free_port

from fairprobe.models.redact import redact_uri
from fairprobe.technique.spec import model_folder
from reliability.helpers import assert_one_red_line

TOKEN = "Zq7tokenXy"
PASSWORD = f"pa@ss{TOKEN}"  # holds '@': only the last '@' ends the userinfo
AUDIT = [
    "--data", "people.csv", "--group-col", "sex", "--label-col", "label", "--positive-label", "1",
    "--budget", "8", "--seeds", "1", "--strategy", "stratified",
]  # fmt: skip


@pytest.fixture(autouse=True)
def people(tmp_path: Path) -> None:
    rows = "".join(f"p{i},applicant {i},{'MF'[i % 2]},{1 if i % 4 < 2 else 0}\n" for i in range(24))
    (tmp_path / "people.csv").write_text("id,text,sex,label\n" + rows, encoding="utf-8")


def _hits(folder: Path, *texts: str) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*")) if folder.is_dir() else [folder]:
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path}: {t}" for t in texts if t.encode() in data]
    return found


def test_a_password_holding_at_reaches_no_file_and_no_screen(cli, tmp_path: Path):
    with FaultServer(script=[("ok", '{"confidence": 70}')] * 200) as fault:
        uri = fault.base_url.replace("http://", f"http://probe:{PASSWORD}@")
        r = cli("audit", "--model", f"openai+{uri}#{fault.model_id}", *AUDIT, "--out", "run")
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert (tmp_path / "run" / "summary.json").is_file()
    assert _hits(tmp_path, TOKEN) == [] and TOKEN not in r.stdout + r.stderr


@pytest.mark.parametrize("option", ["password", "secret", "client_secret"])
def test_an_undocumented_query_option_is_refused_before_anything_is_written(cli, tmp_path: Path, option: str):
    with FaultServer() as fault:
        uri = f"openai+{fault.base_url}?{option}={TOKEN}#{fault.model_id}"
        r = cli("audit", "--model", uri, *AUDIT, "--out", "run")
        assert fault.post_count == 0
    assert_one_red_line(r, f"unknown option {option!r}")
    assert not (tmp_path / "run").exists()
    assert _hits(tmp_path, TOKEN) == [] and TOKEN not in r.stdout + r.stderr


def test_an_authorization_header_echoed_by_the_server_is_neither_printed_nor_stored(cli, tmp_path: Path):
    basic = base64.b64encode(f"probe:{PASSWORD}".encode()).decode()
    body = '{"error": {"message": "bad request", "headers": {"Authorization": "Basic ' + basic + '"}}}'
    with FaultServer(script=[("status", 400, body)] * 50) as fault:
        uri = fault.base_url.replace("http://", f"http://probe:{PASSWORD}@")
        r = cli("audit", "--model", f"openai+{uri}#{fault.model_id}", *AUDIT, "--out", "run")
    assert_one_red_line(r, "HTTP 400")
    assert basic not in r.stdout + r.stderr and TOKEN not in r.stdout + r.stderr
    assert _hits(tmp_path, basic, TOKEN) == []


def test_a_models_exception_text_is_stored_redacted(cli, work: Path):
    (work / "leaky.py").write_text(
        "def classify(texts):\n"
        f"    raise RuntimeError('POST http://svc:{PASSWORD}@10.0.0.1/v1 failed; Authorization: Bearer {TOKEN}x1')\n",
        encoding="utf-8",
    )
    (work / "spec.yaml").write_text("accuracy:\n  model: py:leaky:classify\n  data: data.csv\n")
    r = cli("run", "spec.yaml", "--out", "runs")
    assert_one_red_line(r, "RuntimeError")
    assert (work / "runs" / "accuracy" / "run.db").is_file()
    assert [h for h in _hits(work, TOKEN) if not h.startswith(str(work / "leaky.py"))] == []
    assert TOKEN not in r.stdout + r.stderr


class RawServer:
    """A FAKE server that records the raw bytes it receives (and answers nothing useful)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.received = b""
        self._sock = socket.create_server(("127.0.0.1", self.port))
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1.0)
                try:
                    self.received += conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                except OSError:
                    pass

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()


def test_a_line_break_in_an_api_key_is_refused_and_never_sent(tmp_path: Path):
    import os
    import subprocess
    import sys

    from childenv import pythonpath

    exe = Path(sys.executable).parent / "fairprobe"
    env = {
        **os.environ,
        "FAIRPROBE_CACHE": str(tmp_path / "cache.db"),
        "PYTHONPATH": pythonpath(tmp_path),
        "MY_KEY": "sk-abc\r\nX-Injected: yes",
    }
    with RawServer() as raw:
        uri = f"openai+http://127.0.0.1:{raw.port}/v1?api_key_env=MY_KEY#m"
        r = subprocess.run(
            [str(exe), "models", "check", uri], env=env, cwd=tmp_path, capture_output=True, text=True
        )
    assert_one_red_line(r, "MY_KEY holds a control character")
    assert raw.received == b"" and b"X-Injected" not in raw.received


def test_redaction_follows_the_structure_of_a_uri():
    assert redact_uri(f"openai+http://user:{PASSWORD}@h:8/v1#m") == "openai+http://***@h:8/v1#m"
    shown = redact_uri(f"see hf:org/x?device=cpu&client_secret={TOKEN}&timeout=5 now")
    assert shown == "see hf:org/x?device=cpu&client_secret=***&timeout=5 now"
    assert redact_uri(f'{{"Authorization": "Basic {TOKEN}=="}}') == '{"Authorization": "***"}'
    assert redact_uri("a basic understanding, x=1") == "a basic understanding, x=1"  # prose stays


def test_a_models_folder_keeps_its_name_when_a_timeout_or_a_password_changes():
    base = "openai+http://u:old@127.0.0.1:8080/v1#smollm2"
    assert model_folder(base) == model_folder("openai+http://u:new@127.0.0.1:8080/v1?timeout=300#smollm2")
    assert model_folder(base) == model_folder(f" {base}")
    assert model_folder(base) != model_folder("openai+http://127.0.0.1:8080/v1#other")
