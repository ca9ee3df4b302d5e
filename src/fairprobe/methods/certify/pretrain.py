"""Embedding pre-training with the contrastive loss (paper §3.1, Eq. 2; App. B.2–B.3; Table 7).

Loss, with ``D`` the Euclidean distance of the two embeddings and ``y`` = 0 for a similar pair,
1 for a dissimilar one::

    L = (1 - y) * (D**2 + alpha * D) + y * max(0, margin - D)**2

Two phases, each with its own ``alpha`` / ``margin`` / epochs (Table 7 defaults):

1. **Sensitive phase** — *gender mode* (B.3): every male word is paired (similar) with ``woman``,
   ``female`` and a seeded sample of 50–100 female words; an equal number of dissimilar pairs joins
   a gender word with a gender-neutral word (task words and WordNet lemmas that are not
   gender-specific and, when WordNet is present, not a synonym, hypernym or derivationally related
   form of one). *Toxicity mode*: each toxic term is similar to 50–100 other terms (every pair for a
   list of at most 51, :func:`toxic_similar_pairs`); as many dissimilar pairs join
   a toxic term with a neutral word. Defaults alpha = 1000 / margin = 1.0 (gender), 20 / 0.5 (toxic).
2. **General semantic phase** (WordNet, B.3): synonym pairs (similar) that contain no sensitive
   word, an equal number of random unrelated pairs plus the antonym pairs (dissimilar). Defaults
   alpha = 1.0 / margin = 0.5 (gender), 1.0 / 0.3 (toxic). Sensitive words appear in no pair, so
   with Adam (no weight decay) their embeddings do not move in this phase.

Schedule (issue 20): the paper pre-trains a *Keras* embedding layer (§3.1, footnote 1; App. B.3)
and gives alpha, margin and epochs per phase (App. C.1, Table 7) but no optimiser, learning rate or
batch size, so Keras' own defaults apply: ``Adam()`` (learning rate 1e-3, constant, epsilon 1e-7),
``fit(batch_size=32)`` and the ``Embedding`` layer's uniform(-0.05, 0.05) initialisation. The
general semantic margin is 0.5 for the 6-block Adult model and 0.8 for 8 and 10 blocks (Table 7).
An earlier version used learning rate 0.01 with a cosine decay to 1e-5 on batches of 256: it
squeezed the clusters to t ≈ 1e-5, 25–300× tighter than the paper's radii imply (App. C.2: ε* of
3e-4–9e-4 on Adult, 4e-3 on toxicity; "diminishing return ... beyond 2e-04", App. C.3), which made
every sentence certified. Other choices where the paper is silent: half of the dissimilar partners
drawn from the task's own words, and ``D = sqrt(max(|e1 - e2|^2, 1e-7))`` as in Keras' siamese
contrastive-loss example (:func:`contrastive_loss`).

How pre-training ends (the paper does not say): by default the sensitive phase runs 10 more
epochs at step 1e-4 after both phases (``final_epochs``; ``--pretrain-final-epochs 0`` restores the
plain Keras schedule). Measured on the Adult table (``bench/certify.py --geometry``, 8-block
margins; §4.2 and App. C.2 for the paper's figures):

| schedule | tokeniser | t(female) | t median / max | rank of male near female | span |
|---|---|---|---|---|---|
| constant 1e-3 (Keras) | words | 3.9e-3 | 3.8e-3 / 7.4e-3 | 57 | [-0.51, 0.47] |
| + 10 epochs at 1e-4 | words | 5.3e-4 | 3.4e-4 / 9.0e-4 | 138 | [-0.53, 0.47] |
| + 10 epochs at 1e-4 (default) | WordPiece | 4.7e-4 | 4.0e-4 / 9.1e-4 | 102 | [-1.83, 1.53] |
| + anchor weight 10 | WordPiece | 4.2e-4 | 4.1e-4 / 2.2e-3 | 79 | [-1.80, 1.60] |
| cosine 1e-3 → 1e-4, + 10 epochs | WordPiece | 7.6e-4 | 4.1e-4 / 2.4e-3 | 82 | [-1.83, 1.57] |
| paper | WordPiece | ≈ 3e-4 (ε* 2e-4–9.5e-4) | | within 50 | [-1.70, 1.74] |

The low-step ending brings t to the paper's scale (the ranks above are seed 0's). Whether "male"
is among "female"'s 50 nearest rows depends on the seed, not on the schedule: B.3 pairs every male
word with "female", so its neighbourhood is ≈ 100 single-piece male words at distances of a few
1e-4, ordered by Adam's step noise. Over seeds 0–9 of the default schedule "male" ranks 13–111
near "female" (within 50 in 2 of 10; "female" near "male" in 7 of 10) while t(female) stays at
3.1e-4–5.8e-4 (``bench/certify.py --geometry --seeds ...``; the seed table of
docs/techniques/certify-paper.md). ``anchor_weight`` (the
similar pairs holding female/male weighted W times) moves "male" closer (rank 102 → 79) at the
cost of a 2.4× larger t max; it stays an option (1 by default), as does ``decay="cosine"``
(phase 1's step size decays to ``final_lr``: rank 82, but t(female) and t max grow).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from fairprobe.methods.certify import lexicon


@dataclass
class PretrainConfig:
    alpha: float = 1000.0
    margin: float = 1.0
    epochs: int = 150
    gs_alpha: float = 1.0
    gs_margin: float = 0.5
    gs_epochs: int = 30
    gs_pairs: int = 20000
    lr: float = 1e-3
    """Keras ``Adam()`` default; constant (no decay), as Keras trains unless told otherwise."""
    batch: int = 32
    """Keras ``Model.fit`` default batch size."""
    adam_eps: float = 1e-7
    """Keras ``Adam`` epsilon (torch's default is 1e-8)."""
    wordnet: bool = True
    final_epochs: int = 10
    """Epochs of the sensitive phase run again at ``final_lr`` after both phases (0: none, the plain
    Keras schedule). The paper does not say how pre-training ends; ending it at a small step size
    lets Adam settle the gender cluster to the paper's t (measured in the module docstring), where a
    constant 1e-3 leaves it 10x wider."""
    final_lr: float = 1e-4
    decay: str = "constant"
    """Step size of the sensitive phase: ``constant`` (Keras' default) or ``cosine`` — from ``lr``
    down to ``final_lr`` over its epochs (an option; the paper names no schedule)."""
    anchor_weight: float = 1.0
    """Loss weight of the similar pairs that hold an anchor word (``female``/``male``, B.3's "anchor
    the gender axis"); 1 = every pair alike, as the paper. An option (see the module docstring)."""

    @classmethod
    def for_task(cls, task: str, blocks: int | None = None, **overrides: object) -> PretrainConfig:
        """Table 7 of the paper: Adult 1000 / 1.0 / 150 epochs then WordNet 1.0 / 0.5 (6 blocks) or
        0.8 (8 and 10 blocks) / 30 epochs; toxicity 20 / 0.5 / 100 then WordNet 1.0 / 0.3 / 100."""
        if task == "adult-gender":
            base = cls(gs_margin=0.5 if (blocks or 6) <= 6 else 0.8)
        else:
            base = cls(alpha=20.0, margin=0.5, epochs=100, gs_margin=0.3, gs_epochs=100)
        for k, v in overrides.items():
            if v is not None:
                setattr(base, k, v)
        return base


Pair = tuple[str, str, int]
ANCHORS = frozenset({"female", "male"})
"""The gender indicators of the Adult data (§4.2: t is measured around them)."""


KERAS_EPSILON = 1e-7
"""``keras.backend.epsilon()``: the floor of the squared distance in Keras' siamese examples."""


def contrastive_loss(e1, e2, y, alpha: float, margin: float, floor: float = KERAS_EPSILON, weight=None):  # type: ignore[no-untyped-def]
    """Eq. 2 averaged over a batch; ``y`` = 0 similar, 1 dissimilar (float tensor).

    ``D = sqrt(max(|e1 - e2|^2, floor))`` — the Euclidean distance as Keras' contrastive-loss
    siamese example writes it (``ops.sqrt(ops.maximum(sum_square, keras.backend.epsilon()))``),
    so pairs closer than ``sqrt(1e-7) ≈ 3.2e-4`` feel no pull: the paper's "diminishing return
    ... beyond a certain distance (2e-04)" (App. C.3) for its Keras embedding layer.
    """
    import torch

    d = torch.sqrt(torch.clamp(((e1 - e2) ** 2).sum(-1), min=floor))
    per_pair = (1 - y) * (d * d + alpha * d) + y * torch.clamp(margin - d, min=0) ** 2
    return (per_pair if weight is None else per_pair * weight).mean()


def _neutral_words(candidates: list[str], sensitive: frozenset[str], use_wordnet: bool) -> list[str]:
    """Candidates with no lexical link to a sensitive word (B.3's WordNet filter when available)."""
    related: set[str] = set()
    if use_wordnet:
        wn = lexicon.wordnet()
        for word in sensitive:
            for synset in wn.synsets(word):
                for s in [synset, *synset.hypernyms()]:
                    for lem in s.lemmas():
                        related.add(lem.name().lower())
                        related.update(d.name().lower() for d in lem.derivationally_related_forms())
    return sorted({w for w in candidates if w not in sensitive and w not in related})


def sensitive_pairs(
    mode: str, neutral: list[str], seed: int, task_words: frozenset[str] = frozenset()
) -> list[Pair]:
    """Phase 1 pairs: gender (``adult-gender``) or toxic (``toxicity``) terms vs neutral words."""
    rng = random.Random(seed)
    similar: list[Pair] = []
    if mode == "adult-gender":
        female, male = (sorted(s) for s in lexicon.gender_words())
        group = female + male
        for m in male:
            partners = {"woman", "female"} | set(rng.sample(female, min(len(female), rng.randint(50, 100))))
            similar.extend((m, f, 0) for f in sorted(partners))
    else:
        group = lexicon.toxic_terms()
        similar = toxic_similar_pairs(group, seed)
    if not neutral:
        raise ValueError("no neutral words to contrast the sensitive words with")
    # half of the dissimilar partners are words of the task data, so that the words the classifier
    # reads are pushed away from the sensitive cluster (not only rare WordNet lemmas)
    task = [w for w in neutral if w in task_words] or neutral
    dissimilar = [(rng.choice(group), rng.choice(task if i % 2 else neutral), 1) for i in range(len(similar))]
    return similar + dissimilar


def toxic_similar_pairs(group: list[str], seed: int) -> list[Pair]:
    """Toxicity mode's similar pairs: the gender mode's recipe (B.3: each word paired with a seeded
    sample of 50–100 words of the other side), as the paper's toxicity pre-training "follows the same
    framework" (§4.1): each toxic term is paired with 50–100 other terms, each unordered pair once.
    A list of at most 51 terms (the ``curated`` one) thus keeps every pair; the paper's 408-term
    ``badwordslist`` gets 27,744 of its 83,028 pairs (every pair would triple the sensitive phase,
    measured at ≈ 7 CPU s per epoch with the sample). The partner draw has its own random stream, so the dissimilar pairs drawn
    after it are the same as with every pair."""
    rng = random.Random(f"toxic-partners-{seed}")
    chosen: set[tuple[str, str]] = set()
    for i, a in enumerate(group):
        others = group[:i] + group[i + 1 :]
        for b in rng.sample(others, min(len(others), rng.randint(50, 100))):
            chosen.add((min(a, b), max(a, b)))
    return [(a, b, 0) for i, a in enumerate(group) for b in group[i + 1 :] if (a, b) in chosen]


def semantic_pairs(words: list[str], exclude: frozenset[str], limit: int, seed: int) -> list[Pair]:
    """Phase 2 pairs from WordNet: synonyms similar; random pairs (as many) and antonyms dissimilar."""
    synonyms, antonyms = lexicon.wordnet_pairs(words, exclude, limit, seed)
    rng = random.Random(seed + 1)
    pool = sorted({w for pair in synonyms for w in pair})
    known = set(synonyms)
    dissimilar: list[Pair] = []
    while len(dissimilar) < len(synonyms) and len(pool) > 1:
        a, b = rng.sample(pool, 2)
        if tuple(sorted((a, b))) not in known:
            dissimilar.append((a, b, 1))
    return [(a, b, 0) for a, b in synonyms] + dissimilar + [(a, b, 1) for a, b in antonyms]


@contextmanager
def flush_subnormals() -> Iterator[None]:
    """Arithmetic on this thread flushes subnormal floats (below 1.2e-38) to zero while training.

    Adam's first moment of a row that goes unused for a few hundred steps decays geometrically
    into the subnormal range, where every operation on it is tens of times slower on x86 CPUs: in
    the toxicity pre-training 95% of the moments were subnormal after 8 epochs, and an epoch slowed
    from 1.6 to 2-6 s. Flushed, they are zero; an update they would make is below 1e-30, far below
    float32's resolution of the weights (about 5e-10 at 0.05), so the trained weights do not move.
    The setting holds for this thread and threads it starts later; the intra-op threads PyTorch
    started before keep their own, so :func:`train_pairs` also zeroes Adam's subnormal moments
    after each step (the same values flushing gives)."""
    import torch

    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)  # PyTorch's default (it has no getter to restore from)


