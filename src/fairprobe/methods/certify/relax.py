"""Sound linear relaxations of the element-wise non-linearities (paper Appendix A, Figure 4; DeepT §4).

Every relaxation returns per-element ``(lam, mu, beta)`` such that for every *true* input value
``x`` in ``[l, u]``::

    lam * x + mu - beta  <=  f(x)  <=  lam * x + mu + beta

so a zonotope ``x`` maps to ``lam * x + mu + beta * eta`` with a fresh noise term ``eta``.

- ReLU: the DeepZ parallelogram (slope ``u / (u - l)`` on crossing neurons, exact elsewhere).
- Convex functions (``exp``, ``1/x``, ``1/sqrt(x)``, ``x**2``): for any slope ``lam`` the error
  ``g(x) = f(x) - lam x`` is convex, so its maximum is at an end point and its minimum where
  ``f'(x) = lam`` (clipped into ``[l, u]``). The default slope is the chord (the minimum-area
  parallelogram). For ``exp`` the slope is lowered as in DeepT (tangent point ``t <= l + 1 - 0.01``)
  so the lower bound stays positive, which keeps the softmax denominator away from zero.

All arithmetic is float64; ``beta`` is padded by a relative ``1e-12`` against rounding.
"""

# ruff: noqa: E741  (l, u: the usual names of an interval's ends)
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

PAD = 1e-12


def abs_sum(g: torch.Tensor, chunk: int = 256) -> torch.Tensor:
    """``g.abs().sum(0)`` in chunks of generators: no temporary as large as ``g`` (issue 20: on a
    64-token sentence the attention scores' generator matrix is ~300 MB, and allocating a fresh
    one per operation cost more than the arithmetic)."""
    import torch

    if g.shape[0] <= chunk:
        return g.abs().sum(0)
    out = torch.zeros(g.shape[1:], dtype=g.dtype)
    for part in g.split(chunk):
        out += part.abs().sum(0)
    return out


