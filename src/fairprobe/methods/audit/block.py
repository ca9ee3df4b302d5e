"""The ``audit:`` spec block (issues 7 and 18).

Defaults are the settings measured to hold the true gap (``bench/audit.py``, Adult case A, tuned
on seeds 0–19: 97.8% of rounds cover the true ΔAUC, 5.2× fewer queries than stratified to
ε = 0.02; the held-out figures are in docs/techniques/audit.md): n-gram features, a 64-wide surrogate, 600
Cooper steps at multiplier rate 0.1, 16 bootstrap refits, kernel group weight 10, no
distribution-matching weights. ``preset: paper`` (``--preset paper``) gives bafa.txt Table 7
(App. A.4.4) instead, mapped onto this implementation; an option given explicitly always wins
over the preset.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, NonNegativeFloat, model_validator

from fairprobe.run.threads import Threads, threads_field
from fairprobe.technique.block import MODEL_URI, BlockBase

Strategy = Literal["bafa", "bafa-bo", "cerm-only", "stratified", "random", "power", "bo"]

PRESETS: dict[str, dict[str, Any]] = {
    "default": {},
    "paper": {
        # bafa.txt Table 7 (App. A.4.4), both case studies.
        "lam": 0.01,  # constraint tolerance λ
        "epsilon": 0.01,  # target precision ε (the paper: "stopping criterion (not used)")
        "budget": 4 + 75 * 16,  # seed set 1 × |groups| × |labels|, then T = 75 rounds of k = 16
        "k": 16,
        "candidates": 1000,  # M
        "match_weight": 2.0,  # α, distribution-matching weight
        # The paper fine-tunes bert-base (4 retraining epochs, 8–10 optimisation epochs); the
        # closest here: sentence embeddings into a 256-wide MLP, 60 Cooper steps per bound at
        # multiplier rate 0.5, and no refits or per-group kernel part (the first design).
        "features": "minilm",
        "hidden": 256,
        "cerm_steps": 60,
        "dual_lr": 0.5,
        "refits": 0,
        "group_weight": 0.0,
        "power_gamma": 2.0,
    },
}
"""Named settings; ``preset`` fills every field of its entry that the spec or command line left out."""


class AuditBlock(BlockBase):
    """Options of a BAFA audit (shared/seeds/bafa.txt): estimate a fairness gap of a black box."""

    example_metric: ClassVar[str] = "upper > 0.1"
    """A fail condition shown in ``--fail-on``'s help."""

    preset: Literal["default", "paper"] = Field(
        default="default",
        description="default: the measured settings that hold the true gap; paper: bafa.txt Table 7",
    )
    model: str | None = Field(
        default=None,
        description="black box: classifier URI (scores[positive_label]) or chat URI",
        json_schema_extra=MODEL_URI,
    )
    scores: str | None = Field(
        min_length=1,
        default=None,
        description="CSV of cached black-box scores (columns id, score): offline audit",
    )
    data: str = Field(
        min_length=1, description="labelled pool: CSV/JSONL/Parquet file, hf:NAME..., or adult / adult:train"
    )
    group_col: str = Field(description="column of the protected attribute")
    label_col: str | None = Field(default=None, description="gold label column (auto-detected when omitted)")
    text_col: str | None = Field(default=None, description="text column (auto-detected when omitted)")
    groups: list[str] | None = Field(default=None, description="the two group values compared (g=0, g=1)")
    positive_label: str | None = Field(
        default=None, description="label whose score is ranked (>50K for adult)"
    )
    strategy: Strategy = Field(
        default="bafa", description="query strategy: BAFA, its baselines, or power (an oracle for evaluation)"
    )
    metric: Literal["auc", "dp", "eo"] = Field(
        default="auc", description="ΔAUC, demographic-parity or TPR gap"
    )
    threshold: float = Field(default=0.5, ge=0.0, le=1.0, description="score threshold of the dp / eo gaps")
    budget: int = Field(default=1000, ge=1, description="most black-box queries per seed")
    epsilon: float = Field(
        default=0.02, gt=0.0, description="stop when the interval's half-width is <= epsilon"
    )
    seeds: int = Field(default=1, ge=1, description="repeat the audit with seeds seed, seed+1, ...")
    pool_size: int = Field(default=5000, ge=4, description="seeded sample bounding the pool")
    k: int = Field(default=16, ge=1, description="queries per round")
    per_stratum: int = Field(default=1, ge=1, description="seed-set points per (group, label) stratum")
    candidates: int = Field(default=1000, ge=1, description="candidate subsample scored per round (M)")
    match_weight: NonNegativeFloat = Field(
        default=0.0,
        description="strength α of the (group, label) distribution-matching weights of the selector "
        "(Table 7: 2.0; 0 turns them off)",
    )
    lam: float = Field(default=0.01, gt=0.0, description="version-space tolerance λ")
    cerm_steps: int = Field(default=600, ge=1, description="Cooper steps per bound per round")
    dual_lr: float = Field(default=0.1, gt=0.0, description="gradient-ascent rate of the C-ERM multipliers")
    surrogate: Literal["mlp", "transformer"] = Field(default="mlp", description="surrogate network")
    features: Literal["minilm", "ngrams", "minilm+ngrams"] = Field(
        default="ngrams", description="surrogate inputs: sentence embeddings, n-grams or both"
    )
    hidden: int = Field(default=64, ge=4, description="width of the surrogate network")
    base: Literal["ridge", "knn"] = Field(
        default="ridge", description="base scorer the surrogate corrects: kernel ridge on logits or k-NN"
    )
    group_weight: float = Field(
        default=10.0,
        ge=0.0,
        description="weight of each group's own part in the ridge base kernel (0: shared fit plus a group-1 correction)",
    )
    refit_group_weights: list[NonNegativeFloat] = Field(
        default_factory=list,
        description="kernel group weights the refits cycle through (default: group_weight)",
    )
    refits: int = Field(
        default=16,
        ge=0,
        description="extra version-space members per round: the base scorer refitted on bootstrap resamples",
    )
    delta: float = Field(
        default=0.05, gt=0.0, lt=1.0, description="failure probability of the baselines' bound"
    )
    reference: bool = Field(
        default=False, description="also score the whole pool (not counted) for the true gap"
    )
    max_tokens: int = Field(default=32, ge=4, description="answer length of a chat scorer")
    power_gamma: float = Field(
        default=2.0, gt=0.0, description="exponent γ of power sampling (p(1-p))^γ (the authors used 2)"
    )
    threads: Threads = threads_field()
    interval: Literal["raw", "nested"] = Field(
        default="raw",
        description="headline interval: raw (the paper's C-ERM interval of the last round) or nested "
        "(intersected with every earlier round's); both are always reported",
    )
    """Why raw is the default: the C-ERM end-points are found by gradient steps, so each raw interval
    is an inner approximation of the version space's range and misses the truth in a few rounds;
    the intersection inherits every earlier miss, and once an early round has excluded the truth
    no later round can bring it back, not even when the whole pool is queried and the raw interval
    is exact. ``bench/audit.py`` prints the coverage of both (docs/techniques/audit.md)."""

    @model_validator(mode="before")
    @classmethod
    def _preset(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("preset") in PRESETS:
            data = {**PRESETS[data["preset"]], **data}
        return data

    @model_validator(mode="after")
    def _check(self) -> AuditBlock:
        if (self.model is None) == (self.scores is None):
            raise ValueError("give exactly one of model (a black-box URI) or scores (a CSV of cached scores)")
        return self


def block_default(name: str) -> Any:
    """The default of ``AuditBlock.<name>``: the engine's settings (:class:`.engine.AuditConfig`,
    :class:`.selection.SelectorConfig`, :class:`.cerm.CermConfig`) take their defaults from here, so
    a Python caller of the engine gets the behaviour of the command line (one default per option)."""
    value = AuditBlock.model_fields[name].get_default(call_default_factory=True)
    return tuple(value) if isinstance(value, list) else value
