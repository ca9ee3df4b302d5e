"""``fairprobe models check URI``: load a model, send one request, report what came back (DESIGN.md §3).

A quick way to see that a URI works before a long run: the fingerprint that keys the response
cache, how long loading and one request took, and a sample output.
"""

from __future__ import annotations

import time
from typing import Any

from fairprobe.models.base import ChatRequest, Classifier
from fairprobe.models.uri import load_model, redact_uri

CHECK_TEXT = "This movie was wonderful: I loved every minute of it."
CHECK_PROMPT = "Say hello."


def check_model(uri: str, **options: Any) -> dict[str, Any]:
    """Load ``uri`` and send one request: a short text to a classifier, "Say hello." to a chat model.

    Returns ``{"uri", "kind", "fingerprint", "fingerprint_key", "load_s", "latency_s", "output"}``,
    plus ``fingerprint_inputs`` (``{what: sha256}``: source and weights files, hook values) for
    models that hash several things into ``fingerprint.weights`` (``py:``, ``py-chat:``).
    Raises :class:`~fairprobe.errors.ModelError` when the model cannot be loaded or called.
    """
    start = time.perf_counter()
    model = load_model(uri, **options)
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    if isinstance(model, Classifier) and hasattr(model, "predict"):
        kind = "classifier"
        prediction = model.predict([CHECK_TEXT])[0]
        output: dict[str, Any] = {"text": CHECK_TEXT, "prediction": prediction.to_json()}
    else:
        kind = "chat"
        response = model.chat([ChatRequest.of(CHECK_PROMPT, temperature=0.0, max_tokens=32, seed=0)])[0]
        output = {"prompt": CHECK_PROMPT, "response": response.to_json()}
    latency_s = time.perf_counter() - start
    fp = model.fingerprint
    inputs = getattr(model, "fingerprint_inputs", None)
    return {
        "uri": redact_uri(uri),
        "kind": kind,
        "fingerprint": fp.to_json(),
        "fingerprint_key": fp.key,
        **({"fingerprint_inputs": inputs} if inputs else {}),
        "load_s": round(load_s, 4),
        "latency_s": round(latency_s, 4),
        "output": output,
    }