def _piece_ids(rows: list[int | tuple[int, ...]]):  # type: ignore[no-untyped-def]
    """``(ids, None)`` when every word is one row; else padded ``(ids, weights)`` for mean pooling."""
    import torch

    if all(isinstance(r, int) for r in rows):
        return torch.tensor(rows), None
    seqs = [(r,) if isinstance(r, int) else tuple(r) for r in rows]
    width = max(len(r) for r in seqs)
    ids = torch.zeros((len(seqs), width), dtype=torch.long)
    w = torch.zeros((len(seqs), width))
    for i, r in enumerate(seqs):
        ids[i, : len(r)] = torch.tensor(r)
        w[i, : len(r)] = 1.0
    return ids, w


def train_pairs(
    table,
    index: dict[str, int] | dict[str, tuple[int, ...]],
    pairs: list[Pair],
    alpha: float,
    margin: float,
    epochs: int,
    cfg: PretrainConfig,
    seed: int,
    log: Callable[[str], None] | None = None,
    phase: str = "pre-training",
    decay: str = "constant",
    anchors: frozenset[str] = frozenset(),
) -> list[float]:  # type: ignore[no-untyped-def]
    """Optimise rows of ``table`` (an ``nn.Embedding``) on ``pairs``; returns the loss per epoch
    (and reports each epoch's loss and an ETA through ``log``, :class:`.epochs.EpochLog`).

    ``index`` maps a word to its row, or (WordPiece) to the rows of its pieces, whose mean is the
    word's embedding ("these subwords are embedded and mean-pooled", App. B.3)."""
    import torch

    from fairprobe.methods.certify.epochs import EpochLog

    pairs = [p for p in pairs if p[0] in index and p[1] in index and p[0] != p[1]]
    if not pairs or epochs <= 0:
        return []
    a, wa = _piece_ids([index[p[0]] for p in pairs])
    b, wb = _piece_ids([index[p[1]] for p in pairs])
    y = torch.tensor([float(p[2]) for p in pairs])
    weight = None
    if anchors and cfg.anchor_weight != 1.0:
        weight = torch.tensor(
            [cfg.anchor_weight if p[2] == 0 and (p[0] in anchors or p[1] in anchors) else 1.0 for p in pairs]
        )

    # Only the rows the pairs use are optimised: every other row has a zero gradient at every step,
    # so Adam leaves it exactly where it is, and its update of the used rows is element-wise, so
    # the used rows end exactly as when the whole table is optimised. Adam's dense step over the
    # whole 30,522-row WordPiece table was most of an epoch's time (and slowed as the moments of
    # rows left untouched for a while decayed into subnormal numbers).
    rows, local = torch.unique(torch.cat([a.flatten(), b.flatten()]), return_inverse=True)
    a, b = local[: a.numel()].view_as(a), local[a.numel() :].view_as(b)
    used = torch.nn.Embedding.from_pretrained(table.weight.detach()[rows].clone(), freeze=False)

    def embed(ids, w):  # type: ignore[no-untyped-def]
        """A word's embedding: its row, or the mean of its WordPiece rows (App. B.3)."""
        if w is None:
            return used(ids)
        return (used(ids) * w[..., None]).sum(1) / w.sum(1, keepdim=True)

    # Keras defaults (see the module docstring): constant learning rate, no scheduler
    # fused: the same Adam update in one kernel per step (a toxicity epoch 3.6 -> 2.6 CPU s)
    opt = torch.optim.Adam(used.parameters(), lr=cfg.lr, eps=cfg.adam_eps, fused=True)
    steps = epochs * -(-len(pairs) // cfg.batch)
    sched = None
    if decay == "cosine":
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps, eta_min=cfg.final_lr)
    gen = torch.Generator().manual_seed(seed)
    tiny = torch.finfo(used.weight.dtype).tiny  # the smallest normal number
    losses = []
    report = EpochLog(f"{phase} ({len(pairs)} pairs)", epochs, log)
    with flush_subnormals():
        for epoch in range(epochs):
            order = torch.randperm(len(pairs), generator=gen)
            total = 0.0
            for start in range(0, len(pairs), cfg.batch):
                idx = order[start : start + cfg.batch]
                e1 = embed(a[idx], None if wa is None else wa[idx])
                e2 = embed(b[idx], None if wb is None else wb[idx])
                loss = contrastive_loss(
                    e1, e2, y[idx], alpha, margin, weight=None if weight is None else weight[idx]
                )
                opt.zero_grad()
                loss.backward()
                opt.step()
                moment = opt.state[used.weight]["exp_avg"]  # zeroed below the smallest normal float:
                moment.masked_fill_(moment.abs() < tiny, 0.0)  # threads started earlier do not flush
                if sched is not None:
                    sched.step()
                total += float(loss.detach()) * len(idx)
            losses.append(total / len(pairs))
            report.epoch(epoch + 1, f"loss {losses[-1]:.4g}")
    with torch.no_grad():
        table.weight[rows] = used.weight
    return losses


