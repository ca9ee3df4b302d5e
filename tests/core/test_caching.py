"""The execute layer: each distinct request reaches the model once; repeats are distinct requests."""

import pytest

from fairprobe.models.base import ChatRequest
from fairprobe.models.uri import load_chat, load_classifier
from fairprobe.run.caching import CachedChatModel, CachedClassifier
from fairprobe.run.store import Store

MODULE = """
SEEN = []
def classify(texts):
    SEEN.extend(texts)
    return [t.upper() for t in texts]
def chat(conversations):
    SEEN.extend(c[-1]["content"] for c in conversations)
    return ["echo: " + c[-1]["content"] for c in conversations]
"""


@pytest.fixture
def module(tmp_path, monkeypatch):
    (tmp_path / "echo_mod.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    import echo_mod

    importlib.reload(echo_mod)
    return echo_mod


def test_identical_inputs_in_a_batch_are_sent_once_and_cached(module, tmp_path):
    with Store(tmp_path / "run.db") as run, Store(tmp_path / "cache.db") as cache:
        model = CachedClassifier(load_classifier("py:echo_mod:classify"), [run, cache], chunk_size=2)
        preds = model.predict(["a", "b", "a", "c", "b"])
        assert [p.label for p in preds] == ["A", "B", "A", "C", "B"]
        assert sorted(module.SEEN) == ["a", "b", "c"] and model.calls == 3
        model.predict(["c", "a", "d"])
        assert sorted(module.SEEN) == ["a", "b", "c", "d"]
    # A new run store with the same global cache: nothing is sent again.
    with Store(tmp_path / "run2.db") as run2, Store(tmp_path / "cache.db") as cache:
        again = CachedClassifier(load_classifier("py:echo_mod:classify"), [run2, cache])
        assert [p.label for p in again.predict(["d", "a"])] == ["D", "A"]
        assert again.calls == 0 and len(module.SEEN) == 4


def test_repeats_are_distinct_requests_with_seed_plus_repeat(module, tmp_path):
    base = ChatRequest.of("hi", seed=10)
    repeats = [ChatRequest.of("hi", seed=10, repeat=i) for i in range(3)]
    assert [r.effective_seed for r in repeats] == [10, 11, 12]
    assert len({r.cache_key() for r in repeats}) == 3
    assert repeats[0].cache_key() == base.cache_key()
    with Store(tmp_path / "run.db") as run:
        model = CachedChatModel(load_chat("py-chat:echo_mod:chat"), [run])
        out = model.chat([*repeats, repeats[1]])
        assert [o.text for o in out] == ["echo: hi"] * 4
        assert model.calls == 3  # three repeats, the duplicate of repeat 1 not sent
        model.chat(repeats)
        assert model.calls == 3
