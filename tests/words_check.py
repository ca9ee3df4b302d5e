"""What a person reads of a comparison (issue 43): report.html's visible text, summary.md and the
screen speak in words, never in metric paths or fail-condition syntax."""

from __future__ import annotations

import html as html_lib
import re

_HIDDEN = re.compile(r"<(script|style|details|pre)\b.*?</\1>", re.S | re.I)
_PATH = re.compile(r"\b(?:delta|slices|intervals)\.[\w*]|\b[a-z]+_(?:rate|share|only|adjusted)\b")
_CONDITION = re.compile(r"[a-z_]{2,}\s*(?:>=|<=|==|!=|>|<)\s*-?\d")
_P_ZERO = re.compile(r"\bp 0(?![.\d])")


def visible_text(page: str) -> str:
    """report.html as it reads on screen: no scripts, styles or markup; the collapsed machine record
    ("All metrics", the run record) left out, as a reader opens it only to look a figure up."""
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", _HIDDEN.sub(" ", page)))


def metric_words_problems(text: str) -> list[str]:
    """Metric paths, fail-condition syntax and "p 0" in ``text`` (empty when it reads in words)."""
    found = []
    for pattern in (_PATH, _CONDITION, _P_ZERO):
        found += [text[max(0, m.start() - 40) : m.end() + 40] for m in pattern.finditer(text)]
    return found
