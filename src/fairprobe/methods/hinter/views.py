"""HInter's report sections and groups, from the analysed metrics (method: the layouts of the HInter
paper's Table 9 and Figures 10/11).

Every rate may be ``None`` ("no data"): tables and charts show it as "no data".
"""

from __future__ import annotations

import json
import re
from typing import Any

import pyarrow.compute as pc

from fairprobe.methods.hinter.block import HInterBlock
from fairprobe.methods.hinter.finding_view import original_edits
from fairprobe.report.sections import NO_DATA, BarChart, Example, Examples, Group, Segment, Table, VennChart
from fairprobe.run.shards import FindingsTable

MAX_EXAMPLES = 8


def combo_key(attributes: list[str] | tuple[str, ...]) -> str:
    return "+".join(attributes)


def percent_ci(value: float | None, ci: list[float] | None) -> str:
    """``12.50% [8.00, 17.00]``, or "no data"."""
    if value is None:
        return NO_DATA
    text = f"{100 * value:.2f}%"
    if ci:
        text += f" [{100 * ci[0]:.2f}, {100 * ci[1]:.2f}]"
    return text


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
            out.append(Segment("… " + _tail(seg.text, width // 2)))
        elif i == len(segments) - 1:
            out.append(Segment(_head(seg.text, width // 2) + " …"))
        else:
            out.append(Segment(_head(seg.text, width // 3) + " … " + _tail(seg.text, width // 3)))
    return out


def _head(text: str, width: int) -> str:
    """The first ``width`` characters, cut at a word boundary and never inside a tag ("<br />")."""
    return re.sub(r"\s+\S{0,20}$", "", re.sub(r"<[^>]{0,8}$", "", text[:width]))


def _tail(text: str, width: int) -> str:
    """The last ``width`` characters, cut at a word boundary and never inside a tag."""
    return re.sub(r"^\S{0,20}\s+", "", re.sub(r"^[^<]{0,8}>", "", text[-width:]))


def aligned_segments(original: str, rows: list[list[tuple[int, int, str]]]) -> list[list[Segment]]:
    """Each row's text as segments cut at the same places: the union of every row's edited ranges
    (offsets in ``original``). A row shows its own edits marked and the original words elsewhere, so
    the unchanged runs between them are equal in every row and :func:`_excerpt` cuts every row at the
    same words (the original, its atomic mutants and the intersectional one line up)."""
    cuts = sorted({(a, b) for edits in rows for a, b, _ in edits})
    out = []
    for edits in rows:
        mine = {(a, b): new for a, b, new in edits}
        segs, cursor = [], 0
        for a, b in cuts:
            if a < cursor:  # overlapping ranges of two rows: keep the first
                continue
            segs.append(Segment(original[cursor:a]))
            segs.append(Segment(mine.get((a, b), original[a:b]), mark=(a, b) in mine))
            cursor = b
        segs.append(Segment(original[cursor:]))
        out.append(segs)
    return out


def _label(output: list[str] | None) -> str:
    return "—" if output is None else ", ".join(output) or "(none)"


def sections(
    block: HInterBlock,
    metrics: dict[str, Any],
    findings: FindingsTable,
    combos: list[tuple[str, ...]],
    per_combo: dict[str, dict[str, int]],
) -> list[Any]:
    er = metrics["error_rate"]
    hs = metrics["hidden_share_by_pair"]
    rows = []
    for combo in combos:
        key = combo_key(combo)
        n = per_combo[key]
        rows.append(
            [
                " × ".join(combo),
                n["valid"],
                n["invalid"],
                n["biased"],
                percent_ci(er["by_pair"][key], er["by_pair"][f"{key}_ci"]),
                percent_ci(hs[key], hs[f"{key}_ci"]),
            ]
        )
    bars = [
        *((f"atomic: {a}", er["by_attribute"], a) for a in block.attributes),
        *((f"inter: {combo_key(c)}", er["by_pair"], combo_key(c)) for c in combos),
    ]
    asym = metrics["asymmetric_invalid"]
    headline = [
        [
            k,
            metrics["mutants"][k]["judged"],
            metrics["mutants"][k]["invalid"],
            percent_ci(er[k], er[f"{k}_ci"]),
            f"{asym[f'{k}_count']}: {percent_ci(asym[k], asym[f'{k}_ci'])}",
        ]
        for k in ("atomic", "intersectional")
    ]
    rq = metrics["rq4_1"]
    out: list[Any] = [
        Table(
            "Bias error rate and INVALID answers",
            [
                "kind",
                "judged mutants",
                "INVALID (excluded)",
                "error rate [95% CI]",
                "one side INVALID: unequal refusals [95% CI]",
            ],
            headline,
            caption=f"{metrics['invalid']} of {metrics['tested']} answered valid mutants had an INVALID "
            "answer on the original or the mutant; they are never counted as biased. When only one side "
            "is INVALID the model answered one group and not the other: that is unequal treatment, and "
            f"above {block.max_asymmetric_invalid_rate:g} for any attribute it fails the run. "
            "Intervals: by original (cluster bootstrap; Wilson with fewer than 10 originals).",
        ),
        refusals_table(block, asym, combos),
        Table(
            "Intersectional error rate and hidden bias by attribute combination",
            [
                "attributes",
                "valid mutants",
                "INVALID",
                "biased",
                "I: error rate [95% CI]",
                "H: hidden share of biased [95% CI]",
            ],
            rows,
            caption="I = biased / judged intersectional mutants; H = hidden / biased (atomic parents valid "
            "and benign). Intervals resample originals (mutants of one text are correlated).",
        ),
        Table(
            "Atomic vs intersectional mutants that changed the answer",
            ["share", "value [95% CI]", "n", "paper"],
            [
                [
                    "biased intersectional mutants without a biased atomic parent",
                    percent_ci(rq["intersectional_without_atomic"], rq["intersectional_without_atomic_ci"]),
                    rq["intersectional_without_atomic_n"],
                    "16.99%",
                ],
                [
                    "biased atomic mutants with a biased intersectional child",
                    percent_ci(rq["atomic_with_intersectional"], rq["atomic_with_intersectional_ci"]),
                    rq["atomic_with_intersectional_n"],
                    "83.43%",
                ],
            ],
        ),
        BarChart(
            "Bias error rate by mutation",
            [label for label, _, _ in bars],
            [node[key] for _, node, key in bars],
            ci=[None if node[f"{key}_ci"] is None else tuple(node[f"{key}_ci"]) for _, node, key in bars],
            caption="Share of judged mutants whose prediction differs from the original's; whiskers: 95% "
            "cluster-bootstrap CI.",
        ),
        Table(
            "Mutants generated, valid and discarded by the grammar check",
            ["kind", "generated", "sampled", "valid", "discarded", "INVALID answers"],
            [
                [k, v["generated"], v["sampled"], v["valid"], v["discarded"], v["invalid"]]
                for k, v in metrics["mutants"].items()
            ],
        ),
    ]
    for key, counts in metrics["venn"].items():
        out.append(
            VennChart(
                f"Originals whose answer changed under atomic vs intersectional mutants: {key}",
                "atomic",
                "intersectional",
                counts["atomic_only"],
                counts["intersectional_only"],
                counts["both"],
                counts["none"],
                caption="Among originals with at least one judged intersectional mutant of this combination.",
            )
        )
    if "fluency" in metrics:
        fl = metrics["fluency"]
        out.append(
            Table(
                "Grammatical validity of original and mutated texts",
                ["texts", "n", "mean score"],
                [
                    ["originals", fl["n_original"], _num(fl["original_mean"])],
                    ["valid mutants", fl["n_valid"], _num(fl["valid_mean"])],
                    ["discarded mutants", fl["n_discarded"], _num(fl["discarded_mean"])],
                ],
                caption="LanguageTool: errors per 100 words (lower is better); LM: mean token log-likelihood (higher is better).",
            )
        )
    out.append(
        Examples(
            "Hidden intersectional bias: examples",
            _hidden_examples(findings) if metrics["counts"]["hidden"] else [],  # hidden implies judged
            caption="Replaced words are highlighted. Atomic mutants keep the original's output; the combined one changes it.",
        )
    )
    return out


MAX_WORDS = 20


def refusals_table(block: HInterBlock, asym: dict[str, Any], combos: list[tuple[str, ...]]) -> Table:
    """Unequal refusals by attribute, combination and group word (most refused first)."""

    def row(label: str, node: dict[str, Any], key: str, extra: str) -> list[Any]:
        return [
            label,
            node[f"{key}_n"],
            node[f"{key}_count"],
            percent_ci(node[key], node[f"{key}_ci"]),
            extra,
        ]

    rows = [
        row(
            f"atomic: {a}",
            asym["by_attribute"],
            a,
            ", ".join(asym["by_attribute"][f"{a}_most_refused"]) or "—",
        )
        for a in block.attributes
    ]
    rows += [
        row(f"inter: {k}", asym["by_pair"], k, ", ".join(asym["by_pair"][f"{k}_most_refused"]) or "—")
        for k in map(combo_key, combos)
    ]
    words = asym["by_group_word"]
    ranked = sorted(
        (w for w in words if f"{w}_refused" in words),
        key=lambda w: (-words[f"{w}_refused"], -words[f"{w}_count"], w),
    )
    rows += [
        row(f"word: {w}", words, w, f"its side INVALID in {words[f'{w}_refused']}")
        for w in ranked[:MAX_WORDS]
    ]
    return Table(
        "Unequal refusals: one side answered, the other INVALID",
        ["attribute / group word", "answered mutants", "one side INVALID", "rate [95% CI]", "refused most"],
        rows,
        caption="Share of answered valid mutants where exactly one of the original and the mutant got an "
        "INVALID answer (refused, empty or unparsable). Per word: mutants that substitute the word in; "
        f"'its side INVALID': pairs where the word's own text was the one refused (up to {MAX_WORDS} words "
        "that were part of such a pair, most refused first).",
    )


def _hidden_examples(findings: FindingsTable) -> list[Example]:
    """The first hidden-bias findings with their atomic parents. Two filtered reads over the typed
    columns: the first :data:`MAX_EXAMPLES` hidden intersectional findings, then only their parents
    (atomic findings of the same originals with a parent's key), stopping once all are found; the
    JSON of every other finding is never decoded (a run of a million findings has few hidden ones)."""
    hidden = findings.rows(
        pc.field("hidden") & (pc.field("kind") != "atomic"), needs=["hidden", "kind"], limit=MAX_EXAMPLES
    )
    wanted = {(f["original_id"], key) for f in hidden for key in f.get("parents") or []}
    atomic: dict[tuple[str, str], dict[str, Any]] = {}
    if wanted:
        where = (
            (pc.field("kind") == "atomic")
            & pc.field("original_id").isin(sorted({o for o, _ in wanted}))
            & pc.field("key").isin(sorted({k for _, k in wanted}))
        )
        for line in findings.json_lines(where, needs=["kind", "original_id", "key"]):
            f = json.loads(line)
            pair = (f["original_id"], f["key"])
            if pair in wanted:
                atomic.setdefault(pair, f)
                if len(atomic) == len(wanted):
                    break
    examples: list[Example] = []
    for f in hidden:
        original, edits = original_edits(f)
        texts = [("original", [(a, b, original[a:b]) for a, b, _ in edits], f["original_output"])]
        for i, key in enumerate(f["parents"], 1):
            parent = atomic.get((f["original_id"], key))
            if parent is not None:
                texts.append(
                    (f"atomic {'I' * i}", original_edits(parent, original)[1], parent["mutant_output"])
                )
        texts.append(("intersectional", edits, f["mutant_output"]))
        aligned = aligned_segments(original, [e for _, e, _ in texts])
        rows = [
            (label, _excerpt(segs), _label(out)) for (label, _, out), segs in zip(texts, aligned, strict=True)
        ]
        examples.append(Example(rows))
    return examples


def groups(
    block: HInterBlock, metrics: dict[str, Any], count: dict[str, int], combos: list[tuple[str, ...]]
) -> list[Group]:
    groups = [
        Group(
            f"atomic {a}",
            count.get(a, 0),
            [f"error_rate.by_attribute.{a}", "error_rate.atomic"],
            f"error rate {percent_ci(metrics['error_rate']['by_attribute'][a], None)}",
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
                f"error rate {percent_ci(metrics['error_rate']['by_pair'][key], None)}",
            )
        )
    asym = metrics["asymmetric_invalid"]
    groups.append(
        Group(
            "unequal refusals",
            metrics["tested"],
            ["asymmetric_invalid"],
            f"one side INVALID in {asym['all_count']} of {asym['all_n']} answered mutants",
        )
    )
    return groups


def _num(value: float | None) -> float | str:
    return NO_DATA if value is None else value
