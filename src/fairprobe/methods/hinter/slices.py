"""HInter's finest gated slices: every word pair and every group word, with intervals corrected for
the number of slices tested (:mod:`fairprobe.judge.evidence`, Bonferroni).

An attribute's error rate (hinter.txt §4, metric 1) pools every swap the dictionary files under it:
a model that denies every applicant written as "she" changes 8 of 11 he→she decisions, but 177 other
gender swaps (occupations, groups of people) dilute the gender rate below the gate. The bias lives in
the word pair and in the group the mutant introduces, so these are gated too:

- ``slices.word_pair`` — per single substitution ``a→b`` (atomic mutants), the share of judged
  mutants whose answer changed. Both directions are their own slices (``he→she`` and ``she→he``),
  so the report can set one beside the other.
- ``slices.group`` — per word substituted in (``she``, ``Muslim``), over every atomic mutant that
  introduces it: the group a mutant moves the text *to*.

A text is **fragile** when every one of its judged single substitutions changed the answer and they
span at least two attributes: it flips under anything, so its flips are no evidence against one group.
Each slice counts the changes that came from fragile texts (``_fragile``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow.compute as pc

from fairprobe.judge.evidence import Slice, slice_family
from fairprobe.judge.headline import interval, percent
from fairprobe.report.sections import Explanation, Table

WORD_PAIR = "word_pair"
GROUP = "group"
ANCHOR = "rank-slices"
SHOWN_ROWS = 40


def _parts(key: str) -> list[tuple[str, str, str]]:
    """``"gender:he>she"`` -> ``[("gender", "he", "she")]``."""
    out = []
    for part in key.split("|"):
        attr, _, swap = part.partition(":")
        before, sep, after = swap.partition(">")
        if sep:
            out.append((attr, before, after))
    return out


def _counts(label_of_row: np.ndarray, flips: np.ndarray, originals: np.ndarray, fragile: np.ndarray, k: int):
    """Per label code: mutants, flips, texts, flips from fragile texts."""
    n = np.bincount(label_of_row, minlength=k)
    changed = np.bincount(label_of_row, weights=flips.astype(float), minlength=k).astype(int)
    pairs = np.unique(label_of_row.astype(np.int64) * (int(originals.max(initial=0)) + 1) + originals)
    texts = np.bincount(pairs // (int(originals.max(initial=0)) + 1), minlength=k)
    weak = np.bincount(label_of_row, weights=(flips & fragile).astype(float), minlength=k).astype(int)
    return n, changed, texts, weak


def families(
    keys: list[str], key_code: np.ndarray, flips: np.ndarray, originals: np.ndarray, attrs: np.ndarray
) -> dict[str, Any]:
    """The word-pair and group families over the judged atomic mutants given as parallel arrays (key
    code into ``keys``, changed answer, original code, attribute code)."""
    fragile_text = _fragile(flips, originals, attrs)
    fragile = fragile_text[originals] if len(originals) else np.zeros(0, dtype=bool)
    out: dict[str, Any] = {}
    for family, pick, what in (
        (WORD_PAIR, lambda a, b, c: f"{b}→{c}", "word pairs"),
        (GROUP, lambda a, b, c: c, "group words"),
    ):
        labels: dict[str, int] = {}
        code_of_key = np.full(len(keys), -1, dtype=np.int64)
        for i, key in enumerate(keys):
            parts = _parts(key)
            if len(parts) == 1:  # a single substitution: one pair, one group word
                code_of_key[i] = labels.setdefault(pick(*parts[0]), len(labels))
        row_label = code_of_key[key_code] if len(key_code) else np.zeros(0, dtype=np.int64)
        keep = row_label >= 0
        n, changed, texts, weak = _counts(
            row_label[keep], flips[keep], originals[keep], fragile[keep], len(labels)
        )
        slices = [
            Slice(label, int(changed[c]), int(n[c]), int(texts[c]), int(weak[c]))
            for label, c in labels.items()
        ]
        out[family] = slice_family(slices, what=what)
    out["fragile_texts"] = int(fragile_text.sum())
    return out


def _fragile(flips: np.ndarray, originals: np.ndarray, attrs: np.ndarray) -> np.ndarray:
    """Per original code: every judged single substitution changed the answer, over ≥2 attributes."""
    if not len(originals):
        return np.zeros(0, dtype=bool)
    k = int(originals.max()) + 1
    judged = np.bincount(originals, minlength=k)
    changed = np.bincount(originals, weights=flips.astype(float), minlength=k)
    pairs = np.unique(originals.astype(np.int64) * (int(attrs.max(initial=0)) + 1) + attrs)
    spread = np.bincount(pairs // (int(attrs.max(initial=0)) + 1), minlength=k)
    return (judged >= 2) & (changed == judged) & (spread >= 2)


def of_columns(c: Any) -> dict[str, Any]:
    """The families from the analysis's columns (:class:`~fairprobe.methods.hinter.analysis._Columns`)."""
    sel = c.atomic & c.judged
    encoded = pc.dictionary_encode(c.table["key"]).combine_chunks()
    key_code = encoded.indices.to_numpy(zero_copy_only=False)[sel]
    attrs = c.combo[sel]
    return families(encoded.dictionary.to_pylist(), key_code, c.biased[sel], c.original[sel], attrs)


