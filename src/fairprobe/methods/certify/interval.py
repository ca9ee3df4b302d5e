"""Two abstract domains with the same operations as :class:`~.zonotope.Zono`: a concrete point and an
interval box (IBP, the baseline verifier of issue 6).

The network walk in :mod:`.network` is written once against this small operation set (affine maps
on the last axis, constant scale/shift, sums, reshapes, ReLU, exp, reciprocal, 1/sqrt, square, and
the two bilinear products of attention), so the concrete forward pass, the interval verifier and the
zonotope verifier interpret *the same* network. Boxes are stored as centre and radius.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


class Point:
    """A concrete tensor: the exact forward pass through the verifier's layer semantics."""

    def __init__(self, v: torch.Tensor):
        self.v = v

    def affine(self, w: torch.Tensor, b: torch.Tensor | None = None) -> Point:
        out = self.v @ w.T
        return Point(out + b if b is not None else out)

    def scale(self, g: torch.Tensor) -> Point:
        return Point(self.v * g)

    def shift(self, b: torch.Tensor) -> Point:
        return Point(self.v + b)

    def add(self, other: Point) -> Point:
        return Point(self.v + other.v)

    def reshape(self, *shape: int) -> Point:
        return Point(self.v.reshape(*shape))

    def permute(self, *dims: int) -> Point:
        return Point(self.v.permute(*dims))

    def sum(self, dim: int, keepdim: bool = False) -> Point:
        return Point(self.v.sum(dim, keepdim=keepdim))

    def relu(self) -> Point:
        return Point(self.v.clamp_min(0))

    def gelu(self) -> Point:
        from fairprobe.methods.certify.relax import gelu

        return Point(gelu(self.v))

    def exp(self) -> Point:
        return Point(self.v.exp())

    def reciprocal(self, floor: torch.Tensor | float) -> Point:
        return Point(1.0 / self.v)

    def rsqrt(self, floor: float) -> Point:
        return Point(self.v.rsqrt())

    def square(self) -> Point:
        return Point(self.v * self.v)

    def mul(self, other: Point) -> Point:
        return Point(self.v * other.v)

    def matmul(self, other: Point) -> Point:
        return Point(self.v @ other.v)

    def clamp(self, lo: float, hi: float) -> Point:
        return self

    def softmax(self, method: str = "deept") -> Point:
        return Point(self.v.softmax(-1))

    def center(self) -> torch.Tensor:
        return self.v

    def bounds(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.v, self.v

    def block_end(self, cap: int, fixed: int = 0) -> Point:
        return self

    def lift(self) -> Point:
        """Nothing to do: no noise symbols (see :meth:`.zonotope.Zono.lift`)."""
        return self

    def margin_lower(self, target: int) -> torch.Tensor:
        return self.v[target] - self.v


class Box:
    """An interval box ``[c - r, c + r]`` (interval bound propagation)."""

    def __init__(self, c: torch.Tensor, r: torch.Tensor):
        self.c = c
        self.r = r

    @classmethod
    def from_bounds(cls, lo: torch.Tensor, hi: torch.Tensor) -> Box:
        return cls((lo + hi) / 2, (hi - lo) / 2)

    def affine(self, w: torch.Tensor, b: torch.Tensor | None = None) -> Box:
        c = self.c @ w.T
        return Box(c + b if b is not None else c, self.r @ w.abs().T)

    def scale(self, g: torch.Tensor) -> Box:
        return Box(self.c * g, self.r * g.abs())

    def shift(self, b: torch.Tensor) -> Box:
        return Box(self.c + b, self.r)

    def add(self, other: Box) -> Box:
        return Box(self.c + other.c, self.r + other.r)

    def reshape(self, *shape: int) -> Box:
        return Box(self.c.reshape(*shape), self.r.reshape(*shape))

    def permute(self, *dims: int) -> Box:
        return Box(self.c.permute(*dims), self.r.permute(*dims))

    def sum(self, dim: int, keepdim: bool = False) -> Box:
        return Box(self.c.sum(dim, keepdim=keepdim), self.r.sum(dim, keepdim=keepdim))

    def _monotone(self, f, increasing: bool = True) -> Box:  # type: ignore[no-untyped-def]
        lo, hi = self.bounds()
        a, b = f(lo), f(hi)
        return Box.from_bounds(a, b) if increasing else Box.from_bounds(b, a)

    def relu(self) -> Box:
        return self._monotone(lambda x: x.clamp_min(0))

    def gelu(self) -> Box:
        """Exact interval GELU: decreasing below its minimum point, increasing above."""
        import torch

        from fairprobe.methods.certify.relax import GELU_MIN_X, gelu

        lo, hi = self.bounds()
        glo, ghi = gelu(lo), gelu(hi)
        floor = gelu(torch.tensor(GELU_MIN_X, dtype=lo.dtype))
        low = torch.where(hi <= GELU_MIN_X, ghi, torch.where(lo >= GELU_MIN_X, glo, floor))
        high = torch.maximum(glo, ghi)
        pad = 1e-12 * (1 + high.abs() + low.abs())  # erf's rounding
        return Box.from_bounds(low - pad, high + pad)

    def exp(self) -> Box:
        return self._monotone(lambda x: x.exp())

    def reciprocal(self, floor: torch.Tensor | float) -> Box:
        lo, hi = self.bounds()
        lo = lo.clamp_min(floor) if isinstance(floor, float) else lo.maximum(floor)
        hi = hi.maximum(lo)
        return Box.from_bounds(1.0 / hi, 1.0 / lo)

    def rsqrt(self, floor: float) -> Box:
        lo, hi = self.bounds()
        lo = lo.clamp_min(floor)
        hi = hi.maximum(lo)
        return Box.from_bounds(hi.rsqrt(), lo.rsqrt())

    def square(self) -> Box:
        lo, hi = self.bounds()
        top = (lo * lo).maximum(hi * hi)
        bottom = (lo * lo).minimum(hi * hi)
        bottom = bottom * ((lo > 0) | (hi < 0))
        return Box.from_bounds(bottom, top)

    def mul(self, other: Box) -> Box:
        return Box(self.c * other.c, self.c.abs() * other.r + self.r * other.c.abs() + self.r * other.r)

    def matmul(self, other: Box) -> Box:
        """Centre-radius interval matrix product (Rump): sound for every pair of members."""
        return Box(self.c @ other.c, self.c.abs() @ other.r + self.r @ other.c.abs() + self.r @ other.r)

    def clamp(self, lo: float, hi: float) -> Box:
        """Intersect with a range the true values are known to lie in (e.g. softmax in [0, 1])."""
        a, b = self.bounds()
        a, b = a.clamp(lo, hi), b.clamp(lo, hi)
        return Box.from_bounds(a, b)

    def softmax(self, method: str = "deept") -> Box:
        """Tight interval softmax over the last axis, in log space (no overflow; ``method``, the
        zonotope's relaxation, does not apply to intervals):
        ``p_i in [1 / (1 + sum_{j!=i} exp(u_j - l_i)), 1 / (1 + sum_{j!=i} exp(l_j - u_i))]``."""
        import torch

        lo, hi = self.bounds()
        n = lo.shape[-1]
        eye = torch.eye(n, dtype=torch.bool)
        others_hi = hi.unsqueeze(-2).expand(*hi.shape[:-1], n, n).masked_fill(eye, float("-inf"))
        others_lo = lo.unsqueeze(-2).expand(*lo.shape[:-1], n, n).masked_fill(eye, float("-inf"))
        zero = torch.zeros_like(lo)
        p_lo = torch.exp(-torch.logaddexp(zero, torch.logsumexp(others_hi, -1) - lo))
        p_hi = torch.exp(-torch.logaddexp(zero, torch.logsumexp(others_lo, -1) - hi))
        return Box.from_bounds(p_lo, p_hi.maximum(p_lo))

    def center(self) -> torch.Tensor:
        return self.c

    def bounds(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.c - self.r, self.c + self.r

    def block_end(self, cap: int, fixed: int = 0) -> Box:
        return self

    def lift(self) -> Box:
        """Nothing to do: no noise symbols (see :meth:`.zonotope.Zono.lift`)."""
        return self

    def margin_lower(self, target: int) -> torch.Tensor:
        lo, hi = self.bounds()
        return lo[target] - hi
