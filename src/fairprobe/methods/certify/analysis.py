"""Certificate metrics and report sections (paper Eq. 4, Figures 2–3, Table 1, App. C.3).

Metrics (``summary.json`` → ``metrics``), over the main model's certificates:

- ``cases`` (also ``tested``) — sentences attempted; ``invalid`` — those the verifier could not
  decide (an error such as running out of memory; 0 if none); ``invalid_rate`` — ``invalid / cases``,
  ``None`` when nothing was attempted (issue 16: a rate over zero cases is "no data").
- ``fairness_score`` — Eq. 4: certified sentences / decided sentences; ``fairness_score_ci`` is the
  exact 95% binomial (Clopper–Pearson) interval, so 0 of 20 reads ``[0, 0.168]``, never ``[0, 0]``;
  ``None`` (and its interval ``None``) when no sentence was decided.
- ``certified_share`` (= ``fairness_score``), ``certified_share_ci_low``, ``certified_share_ci_high``,
  ``certified_share_n`` — the same figure as plain numbers, the names a fail condition or a default
  gate reads (``--fail-on "certified_share_ci_high<0.5"``: fail only when the share is confidently
  below one half).
- ``accuracy`` — the model's accuracy on the evaluation data (held-out split by default).
- ``threshold`` — the run's reference threshold: the largest t(w) over the sensitive words met
  (each sentence's own t is in its certificate).
- ``eps_star.{min,median,max}`` — ε* of the issuing verifier; ``sentences`` — how many.
- ``ibp`` — the interval baseline on the same sentences: its ``fairness_score``, ``eps_star_median``
  and ``zonotope_over_ibp_median`` (median of per-sentence ε*_zonotope / ε*_IBP).
- ``attack`` — the empirical upper bound beside ε* (:func:`attack_metrics`): attack ``radius`` and
  the verifier's ``gap`` (min/median/max), ``certifiable_share_upper`` (F could be at most this with
  an exact verifier) and the sentences a real word substitution flips.
- ``ablation.no_pretraining`` — the same metrics for the "no embedding pre-training" model.
"""

from __future__ import annotations

from statistics import median
from typing import Any

from fairprobe.methods.certify import ranking
from fairprobe.methods.certify.block import CertifyBlock
from fairprobe.report.sections import Analysis, Group, Paragraph, RadarChart, Table
from fairprobe.stats import clopper_pearson_interval, invalid_fields


