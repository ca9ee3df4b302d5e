"""Prompts longer than a model's context window: how a backend recognises one, and how a batch goes
on without it.

A backend turns its library's or server's refusal of an over-long prompt into a
:class:`~fairprobe.errors.ContextLengthError` (:func:`is_context_overflow` reads the message:
llama.cpp's ``Requested tokens (N) exceed context window of M``, llama-server's
``exceed_context_size_error``, OpenAI's ``context_length_exceeded``). Callers that can score one
request as INVALID and go on use :func:`chat_tolerant`; every other model error still stops the run.
"""

from __future__ import annotations

import re

from fairprobe.errors import ContextLengthError
from fairprobe.models.base import ChatModel, ChatRequest, ChatResponse

_OVERFLOW = re.compile(
    r"context|too long|exceed|maximum.{0,40}tokens|token limit|prompt is too", re.IGNORECASE
)


def is_context_overflow(message: str) -> bool:
    """Whether a backend's error message says the prompt does not fit the model's context window."""
    return bool(_OVERFLOW.search(message))


def chat_tolerant(model: ChatModel, requests: list[ChatRequest]) -> list[ChatResponse | ContextLengthError]:
    """``model.chat(requests)``, except that a request whose prompt is longer than the context gives
    its :class:`ContextLengthError` in its place instead of aborting the batch.

    Any other model error (server down, bad URI) still raises: the run cannot go on without the model.
    """
    if not requests:
        return []
    try:
        return list(model.chat(requests))
    except ContextLengthError as exc:
        if len(requests) == 1:
            return [exc]
    out: list[ChatResponse | ContextLengthError] = []
    for request in requests:  # one by one: answers already given come from the cache
        try:
            out.append(model.chat([request])[0])
        except ContextLengthError as exc:
            out.append(exc)
    return out
