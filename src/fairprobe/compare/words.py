"""A comparison in words: what got worse, named the way a reviewer reads it.

``summary.md``, the screen and report.html all say the same things, written here from the
comparison's figures:

- rates as percentages and differences in percentage points (``0% → 72.7%``, ``+72.7 points``);
- p-values as ``< 0.001`` when small, never ``0``;
- the paired cases counted as the tables count them: judged, and apart from them those with no
  outcome in one run (a mutant the invariant discarded) and those with an INVALID answer;
- the finer groups a technique names (HInter's word pairs, :attr:`Pairing.detail`), tested per
  group, so a regression reads "he→she now changes 8 of 11 answers, was 0 of 11 (adjusted p 0.008)".

Word pairs are many and most change nothing, so Holm over all of them would bury a real change.
They are adjusted with Tarone's method for discrete tests (R. E. Tarone, "A modified Bonferroni
method for discrete data", *Biometrics* 46(2), 1990): McNemar's exact test on a pair with ``d``
discordant cases can never give a p-value below ``2·0.5^d``; with ``K`` the smallest number such that
at most ``K`` pairs can reach ``α/K``, a pair's adjusted p-value is ``min(1, K·p)``. The family-wise
error over the word pairs stays below ``α``. Word pairs explain a regression; the verdict stays on
the technique's slices (Holm-adjusted, :mod:`fairprobe.compare.core`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fairprobe.compare.paired import ALPHA, PairedResult, mcnemar_exact, paired_binary
from fairprobe.judge.headline import number, percent

if TYPE_CHECKING:
    from fairprobe.compare.core import Comparison
    from fairprobe.compare.pairing import Outcome, Pairing

MAX_DETAILS = 100
"""Word pairs (details) kept per outcome, worst first: those with a changed case, tested and shown."""


# -- numbers ------------------------------------------------------------------------------------------


def p_value(p: float | None) -> str:
    """``0.00002`` -> ``< 0.001``; ``0.0042`` -> ``0.004``; ``0.5`` -> ``0.50``; ``1.0`` -> ``1``."""
    if p is None:
        return "no data"
    if p < 0.001:
        return "< 0.001"
    if p < 0.01:
        return f"{p:.3f}"
    return "1" if p >= 0.995 else f"{p:.2f}"


def adjusted(p: float | None) -> str:
    """``adjusted p < 0.001`` / ``adjusted p 0.004``."""
    text = p_value(p)
    return f"adjusted p {text}"


def points(delta: float | None) -> str:
    """A difference of two rates in percentage points: ``0.0312`` -> ``+3.1 points``."""
    if delta is None:
        return "no data"
    value = 100 * delta
    if value == 0:
        return "±0 points"
    shown = f"{value:+.1f}" if abs(value) >= 0.05 else f"{value:+.2g}"
    return f"{shown} points"


def points_ci(ci: tuple[float, float] | list[float] | None) -> str:
    """``[0.007, 0.083]`` -> ``[+0.7, +8.3]`` (percentage points)."""
    if not ci:
        return ""
    return f"[{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"


def label(outcome: str) -> str:
    """``error_rate`` -> ``error rate``."""
    return outcome.replace("_", " ")


def _count(rate: float | None, n: int) -> int:
    return round((rate or 0.0) * n)


def value_change(kind: str, base: float | None, new: float | None) -> str:
    """``0% → 3.1%`` for a rate, ``0.853 → 0.71`` for a continuous outcome."""
    show = percent if kind == "binary" else number
    return f"{show(base)} → {show(new)}"


# -- counts -------------------------------------------------------------------------------------------


@dataclass
class Counts:
    """The paired cases as the tables count them."""

    paired: int
    judged: int
    dropped: int
    invalid: int
    base_only: int
    new_only: int


def counts(comparison: Comparison) -> Counts:
    """Paired cases split into judged (an outcome under both models), dropped (no outcome in one run:
    a mutant the invariant discarded) and INVALID (an answer that could not be used)."""
    names = list(comparison.results)
    invalid = judged = 0
    for row in comparison.pairs:
        if row.get("status") == "invalid":
            invalid += 1
        elif any(row.get(f"base_{o}") is not None and row.get(f"new_{o}") is not None for o in names):
            judged += 1
    m = comparison.metrics
    paired = int(m.get("paired", len(comparison.pairs)))
    return Counts(
        paired,
        judged,
        paired - judged - invalid,
        invalid,
        int(m.get("base_only", 0)),
        int(m.get("new_only", 0)),
    )


def counted(c: Counts, dropped_words: str) -> str:
    """E.g. "699 paired test cases judged (287 mutants the dependency invariant discarded, counted apart)"."""
    apart = []
    if c.dropped:
        apart.append(f"{c.dropped:,} {dropped_words}")
    if c.invalid:
        apart.append(f"{c.invalid:,} with an INVALID answer from either model")
    if c.base_only or c.new_only:
        apart.append(f"{c.base_only + c.new_only:,} in one run only")
    text = f"{c.judged:,} paired test case{'s' if c.judged != 1 else ''} judged"
    return text + (f" ({' and '.join(apart)}, counted apart)" if apart else "")


def counts_line(comparison: Comparison, pairing: Pairing | None) -> str:
    """report.html's first line: the paired cases as the tables count them, the rest apart."""
    dropped = pairing.dropped if pairing is not None else "had no outcome to compare"
    text = counted(counts(comparison), dropped)
    return text[0].upper() + text[1:] + "."


