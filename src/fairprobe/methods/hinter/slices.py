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
span at least two attributes, or include both directions of one word pair (``he→she`` and ``she→he``
on a text that has both words): it flips under anything, so its flips are no evidence against one
group. Each slice counts the changes that came from fragile texts (``_fragile``).

**Both directions** (``slices.word_pair.both_directions``): for every word pair whose reverse was also
tested on one of its texts, on the texts that allow both (a judged ``a→b`` and a judged ``b→a``
mutant of the same text), how many changed under ``a→b`` only, under ``b→a`` only, and under both.
A change under both directions is the swap itself moving the model, not one group.

**Score shift** (``slices.<family>.score_shift``), for a classifier that gives scores: per slice, the
mean over its judged mutants of the score of the original's label in the mutant minus in the
original (:func:`~fairprobe.methods.hinter.pipeline.score_shift`; negative: the swap made the model
less sure of its answer), with a 95% interval clustered by text: the cluster-robust t-interval
(:func:`fairprobe.stats.cluster_mean_intervals`; no resampling, null with fewer than two texts). It
is informative only, never a gate: a score's scale is the model's own (a calibrated probability, a
softmax over two labels, a sigmoid per label), so no one threshold means "unfair" across models,
while a changed answer means the same for all of them (the paper's metamorphic oracle).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow.compute as pc

from fairprobe.judge.evidence import Slice, adjusted_for, slice_cells, slice_family, slice_labels
from fairprobe.judge.headline import percent
from fairprobe.report.sections import Explanation, Table
from fairprobe.stats import cluster_mean_intervals

WORD_PAIR = "word_pair"
GROUP = "group"
ANCHOR = "rank-slices"
GROUP_ANCHOR = "rank-group-words"
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
    keys: list[str],
    key_code: np.ndarray,
    flips: np.ndarray,
    originals: np.ndarray,
    attrs: np.ndarray,
    shifts: np.ndarray | None = None,
) -> dict[str, Any]:
    """The word-pair and group families over the judged atomic mutants given as parallel arrays (key
    code into ``keys``, changed answer, original code, attribute code, and the score shift: ``nan``
    where the model gave no scores)."""
    pair_codes, pair_labels = _row_labels(keys, key_code, lambda a, b, c: f"{b}→{c}")
    reverse = _reverse_codes(pair_labels)
    per_text = _per_text(pair_codes, flips, originals, reverse)
    fragile_text = _fragile(flips, originals, attrs, per_text)
    fragile = fragile_text[originals] if len(originals) else np.zeros(0, dtype=bool)
    out: dict[str, Any] = {}
    for family, pick, what in (
        (WORD_PAIR, lambda a, b, c: f"{b}→{c}", "word pairs"),
        (GROUP, lambda a, b, c: c, "group words"),
    ):
        row_label, labels = _row_labels(keys, key_code, pick)
        keep = row_label >= 0
        n, changed, texts, weak = _counts(
            row_label[keep], flips[keep], originals[keep], fragile[keep], len(labels)
        )
        slices = [
            Slice(label, int(changed[c]), int(n[c]), int(texts[c]), int(weak[c]))
            for label, c in labels.items()
        ]
        out[family] = slice_family(slices, what=what)
        if shifts is not None:
            scored = keep & ~np.isnan(shifts)
            if scored.any():
                out[family]["score_shift"] = _score_shift(
                    labels, row_label[scored], originals[scored], shifts[scored]
                )
    out[WORD_PAIR]["both_directions"] = _both_directions(pair_labels, reverse, per_text)
    out["fragile_texts"] = int(fragile_text.sum())
    return out


def _row_labels(keys: list[str], key_code: np.ndarray, pick: Any) -> tuple[np.ndarray, dict[str, int]]:
    """Per row, the code of its slice label (``pick(attribute, word, replacement)``; -1 for a mutant
    of several substitutions), and the labels' codes."""
    labels: dict[str, int] = {}
    code_of_key = np.full(len(keys), -1, dtype=np.int64)
    for i, key in enumerate(keys):
        parts = _parts(key)
        if len(parts) == 1:  # a single substitution: one pair, one group word
            code_of_key[i] = labels.setdefault(pick(*parts[0]), len(labels))
    return (code_of_key[key_code] if len(key_code) else np.zeros(0, dtype=np.int64)), labels


def _reverse_codes(labels: dict[str, int]) -> np.ndarray:
    """Per word-pair code, the code of its reverse (``she→he`` for ``he→she``), or -1."""
    out = np.full(len(labels), -1, dtype=np.int64)
    for label, code in labels.items():
        before, _, after = label.partition("→")
        out[code] = labels.get(f"{after}→{before}", -1)
    return out


