"""Fairness certificates (paper §3.3, Eqs. 3–4, Algorithm 1).

For a sentence s with prediction c:

1. **ε\\*** — the largest ε for which the verifier (:mod:`.network`) proves that every sentence whose
   token embeddings lie in the ℓ∞ box of radius ε around s's keeps prediction c (binary search).
2. **Threshold** — Eq. 3: for every sensitive word w of s, ``t(w) = max_{w' in S(w)} ||e(w) - e(w')||∞``
   where S(w) are the substitutes of w: its k = 50 nearest neighbours in the embedding table (by
   Euclidean distance, the metric the table was pre-trained with; ``<pad>``/``<unk>`` excluded), or a
   user list (a substitute outside the vocabulary is the ``<unk>`` embedding, as the model sees it).
   The sentence's threshold is ``t = max_w t(w)``.
3. **Certificate** — issued when ``ε* >= t``: then, since every substitute of every sensitive word
   lies inside the verified box, *no combination* of substitutions changes the prediction.

Sensitive words: the gender words (:func:`.lexicon.gender_words`) for ``adult-gender`` models, the
toxic terms for ``toxicity`` models, as they occur in the sentence. Sentences to certify are drawn
from those holding at least one sensitive word, balanced between the two labels where possible
(the paper samples 25 sentences of each class). The run threshold (``metrics.threshold``) is the
largest ``t(w)`` over the sensitive words met (the paper's reference circle).
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from fairprobe.errors import DataError
from fairprobe.methods.certify import lexicon
from fairprobe.methods.certify.data import Example
from fairprobe.methods.certify.interval import Point
from fairprobe.methods.certify.model import LoadedModel
from fairprobe.methods.certify.network import max_verified_eps, walk


@dataclass(frozen=True)
class VerifierSettings:
    domain: str = "zonotope"
    cap: int = 4096
    steps: int = 10
    eps0: float = 1e-3
    baseline: bool = True
    """Also search ε* with the interval (IBP) verifier, the baseline."""


def sensitive_vocabulary(loaded: LoadedModel) -> set[str]:
    if loaded.cfg.task == "toxicity":
        words = set(lexicon.toxic_terms())
    else:
        female, male = lexicon.gender_words()
        words = set(female | male)
    return words & set(loaded.vocab)


def load_substitute_file(path: str | Path) -> dict[str, list[str]]:
    """A user substitute list: JSON ``{word: [substitutes]}`` or CSV/TSV lines ``word,substitute``."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"substitute list {p} not found; give a JSON object or a word,substitute CSV")
    out: dict[str, list[str]] = {}
    if p.suffix == ".json":
        try:
            data = json.loads(p.read_text())
        except json.JSONDecodeError as exc:
            raise DataError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
            raise DataError(f"{p} must hold an object mapping each word to a list of substitutes")
        out = {str(k).lower(): [str(s).lower() for s in v] for k, v in data.items()}
    else:
        sep = "\t" if p.suffix == ".tsv" else ","
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = [x.strip().lower() for x in line.split(sep)]
            if len(parts) != 2 or not all(parts):
                raise DataError(f"{p} line {n}: write word{sep}substitute")
            out.setdefault(parts[0], []).append(parts[1])
    if not out:
        raise DataError(f"substitute list {p} is empty")
    return out


class Substitutes:
    """Substitute sets S(w) and thresholds t(w) of Eq. 3 on one model's embedding table."""

    def __init__(self, loaded: LoadedModel, k: int = 50, user: dict[str, list[str]] | None = None):
        self.loaded = loaded
        self.k = k
        self.user = user
        self.table = loaded.module.tok.weight.detach()
        self.index = {w: i for i, w in enumerate(loaded.vocab)}
        self.sensitive = set(user) if user is not None else sensitive_vocabulary(loaded)
        self._cache: dict[str, list[tuple[str, float]]] = {}

    def of(self, word: str) -> list[tuple[str, float]]:
        """``[(substitute, ℓ∞ distance)]`` for ``word``."""
        import torch

        if word not in self._cache:
            e = self.table[self.index.get(word, 1)]
            if self.user is not None:
                subs = [s for s in self.user.get(word, []) if s != word]
                ids = [self.index.get(s, 1) for s in subs]
            else:
                d2 = ((self.table - e) ** 2).sum(-1)
                d2[[0, 1, self.index[word]]] = float("inf")
                ids = torch.argsort(d2)[: self.k].tolist()
                subs = [self.loaded.vocab[i] for i in ids]
            linf = (self.table[ids] - e).abs().amax(-1).tolist() if ids else []
            self._cache[word] = list(zip(subs, linf, strict=True))
        return self._cache[word]

    def threshold(self, word: str) -> float:
        return max((d for _, d in self.of(word)), default=0.0)

    def words_in(self, text: str) -> list[str]:
        return list(dict.fromkeys(w for w in lexicon.tokenize(text) if w in self.sensitive))


