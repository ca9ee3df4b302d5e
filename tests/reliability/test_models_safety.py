"""Model safety through the real CLI: a key in a model URI reaches no file and no screen; the cache
key of an HTTP model never changes because ``/v1/models`` answered junk; a ``py:`` model's imported
helpers are part of its fingerprint; an empty chat answer is retried and never cached; non-finite
scores are invalid answers, never a pass; a malformed URI is one line and exit 2.

Faults a real server cannot produce on cue (junk from ``/v1/models``, a ``content: null`` answer)
come from FAKE servers, named so."""

from __future__ import annotations

import base64
import csv
import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from servers import FaultServer, LocalFake, free_port

from fairprobe.errors import ModelError
from fairprobe.models import INVALID, ChatRequest, ClassificationTask, LLMClassifier, load_chat
from fairprobe.run.caching import CachedChatModel, CachedClassifier
from fairprobe.run.store import Store
from reliability.helpers import assert_one_red_line

USER_KEY = "sk-USERINFOsecret7f3a"
QUERY_KEY = "sk-QUERYsecret91b2"
AUDIT_SMALL = [
    "--data", "people.csv", "--group-col", "sex", "--label-col", "label", "--positive-label", "1",
    "--budget", "12", "--seeds", "1", "--strategy", "stratified",
]  # fmt: skip
"""A small audit: 40 people, both labels in both groups, the model-free stratified sampler."""
PEOPLE_IDS = [f"p{i}" for i in range(40)]


@pytest.fixture(autouse=True)
def people(tmp_path: Path) -> None:
    rows = "".join(
        f"p{i},applicant {i} with a record of work,{'MF'[i % 2]},{1 if i % 4 < 2 else 0}\n" for i in range(40)
    )
    (tmp_path / "people.csv").write_text("id,text,sex,label\n" + rows, encoding="utf-8")


def _with_userinfo(base_url: str) -> str:
    return base_url.replace("http://", f"http://probe-user:{USER_KEY}@")


def _hits(folder: Path, *texts: str) -> list[str]:
    """Files under ``folder`` (bytes, run.db and its WAL included) that contain a secret."""
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.name}: {t}" for t in texts if t.encode() in data]
    return found


# -- 1. secrets --------------------------------------------------------------------------------
def test_a_key_in_the_model_uri_reaches_no_file_and_no_screen(cli, tmp_path: Path) -> None:
    """FAKE server scores every text 70; the URI carries a key in its userinfo."""
    with FaultServer(script=[("ok", '{"confidence": 70}')] * 400) as fault:
        uri = f"openai+{_with_userinfo(fault.base_url)}#{fault.model_id}"
        r = cli("audit", "--model", uri, *AUDIT_SMALL, "--out", "run")
        assert r.returncode in (0, 1), r.stdout + r.stderr
        auth = {v for p in fault.posts for k, v in p.headers.items() if k.lower() == "authorization"}
    # the request itself used the real key (HTTP basic auth from the URL's userinfo)
    assert auth == {"Basic " + base64.b64encode(f"probe-user:{USER_KEY}".encode()).decode()}
    run = tmp_path / "run"
    assert {"spec.yaml", "run.db", "summary.json", "report.html"} <= {p.name for p in run.iterdir()}
    summary = json.loads((run / "summary.json").read_text())
    assert "//***@" in summary["model"]["uri"]  # the whole userinfo, user name too
    assert "//***@" in summary["model"]["fingerprints"][0]["params"]["base_url"]
    assert _hits(tmp_path, USER_KEY) == []  # run folder and the global cache
    assert USER_KEY not in r.stdout + r.stderr


def test_a_key_in_the_model_uri_of_a_hinter_run_is_never_stored(cli, tmp_path: Path) -> None:
    """FAKE server (echo answers); hinter records the oracle's URI among the run's facts."""
    (tmp_path / "reviews.csv").write_text("id,text,label\nr1,a good film by a black woman,POS\n")
    with FaultServer() as fault:
        uri = f"openai+{_with_userinfo(fault.base_url)}#{fault.model_id}"
        r = cli(
            "hinter", "--model", uri, "--data", "reviews.csv", "--task", "imdb", "--few-shot", "0",
            "--attributes", "gender", "--order", "1", "--out", "run",
        )  # fmt: skip
        assert fault.post_count > 0
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert "//***@" in json.loads((tmp_path / "run" / "summary.json").read_text())["model"]["uri"]
    assert _hits(tmp_path, USER_KEY) == [] and USER_KEY not in r.stdout + r.stderr


def test_a_key_in_the_query_is_refused_in_one_line_and_never_written(cli, tmp_path: Path) -> None:
    with FaultServer() as fault:
        uri = f"openai+{_with_userinfo(fault.base_url)}?api_key={QUERY_KEY}&TOKEN={QUERY_KEY}#fault-model"
        r = cli("audit", "--model", uri, *AUDIT_SMALL, "--out", "run")
        assert fault.post_count == 0
    line = assert_one_red_line(r, "api_key_env")
    assert QUERY_KEY not in r.stdout + r.stderr and USER_KEY not in line
    assert not (tmp_path / "run").exists()  # refused before anything is written
    assert _hits(tmp_path, USER_KEY, QUERY_KEY) == []


