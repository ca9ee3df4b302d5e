"""Fairness certificates (paper §3.3, Eqs. 3–4, Algorithm 1).

For a sentence s with prediction c:

1. **ε\\*** — the largest ε for which the verifier (:mod:`.network`) proves that every sentence whose
   token embeddings lie in the ℓ∞ box of radius ε around s's keeps prediction c (binary search).
2. **Threshold** — Eq. 3: for every sensitive word w of s, ``t(w) = max_{w' in S(w)} ||e(w) - e(w')||∞``
   where S(w) are the substitutes of w: its k = 50 nearest neighbours in the embedding table (by
   Euclidean distance, the metric the table was pre-trained with; ``<pad>``/``<unk>`` excluded), or a
   user list, tokenised as the model reads text (:class:`Substitutes`: ``Mr.`` is ``mr``, a token
   outside the vocabulary is ``<unk>``, a phrase is compared position by position, and a substitute
   of another length cannot be covered: ``t(w) = inf``). The sentence's threshold is
   ``t = max_w t(w)``.
3. **Deciding** — the verifier is first asked at ``ε = t``: a box of radius t that verifies holds
   every substitute, so that one call decides the certificate, and it bounds the ε* search
   (:func:`.network.search_eps`) from one side (ε* >= t when it verifies, ε* < t when not).
4. **Certificate** — issued when ``ε* >= t``: then, since every substitute of every sensitive word
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

from fairprobe.data.readers import require_file
from fairprobe.errors import DataError
from fairprobe.methods.certify import lexicon
from fairprobe.methods.certify.attack import AttackSettings, attack
from fairprobe.methods.certify.data import Example
from fairprobe.methods.certify.interval import Point
from fairprobe.methods.certify.model import LoadedModel
from fairprobe.methods.certify.network import max_verified_eps, verifies, walk


@dataclass(frozen=True)
class VerifierSettings:
    domain: str = "zonotope"
    cap: int = 4096
    steps: int = 6
    """Bisection rounds after the bracket: ε* to a relative precision of 2**-steps (1.6%); the
    certified / not decision does not depend on it (one call at t decides it, :func:`_search`)."""
    eps0: float = 1e-3
    baseline: bool = True
    """Also search ε* with the interval (IBP) verifier, the baseline."""
    attack: bool = True
    """Also search an attack radius (:mod:`.attack`): the empirical upper bound beside ε*."""
    relaxation: str = "deept"
    """The zonotope relaxation (:data:`.network.RELAXATIONS`): DeepT's, or the older ``fast``."""


def sensitive_vocabulary(loaded: LoadedModel) -> set[str]:
    if loaded.cfg.task == "toxicity":
        words = set(lexicon.toxic_terms())
    else:
        female, male = lexicon.gender_words()
        words = set(female | male)
    return words & set(loaded.vocab)


def load_substitute_file(path: str | Path) -> dict[str, list[str]]:
    """A user substitute list: JSON ``{word: [substitutes]}`` or CSV/TSV lines ``word,substitute``."""
    p = require_file(Path(path), "substitute list", "give a JSON object or a word,substitute CSV")
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
    """Substitute sets S(w) and thresholds t(w) of Eq. 3 on one model's embedding table.

    A user list is read *as the model reads text* (issue 20): every word and substitute goes
    through the model's tokeniser (:func:`.lexicon.tokenize`), so ``Mr.`` is the token ``mr`` and
    ``young man`` the two tokens ``young man``; a token outside the vocabulary is ``<unk>``, as the
    model sees it. A word (possibly several tokens) matches a sentence where its tokens occur in a
    row. A substitute with as many tokens as its word replaces them position by position, so its
    distance is the largest ℓ∞ distance over those positions: every substituted sentence then lies in
    the ε-box around the sentence when ε ≥ t(w). A substitute with a *different* number of tokens
    changes the sentence's length, which no box around the sentence's own tokens contains: it
    cannot be covered, its distance is ``inf`` (``None`` in the JSON certificate), and a sentence
    holding its word is not certified. It is listed under ``uncovered_substitutes``.
    """

    def __init__(self, loaded: LoadedModel, k: int = 50, user: dict[str, list[str]] | None = None):
        self.loaded = loaded
        self.k = k
        self.user = user
        self.table = loaded.module.tok.weight.detach()
        self.index = {w: i for i, w in enumerate(loaded.vocab)}
        self._cache: dict[str, list[tuple[str, float]]] = {}
        if user is not None:
            self.phrases = {w: tuple(lexicon.tokenize(w)) for w in user}
            self.phrases = {w: toks for w, toks in self.phrases.items() if toks}
            self.sensitive = set(self.phrases)
        else:
            self.sensitive = sensitive_vocabulary(loaded)
            self.phrases = {w: (w,) for w in self.sensitive}

    def _ids(self, tokens: tuple[str, ...] | list[str]) -> list[int]:
        return [self.index.get(t, 1) for t in tokens]

    def of(self, word: str) -> list[tuple[str, float]]:
        """``[(substitute, ℓ∞ distance)]`` for ``word`` (``inf``: a substitute no box can cover)."""
        import torch

        if word not in self._cache:
            if self.user is not None:
                own = self.phrases.get(word, tuple(lexicon.tokenize(word)))
                e = self.table[self._ids(own)]
                out = []
                for sub in dict.fromkeys(self.user.get(word, [])):
                    toks = tuple(lexicon.tokenize(sub))
                    if toks == own:
                        continue  # the word itself, as the model reads it
                    if len(toks) != len(own):
                        out.append((sub, float("inf")))
                    else:
                        out.append((sub, float((self.table[self._ids(toks)] - e).abs().max())))
                self._cache[word] = out
            else:
                e = self.table[self.index.get(word, 1)]
                d2 = ((self.table - e) ** 2).sum(-1)
                d2[[0, 1, self.index[word]]] = float("inf")
                ids = torch.argsort(d2)[: self.k].tolist()
                subs = [self.loaded.vocab[i] for i in ids]
                linf = (self.table[ids] - e).abs().amax(-1).tolist() if ids else []
                self._cache[word] = list(zip(subs, linf, strict=True))
        return self._cache[word]

    def replacements(self, words: list[str]) -> list[tuple[str, str, float, list[int], list[int]]]:
        """``(word, substitute, ℓ∞ distance, word's token ids, substitute's token ids)`` for every
        substitute of ``words``, as the real-substitution attack writes them into a sentence."""
        out = []
        for w in words:
            own = self._ids(self.phrases.get(w, (w,)))
            for sub, d in self.of(w):
                toks = tuple(lexicon.tokenize(sub)) if self.user is not None else (sub,)
                out.append((w, sub, d, own, self._ids(toks)))
        return out

    def threshold(self, word: str) -> float:
        return max((d for _, d in self.of(word)), default=0.0)

    def words_in(self, text: str) -> list[str]:
        """The sensitive words (user phrases) that occur in ``text`` as the model tokenises it."""
        tokens = lexicon.tokenize(text)[: self.loaded.cfg.max_len]
        if self.user is None:
            return list(dict.fromkeys(w for w in tokens if w in self.sensitive))
        found = []
        for word, phrase in self.phrases.items():
            m = len(phrase)
            if any(tuple(tokens[i : i + m]) == phrase for i in range(len(tokens) - m + 1)):
                found.append((tokens.index(phrase[0]), word))
        return [w for _, w in sorted(found)]


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


