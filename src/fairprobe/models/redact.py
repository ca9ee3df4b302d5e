"""Secrets in model URIs and echoed texts: written as ``***`` wherever a text is written or printed.

Redaction goes by structure, not by the look of a secret:

- the **whole userinfo** of a ``scheme://userinfo@host`` URI (everything before the authority's
  last ``@``, so a password that itself holds ``@`` is hidden whole);
- the value of **every query option not in** :data:`KNOWN_OPTIONS` (the documented backend options,
  none of which is a secret): ``?password=``, ``?secret=``, ``?client_secret=``, ``?key=`` alike;
- the value of an ``Authorization`` (or ``Proxy-Authorization``) header, and of a ``Bearer`` token,
  wherever such a header is echoed (a server's error body, a model's exception text).

Its own module so that every backend and the URI parser can use it without importing each other.
"""

from __future__ import annotations

import re
from typing import Any

SECRET_OPTIONS = ("api_key", "apikey", "api-key", "key", "token", "access_token", "auth_token")
"""Query option names refused as keys (compared case-insensitively): a key comes from the environment."""

KNOWN_OPTIONS = frozenset(
    {
        "timeout",
        "retries",
        "concurrency",
        "backoff",
        "max_backoff",
        "probe",
        "base_url",
        "api_key_env",
        "component",
        "threshold",
        "batch_size",
        "quiet_version_warning",
        "n_ctx",
        "n_threads",
        "device",
        "server",
        "startup_timeout",
    }
)
"""The documented model-URI options (:mod:`fairprobe.models.uri`): their values are shown as they
are; any other option's value is taken for a secret."""

# A URI-like token: scheme, ':' and everything up to white space or a quote.
_TOKEN = re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*:[^\s'\"<>`]+")
_AUTHORITY = re.compile(r"^(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<auth>[^/?#]*)")
_QUERY_PART = re.compile(r"(?P<sep>[?&])(?P<name>[^=&#?]*)=(?P<value>[^&#]*)")
_HEADER = re.compile(
    r"(?P<name>(?:proxy-)?authorization)(?P<sep>[\"']?\s*[:=]\s*[\"']?)(?P<value>(?:(?:basic|bearer|digest|token)\s+)?[^\s\"',;}]+)",
    re.IGNORECASE,
)
_BEARER = re.compile(
    r"\b(?:(?P<kind>bearer)\s+[A-Za-z0-9._~+/=\-]{8,}|(?P<basic>basic)\s+(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{8,}=*)",
    re.IGNORECASE,
)
_BARE_QUERY = re.compile(r"(?:(?<=[\s'\"(])|^)\?[^\s'\"]+")


def _redact_token(token: str) -> str:
    m = _AUTHORITY.match(token)
    if m and "@" in m.group("auth"):
        host = m.group("auth").rsplit("@", 1)[1]
        token = f"{m.group('head')}***@{host}{token[m.end() :]}"
    if "=" in token and "?" in token:
        head, q, tail = token.partition("?")

        def part(p: re.Match[str]) -> str:
            name = p.group("name").strip()
            if name.lower() in KNOWN_OPTIONS or not p.group("value"):
                return p.group(0)
            return f"{p.group('sep')}{p.group('name')}=***"

        token = head + _QUERY_PART.sub(part, q + tail)
    return token


def redact_uri(text: str) -> str:
    """``text`` with every secret in it replaced by ``***`` (see the module docstring): the userinfo
    of a URI, the values of undocumented query options, Authorization headers and bearer tokens.
    Text without such parts is returned unchanged, so it is safe on any string."""
    if "@" in text or "=" in text:
        text = _TOKEN.sub(lambda m: _redact_token(m.group(0)), text)
        text = _BARE_QUERY.sub(lambda m: _redact_token(m.group(0)), text)  # a query shown on its own
    if "uthorization" in text.lower() or "bearer" in text.lower() or "basic" in text.lower():
        text = _HEADER.sub(lambda m: f"{m.group('name')}{m.group('sep')}***", text)
        text = _BEARER.sub(lambda m: f"{m.group('kind') or m.group('basic')} ***", text)
    return text


def redact_secrets(value: Any) -> Any:
    """:func:`redact_uri` on every string inside ``value`` (dicts, lists, tuples; keys too)."""
    if isinstance(value, str):
        return redact_uri(value)
    if isinstance(value, dict):
        return {redact_secrets(k): redact_secrets(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_secrets(v) for v in value)
    return value


def control_character(value: str) -> str | None:
    """The first control character (CR, LF, NUL, ...) in ``value`` as ``repr`` text, else ``None``:
    such a character in an HTTP header value would end the header and inject another."""
    for ch in value:
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            return repr(ch)
    return None


__all__ = ["KNOWN_OPTIONS", "SECRET_OPTIONS", "control_character", "redact_secrets", "redact_uri"]
