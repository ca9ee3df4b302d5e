"""Pull JSON out of an LLM's free text: generators are asked for JSON, and small models wrap it in
prose or code fences, or cut it off. Used by every technique that generates test cases with an LLM."""

from __future__ import annotations

import json
import re
from typing import Any

from fairprobe.errors import ModelOutputError

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def _candidates(text: str, opener: str) -> list[str]:
    """Balanced ``[...]`` / ``{...}`` substrings, outermost first, ignoring brackets inside strings."""
    closer = {"[": "]", "{": "}"}[opener]
    found, depth, start, in_str, escape = [], 0, -1, False, False
    for i, ch in enumerate(text):
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"' and depth > 0:
            in_str = True
        elif ch == opener:
            if depth == 0:
                start = i
            depth += 1
        elif ch == closer and depth > 0:
            depth -= 1
            if depth == 0:
                found.append(text[start : i + 1])
    return found


def extract_json(text: str, expect: type = list) -> Any:
    """The first JSON value of type ``expect`` (``list`` or ``dict``) found in ``text``.

    Tries, in order: the whole text, each fenced code block, then each balanced bracketed span.
    Raises :class:`ModelOutputError` (one line, with the start of the text) when none parses.
    """
    opener = "[" if expect is list else "{"
    pieces = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    pieces += _candidates(text, opener)
    for piece in pieces:
        try:
            value = json.loads(piece)
        except (json.JSONDecodeError, ValueError, RecursionError):  # RecursionError: [[[[...]]]] 100k deep
            continue
        if isinstance(value, expect):
            return value
        if expect is list and isinstance(value, dict):
            # {"tests": [...]} and similar single-key wrappers
            inner = [v for v in value.values() if isinstance(v, list)]
            if len(inner) == 1:
                return inner[0]
    preview = " ".join(text.split())[:80]
    raise ModelOutputError(f"no JSON {expect.__name__} in the model's answer (starts: {preview!r})")
