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

from fairprobe.headline import number, percent
from fairprobe.report.sections import Explanation, Table
from fairprobe.shards import FindingsTable
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
    t = t.filter(judged)
    if not t.num_rows:
        return out
    t = pa.table(
        {"kind": t["kind"], "key": t["key"], "flip": pc.cast(pc.fill_null(t["biased"], False), pa.int64())}
    )
    g = t.group_by(["kind", "key"]).aggregate([("flip", "sum"), ("flip", "count")])
    flips, mutants = g["flip_sum"], g["flip_count"]
    attributes, words = _labels(g["key"])
    ranked = pa.table(
        {
            "flips": flips,
            "rate": pc.divide(pc.cast(flips, pa.float64()), pc.cast(mutants, pa.float64())),
            "mutants": mutants,
            "words": words,
        }
    )
    order = pc.sort_indices(
        ranked,
        sort_keys=[
            ("flips", "descending"),
            ("rate", "descending"),
            ("mutants", "descending"),
            ("words", "ascending"),
        ],
    ).to_numpy()
    flipped = order[flips.to_numpy()[order] > 0]
    group = pc.binary_join_element_wise(g["kind"], attributes, "\x1f")
    codes = pc.dictionary_encode(group.take(flipped)).combine_chunks().indices
    _, first = np.unique(codes.to_numpy(zero_copy_only=False), return_index=True)
    keep = np.union1d(np.union1d(order[:SHOWN], flipped[:SHOWN]), flipped[first])
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    keep = keep[np.argsort(rank[keep])]
    columns = {name: g[name].take(keep).to_pylist() for name in ("kind", "flip_sum", "flip_count")}
    attrs, labels = attributes.take(keep).to_pylist(), words.take(keep).to_pylist()
    for kind, attr, label, n, f in zip(
        columns["kind"], attrs, labels, columns["flip_count"], columns["flip_sum"], strict=True
    ):
        out.append(Substitution(kind, attr, label, int(n), int(f)))
    out.total = len(order)
    return out


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
