"""While spaCy loads (about a second before the first chunk can be validated), a HInter run asks an
in-process model for the first shard's originals, which every chunk needs, so the model works
instead of waiting; the chunks then find those answers stored: no text is asked twice. A model
behind an endpoint is not asked early (the originals ride along with the first chunk's requests)."""

import json

from fairprobe.data.datasets import Record
from fairprobe.methods.hinter.pipeline import _ask_originals_early

MODEL = """
import json

def classify(texts):
    with open("calls.jsonl", "a") as fh:
        fh.write(json.dumps(texts) + "\\n")
    return ["NEG" if "woman" in t.lower() else "POS" for t in texts]
"""

TEXTS = [
    "The white man told a long story about his life in the city.",
    "A Chinese actor and his brother run a small shop near the station.",
    "My Irish uncle is a tall man who loves old movies.",
]


def test_the_originals_are_asked_while_the_parser_loads_and_never_twice(cli, tmp_path):
    (tmp_path / "kw.py").write_text(MODEL)
    (tmp_path / "t.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS))
    log = tmp_path / "calls.jsonl"  # the model runs in tmp_path
    args = ("--no-default-gates", "hinter", "--model", "py:kw:classify", "--data", "t.jsonl")
    r = cli(*args, "--attributes", "race,gender", "--out", "run")
    assert r.returncode == 0, r.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls[0] == TEXTS  # asked at once, before the first chunk (which would add its mutants)
    asked = [t for call in calls for t in call]
    assert len(asked) == len(set(asked))  # the chunks found the originals' answers: none asked twice
    assert len(calls) > 1 and not set(TEXTS) & {t for call in calls[1:] for t in call}
    findings = (tmp_path / "run/findings.jsonl").read_text().splitlines()
    assert findings and any(json.loads(f)["biased"] for f in findings)


class _Loading:
    loading = True


class _Endpoint:
    """Sends each request to an endpoint at once (it has ``predict_async``): never asked early."""

    def predict_async(self, texts, on_item=None):
        raise AssertionError(f"asked early: {texts}")


def test_a_model_behind_an_endpoint_is_not_asked_early():
    todo = [(0, [Record("a", TEXTS[0], None)])]
    assert _ask_originals_early(_Endpoint(), todo, _Loading()).result() == []
    assert _ask_originals_early(_Endpoint(), todo, None).result() == []
