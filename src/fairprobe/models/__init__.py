"""Model backends behind two protocols, addressed by URI (DESIGN.md §3).

``load_classifier(uri)`` / ``load_chat(uri)`` / ``load_model(uri)`` build a backend from a URI
(see :mod:`fairprobe.models.uri`); :class:`LLMClassifier` turns a chat model into a classifier.
Backends import their heavy dependencies (spaCy, torch, llama.cpp) only when loaded.
"""

from fairprobe.models.base import (
    INVALID,
    ChatModel,
    ChatRequest,
    ChatResponse,
    Classifier,
    Fingerprint,
    Message,
    Prediction,
    canonical_json,
)
from fairprobe.models.check import check_model
from fairprobe.models.llm_classifier import ClassificationTask, LabelParser, LLMClassifier
from fairprobe.models.uri import ModelURI, load_chat, load_classifier, load_model, model_kind, parse_uri

__all__ = [
    "INVALID",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "ClassificationTask",
    "Classifier",
    "Fingerprint",
    "LLMClassifier",
    "LabelParser",
    "Message",
    "ModelURI",
    "Prediction",
    "canonical_json",
    "check_model",
    "load_chat",
    "load_classifier",
    "load_model",
    "model_kind",
    "parse_uri",
]
