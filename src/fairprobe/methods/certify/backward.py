"""A backward, CROWN-style bound of the margin (Shi et al., "Robustness verification for
transformers", ICLR 2020, §3.2–3.4; CROWN: Zhang et al., NeurIPS 2018), on top of the forward
zonotope verifier (:mod:`.network`, the certify block's ``relaxation: backward``).

The forward verifier pushes one abstract value through the network, layer after layer, and every
relaxation's error is carried forward and widened by every later layer. The backward bound instead
writes the margin ``y_t - y_j`` as a *linear function of the input embeddings* by walking the
network from the logits back to the input: an affine layer passes the coefficients through exactly,
and every non-linear value is replaced by a linear lower or upper bound (whichever keeps the
margin's bound a lower bound: the sign of its coefficient decides). The linear function's minimum
over the input's ε-box is then exact: ``Λ·e - ε·||Λ||_1 + const``.

Relaxing a non-linearity needs the bounds of its input. They come from the forward DeepT walk
(:class:`.network.ZonoBox`, sound at every layer), recorded on a tape (:class:`Traced`); Shi et al.
compute them with backward passes too, one per intermediate layer, which costs a pass per neuron.
The backward pass here runs once per sentence and ε, from the margins only, and its cost is small
beside the forward walk's. The verifier takes the better of the two lower bounds of each margin
(both are sound), so ``backward`` never proves less than ``deept``.

Linear bounds, each valid for every value inside the recorded bounds ``[l, u]`` of its inputs:

- ReLU (CROWN, Zhang et al. §3.1): upper the chord ``u (x - l) / (u - l)``, lower ``x`` when
  ``u > -l`` else ``0``; exact when the input does not cross 0.
- Convex ``exp``, ``1/x``, ``1/sqrt(x)``, ``x**2``: upper the chord, lower the tangent parallel to it
  (:func:`.relax.convex_relax`); GELU: the parallelogram of :func:`.relax.gelu_relax`.
- Products ``x·y`` (LayerNorm's, and every term of ``Q Kᵀ`` and ``A V``): the McCormick planes
  (Shi et al. §3.3 use one fixed plane of each kind; here, per element, the plane of each kind that
  is tighter at the centre of the box ``[l_x, u_x] × [l_y, u_y]``; every McCormick plane is valid).
- Softmax, DeepT's form ``p_k = 1 / sum_j exp(s_j - s_k)`` (Bonaert et al. 2021, §5.3): the
  reciprocal and every ``exp`` of a difference are relaxed as convex functions, on the bounds of
  the differences that the forward zonotope gives (:func:`.softmax.difference_bounds`: the
  common-mode movement of a row cancels), so no product is needed. Shi et al. relax
  ``exp(s_j) · 1/sum exp(s)`` instead, a product of two relaxed values.
- Where a relaxation is undefined (an ``exp`` that would overflow, an unbounded input) the value is
  bounded by its recorded output bounds: a constant, which is sound and cuts the linear dependence.

Soundness: tests/methods/certify/test_backward.py checks the bound against the model's margin on
sampled points and vertices of the box (and that a bound which ignores ε fails that check), and
that at a vanishing radius the bound equals the model's margin (every coefficient is right).
"""

# ruff: noqa: E741  (l, u: the usual names of an interval's ends)
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fairprobe.methods.certify.relax import exp_relax, gelu_relax, reciprocal_relax, rsqrt_relax, square_relax
from fairprobe.methods.certify.softmax import EXP_LIMIT, zono_difference_bounds

if TYPE_CHECKING:
    import torch

TIGHTEN = ("rsqrt",)
"""Element-wise operations whose inputs the ``backward`` relaxation bounds backward before the forward
walk relaxes them: LayerNorm's ``1/sqrt`` of the variance (2 × n rows per pass). Measured on an
8-block Adult model (42 tokens), against the backward bound without it: ε* +1.6% for 1.3× the CPU
time; adding the ReLU inputs (2 × n × ff rows) gained nothing more for 3.5× (docs/techniques/certify.md,
"Which to use")."""

ROUND = 1e-9
"""Relative pad subtracted from the final bound against float64 rounding in the backward sums."""


@dataclass
class Node:
    """One operation of the walk: its name, the tape indices of its abstract inputs, its constant
    arguments, and the recorded bounds it needs for its relaxation."""

    op: str
    parents: tuple[int, ...]
    args: tuple[Any, ...] = ()
    bounds: list[tuple[Any, Any]] = field(default_factory=list)
    cache: dict[str, Any] = field(default_factory=dict)
    """The relaxation's lines, computed at the node's first backward pass (they depend only on
    ``bounds``; one walk runs several passes when inputs are tightened)."""


