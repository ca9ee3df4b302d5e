"""``py:`` and ``py-chat:`` backends with modules written to a temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairprobe.errors import ModelError, ModelOutputError
from fairprobe.models import ChatRequest, Prediction, load_chat, load_classifier, load_model

CLASSIFIER = """
from fairprobe.models import Prediction

def keyword(texts):
    out = []
    for t in texts:
        if "refund" in t:
            out.append({"billing", "complaint"})
        elif "thanks" in t:
            out.append(Prediction(frozenset({"praise"}), {"praise": 0.9}))
        else:
            out.append("other")
    return out

def short(texts):
    return ["x"] * (len(texts) - 1)

def numbers(texts):
    return [1 for _ in texts]

def chat(conversations):
    return [" | ".join(m["role"] + ":" + m["content"] for m in conv) for conv in conversations]

def bad_chat(conversations):
    return [None for _ in conversations]
"""


@pytest.fixture()
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module ``fp_pymod_<n>`` in tmp_path, imported from the current directory."""
    name = f"fp_pymod_{abs(hash(str(tmp_path))) % 10**8}"
    (tmp_path / f"{name}.py").write_text(CLASSIFIER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.path", [p for p in __import__("sys").path if p not in ("", str(tmp_path))])
    return name


def test_py_classifier_coerces_labels_sets_and_predictions(module: str) -> None:
    clf = load_classifier(f"py:{module}:keyword")
    preds = clf.predict(["I want a refund", "thanks a lot", "hello"])
    assert preds == [
        Prediction(frozenset({"billing", "complaint"})),
        Prediction(frozenset({"praise"}), {"praise": 0.9}),
        Prediction(frozenset({"other"})),
    ]
    fp = clf.fingerprint
    assert (fp.backend, fp.model_id) == ("py", f"py:{module}:keyword")
    assert len(fp.weights) == 64
    assert load_model(f"py:{module}:keyword").fingerprint == fp


def test_py_classifier_wrong_output_is_model_output_error(module: str) -> None:
    with pytest.raises(ModelOutputError, match="returned 1 predictions for 2 inputs"):
        load_classifier(f"py:{module}:short").predict(["a", "b"])
    with pytest.raises(ModelOutputError, match="returned int 1 at position 0"):
        load_classifier(f"py:{module}:numbers").predict(["a"])


def test_py_chat_gets_conversations_returns_strings(module: str) -> None:
    chat = load_chat(f"py-chat:{module}:chat")
    out = chat.chat([ChatRequest.of([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}])])
    assert [r.text for r in out] == ["system:s | user:u"]
    assert chat.fingerprint.backend == "py-chat"
    with pytest.raises(ModelOutputError, match="returned NoneType None at position 0"):
        load_chat(f"py-chat:{module}:bad_chat").chat([ChatRequest.of("hi")])


def test_py_import_errors_are_one_line(module: str) -> None:
    with pytest.raises(
        ModelError, match=r"cannot import module 'no_such_mod_xyz' for py:no_such_mod_xyz:f: put"
    ):
        load_classifier("py:no_such_mod_xyz:f")
    with pytest.raises(ModelError, match=f"module '{module}' .* has no function 'missing'"):
        load_classifier(f"py:{module}:missing")
    with pytest.raises(ModelError, match="must name module:function"):
        load_classifier("py:just_a_module")
