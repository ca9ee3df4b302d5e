"""The verifier: one walk through the classifier, interpreted in a chosen abstract domain (§3.3, App. A).

``walk(model, x, cap)`` runs the layers of :mod:`.model` on an abstract value ``x`` — a
:class:`~.interval.Point` (concrete forward pass), a :class:`~.interval.Box` (IBP baseline) or a
:class:`ZonoBox` (the zonotope verifier) — and records the bounds of every layer's output.

Choices (issue 6 asks for them to be written down):

- Input set: an ℓ∞ box of radius ε around *every* token embedding of the (unpadded) sentence,
  as a zonotope with one generator per coordinate (Eq. 6); position embeddings are added exactly.
- Relaxation (:data:`RELAXATIONS`, the certify block's ``relaxation``): by default DeepT's —
  softmax as ``1 / sum_j exp(s_j - s_k)`` (:mod:`.softmax`) and a fresh noise symbol for every
  new error term that an affine map would mix; ``fast`` is the older one (softmax as
  ``exp(s - m) * 1 / sum_j exp(s_j - m)``, a product, :meth:`.zonotope.Zono.softmax`; new error
  terms kept per element until the block's end). With ``deept`` on a long sentence the attention
  ``softmax(q k) v`` is computed slice by slice of noise symbols (:meth:`ZonoBox.attention`), the
  same bounds without forming the scores' generator matrix. The interval (IBP) softmax is the tight
  per-element bound ``1 / (1 + sum_{j≠i} exp(u_j - l_i))`` ..., computed in log space; when exp
  would overflow the zonotope falls back to those interval bounds.
- LayerNorm: ``(x - mean) * rsqrt(mean((x - mean)^2) + eps) * gamma + beta``; the centring is an
  exact affine map, the square and ``1/sqrt`` are relaxed, the variance floored at 0.
- :class:`ZonoBox` is the reduced product of zonotopes and intervals: every relaxation uses the
  intersection of both bounds, and the interval part is tightened by the zonotope after each
  non-linearity. Interval arithmetic is inclusion-monotone, so its bounds are never looser than
  plain IBP on the same input, and the margin check takes the better of the two lower bounds.
- Margin check (Eq. 8): the prediction ``t`` is verified when ``lower(y_t - y_j) > 0`` for all j ≠ t.
- ε* is found by doubling from ``eps0`` until verification fails, or, when ``eps0`` already fails,
  by bisection in log space down to the float64 floor; then bisection (``steps`` rounds), as in
  §3.3 ("we employ binary search to find the largest ε"); see :func:`search_eps`.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
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

    def gelu(self) -> ZonoBox:
        return self._nonlinear("gelu")

    def exp(self) -> ZonoBox:
        return self._nonlinear("exp")

    def reciprocal(self, floor: Any) -> ZonoBox:
        return self._nonlinear("reciprocal", floor)

    def rsqrt(self, floor: float) -> ZonoBox:
        return self._nonlinear("rsqrt", floor)

    def square(self) -> ZonoBox:
        return self._nonlinear("square")

    def softmax(self, method: str = "deept", diffs: Any = None) -> ZonoBox:
        """The zonotope softmax by ``method`` (``deept`` or ``current``, :meth:`.zonotope.Zono.softmax`), met with the tight interval
        softmax; DeepT's relaxation also returns its own interval bound (from the correlated bounds
        of the score differences, :func:`.softmax.deept_softmax`), which is met as well. ``diffs``:
        those differences' bounds when the caller has computed them (:func:`.softmax.zono_difference_bounds`
        of this value's zonotope and bounds)."""
        if method == "deept":
            from fairprobe.methods.certify.softmax import deept_softmax

            bounds = self.bounds()
            res = deept_softmax(self.z, bounds, diffs=diffs)
            if res is not None:
                z, (dl, du) = res
                zl, zu = z.bounds()
                zl, zu = zl.nan_to_num(nan=float("-inf")), zu.nan_to_num(nan=float("inf"))
                bl, bu = Box.from_bounds(*bounds).softmax().bounds()
                lo, hi = bl.maximum(zl).maximum(dl), bu.minimum(zu).minimum(du)
                return ZonoBox(z, Box.from_bounds(lo, hi.maximum(lo)))
        return self._nonlinear("softmax", "current")

    def attention(self, k: ZonoBox, v: ZonoBox) -> tuple[ZonoBox, Any, Any]:
        """``softmax(self k) v`` with DeepT's softmax (``self`` the queries): the same values as
        ``self.matmul(k).softmax("deept").matmul(v)``, with the zonotope part fused when the
        scores are large (:data:`.softmax.FUSE_MIN`; :func:`.softmax.deept_attention`: the
        scores' and probabilities' generator matrices are never formed whole). Returns the
        product and the bounds of the scores and of the probabilities (for the walk's record)."""
        from fairprobe.methods.certify import softmax

        h, n, _ = self.z.c.shape
        res = None
        if self.z.g.shape[0] * h * n * n >= softmax.FUSE_MIN:
            res = softmax.deept_attention(self.z, k.z, v.z, self.b.matmul(k.b).bounds())
        if res is None:  # small, unshared noise symbols or exp overflow: the unfused path
            scores = self.matmul(k)
            probs = scores.softmax("deept")
            return probs.matmul(v), scores.bounds(), probs.bounds()
        out, (lo, hi), (zl, zu), (dl, du) = res
        zl, zu = zl.nan_to_num(nan=float("-inf")), zu.nan_to_num(nan=float("inf"))
        bl, bu = Box.from_bounds(lo, hi).softmax().bounds()
        plo, phi = bl.maximum(zl).maximum(dl), bu.minimum(zu).minimum(du)
        probs_b = Box.from_bounds(plo, phi.maximum(plo))
        return ZonoBox(out, probs_b.matmul(v.b)), (lo, hi), (plo.maximum(zl), phi.minimum(zu).maximum(plo))

    def clamp(self, lo: float, hi: float) -> ZonoBox:
        return ZonoBox(self.z, self.b.clamp(lo, hi))

    def meet(self, lo: torch.Tensor, hi: torch.Tensor) -> ZonoBox:
        """The same value with its interval part met with other sound bounds ``[lo, hi]``."""
        bl, bu = self.b.bounds()
        new_lo = bl.maximum(lo)
        return ZonoBox(self.z, Box.from_bounds(new_lo, bu.minimum(hi).maximum(new_lo)))

    def center(self) -> torch.Tensor:
        return self.z.c

    def block_end(self, cap: int, fixed: int = 0) -> ZonoBox:
        return ZonoBox(self.z.block_end(cap, fixed), self.b)

    def lift(self) -> ZonoBox:
        return ZonoBox(self.z.lift(), self.b)

    def margin_lower(self, target: int) -> torch.Tensor:
        return self.z.margin_lower(target).nan_to_num(nan=float("-inf")).maximum(self.b.margin_lower(target))