# -- sentences ----------------------------------------------------------------------------------------


def change_sentence(name: str, outcome: Outcome | None, kind: str, r: dict[str, Any]) -> str:
    """One slice's or word pair's change from its figures (``PairedResult.to_json()``), e.g.
    "he→she now changes 8 of 11 answers, was 0 of 11 (adjusted p 0.008)"."""
    n = int(r.get("n") or 0)
    p = r.get("p_adjusted", r.get("p"))
    if kind == "binary":
        new, base = _count(r.get("new"), n), _count(r.get("base"), n)
        if outcome is not None and outcome.change:
            body = f"{name} {outcome.change.format(new=new, base=base, n=n)}"
        else:
            what = label(outcome.name) if outcome is not None else "rate"
            body = f"{name}: {what} now {new} of {n} ({percent(r.get('new'))}), was {base} of {n}"
        return f"{body} ({adjusted(p)})"
    what = label(outcome.name) if outcome is not None else "value"
    return (
        f"{name}: median {what} now {number(r.get('new'))}, was {number(r.get('base'))} "
        f"({n:,} cases, {adjusted(p)})"
    )


def _outcomes(pairing: Pairing | None) -> dict[str, Outcome]:
    return {o.name: o for o in pairing.outcomes} if pairing is not None else {}


def slice_order(slice_name: str, r: dict[str, Any]) -> tuple[Any, ...]:
    """Worst first: the smallest adjusted p, the largest change, the smallest slice (the most
    specific), "all" last among equals."""
    return (r.get("p_adjusted") or 0.0, -abs(r.get("delta") or 0.0), r.get("n") or 0, slice_name == "all",
            slice_name)  # fmt: skip


def worse_slices(metrics: dict[str, Any], pairing: Pairing | None) -> list[str]:
    """The regressed slices in words, worst first (:func:`slice_order`); slices with the same cases
    and figures (``all`` and ``atomic`` when every case is atomic) are named together."""
    outcomes = _outcomes(pairing)
    rows = []
    for name, per in (metrics.get("slices") or {}).items():
        o = outcomes.get(name)
        kind = o.kind if o is not None else "binary"
        for s, r in per.items():
            if r.get("verdict") == "regressed":
                rows.append((slice_order(s, r), s, name, kind, r))
    rows.sort(key=lambda x: x[0])
    merged: dict[tuple[Any, ...], list[Any]] = {}
    for _, s, name, kind, r in rows:
        same = (name, r.get("n"), r.get("base"), r.get("new"), r.get("p_adjusted"))
        merged.setdefault(same, [name, kind, r, []])[3].append(s if s != "all" else "all cases")
    out = []
    for name, kind, r, where in merged.values():
        places = where[0] if len(where) == 1 else f"{', '.join(where[:-1])} and {where[-1]}"
        n = int(r.get("n") or 0)
        if kind == "binary":
            cases = f"{_count(r.get('base'), n):,} → {_count(r.get('new'), n):,} of {n:,} cases"
            figures = f"{cases}, {points(r.get('delta'))}"
        else:
            figures = f"median of {n:,} cases"
        out.append(
            f"{label(name)} on {places}: {value_change(kind, r.get('base'), r.get('new'))} "
            f"({figures}, {adjusted(r.get('p_adjusted'))})"
        )
    return out


# -- word pairs ---------------------------------------------------------------------------------------