def test_cannot_reach_names_the_server_without_its_key(cli, tmp_path: Path) -> None:
    uri = f"openai+http://probe-user:{USER_KEY}@127.0.0.1:{free_port()}/v1#m"
    r = cli("models", "check", uri)
    line = assert_one_red_line(r, "cannot reach", "//***@127.0.0.1")
    assert USER_KEY not in line + r.stdout
    r = cli("audit", "--model", uri, *AUDIT_SMALL, "--out", "run")
    assert_one_red_line(r, "cannot reach")
    assert USER_KEY not in r.stdout + r.stderr
    assert _hits(tmp_path, USER_KEY) == []


# -- 2. cache keys -----------------------------------------------------------------------------
class _FakeModelsEndpoint(LocalFake):
    """FAKE OpenAI-compatible server whose ``GET /v1/models`` answers per ``mode``: ``ok`` (lists
    ``served``), ``html`` (HTTP 200 with a web page) or ``404``; chat completions echo the prompt."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.posts = 0

    def handler(self) -> type:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, code: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                if outer.mode == "html":
                    self._send(200, b"<!DOCTYPE html><html><body>Login</body></html>", "text/html")
                elif outer.mode == "404":
                    self._send(404, b'{"detail": "Not Found"}')
                else:
                    self._send(200, json.dumps({"data": [{"id": "served"}]}).encode())

            def do_POST(self) -> None:  # noqa: N802
                outer.posts += 1
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = "echo: " + body["messages"][-1]["content"]
                answer = {"choices": [{"message": {"content": text}, "finish_reason": "stop"}]}
                self._send(200, json.dumps(answer).encode())

        return Handler

    @property
    def uri(self) -> str:
        return f"openai+http://127.0.0.1:{self.port}/v1#served"


@pytest.mark.parametrize(("mode", "what"), [("html", "HTML page"), ("404", "HTTP 404")])
def test_junk_from_the_models_endpoint_never_changes_the_cache_key(cli, tmp_path, mode, what) -> None:
    requests = [ChatRequest.of(f"prompt {i}") for i in range(3)]
    with _FakeModelsEndpoint() as server, Store(tmp_path / "store.db") as store:
        steady = CachedChatModel(load_chat(server.uri + "?backoff=0"), [store])
        first = steady.chat(requests)
        server.mode = mode
        r = cli("models", "check", server.uri + "?retries=1&backoff=0")
        assert_one_red_line(r, "/v1/models", what, "probe=false")
        with pytest.raises(ModelError, match=what):
            load_chat(server.uri + "?backoff=0")
        # the way out keeps the key: every cached answer is reused, nothing is sent again
        posts = server.posts
        model = CachedChatModel(load_chat(server.uri + "?probe=false"), [store])
        assert model.fingerprint.key == steady.fingerprint.key
        assert model.chat(requests) == first and server.posts == posts


HELPER_MODEL = """
import helper
def classify(texts):
    return [helper.LABEL for t in texts]
"""


def test_an_edited_helper_module_changes_the_py_fingerprint(cli, work: Path) -> None:
    (work / "helpmodel.py").write_text(HELPER_MODEL)
    (work / "helper.py").write_text('LABEL = "POS"\n')
    (work / "spec.yaml").write_text("accuracy:\n  model: py:helpmodel:classify\n  data: data.csv\n")
    before = json.loads(cli("models", "check", "py:helpmodel:classify").stdout)
    assert any(k.endswith("helper.py") for k in before["fingerprint_inputs"])
    assert cli("run", "spec.yaml", "--out", "one").returncode in (0, 1)
    (work / "helper.py").write_text('LABEL = "NEG"\n')  # the model file itself is unchanged
    after = json.loads(cli("models", "check", "py:helpmodel:classify").stdout)
    assert after["fingerprint_key"] != before["fingerprint_key"]
    assert cli("run", "spec.yaml", "--out", "two").returncode in (0, 1)
    predicted = [
        {
            p
            for line in (work / f"{out}/accuracy/findings.jsonl").read_text().splitlines()
            for p in json.loads(line)["predicted"]
        }
        for out in ("one", "two")
    ]
    assert predicted == [{"POS"}, {"NEG"}]  # not served stale from the global cache


NULL_ANSWER = json.dumps(
    {"choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": "stop"}]}
)


def test_a_null_answer_is_retried_and_never_cached(tmp_path: Path) -> None:
    """FAKE server: ``content: null`` once (then ``""``), then real answers."""
    request = ChatRequest.of("hello")
    with FaultServer(script=[("status", 200, NULL_ANSWER)]) as fault, Store(tmp_path / "run.db") as store:
        model = CachedChatModel(load_chat(fault.uri + "?backoff=0"), [store])
        assert model.chat([request])[0].text == "echo: hello"  # retried within the budget
        assert fault.post_count == 2
    empty = NULL_ANSWER.replace("null", '""')
    with FaultServer(script=[("status", 200, empty)]) as fault, Store(tmp_path / "run2.db") as store:
        model = CachedChatModel(load_chat(fault.uri + "?retries=0"), [store])
        assert model.chat([request])[0].text == ""  # the budget is spent: returned, not stored
        assert store.get_responses(model.fingerprint.key, [request.cache_key()]) == {}
        assert model.chat([request])[0].text == "echo: hello" and fault.post_count == 2


def test_an_llm_classifier_asks_again_after_an_empty_answer(tmp_path: Path) -> None:
    """FAKE server: ``content: null`` (no retry left), then a label."""
    task = ClassificationTask(labels=["POS", "NEG"])
    with FaultServer(script=[("status", 200, NULL_ANSWER), ("ok", "POS")]) as fault:
        with Store(tmp_path / "run.db") as store:
            first = CachedClassifier(LLMClassifier(load_chat(fault.uri + "?retries=0"), task), [store])
            assert first.predict(["a film"])[0].labels == {INVALID}
        with Store(tmp_path / "run.db") as store:  # the next run, same store
            again = CachedClassifier(LLMClassifier(load_chat(fault.uri + "?retries=0"), task), [store])
            assert again.predict(["a film"])[0].labels == {"POS"}
        assert fault.post_count == 2


# -- 3. non-finite scores ----------------------------------------------------------------------
NONFINITE_MODEL = """
from fairprobe.models import Prediction
def classify(texts):
    return [Prediction(frozenset(["1"]), {"1": float("{value}"), "0": float("{value}")}) for t in texts]
