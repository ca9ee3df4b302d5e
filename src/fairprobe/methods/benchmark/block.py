"""The ``benchmark:`` spec block: which published bias benchmark, on which model, on which subset."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fairprobe.technique.block import MODEL_URI, BlockBase

Name = Literal["bbq", "crows-pairs", "stereoset", "winobias", "winogender", "discrim-eval"]


class BenchmarkBlock(BlockBase):
    """Score a published bias benchmark (BBQ, CrowS-Pairs, StereoSet, WinoBias, Winogender, DiscrimEval)."""

    benchmark: Name = Field(description="bbq, crows-pairs, stereoset, winobias, winogender or discrim-eval")
    model: str = Field(
        description="model URI: embedded:smollm2, gguf:PATH, hf:PATH, openai+http://HOST:PORT/v1#M, ...",
        json_schema_extra=MODEL_URI,
    )
    data: str | None = Field(
        default=None,
        description="your own copy of the upstream set (a file; a folder for BBQ, WinoBias, Winogender); "
        "default: the vendored copy",
    )
    categories: list[str] = Field(default_factory=list, description="only these categories (bias types)")
    limit: int | None = Field(
        default=None, ge=1, description="a seeded subset of N items, stratified by category"
    )
    mode: Literal["auto", "likelihood", "chat"] = Field(
        default="auto",
        description="likelihood (log-likelihoods) or chat (multiple choice / yes-no answers); auto: "
        "likelihood when the model gives log-likelihoods",
    )

    input_files = frozenset({"data"})