def explanations(slices: dict[str, Any]) -> dict[str, Explanation]:
    """How each slice reads in a failure's reason: "he→she changed the answer for 8 of 11 mutants"."""
    out: dict[str, Explanation] = {}
    for family, text in (
        (WORD_PAIR, "{label} changed the answer for {{count}} of {{n}} mutants"),
        (GROUP, 'mutants that introduce "{label}" changed the answer for {{count}} of {{n}}'),
    ):
        node = slices.get(family, {})
        rates, m = node.get("rates", {}), node.get("tested", 0)
        for label in _labels(rates):
            if not rates[f"{label}_count"]:
                continue
            adj = rates[f"{label}_adj_ci"]
            weak = rates[f"{label}_fragile"]
            note = f"adjusted for the {m:,} {node['what']} tested ({node['adjustment']}: {interval(adj)})"
            if weak:
                note += f"; {weak} of the changes came from fragile texts"
            out[f"slices.{family}.rates.{label}"] = Explanation(text.format(label=label), note, ANCHOR)
    return out


def _labels(rates: dict[str, Any]) -> list[str]:
    return [k for k in rates if f"{k}_n" in rates]


def table(slices: dict[str, Any]) -> Table:
    """Word pairs and their reverse, worst first by the lower end of the corrected interval."""
    node = slices.get(WORD_PAIR, {})
    rates = node.get("rates", {})
    labels = sorted(_labels(rates), key=lambda k: (-rates[f"{k}_adj_ci"][0], -rates[f"{k}_count"], k))
    rows = []
    for label in labels[:SHOWN_ROWS]:
        before, _, after = label.partition("→")
        back = f"{after}→{before}"
        reverse = (
            f"{rates[f'{back}_count']} of {rates[f'{back}_n']} ({percent(rates[back])})"
            if back in rates
            else "—"
        )
        rows.append(
            [
                label,
                f"{rates[f'{label}_count']} of {rates[f'{label}_n']}",
                percent(rates[label]),
                interval(rates[f"{label}_ci"]),
                interval(rates[f"{label}_adj_ci"]),
                rates[f"{label}_texts"],
                reverse,
                rates[f"{label}_fragile"],
            ]
        )
    m = node.get("tested", 0)
    return Table(
        "Word pairs gated one by one, both directions",
        [
            "word pair",
            "answers changed",
            "rate",
            "95% CI",
            "corrected CI",
            "texts",
            "reverse",
            "from fragile texts",
        ],
        rows,
        caption=f"Every single substitution is its own gated slice: it fails when its corrected interval "
        f"(Bonferroni over the {m:,} word pairs tested; Clopper–Pearson over its texts) lies above the "
        f"gate. 'reverse' is the opposite swap on the texts that allow it; 'from fragile texts' counts "
        f"changes from texts that changed under every swap, of {slices.get('fragile_texts', 0)} such texts."
        + (f" {len(labels) - SHOWN_ROWS} more in summary.json." if len(labels) > SHOWN_ROWS else ""),
        anchor=ANCHOR,
    )