def _json_distance(d: float, digits: int | None = None) -> float | None:
    """A distance for the JSON certificate: ``None`` for ``inf`` (a substitute no box covers)."""
    if d == float("inf"):
        return None
    return d if digits is None else round(d, digits)


def _search(loaded: LoadedModel, e, pred: int, domain: str, settings: VerifierSettings, t: float):  # type: ignore[no-untyped-def]
    """ε* of one verifier, asking first whether it verifies at the threshold ``t`` itself.

    That one call decides the certificate (a verified box of radius t holds every substitute) and
    bounds the search from one side, which saves the doubling calls.
    """
    start = time.perf_counter()
    floor, upper, extra = 0.0, None, 0
    if 0.0 < t < float("inf"):
        extra = 1
        if verifies(loaded.module, e, pred, t, domain, settings.cap, settings.relaxation):
            floor = t
        else:
            upper = t
    res = max_verified_eps(
        loaded.module,
        e,
        pred,
        domain,
        settings.cap,
        settings.eps0,
        settings.steps,
        floor=floor,
        upper=upper,
        relaxation=settings.relaxation,
    )
    res.calls += extra
    res.seconds = time.perf_counter() - start
    return res


def attack_fields(
    loaded: LoadedModel, ids: list[int], pred: int, eps_star: float, replacements: list, t: float
) -> dict[str, Any]:
    """The attack's upper bound beside the certificate (:mod:`.attack`): ``attack_radius`` (the
    smallest radius with a found flip, ``None`` if none), ``verifier_gap`` (attack radius / ε*),
    the real substitutions that flip the prediction, and ``certifiable`` — ``False`` when a flip was
    found inside the box of radius t, so no sound verifier could certify the sentence."""
    res = attack(loaded.module, ids, pred, eps_star, replacements, AttackSettings())
    upper = res.upper
    return {
        "attack_radius": upper,
        "attack_radius_box": res.radius,
        "attack_radius_substitution": res.substitution_radius,
        "verifier_gap": (upper / eps_star) if upper is not None and eps_star > 0 else None,
        "substitutions_tried": res.substitutions_tried,
        "substitution_flips": res.substitution_flips,
        "certifiable": None if upper is None else bool(upper > t),
        "seconds_attack": round(res.seconds, 3),
    }


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
    sub_sets = {w: [[s, _json_distance(d, 8)] for s, d in subs.of(w)] for w in words}
    uncovered = {w: [s for s, d in subs.of(w) if d == float("inf")] for w in words}
    uncovered = {w: v for w, v in uncovered.items() if v}
    per_word = {w: subs.threshold(w) for w in words}
    t = max(per_word.values(), default=0.0)
    main = _search(loaded, e, pred, settings.domain, settings, t)
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
        "threshold": _json_distance(t),
        "word_thresholds": {w: _json_distance(d) for w, d in per_word.items()},
        "certified": bool(main.eps_star >= t),
        "substitutes": sub_sets,
        "uncovered_substitutes": uncovered,
        "substitute_source": "user list" if subs.user is not None else f"{subs.k} nearest neighbours",
        "verifier": {**asdict(settings), "dtype": "float64", "calls": main.calls},
    }
    if settings.baseline:
        ibp = _search(loaded, e, pred, "ibp", settings, t)
        record["eps_star_ibp"] = ibp.eps_star
        record["certified_ibp"] = bool(ibp.eps_star >= t)
    if settings.attack:
        record.update(attack_fields(loaded, ids, pred, main.eps_star, subs.replacements(words), t))
    record["seconds"] = round(time.perf_counter() - start, 3)
    record["seconds_zonotope"] = round(main.seconds, 3)
    return record
