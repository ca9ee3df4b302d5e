"""DeepT's zonotope softmax (Bonaert et al., "Fast and precise certification of transformers",
PLDI 2021, §5.3 "Softmax"; the paper's verifier, shared/seeds/certificates.txt §3.3 and App. A).

DeepT writes each softmax output as a reciprocal of a sum of exponentials of *differences*::

    softmax_k(s) = 1 / sum_j exp(s_j - s_k)

The differences ``d_kj = s_j - s_k`` are exact affine maps of the zonotope, so whatever the scores
share — the common-mode movement of a whole row, which is most of it — cancels before any
relaxation, and no product of two zonotopes is needed (the older relaxation,
:meth:`.zonotope.Zono.softmax` with ``method="current"``, relaxes ``exp(s_j - m)`` on each score's own
range and then multiplies by the reciprocal of the sum, adding the product of both radii).

Steps, for every row of scores (one query of one head), following DeepT's ``process_values`` and
``reciprocal`` (eth-sri/DeepT, ``Verifiers/Zonotope.py``); facts carried over, code our own:

1. Bounds of every difference: ``|d_kj - (c_j - c_k)| <= ||G_j - G_k||_1 + r_j + r_k`` (the
   column L1 distance of the generators, ``torch.cdist(p=1)``), intersected with the interval
   fact ``d_kj in [l_j - u_k, u_j - l_k]``; ``d_kk = 0`` exactly.
2. ``exp`` on each difference with DeepT's "minimal area" parallelogram
   (:func:`.relax.exp_relax`: tangent slope at ``min(t_crit, l + 1 - 0.01)``, lower bound > 0).
3. The sum over j (exact): generators ``sum_j lam_kj G_j - (sum_j lam_kj) G_k``, one batched matrix
   product; the private boxes and the relaxation errors add up.
4. ``1/x`` on the sum, whose range is the intersection of the zonotope's and of the interval
   ``[sum_j exp(l(d_kj)), sum_j exp(u(d_kj))]`` (>= 1: the j = k term is exactly 1), with DeepT's
   slope choice that keeps the lower bound positive (:func:`.relax.reciprocal_relax_positive`).
5. The same interval gives the tight bound ``softmax_k in [1 / sum_j exp(u(d_kj)), 1 / sum_j
   exp(l(d_kj))]``, returned for the reduced product (:class:`.network.ZonoBox`).

**Compute, not memory.** DeepT forms the (n × n) table of differences per row with all generators
(``h·n³·k`` values: 19 GB in float64 on a 64-token sentence with 4,608 symbols). Here the table
is never formed: the differences' bounds need only their L1 distances (``h·n²`` values, from
``TOP`` generators compared exactly, :func:`l1_distances`), and the sum's generators follow from
the slopes without it (:func:`deept_softmax`), so the memory stays that of the scores themselves;
the cost is ``h·n³·TOP`` for the distances plus a few passes over the scores' generators.

On long sentences the walk goes further (:func:`deept_attention`): the whole attention
``softmax(q k) v`` is computed slice by slice of generators, so neither the scores' nor the
probabilities' generator matrix (k × h·n² each) is formed whole; same bounds.

**Differences from DeepT**, each sound:

- New error terms go to the per-element private box (turned into generators at the block's end),
  as everywhere in :mod:`.zonotope`, instead of one fresh noise symbol each.
- DeepT's optional sum-to-one refinement (``add_equality_constraint_on_softmax``, off by default in
  its ``softmax``: ``no_constraints=True``) eliminates one noise symbol per row and narrows the
  others' ranges; it is not done here. Its interval consequence is: each output is within the
  bound of step 5, which is at least as tight as ``1 - sum_{j≠k} lower_j``.
- When a difference's upper bound exceeds ``EXP_LIMIT`` (exp would overflow) the caller falls
  back to the older relaxation (which itself falls back to intervals).
"""

# ruff: noqa: E741  (l, u: the usual names of an interval's ends)
from __future__ import annotations

from typing import TYPE_CHECKING

from fairprobe.methods.certify.relax import abs_sum, convex_relax, exp_relax, reciprocal_relax_positive

if TYPE_CHECKING:
    import torch

    from fairprobe.methods.certify.zonotope import Zono


