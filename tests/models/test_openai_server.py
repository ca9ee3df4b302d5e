"""``openai+http://`` and ``LLMClassifier`` against the real llama.cpp server running SmolLM2-135M."""

from __future__ import annotations

import pytest

from fairprobe.models import (
    INVALID,
    ChatModel,
    ChatRequest,
    ClassificationTask,
    LLMClassifier,
    load_chat,
    load_classifier,
)

pytestmark = pytest.mark.server

REVIEWS = [
    "I loved this film, it was wonderful and moving.",
    "Awful movie. Boring and badly acted, I hated it.",
    "Great acting, superb story, a masterpiece.",
]


@pytest.fixture(scope="module")
def smollm2(llama_server: str) -> ChatModel:
    return load_chat(f"openai+{llama_server}#smollm2", concurrency=3, timeout=60)


def test_fingerprint_reports_server_model_id(smollm2: ChatModel, llama_server: str) -> None:
    fp = smollm2.fingerprint
    assert (fp.backend, fp.model_id, fp.weights) == ("openai-compatible", "smollm2", "smollm2")
    assert fp.params == {"base_url": llama_server}
    # without #MODEL the server's own id is used
    assert load_chat(f"openai+{llama_server}").fingerprint.key == fp.key


def test_batch_keeps_order_and_is_deterministic_at_temperature_0(smollm2: ChatModel) -> None:
    prompts = [
        "What is 2+2? Answer with a number.",
        "Who wrote the play Hamlet?",
        "Say hello.",
        "What colour is the sky on a clear day?",
    ]
    requests = [ChatRequest.of(p, temperature=0.0, max_tokens=20, seed=7) for p in prompts]
    first = smollm2.chat(requests)
    # llama.cpp replays the last token when the very same prompt comes twice in a row, which
    # shifts its logits; a different request in between keeps the comparison about our client.
    smollm2.chat([ChatRequest.of("Count to three.", max_tokens=8)])
    second = smollm2.chat(list(reversed(requests)))
    texts = [r.text for r in first]
    assert texts == [r.text for r in reversed(second)]
    assert "4" in texts[0] and "Shakespeare" in texts[1] and "blue" in texts[3].lower()
    assert len(set(texts)) == len(texts)
    for r in first:
        assert r.finish_reason in ("stop", "length")
        assert 0 < r.completion_tokens <= 20 and r.prompt_tokens > 0
        assert r.latency_s > 0


def test_sampling_with_the_same_seed_repeats(smollm2: ChatModel) -> None:
    request = ChatRequest.of("Write one sentence about the sea.", temperature=1.0, max_tokens=16, seed=11)
    a = smollm2.chat([request])[0].text
    smollm2.chat([ChatRequest.of("Say hello.", max_tokens=4)])
    b = smollm2.chat([request])[0].text
    assert a == b and a


def test_llm_classifier_parses_answers_and_counts_invalid(smollm2: ChatModel) -> None:
    task = ClassificationTask(
        labels=["positive", "negative"],
        question="Review: {text}\nIs this review positive or negative?",
        max_tokens=8,
    )
    clf = LLMClassifier(smollm2, task)
    preds = clf.predict(REVIEWS)
    answers = [r.text for r in clf.last_responses]
    assert [p.labels for p in preds] == [clf.parse(a).labels for a in answers]
    assert all(p.labels <= {"positive", "negative", INVALID} for p in preds)
    assert any(p.labels != {INVALID} for p in preds)
    assert clf.invalid_count == sum(INVALID in p.labels for p in preds)
    assert "positive" in preds[0].labels  # an unmistakable review, even for a 135M model

    # labels the model never says: every answer is INVALID, and counted
    odd = ClassificationTask(
        labels=["Zyxwv", "Qwrtp"],
        system_prompt="You are a helpful assistant.",
        question="Review: {text}\nIs this review positive or negative?",
        max_tokens=8,
    )
    clf2 = load_classifier(f"openai+{smollm2.fingerprint.params['base_url']}#smollm2", task=odd)
    assert isinstance(clf2, LLMClassifier)
    assert [p.labels for p in clf2.predict(REVIEWS)] == [frozenset([INVALID])] * 3
    assert clf2.invalid_count == 3 and clf2.invalid_rate == 1.0
    assert all(r.text.strip() for r in clf2.last_responses)
