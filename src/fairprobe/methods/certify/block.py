"""The ``certify:`` spec block (also the options of ``fairprobe certify verify``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from fairprobe.spec import BlockBase
from fairprobe.threads import Threads, threads_field


class CertifyBlock(BlockBase):
    """Options of a certification run (shared/seeds/certificates.txt §3.3, Eqs. 3–4)."""

    model: str = Field(min_length=1, description="model directory written by `fairprobe certify train`")
    data: str | None = Field(
        min_length=1,
        default=None,
        description="sentences to certify: adult, toxicity, or a JSONL/CSV file with text,label; "
        "default: the held-out test split of the model's task",
    )
    n: int = Field(default=50, ge=1, description="sentences to certify (half of each label where possible)")
    k: int = Field(
        default=50, ge=1, description="nearest neighbours that make a sensitive word's substitute set"
    )
    substitutes: str | None = Field(
        min_length=1,
        default=None,
        description="user substitute list (JSON {word: [..]} or word,substitute CSV) instead of k-NN; "
        "words and substitutes are tokenised as the model reads them, and a substitute with another "
        "number of tokens than its word cannot be covered (the sentence is not certified)",
    )
    domain: Literal["zonotope", "ibp"] = Field(
        default="zonotope", description="verifier that issues the certificates (IBP is the baseline)"
    )
    baseline: bool = Field(default=True, description="also search ε* with the IBP verifier for comparison")
    cap: int = Field(default=4096, ge=16, description="zonotope generator cap (reduction beyond it)")
    steps: int = Field(default=10, ge=1, le=40, description="bisection rounds of the ε* search")
    eps0: float = Field(default=1e-3, gt=0, description="first ε tried by the search")
    max_tokens: int = Field(default=64, ge=1, description="sentences longer than this are not drawn")
    accuracy_limit: int | None = Field(
        default=None, ge=1, description="accuracy on a seeded sample of N evaluation sentences (default all)"
    )
    ablation_model: str | None = Field(
        default="auto",
        description="'no embedding pre-training' model to certify on the same sentences; "
        "auto = MODEL/no-pretraining when it exists; null = none",
    )
    threads: Threads = threads_field()


class TrainOptions(BaseModel):
    """Bounds of ``fairprobe certify train``'s options (checked before the minutes of training);
    unset values keep the recipe's defaults (shared/seeds/certificates.txt App. C.1, Tables 7–8)."""

    blocks: int | None = Field(default=None, ge=1, le=64)
    epochs: int = Field(default=20, ge=1)
    batch: int = Field(default=32, ge=1)
    lr: float = Field(default=3e-3, gt=0, le=10)
    train_limit: int | None = Field(default=None, ge=1)
    pretrain_epochs: int | None = Field(default=None, ge=1)
    semantic_epochs: int | None = Field(default=None, ge=1)
    semantic_pairs: int | None = Field(default=None, ge=1)
    threads: int | None = Field(default=None, ge=1)