EXP_LIMIT = 600.0
"""Largest difference upper bound handled (exp(600) ~ 4e260, far from float64's overflow)."""

TOP = 128
"""Generators compared exactly in the differences' L1 distances (:func:`l1_distances`)."""

ROUND = 1e-12
"""Relative pad on the L1 distances against float64 rounding in the sums (k <= 1e4 terms)."""


def l1_distances(g: torch.Tensor, gabs: torch.Tensor, top: int | None) -> torch.Tensor:
    """Upper bounds of ``||G[:, b, j] - G[:, b, k]||_1`` (B, n, n) for generators ``g`` (k, B, n)
    whose per-element L1 mass ``gabs = |g|.sum(0)`` (B, n) is known.

    The ``top`` generators of largest total mass are compared exactly (``torch.cdist(p=1)``); for
    the others the triangle inequality ``|a_j - a_k| <= |a_j| + |a_k|`` gives their mass
    ``gabs - |head|.sum(0)``, so the cost is ``B·n²·top``, not ``B·n²·k`` (``top=None``: exact).
    """
    import torch

    k, b, n = g.shape
    if not k:
        return g.new_zeros((b, n, n))
    if top is None or k <= top:
        return torch.cdist(g.permute(1, 2, 0), g.permute(1, 2, 0), p=1)
    mass = torch.linalg.vector_norm(g.reshape(k, -1), 1, dim=1)  # one pass, no |g|-sized temporary
    return head_distances(g[torch.topk(mass, top).indices], gabs)


def head_distances(head: torch.Tensor, gabs: torch.Tensor) -> torch.Tensor:
    """:func:`l1_distances` from the ``head`` generators (top, B, n) compared exactly; the rest of
    the mass ``gabs`` (all generators) enters by the triangle inequality."""
    import torch

    habs = head.abs().sum(0)
    tail = (gabs - habs).clamp_min(0) + ROUND * gabs  # rounding of the two sums
    ht = head.permute(1, 2, 0).contiguous()
    return torch.cdist(ht, ht, p=1) + tail.unsqueeze(-1) + tail.unsqueeze(-2)


