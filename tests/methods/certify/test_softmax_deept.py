"""Soundness of DeepT's softmax (:mod:`fairprobe.methods.certify.softmax`) and of each function it is
built from, on sampled inputs over many random ranges; each check is shown to fail on a
deliberately broken bound (the last tests)."""

from __future__ import annotations

import pytest
import torch

from fairprobe.methods.certify import softmax as deept
from fairprobe.methods.certify.relax import reciprocal_relax_positive
from fairprobe.methods.certify.zonotope import Zono, abs_sum

from .test_softmax import points, random_zono


def softmax_excess(z_in: Zono, out, count: int = 300, seed: int = 0) -> float:
    """Largest amount by which softmax(x) leaves the output zonotope (at x's own noise symbols) or
    the returned interval bounds, over sampled points x of ``z_in`` (<= 0: sound)."""
    z_out, (blo, bhi) = out
    worst = -float("inf")
    k_out = z_out.g.shape[0]
    for eps, x in points(z_in, count, seed):
        y = x.softmax(-1)
        centre = z_out.c + torch.einsum("k...,k->...", z_out.g, eps[:k_out])
        worst = max(worst, float(((y - centre).abs() - z_out.r).max()))
        worst = max(worst, float((blo - y).max()), float((y - bhi).max()))
    return worst


