"""The verifier: one walk through the classifier, interpreted in a chosen abstract domain (§3.3, App. A).

``walk(model, x, cap)`` runs the layers of :mod:`.model` on an abstract value ``x`` — a
:class:`~.interval.Point` (concrete forward pass), a :class:`~.interval.Box` (IBP baseline) or a
:class:`ZonoBox` (the zonotope verifier) — and records the bounds of every layer's output.

Choices (issue 6 asks for them to be written down):

- Input set: an ℓ∞ box of radius ε around *every* token embedding of the (unpadded) sentence,
  as a zonotope with one generator per coordinate (Eq. 6); position embeddings are added exactly.
- Softmax: ``exp(s - m) * 1 / sum_j exp(s_j - m)`` with ``m`` the row maximum of the centre (a
  constant shift, exact), exp and reciprocal relaxed (:mod:`.relax`), the product bilinear. The
  denominator's lower bound is floored at ``sum_j exp(l_j)``, a sound fact. The interval (IBP)
  softmax is the tight per-element bound ``1 / (1 + sum_{j≠i} exp(u_j - l_i))`` ..., computed in log
  space; when exp would overflow the zonotope falls back to those interval bounds.
- LayerNorm: ``(x - mean) * rsqrt(mean((x - mean)^2) + eps) * gamma + beta``; the centring is an
  exact affine map, the square and ``1/sqrt`` are relaxed, the variance floored at 0.
- :class:`ZonoBox` is the reduced product of zonotopes and intervals: every relaxation uses the
  intersection of both bounds, and the interval part is tightened by the zonotope after each
  non-linearity. Interval arithmetic is inclusion-monotone, so its bounds are never looser than
  plain IBP on the same input, and the margin check takes the better of the two lower bounds.
- Margin check (Eq. 8): the prediction ``t`` is verified when ``lower(y_t - y_j) > 0`` for all j ≠ t.
- ε* is found by doubling from ``eps0`` until verification fails, then bisection (``steps`` rounds),
  as in §3.3 ("we employ binary search to find the largest ε").
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fairprobe.methods.certify.interval import Box, Point
from fairprobe.methods.certify.zonotope import Zono

if TYPE_CHECKING:
    import torch


class ZonoBox:
    """Reduced product of a zonotope and an interval box over the same tensor."""

    def __init__(self, z: Zono, b: Box):
        self.z = z
        self.b = b

    def _lift(name: str):  # type: ignore[no-untyped-def] # noqa: N805
        def op(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            args2 = [(a.z if isinstance(a, ZonoBox) else a) for a in args]
            args3 = [(a.b if isinstance(a, ZonoBox) else a) for a in args]
            return ZonoBox(getattr(self.z, name)(*args2, **kwargs), getattr(self.b, name)(*args3, **kwargs))

        return op

    affine = _lift("affine")
    scale = _lift("scale")
    shift = _lift("shift")
    add = _lift("add")
    reshape = _lift("reshape")
    permute = _lift("permute")
    sum = _lift("sum")
    mul = _lift("mul")
    matmul = _lift("matmul")

    def bounds(self) -> tuple[torch.Tensor, torch.Tensor]:
        zl, zu = self.z.bounds()
        zl, zu = zl.nan_to_num(nan=float("-inf")), zu.nan_to_num(nan=float("inf"))
        bl, bu = self.b.bounds()
        return zl.maximum(bl), zu.minimum(bu).maximum(zl.maximum(bl))

    def _nonlinear(self, name: str, *args: Any) -> ZonoBox:
        bounds = self.bounds()
        z = getattr(self.z, name)(*args, bounds=bounds)
        b = getattr(Box.from_bounds(*bounds), name)(*args)
        zl, zu = z.bounds()
        zl, zu = zl.nan_to_num(nan=float("-inf")), zu.nan_to_num(nan=float("inf"))
        bl, bu = b.bounds()
        lo, hi = bl.maximum(zl), bu.minimum(zu)
        return ZonoBox(z, Box.from_bounds(lo, hi.maximum(lo)))

    def relu(self) -> ZonoBox:
        return self._nonlinear("relu")

    def exp(self) -> ZonoBox:
        return self._nonlinear("exp")

    def reciprocal(self, floor: Any) -> ZonoBox:
        return self._nonlinear("reciprocal", floor)

    def rsqrt(self, floor: float) -> ZonoBox:
        return self._nonlinear("rsqrt", floor)

    def square(self) -> ZonoBox:
        return self._nonlinear("square")

    def softmax(self) -> ZonoBox:
        return self._nonlinear("softmax")

    def clamp(self, lo: float, hi: float) -> ZonoBox:
        return ZonoBox(self.z, self.b.clamp(lo, hi))

    def center(self) -> torch.Tensor:
        return self.z.c

    def block_end(self, cap: int, fixed: int = 0) -> ZonoBox:
        return ZonoBox(self.z.block_end(cap, fixed), self.b)

    def margin_lower(self, target: int) -> torch.Tensor:
        return self.z.margin_lower(target).nan_to_num(nan=float("-inf")).maximum(self.b.margin_lower(target))


def _layer_norm(x: Any, ln: Any) -> Any:
    import torch

    d = ln.weight.shape[0]
    centre = torch.eye(d, dtype=ln.weight.dtype) - 1.0 / d
    xc = x.affine(centre)
    var = xc.square().sum(-1, keepdim=True).scale(torch.tensor(1.0 / d, dtype=ln.weight.dtype))
    inv = var.shift(torch.tensor(ln.eps, dtype=ln.weight.dtype)).rsqrt(float(ln.eps))
    return xc.mul(inv).scale(ln.weight).shift(ln.bias)


def walk(model: Any, x: Any, cap: int = 1024, record: list[tuple[str, Any]] | None = None) -> Any:
    """Interpret ``model`` (float64, eval) on abstract token embeddings ``x`` of shape (n, dim)."""
    cfg = model.cfg
    n = x.center().shape[0]
    fixed = n * cfg.dim  # the input box's own noise symbols (Eq. 6), never reduced
    h, dh = cfg.heads, cfg.dim // cfg.heads

    def rec(name: str, value: Any) -> Any:
        if record is not None:
            record.append((name, value.bounds()))
        return value

    x = rec("embed", x.shift(model.pos.weight[:n]))
    for i, blk in enumerate(model.blocks):
        s = dh**-0.5
        q = x.affine(blk.q.weight * s, blk.q.bias * s).reshape(n, h, dh).permute(1, 0, 2)
        k = x.affine(blk.k.weight, blk.k.bias).reshape(n, h, dh).permute(1, 2, 0)
        v = x.affine(blk.v.weight, blk.v.bias).reshape(n, h, dh).permute(1, 0, 2)
        scores = rec(f"block{i}.scores", q.matmul(k))
        probs = rec(f"block{i}.softmax", scores.softmax())
        att = probs.matmul(v).permute(1, 0, 2).reshape(n, cfg.dim)
        att = rec(f"block{i}.attention", att.affine(blk.o.weight, blk.o.bias))
        x = rec(f"block{i}.ln1", _layer_norm(x.add(att), blk.ln1))
        f = rec(f"block{i}.relu", x.affine(blk.ff1.weight, blk.ff1.bias).relu())
        f = f.affine(blk.ff2.weight, blk.ff2.bias)
        x = rec(f"block{i}.ln2", _layer_norm(x.add(f), blk.ln2))
        x = x.block_end(cap, fixed)
    import torch

    pooled = x.sum(0).scale(torch.tensor(1.0 / n, dtype=x.center().dtype))
    return rec("logits", pooled.affine(model.head.weight, model.head.bias))


DOMAINS = ("point", "ibp", "zonotope", "zonotope-only")


def abstract_input(e: torch.Tensor, eps: float, domain: str) -> Any:
    """The ε-box around token embeddings ``e`` (n, dim) in ``domain``: ``point`` (concrete),
    ``ibp`` (intervals), ``zonotope`` (the reduced product :class:`ZonoBox`, the default verifier) or
    ``zonotope-only`` (plain DeepT-style zonotopes, no interval tightening)."""
    import torch

    if domain == "point":
        return Point(e)
    if domain == "zonotope-only":
        return Zono.box_around(e, eps)
    box = Box(e.clone(), torch.full_like(e, eps))
    if domain == "ibp":
        return box
    return ZonoBox(Zono.box_around(e, eps), box)


def verifies(model: Any, e: torch.Tensor, target: int, eps: float, domain: str, cap: int = 1024) -> bool:
    """True when every point of the ε-box keeps ``target`` as the arg-max logit (Eq. 8)."""
    import torch

    with torch.no_grad():
        out = walk(model, abstract_input(e, eps, domain), cap)
        margin = out.margin_lower(target)
    others = [j for j in range(margin.shape[0]) if j != target]
    return bool((margin[others] > 0).all())


@dataclass
class SearchResult:
    eps_star: float
    calls: int
    seconds: float


def max_verified_eps(
    model: Any,
    e: torch.Tensor,
    target: int,
    domain: str,
    cap: int = 1024,
    eps0: float = 1e-3,
    steps: int = 14,
    floor: float = 0.0,
    eps_max: float = 10.0,
) -> SearchResult:
    """Largest ε (to ``steps`` bisection rounds) that ``domain`` verifies; ``floor`` is known verified."""
    start = time.perf_counter()
    calls = 0

    def ok(eps: float) -> bool:
        nonlocal calls
        calls += 1
        return verifies(model, e, target, eps, domain, cap)

    lo = floor
    hi = max(eps0, 2 * floor)
    while hi <= eps_max and ok(hi):
        lo, hi = hi, hi * 2
    if hi > eps_max:
        return SearchResult(lo, calls, time.perf_counter() - start)
    if lo == 0.0:
        # shrink geometrically so a tiny ε* is still resolved relative to its size
        while hi > 1e-9 and not ok(hi / 8):
            hi /= 8
        lo = hi / 8 if hi > 1e-9 else 0.0
    for _ in range(steps):
        mid = (lo + hi) / 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return SearchResult(lo, calls, time.perf_counter() - start)
