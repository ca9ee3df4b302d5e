"""Lexical diversity of a prompt set and the entropy-rate stopping rule (caffe.txt §5.2 RQ1).

Settings of the authors' replication code: tokens are lower-cased ``\\b\\w+\\b`` matches; the
entropy is the Miller–Madow corrected Shannon entropy of the token distribution,

    H = −Σ_w p_w log2 p_w + (V − 1) / (2 · N · ln 2)      [bits per token]

(V distinct tokens, N tokens). With h_n the entropy rate of the first n prompts and the gain
Δ_n = h_n − h_{n−1}, generation stops at the first n where Δ stays below δ (0.02 bits/token) for
three consecutive prompts (n* = that n), or at the cap (20). A set that reaches the cap without
levelling off is recorded as such (``levelled_off = False``, ``stopping_point = None``), never
averaged in as a number. One "prompt" here is one counterfactual pair: both of its prompts join
the token set together.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

_TOKEN = re.compile(r"\b\w+\b")

DELTA = 0.02
PATIENCE = 3
CAP = 20


def tokens(text: str) -> list[str]:
    """Lower-cased ``\\b\\w+\\b`` tokens."""
    return _TOKEN.findall(text.lower())


def miller_madow_bits(counts: Counter[str]) -> float:
    """Miller–Madow corrected Shannon entropy (bits) of a token count table; 0.0 when empty."""
    n = sum(counts.values())
    if n == 0:
        return 0.0
    h = -sum((c / n) * math.log2(c / n) for c in counts.values())
    return h + (len(counts) - 1) / (2 * n * math.log(2))


@dataclass
class StoppingRule:
    """Feed prompts one at a time with :meth:`add`; it says when lexical diversity has levelled off."""

    delta: float = DELTA
    patience: int = PATIENCE
    cap: int = CAP
    counts: Counter[str] = field(default_factory=Counter)
    rates: list[float] = field(default_factory=list)
    low_run: int = 0
    stopping_point: int | None = None

    def add(self, *texts: str) -> bool:
        """Add one prompt (its texts) and return True when generation should stop."""
        for text in texts:
            self.counts.update(tokens(text))
        rate = miller_madow_bits(self.counts)
        if self.rates:
            gain = rate - self.rates[-1]
            self.low_run = self.low_run + 1 if gain < self.delta else 0
            if self.low_run >= self.patience and self.stopping_point is None:
                self.stopping_point = len(self.rates) + 1
        self.rates.append(rate)
        return self.done

    @property
    def n(self) -> int:
        return len(self.rates)

    @property
    def levelled_off(self) -> bool:
        return self.stopping_point is not None

    @property
    def done(self) -> bool:
        return self.levelled_off or self.n >= self.cap

    def gains(self) -> list[float]:
        return [b - a for a, b in zip(self.rates, self.rates[1:], strict=False)]


def entropy_rates(prompts: list[str]) -> list[float]:
    """h_1..h_n of a prompt sequence (one text per prompt)."""
    rule = StoppingRule(cap=len(prompts) + 1)
    for p in prompts:
        rule.add(p)
    return list(rule.rates)
