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


def exp_relax(l: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``exp`` on ``[l, u]``; DeepT's slope choice keeps the lower bound positive."""
    import torch

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


def rsqrt_relax(l: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``1/sqrt(x)`` on ``[l, u]`` with ``l > 0`` (LayerNorm's inverse standard deviation)."""
    import torch

    return convex_relax(
        torch.rsqrt, lambda x: -0.5 * x.pow(-1.5), lambda lam: (-2.0 * lam).pow(-2.0 / 3.0), l, u
    )


def square_relax(l: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``x**2`` on ``[l, u]`` (LayerNorm's variance)."""
    return convex_relax(lambda x: x * x, lambda x: 2 * x, lambda lam: lam / 2, l, u)
