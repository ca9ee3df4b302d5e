"""Secrets in model URIs: written as ``***`` wherever a URI is written or printed.

Its own module so that every backend and the URI parser can use it without importing each other.
"""

from __future__ import annotations

import re
from typing import Any

SECRET_OPTIONS = ("api_key", "apikey", "api-key", "key", "token", "access_token", "auth_token")
"""Query option names whose values are secrets (compared case-insensitively)."""
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<user>[^/?#@\s]*?)(?P<pw>:[^/?#@\s]*)?@")
_SECRET_QUERY = re.compile(
    r"(?P<head>[?&](?:" + "|".join(re.escape(n) for n in SECRET_OPTIONS) + r")=)(?P<value>[^&#\s]*)",
    re.IGNORECASE,
)


def redact_uri(text: str) -> str:
    """``text`` with every secret of a URI in it replaced by ``***``: the password of a
    ``scheme://user:password@host`` (a lone ``scheme://token@host`` user is taken for a key too)
    and the values of ``api_key``/``apikey``/``key``/``token``/``access_token`` query options.
    Text without such parts is returned unchanged, so it is safe on any string."""
    if "@" not in text and "=" not in text:
        return text

    def userinfo(m: re.Match[str]) -> str:
        if m.group("pw") is not None:
            return f"{m.group('head')}{m.group('user')}:***@"
        return f"{m.group('head')}***@"

    text = _USERINFO.sub(userinfo, text)
    return _SECRET_QUERY.sub(lambda m: f"{m.group('head')}***" if m.group("value") else m.group(0), text)


def redact_secrets(value: Any) -> Any:
    """:func:`redact_uri` on every string inside ``value`` (dicts, lists, tuples; keys too)."""
    if isinstance(value, str):
        return redact_uri(value)
    if isinstance(value, dict):
        return {redact_secrets(k): redact_secrets(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_secrets(v) for v in value)
    return value


__all__ = ["SECRET_OPTIONS", "redact_secrets", "redact_uri"]