def _layer_norm(x: Any, ln: Any, fresh: Callable[[Any], Any] = lambda v: v) -> Any:
    """LayerNorm as ``(x - mean) * rsqrt(var + eps) * gamma + beta``; ``fresh`` turns the new error
    terms of ``1/sqrt`` and of the product into noise symbols (:data:`RELAXATIONS`)."""
    import torch

    d = ln.weight.shape[0]
    centre = torch.eye(d, dtype=ln.weight.dtype) - 1.0 / d
    xc = x.affine(centre)
    var = xc.square().sum(-1, keepdim=True).scale(torch.tensor(1.0 / d, dtype=ln.weight.dtype))
    inv = fresh(var.shift(torch.tensor(ln.eps, dtype=ln.weight.dtype)).rsqrt(float(ln.eps)))
    return fresh(xc.mul(inv)).scale(ln.weight).shift(ln.bias)


RELAXATIONS: dict[str, tuple[str, bool]] = {
    "deept": ("deept", True),
    "backward": ("deept", True),
    "fast": ("current", False),
    "deept-softmax-only": ("deept", False),
    "fresh-symbols-only": ("current", True),
}
"""Zonotope relaxations: ``name -> (softmax method of Zono.softmax, fresh noise symbols)``.

- ``deept`` (the default; DeepT, Bonaert et al. 2021): DeepT's softmax (:mod:`.softmax`) and a
  *fresh noise symbol* for every new error term of the relaxations that feed an affine map which
  mixes elements (ReLU, the attention product ``A V``, LayerNorm's ``1/sqrt`` and product, the
  residual sums): :meth:`.zonotope.Zono.lift`. A per-element private box fed through ``W`` is
  bounded by ``|W| r`` and through LayerNorm's centring by ``(2 - 2/d) r``: it loses the error's
  sign pattern across the outputs, which a shared symbol keeps. Measured on the trained models, this
  is most of the gain (bench/verifier_gap.py).
- ``backward``: ``deept``'s forward walk, and a CROWN-style backward bound of the margin on top
  of it (:mod:`.backward`; Shi et al. 2020): the margin as a linear function of the input,
  relaxed layer by layer from the logits back, with the forward walk's bounds of every layer's
  input; the verifier takes the better of the two lower bounds.
- ``fast``: the older relaxation (softmax as a product, :meth:`.zonotope.Zono.softmax` with
  ``"current"``; new error terms stay per element until the block's end).
- ``deept-softmax-only`` / ``fresh-symbols-only``: one of the two changes alone (ablations).
"""


