"""How two audits pair up for ``fairprobe compare``: a test case is one seed's audit (the same seed
draws the same seed set and pool). The per-seed certified interval of the fairness gap is compared
interval against interval (BAFA, §3: the C-ERM bounds hold with the stated confidence): the new model
is certainly less fair on a seed when its interval of |gap| lies wholly above the base one. The
estimates are compared too (Wilcoxon over seeds)."""

from __future__ import annotations

from typing import Any

from fairprobe.compare.pairing import Outcome, Pairing


def _abs_interval(f: dict[str, Any]) -> tuple[float, float] | None:
    lo, hi = f.get("lower"), f.get("upper")
    if lo is None or hi is None:
        return None
    if lo <= 0 <= hi:
        return 0.0, max(-lo, hi)
    return min(abs(lo), abs(hi)), max(abs(lo), abs(hi))


def _abs_estimate(f: dict[str, Any]) -> float | None:
    e = f.get("estimate")
    return None if e is None else abs(float(e))


PAIRING = Pairing(
    key=lambda f: f"seed {f['seed']}" if f.get("kind") == "final" else None,
    cluster=lambda f: str(f["seed"]),
    slices=lambda f: ["all"],
    invalid=lambda f: f.get("estimate") is None,
    outcomes=[Outcome("gap", "continuous", _abs_estimate, True, "has a larger fairness gap")],
    show=lambda f: {
        "text": f"seed {f['seed']}",
        "answer": f"gap {f.get('estimate')} in [{f.get('lower')}, {f.get('upper')}] after {f.get('queries')} queries",
    },
    same_inputs_except=("model", "scores"),
    interval=_abs_interval,
)