def _valid(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Findings the verifier decided (``eps_star`` is a number)."""
    return [f for f in findings if not f.get("invalid") and isinstance(f.get("eps_star"), int | float)]


def _median(values: list[float]) -> float | None:
    return median(values) if values else None


def certified_share(flags: list[bool]) -> dict[str, Any]:
    """F (Eq. 4) with its exact binomial interval: ``certified_share``, ``certified_share_ci_low``,
    ``certified_share_ci_high``, ``certified_share_n`` and ``fairness_score_ci`` ([low, high]);
    every value ``None`` when no sentence was decided (no data, never a score of 0)."""
    n, k = len(flags), sum(flags)
    if n == 0:
        return {
            "certified_share": None,
            "certified_share_ci_low": None,
            "certified_share_ci_high": None,
            "certified_share_n": 0,
            "fairness_score_ci": None,
        }
    lo, hi = clopper_pearson_interval(k, n)
    return {
        "certified_share": k / n,
        "certified_share_ci_low": round(lo, 6),
        "certified_share_ci_high": round(hi, 6),
        "certified_share_n": n,
        "fairness_score_ci": [round(lo, 6), round(hi, 6)],
    }


def _spread(values: list[float]) -> dict[str, float | None]:
    return {"min": min(values, default=None), "median": _median(values), "max": max(values, default=None)}


def attack_metrics(findings: list[dict[str, Any]]) -> dict[str, Any]:
    """The attack's upper bounds over decided sentences (:mod:`.attack`): ``radius`` and the
    verifier's ``gap`` (attack radius / ε*) as min/median/max over the sentences where a flip was
    found; ``no_flip_found`` counts the others; ``certifiable_share_upper`` is the share of sentences
    without a flip inside their box of radius t — the most any sound box verifier could certify
    here (F ≤ this); ``substitution_flip_sentences`` counts sentences a real substitution flips."""
    radii = [f["attack_radius"] for f in findings if f.get("attack_radius") is not None]
    gaps = [f["verifier_gap"] for f in findings if f.get("verifier_gap") is not None]
    open_ = [f for f in findings if f.get("certifiable") is not False]
    return {
        "sentences": len(findings),
        "radius": _spread(radii),
        "gap": _spread(gaps),
        "no_flip_found": len(findings) - len(radii),
        "certifiable_share_upper": len(open_) / len(findings),
        "substitution_flip_sentences": sum(bool(f.get("substitution_flips")) for f in findings),
        "substitutions_tried": sum(int(f.get("substitutions_tried") or 0) for f in findings),
    }


def _variant_metrics(findings: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    valid = _valid(findings)
    cases, invalid = len(findings), len(findings) - len(valid)
    eps = [f["eps_star"] for f in valid]
    share = certified_share([bool(f["certified"]) for f in valid])
    words: dict[str, float] = {}
    for f in valid:
        words.update({w: t for w, t in f.get("word_thresholds", {}).items() if t is not None})
    finite = [t for t in words.values() if t != float("inf")]
    out: dict[str, Any] = {
        "cases": cases,
        **invalid_fields(invalid, cases),
        "fairness_score": share["certified_share"],
        "fairness_score_ci": share["fairness_score_ci"],
        "fairness_score_n": share["certified_share_n"],  # the decided sentences the interval is over
        **{k: v for k, v in share.items() if k != "fairness_score_ci"},
        "accuracy": next(
            (f["model_accuracy"] for f in findings if f.get("model_accuracy") is not None), None
        ),
        "threshold": max(finite, default=None),
        "eps_star": {"min": min(eps, default=None), "median": _median(eps), "max": max(eps, default=None)},
        "sentences": len(valid),
        "certified": sum(bool(f["certified"]) for f in valid),
        "sentence_accuracy": (sum(bool(f["correct"]) for f in valid) / len(valid)) if valid else None,
        "seconds_per_sentence": _median([f["seconds"] for f in findings if f.get("seconds") is not None]),
    }
    attacked = [f for f in valid if "attack_radius" in f]
    if attacked:
        out["attack"] = attack_metrics(attacked)
    with_ibp = [f for f in valid if isinstance(f.get("eps_star_ibp"), int | float)]
    if with_ibp:
        ratios = [f["eps_star"] / f["eps_star_ibp"] for f in with_ibp if f["eps_star_ibp"] > 0]
        out["ibp"] = {
            "fairness_score": sum(bool(f["certified_ibp"]) for f in with_ibp) / len(with_ibp),
            "eps_star_median": median(f["eps_star_ibp"] for f in with_ibp),
            "zonotope_over_ibp_median": median(ratios) if ratios else None,
        }
    if out["accuracy"] is None:
        out.pop("accuracy")
    return out


def _attack_cell(f: dict[str, Any]) -> str:
    if "attack_radius" not in f:
        return ""
    if f.get("attack_radius") is None:
        return "no flip found"
    text = f"{f['attack_radius']:.3g}"
    if f.get("substitution_flips"):
        word, sub, _ = f["substitution_flips"][0]
        text += f" ({word} → {sub} flips it)"
    return text


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3g}"


def _gap_paragraph(metrics: dict[str, Any]) -> Paragraph:
    a = metrics["attack"]
    return Paragraph(
        "How loose is the verifier?",
        "Beside each certificate an attack (gradient steps and random points inside the same box, and "
        "every real substitution) searched for the smallest radius that changes the prediction, so "
        "each sentence reads: proven ε* ≤ true robust radius ≤ attack radius. The verifier's gap is "
        f"attack radius / ε*: median ×{_fmt(a['gap']['median'])} (min ×{_fmt(a['gap']['min'])}, "
        f"max ×{_fmt(a['gap']['max'])}); attack radius median {_fmt(a['radius']['median'])} against "
        f"threshold {_fmt(metrics['threshold'])}. An exact verifier could certify at most "
        f"{100 * a['certifiable_share_upper']:.0f}% of these sentences (those with no flip found inside "
        f"their box of radius t), against the {_fmt(None if metrics['fairness_score'] is None else 100 * metrics['fairness_score'])}% "
        f"proven. {a['substitution_flip_sentences']} of {a['sentences']} sentences change prediction "
        f"under a real substitution ({a['substitutions_tried']} substitutions tried). No flip found "
        f"in {a['no_flip_found']} sentences (an attack that finds nothing proves nothing).",
    )


def _radar(title: str, findings: list[dict[str, Any]], threshold: float | None) -> RadarChart:
    findings = _valid(findings)
    return RadarChart(
        title=title,
        labels=[f"s{i + 1}" for i in range(len(findings))],
        values=[f["eps_star"] for f in findings],
        reference=threshold,
        reference_label="no threshold (no sentence)"
        if threshold is None
        else f"threshold t = {threshold:.3g}",
        series_label="max verified ε*",
        caption="Each spoke is a sentence; the polygon's tip is its ε*. Sentences whose tip reaches "
        "past the dashed circle (the run threshold) hold a certificate (cf. the paper's Figures 2–3; "
        "per-sentence thresholds are in the table below).",
    )


def analyse(block: CertifyBlock, findings: list[dict[str, Any]], seed: int) -> Analysis:
    main = sorted((f for f in findings if f.get("variant", "main") == "main"), key=lambda f: f["id"])
    ablation = sorted((f for f in findings if f.get("variant") == "no-pretraining"), key=lambda f: f["id"])
    metrics = _variant_metrics(main, seed)
    if ablation:
        metrics["ablation"] = {"no_pretraining": _variant_metrics(ablation, seed)}
    sections: list[Any] = [
        Paragraph(
            "What a certificate means",
            "A sentence is certified when the verifier proves that no point in the ℓ∞ box of radius ε* "
            "around its token embeddings changes the prediction, and ε* ≥ t, the largest ℓ∞ distance "
            "from a sensitive word of the sentence to its substitutes. Then no combination of "
            f"substitutions changes the prediction. Verifier: {block.domain}"
            + (" (IBP baseline alongside)" if block.baseline else "")
            + f"; substitutes: {'user list' if block.substitutes else f'{block.k} nearest neighbours'}.",
        ),
        _radar("ε* per sentence against the threshold", main, metrics["threshold"]),
    ]
    if "attack" in metrics:
        sections.append(_gap_paragraph(metrics))
    if ablation:
        sections.append(
            _radar(
                "Ablation: no embedding pre-training",
                ablation,
                metrics["ablation"]["no_pretraining"]["threshold"],
            )
        )
    rows = []
    for f in main + ablation:
        rows.append(
            [
                f["variant"],
                f["sentence_id"],
                f["label"],
                f["prediction"],
                "" if f.get("eps_star") is None else f["eps_star"],
                "" if f.get("eps_star_ibp") is None else f["eps_star_ibp"],
                "" if f.get("threshold") is None else f["threshold"],
                "invalid: " + str(f.get("error", ""))
                if f.get("invalid")
                else ("yes" if f["certified"] else "no"),
                _attack_cell(f),
                "" if f.get("verifier_gap") is None else f"×{f['verifier_gap']:.3g}",
                f.get("seconds", ""),
            ]
        )
    sections.append(
        Table(
            "Certificates",
            [
                "model",
                "sentence",
                "label",
                "prediction",
                "ε* (proven)",
                "ε* (IBP)",
                "t",
                "certified",
                "attack radius",
                "verifier gap",
                "seconds",
            ],
            rows,
        )
    )
    words: dict[str, tuple[float, list[str]]] = {}
    for f in _valid(main):
        for w, t in f.get("word_thresholds", {}).items():
            words[w] = (t, [s for s, _ in f["substitutes"].get(w, [])][:12])
    sections.append(
        Table(
            "Sensitive words and their substitutes (main model)",
            ["word", "t(w) (ℓ∞)", "nearest substitutes"],
            [[w, t, ", ".join(s)] for w, (t, s) in sorted(words.items())],
        )
    )
    groups = [
        Group(
            "certificates",
            len(main),
            ["cases", "invalid", "invalid_rate", "fairness_score", "eps_star", "threshold", "accuracy"],
        )
    ]
    if ablation:
        groups.append(Group("ablation no-pretraining", len(ablation), ["ablation"]))
    ranked = ranking.ranked(main)
    return Analysis(
        metrics=metrics,
        sections=[ranking.table(ranked), *sections],
        groups=groups,
        explanations=ranking.explanations(metrics, ranked),
        headline=ranking.headline(metrics),
        key_metrics=ranking.KEY_METRICS,
        top_findings=ranking.top_findings(ranked),
        finding_columns=[
            "variant",
            "sentence_id",
            "label",
            "prediction",
            "eps_star",
            "eps_star_ibp",
            "threshold",
            "certified",
            "seconds",
            "sentence",
        ],
        failure_field="not_certified",
        finding_view=finding_view,
    )


def finding_view(f: dict[str, Any]) -> Any:
    """A certificate for the report's findings view: the sentence, the label and prediction, and
    whether ε* reached the threshold t (certificates paper, §4: certified when ε* ≥ t)."""
    from fairprobe.report.findings_view import FindingView

    eps, t = f.get("eps_star"), f.get("threshold")
    notes = [
        (k, str(f[k])) for k in ("label", "prediction", "substitute_source", "error") if f.get(k) is not None
    ]
    if isinstance(eps, int | float) and isinstance(t, int | float):
        notes.append(("ε* / threshold t", f"{eps:.4g} / {t:.4g}"))
    if f.get("invalid"):
        verdict = "not verified"
    else:
        verdict = "not certified" if f.get("not_certified", not f.get("certified")) else "certified"
    return FindingView(
        id=str(f.get("id", "")),
        verdict=verdict,
        failed=bool(f.get("not_certified", not f.get("certified"))),
        left=str(f.get("sentence") or ""),
        left_label="sentence",
        right_label="",
        left_answer=f"prediction {f.get('prediction')} (label {f.get('label')})",
        changes=[f"ε* {eps:.4g} vs t {t:.4g}"]
        if isinstance(eps, int | float) and isinstance(t, int | float)
        else [],
        attribute=str(f.get("variant") or ""),
        group=str(f.get("label") or ""),
        notes=notes,
    )