def walk(
    model: Any,
    x: Any,
    cap: int = 1024,
    record: list[tuple[str, Any]] | None = None,
    relaxation: str = "deept",
) -> Any:
    """Interpret ``model`` (float64, eval) on abstract token embeddings ``x`` of shape (n, dim);
    ``relaxation`` picks the zonotope relaxation (:data:`RELAXATIONS`)."""
    if relaxation not in RELAXATIONS:
        raise ValueError(
            f"unknown zonotope relaxation {relaxation!r}; choose one of {', '.join(RELAXATIONS)}"
        )
    softmax, fresh_symbols = RELAXATIONS[relaxation]

    def fresh(v: Any) -> Any:
        return v.lift() if fresh_symbols else v

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
        if softmax == "deept" and isinstance(q, ZonoBox):  # fused: no (k, h, n, n) generator matrix
            pv, scores_bounds, probs_bounds = q.attention(k, v)
            if record is not None:
                record += [(f"block{i}.scores", scores_bounds), (f"block{i}.softmax", probs_bounds)]
        else:
            scores = rec(f"block{i}.scores", q.matmul(k))
            pv = rec(f"block{i}.softmax", scores.softmax(softmax)).matmul(v)
        att = fresh(pv).permute(1, 0, 2).reshape(n, cfg.dim)
        att = rec(f"block{i}.attention", att.affine(blk.o.weight, blk.o.bias))
        x = rec(f"block{i}.ln1", _layer_norm(fresh(x.add(att)), blk.ln1, fresh))
        hidden = x.affine(blk.ff1.weight, blk.ff1.bias)
        act = getattr(cfg, "activation", "relu")
        f = rec(f"block{i}.{act}", fresh(hidden.gelu() if act == "gelu" else hidden.relu()))
        f = f.affine(blk.ff2.weight, blk.ff2.bias)
        x = rec(f"block{i}.ln2", _layer_norm(fresh(x.add(f)), blk.ln2, fresh))
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


def verifies(
    model: Any,
    e: torch.Tensor,
    target: int,
    eps: float,
    domain: str,
    cap: int = 1024,
    relaxation: str = "deept",
) -> bool:
    """True when every point of the ε-box keeps ``target`` as the arg-max logit (Eq. 8)."""
    import torch

    if domain in ("zonotope", "zonotope-only"):
        reuse_freed_memory()

    with torch.no_grad():
        x = abstract_input(e, eps, domain)
        if relaxation == "backward" and domain == "zonotope":
            from fairprobe.methods.certify.backward import TIGHTEN, trace

            x = trace(x, e, eps, frozenset(TIGHTEN))
        out = walk(model, x, cap, relaxation=relaxation)
        margin = out.margin_lower(target)
    others = [j for j in range(margin.shape[0]) if j != target]
    return bool((margin[others] > 0).all())


@dataclass
class SearchResult:
    eps_star: float
    calls: int
    seconds: float


_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4  # glibc <malloc.h> mallopt parameters
_malloc_tuned = False