def pretraining_words(
    mode: str, task_words: list[str], cfg: PretrainConfig, seed: int
) -> tuple[list[Pair], list[Pair]]:
    """Both phases' pairs for a task whose data uses ``task_words``."""
    sensitive = lexicon.gender_specific() if mode == "adult-gender" else frozenset(lexicon.toxic_terms())
    gs: list[Pair] = []
    if cfg.wordnet:
        gs = semantic_pairs(sorted(set(task_words) - sensitive), sensitive, cfg.gs_pairs, seed)
    candidates = sorted(set(task_words) | {w for p in gs for w in p[:2]})
    neutral = _neutral_words(candidates, sensitive, cfg.wordnet)
    return sensitive_pairs(mode, neutral, seed, frozenset(task_words)), gs


def pretrain_embeddings(
    table,
    index: dict[str, int] | dict[str, tuple[int, ...]],
    phase1: list[Pair],
    phase2: list[Pair],
    cfg: PretrainConfig,
    seed: int,
    log: Callable[[str], None] | None = None,
) -> dict[str, list[float]]:  # type: ignore[no-untyped-def]
    """Run both phases on ``table`` in place; returns the loss curves."""
    import torch

    torch.manual_seed(seed)
    with torch.no_grad():
        table.weight.uniform_(-0.05, 0.05)
    curves = {
        "sensitive": train_pairs(
            table,
            index,
            phase1,
            cfg.alpha,
            cfg.margin,
            cfg.epochs,
            cfg,
            seed,
            log,
            "pre-training (sensitive words)",
            cfg.decay,
            ANCHORS,
        ),
        "semantic": train_pairs(
            table,
            index,
            phase2,
            cfg.gs_alpha,
            cfg.gs_margin,
            cfg.gs_epochs,
            cfg,
            seed + 1,
            log,
            "pre-training (WordNet)",
        ),
    }
    if cfg.final_epochs > 0:
        low = PretrainConfig(**{**cfg.__dict__, "lr": cfg.final_lr})
        curves["final"] = train_pairs(
            table,
            index,
            phase1,
            cfg.alpha,
            cfg.margin,
            cfg.final_epochs,
            low,
            seed + 2,
            log,
            f"pre-training (sensitive words, step {cfg.final_lr:g})",
            "constant",
            ANCHORS,
        )
    return curves
