"""Tests of fairprobe.text.fluency: the LM scorer on the real SmolLM2 GGUF, and the LanguageTool client
against a local HTTP server.

No LanguageTool server can run here (it is a Java program fetched from the internet), so
:class:`FakeLanguageTool` below is a *fake*: a real HTTP server that speaks the documented ``/v2/check``
API (form fields ``text``, ``language``, ``disabledCategories``; JSON ``{"software", "language",
"matches": [...]}``) with two simple rules, so the client's HTTP, parsing and arithmetic are exercised.
"""

from __future__ import annotations

import json
import math
import random
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from fairprobe.errors import ModelError, ModelOutputError
from fairprobe.text.fluency import LanguageToolScorer, LMFluencyScorer, count_words

SENTENCES = [
    "The cat sat quietly on the warm mat.",
    "She went to the store to buy some fresh milk.",
    "The judge dismissed the case because the evidence was weak.",
    "My brother plays the guitar every evening after dinner.",
    "The company announced that it would open a new office in London.",
    "We walked along the beach and watched the sun go down.",
]


def shuffled(sentence: str, rng: random.Random) -> str:
    words = sentence.rstrip(".").split()
    while True:
        order = rng.sample(words, len(words))
        if order != words:
            return " ".join(order) + "."


# ---------------------------------------------------------------------------------------------- LM scorer


@pytest.fixture(scope="module")
def lm() -> LMFluencyScorer:
    pytest.importorskip("llama_cpp")
    return LMFluencyScorer("embedded:smollm2", n_ctx=64, n_threads=1)


def test_grammatical_sentences_score_higher_than_their_word_shuffles(lm):
    rng = random.Random(0)
    scrambled = [shuffled(s, rng) for s in SENTENCES]
    good, bad = lm.score(SENTENCES), lm.score(scrambled)
    assert all(math.isfinite(x) and x < 0 for x in good + bad)
    margin = sum(good) / len(good) - sum(bad) / len(bad)
    assert margin > 1.0, (good, bad)  # measured 5.5 nats/token with SmolLM2-135M (6/6 pairs)
    assert sum(g > b for g, b in zip(good, bad, strict=True)) >= 5


def test_lm_scores_are_cached_deterministic_and_truncated(lm):
    text = SENTENCES[0]
    first = lm.score([text, text])
    assert first[0] == first[1] and lm.cache[text] == first[0]
    again = LMFluencyScorer(f"gguf:{lm.path}", n_ctx=64, n_threads=1).score([text])
    assert again == [first[0]]
    long = " ".join(SENTENCES * 4)  # far more than 64 tokens
    longer = long + " Then everybody went home and slept for a very long time."
    a, b = lm.score([long, longer])
    assert math.isfinite(a) and a == b  # only the first n_ctx - 1 tokens count
    assert math.isnan(lm.score([""])[0])


def test_lm_scorer_rejects_missing_models(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        LMFluencyScorer(f"gguf:{tmp_path / 'none.gguf'}")
    with pytest.raises(ModelError, match="embedded:smollm2"):
        LMFluencyScorer("embedded:gpt5")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"this is not a gguf file")
    with pytest.raises(ModelError, match="cannot load"):
        LMFluencyScorer(str(bad)).score(["Hello there."])


# ---------------------------------------------------------------------------------------------- LanguageTool


class FakeLanguageTool(ThreadingHTTPServer):
    """Fake LanguageTool server (see module docstring): flags a repeated word (category GRAMMAR) and a
    lowercase sentence start (category CASING), and records every request's form fields."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, str]] = []
        self.mode = "ok"  # or "error500" / "not-json"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


def _match(text: str, start: int, end: int, rule: str, category: str, message: str) -> dict:
    return {
        "message": message,
        "shortMessage": "",
        "replacements": [],
        "offset": start,
        "length": end - start,
        "context": {"text": text, "offset": start, "length": end - start},
        "sentence": text,
        "rule": {
            "id": rule,
            "description": message,
            "issueType": "grammar",
            "category": {"id": category, "name": category.title()},
        },
    }


class _Handler(BaseHTTPRequestHandler):
    server: FakeLanguageTool

    def log_message(self, *args) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:
        if self.path != "/v2/check":
            self.send_error(404)
            return
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        form = {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}
        self.server.requests.append(form)
        if self.server.mode == "error500":
            self.send_error(500, "Internal Error: boom")
            return
        text, disabled = form["text"], set(form.get("disabledCategories", "").split(","))
        matches = [
            _match(text, m.start(), m.end(), "ENGLISH_WORD_REPEAT_RULE", "GRAMMAR", "Repeated word")
            for m in re.finditer(r"\b(\w+) \1\b", text, flags=re.I)
        ]
        if text[:1].islower():
            matches.append(_match(text, 0, 1, "UPPERCASE_SENTENCE_START", "CASING", "Capitalise"))
        matches = [m for m in matches if m["rule"]["category"]["id"] not in disabled]
        payload = {
            "software": {"name": "LanguageTool", "version": "6.4", "apiVersion": 1},
            "language": {"name": "English (US)", "code": form["language"]},
            "matches": matches,
        }
        raw = b"<html>hello</html>" if self.server.mode == "not-json" else json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def fake_lt():
    server = FakeLanguageTool()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_count_words():
    assert count_words("Don't stop — it's a well-known fact, 100%!") == 7  # 100 is a word; the dash is not
    assert count_words("   ") == 0


def test_languagetool_errors_per_100_words(fake_lt):
    with LanguageToolScorer(fake_lt.url + "/v2/") as lt:
        bad, good, bad_again, empty = lt.score(
            ["the the cat sat on a mat", "The cat sat on a mat.", "the the cat sat on a mat", "  "]
        )
    assert bad == bad_again == pytest.approx(100 * 2 / 7) and good == 0.0 and empty == 0.0
    assert fake_lt.requests == [  # one request per distinct non-empty text
        {"text": "the the cat sat on a mat", "language": "en-US"},
        {"text": "The cat sat on a mat.", "language": "en-US"},
    ]
    assert lt.name == f"languagetool:{fake_lt.url}" and not lt.higher_is_better


def test_languagetool_sends_language_and_disabled_categories(fake_lt):
    lt = LanguageToolScorer(fake_lt.url, language="en-GB", disabled_categories=("CASING", "TYPOS"))
    assert lt.score(["the the cat sat on a mat"]) == [pytest.approx(100 / 7)]
    assert fake_lt.requests[-1]["disabledCategories"] == "CASING,TYPOS"
    assert fake_lt.requests[-1]["language"] == "en-GB"
    assert [m["rule"]["id"] for m in lt.check("the the cat")] == ["ENGLISH_WORD_REPEAT_RULE"]


def test_languagetool_bad_answers_are_model_output_errors(fake_lt):
    lt = LanguageToolScorer(fake_lt.url)
    fake_lt.mode = "error500"
    with pytest.raises(ModelOutputError, match="HTTP 500"):
        lt.score(["Some text."])
    fake_lt.mode = "not-json"
    with pytest.raises(ModelOutputError, match="did not answer JSON"):
        lt.score(["Some text."])
    with pytest.raises(ModelOutputError, match="HTTP 404"):
        LanguageToolScorer(fake_lt.url + "/api").score(["Some text."])


def test_languagetool_unreachable_is_a_model_error():
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ModelError, match="unreachable"):
        LanguageToolScorer(f"http://127.0.0.1:{port}").score(["Hello."])
    with pytest.raises(ModelError, match="http://"):
        LanguageToolScorer("localhost:8081")
