"""What matters most in a HInter run: substitutions (the real word pairs) and groups, worst first.

The error rates of :mod:`.analysis` are per dictionary attribute; but a dictionary files
"teacher→engineer" under gender, so a rate by attribute alone can blame the wrong thing. These tables
rank the word pairs themselves (``he→she``; ``he→she + White→Black`` for a combination): judged
mutants, answers changed ("flips"), and the rate with Wilson's 95% interval (one trial per mutant:
a ranking aid, the gated rates keep their cluster intervals). They feed the verdict's reasons in
words (:class:`~fairprobe.report.sections.Explanation`), the report's headline and the command line's
worst findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fairprobe.judge.headline import number, percent
from fairprobe.report.sections import Explanation, Table
from fairprobe.run.shards import FindingsTable
from fairprobe.stats import wilson_interval

SUBSTITUTIONS = "rank-substitutions"
GROUPS = "rank-groups"
SHOWN = 25
"""Rows of the substitutions table in the report (the rest are counted in its caption)."""


@dataclass
class Substitution:
    """One word pair (or combination of pairs) over every original it was applied to."""

    kind: str
    attributes: str
    words: str
    mutants: int
    flips: int

    @property
    def rate(self) -> float:
        return self.flips / self.mutants

    @property
    def ci(self) -> tuple[float, float]:
        return wilson_interval(self.flips, self.mutants)

    def short(self) -> str:
        return f"{self.words} ({self.attributes}): {self.flips} of {self.mutants} answers changed ({percent(self.rate)})"


def words_of(key: str) -> tuple[str, str]:
    """``"gender:he>she|race:White>Black"`` -> ``("gender+race", "he→she + White→Black")``."""
    attrs, pairs = [], []
    for part in key.split("|"):
        attr, _, swap = part.partition(":")
        before, _, after = swap.partition(">")
        attrs.append(attr)
        pairs.append(f"{before}→{after}")
    return "+".join(attrs), " + ".join(pairs)


_SUBSTITUTION_COLUMNS = ["kind", "key", "valid", "invalid", "biased", "mutant_output"]


class Ranked(list):
    """The substitutions the report and the verdict use, worst first: the :data:`SHOWN` worst, the
    :data:`SHOWN` worst that changed an answer, and the worst that changed an answer for each kind and
    attribute (combination) — every one :func:`worst_for`, :func:`tables` and :func:`top_findings`
    can reach, in the order of the full ranking. ``total`` counts every substitution: a million-mutant
    run with every adjective has a million distinct ones, and a Python object for each took 40 s."""

    total: int = 0


def substitutions(findings: FindingsTable | pa.Table) -> Ranked:
    """Word pairs with at least one judged mutant, worst first: most answers changed, then the
    highest rate, then the most mutants, then the words (see :class:`Ranked` for which are kept).
    ``findings`` may be the columns the analysis already read (a table holding at least these
    columns), so a million findings are not read twice. Grouped, labelled and sorted in Arrow."""
    if isinstance(findings, pa.Table):
        t = findings.select(_SUBSTITUTION_COLUMNS)
    else:
        t = findings.columns(_SUBSTITUTION_COLUMNS)
    out = Ranked()
    if not t.num_rows:
        return out
    judged = pc.and_(
        pc.and_(pc.fill_null(t["valid"], False), pc.invert(pc.fill_null(t["invalid"], False))),
        pc.is_valid(t["mutant_output"]),
    )
    g = _grouped(t["kind"], t["key"], pc.fill_null(t["biased"], False), judged)
    if not g.num_rows:
        return out
    flips = g["flip_sum"].to_numpy()
    # A substitution that changed an answer ranks before every one that did not, so the flipped ones
    # are ranked in full and, when fewer than SHOWN flipped, the unflipped with the most mutants
    # (their words, the last tie-break, are only made for these rows: a million regex rewrites cost).
    flipped = _ranked(g, np.flatnonzero(flips > 0))
    need = SHOWN - len(flipped)
    unflipped = np.empty(0, dtype=np.int64)
    if need > 0:
        rest = np.flatnonzero(flips == 0)
        counts = g["flip_count"].to_numpy()[rest]
        if len(rest) > need:
            cut = np.partition(counts, len(counts) - need)[len(counts) - need]
            rest = rest[counts >= cut]
        unflipped = _ranked(g, rest)[:need]
    firsts = np.empty(0, dtype=np.int64)
    if len(flipped):
        group = pc.binary_join_element_wise(
            g["kind"].take(flipped), _labels(g["key"].take(flipped))[0], "\x1f"
        )
        codes = pc.dictionary_encode(group).combine_chunks().indices.to_numpy(zero_copy_only=False)
        firsts = np.unique(codes, return_index=True)[1]  # each kind and attribute group's worst
    keep = np.union1d(np.arange(min(SHOWN, len(flipped))), firsts)  # positions in `flipped`, in rank order
    rows = np.concatenate([flipped[keep], unflipped]).astype(np.int64)
    kept = g.take(rows)
    attrs, labels = _labels(kept["key"])
    for kind, attr, label, n, f in zip(
        kept["kind"].to_pylist(),
        attrs.to_pylist(),
        labels.to_pylist(),
        kept["flip_count"].to_pylist(),
        kept["flip_sum"].to_pylist(),
        strict=True,
    ):
        out.append(Substitution(kind, attr, label, int(n), int(f)))
    out.total = g.num_rows
    return out


def _grouped(
    kind: pa.ChunkedArray, key: pa.ChunkedArray, biased: pa.ChunkedArray, judged: pa.ChunkedArray
) -> pa.Table:
    """Judged mutants (``flip_count``) and answers changed (``flip_sum``) per (kind, key), counted
    with numpy over dictionary codes: no copy of the columns and no hash table of a million keys
    beyond the dictionary itself (the peak memory of a million-finding report)."""
    mask = pc.fill_null(judged, False).to_numpy(zero_copy_only=False).astype(bool)
    kinds = pc.dictionary_encode(kind).combine_chunks()
    keys = pc.dictionary_encode(key).combine_chunks()
    k = max(1, len(kinds.dictionary))
    code = keys.indices.to_numpy(zero_copy_only=False).astype(np.int64)[mask] * k
    code += kinds.indices.to_numpy(zero_copy_only=False)[mask]
    size = len(keys.dictionary) * k
    counts = np.bincount(code, minlength=size)
    flips = np.bincount(
        code, weights=biased.to_numpy(zero_copy_only=False)[mask].astype(float), minlength=size
    )
    present = np.flatnonzero(counts)
    return pa.table(
        {
            "kind": kinds.dictionary.take(pa.array(present % k)),
            "key": keys.dictionary.take(pa.array(present // k)),
            "flip_sum": pa.array(flips[present].astype(np.int64)),
            "flip_count": pa.array(counts[present].astype(np.int64)),
        }
    )


def _ranked(g: pa.Table, rows: np.ndarray) -> np.ndarray:
    """``rows`` of the grouped table in rank order: answers changed, rate, mutants (descending),
    then the words (ascending)."""
    if not len(rows):
        return rows.astype(np.int64)
    part = g.take(rows)
    flips, mutants = part["flip_sum"], part["flip_count"]
    table = pa.table(
        {
            "flips": flips,
            "rate": pc.divide(pc.cast(flips, pa.float64()), pc.cast(mutants, pa.float64())),
            "mutants": mutants,
            "words": _labels(part["key"])[1],
        }
    )
    keys = [
        ("flips", "descending"),
        ("rate", "descending"),
        ("mutants", "descending"),
        ("words", "ascending"),
    ]
    return rows[pc.sort_indices(table, sort_keys=keys).to_numpy()]


def _labels(keys: pa.ChunkedArray) -> tuple[pa.ChunkedArray, pa.ChunkedArray]:
    """:func:`words_of` over a column of keys: (attributes, words) for every key, in Arrow."""
    attributes = pc.replace_substring(pc.replace_substring_regex(keys, r":[^|]*", ""), "|", "+")
    words = pc.replace_substring_regex(keys, r"(^|\|)[^:|]*:", r"\1")
    words = pc.replace_substring_regex(words, r"(^|\|)([^>|]*)>", "\\1\\2→")
    return attributes, pc.replace_substring(words, "|", " + ")


def worst_for(subs: list[Substitution], kind: str, attributes: str | None = None) -> Substitution | None:
    """The substitution with the most changed answers among ``kind`` (and ``attributes``), if any flipped."""
    for s in subs:
        if s.kind == kind and (attributes is None or s.attributes == attributes) and s.flips:
            return s
    return None


def most_often(s: Substitution | None) -> str:
    return f"most often {s.words} ({s.flips} of {s.mutants})" if s else ""


def explanations(metrics: dict[str, Any], subs: list[Substitution]) -> dict[str, Explanation]:
    """How each gated error rate reads in words, with its worst word pair."""
    out: dict[str, Explanation] = {}
    kinds = {"atomic": "single-substitution", "intersectional": "intersectional"}
    for kind, what in kinds.items():
        out[f"error_rate.{kind}"] = Explanation(
            f"the model changed its answer for {{count}} of {{n}} {what} mutants",
            most_often(worst_for(subs, kind)),
            SUBSTITUTIONS,
        )
    er = metrics.get("error_rate", {})
    for attr in _keys(er.get("by_attribute", {})):
        out[f"error_rate.by_attribute.{attr}"] = Explanation(
            f"the model changed its answer for {{count}} of {{n}} {attr} mutants",
            most_often(worst_for(subs, "atomic", attr)),
            SUBSTITUTIONS,
        )
    for combo in _keys(er.get("by_pair", {})):
        out[f"error_rate.by_pair.{combo}"] = Explanation(
            f"the model changed its answer for {{count}} of {{n}} {combo.replace('+', '×')} mutants",
            most_often(worst_for(subs, "intersectional", combo)),
            SUBSTITUTIONS,
        )
    return out


def _keys(node: dict[str, Any]) -> list[str]:
    """The rate keys of a by-group dict (not their ``_ci``, ``_n``, ... siblings)."""
    return [k for k, v in node.items() if not isinstance(v, list | dict) and f"{k}_n" in node]


def headline(metrics: dict[str, Any], subs: list[Substitution]) -> str:
    """One sentence: how often the model changed its answer, and for which word pair most often."""
    counts, mutants = metrics.get("counts", {}), metrics.get("mutants", {})
    parts = []
    for kind, what in (("atomic", "single-substitution"), ("intersectional", "intersectional")):
        judged = mutants.get(kind, {}).get("judged", 0)
        if judged:
            flips = counts.get(f"biased_{kind}", 0)
            parts.append(f"{number(flips)} of {number(judged)} {what} mutants ({percent(flips / judged)})")
    if not parts:
        return "no mutant was judged: nothing was measured"
    text = "the model changed its answer for " + " and ".join(parts)
    worst = worst_for(subs, "atomic") or worst_for(subs, "intersectional")
    return text + (f"; {most_often(worst)}" if worst else "; no substitution changed an answer")


def tables(metrics: dict[str, Any], subs: list[Substitution]) -> list[Table]:
    """The ranked substitutions and groups, worst first."""
    rows = [
        [s.words, s.attributes, s.kind, s.mutants, s.flips, percent(s.rate), _ci(s.ci)] for s in subs[:SHOWN]
    ]
    more = getattr(subs, "total", len(subs)) - len(rows)
    out = [
        Table(
            "What changed answers most: substitutions, worst first",
            ["word pair", "attribute", "kind", "mutants", "answers changed", "rate", "95% CI"],
            rows,
            caption="Each row is one substitution (word pair, or pairs for an intersectional mutant) over "
            "every text it was applied to; ranked by answers changed, then rate. Intervals: Wilson, one "
            "trial per mutant (a ranking aid; the gated rates use intervals by original)."
            + (
                f" {more} more substitutions: filter the findings below by word pair, or `fairprobe export` the run."
                if more > 0
                else ""
            ),
            anchor=SUBSTITUTIONS,
        )
    ]
    er = metrics.get("error_rate", {})
    hidden = metrics.get("hidden_share_by_pair", {})
    groups = []
    for kind, node in (("attribute", er.get("by_attribute", {})), ("attribute pair", er.get("by_pair", {}))):
        for key in _keys(node):
            if node[key] is None:
                continue
            n = node[f"{key}_n"]
            share = hidden.get(key) if kind == "attribute pair" else None
            groups.append(
                (
                    node[key],
                    [
                        key,
                        kind,
                        n,
                        round(node[key] * n),
                        percent(node[key]),
                        _ci(node.get(f"{key}_ci")),
                        percent(share) if share is not None else "",
                    ],
                )
            )
    groups.sort(key=lambda g: -g[0])
    out.append(
        Table(
            "Groups, worst first",
            ["group", "kind", "mutants", "answers changed", "error rate", "95% CI", "hidden bias share"],
            [row for _, row in groups],
            caption="Error rate per attribute (single substitutions) and per attribute pair "
            "(intersectional), with 95% intervals by original; hidden bias share: changed answers of a "
            "pair whose single substitutions changed nothing.",
            anchor=GROUPS,
        )
    )
    return out


def top_findings(subs: list[Substitution], limit: int = 3) -> list[str]:
    return [s.short() for s in subs[:limit] if s.flips]


def _ci(ci: Any) -> str:
    if ci is None:
        return ""
    lo, hi = ci
    return f"{percent(lo)}–{percent(hi)}"


__all__ = ["Substitution", "explanations", "headline", "substitutions", "tables", "top_findings"]
