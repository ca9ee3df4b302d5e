"""How two HInter runs pair up for ``fairprobe compare``: a mutant is the same test case in both runs
when its original and its mutated text are the same; intervals resample originals, as the run's own
do (Souani et al., §4: mutants of one text are correlated)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fairprobe.compare.pairing import Outcome, Pairing


def _key(f: dict[str, Any]) -> str:
    """The mutant's id names its original and its replacements, so the mutated text is the same in
    two runs over the same data (the input hashes check that)."""
    return f"{f['original_id']}\x00{f['id']}"


def _slices(f: dict[str, Any]) -> list[str]:
    return ["all", str(f.get("kind")), "+".join(sorted(f.get("attributes") or []))]


def _biased(f: dict[str, Any]) -> bool | None:
    """The mutant's output differs from its original's; ``None`` for a mutant the invariant discarded."""
    return bool(f.get("biased")) if f.get("valid") else None


def _words(f: dict[str, Any]) -> str | None:
    """The mutant's word pairs, as the run's report names them: ``"gender:he>she|race:White>Black"``
    -> ``"he→she + White→Black"``."""
    key = f.get("key") or str(f.get("id", "")).partition("|")[2]
    return _label(key) if key else None


@lru_cache(maxsize=65536)
def _label(key: str) -> str:
    """One label per distinct substitution (a million mutants share a few thousand)."""
    return " + ".join("→".join(part.partition(":")[2].split(">", 1)) for part in key.split("|"))


def _show(f: dict[str, Any]) -> dict[str, Any]:
    replaced = ", ".join(f"{a}: {old}→{new}" for a, old, new in (f.get("replacements") or []))
    return {
        "text": f.get("text", ""),
        "spans": f.get("spans"),
        "answer": f"original {'/'.join(f.get('original_output') or [])} → mutant "
        f"{'/'.join(f.get('mutant_output') or [])} ({replaced})",
    }


PAIRING = Pairing(
    key=_key,
    cluster=lambda f: str(f["original_id"]),
    slices=_slices,
    invalid=lambda f: bool(f.get("invalid")),
    outcomes=[
        Outcome(
            "error_rate",
            "binary",
            _biased,
            True,
            "changed its answer",
            change="now changes {new} of {n} answers, was {base} of {n}",
        )
    ],
    show=_show,
    detail=_words,
    dropped="mutants the dependency invariant discarded",
    columns=("id", "original_id", "kind", "attributes", "valid", "invalid", "biased", "key"),
)