def choose_sentences(examples: list[Example], subs: Substitutes, n: int, seed: int) -> list[Example]:
    """Up to ``n`` sentences with a sensitive word, half of each label where possible (seeded)."""
    rng = random.Random(seed)
    eligible = [e for e in examples if subs.words_in(e.text)]
    if not eligible:
        raise DataError("no sentence of the data holds a sensitive word; check --data or the substitute list")
    by_label = {lab: [e for e in eligible if e.label == lab] for lab in (0, 1)}
    for group in by_label.values():
        rng.shuffle(group)
    take0 = min(len(by_label[0]), max(n // 2, n - len(by_label[1])))
    chosen = by_label[0][:take0] + by_label[1][: n - take0]
    return sorted(chosen, key=lambda e: e.id)


def token_ids(loaded: LoadedModel, text: str) -> list[int]:
    index = {w: i for i, w in enumerate(loaded.vocab)}
    ids = [index.get(w, 1) for w in lexicon.tokenize(text)][: loaded.cfg.max_len]
    return ids or [1]


def logits_of(loaded: LoadedModel, ids: list[int]):  # type: ignore[no-untyped-def]
    """The model's logits (float64) for one unpadded sentence, through the verifier's own walk."""
    import torch

    with torch.no_grad():
        return walk(loaded.module, Point(loaded.module.tok.weight[torch.tensor(ids)])).v


def certify(
    loaded: LoadedModel, example: Example, subs: Substitutes, settings: VerifierSettings
) -> dict[str, Any]:
    """The JSON certificate record of one sentence (one finding)."""
    import torch

    start = time.perf_counter()
    ids = token_ids(loaded, example.text)
    e = loaded.module.tok.weight[torch.tensor(ids)].detach()
    logits = logits_of(loaded, ids)
    pred = int(logits.argmax())
    words = subs.words_in(example.text)
    sub_sets = {w: [[s, round(d, 8)] for s, d in subs.of(w)] for w in words}
    per_word = {w: subs.threshold(w) for w in words}
    t = max(per_word.values(), default=0.0)
    main = max_verified_eps(
        loaded.module, e, pred, settings.domain, settings.cap, settings.eps0, settings.steps
    )
    record: dict[str, Any] = {
        "id": example.id,
        "model_hash": loaded.hash,
        "task": loaded.cfg.task,
        "pretrained_embeddings": bool(loaded.meta.get("pretrained_embeddings", True)),
        "sentence": example.text,
        "tokens": len(ids),
        "label": example.label,
        "prediction": pred,
        "correct": pred == example.label,
        "eps_star": main.eps_star,
        "threshold": t,
        "word_thresholds": per_word,
        "certified": bool(main.eps_star >= t),
        "substitutes": sub_sets,
        "substitute_source": "user list" if subs.user is not None else f"{subs.k} nearest neighbours",
        "verifier": {**asdict(settings), "dtype": "float64", "calls": main.calls},
    }
    if settings.baseline:
        ibp = max_verified_eps(loaded.module, e, pred, "ibp", settings.cap, settings.eps0, settings.steps)
        record["eps_star_ibp"] = ibp.eps_star
        record["certified_ibp"] = bool(ibp.eps_star >= t)
    record["seconds"] = round(time.perf_counter() - start, 3)
    record["seconds_zonotope"] = round(main.seconds, 3)
    return record