def _per_text(
    pair: np.ndarray, flips: np.ndarray, originals: np.ndarray, reverse: np.ndarray
) -> dict[str, Any]:
    """Per (word pair, text) with a judged mutant: whether one of them changed the answer, and the
    same for the reverse pair on that text (``reverse_tested``, ``reverse_changed``)."""
    keep = pair >= 0
    width = int(originals.max(initial=0)) + 1
    ids = pair[keep] * width + originals[keep]
    uniq, inverse = np.unique(ids, return_inverse=True)
    changed = np.bincount(inverse.ravel(), weights=flips[keep].astype(float), minlength=len(uniq)) > 0
    code, text = uniq // width, uniq % width
    rev = reverse[code] if len(code) else np.zeros(0, dtype=np.int64)
    wanted = rev * width + text
    at = np.minimum(np.searchsorted(uniq, wanted), max(len(uniq) - 1, 0))
    tested = (rev >= 0) & (uniq[at] == wanted) if len(uniq) else np.zeros(0, dtype=bool)
    back = tested & changed[at] if len(uniq) else tested
    return {"code": code, "text": text, "changed": changed, "reverse_tested": tested, "reverse_changed": back}


def _both_directions(labels: dict[str, int], reverse: np.ndarray, per_text: dict[str, Any]) -> dict[str, Any]:
    """Per word pair whose reverse was tested on the same texts: on the texts that allow both
    directions, how many changed under this direction only, the reverse only, or both."""
    both = per_text["reverse_tested"]
    code, fwd, back = per_text["code"][both], per_text["changed"][both], per_text["reverse_changed"][both]
    k = len(labels)
    counts = {
        "texts": np.bincount(code, minlength=k),
        "only_this": np.bincount(code, weights=(fwd & ~back).astype(float), minlength=k),
        "only_reverse": np.bincount(code, weights=(~fwd & back).astype(float), minlength=k),
        "both": np.bincount(code, weights=(fwd & back).astype(float), minlength=k),
    }
    name = {c: label for label, c in labels.items()}
    out: dict[str, Any] = {}
    for label, c in labels.items():
        if reverse[c] >= 0 and counts["texts"][c]:
            out[label.replace(".", "")] = {
                "reverse": name[int(reverse[c])].replace(".", ""),
                **{key: int(v[c]) for key, v in counts.items()},
            }
    return out


def _score_shift(labels: dict[str, int], row_label: np.ndarray, originals: np.ndarray, shifts: np.ndarray):
    """Per slice with a scored mutant: the mean score shift, its 95% interval clustered by text
    (cluster-robust t), the mutants and texts it is over."""
    mean, lo, hi, n, k = cluster_mean_intervals(row_label, originals, shifts, len(labels))
    values: dict[str, Any] = {}
    for label, c in labels.items():
        if not n[c]:
            continue
        key = label.replace(".", "")
        values[key] = round(float(mean[c]), 6)
        values[f"{key}_ci"] = None if np.isnan(lo[c]) else [round(float(lo[c]), 6), round(float(hi[c]), 6)]
        values[f"{key}_n"] = int(n[c])
        values[f"{key}_texts"] = int(k[c])
    return {
        "what": "mean score shift of the original's label (mutant minus original)",
        "interval": "95% cluster-robust t-interval over texts",
        "gated": False,
        "values": values,
    }


