"""An empirical upper bound beside every certificate: the smallest radius at which an attack flips
the decision.

The verifier proves a lower bound: every point of the ℓ∞ box of radius ε* around the sentence's
token embeddings keeps the prediction. An attack that finds a point of the box of radius r with
another prediction proves an upper bound: the sentence's true robust radius is at most r. So each
certificate reads ``proven ε* ≤ true robust radius ≤ attack radius``, and ``attack radius / ε*``
(the *verifier's gap*) says how much of a failed certificate is the verifier's looseness rather
than the model. The paper (§3.3, App. A) reports only the verified ε*; this is a diagnostic beside it,
not part of the certificate or of F.

Two attacks, both inside the same box the verifier is asked about (every token embedding may move
by up to r in every coordinate; position embeddings stay fixed, as in :func:`.network.walk`):

- **Box attack** at a radius r: projected gradient descent on the margin
  ``logit[pred] − max_{j≠pred} logit[j]`` (Madry et al., 2018: ℓ∞ steps of r/4, ``pgd_steps``
  steps from a random start, ``restarts`` starts), plus ``samples`` random points of the box
  (half of them corners). The radius is found by doubling from the verified ε* until a flip,
  then bisection (``rounds``); the smallest radius with a found flip is reported. A flip is kept
  only when the verifier's own concrete walk (:func:`.network.walk` on a point) confirms it.
- **Real word substitutions**: each substitute of each sensitive word of the sentence (the same
  S(w) as the threshold t), written in place of every occurrence of the word. A substitution that
  changes the prediction is a genuine fairness violation; its ℓ∞ distance is a flip radius too.

Gradient attacks are incomplete: "no flip found" (``attack_radius: None``) proves nothing.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fairprobe.methods.certify.interval import Point
from fairprobe.methods.certify.network import walk

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class AttackSettings:
    pgd_steps: int = 20
    restarts: int = 2
    samples: int = 32
    rounds: int = 6
    """Bisection rounds between the largest radius without a found flip and the smallest with one."""
    max_radius: float = 10.0
    seed: int = 0


@dataclass
class AttackResult:
    radius: float | None
    """Smallest radius at which the box attack found a confirmed flip (``None``: none found)."""
    substitution_radius: float | None
    """Smallest ℓ∞ distance of a real substitution that flips the prediction (``None``: none does)."""
    substitutions_tried: int
    substitution_flips: list[list[Any]] = field(default_factory=list)
    """``[word, substitute, distance]`` of each flipping substitution (at most 10)."""
    calls: int = 0
    seconds: float = 0.0

    @property
    def upper(self) -> float | None:
        """The attack radius: the smaller of the two (an upper bound on the true robust radius)."""
        found = [r for r in (self.radius, self.substitution_radius) if r is not None]
        return min(found) if found else None


def _margin(logits: torch.Tensor, pred: int) -> torch.Tensor:
    """``logit[pred] − max_{j≠pred} logit[j]`` per row (negative: the prediction flipped)."""
    others = logits.clone()
    others[..., pred] = float("-inf")
    return logits[..., pred] - others.max(-1).values


def _batch_logits(module: Any, x: torch.Tensor) -> torch.Tensor:
    """Logits of a batch of unpadded embedded sentences ``x`` (b, n, dim)."""
    import torch

    keep = torch.ones(x.shape[:2], dtype=torch.bool)
    return module.forward_embedded(x, keep)


def confirmed_flip(module: Any, x: torch.Tensor, pred: int) -> bool:
    """The verifier's own concrete walk agrees that point ``x`` (n, dim) changes the prediction."""
    import torch

    with torch.no_grad():
        return bool(_margin(walk(module, Point(x)).v, pred) < 0)