@pytest.mark.parametrize(("top", "slope"), [(None, "centre"), (3, "centre"), (3, "area")])
@pytest.mark.parametrize("scale", [1e-4, 1e-2, 0.3, 2.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_deept_softmax_encloses_every_sampled_point(top, slope, scale, seed):
    z = random_zono(seed, scale)
    out = deept.deept_softmax(z, top=top, slope=slope)
    assert out is not None
    assert softmax_excess(z, out, seed=seed) <= 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_deept_softmax_is_sound_with_tighter_interval_bounds_given(seed):
    """The reduced product hands in bounds tighter than the zonotope's: still sound."""
    z = random_zono(seed, 0.5, k=9, shape=(3, 5, 5))
    gen = torch.Generator().manual_seed(seed)
    pts = torch.stack([x for _, x in points(z, 400, seed)])
    lo, hi = pts.amin(0), pts.amax(0)  # the sampled hull: inside the true range
    lo = lo - torch.rand(lo.shape, generator=gen, dtype=torch.float64) * 1e-3
    out = deept.deept_softmax(z, (lo, hi + 1e-3), top=4)
    assert softmax_excess(z, out, count=400, seed=seed) <= 1e-12


def test_deept_softmax_is_tighter_than_the_older_relaxation():
    z = random_zono(5, 0.2, k=12, shape=(2, 8, 8), spread=1.0)
    new, _ = deept.deept_softmax(z)
    old = z.softmax("current")
    assert float(new.radius().mean()) < 0.5 * float(old.radius().mean())


def test_overflowing_differences_fall_back():
    z = random_zono(3, 400.0)
    assert deept.deept_softmax(z) is None
    out = z.softmax("deept")  # the older relaxation, then intervals: still sound
    lo, hi = out.bounds()
    for _, x in points(z, 100, 3):
        y = x.softmax(-1)
        assert bool((y >= lo - 1e-12).all() and (y <= hi + 1e-12).all())


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("top", [None, 1, 5])
def test_l1_distances_bound_the_exact_distances(seed, top):
    gen = torch.Generator().manual_seed(seed)
    k = int(torch.randint(1, 30, (1,), generator=gen))
    g = torch.randn((k, 4, 6), generator=gen, dtype=torch.float64) * 10.0 ** float(torch.randint(-6, 3, (1,)))
    exact = (g.unsqueeze(-1) - g.unsqueeze(-2)).abs().sum(0)  # [b, j, k]
    got = deept.l1_distances(g, abs_sum(g), top)
    assert bool((got >= exact * (1 - 1e-13)).all())
    if top is None or k <= top:
        assert torch.allclose(got, exact, rtol=1e-12, atol=0)
    triangle = g.abs().sum(0).unsqueeze(-1) + g.abs().sum(0).unsqueeze(-2)
    assert bool((got <= triangle * (1 + 1e-9)).all())


def difference_excess(z: Zono, dl: torch.Tensor, du: torch.Tensor, count: int = 300, seed: int = 0) -> float:
    """Largest amount by which a sampled point's score difference ``s_j - s_k`` leaves [dl, du]."""
    n = z.c.shape[-1]
    worst = -float("inf")
    for _, x in points(z, count, seed):
        s = x.reshape(-1, n)
        d = s.unsqueeze(-2) - s.unsqueeze(-1)
        worst = max(worst, float((dl - d).max()), float((d - du).max()))
    return worst


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("top", [None, 2])
def test_difference_bounds_hold_for_sampled_points(seed, top):
    z = random_zono(seed, 10.0 ** (seed - 4), k=6)
    n = z.c.shape[-1]
    lo, hi = z.bounds()
    rows = z.c.numel() // n
    g = z.g.reshape(z.g.shape[0], rows, n)
    dist = deept.l1_distances(g, abs_sum(z.g).reshape(rows, n), top)
    dl, du = deept.difference_bounds(
        z.c.reshape(rows, n), dist, z.r.reshape(rows, n), lo.reshape(rows, n), hi.reshape(rows, n)
    )
    assert difference_excess(z, dl, du, seed=seed) <= 1e-12
    assert bool((dl.diagonal(0, -2, -1) == 0).all() and (du.diagonal(0, -2, -1) == 0).all())


def random_ranges(seed: int, count: int = 400) -> tuple[torch.Tensor, torch.Tensor]:
    """Positive ranges [l, u] over many scales and widths, some of zero width."""
    gen = torch.Generator().manual_seed(seed)
    lo = 10.0 ** (torch.rand(count, generator=gen, dtype=torch.float64) * 8 - 3)
    width = lo * 10.0 ** (torch.rand(count, generator=gen, dtype=torch.float64) * 16 - 12)
    width[::17] = 0.0
    return lo, lo + width


def reciprocal_excess(relax, seed: int) -> float:  # type: ignore[no-untyped-def]
    """Largest relative amount by which 1/x leaves ``lam x + mu ± beta`` for x sampled in [l, u]."""
    lo, hi = random_ranges(seed)
    lam, mu, beta = relax(lo, hi)
    gen = torch.Generator().manual_seed(seed + 100)
    worst = -float("inf")
    for t in [torch.zeros_like(lo), torch.ones_like(lo)] + [
        torch.rand(lo.shape, generator=gen, dtype=torch.float64) for _ in range(40)
    ]:
        x = lo + t * (hi - lo)
        err = (1.0 / x - (lam * x + mu)).abs() - beta
        worst = max(worst, float((err * x).max()))  # relative to 1/x
    return worst


@pytest.mark.parametrize("seed", range(5))
def test_reciprocal_relax_positive_encloses_sampled_points(seed):
    assert reciprocal_excess(reciprocal_relax_positive, seed) <= 1e-12
    lo, hi = random_ranges(seed)
    lam, mu, beta = reciprocal_relax_positive(lo, hi)
    assert bool((lam * hi + mu - beta > 0).all())  # DeepT's point: the enclosure stays positive


def exp_excess(seed: int, shrink: float = 1.0) -> float:
    """Largest relative amount by which exp(x) leaves ``convex_relax``'s enclosure for an arbitrary
    slope (DeepT's softmax uses the slope at the centre, any slope must be sound), x in [l, u]."""
    gen = torch.Generator().manual_seed(seed)
    count = 500
    lo = torch.rand(count, generator=gen, dtype=torch.float64) * 60 - 40
    hi = lo + 10.0 ** (torch.rand(count, generator=gen, dtype=torch.float64) * 14 - 12)
    hi[::13] = lo[::13]
    lam = torch.rand(count, generator=gen, dtype=torch.float64) * 2 * hi.exp()
    lam[::7] = 0.0
    lam, mu, beta = deept.convex_relax(torch.exp, torch.exp, torch.log, lo, hi, lam)
    worst = -float("inf")
    for t in [torch.zeros_like(lo), torch.ones_like(lo)] + [
        torch.rand(lo.shape, generator=gen, dtype=torch.float64) for _ in range(40)
    ]:
        x = lo + t * (hi - lo)
        err = (x.exp() - (lam * x + mu)).abs() - beta * shrink
        worst = max(worst, float((err / x.exp()).max()))
    return worst


@pytest.mark.parametrize("seed", range(5))
def test_exp_enclosure_is_sound_for_any_slope(seed):
    assert exp_excess(seed) <= 1e-12


def test_check_catches_an_exp_error_term_too_small():
    assert max(exp_excess(s, shrink=0.5) for s in range(3)) > 0


def test_lift_is_exact():
    z = random_zono(7, 0.2)
    lifted = z.lift()
    assert bool((lifted.r == 0).all()) and lifted.g.shape[0] == z.g.shape[0] + int((z.r > 0).sum())
    lo, hi = z.bounds()
    llo, lhi = lifted.bounds()
    assert torch.allclose(lo, llo, rtol=0, atol=1e-13) and torch.allclose(hi, lhi, rtol=0, atol=1e-13)
    gen = torch.Generator().manual_seed(0)
    k = z.g.shape[0]
    for _ in range(20):  # every point of z, with its private part as the new symbols, is in lifted
        eps = torch.rand(k, generator=gen, dtype=torch.float64) * 2 - 1
        delta = (torch.rand(z.r.shape, generator=gen, dtype=torch.float64) * 2 - 1) * z.r
        x = z.c + torch.einsum("k...,k->...", z.g, eps)
        mask = (z.r > 0).reshape(-1)
        fresh = (delta.reshape(-1) / z.r.reshape(-1).clamp_min(1e-300))[mask]
        y = lifted.c + torch.einsum("k...,k->...", lifted.g, torch.cat([eps, fresh]))
        assert torch.allclose(x + delta, y, rtol=0, atol=1e-13)


# -- negative controls: the checks above catch a wrong bound -------------------------------------


def test_check_catches_a_reciprocal_error_term_too_small():
    def broken(lo, hi):
        lam, mu, beta = reciprocal_relax_positive(lo, hi)
        return lam, mu, beta * 0.5

    assert max(reciprocal_excess(broken, s) for s in range(3)) > 0


def test_check_catches_difference_bounds_too_narrow(monkeypatch):
    z = random_zono(1, 0.3)
    original = deept.difference_bounds

    def broken(c, dist, r, lo, hi):
        return original(c, dist * 0.5, r * 0.5, lo * 0 - 1e9, hi * 0 + 1e9)

    n = z.c.shape[-1]
    rows = z.c.numel() // n
    g = z.g.reshape(z.g.shape[0], rows, n)
    dist = deept.l1_distances(g, abs_sum(z.g).reshape(rows, n), None)
    dl, du = broken(
        z.c.reshape(rows, n), dist, z.r.reshape(rows, n), *[b.reshape(rows, n) for b in z.bounds()]
    )
    assert difference_excess(z, dl, du, seed=1) > 0
    monkeypatch.setattr(deept, "difference_bounds", broken)  # and the softmax built on it
    assert softmax_excess(z, deept.deept_softmax(z), seed=1) > 0


@pytest.mark.parametrize(("slope", "name"), [("centre", "convex_relax"), ("area", "exp_relax")])
def test_check_catches_a_softmax_exp_relaxation_shifted(monkeypatch, slope, name):
    original = getattr(deept, name)

    def broken(*args):
        lam, mu, beta = original(*args)
        return lam, mu * 1.3, beta

    z = random_zono(2, 0.3)
    assert softmax_excess(z, deept.deept_softmax(z, slope=slope), seed=2) <= 1e-12
    monkeypatch.setattr(deept, name, broken)
    assert softmax_excess(z, deept.deept_softmax(z, slope=slope), seed=2) > 0


def attention_factors(seed: int, scale: float, k: int = 7, h: int = 2, n: int = 5, dh: int = 3):
    """Random queries (h, n, dh), keys (h, dh, n) and values (h, n, dh) over ``k`` shared noise symbols."""
    return (
        random_zono(seed, scale, k, (h, n, dh), 1.0),
        random_zono(seed + 100, scale, k, (h, dh, n), 1.0),
        random_zono(seed + 200, scale, k, (h, n, dh), 1.0),
    )


@pytest.mark.parametrize("chunk", [1, 3, 64])
@pytest.mark.parametrize("top", [None, 2, 128])
@pytest.mark.parametrize("seed", range(3))
def test_fused_attention_is_the_unfused_composition(seed, top, chunk):
    """deept_attention (slices of generators, no scores matrix) computes the same zonotope and
    bounds as scores → DeepT's softmax → product, with interval bounds of the scores met."""
    q, k, v = attention_factors(seed, 0.05)
    s = q.matmul(k)
    lo, hi = s.bounds()
    box = (lo + 0.3 * (hi - lo) * (seed % 2), hi)  # tighter than the zonotope on odd seeds
    fused = deept.deept_attention(q, k, v, box, top=top, chunk=chunk)
    s_ref = q.matmul(k)
    zl, zu = s_ref.bounds()
    lo_ref = zl.maximum(box[0])
    hi_ref = zu.minimum(box[1]).maximum(lo_ref)
    p, step5 = deept.deept_softmax(s_ref, (lo_ref, hi_ref), top=top)
    ref = p.matmul(v)
    out, (slo, shi), (plo, phi), (dl, du) = fused
    for got, want in [(out.c, ref.c), (out.g, ref.g), (out.r, ref.r), (slo, lo_ref), (shi, hi_ref)]:
        assert torch.allclose(got, want, rtol=1e-11, atol=1e-14)
    for got, want in [(plo, p.bounds()[0]), (phi, p.bounds()[1]), (dl, step5[0]), (du, step5[1])]:
        assert torch.allclose(got, want, rtol=1e-11, atol=1e-14)


def attention_excess(q: Zono, k: Zono, v: Zono, out: Zono, count: int = 200, seed: int = 0) -> float:
    """Largest amount by which softmax(q k) v leaves ``out`` at the points' own noise symbols."""
    gen = torch.Generator().manual_seed(seed)
    worst = -float("inf")
    n_sym = q.g.shape[0]
    for i in range(count):
        vertex = i % 2
        draw = (
            (lambda shape: torch.randint(0, 2, shape, generator=gen).double() * 2 - 1)
            if vertex
            else (lambda shape: torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1)
        )
        eps = draw((n_sym,))
        x = [z.c + torch.einsum("k...,k->...", z.g, eps) + draw(z.r.shape) * z.r for z in (q, k, v)]
        y = (x[0] @ x[1]).softmax(-1) @ x[2]
        centre = out.c + torch.einsum("k...,k->...", out.g, eps[: out.g.shape[0]])
        worst = max(worst, float(((y - centre).abs() - out.r).max()))
    return worst


@pytest.mark.parametrize("scale", [1e-3, 0.05, 0.3])
@pytest.mark.parametrize("seed", range(3))
def test_fused_attention_encloses_every_sampled_point(seed, scale):
    q, k, v = attention_factors(seed, scale, k=9)
    lo, hi = q.matmul(k).bounds()
    out = deept.deept_attention(q, k, v, (lo - 1.0, hi + 1.0), top=3, chunk=2)[0]
    assert attention_excess(q, k, v, out, seed=seed) <= 1e-12


def test_attention_check_catches_a_shifted_exp_enclosure(monkeypatch):
    """Negative control: the sampled-point check fails when the fused path's exp bound is wrong."""
    q, k, v = attention_factors(4, 0.05, k=9)
    lo, hi = q.matmul(k).bounds()
    original = deept.convex_relax

    def unsound(*args):
        lam, mu, beta = original(*args)
        return lam, mu + 0.5, beta

    monkeypatch.setattr(deept, "convex_relax", unsound)
    out = deept.deept_attention(q, k, v, (lo, hi), top=3, chunk=2)[0]
    assert attention_excess(q, k, v, out, seed=4) > 0


def test_fused_attention_falls_back_when_it_cannot_fuse():
    q, k, v = attention_factors(1, 0.05)
    fewer = Zono(v.c, v.g[:4], v.r)  # values over other noise symbols
    lo, hi = q.matmul(k).bounds()
    assert deept.deept_attention(q, k, fewer, (lo, hi)) is None
    q, k, v = attention_factors(1, 400.0)  # exp would overflow: the unfused path's fallback
    lo, hi = q.matmul(k).bounds()
    assert deept.deept_attention(q, k, v, (lo, hi)) is None
