"""The ``audit:`` spec block (issue 7; bafa.txt Table 7 defaults)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeFloat, model_validator

from fairprobe.spec import BlockBase

Strategy = Literal["bafa", "bafa-bo", "cerm-only", "stratified", "random", "power"]


class AuditBlock(BlockBase):
    model: str | None = Field(
        default=None, description="black box: classifier URI (scores[positive_label]) or chat URI"
    )
    scores: str | None = Field(
        default=None, description="CSV of cached black-box scores (columns id, score): offline audit"
    )
    data: str = Field(description="labelled pool: CSV/JSONL/Parquet file, hf:NAME..., or adult / adult:train")
    group_col: str = Field(description="column of the protected attribute")
    label_col: str | None = Field(default=None, description="gold label column (auto-detected when omitted)")
    text_col: str | None = None
    groups: list[str] | None = Field(default=None, description="the two group values compared (g=0, g=1)")
    positive_label: str | None = Field(
        default=None, description="label whose score is ranked (>50K for adult)"
    )
    strategy: Strategy = "bafa"
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
        default=2.0,
        description="strength α of the (group, label) distribution-matching weights of the selector "
        "(Table 7: 2.0; 0 turns them off)",
    )
    lam: float = Field(default=0.01, gt=0.0, description="version-space tolerance λ")
    cerm_steps: int = Field(default=60, ge=1, description="Cooper steps per bound per round")
    dual_lr: float = Field(default=0.5, gt=0.0, description="gradient-ascent rate of the C-ERM multipliers")
    surrogate: Literal["mlp", "transformer"] = "mlp"
    features: Literal["minilm", "ngrams", "minilm+ngrams"] = "minilm"
    hidden: int = Field(default=256, ge=4)
    base: Literal["ridge", "knn"] = Field(
        default="ridge", description="base scorer the surrogate corrects: kernel ridge on logits or k-NN"
    )
    group_weight: float = Field(
        default=0.0,
        ge=0.0,
        description="weight of each group's own part in the ridge base kernel (0: shared fit plus a group-1 correction)",
    )
    refit_group_weights: list[NonNegativeFloat] = Field(
        default_factory=list,
        description="kernel group weights the refits cycle through (default: group_weight)",
    )
    refits: int = Field(
        default=0,
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

    @model_validator(mode="after")
    def _check(self) -> AuditBlock:
        if (self.model is None) == (self.scores is None):
            raise ValueError("give exactly one of model (a black-box URI) or scores (a CSV of cached scores)")
        return self
