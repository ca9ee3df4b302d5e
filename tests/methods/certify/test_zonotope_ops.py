"""The in-place bilinear products (issue 20's speed-up) give exactly the textbook formulas: both
generator matrices padded with zero rows to the same length, then ``Gx·c_y + c_x·Gy``."""

from __future__ import annotations

import pytest
import torch

from fairprobe.methods.certify.zonotope import Zono


def pad(g, k):
    return torch.cat([g, g.new_zeros((k - g.shape[0], *g.shape[1:]))])


def z(gen, k, *shape):
    rnd = lambda *s: torch.randn(s, generator=gen, dtype=torch.float64)  # noqa: E731
    return Zono(rnd(*shape), rnd(k, *shape), torch.rand(shape, generator=gen, dtype=torch.float64))


CASES = [
    ("matmul", (2, 6, 4), (2, 4, 6)),  # Q K^T
    ("matmul", (2, 6, 6), (2, 6, 3)),  # A V
    ("mul", (2, 6, 6), (2, 6, 1)),  # softmax: exp * 1/sum
    ("mul", (2, 6, 1), (2, 6, 6)),
    ("mul", (6, 8), (6, 1)),  # LayerNorm: centred * 1/std
]


@pytest.mark.parametrize(("op", "sx", "sy"), CASES)
@pytest.mark.parametrize(("kx", "ky"), [(7, 7), (9, 4), (3, 8), (0, 5), (5, 0)])
def test_products_equal_the_padded_formula(op, sx, sy, kx, ky):
    gen = torch.Generator().manual_seed(kx * 10 + ky)
    a, b = z(gen, kx, *sx), z(gen, ky, *sy)
    k = max(kx, ky)
    gx, gy = pad(a.g, k), pad(b.g, k)
    if op == "matmul":
        out, c, g = a.matmul(b), a.c @ b.c, gx @ b.c + a.c @ gy
    else:
        out, c, g = a.mul(b), a.c * b.c, gx * b.c + a.c * gy
    assert out.g.shape == g.shape
    assert torch.allclose(out.c, c, rtol=1e-13, atol=1e-13)
    assert torch.allclose(out.g, g, rtol=1e-12, atol=1e-12)
    assert torch.equal(a.g, a.g.clone()) and out.g.data_ptr() not in (a.g.data_ptr(), b.g.data_ptr())