@dataclass
class Detail:
    """One word pair's (detail's) change on one binary outcome."""

    name: str
    outcome: str
    result: PairedResult
    verdict: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "outcome": self.outcome, **self.result.to_json(), "verdict": self.verdict}


def tarone_factor(min_p: list[float], alpha: float = ALPHA) -> int:
    """Tarone's K: the smallest ``k >= 1`` such that at most ``k`` of the tests can reach a p-value
    of ``alpha / k`` (``min_p`` holds each test's smallest attainable p-value)."""
    from bisect import bisect_right

    low = sorted(min_p)  # a run with every adjective has tens of thousands of pairs: O(m log m)
    for k in range(1, len(low) + 1):
        if bisect_right(low, alpha / k) <= k:
            return k
    return max(1, len(low))


def annotate(comparison: Comparison, pairing: Pairing | None) -> dict[str, str]:
    """Name each paired case's detail (``row["detail"]``, e.g. its word pair) and return each case's
    cluster (the unit the intervals resample), by case."""
    clusters: dict[str, str] = {}
    if pairing is None:
        return clusters
    index = {}
    for f in comparison.base.findings:
        key = pairing.key(f)
        if key is not None:
            index[key] = f
    for row in comparison.pairs:
        f = index.get(row["id"])
        if f is None:
            continue
        clusters[row["id"]] = pairing.cluster(f)
        if pairing.detail is not None:
            row["detail"] = pairing.detail(f)
    return clusters


def details(comparison: Comparison, pairing: Pairing | None, seed: int = 0) -> list[Detail]:
    """Each word pair's change per binary outcome, worst first: at most :data:`MAX_DETAILS` per
    outcome with a case that changed, adjusted with Tarone's K (module docstring)."""
    if pairing is None or pairing.detail is None:
        return []
    clusters = annotate(comparison, pairing)
    out: list[Detail] = []
    for outcome in pairing.outcomes:
        if outcome.kind != "binary" or outcome.name not in comparison.results:
            continue
        groups: dict[str, list[dict[str, Any]]] = {}
        flips: dict[str, list[int]] = {}  # per pair: [cases turned on, cases turned off] under new
        base_key, new_key = f"base_{outcome.name}", f"new_{outcome.name}"
        for row in comparison.pairs:
            b, n = row.get(base_key), row.get(new_key)
            if row.get("status") == "invalid" or b is None or n is None or not row.get("detail"):
                continue
            groups.setdefault(row["detail"], []).append(row)
            counts = flips.setdefault(row["detail"], [0, 0])
            if bool(b) != bool(n):
                counts[0 if n else 1] += 1
        factor = tarone_factor([min(1.0, 2 * 0.5 ** (u + d)) for u, d in flips.values()])
        changed = [(name, u, d) for name, (u, d) in flips.items() if u + d]
        changed.sort(key=lambda t: (mcnemar_exact(t[1], t[2]), -abs(t[1] - t[2]), t[0]))
        for name, up, down in changed[:MAX_DETAILS]:
            rows = groups[name]
            bv = np.array([bool(x[base_key]) for x in rows])
            nv = np.array([bool(x[new_key]) for x in rows])
            r = paired_binary(bv, nv, [clusters.get(x["id"], x["id"]) for x in rows], seed=seed)
            r.p_adjusted = min(1.0, factor * r.p)
            bad = (up > down) if outcome.higher_is_worse else (down > up)
            verdict = (
                "no significant change" if r.p_adjusted >= ALPHA else ("regressed" if bad else "improved")
            )
            out.append(Detail(name, outcome.name, r, verdict))
    return out


def worse_details(found: list[Detail], pairing: Pairing | None) -> list[str]:
    """The word pairs that got worse, in words, worst first (beyond chance first, then by how many
    more cases got worse than better)."""
    outcomes = _outcomes(pairing)

    def net(d: Detail) -> int:
        up, down = d.result.discordant or (0, 0)
        o = outcomes.get(d.outcome)
        return up - down if o is None or o.higher_is_worse else down - up

    worse = [d for d in found if net(d) > 0]
    worse.sort(key=lambda d: (d.verdict != "regressed", d.result.p_adjusted or 1.0, -net(d), d.name))
    lines = []
    for d in worse:
        o = outcomes.get(d.outcome)
        text = change_sentence(d.name, o, "binary", d.result.to_json())
        lines.append(text if d.verdict == "regressed" else text[:-1] + ", could be chance)")
    return lines