def flips_at(module: Any, e: torch.Tensor, pred: int, r: float, s: AttackSettings, gen: Any) -> bool:
    """Whether sampling or PGD finds a confirmed flip inside the ℓ∞ box of radius ``r`` around ``e``."""
    import torch

    n, d = e.shape
    with torch.no_grad():
        half = s.samples // 2
        corners = torch.randint(0, 2, (half, n, d), generator=gen, dtype=e.dtype) * 2 - 1
        uniform = torch.rand((s.samples - half, n, d), generator=gen, dtype=e.dtype) * 2 - 1
        pts = e + r * torch.cat([corners, uniform])
        margins = _margin(_batch_logits(module, pts), pred)
        for i in torch.nonzero(margins < 0).flatten().tolist():
            if confirmed_flip(module, pts[i], pred):
                return True
    step = r / 4
    delta = (torch.rand((s.restarts, n, d), generator=gen, dtype=e.dtype) * 2 - 1) * r
    for _ in range(s.pgd_steps):
        delta.requires_grad_(True)
        margins = _margin(_batch_logits(module, e + delta), pred)
        (grad,) = torch.autograd.grad(margins.sum(), delta)
        with torch.no_grad():
            for i in torch.nonzero(margins.detach() < 0).flatten().tolist():
                if confirmed_flip(module, e + delta[i], pred):
                    return True
            delta = (delta - step * grad.sign()).clamp(-r, r)
    with torch.no_grad():
        margins = _margin(_batch_logits(module, e + delta), pred)
        return any(confirmed_flip(module, e + delta[i], pred) for i in torch.nonzero(margins < 0).flatten())


def box_attack_radius(
    module: Any, e: torch.Tensor, pred: int, start: float, s: AttackSettings
) -> tuple[float | None, int]:
    """Smallest radius (doubling from ``start``, then bisection) at which :func:`flips_at` succeeds;
    ``(None, calls)`` when nothing flips up to ``s.max_radius``."""
    import torch

    gen = torch.Generator().manual_seed(s.seed)
    calls = 0
    lo, r = 0.0, max(start, 1e-8)
    while True:
        calls += 1
        if flips_at(module, e, pred, r, s, gen):
            hi = r
            break
        lo = r
        if r >= s.max_radius:
            return None, calls
        r = min(r * 2, s.max_radius)
    for _ in range(s.rounds):
        mid = math.sqrt(lo * hi) if lo > 0 else hi / 2
        calls += 1
        if flips_at(module, e, pred, mid, s, gen):
            hi = mid
        else:
            lo = mid
    return hi, calls


def substitution_attack(
    module: Any, ids: list[int], pred: int, replacements: list[tuple[str, str, float, list[int], list[int]]]
) -> tuple[float | None, int, list[list[Any]]]:
    """Try each real substitution ``(word, substitute, distance, word ids, substitute ids)``:
    the substitute's tokens replace every occurrence of the word's tokens. Returns the smallest
    distance of a flipping substitution, how many were tried, and the flips."""
    import torch

    sentences, meta = [], []
    for word, sub, dist, own, new in replacements:
        if len(own) != len(new) or not math.isfinite(dist):
            continue
        out, m, hit = list(ids), len(own), False
        for i in range(len(ids) - m + 1):
            if ids[i : i + m] == own:
                out[i : i + m] = new
                hit = True
        if hit and out != ids:
            sentences.append(out)
            meta.append((word, sub, dist))
    if not sentences:
        return None, 0, []
    table = module.tok.weight
    with torch.no_grad():
        margins = _margin(_batch_logits(module, table[torch.tensor(sentences)]), pred)
    flips = [[w, s, round(d, 8)] for (w, s, d), m in zip(meta, margins.tolist(), strict=True) if m < 0]
    radius = min((f[2] for f in flips), default=None)
    return radius, len(sentences), sorted(flips, key=lambda f: f[2])[:10]


def attack(
    module: Any,
    ids: list[int],
    pred: int,
    eps_star: float,
    replacements: list[tuple[str, str, float, list[int], list[int]]],
    settings: AttackSettings,
) -> AttackResult:
    """Both attacks on one sentence (token ids ``ids``, predicted class ``pred``)."""
    import torch

    start = time.perf_counter()
    e = module.tok.weight[torch.tensor(ids)].detach()
    radius, calls = box_attack_radius(module, e, pred, eps_star, settings)
    sub_radius, tried, flips = substitution_attack(module, ids, pred, replacements)
    return AttackResult(radius, sub_radius, tried, flips, calls, time.perf_counter() - start)
