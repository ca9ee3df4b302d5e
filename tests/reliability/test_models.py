"""Cache keys and HTTP batches: fingerprints cover what a model loads; every answer is stored as it
arrives; a flaky /v1/models never changes a key; retries and timeout are set from the URI."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from servers import FaultServer, LocalFake

from fairprobe.errors import ModelError
from fairprobe.models import ChatRequest, load_chat, load_classifier
from fairprobe.models.spacy_backend import spacy_weights_hash
from fairprobe.run.caching import CachedChatModel
from fairprobe.run.store import Store
from fairprobe.technique.spec import parse_spec
from reliability.helpers import assert_one_red_line

EAGER = """
import json
from pathlib import Path
WEIGHTS = json.loads((Path(__file__).parent / "weights.json").read_text())
def classify(texts):
    return [WEIGHTS["label"] for t in texts]
"""
LAZY = """
import json
from pathlib import Path
def fingerprint():
    return ["lazy_weights.json"]
def classify(texts):
    label = json.loads((Path(__file__).parent / "lazy_weights.json").read_text())["label"]
    return [label for t in texts]
"""


def _predicted(run: Path) -> set[str]:
    return {
        p for line in (run / "findings.jsonl").read_text().splitlines() for p in json.loads(line)["predicted"]
    }


def test_retrained_py_weights_are_not_served_from_the_global_cache(cli, work):
    (work / "eager.py").write_text(EAGER)
    (work / "weights.json").write_text('{"label": "POS"}')
    (work / "spec.yaml").write_text("accuracy:\n  model: py:eager:classify\n  data: data.csv\n")
    assert cli("run", "spec.yaml", "--out", "one").returncode in (0, 1)
    assert _predicted(work / "one/accuracy") == {"POS"}
    (work / "weights.json").write_text('{"label": "NEG"}')  # retrained: same module source
    assert cli("run", "spec.yaml", "--out", "two").returncode in (0, 1)
    assert _predicted(work / "two/accuracy") == {"NEG"}
    check = cli("models", "check", "py:eager:classify")
    assert check.returncode == 0, check.stderr
    inputs = json.loads(check.stdout)["fingerprint_inputs"]
    assert any(k.endswith("weights.json") for k in inputs) and any(k.endswith("eager.py") for k in inputs)


def test_fingerprint_hook_covers_lazily_loaded_weights(work, monkeypatch):
    monkeypatch.chdir(work)
    monkeypatch.syspath_prepend(str(work))
    (work / "lazy.py").write_text(LAZY)
    (work / "lazy_weights.json").write_text('{"label": "POS"}')
    first = load_classifier("py:lazy:classify").fingerprint
    (work / "lazy_weights.json").write_text('{"label": "NEGATIVE"}')
    second = load_classifier("py:lazy:classify").fingerprint
    assert first.key != second.key and first.model_id == second.model_id


def test_spacy_weights_hash_follows_the_model_file(tmp_path):
    (tmp_path / "textcat").mkdir()
    (tmp_path / "meta.json").write_text("{}")
    (tmp_path / "config.cfg").write_text("[nlp]\n")
    (tmp_path / "textcat/model").write_bytes(b"\x01" * 64)
    before = spacy_weights_hash(tmp_path)
    (tmp_path / "textcat/model").write_bytes(b"\x02" * 64)
    assert spacy_weights_hash(tmp_path) != before


def test_answered_requests_of_a_failing_batch_are_all_stored(tmp_path):
    """FAKE server: one request of eight gets HTTP 500 (retries=0)."""
    requests = [ChatRequest.of(f"prompt {i}") for i in range(8)]
    with FaultServer(script=[("delay", 0.05), ("500",)]) as fault, Store(tmp_path / "run.db") as store:
        model = CachedChatModel(load_chat(fault.uri + "?retries=0&concurrency=4&backoff=0"), [store])
        with pytest.raises(ModelError, match="HTTP 500"):
            model.chat(requests)
        answered = fault.post_count - 1
        assert answered >= 1
        stored = store.get_responses(model.fingerprint.key, [r.cache_key() for r in requests])
        assert len(stored) == answered  # every answer the server gave is kept
        posts_before = fault.post_count
        again = model.chat(requests)
        assert fault.post_count - posts_before == len(requests) - answered  # nothing re-asked
    assert [r.text for r in again] == [f"echo: prompt {i}" for i in range(8)]


class _FlakyModels(LocalFake):
    """FAKE server whose ``GET /v1/models`` fails with HTTP 503 ``failures`` times, then lists one id."""

    def __init__(self, failures: int):
        self.failures = failures
        self.gets = 0

    def handler(self) -> type:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                outer.gets += 1
                if outer.gets <= outer.failures:
                    self.send_response(503)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = json.dumps({"data": [{"id": "served-model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    @property
    def uri(self) -> str:
        return f"openai+http://127.0.0.1:{self.port}/v1#any-name"


def test_a_flaky_models_endpoint_does_not_change_the_cache_key():
    with _FlakyModels(failures=0) as server:
        steady = load_chat(server.uri + "?backoff=0").fingerprint.key
        server.failures = server.gets + 2  # the next two GETs fail with 503
        assert load_chat(server.uri + "?backoff=0&retries=3").fingerprint.key == steady
        assert server.gets == 4
        server.failures = server.gets + 99
        with pytest.raises(ModelError, match="models failed 2 times .*HTTP 503.*retries"):
            load_chat(server.uri + "?backoff=0&retries=1")


def test_retries_and_timeout_come_from_the_uri_and_do_not_change_the_run():
    with FaultServer(script=[("500",)] * 5) as fault:
        with pytest.raises(ModelError, match=r"failed 2 times .*now 1 / 7 s.*\?retries=8&timeout=120"):
            load_chat(fault.uri.replace("#", "?retries=1&timeout=7&backoff=0#")).chat([ChatRequest.of("x")])
        assert fault.post_count == 2
    spec = "metafair:\n  model: 'openai+http://127.0.0.1:9/v1{q}#m'\n"
    hashes = {
        parse_spec(spec.format(q=q))[0].resolved_hash() for q in ("", "?timeout=5", "?timeout=500&retries=9")
    }
    assert len(hashes) == 1


def test_server_error_body_with_brackets_is_printed_verbatim(cli):
    body = '{"error": {"message": "bad [/x] request [red]"}}'
    with FaultServer(script=[("status", 400, body)]) as fault:
        r = cli("models", "check", fault.uri)
    assert_one_red_line(r, "HTTP 400", "bad [/x] request [red]")
