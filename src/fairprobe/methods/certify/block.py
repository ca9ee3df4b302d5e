"""The ``certify:`` spec block (also the options of ``fairprobe certify verify``)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from fairprobe.run.threads import Threads, threads_field
from fairprobe.technique.block import BlockBase


class CertifyBlock(BlockBase):
    """Options of a certification run (shared/seeds/certificates.txt §3.3, Eqs. 3–4)."""

    model: str = Field(min_length=1, description="model directory written by `fairprobe certify train`")
    data: str | None = Field(
        min_length=1,
        default=None,
        description="sentences to certify: adult, toxicity, or a JSONL/CSV file with text,label; "
        "default: the held-out test split of the model's task",
    )
    sentences_from: Literal["test", "train"] = Field(
        default="test",
        description="without --data, draw the sentences from the task's held-out test split (Eq. 4's "
        "unseen sentences) or from its training split, as the paper's experiments do (§4.2); "
        "accuracy is always measured on the test split",
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
    attack: bool = Field(
        default=True,
        description="also attack each sentence (gradient and sampling inside the box, and every real "
        "substitution) for the smallest radius that flips its prediction: an upper bound beside ε*",
    )
    relaxation: Literal["deept", "backward", "fast"] = Field(
        default="deept",
        description="zonotope relaxation: deept = DeepT's (softmax as 1/sum exp of score differences, a "
        "fresh noise symbol for each new error term): proved 3.7-13x larger radii on trained Adult "
        "models for 2-3.5x the CPU time; backward = deept plus a CROWN-style backward bound of the "
        "margin (never less than deept; measured +1-7% radius for 2-2.7x deept's time); fast = the "
        "older, looser one",
    )
    cap: int = Field(default=4096, ge=16, description="zonotope generator cap (reduction beyond it)")
    steps: int = Field(
        default=6,
        ge=1,
        le=40,
        description="bisection rounds of the ε* search: ε* to 2**-steps (6: 1.6%); the certified/not decision is exact at any value",
    )
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

    option_names: ClassVar[dict[str, str]] = {"cap": "max_zonotope_generators"}
    """``--cap`` also named CAFFE's pairs per triple: on the command line each says what it caps."""
    example_metric: ClassVar[str] = "fairness_score < 0.5"
    """A fail condition shown in ``--fail-on``'s help."""


class TrainOptions(BaseModel):
    """Bounds of ``fairprobe certify train``'s options (checked before the minutes of training);
    unset values keep the recipe's defaults (shared/seeds/certificates.txt App. C.1, Tables 7–8)."""

    task: Literal["adult-gender", "toxicity"] = Field(description="the task to train on")
    blocks: int | None = Field(
        default=None, ge=1, le=64, description="transformer blocks (default 6 adult, 3 toxicity)"
    )
    epochs: int = Field(default=20, ge=1, description="classifier epochs (early stopping, patience 10)")
    batch: int = Field(default=32, ge=1, description="batch size")
    lr: float = Field(
        default=3e-3, gt=0, le=10, description="classifier learning rate (the paper's Table 8: 1e-3)"
    )
    train_limit: int | None = Field(default=None, ge=1, description="seeded sample of N training sentences")
    pretrain_epochs: int | None = Field(default=None, ge=1, description="epochs of the sensitive-word phase")
    semantic_epochs: int | None = Field(default=None, ge=1, description="epochs of the WordNet phase")
    pretrain_final_epochs: int | None = Field(
        default=None,
        ge=0,
        description="epochs of the sensitive-word phase run again at --pretrain-final-lr after both "
        "phases (default 10; 0: none, the plain Keras schedule; the paper does not say how its "
        "pre-training ends)",
    )
    augment_factor: int = Field(
        default=0,
        ge=0,
        le=20,
        description="synonym-augmented variants per positive training sentence (0: none)",
    )
    augment_prob: float = Field(
        default=0.8, ge=0, le=1, description="per-token synonym replacement probability"
    )
    augment_balance: bool = Field(
        default=False,
        description="synonym variants of the minority class until both classes are equally frequent "
        "(the paper's salary models, with --augment-prob 0.3)",
    )
    tokenizer: Literal["words", "wordpiece"] = Field(
        default="words",
        description="lower-case whole words, or BERT's uncased WordPiece vocabulary (30,522 tokens, "
        "the paper's choice; read from the packaged MiniLM tokenizer, no download)",
    )
    toxic_list: Literal["badwordslist", "badwordslist-filtered", "curated"] = Field(
        default="badwordslist",
        description="toxicity task's toxic terms: the paper's Google bad-words list (408 terms), the "
        "same without identity, anatomy and everyday words (362), or the earlier 51 hand-picked terms",
    )
    pretrain_final_lr: float | None = Field(default=None, gt=0, le=1, description="their step size (1e-4)")
    pretrain_decay: Literal["constant", "cosine"] | None = Field(
        default=None,
        description="step size of the sensitive-word phase: constant (Keras' default) or a cosine "
        "decay to --pretrain-final-lr",
    )
    pretrain_anchor_weight: float | None = Field(
        default=None,
        gt=0,
        le=1000,
        description="loss weight of the similar pairs holding 'female' or 'male' (1: all pairs alike)",
    )
    semantic_pairs: int | None = Field(
        default=None, ge=1, description="WordNet synonym pairs (default 20000)"
    )
    threads: int | None = Field(default=None, ge=1, description="torch threads (default: torch's own)")
    wordnet: bool = Field(default=True, description="the general semantic (WordNet) pre-training phase")
    pretrain: bool = Field(default=True, description="embedding pre-training (false: the paper's ablation)")
    ablation: bool = Field(
        default=False, description="also train the no-pre-training model into MODEL_OUT/no-pretraining"
    )
