"""Zonotopes over tensors (paper Appendix A, Eqs. 5–7; DeepT, Bonaert et al. 2021).

A value is ``c + sum_k G[k] * eps_k + delta`` with shared noise symbols ``eps_k in [-1, 1]`` (rows of
``G``, shared by every tensor of one verification) and a per-element private box ``|delta| <= r``.

Choices (written down as issue 6 asks):

- New error terms of relaxations and of the bilinear products go into the private box ``r`` (one
  fresh symbol per element). Treating them as private is sound: every operation below is sound for
  *any* ``delta`` inside the box, so losing their cross-element correlation only over-approximates.
  It is also loose: an affine map bounds a private box by ``|W| r``. DeepT's relaxation (the
  verifier's default, :data:`.network.RELAXATIONS`) therefore turns the box into fresh noise
  symbols (:meth:`Zono.lift`) before every affine map that mixes elements.
- At the end of each transformer block (:meth:`block_end`) the box is turned into explicit
  generators (one per non-zero element) and the generator matrix is reduced to ``cap`` rows:
  the rows with the largest ``||g||_1 - ||g||_inf`` (Girard's criterion) are kept, the rest are
  summed in absolute value into the private box. This is DeepT's "noise symbol reduction" with a cap.
- Affine maps are exact (Eq. 7). The products ``Q K^T`` and ``A V`` and the element-wise products of
  softmax and LayerNorm use the DeepT "fast" bilinear bound: linear terms exact, the quadratic
  remainder bounded by the product of the two radii (new private box).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairprobe.methods.certify.relax import (
    abs_sum,
    exp_relax,
    gelu_relax,
    reciprocal_relax,
    relu_relax,
    rsqrt_relax,
    square_relax,
)

if TYPE_CHECKING:
    import torch


def _bilinear_generators(
    gx: torch.Tensor, gy: torch.Tensor, x_term, y_term, x_acc, y_acc, shape
) -> torch.Tensor:  # type: ignore[no-untyped-def]
    """``pad(x_term(gx)) + pad(y_term(gy))`` over the shared noise symbols, of shape (k, *shape):
    the longer term is computed, and the shorter one accumulated in place into its leading rows
    (``x_acc(out, gx)`` / ``y_acc(out, gy)``) — the same values as padding both with zero rows and
    adding, without the copies and temporaries (issue 20)."""
    if gx.shape[0] >= gy.shape[0]:
        g, rest, acc = x_term(gx), gy, y_acc
    else:
        g, rest, acc = y_term(gy), gx, x_acc
    if tuple(g.shape[1:]) != tuple(shape):  # broadcast against the other factor
        g = g.expand(g.shape[0], *shape)
    g = g.contiguous()  # a fresh tensor (every term is computed anew); expanded ones are copied
    if rest.shape[0]:
        acc(g[: rest.shape[0]], rest)
    return g


def _matmul_acc(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """``out += a @ b`` in place, ``out`` of shape (k, ..., n, m) and contiguous; ``a`` or ``b``
    broadcast over the generator axis. When the broadcast factor is smaller than ``out`` per
    generator (``Q K^T``: a (h, n, 4) matrix against (k, h, 4, n)) one fused ``baddbmm`` does it;
    otherwise the product is formed by einsum and added."""
    import torch

    n, m = out.shape[-2:]
    d = a.shape[-1]
    lead = out.shape[:-2]
    if d <= m:
        a2 = a.expand(*lead, n, d).reshape(-1, n, d)
        b2 = b.expand(*lead, d, m).reshape(-1, d, m)
        out.view(-1, n, m).baddbmm_(a2, b2)
    elif a.dim() < out.dim():
        out += torch.einsum("...nd,k...dm->k...nm", a, b)
    else:
        out += a @ b


def _pad(g: torch.Tensor, k: int) -> torch.Tensor:
    import torch

    if g.shape[0] == k:
        return g
    return torch.cat([g, g.new_zeros((k - g.shape[0], *g.shape[1:]))])


class Zono:
    """``c`` has shape S, ``G`` shape (k, *S), ``r`` shape S (private box radii)."""

    def __init__(self, c: torch.Tensor, g: torch.Tensor, r: torch.Tensor):
        self.c = c
        self.g = g
        self.r = r
        self._gabs: torch.Tensor | None = None

    @classmethod
    def box_around(cls, x: torch.Tensor, eps: float) -> Zono:
        """Eq. 6: the ℓ∞ ball of radius ``eps`` around every element of ``x``, one generator each."""
        import torch

        n = x.numel()
        g = (torch.eye(n, dtype=x.dtype) * eps).reshape(n, *x.shape)
        return cls(x.clone(), g, torch.zeros_like(x))

    # -- exact operations ----------------------------------------------------------------------
    def affine(self, w: torch.Tensor, b: torch.Tensor | None = None) -> Zono:
        c = self.c @ w.T
        return Zono(c + b if b is not None else c, self.g @ w.T, self.r @ w.abs().T)

    def scale(self, g: torch.Tensor) -> Zono:
        return Zono(self.c * g, self.g * g, self.r * g.abs())

    def shift(self, b: torch.Tensor) -> Zono:
        return Zono(self.c + b, self.g, self.r)

    def add(self, other: Zono) -> Zono:
        k = max(self.g.shape[0], other.g.shape[0])
        return Zono(self.c + other.c, _pad(self.g, k) + _pad(other.g, k), self.r + other.r)

    def reshape(self, *shape: int) -> Zono:
        return Zono(self.c.reshape(*shape), self.g.reshape(self.g.shape[0], *shape), self.r.reshape(*shape))

    def permute(self, *dims: int) -> Zono:
        return Zono(self.c.permute(*dims), self.g.permute(0, *(d + 1 for d in dims)), self.r.permute(*dims))

    def sum(self, dim: int, keepdim: bool = False) -> Zono:
        gd = dim + 1 if dim >= 0 else dim
        return Zono(
            self.c.sum(dim, keepdim=keepdim),
            self.g.sum(gd, keepdim=keepdim),
            self.r.sum(dim, keepdim=keepdim),
        )

    # -- relaxations -----------------------------------------------------------------------------
    def radius(self) -> torch.Tensor:
        if self._gabs is None:
            self._gabs = abs_sum(self.g)
        return self._gabs + self.r

    def bounds(self) -> tuple[torch.Tensor, torch.Tensor]:
        rad = self.radius()
        return self.c - rad, self.c + rad

    def center(self) -> torch.Tensor:
        return self.c

    def _apply(self, relaxation: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> Zono:
        lam, mu, beta = relaxation
        return Zono(lam * self.c + mu, self.g * lam, self.r * lam.abs() + beta)

    def relu(self, bounds: tuple[torch.Tensor, torch.Tensor] | None = None) -> Zono:
        return self._apply(relu_relax(*(bounds or self.bounds())))

    def gelu(self, bounds: tuple[torch.Tensor, torch.Tensor] | None = None) -> Zono:
        return self._apply(gelu_relax(*(bounds or self.bounds())))

    def exp(self, bounds: tuple[torch.Tensor, torch.Tensor] | None = None) -> Zono:
        return self._apply(exp_relax(*(bounds or self.bounds())))

    def reciprocal(
        self, floor: torch.Tensor | float, bounds: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> Zono:
        lo, hi = bounds or self.bounds()
        lo = lo.clamp_min(floor) if isinstance(floor, float) else lo.maximum(floor)
        return self._apply(reciprocal_relax(lo, hi.maximum(lo)))

    def rsqrt(self, floor: float, bounds: tuple[torch.Tensor, torch.Tensor] | None = None) -> Zono:
        lo, hi = bounds or self.bounds()
        lo = lo.clamp_min(floor)
        return self._apply(rsqrt_relax(lo, hi.maximum(lo)))

    def square(self, bounds: tuple[torch.Tensor, torch.Tensor] | None = None) -> Zono:
        return self._apply(square_relax(*(bounds or self.bounds())))

    def clamp(self, lo: float, hi: float) -> Zono:
        return self

    def softmax(self, method: str = "deept", bounds: tuple[torch.Tensor, torch.Tensor] | None = None) -> Zono:
        """Softmax over the last axis. ``method="deept"`` (the default): DeepT's relaxation
        ``1 / sum_j exp(s_j - s_k)``, :func:`.softmax.deept_softmax`; it falls back to the older
        one below when exp would overflow. ``method="current"``: the older, looser relaxation:

        Softmax over the last axis as ``exp(s - m) * (1 / sum_j exp(s_j - m))``.

        ``m`` is the row maximum of the *centre* (a constant, so the shift is exact); ``exp`` and
        ``1/x`` use the parallelogram relaxations of :mod:`.relax` (exp with DeepT's slope bound,
        which keeps its lower bound positive; the denominator floored at ``sum_j exp(l_j - m)``);
        the product uses the "fast" bilinear bound of :meth:`mul`.

        **How this differs from DeepT** (Bonaert et al., PLDI 2021, the softmax transformer):

        1. DeepT evaluates ``softmax_i = 1 / sum_j exp(s_j - s_i)``: the differences are exact
           affine maps, so it needs exp, a sum and one reciprocal, and *no product* of two
           zonotopes. Here the numerator and the reciprocal of the denominator are multiplied,
           which adds the product of their radii as a new error term: looser, most of all when
           the scores are wide. The reason is size: DeepT's form holds an (n × n) table of
           differences per row, ``h·n³`` values per noise symbol — on a 64-token sentence with
           4,608 symbols about 19 GB in float64, against 0.3 GB here.
        2. DeepT's precise variant also imposes ``sum_i softmax_i = 1`` on the output zonotope;
           this one does not. Instead the verifier's reduced product (:class:`.network.ZonoBox`)
           intersects every element with the tight interval softmax (:meth:`.interval.Box.softmax`).
        3. New error terms go into the per-element private box (turned into generators at the end
           of the block, :meth:`block_end`) instead of one fresh noise symbol each.
        4. When ``exp`` would overflow (scores hundreds apart) the result falls back to the interval
           bounds as a zonotope without generators.

        Each step is sound for every input point, so the whole is; tests/methods/certify/
        test_softmax.py checks it on sampled points *with their noise symbols* (the output must
        contain ``softmax(x)`` at the same symbols), and test_soundness.py layer by layer on a
        trained model.
        """
        import torch

        from fairprobe.methods.certify.interval import Box

        if method == "deept":
            from fairprobe.methods.certify.softmax import deept_softmax

            res = deept_softmax(self, bounds)
            if res is not None:
                return res[0]
        elif method != "current":
            raise ValueError(f"unknown softmax relaxation {method!r}")
        lo, hi = bounds or self.bounds()
        m = self.c.amax(-1, keepdim=True)
        if float((hi - m).max()) < 300:
            shifted = self.shift(-m)
            e = shifted.exp(bounds=(lo - m, hi - m))
            floor = (lo - m).exp().sum(-1, keepdim=True)
            out = e.mul(e.sum(-1, keepdim=True).reciprocal(floor))
            if bool(torch.isfinite(out.c).all() and torch.isfinite(out.r).all()):
                return out
        box = Box.from_bounds(lo, hi).softmax()
        return Zono(box.c, self.g.new_zeros((0, *box.c.shape)), box.r)

    # -- bilinear products -------------------------------------------------------------------------
    def mul(self, other: Zono) -> Zono:
        """Element-wise product (broadcasting): exact linear part, radius product for the rest."""
        c = self.c * other.c
        g = _bilinear_generators(
            self.g,
            other.g,
            lambda gx: gx * other.c,
            lambda gy: self.c * gy,
            lambda out, gx: out.addcmul_(gx, other.c),
            lambda out, gy: out.addcmul_(gy, self.c),
            c.shape,
        )
        r = self.c.abs() * other.r + self.r * other.c.abs() + self.radius() * other.radius()
        return Zono(c, g, r.expand_as(c).clone() if r.shape != c.shape else r)

    def matmul(self, other: Zono) -> Zono:
        """Batched matrix product ``self @ other`` of two zonotopes (``Q K^T`` and ``A V``)."""
        import torch

        c = self.c @ other.c
        # c @ G as one contraction: torch's broadcast matmul of a (h, n, m) matrix against a
        # (k, h, m, d) stack copies the matrix k times and was 12x slower than einsum
        g = _bilinear_generators(
            self.g,
            other.g,
            lambda gx: gx @ other.c,
            lambda gy: torch.einsum("...nm,k...md->k...nd", self.c, gy),
            lambda out, gx: _matmul_acc(out, gx, other.c),
            lambda out, gy: _matmul_acc(out, self.c, gy),
            c.shape,
        )
        r = self.c.abs() @ other.r + self.r @ other.c.abs() + self.radius() @ other.radius()
        return Zono(c, g, r)

    # -- generator management --------------------------------------------------------------------
    def lift(self) -> Zono:
        """The private box as fresh noise symbols (one per non-zero element; DeepT's own choice for
        every new error term): exact, and it keeps the correlation of each error term across the
        elements an affine map mixes it into. No reduction (that happens at :meth:`block_end`)."""
        import torch

        flat_r = self.r.reshape(-1)
        idx = torch.nonzero(flat_r > 0).flatten()
        if not idx.numel():
            return self
        fresh = self.g.new_zeros((idx.numel(), flat_r.numel()))
        fresh[torch.arange(idx.numel()), idx] = flat_r[idx]
        g = torch.cat([self.g.reshape(self.g.shape[0], -1), fresh])
        return Zono(self.c, g.reshape(g.shape[0], *self.c.shape), torch.zeros_like(self.r))

    def block_end(self, cap: int, fixed: int = 0) -> Zono:
        """Turn the private box into generators, then reduce to at most ``cap`` generators.

        The first ``fixed`` rows (the input's own noise symbols) are always kept, in place; of the
        others the rows with the largest ``||g||_1 - ||g||_inf`` (Girard) are kept, in their order,
        and the rest are summed in absolute value into the private box (a sound over-approximation).
        """
        import torch

        lifted = self.lift()
        g = lifted.g.reshape(lifted.g.shape[0], -1)
        r = torch.zeros_like(self.r.reshape(-1))
        fixed = min(fixed, g.shape[0])
        room = max(cap - fixed, 0)
        if g.shape[0] > fixed + room:
            rest = g[fixed:]
            score = rest.abs().sum(1) - rest.abs().amax(1)
            order = torch.argsort(score, descending=True)
            keep, drop = torch.sort(order[:room]).values, order[room:]
            r = rest[drop].abs().sum(0)
            g = torch.cat([g[:fixed], rest[keep]])
        return Zono(self.c, g.reshape(g.shape[0], *self.c.shape), r.reshape(self.c.shape))

    def margin_lower(self, target: int) -> torch.Tensor:
        """Lower bound of ``y[target] - y[j]`` for every j, keeping the shared-noise correlation."""
        diff_g = self.g[:, target : target + 1] - self.g
        return self.c[target] - self.c - diff_g.abs().sum(0) - self.r[target] - self.r