"""


@pytest.mark.parametrize(("value", "strategy"), [("nan", "bafa"), ("inf", "stratified")])
def test_non_finite_model_scores_are_invalid_never_a_pass(cli, tmp_path: Path, value, strategy) -> None:
    (tmp_path / "nonfinite.py").write_text(NONFINITE_MODEL.replace("{value}", value))
    options = [*AUDIT_SMALL[:-1], strategy, "--cerm-steps", "5", "--refits", "1"]
    r = cli("audit", "--model", "py:nonfinite:classify", *options, "--out", "run")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "INCONCLUSIVE" in r.stdout and "INVALID" in r.stdout
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    m = summary["metrics"]
    assert summary["verdict"] == "inconclusive" and not summary["passed"]
    assert m["invalid"] == m["tested"] > 0 and m["invalid_rate"] == 1.0


def _scores_file(path: Path, values: list[object]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "score"])
        w.writerows(zip(PEOPLE_IDS, values, strict=True))


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_scores_file_without_a_finite_score_is_an_input_error(cli, tmp_path: Path, value: str) -> None:
    _scores_file(tmp_path / "scores.csv", [value] * len(PEOPLE_IDS))
    r = cli("audit", "--scores", "scores.csv", *AUDIT_SMALL, "--out", "run")
    assert_one_red_line(r, "scores.csv", "finite")


def test_non_finite_entries_of_a_scores_file_are_counted_invalid(cli, tmp_path: Path) -> None:
    _scores_file(tmp_path / "scores.csv", ["nan" if i % 3 == 0 else 0.3 for i in range(len(PEOPLE_IDS))])
    r = cli("audit", "--scores", "scores.csv", *AUDIT_SMALL, "--out", "run")
    m = json.loads((tmp_path / "run" / "summary.json").read_text())["metrics"]
    assert m["invalid"] > 0 and m["invalid_rate"] == pytest.approx(m["invalid"] / m["tested"])
    assert r.returncode == 1 or m["invalid_rate"] < 0.5, r.stdout


# -- 4. malformed URIs -------------------------------------------------------------------------
BAD_URIS = [
    ("openai+http://127.0.0.1:99999/v1#m", "port"),
    ("openai+http://[::1", "IPv6"),
    ("openai+http://127.0.0.1:9/v1?timeout=nan#m", "timeout=nan"),
    ("openai+http://127.0.0.1:9/v1?timeout=inf#m", "timeout=inf"),
    ("openai+http://127.0.0.1:9/v1?timeout=-5#m", "timeout=-5"),
    ("openai+http://127.0.0.1:9/v1?timeout=0#m", "timeout=0"),
    ("openai+http://127.0.0.1:9/v1?concurrency=0#m", "concurrency=0"),
    ("openai+http://127.0.0.1:9/v1?retries=-1#m", "retries=-1"),
    ("openai+http://127.0.0.1:9/v1?backoff=nan#m", "backoff=nan"),
]


@pytest.mark.parametrize(("uri", "needle"), BAD_URIS)
def test_a_malformed_uri_is_one_line_and_exit_2(cli, work: Path, uri: str, needle: str) -> None:
    assert_one_red_line(cli("models", "check", uri), needle)
    r = cli("hinter", "--model", uri, "--data", "data.csv", "--task", "imdb", "--limit", "2", "--out", "run")
    assert_one_red_line(r, needle)
