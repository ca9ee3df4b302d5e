"""Token throughput of the chat models a run asked (process-wide; shown on the progress line, written
to ``summary.json`` as ``llm_throughput``).

Every backend records each answer it got from a model (never a cached answer): the prompt and answer
token counts. In-process llama.cpp also records how long it spent reading the prompt (the tokens it
evaluated: a prompt prefix it kept from the previous request is counted as ``prompt_tokens_reused``)
and generating, so its prompt and generation speeds are separate. HTTP answers overlap in time, so
for them only the counts and the run's wall clock say anything: tokens per second of the run.
"""

from __future__ import annotations

import threading
import time
from typing import Any

_lock = threading.Lock()
_totals: dict[str, float] = {}
_started = time.monotonic()


def record(
    *,
    prompt_tokens: int,
    completion_tokens: int,
    prompt_evaluated: int | None = None,
    prompt_s: float | None = None,
    generation_s: float | None = None,
) -> None:
    """One answer from a model (``prompt_evaluated``/``prompt_s``/``generation_s``: in-process only)."""
    with _lock:
        add = {"requests": 1, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
        if prompt_s is not None and generation_s is not None and prompt_evaluated is not None:
            add |= {
                "timed_requests": 1,
                "prompt_evaluated": prompt_evaluated,
                "prompt_reused": max(0, prompt_tokens - prompt_evaluated),
                "prompt_s": prompt_s,
                "timed_completion_tokens": completion_tokens,
                "generation_s": generation_s,
            }
        for key, value in add.items():
            _totals[key] = _totals.get(key, 0) + value


def reset() -> None:
    """Start counting afresh (each run)."""
    global _started
    with _lock:
        _totals.clear()
        _started = time.monotonic()


def snapshot() -> dict[str, float]:
    with _lock:
        return dict(_totals)


def tokens_per_second() -> float:
    """Prompt + answer tokens per second of wall clock since :func:`reset` (the progress line)."""
    with _lock:
        span = time.monotonic() - _started
        total = _totals.get("prompt_tokens", 0) + _totals.get("completion_tokens", 0)
    return total / span if span > 1e-9 else 0.0


def summary(wall_s: float) -> dict[str, Any] | None:
    """``llm_throughput`` of ``summary.json``; ``None`` when no chat model answered in this run."""
    t = snapshot()
    if not t.get("requests"):
        return None
    out: dict[str, Any] = {
        "requests": int(t["requests"]),
        "prompt_tokens": int(t["prompt_tokens"]),
        "completion_tokens": int(t["completion_tokens"]),
        "wall_s": round(wall_s, 3),
        "tokens_per_s_wall": round((t["prompt_tokens"] + t["completion_tokens"]) / wall_s, 2)
        if wall_s
        else None,
    }
    if t.get("timed_requests"):
        out |= {
            "prompt_tokens_evaluated": int(t["prompt_evaluated"]),
            "prompt_tokens_reused": int(t["prompt_reused"]),
            "prompt_tokens_per_s": round(t["prompt_evaluated"] / t["prompt_s"], 2) if t["prompt_s"] else None,
            "generation_tokens_per_s": (
                round(t["timed_completion_tokens"] / t["generation_s"], 2) if t["generation_s"] else None
            ),
        }
    return out