def difference_bounds(
    c: torch.Tensor,
    dist: torch.Tensor,
    r: torch.Tensor,
    lo: torch.Tensor,
    hi: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Bounds of ``d[b, k, j] = s[b, j] - s[b, k]`` for rows ``b`` of scores ``s = c + G eps + delta``.

    ``c``, ``r``, ``lo``, ``hi``: (B, n); ``dist``: bounds of the generators' column L1 distances
    (B, n, n) (:func:`l1_distances`). The zonotope bound (step 1) meets the interval one; the
    diagonal is 0.
    """
    import torch

    n = c.shape[-1]
    rad = (dist + r.unsqueeze(-1) + r.unsqueeze(-2)) * (1 + ROUND) + 1e-300
    cd = c.unsqueeze(-2) - c.unsqueeze(-1)  # [b, k, j] = c_j - c_k
    dl = torch.maximum(cd - rad, lo.unsqueeze(-2) - hi.unsqueeze(-1))
    du = torch.minimum(cd + rad, hi.unsqueeze(-2) - lo.unsqueeze(-1))
    du = torch.maximum(du, dl)
    eye = torch.eye(n, dtype=torch.bool)
    return dl.masked_fill(eye, 0.0), du.masked_fill(eye, 0.0)


def zono_difference_bounds(
    z: Zono, bounds: tuple[torch.Tensor, torch.Tensor] | None = None, top: int | None = TOP
) -> tuple[torch.Tensor, torch.Tensor]:
    """Bounds (rows, n, n) of the differences ``s_j - s_k`` within every row of the last axis of the
    zonotope ``z`` (step 1), met with the interval ``bounds`` of ``z`` (default: its own)."""

    lo, hi = bounds or z.bounds()
    n = z.c.shape[-1]
    rows = z.c.numel() // n
    g = z.g.reshape(z.g.shape[0], rows, n)
    gabs = (z._gabs if z._gabs is not None else abs_sum(z.g)).reshape(rows, n)
    c, r = z.c.reshape(rows, n), z.r.reshape(rows, n)
    return difference_bounds(c, l1_distances(g, gabs, top), r, lo.reshape(rows, n), hi.reshape(rows, n))


def deept_softmax(
    z: Zono,
    bounds: tuple[torch.Tensor, torch.Tensor] | None = None,
    top: int | None = TOP,
    slope: str = "centre",
    diffs: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> tuple[Zono, tuple[torch.Tensor, torch.Tensor]] | None:
    """Softmax over the last axis of ``z`` by DeepT's relaxation (module docstring). Returns the
    output zonotope and interval bounds of every output (step 5), or ``None`` when a difference
    could reach ``EXP_LIMIT`` (the caller falls back).

    ``slope`` is the slope of each ``exp(d_kj)`` enclosure. ``"area"``: DeepT's minimal-area choice
    (:func:`.relax.exp_relax`); the sum's generators are then ``G @ m`` with one (n × n) matrix per
    row, ``k·h·n³`` multiply-adds. ``"centre"`` (default): the derivative at the centre,
    ``exp(c_j - c_k) = u_j v_k`` with ``u = exp(c - max c)`` and ``v = 1/u``; any slope gives a sound
    enclosure (:func:`.relax.convex_relax` bounds the error for the slope it is given), and this one
    is rank one per row, so the generators are ``v_k (w - U G_k)`` with ``w = sum_j u_j G_j`` and
    ``U = sum_j u_j``: ``k·h·n²``. For narrow differences both slopes agree to first order.

    ``diffs``: the differences' bounds of step 1, :func:`zono_difference_bounds` of ``z`` and
    ``bounds``, when the caller has them already (the backward tape records them).
    """
    import torch

    n = z.c.shape[-1]
    rows = z.c.numel() // n
    k = z.g.shape[0]
    c, r = z.c.reshape(rows, n), z.r.reshape(rows, n)
    g = z.g.reshape(k, rows, n)
    dl, du = diffs if diffs is not None else zono_difference_bounds(z, bounds, top)
    if float(du.max()) > EXP_LIMIT:
        return None
    relaxed = _relax_rows(c, r, dl, du, slope)
    out_c, out_r, lam_r, lam, lsum = relaxed[:5]
    if slope == "centre":  # out_k = lam_r_k v_k (w - U G_k), in two passes over G
        u, lv, scale = relaxed[5:8]
        w = torch.einsum("krj,rj->kr", g, u)
        out_g = g * scale
        out_g.addcmul_(w.unsqueeze(-1), lv)
    else:  # out_k = lam_r_k (sum_j lam_kj G_j - lsum_k G_k) = G @ m, one (n × n) m per row
        m = (lam.transpose(-1, -2) - torch.diag_embed(lsum)) * lam_r.unsqueeze(-2)
        out_g = z.g.new_empty((k, rows, n))
        for row in range(rows):
            out_g[:, row].copy_(g[:, row] @ m[row])
    shape = z.c.shape
    out = type(z)(out_c.reshape(shape), out_g.reshape(k, *shape), out_r.reshape(shape))
    return out, tuple(x.reshape(shape) for x in relaxed[-1])


def _relax_rows(c, r, dl, du, slope: str):  # type: ignore[no-untyped-def]
    """Steps 2–5 on rows (B, n) of scores with centre ``c``, private box ``r`` and difference
    bounds ``dl``, ``du``: the output's centre and private box, the reciprocal's slope ``lam_r``,
    the exp slopes ``lam`` and their row sums, then (``slope="centre"``) ``u``, ``lv = lam_r v``
    and ``scale = -lv U`` (the generators are ``G_k * scale + w lv`` with ``w = sum_j u_j G_j``),
    and last the interval bounds of step 5."""
    import torch

    n = c.shape[-1]
    eye = torch.eye(n, dtype=torch.bool)
    u = lv = scale = None
    if slope == "centre":
        u = (c - c.amax(-1, keepdim=True)).exp()  # (B, n), max 1
        v = 1.0 / u
        lam, mu, beta = convex_relax(
            torch.exp, torch.exp, torch.log, dl, du, v.unsqueeze(-1) * u.unsqueeze(-2)
        )
    else:
        lam, mu, beta = exp_relax(dl, du)
    lam = lam.masked_fill(eye, 0.0)  # exp(d_kk) = exp(0) = 1 exactly
    mu = mu.masked_fill(eye, 1.0)
    beta = beta.masked_fill(eye, 0.0)
    lsum = lam.sum(-1)  # (B, n): sum_j lam_kj
    # the sum S_k = sum_j exp(d_kj): centre, private box (the scores' own and the new errors)
    s_c = (lam * (c.unsqueeze(-2) - c.unsqueeze(-1)) + mu).sum(-1)
    s_r = (lam * r.unsqueeze(-2)).sum(-1) + lsum * r + beta.sum(-1)
    # its range (step 4): every d_kj within its bounds; >= 1 (the j = k term)
    a = dl.exp().sum(-1) * (1 - ROUND)
    b = torch.maximum(du.exp().sum(-1) * (1 + ROUND), a)
    lam_r, mu_r, beta_r = reciprocal_relax_positive(a, b)
    out_c = lam_r * s_c + mu_r
    out_r = lam_r.abs() * s_r + beta_r
    if slope == "centre":
        lv = lam_r * v
        scale = lv * -u.sum(-1).unsqueeze(-1)
    return out_c, out_r, lam_r, lam, lsum, u, lv, scale, ((1.0 / b) * (1 - ROUND), (1.0 / a) * (1 + ROUND))


FUSE_MIN = 2**22
"""Scores' generator values (k·h·n²) from which the walk takes :func:`deept_attention` (32 MiB of
float64, beyond the CPU's caches). Below it the unfused path is faster: a short sentence's
scores fit in the cache anyway, and the fused path forms them twice (measured on a 6-block
model: 64 tokens, k·h·n² ≈ 4e7, 3.1 s per walk fused against 4.0 s; 20 tokens, ≈ 2e5,
0.39 s against 0.27 s)."""

CHUNK = 2**17
"""Score values per slice in :func:`deept_attention` (1 MiB of float64, which stays in the CPU's
cache: 16 generators of a 64-token sentence with 2 heads; measured, 16 beat 64 and 256 there)."""


def deept_attention(
    q: Zono,
    k: Zono,
    v: Zono,
    box: tuple[torch.Tensor, torch.Tensor],
    top: int | None = TOP,
    chunk: int | None = None,
):  # type: ignore[no-untyped-def]
    """``softmax(q k) v`` — :meth:`.zonotope.Zono.matmul`, :func:`deept_softmax` (centre slope) and
    :meth:`~.zonotope.Zono.matmul` again — without forming the scores' or the probabilities'
    generator matrices (k × h·n² each, ~300 MB on a 64-token sentence, where every full pass
    over them cost more than the arithmetic).

    The same zonotopes, computed slice by slice of ``chunk`` generators (default: :data:`CHUNK`
    score values per slice): the scores' generators
    ``G_q c_k + c_q G_k`` are formed twice per slice, once for the per-element L1 mass, the
    per-generator mass (which picks the ``top`` generators of :func:`l1_distances`) and
    ``w = sum_j u_j G_j``, and once, after the relaxation, for the probabilities' generators
    ``G * scale + w lv``, their L1 mass and their product with ``c_v``. Only the sums'
    order differs from the unfused walk (float64 rounding, ~1e-15 relative).

    ``box``: the interval bounds of the scores (the reduced product's other half); the scores'
    bounds are their meet with the zonotope's. Returns ``None`` (the caller takes the unfused
    path) when the three factors do not share their noise symbols or a score difference could
    reach ``EXP_LIMIT``; else ``(out, score bounds, probability bounds of the zonotope, step 5's
    interval bounds)``.
    """
    import torch

    kk = q.g.shape[0]
    if not (kk == k.g.shape[0] == v.g.shape[0]) or not kk or q.c.dim() != 3:
        return None
    h, n, dh = q.c.shape
    rows = h * n
    chunk = chunk or max(1, CHUNK // (rows * n))

    def scores(sel) -> torch.Tensor:  # type: ignore[no-untyped-def]
        """The scores' generators ``G_q c_k + c_q G_k`` for generators ``sel`` (a slice or indices),
        (m, h, n, n), by the same kernels as :meth:`.zonotope.Zono.matmul`: the same values to the
        last bit, so the ``top`` generators picked by their mass are the same as the unfused
        path's (many generators of the input box have masses equal up to rounding)."""
        gq, gk = qg[sel], kg[sel]
        m = gq.shape[0]
        s = torch.bmm(gq.view(m * h, n, dh), expanded(k.c, m))
        s.baddbmm_(expanded(q.c, m), gk.view(m * h, dh, n))
        return s.view(m, h, n, n)

    # both factors' generators contiguous once (k × h·n·dh, a sixteenth of the scores'), and the
    # centres broadcast over a slice once: per slice, only the two batched products remain
    qg, kg = q.g.contiguous(), k.g.contiguous()
    wide: dict[int, torch.Tensor] = {}

    def expanded(x: torch.Tensor, m: int) -> torch.Tensor:
        """``x`` (h, a, b) repeated for ``m`` generators, as (m·h, a, b) (cached per tensor)."""
        key = id(x)
        if key not in wide or wide[key].shape[0] < m * h:
            wide[key] = x.expand(max(m, chunk), *x.shape).reshape(-1, *x.shape[1:])
        return wide[key][: m * h]

    c = q.c @ k.c
    r = q.c.abs() @ k.r + q.r @ k.c.abs() + q.radius() @ k.radius()
    # w = sum_j u_j G_j (the sum's generators, :func:`deept_softmax`) is linear in the scores'
    # generators, so it comes from G_q and G_k directly: u's row sums against c_k and c_q
    u = (c - c.amax(-1, keepdim=True)).exp()  # _relax_rows' u
    w = torch.einsum("khqd,hqd->khq", q.g, torch.einsum("hqj,hdj->hqd", u, k.c))
    w += torch.einsum("hqdj,khdj->khq", q.c.unsqueeze(-1) * u.unsqueeze(-2), k.g)
    gabs = torch.zeros_like(c)
    mass = c.new_empty(kk)
    for i in range(0, kk, chunk):
        a = scores(slice(i, i + chunk))
        mass[i : i + a.shape[0]] = torch.linalg.vector_norm(
            a.view(a.shape[0], -1), 1, dim=1
        )  # as l1_distances
        gabs += a.abs_().sum(0)
    rad = gabs + r
    zl, zu = (c - rad).nan_to_num(nan=float("-inf")), (c + rad).nan_to_num(nan=float("inf"))
    bl, bu = box
    lo = zl.maximum(bl)
    hi = zu.minimum(bu).maximum(lo)
    if top is None or kk <= top:
        dist = l1_distances(scores(slice(None)).reshape(kk, rows, n), gabs.reshape(rows, n), None)
    else:
        head = scores(torch.topk(mass, top).indices).reshape(top, rows, n)
        dist = head_distances(head, gabs.reshape(rows, n))
    cr, rr = c.reshape(rows, n), r.reshape(rows, n)
    dl, du = difference_bounds(cr, dist, rr, lo.reshape(rows, n), hi.reshape(rows, n))
    if float(du.max()) > EXP_LIMIT:
        return None
    relaxed = _relax_rows(cr, rr, dl, du, "centre")
    p_c, p_r = relaxed[0].reshape(h, n, n), relaxed[1].reshape(h, n, n)
    lv, scale = relaxed[6].reshape(h, n, n), relaxed[7].reshape(h, n, n)
    p_abs = torch.zeros_like(c)
    gv = c.new_empty((kk, h, n, dh))
    for i in range(0, kk, chunk):
        p = scores(slice(i, i + chunk))
        p.mul_(scale)
        p.addcmul_(w[i : i + p.shape[0]].unsqueeze(-1), lv)
        p_abs += p.abs().sum(0)
        gv[i : i + p.shape[0]] = torch.bmm(p.view(-1, n, n), expanded(v.c, p.shape[0])).view(-1, h, n, dh)
    p_rad = p_abs + p_r
    gv += torch.einsum("hnm,khmd->khnd", p_c, v.g)
    out = type(v)(p_c @ v.c, gv, p_c.abs() @ v.r + p_r @ v.c.abs() + p_rad @ v.radius())
    step5 = tuple(x.reshape(h, n, n) for x in relaxed[-1])
    return out, (lo, hi), (p_c - p_rad, p_c + p_rad), step5
