"""HInter metrics (§4 "Metrics and Measures", RQ1–RQ4) and report sections, from findings alone.

Definitions (denominators stated, since the paper leaves some implicit):

- ``error_rate.atomic`` / ``.intersectional`` — bias error rate (metric 1): biased mutants / valid
  mutants of that kind (the test suite T holds valid mutants only, Algorithm 1 line 21).
- ``error_rate.by_pair["a+b"]`` — the intersectional rate restricted to mutants of that attribute
  combination (Table 9 "I"); ``error_rate.by_attribute[a]`` — the atomic rate per attribute.
- ``hidden_rate`` — hidden / biased intersectional mutants (metric 5, Table 9 "H").
- ``originals_with_bias.atomic`` / ``.intersectional`` — share of originals with ≥1 biased mutant of
  that kind, among originals with ≥1 valid mutant of that kind (metric 2, Figure 4b).
- ``venn["a+b"]`` — RQ4.2: among originals with ≥1 valid intersectional a+b mutant, how many are
  biased under atomic a/b mutants only, under a+b mutants only, both, or none.
- ``false_positives`` — with ``score_discarded``: discarded mutants whose output changed (RQ3.2).

Every rate has a 95% bootstrap interval beside it (``<name>_ci``), seeded by the spec's seed.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.cases import attribute_combinations
from fairprobe.methods.hinter.findings import FINDING_SCHEMA
from fairprobe.report.sections import Analysis, BarChart, Example, Examples, Group, Segment, Table, VennChart
from fairprobe.shards import FindingsTable
from fairprobe.stats import rate_with_ci

MAX_EXAMPLES = 8


def _rate(target: dict[str, Any], name: str, flags: np.ndarray, seed: int) -> None:
    value, ci = rate_with_ci(flags, seed=seed)
    target[name] = value
    target[f"{name}_ci"] = ci


def combo_key(attributes: list[str] | tuple[str, ...]) -> str:
    return "+".join(attributes)


_COLUMNS = ["kind", "original_id", "attributes", "valid", "biased", "hidden", "false_positive"]
_FLUENCY = ["original_id", "valid", "fluency", "original_fluency"]


def _codes(column: pa.ChunkedArray) -> tuple[np.ndarray, list[str]]:
    """Integer codes of a string column and the distinct values they index."""
    encoded = pc.dictionary_encode(column).combine_chunks()
    return encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary.to_pylist()


def _flags(column: pa.ChunkedArray) -> np.ndarray:
    return pc.fill_null(column, False).to_numpy(zero_copy_only=False).astype(bool)


class _Columns:
    """The findings as numpy arrays (one entry per finding): what every metric is computed from."""

    def __init__(self, findings: FindingsTable):
        t = findings.columns(_COLUMNS)
        self.n = t.num_rows
        self.atomic = _flags(pc.equal(t["kind"], "atomic"))
        self.inter = _flags(pc.equal(t["kind"], "intersectional"))
        self.valid, self.biased, self.hidden = (_flags(t[c]) for c in ("valid", "biased", "hidden"))
        self.false_positive = _flags(t["false_positive"])
        self.original, originals = _codes(t["original_id"])
        self.n_originals = len(originals)
        self.combo, combos = _codes(pc.binary_join(t["attributes"], "+"))
        self._combo_code = {c: i for i, c in enumerate(combos)}

    def of_combo(self, key: str) -> np.ndarray:
        code = self._combo_code.get(key)
        return self.combo == code if code is not None else np.zeros(self.n, dtype=bool)

    def per_original(self, mask: np.ndarray) -> np.ndarray:
        """Whether each original has at least one finding in ``mask``."""
        out = np.zeros(self.n_originals, dtype=bool)
        out[self.original[mask]] = True
        return out

    def any_biased(self, mask: np.ndarray) -> np.ndarray:
        """Among originals with a finding in ``mask``: whether one of them is biased."""
        return self.per_original(mask & self.biased)[self.per_original(mask)]

    def combo_counts(self) -> dict[str, int]:
        counts = np.bincount(self.combo, minlength=len(self._combo_code)) if self.n else []
        return {key: int(counts[code]) for key, code in self._combo_code.items()}


def analyse(block: HInterBlock, findings: FindingsTable | list[dict[str, Any]], seed: int) -> Analysis:
    """Metrics, sections and groups from the findings (a list, or the run's Parquet shards read by
    column, so millions of findings fit in memory)."""
    if not isinstance(findings, FindingsTable):
        findings = FindingsTable.from_dicts(findings, FINDING_SCHEMA)
    c = _Columns(findings)
    kinds = {"atomic": c.atomic, "intersectional": c.inter}
    metrics: dict[str, Any] = {"error_rate": {}, "originals_with_bias": {}, "mutants": {}}
    er = metrics["error_rate"]
    for k, mask in kinds.items():
        valid = mask & c.valid
        _rate(er, k, c.biased[valid], seed)
        metrics["mutants"][k] = {
            "generated": int(mask.sum()),
            "valid": int(valid.sum()),
            "discarded": int((mask & ~c.valid).sum()),
        }
        _rate(metrics["originals_with_bias"], k, c.any_biased(valid), seed)
    er["by_attribute"] = {}
    for attr in block.attributes:
        _rate(er["by_attribute"], attr, c.biased[c.atomic & c.valid & c.of_combo(attr)], seed)
    combos = attribute_combinations(block)
    er["by_pair"] = {}
    per_combo: dict[str, dict[str, int]] = {}
    for combo in combos:
        key = combo_key(combo)
        valid = c.inter & c.valid & c.of_combo(key)
        _rate(er["by_pair"], key, c.biased[valid], seed)
        per_combo[key] = {
            "valid": int(valid.sum()),
            "biased": int((valid & c.biased).sum()),
            "hidden": int((valid & c.biased & c.hidden).sum()),
        }
    biased_inter = c.inter & c.valid & c.biased
    _rate(metrics, "hidden_rate", c.hidden[biased_inter], seed)
    metrics["counts"] = {
        "originals_mutated": c.n_originals,
        "biased_atomic": int((c.atomic & c.valid & c.biased).sum()),
        "biased_intersectional": int(biased_inter.sum()),
        "hidden": int((biased_inter & c.hidden).sum()),
    }
    metrics["venn"] = _venn(c, combos)
    if block.score_discarded:
        fp: dict[str, Any] = {}
        for k, mask in kinds.items():
            discarded = mask & ~c.valid
            fp[k] = int((discarded & c.false_positive).sum())
            _rate(fp, f"{k}_rate", c.false_positive[discarded], seed)
        metrics["false_positives"] = fp
    if block.fluency or block.grammar_server:
        metrics["fluency"] = _fluency(findings)
    return Analysis(
        metrics=metrics,
        sections=_sections(block, metrics, findings, combos, per_combo),
        groups=_groups(block, metrics, c.combo_counts(), combos),
        finding_columns=[
            "original_id",
            "kind",
            "attributes",
            "replacements",
            "valid",
            "biased",
            "hidden",
            "original_output",
            "mutant_output",
            "text",
        ],
        failure_field="biased",
    )


def _venn(c: _Columns, combos: list[tuple[str, ...]]) -> dict[str, dict[str, int]]:
    """RQ4.2 per combination, among originals with a valid intersectional mutant of it."""
    attributes = dict.fromkeys(a for combo in combos for a in combo)
    atomic_biased = {a: c.per_original(c.atomic & c.valid & c.biased & c.of_combo(a)) for a in attributes}
    venn = {}
    for combo in combos:
        valid = c.inter & c.valid & c.of_combo(combo_key(combo))
        tested = c.per_original(valid)
        i_biased = c.per_original(valid & c.biased)[tested]
        a_biased = np.any([atomic_biased[a] for a in combo], axis=0)[tested]
        venn[combo_key(combo)] = {
            "atomic_only": int((a_biased & ~i_biased).sum()),
            "intersectional_only": int((~a_biased & i_biased).sum()),
            "both": int((a_biased & i_biased).sum()),
            "none": int((~a_biased & ~i_biased).sum()),
        }
    return venn


def _fluency(findings: FindingsTable) -> dict[str, float]:
    t = findings.columns(_FLUENCY)
    original, _ = _codes(t["original_id"])
    valid = _flags(t["valid"])
    fluency = pc.fill_null(t["fluency"], np.nan).to_numpy(zero_copy_only=False).astype(float)
    of_original = pc.fill_null(t["original_fluency"], np.nan).to_numpy(zero_copy_only=False).astype(float)
    known = ~np.isnan(of_original)
    _, first = np.unique(original[known], return_index=True)
    originals = of_original[known][first]
    scored = ~np.isnan(fluency)
    valid_scores, discarded_scores = fluency[scored & valid], fluency[scored & ~valid]

    def mean(values: np.ndarray) -> float:
        return float(values.mean()) if values.size else 0.0

    return {
        "original_mean": mean(originals),
        "valid_mean": mean(valid_scores),
        "discarded_mean": mean(discarded_scores),
        "n_original": int(originals.size),
        "n_valid": int(valid_scores.size),
        "n_discarded": int(discarded_scores.size),
    }


def highlight(text: str, spans: list[list[int]]) -> list[Segment]:
    """Split ``text`` into segments, marking the replaced spans."""
    segments, cursor = [], 0
    for start, end in sorted(spans):
        if start > cursor:
            segments.append(Segment(text[cursor:start]))
        segments.append(Segment(text[start:end], mark=True))
        cursor = end
    segments.append(Segment(text[cursor:]))
    return segments


def _excerpt(segments: list[Segment], width: int = 220) -> list[Segment]:
    """Keep the text around marked segments so long reviews stay readable in the report."""
    marks = [i for i, s in enumerate(segments) if s.mark]
    if not marks:
        return (
            [Segment(segments[0].text[:width] + ("…" if len(segments[0].text) > width else ""))]
            if segments
            else []
        )
    out = []
    for i, seg in enumerate(segments):
        if seg.mark or len(seg.text) <= width:
            out.append(seg)
        elif i == 0:
            out.append(Segment("…" + seg.text[-width // 2 :]))
        elif i == len(segments) - 1:
            out.append(Segment(seg.text[: width // 2] + "…"))
        else:
            out.append(Segment(seg.text[: width // 3] + " … " + seg.text[-width // 3 :]))
    return out


def _label(output: list[str] | None) -> str:
    return "—" if output is None else ", ".join(output) or "(none)"


def _sections(
    block: HInterBlock,
    metrics: dict[str, Any],
    findings: FindingsTable,
    combos: list[tuple[str, ...]],
    per_combo: dict[str, dict[str, int]],
) -> list[Any]:
    er = metrics["error_rate"]
    rows = []
    for combo in combos:
        key = combo_key(combo)
        n = per_combo[key]
        lo, hi = er["by_pair"][f"{key}_ci"]
        rows.append(
            [
                " × ".join(combo),
                n["valid"],
                n["biased"],
                f"{100 * er['by_pair'][key]:.2f}% [{100 * lo:.2f}, {100 * hi:.2f}]",
                f"{100 * n['hidden'] / n['biased']:.2f}%" if n["biased"] else "—",
            ]
        )
    sections: list[Any] = [
        Table(
            "Intersectional bias error rate by attribute combination (Table 9 style)",
            ["attributes", "valid mutants", "biased", "I: error rate [95% CI]", "H: hidden share of biased"],
            rows,
            caption="I = biased / valid intersectional mutants; H = hidden / biased (atomic parents valid and benign).",
        ),
        BarChart(
            "Bias error rate by mutation",
            [*(f"atomic: {a}" for a in block.attributes), *(f"inter: {combo_key(c)}" for c in combos)],
            [
                *(er["by_attribute"][a] for a in block.attributes),
                *(er["by_pair"][combo_key(c)] for c in combos),
            ],
            ci=[
                *(tuple(er["by_attribute"][f"{a}_ci"]) for a in block.attributes),
                *(tuple(er["by_pair"][f"{combo_key(c)}_ci"]) for c in combos),
            ],
            caption="Share of valid mutants whose prediction differs from the original's; whiskers: 95% bootstrap CI.",
        ),
        Table(
            "Mutants generated, valid and discarded by the dependency invariant (RQ3)",
            ["kind", "generated", "valid", "discarded"],
            [[k, v["generated"], v["valid"], v["discarded"]] for k, v in metrics["mutants"].items()],
        ),
    ]
    for key, counts in metrics["venn"].items():
        sections.append(
            VennChart(
                f"Originals biased under atomic vs intersectional mutants: {key} (RQ4.2)",
                "atomic",
                "intersectional",
                counts["atomic_only"],
                counts["intersectional_only"],
                counts["both"],
                counts["none"],
                caption="Among originals with at least one valid intersectional mutant of this combination.",
            )
        )
    if "fluency" in metrics:
        fl = metrics["fluency"]
        sections.append(
            Table(
                "Grammatical validity (RQ2 / RQ3.3, Figures 6 and 9)",
                ["texts", "n", "mean score"],
                [
                    ["originals", fl["n_original"], fl["original_mean"]],
                    ["valid mutants", fl["n_valid"], fl["valid_mean"]],
                    ["discarded mutants", fl["n_discarded"], fl["discarded_mean"]],
                ],
                caption="LanguageTool: errors per 100 words (lower is better); LM: mean token log-likelihood (higher is better).",
            )
        )
    sections.append(
        Examples(
            "Hidden intersectional bias (Table 1 style)",
            _hidden_examples(findings),
            caption="Replaced words are highlighted. Atomic mutants keep the original's output; the combined one changes it.",
        )
    )
    return sections


def _hidden_examples(findings: FindingsTable) -> list[Example]:
    """The first hidden-bias findings with their atomic parents, in one streaming pass: an original's
    atomic findings come before its intersectional ones, so only the current original's are kept."""
    atomic: dict[str, dict[str, Any]] = {}
    current = None
    examples: list[Example] = []
    where = pc.field("hidden") | (pc.field("kind") == "atomic")
    for line in findings.json_lines(where, needs=["hidden", "kind"]):
        f = json.loads(line)
        if f["original_id"] != current:
            current, atomic = f["original_id"], {}
        if f["kind"] == "atomic":
            atomic[f["key"]] = f
            continue
        rows = [("original", _excerpt([Segment(f["original_text"])]), _label(f["original_output"]))]
        for i, key in enumerate(f["parents"], 1):
            parent = atomic.get(key)
            if parent is not None:
                rows.append(
                    (
                        f"atomic {'I' * i}",
                        _excerpt(highlight(parent["text"], parent["spans"])),
                        _label(parent["mutant_output"]),
                    )
                )
        rows.append(
            ("intersectional", _excerpt(highlight(f["text"], f["spans"])), _label(f["mutant_output"]))
        )
        examples.append(Example(rows))
        if len(examples) >= MAX_EXAMPLES:
            break
    return examples


def _groups(
    block: HInterBlock, metrics: dict[str, Any], count: dict[str, int], combos: list[tuple[str, ...]]
) -> list[Group]:
    groups = [
        Group(
            f"atomic {a}",
            count.get(a, 0),
            [f"error_rate.by_attribute.{a}", "error_rate.atomic"],
            f"error rate {metrics['error_rate']['by_attribute'][a]:.4f}",
        )
        for a in block.attributes
    ]
    for combo in combos:
        key = combo_key(combo)
        groups.append(
            Group(
                f"intersectional {key}",
                count.get(key, 0),
                [f"error_rate.by_pair.{key}", "error_rate.intersectional", "hidden_rate", f"venn.{key}"],
                f"error rate {metrics['error_rate']['by_pair'][key]:.4f}",
            )
        )
    return groups