class Tape:
    """The walk's operations in order; ``tighten`` names the element-wise operations whose inputs
    get backward bounds before they are relaxed (:data:`TIGHTEN`)."""

    def __init__(self, tighten: frozenset[str] = frozenset()) -> None:
        self.nodes: list[Node] = []
        self.tighten = tighten

    def add(self, node: Node) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1


class Traced:
    """An abstract value of the forward walk (a :class:`.network.ZonoBox`) that also records the
    operation that produced it, so the margin can be bounded backward (:func:`margin_lower`)."""

    def __init__(self, value: Any, tape: Tape, index: int):
        self.value = value
        self.tape = tape
        self.index = index

    def _new(
        self, value: Any, op: str, others: tuple[Traced, ...] = (), args: tuple = (), bounds=None
    ) -> Traced:  # type: ignore[no-untyped-def]
        node = Node(op, (self.index, *(o.index for o in others)), args)
        node.bounds = bounds or []
        return Traced(value, self.tape, self.tape.add(node))

    # -- exact operations: recorded with their constants -------------------------------------------
    def affine(self, w: torch.Tensor, b: torch.Tensor | None = None) -> Traced:
        return self._new(self.value.affine(w, b), "affine", args=(w, b))

    def scale(self, g: torch.Tensor) -> Traced:
        return self._new(self.value.scale(g), "scale", args=(g,))

    def shift(self, b: torch.Tensor) -> Traced:
        return self._new(self.value.shift(b), "shift", args=(b,))

    def add(self, other: Traced) -> Traced:
        return self._new(self.value.add(other.value), "add", (other,))

    def reshape(self, *shape: int) -> Traced:
        return self._new(self.value.reshape(*shape), "reshape", args=(tuple(self.value.center().shape),))

    def permute(self, *dims: int) -> Traced:
        return self._new(self.value.permute(*dims), "permute", args=dims)

    def sum(self, dim: int, keepdim: bool = False) -> Traced:
        shape = tuple(self.value.center().shape)
        return self._new(self.value.sum(dim, keepdim=keepdim), "sum", args=(dim, keepdim, shape))

    def lift(self) -> Traced:  # the same concrete value: only the abstraction changes
        return Traced(self.value.lift(), self.tape, self.index)

    def block_end(self, cap: int, fixed: int = 0) -> Traced:
        return Traced(self.value.block_end(cap, fixed), self.tape, self.index)

    # -- relaxed operations: recorded with the bounds of their inputs -------------------------------
    def _unary(self, op: str, *args: Any) -> Traced:
        value = self.value
        if op in self.tape.tighten and self.index:  # the input's bounds, tightened backward first
            value = value.meet(*element_bounds(self.tape, self.index, tuple(value.center().shape)))
        inb = value.bounds()
        out = getattr(value, op)(*args)
        return self._new(out, op, args=args, bounds=[inb, out.bounds()])

    def relu(self) -> Traced:
        return self._unary("relu")

    def gelu(self) -> Traced:
        return self._unary("gelu")

    def exp(self) -> Traced:
        return self._unary("exp")

    def square(self) -> Traced:
        return self._unary("square")

    def rsqrt(self, floor: float) -> Traced:
        return self._unary("rsqrt", floor)

    def reciprocal(self, floor: Any) -> Traced:
        return self._unary("reciprocal", floor)

    def _binary(self, op: str, other: Traced) -> Traced:
        bounds = [self.value.bounds(), other.value.bounds()]
        out = getattr(self.value, op)(other.value)
        return self._new(out, op, (other,), bounds=[*bounds, out.bounds()])

    def mul(self, other: Traced) -> Traced:
        return self._binary("mul", other)

    def matmul(self, other: Traced) -> Traced:
        return self._binary("matmul", other)

    def softmax(self, method: str = "deept") -> Traced:
        c = self.value.center()
        dl, du = zono_difference_bounds(self.value.z, self.value.bounds())
        shape = (*c.shape, c.shape[-1])
        # DeepT's softmax starts from the same differences' bounds: hand them over, not recompute them
        out = self.value.softmax(method, diffs=(dl, du) if method == "deept" else None)
        return self._new(out, "softmax", bounds=[(dl.reshape(shape), du.reshape(shape)), out.bounds()])

    # -- what the walk reads ------------------------------------------------------------------------
    def margin_lower(self, target: int) -> torch.Tensor:
        """The better of the forward value's and the backward bound of each margin (both sound)."""
        return self.value.margin_lower(target).maximum(margin_lower(self.tape, self, target))

    def bounds(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.value.bounds()

    def center(self) -> torch.Tensor:
        return self.value.center()


def _reduce_to(t: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """Sum ``t`` (M, *broadcast shape) down to (M, *shape): the adjoint of broadcasting."""
    lead = t.dim() - 1 - len(shape)
    if lead:
        t = t.sum(tuple(range(1, 1 + lead)))
    dims = tuple(i + 1 for i, s in enumerate(shape) if s == 1 and t.shape[i + 1] != 1)
    return t.sum(dims, keepdim=True) if dims else t


def _pick(lam: torch.Tensor, lower: tuple[Any, Any], upper: tuple[Any, Any]) -> tuple[Any, torch.Tensor]:
    """Coefficients and constant for ``sum lam * f(x)``'s lower bound from ``f``'s lines
    ``f >= a_l x + b_l`` and ``f <= a_u x + b_u``: the lower line where ``lam >= 0``."""
    pos, neg = lam.clamp_min(0), lam.clamp_max(0)
    a = pos * lower[0] + neg * upper[0]
    const = pos * lower[1] + neg * upper[1]
    return a, const.reshape(lam.shape[0], -1).sum(1)


def _lines(op: str, args: tuple, l: torch.Tensor, u: torch.Tensor):  # type: ignore[no-untyped-def]
    """Linear lower and upper bounds ``((a_l, b_l), (a_u, b_u))`` of an element-wise ``op`` on ``[l, u]``."""
    import torch

    if op == "relu":
        cross = (l < 0) & (u > 0)
        width = torch.where(cross, u - l, torch.ones_like(l))
        a_u = torch.where(u <= 0, torch.zeros_like(l), torch.where(l >= 0, torch.ones_like(l), u / width))
        b_u = torch.where(cross, -a_u * l, torch.zeros_like(l))
        a_l = torch.where(cross, (u > -l).to(l.dtype), a_u)
        return (a_l, torch.zeros_like(l)), (a_u, b_u)
    if op in ("rsqrt", "reciprocal"):
        floor = args[0]
        l = l.clamp_min(floor) if isinstance(floor, float) else l.maximum(floor)
        u = u.maximum(l)
    if op == "exp":
        lam, mu, beta = exp_relax(l, u, positive=False)
    else:
        relax = {
            "gelu": gelu_relax,
            "square": square_relax,
            "rsqrt": rsqrt_relax,
            "reciprocal": reciprocal_relax,
        }
        lam, mu, beta = relax[op](l, u)
    return (lam, mu - beta), (lam, mu + beta)


def _mccormick(lx, ux, ly, uy):  # type: ignore[no-untyped-def]
    """McCormick planes of ``x·y`` on a box, per element: ``((a, b, c) lower, (a, b, c) upper)`` with
    ``x y >= a x + b y + c`` (and ``<=``); of each kind the plane tighter at the box's centre."""
    import torch

    cx, cy = (lx + ux) / 2, (ly + uy) / 2
    # lower: y_l x + x_l y - x_l y_l  or  y_u x + x_u y - x_u y_u (the larger at the centre)
    first = (ly * cx + lx * cy - lx * ly) >= (uy * cx + ux * cy - ux * uy)
    lower = (torch.where(first, ly, uy), torch.where(first, lx, ux), torch.where(first, -lx * ly, -ux * uy))
    # upper: y_u x + x_l y - x_l y_u  or  y_l x + x_u y - x_u y_l (the smaller at the centre)
    first = (uy * cx + lx * cy - lx * uy) <= (ly * cx + ux * cy - ux * ly)
    upper = (torch.where(first, uy, ly), torch.where(first, lx, ux), torch.where(first, -lx * uy, -ux * ly))
    return lower, upper


def _finite(*ts: torch.Tensor) -> bool:
    import torch

    return all(bool(torch.isfinite(t).all()) for t in ts)


def _constant(lam: torch.Tensor, bounds: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """Lower bound of ``sum lam * v`` over the box ``bounds`` of ``v``: the value as a constant."""
    import torch

    lo, hi = bounds  # a zero coefficient takes nothing from an infinite bound (no 0 * inf = nan)
    low = torch.where(lam > 0, lam * lo, 0.0) + torch.where(lam < 0, lam * hi, 0.0)
    return low.reshape(lam.shape[0], -1).sum(1)


def _step(node: Node, lam: torch.Tensor) -> tuple[list[torch.Tensor | None], torch.Tensor]:
    """Coefficients on each parent and the constant, for ``sum lam * node``'s lower bound."""
    import torch

    m = lam.shape[0]
    zero = lam.new_zeros(m)
    op, args = node.op, node.args
    if op == "affine":
        w, b = args
        return [lam @ w], zero if b is None else (lam * b).reshape(m, -1).sum(1)
    if op == "scale":
        return [lam * args[0]], zero
    if op == "shift":
        return [lam], (lam * args[0]).reshape(m, -1).sum(1)
    if op == "add":
        return [lam, lam], zero
    if op == "reshape":
        return [lam.reshape(m, *args[0])], zero
    if op == "permute":
        inverse = [args.index(i) for i in range(len(args))]
        return [lam.permute(0, *(i + 1 for i in inverse))], zero
    if op == "sum":
        dim, keepdim, shape = args
        if not keepdim:
            lam = lam.unsqueeze(dim + 1 if dim >= 0 else dim)
        return [lam.expand(m, *shape)], zero
    if op in ("relu", "gelu", "exp", "square", "rsqrt", "reciprocal"):
        (l, u), out = node.bounds
        if "lines" not in node.cache:
            lines = _lines(op, args, l, u) if _finite(l, u) else None
            node.cache["lines"] = lines if lines is not None and _finite(*lines[0], *lines[1]) else None
        if node.cache["lines"] is None:
            return [None], _constant(lam, out)
        a, const = _pick(lam, *node.cache["lines"])
        return [a], const
    if op == "mul":
        (lx, ux), (ly, uy), out = node.bounds
        if not _finite(lx, ux, ly, uy):
            return [None, None], _constant(lam, out)
        shape = out[0].shape
        lx, ux, ly, uy = (t.expand(shape) for t in (lx, ux, ly, uy))
        lower, upper = _mccormick(lx, ux, ly, uy)
        ax, const = _pick(lam, (lower[0], lower[2]), (upper[0], upper[2]))
        ay, _ = _pick(lam, (lower[1], lower[2]), (upper[1], upper[2]))
        xshape, yshape = node.bounds[0][0].shape, node.bounds[1][0].shape
        return [_reduce_to(ax, tuple(xshape)), _reduce_to(ay, tuple(yshape))], const
    if op == "matmul":  # out[..., i, j] = sum_k x[..., i, k] y[..., k, j], each product relaxed
        (lx, ux), (ly, uy), out = node.bounds
        if "planes" not in node.cache:
            planes = None
            if _finite(lx, ux, ly, uy):  # (..., i, k, j); the constants summed over k
                lower, upper = _mccormick(
                    lx.unsqueeze(-1), ux.unsqueeze(-1), ly.unsqueeze(-3), uy.unsqueeze(-3)
                )
                planes = (*lower[:2], lower[2].sum(-2), *upper[:2], upper[2].sum(-2))
            node.cache["planes"] = planes
        if node.cache["planes"] is None:
            return [None, None], _constant(lam, out)
        xa_l, yb_l, c_l, xa_u, yb_u, c_u = node.cache["planes"]
        pos, neg = lam.clamp_min(0), lam.clamp_max(0)  # (M, ..., i, j)
        ax = torch.einsum("m...ij,...ikj->m...ik", pos, xa_l) + torch.einsum(
            "m...ij,...ikj->m...ik", neg, xa_u
        )
        ay = torch.einsum("m...ij,...ikj->m...kj", pos, yb_l) + torch.einsum(
            "m...ij,...ikj->m...kj", neg, yb_u
        )
        const = (pos * c_l + neg * c_u).reshape(m, -1).sum(1)
        return [_reduce_to(ax, tuple(lx.shape)), _reduce_to(ay, tuple(ly.shape))], const
    if op == "softmax":  # p_k = 1 / sigma_k, sigma_k = sum_j exp(d_kj), d_kj = s_j - s_k
        (dl, du), out = node.bounds
        if "lines" not in node.cache:
            node.cache["lines"] = _softmax_lines(dl, du)
        if node.cache["lines"] is None:
            return [None], _constant(lam, out)
        recip, slope, low, high = node.cache["lines"]
        a_sigma, const = _pick(lam, *recip)
        # the exp lines share their slope: the coefficient of d_kj is a_sigma_k * slope_kj either way
        const = const + (a_sigma.clamp_min(0) * low + a_sigma.clamp_max(0) * high).reshape(m, -1).sum(1)
        a_s = torch.einsum(
            "mbk,bkj->mbj", a_sigma.reshape(m, -1, dl.shape[-1]), slope.reshape(-1, *dl.shape[-2:])
        )
        a_s = a_s - a_sigma.reshape(m, -1, dl.shape[-1]) * slope.reshape(-1, *dl.shape[-2:]).sum(-1)
        return [a_s.reshape(lam.shape)], const
    raise ValueError(f"no backward bound for the operation {op!r}")


def _softmax_lines(dl: torch.Tensor, du: torch.Tensor):  # type: ignore[no-untyped-def]
    """The lines of DeepT's softmax form on the differences' bounds ``dl, du`` (rows, k, j):
    ``1/sigma_k``'s (lower, upper) lines on ``sigma_k``'s range, and every ``exp(d_kj)``'s shared
    slope with the sums over j of its lower and upper lines' constants; ``None`` where exp could
    overflow (:data:`.softmax.EXP_LIMIT`)."""
    if float(du.max()) > EXP_LIMIT or not _finite(dl, du):
        return None
    recip = _lines("reciprocal", (1.0,), dl.exp().sum(-1), du.exp().sum(-1))
    (slope, low), (_, high) = _lines("exp", (), dl, du)
    if not _finite(*recip[0], *recip[1], slope, low, high):
        return None
    return recip, slope, low.sum(-1), high.sum(-1)


def lower_bounds(tape: Tape, start: int, lam: torch.Tensor) -> torch.Tensor:
    """Lower bounds of ``sum(lam[m] * v)`` for each row ``m`` of ``lam`` (M, *shape of v), ``v`` the
    value of tape node ``start``, over the input box: one backward pass to node 0 (the ε-box)."""
    e, eps = tape.nodes[0].args
    rows = lam.shape[0]
    coeff: dict[int, torch.Tensor] = {start: lam}
    const = lam.new_zeros(rows)
    scale = lam.new_zeros(rows)  # magnitude of the summed terms, for the rounding pad
    for index in range(start, 0, -1):
        lam_i = coeff.pop(index, None)
        if lam_i is None:
            continue
        node = tape.nodes[index]
        parents, c = _step(node, lam_i)
        const += c
        scale += c.abs()
        for parent, a in zip(node.parents, parents, strict=True):
            if a is not None:
                coeff[parent] = coeff[parent] + a if parent in coeff else a
    value = const
    lam0 = coeff.get(0)
    if lam0 is not None:
        linear = (lam0 * e).reshape(rows, -1).sum(1)
        spread = eps * lam0.abs().reshape(rows, -1).sum(1)
        value = value + linear - spread
        scale += linear.abs() + spread
    # nan (an undefined bound, inf - inf) reads as "no bound": never a bound that verifies or tightens
    return (value - ROUND * (1.0 + scale)).nan_to_num(
        nan=float("-inf"), posinf=float("inf"), neginf=float("-inf")
    )


def margin_lower(tape: Tape, out: Traced, target: int) -> torch.Tensor:
    """Lower bounds of ``y[target] - y[j]`` for every j (the target's own entry is 0) over the
    tape's input box, by one backward pass from the logits ``out``."""
    import torch

    classes = out.center().shape[0]
    lam = torch.zeros((classes, classes), dtype=out.center().dtype)
    lam[:, target] += 1.0
    lam -= torch.eye(classes, dtype=lam.dtype)
    value = lower_bounds(tape, out.index, lam)
    value[target] = 0.0
    return value


def element_bounds(tape: Tape, index: int, shape: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor]:
    """Lower and upper bounds of every element of tape node ``index`` by one backward pass
    (``2 × numel`` rows: each element and its negation)."""
    import torch

    n = 1
    for s in shape:
        n *= s
    eye = torch.eye(n, dtype=torch.float64)
    lam = torch.cat([eye, -eye]).reshape(2 * n, *shape)
    low = lower_bounds(tape, index, lam)
    return low[:n].reshape(shape), -low[n:].reshape(shape)


def trace(value: Any, e: torch.Tensor, eps: float, tighten: frozenset[str] = frozenset()) -> Traced:
    """The forward verifier's input ``value`` (the ε-box around the token embeddings ``e``) as node 0
    of a new tape: the walk on it records what :meth:`Traced.margin_lower` needs."""
    tape = Tape(tighten)
    return Traced(value, tape, tape.add(Node("input", (), (e, eps))))