def relu_relax(l: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """DeepZ ReLU relaxation on ``[l, u]``."""
    import torch

    cross = (l < 0) & (u > 0)
    width = torch.where(cross, u - l, torch.ones_like(l))
    lam_c = u / width
    mu_c = -lam_c * l / 2
    lam = torch.where(u <= 0, torch.zeros_like(l), torch.where(l >= 0, torch.ones_like(l), lam_c))
    mu = torch.where(cross, mu_c, torch.zeros_like(l))
    beta = torch.where(cross, mu_c * (1 + PAD), torch.zeros_like(l))
    return lam, mu, beta


def convex_relax(
    f: Callable[[torch.Tensor], torch.Tensor],
    fprime: Callable[[torch.Tensor], torch.Tensor],
    tangent_point: Callable[[torch.Tensor], torch.Tensor],
    l: torch.Tensor,
    u: torch.Tensor,
    lam: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Parallelogram enclosure of a convex ``f`` on ``[l, u]`` with slope ``lam`` (chord if None).

    ``tangent_point(lam)`` solves ``f'(x) = lam``.
    """
    import torch

    width = u - l
    narrow = width < 1e-9
    if lam is None:
        safe = torch.where(narrow, torch.ones_like(width), width)
        lam = torch.where(narrow, fprime((l + u) / 2), (f(u) - f(l)) / safe)
    gl = f(l) - lam * l
    gu = f(u) - lam * u
    xs = torch.minimum(torch.maximum(tangent_point(lam), l), u)
    xs = torch.where(torch.isfinite(xs), xs, l)
    gs = f(xs) - lam * xs
    gmax = torch.maximum(gl, gu)
    gmin = torch.minimum(torch.minimum(gl, gu), gs)
    mu = (gmax + gmin) / 2
    scale = mu.abs() + (lam * l).abs() + (lam * u).abs() + 1.0
    beta = (gmax - gmin) / 2 + PAD * scale
    return lam, mu, beta


def exp_relax(
    l: torch.Tensor, u: torch.Tensor, positive: bool = True
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``exp`` on ``[l, u]``; DeepT's slope choice keeps the lower bound positive (``positive=False``:
    the chord's slope, the minimal-area enclosure, as the backward bound uses it)."""
    import torch

    if not positive:
        return convex_relax(torch.exp, torch.exp, torch.log, l, u)
    width = u - l
    narrow = width < 1e-9
    safe = torch.where(narrow, torch.ones_like(width), width)
    chord = torch.where(narrow, torch.exp((l + u) / 2), (torch.exp(u) - torch.exp(l)) / safe)
    t = torch.minimum(torch.log(chord), l + 1 - 0.01)
    lam = torch.exp(t)
    return convex_relax(torch.exp, torch.exp, torch.log, l, u, lam)


def reciprocal_relax(l: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``1/x`` on ``[l, u]`` with ``l > 0``."""
    import torch

    return convex_relax(lambda x: 1.0 / x, lambda x: -1.0 / (x * x), lambda lam: 1.0 / torch.sqrt(-lam), l, u)


def reciprocal_relax_positive(
    l: torch.Tensor, u: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``1/x`` on ``[l, u]`` with ``l > 0``, DeepT's slope choice (Bonaert et al. 2021, §5.3; eth-sri/DeepT
    ``Zonotope.reciprocal`` with ``y_positive_constraint``): the tangent point is
    ``t = max(sqrt(l u), u/2 + 0.01 u)`` — the chord's tangent point ``sqrt(l u)`` (minimal area)
    unless that would let the lower line ``2/t - x/t**2`` reach 0 before ``u``, so the enclosure stays
    positive (a softmax output). DeepT adds an absolute 0.01; a relative one keeps it scale-free."""
    import torch

    t = torch.maximum(torch.sqrt(l * u), u * 0.51)
    lam = -1.0 / (t * t)
    return convex_relax(
        lambda x: 1.0 / x, lambda x: -1.0 / (x * x), lambda s: 1.0 / torch.sqrt(-s), l, u, lam
    )


def rsqrt_relax(l: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``1/sqrt(x)`` on ``[l, u]`` with ``l > 0`` (LayerNorm's inverse standard deviation)."""
    import torch

    return convex_relax(
        torch.rsqrt, lambda x: -0.5 * x.pow(-1.5), lambda lam: (-2.0 * lam).pow(-2.0 / 3.0), l, u
    )


def square_relax(l: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``x**2`` on ``[l, u]`` (LayerNorm's variance)."""
    return convex_relax(lambda x: x * x, lambda x: 2 * x, lambda lam: lam / 2, l, u)


SQRT2 = 2**0.5
GELU_MIN_X = -0.7517915246935884
"""Where GELU(x) = x Φ(x) takes its minimum (GELU'(x) = 0)."""
GELU_SLOPE_MAX = 1.1289
"""An upper bound on |GELU'(x)| = |Φ(x) + x φ(x)| (its maximum, at x = √2, is 1.12880...)."""


def gelu(x: torch.Tensor) -> torch.Tensor:
    """The exact (erf) GELU, ``torch.nn.functional.gelu``'s default."""
    import torch

    return 0.5 * x * (1.0 + torch.erf(x / SQRT2))


def gelu_prime(x: torch.Tensor) -> torch.Tensor:
    import math

    import torch

    return 0.5 * (1.0 + torch.erf(x / SQRT2)) + x * torch.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def gelu_relax(l: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """GELU on ``[l, u]``: chord slope ``lam``; the error ``g(x) = GELU(x) − lam·x`` takes its extrema
    at ``l``, ``u`` or where ``GELU'(x) = lam``. GELU' is monotone on each of (−∞, −√2], [−√2, √2] and
    [√2, ∞), so each piece has at most one such point, found by bisection (60 rounds); the bisection's
    last bracket ``w`` adds ``w·(|lam| + max|GELU'|)`` to the error, which keeps the bound sound.
    GELU is neither convex nor concave, so :func:`convex_relax` does not apply (used by user models
    with GELU feed-forward layers; not in the paper, whose models use ReLU)."""
    import torch

    width = u - l
    narrow = width < 1e-9
    safe = torch.where(narrow, torch.ones_like(width), width)
    lam = torch.where(narrow, gelu_prime((l + u) / 2), (gelu(u) - gelu(l)) / safe)
    g = [gelu(l) - lam * l, gelu(u) - lam * u]
    slack = torch.zeros_like(l)
    inf = torch.full_like(l, float("inf"))
    for lo_piece, hi_piece in ((-inf, -SQRT2 + 0 * l), (-SQRT2 + 0 * l, SQRT2 + 0 * l), (SQRT2 + 0 * l, inf)):
        a = torch.minimum(torch.maximum(l, lo_piece), u)  # the piece's part of [l, u]
        b = torch.minimum(u, hi_piece)
        b = torch.maximum(a, b)  # an empty piece collapses onto a point of [l, u]
        ha = gelu_prime(a) - lam
        for _ in range(60):
            mid = (a + b) / 2
            hm = gelu_prime(mid) - lam
            same = (hm > 0) == (ha > 0)
            a, ha = torch.where(same, mid, a), torch.where(same, hm, ha)
            b = torch.where(same, b, mid)
        x = (a + b) / 2
        g.append(gelu(x) - lam * x)
        slack = torch.maximum(slack, (b - a) * (lam.abs() + GELU_SLOPE_MAX))
    stacked = torch.stack(g)
    gmax, gmin = stacked.max(0).values + slack, stacked.min(0).values - slack
    mu = (gmax + gmin) / 2
    scale = mu.abs() + (lam * l).abs() + (lam * u).abs() + 1.0
    beta = (gmax - gmin) / 2 + PAD * scale
    return lam, mu, beta
