"""Soundness of the zonotope softmax (issue 20: it is not DeepT's; :meth:`Zono.softmax` says how it
differs). Points of the input zonotope — chosen by their noise symbols, so the correlation the
output keeps with the input is checked too — must land inside the output zonotope."""

from __future__ import annotations

import pytest
import torch

from fairprobe.methods.certify.zonotope import Zono


def random_zono(seed: int, scale: float, k: int = 7, shape=(2, 6, 6), spread: float = 2.0) -> Zono:
    gen = torch.Generator().manual_seed(seed)
    c = torch.randn(shape, generator=gen, dtype=torch.float64) * spread
    g = torch.randn((k, *shape), generator=gen, dtype=torch.float64) * scale
    r = torch.rand(shape, generator=gen, dtype=torch.float64) * scale / 2
    return Zono(c, g, r)


def points(z: Zono, count: int, seed: int):
    """(noise symbols, point) pairs: random interior points and random vertices."""
    gen = torch.Generator().manual_seed(seed)
    k = z.g.shape[0]
    for i in range(count):
        if i % 2:
            eps = torch.randint(0, 2, (k,), generator=gen).double() * 2 - 1
            delta = (torch.randint(0, 2, z.r.shape, generator=gen).double() * 2 - 1) * z.r
        else:
            eps = torch.rand(k, generator=gen, dtype=torch.float64) * 2 - 1
            delta = (torch.rand(z.r.shape, generator=gen, dtype=torch.float64) * 2 - 1) * z.r
        yield eps, z.c + torch.einsum("k...,k->...", z.g, eps) + delta


def worst_excess(z_in: Zono, z_out: Zono, count: int = 400, seed: int = 0, shrink: float = 1.0) -> float:
    """Largest distance by which softmax(x) leaves the output zonotope at x's own noise symbols."""
    worst = -float("inf")
    k_out = z_out.g.shape[0]
    for eps, x in points(z_in, count, seed):
        y = x.softmax(-1)
        centre = z_out.c + (torch.einsum("k...,k->...", z_out.g, eps[:k_out]) if k_out else 0)
        worst = max(worst, float(((y - centre).abs() - z_out.r * shrink).max()))
        lo, hi = z_out.bounds()
        worst = max(worst, float((lo - y).max()), float((y - hi).max()))
    return worst


@pytest.mark.parametrize("scale", [1e-4, 1e-2, 0.3, 2.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_softmax_encloses_every_sampled_point_with_its_noise_symbols(scale, seed):
    z = random_zono(seed, scale)
    assert worst_excess(z, z.softmax(), seed=seed) <= 1e-12


def test_softmax_fallback_for_scores_far_apart_is_sound():
    z = random_zono(3, 100.0)  # scores hundreds apart: exp would overflow, the interval fallback runs
    out = z.softmax()
    assert out.g.shape[0] == 0
    assert worst_excess(z, out, seed=3) <= 1e-12


def test_the_check_fails_on_a_box_too_small():
    z = random_zono(4, 0.3)
    assert worst_excess(z, z.softmax(), seed=4, shrink=0.5) > 0
