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

from collections import defaultdict
from statistics import fmean
from typing import Any

from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.pipeline import attribute_combinations
from fairprobe.report.sections import Analysis, BarChart, Example, Examples, Group, Segment, Table, VennChart
from fairprobe.stats import rate_with_ci

MAX_EXAMPLES = 8


def _rate(target: dict[str, Any], name: str, flags: list[bool], seed: int) -> None:
    value, ci = rate_with_ci(flags, seed=seed)
    target[name] = value
    target[f"{name}_ci"] = ci


def combo_key(attributes: list[str] | tuple[str, ...]) -> str:
    return "+".join(attributes)


def analyse(block: HInterBlock, findings: list[dict[str, Any]], seed: int) -> Analysis:
    kinds = ("atomic", "intersectional")
    by_kind = {k: [f for f in findings if f["kind"] == k] for k in kinds}
    valid = {k: [f for f in by_kind[k] if f["valid"]] for k in kinds}
    metrics: dict[str, Any] = {"error_rate": {}, "originals_with_bias": {}, "mutants": {}}
    er = metrics["error_rate"]
    for k in kinds:
        _rate(er, k, [f["biased"] for f in valid[k]], seed)
        metrics["mutants"][k] = {
            "generated": len(by_kind[k]),
            "valid": len(valid[k]),
            "discarded": len(by_kind[k]) - len(valid[k]),
        }
        per_original: dict[str, bool] = defaultdict(bool)
        for f in valid[k]:
            per_original[f["original_id"]] |= f["biased"]
        _rate(metrics["originals_with_bias"], k, list(per_original.values()), seed)
    er["by_attribute"] = {}
    for attr in block.attributes:
        _rate(
            er["by_attribute"],
            attr,
            [f["biased"] for f in valid["atomic"] if f["attributes"] == [attr]],
            seed,
        )
    combos = attribute_combinations(block)
    er["by_pair"] = {}
    for combo in combos:
        flags = [f["biased"] for f in valid["intersectional"] if tuple(f["attributes"]) == combo]
        _rate(er["by_pair"], combo_key(combo), flags, seed)
    biased_inter = [f for f in valid["intersectional"] if f["biased"]]
    _rate(metrics, "hidden_rate", [f["hidden"] for f in biased_inter], seed)
    metrics["counts"] = {
        "originals_mutated": len({f["original_id"] for f in findings}),
        "biased_atomic": sum(f["biased"] for f in valid["atomic"]),
        "biased_intersectional": len(biased_inter),
        "hidden": sum(f["hidden"] for f in biased_inter),
    }
    metrics["venn"] = _venn(findings, combos)
    if block.score_discarded:
        fp: dict[str, Any] = {}
        for k in kinds:
            discarded = [f for f in by_kind[k] if not f["valid"]]
            fp[k] = sum(bool(f.get("false_positive")) for f in discarded)
            _rate(fp, f"{k}_rate", [bool(f.get("false_positive")) for f in discarded], seed)
        metrics["false_positives"] = fp
    if any("fluency" in f for f in findings):
        metrics["fluency"] = _fluency(findings)
    return Analysis(
        metrics=metrics,
        sections=_sections(block, metrics, findings, combos),
        groups=_groups(block, metrics, findings, combos),
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


def _venn(findings: list[dict[str, Any]], combos: list[tuple[str, ...]]) -> dict[str, dict[str, int]]:
    atomic_biased: dict[tuple[str, str], bool] = defaultdict(bool)
    for f in findings:
        if f["kind"] == "atomic" and f["valid"]:
            atomic_biased[(f["original_id"], f["attributes"][0])] |= f["biased"]
    venn = {}
    for combo in combos:
        inter: dict[str, bool] = defaultdict(bool)
        for f in findings:
            if f["kind"] == "intersectional" and f["valid"] and tuple(f["attributes"]) == combo:
                inter[f["original_id"]] |= f["biased"]
        counts = {"atomic_only": 0, "intersectional_only": 0, "both": 0, "none": 0}
        for original, i_biased in inter.items():
            a_biased = any(atomic_biased[(original, a)] for a in combo)
            key = (
                "both"
                if (a_biased and i_biased)
                else "atomic_only"
                if a_biased
                else "intersectional_only"
                if i_biased
                else "none"
            )
            counts[key] += 1
        venn[combo_key(combo)] = counts
    return venn


def _fluency(findings: list[dict[str, Any]]) -> dict[str, float]:
    originals = {
        f["original_id"]: f["original_fluency"] for f in findings if f.get("original_fluency") is not None
    }
    valid = [f["fluency"] for f in findings if f["valid"] and f.get("fluency") is not None]
    discarded = [f["fluency"] for f in findings if not f["valid"] and f.get("fluency") is not None]
    return {
        "original_mean": fmean(originals.values()) if originals else 0.0,
        "valid_mean": fmean(valid) if valid else 0.0,
        "discarded_mean": fmean(discarded) if discarded else 0.0,
        "n_original": len(originals),
        "n_valid": len(valid),
        "n_discarded": len(discarded),
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
    block: HInterBlock, metrics: dict[str, Any], findings: list[dict[str, Any]], combos
) -> list[Any]:
    er = metrics["error_rate"]
    rows = []
    for combo in combos:
        key = combo_key(combo)
        n_valid = sum(
            1
            for f in findings
            if f["kind"] == "intersectional" and f["valid"] and tuple(f["attributes"]) == combo
        )
        biased = [
            f
            for f in findings
            if f["kind"] == "intersectional" and f["biased"] and tuple(f["attributes"]) == combo
        ]
        hidden = sum(f["hidden"] for f in biased)
        lo, hi = er["by_pair"][f"{key}_ci"]
        rows.append(
            [
                " × ".join(combo),
                n_valid,
                len(biased),
                f"{100 * er['by_pair'][key]:.2f}% [{100 * lo:.2f}, {100 * hi:.2f}]",
                f"{100 * hidden / len(biased):.2f}%" if biased else "—",
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


def _hidden_examples(findings: list[dict[str, Any]]) -> list[Example]:
    atomic = {(f["original_id"], f["key"]): f for f in findings if f["kind"] == "atomic"}
    examples = []
    for f in findings:
        if not f["hidden"]:
            continue
        rows = [("original", _excerpt([Segment(f["original_text"])]), _label(f["original_output"]))]
        for i, key in enumerate(f["parents"], 1):
            parent = atomic.get((f["original_id"], key))
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
    block: HInterBlock, metrics: dict[str, Any], findings: list[dict[str, Any]], combos
) -> list[Group]:
    count: dict[tuple[str, ...], int] = defaultdict(int)
    for f in findings:
        count[tuple(f["attributes"])] += 1
    groups = [
        Group(
            f"atomic {a}",
            count[(a,)],
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
                count[combo],
                [f"error_rate.by_pair.{key}", "error_rate.intersectional", "hidden_rate", f"venn.{key}"],
                f"error rate {metrics['error_rate']['by_pair'][key]:.4f}",
            )
        )
    return groups