def _fragile(
    flips: np.ndarray, originals: np.ndarray, attrs: np.ndarray, per_text: dict[str, Any]
) -> np.ndarray:
    """Per original code: every judged single substitution changed the answer, and they span ≥2
    attributes or include both directions of one word pair."""
    if not len(originals):
        return np.zeros(0, dtype=bool)
    k = int(originals.max()) + 1
    judged = np.bincount(originals, minlength=k)
    changed = np.bincount(originals, weights=flips.astype(float), minlength=k)
    pairs = np.unique(originals.astype(np.int64) * (int(attrs.max(initial=0)) + 1) + attrs)
    spread = np.bincount(pairs // (int(attrs.max(initial=0)) + 1), minlength=k)
    two_way = np.zeros(k, dtype=bool)
    two_way[per_text["text"][per_text["changed"] & per_text["reverse_changed"]]] = True
    return (judged >= 2) & (changed == judged) & ((spread >= 2) | two_way)


def of_columns(c: Any) -> dict[str, Any]:
    """The families from the analysis's columns (:class:`~fairprobe.methods.hinter.analysis._Columns`)."""
    sel = c.atomic & c.judged
    encoded = pc.dictionary_encode(c.table["key"]).combine_chunks()
    key_code = encoded.indices.to_numpy(zero_copy_only=False)[sel]
    attrs = c.combo[sel]
    shifts = pc.fill_null(c.table["score_shift"], np.nan).to_numpy(zero_copy_only=False).astype(float)[sel]
    return families(encoded.dictionary.to_pylist(), key_code, c.biased[sel], c.original[sel], attrs, shifts)


def explanations(slices: dict[str, Any]) -> dict[str, Explanation]:
    """How each slice reads in a failure's reason: "he→she changed the answer for 8 of 11 mutants"."""
    out: dict[str, Explanation] = {}
    for family, text in (
        (WORD_PAIR, "{label} changed the answer for {{count}} of {{n}} mutants"),
        (GROUP, 'mutants that introduce "{label}" changed the answer for {{count}} of {{n}}'),
    ):
        node = slices.get(family, {})
        rates = node.get("rates", {})
        for label in slice_labels(rates):
            if not rates[f"{label}_count"]:
                continue
            weak = rates[f"{label}_fragile"]
            note = adjusted_for(node, label)
            if weak:
                note += f"; {weak} of the changes came from fragile texts"
            before, arrow, after = label.partition("→")
            back = f"{after}→{before}"
            if family == WORD_PAIR and arrow and back in rates:
                note += f"; the reverse {back}: {rates[f'{back}_count']} of {rates[f'{back}_n']}"
                both = node.get("both_directions", {}).get(label, {}).get("both", 0)
                if both:
                    note += f", {both} texts changed both ways"
            anchor = ANCHOR if family == WORD_PAIR else GROUP_ANCHOR
            out[f"slices.{family}.rates.{label}"] = Explanation(text.format(label=label), note, anchor)
    return out


def shift_words(node: dict[str, Any], label: str) -> str:
    """A slice's mean score shift and its interval in words ("−0.412 (−0.55 to −0.27)"), "—" without."""
    values = node.get("score_shift", {}).get("values", {})
    if label not in values:
        return "—"
    ci = values[f"{label}_ci"]
    span = f" ({_signed(ci[0])} to {_signed(ci[1])})" if ci else " (one text: no interval)"
    return _signed(values[label]) + span


def _signed(x: float) -> str:
    return f"{x:+.3f}".replace("-", "−")


def _directions(node: dict[str, Any], label: str) -> str:
    entry = node.get("both_directions", {}).get(label)
    if not entry or not entry["texts"]:
        return "—"
    return (
        f"{entry['texts']} texts: {entry['only_this']} this way only, {entry['only_reverse']} reverse only, "
        f"{entry['both']} both"
    )


def tables(slices: dict[str, Any]) -> list[Table]:
    """The word-pair table, then the group table."""
    return [table(slices), group_table(slices)]


def table(slices: dict[str, Any]) -> Table:
    """Word pairs and their reverse, worst first by the lower end of the corrected interval."""
    node = slices.get(WORD_PAIR, {})
    rates = node.get("rates", {})
    scored = bool(node.get("score_shift"))
    labels = sorted(slice_labels(rates), key=lambda k: (-rates[f"{k}_adj_ci"][0], -rates[f"{k}_count"], k))
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
                *slice_cells(rates, label),
                rates[f"{label}_texts"],
                reverse,
                _directions(node, label),
                rates[f"{label}_fragile"],
                *([shift_words(node, label)] if scored else []),
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
            "both directions, same texts",
            "from fragile texts",
            *(["mean score shift (95% CI)"] if scored else []),
        ],
        rows,
        caption=f"Every single substitution is its own gated slice: it fails when its corrected interval "
        f"(Bonferroni over the {m:,} word pairs tested; Clopper–Pearson over its texts) lies above the "
        f"gate. 'reverse' is the opposite swap over the texts that allow it; 'both directions, same "
        f"texts' sets the two side by side on the texts that allow both (a change both ways is the swap "
        f"itself moving the model, not one group); 'from fragile texts' counts changes from texts that "
        f"changed under every swap (of several attributes, or both ways of one pair), of "
        f"{slices.get('fragile_texts', 0)} such texts."
        + (SHIFT_NOTE if scored else "")
        + (f" {len(labels) - SHOWN_ROWS} more in summary.json." if len(labels) > SHOWN_ROWS else ""),
        anchor=ANCHOR,
    )


SHIFT_NOTE = (
    " 'mean score shift': the score of the original's label in the mutant minus in the original, "
    "averaged over the mutants, with a 95% t-interval clustered by text (cluster-robust; no interval "
    "from one text); informative only, never a gate."
)


def group_table(slices: dict[str, Any]) -> Table:
    """Group words substituted in, worst first by the lower end of the corrected interval."""
    node = slices.get(GROUP, {})
    rates = node.get("rates", {})
    scored = bool(node.get("score_shift"))
    labels = sorted(slice_labels(rates), key=lambda k: (-rates[f"{k}_adj_ci"][0], -rates[f"{k}_count"], k))
    rows = [
        [
            label,
            *slice_cells(rates, label),
            rates[f"{label}_texts"],
            rates[f"{label}_fragile"],
            *([shift_words(node, label)] if scored else []),
        ]
        for label in labels[:SHOWN_ROWS]
    ]
    m = node.get("tested", 0)
    return Table(
        "Groups substituted in, gated one by one",
        [
            "group word",
            "answers changed",
            "rate",
            "95% CI",
            "corrected CI",
            "texts",
            "from fragile texts",
            *(["mean score shift (95% CI)"] if scored else []),
        ],
        rows,
        caption=f"Every mutant that introduces the word, whatever it replaced: it fails when its "
        f"corrected interval (Bonferroni over the {m:,} group words tested) lies above the gate."
        + (SHIFT_NOTE if scored else "")
        + (f" {len(labels) - SHOWN_ROWS} more in summary.json." if len(labels) > SHOWN_ROWS else ""),
        anchor=GROUP_ANCHOR,
    )