def reuse_freed_memory(enable: bool = True) -> bool:
    """glibc only: serve large blocks from the heap and keep freed memory for reuse (issue 20).

    A zonotope walk allocates and frees tensors of hundreds of MB per operation; glibc serves each
    with a fresh ``mmap`` and returns it on ``free``, so every operation first page-faults its whole
    output in — on a 64-token sentence that cost about twice the arithmetic. With ``M_MMAP_MAX = 0``
    and a 2 GiB ``M_TRIM_THRESHOLD`` the freed blocks stay in the process and are reused. This is
    process-wide: the resident size stays at its peak until exit. ``enable=False`` restores
    glibc's documented defaults (65536 maps, 128 KiB trim threshold). Returns whether it applied.
    """
    global _malloc_tuned
    if enable == _malloc_tuned or not sys.platform.startswith("linux"):
        return enable == _malloc_tuned
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl, or no glibc: leave the allocator alone
        return False
    mmap_max, trim = (0, 2**31 - 1) if enable else (65536, 128 * 1024)
    if mallopt(_M_MMAP_MAX, mmap_max) != 1 or mallopt(_M_TRIM_THRESHOLD, trim) != 1:
        return False
    _malloc_tuned = enable
    return True


TINY = sys.float_info.min
"""The float64 floor of the ε* search: the smallest positive normal double (2.2e-308)."""


def search_eps(
    ok: Callable[[float], bool],
    eps0: float = 1e-3,
    steps: int = 14,
    floor: float = 0.0,
    eps_max: float = 10.0,
    upper: float | None = None,
) -> float:
    """Largest ε with ``ok(ε)`` for a monotone predicate (verified at ε ⇒ verified below ε).

    ``floor`` is a radius known to verify, ``upper`` one known to fail (both save calls).
    §3.3: "we employ binary search to find the largest ε". Upward, ε doubles from ``eps0`` (or
    from ``2 * floor``, ``floor`` being known to verify) until ``ok`` fails or ``eps_max`` is passed.
    When even ``eps0`` (or ``upper``) fails, the search gallops down — ``hi/2``, ``hi/8``,
    ``hi/128``, … as far as the float64 floor ``TINY`` — and bisects the bracket it finds *in log
    space* (geometric means) until its ends are a factor 2 apart: about 20 calls from 1e-3 down to
    1e-300, one or two when ε* is just below, so an interval verifier whose ε* is 1e-15 still gets
    a number, not 0 (issue 20; the old search stopped at 1e-9). Then
    ``steps`` rounds of ordinary bisection give ε* to a relative precision of ``2**-steps``.
    Returns 0.0 when not even ``TINY`` verifies. The result is always a value ``ok`` accepted.
    """
    lo = floor
    if upper is not None and upper > floor:
        hi = upper
    else:
        hi = max(eps0, 2 * floor)
        while hi <= eps_max and ok(hi):
            lo, hi = hi, hi * 2
        if hi > eps_max:
            return lo
    if lo == 0.0:
        # gallop down from the failing radius: hi/2, hi/8, hi/128, ... (the exponent doubles),
        # so an ε* just under hi costs one call and one near the float64 floor about ten
        shift = 1
        while True:
            cand = max(math.ldexp(hi, -shift), TINY)
            if ok(cand):
                lo = cand
                break
            if cand == TINY:
                return 0.0
            hi, shift = cand, shift * 2
        while hi / lo > 2.0:
            mid = math.exp((math.log(lo) + math.log(hi)) / 2)
            if not lo < mid < hi:
                break
            if ok(mid):
                lo = mid
            else:
                hi = mid
    for _ in range(steps):
        mid = (lo + hi) / 2
        if not lo < mid < hi:
            break
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


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
    upper: float | None = None,
    relaxation: str = "deept",
) -> SearchResult:
    """Largest ε (see :func:`search_eps`) that ``domain`` verifies; ``floor`` is known verified,
    ``upper`` known not to verify."""
    start = time.perf_counter()
    calls = 0

    def ok(eps: float) -> bool:
        nonlocal calls
        calls += 1
        return verifies(model, e, target, eps, domain, cap, relaxation)

    eps_star = search_eps(ok, eps0, steps, floor, eps_max, upper)
    return SearchResult(eps_star, calls, time.perf_counter() - start)
