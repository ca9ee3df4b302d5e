"""``fairprobe compare BASE NEW``: did the new model become more biased than the base one?

Both folders are runs of the same technique over the same inputs. Their findings are paired by test
case (:class:`~fairprobe.compare.pairing.Pairing`), and every outcome is compared per slice with
paired statistics (:mod:`fairprobe.compare.paired`), Holm-corrected across the slices of one metric.

The comparison is judged by the same rules as a run (:mod:`fairprobe.judge.verdict`):

- a pair with an INVALID side is counted, never judged;
- fewer than half of the cases paired, or runs over different inputs (data, dictionary, tests, case
  files, seed, settings other than the model), make the comparison **inconclusive**, with a line
  saying why: never a silent "no change";
- the default gate ``regressed > 0`` fails the comparison when any slice regressed (adjusted
  p < 0.05 in the worse direction); ``--fail-on`` adds conditions on the deltas, e.g.
  ``delta.error_rate.intersectional > 0.01``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fairprobe.compare.paired import (
    ALPHA,
    DEFAULT_GATE,
    PairedResult,
    holm,
    paired_binary,
    paired_continuous,
    slice_verdict,
)
from fairprobe.compare.pairing import Pairing
from fairprobe.errors import RunStateError, UsageError
from fairprobe.judge.verdict import Verdict, decide
from fairprobe.stats import invalid_fields
from fairprobe.technique.block import verdict_only_fields

MIN_PAIRED_SHARE = 0.5


@dataclass
class LoadedRun:
    folder: Path
    technique: str
    spec: dict[str, Any]
    inputs: dict[str, str]
    model: str
    complete: bool
    findings: list[dict[str, Any]]
    table: Any = None
    """The run's :class:`~fairprobe.run.shards.FindingsTable` when ``findings`` hold only the pairing's
    columns; whole findings are read from it by id for the cases that are shown."""

    def whole(self, ids: set[str]) -> dict[str, dict[str, Any]]:
        """Whole findings by id (from the shards when only columns were loaded)."""
        if self.table is None:
            return {f["id"]: f for f in self.findings if f["id"] in ids}
        import pyarrow as pa
        import pyarrow.compute as pc

        rows = self.table.rows(pc.field("id").isin(pa.array(sorted(ids), pa.string())), needs=["id"])
        return {f["id"]: f for f in rows}


def load_run(folder: Path) -> LoadedRun:
    """A finished or partial run folder's spec and findings (a live run is refused)."""
    from fairprobe.run.folder import open_locked
    from fairprobe.run.shards import SHARDS_DIR, FindingsTable, shard_files
    from fairprobe.technique.registry import get as get_technique

    if not folder.is_dir() or not (folder / "run.db").is_file():
        raise UsageError(f"{folder} is not a fairprobe run folder (it has no run.db); give two run folders")
    # A live run is refused; other comparisons of this run read it beside this one (shared lock).
    with open_locked(folder, shared=True) as store:
        name = store.get_meta("technique")
        if name is None:
            raise RunStateError(f"{folder}/run.db records no run; give two finished run folders")
        technique = get_technique(name)
        spec = json.loads(store.get_meta("spec_json") or "{}")
        inputs = json.loads(store.get_meta("inputs") or "{}")
        verdict_settings = json.loads(store.get_meta("verdict_settings") or "{}")
        complete = store.get_meta("finished") is not None and not store.get_meta("stopped")
        table = None
        if technique.finding_schema is not None:
            table = FindingsTable.from_files(shard_files(folder / SHARDS_DIR), technique.finding_schema)
            columns = technique.pairing.columns if technique.pairing is not None else ()
            findings = table.columns(list(columns)).to_pylist() if columns else list(table)
            table = table if columns else None
        else:
            findings = list(store.iter_findings())
    block = technique.block.model_validate({**spec.get("block", {}), **verdict_settings})
    return LoadedRun(folder, name, spec, inputs, technique.model_uri(block), complete, findings, table)


def _different_inputs(base: LoadedRun, new: LoadedRun, pairing: Pairing, ignore: frozenset[str]) -> list[str]:
    """Why the two runs are not over the same inputs (empty when they are)."""
    why = []
    skip = set(pairing.same_inputs_except) | ignore
    b_block = {k: v for k, v in base.spec.get("block", {}).items() if k not in skip}
    n_block = {k: v for k, v in new.spec.get("block", {}).items() if k not in skip}
    changed = sorted(k for k in set(b_block) | set(n_block) if b_block.get(k) != n_block.get(k))
    if changed:
        why.append(f"settings differ: {', '.join(changed)}")
    if base.spec.get("seed") != new.spec.get("seed"):
        why.append(f"seeds differ ({base.spec.get('seed')} and {new.spec.get('seed')})")
    strip = {k.split("=", 1)[0]: v for k, v in base.inputs.items()}
    other = {k.split("=", 1)[0]: v for k, v in new.inputs.items()}
    files = sorted(k for k in set(strip) | set(other) if strip.get(k) != other.get(k))
    if files:
        why.append(f"the content of input files differs ({', '.join(files)})")
    return why


@dataclass
class Comparison:
    metrics: dict[str, Any]
    results: dict[str, dict[str, PairedResult]]
    verdicts: dict[str, dict[str, str]]
    pairs: list[dict[str, Any]]
    """One row per paired case: key, slices, both findings' shown fields, outcomes, status."""
    verdict: Verdict
    base: LoadedRun
    new: LoadedRun


def compare_runs(
    base: LoadedRun, new: LoadedRun, *, thresholds: list[Any] | None = None, seed: int = 0
) -> Comparison:
    from fairprobe.judge.thresholds import Threshold
    from fairprobe.technique.registry import get as get_technique

    if base.technique != new.technique:
        raise UsageError(
            f"{base.folder} is a {base.technique} run and {new.folder} a {new.technique} run; compare two "
            "runs of the same technique"
        )
    technique = get_technique(base.technique)
    pairing: Pairing | None = technique.pairing
    if pairing is None:
        raise UsageError(f"{base.technique} runs cannot be compared yet")

    def index(run: LoadedRun) -> dict[str, dict[str, Any]]:
        out = {}
        for f in run.findings:
            key = pairing.key(f)
            if key is not None:
                out[key] = f
        return out

    b_index, n_index = index(base), index(new)
    keys = [k for k in b_index if k in n_index]
    cases = max(len(b_index), len(n_index))
    valid_keys = [k for k in keys if not (pairing.invalid(b_index[k]) or pairing.invalid(n_index[k]))]
    invalid_pairs = len(keys) - len(valid_keys)

    results: dict[str, dict[str, PairedResult]] = {}
    verdicts: dict[str, dict[str, str]] = {}
    for outcome in pairing.outcomes:
        by_slice: dict[str, list[str]] = {}
        for k in valid_keys:
            if outcome.value(b_index[k]) is None or outcome.value(n_index[k]) is None:
                continue
            for s in pairing.slices(b_index[k]):
                by_slice.setdefault(s, []).append(k)
        per: dict[str, PairedResult] = {}
        for s, members in sorted(by_slice.items(), key=lambda kv: (kv[0] != "all", kv[0])):
            b = np.array([outcome.value(b_index[k]) for k in members])
            n = np.array([outcome.value(n_index[k]) for k in members])
            clusters = [pairing.cluster(b_index[k]) for k in members]
            test = paired_binary if outcome.kind == "binary" else paired_continuous
            per[s] = test(b, n, clusters, seed=seed)
        for s, p in zip(per, holm([r.p for r in per.values()]), strict=True):
            per[s].p_adjusted = p
        results[outcome.name] = per
        verdicts[outcome.name] = {s: slice_verdict(r, outcome.higher_is_worse) for s, r in per.items()}

    intervals = _compare_intervals(pairing, b_index, n_index, valid_keys)
    regressed = sum(v == "regressed" for per in verdicts.values() for v in per.values())
    improved = sum(v == "improved" for per in verdicts.values() for v in per.values())
    if intervals is not None:
        regressed += intervals["worse"] > 0
        improved += intervals["better"] > 0 and not intervals["worse"]
    metrics: dict[str, Any] = {
        **invalid_fields(invalid_pairs, len(keys)),
        "paired": len(keys),
        "judged": sum(
            any(o.value(b_index[k]) is not None and o.value(n_index[k]) is not None for o in pairing.outcomes)
            for k in valid_keys
        ),
        "cases": cases,
        "paired_share": (len(keys) / cases) if cases else None,
        "base_only": len(set(b_index) - set(n_index)),
        "new_only": len(set(n_index) - set(b_index)),
        "regressed": regressed,
        "improved": improved,
        "alpha": ALPHA,
        **({"intervals": intervals} if intervals is not None else {}),
        "delta": {name: {s: r.delta for s, r in per.items()} for name, per in results.items()},
        "slices": {
            name: {s: {**r.to_json(), "verdict": verdicts[name][s]} for s, r in per.items()}
            for name, per in results.items()
        },
    }
    inconclusive = []
    not_inputs = {"name", *verdict_only_fields(technique.block), *technique.block.execution_only}
    why = _different_inputs(base, new, pairing, frozenset(not_inputs))
    if why:
        inconclusive.append(
            f"the two runs were not over the same inputs ({'; '.join(why)}), so their differences "
            "cannot be told apart from the models'; run both models on the same spec"
        )
    if cases and len(keys) < MIN_PAIRED_SHARE * cases:
        inconclusive.append(
            f"only {len(keys)} of {cases} test cases ({len(keys) / cases:.0%}) appear in both runs, "
            f"fewer than {MIN_PAIRED_SHARE:.0%}; finish both runs (a re-run resumes) over the same inputs"
        )
    for run in (base, new):
        if not run.complete:
            inconclusive.append(f"{run.folder} is an incomplete run; finish it (re-run its command) first")
    gates = [Threshold.parse(DEFAULT_GATE), *(thresholds or [])]
    from fairprobe.compare.conditions import explainer  # a failed condition in words, not a metric path

    verdict = decide(metrics, gates, inconclusive_reasons=inconclusive, explain=explainer(metrics, pairing))
    pairs = _pair_rows(pairing, b_index, n_index, valid_keys, keys)
    _add_shown(pairing, pairs, b_index, n_index, base, new)
    return Comparison(metrics, results, verdicts, pairs, verdict, base, new)


def _compare_intervals(
    pairing: Pairing, b_index: dict[str, Any], n_index: dict[str, Any], keys: list[str]
) -> dict[str, Any] | None:
    """Interval against interval (certified bounds): a case is worse when the new interval lies
    wholly above the base one, better when wholly below, else the two overlap (no certain change)."""
    if pairing.interval is None:
        return None
    counts = {"worse": 0, "better": 0, "overlap": 0, "cases": []}
    for k in keys:
        b, n = pairing.interval(b_index[k]), pairing.interval(n_index[k])
        if b is None or n is None:
            continue
        status = "worse" if n[0] > b[1] else "better" if n[1] < b[0] else "overlap"
        counts[status] += 1
        counts["cases"].append({"case": k, "base": list(b), "new": list(n), "status": status})
    return counts


def _pair_rows(
    pairing: Pairing,
    b_index: dict[str, dict[str, Any]],
    n_index: dict[str, dict[str, Any]],
    valid_keys: list[str],
    keys: list[str],
) -> list[dict[str, Any]]:
    valid = set(valid_keys)
    rows = []
    for k in keys:
        b, n = b_index[k], n_index[k]
        row: dict[str, Any] = {
            "id": k,
            "slices": pairing.slices(b),
            "base": pairing.show(b),
            "new": pairing.show(n),
        }
        if k not in valid:
            row["status"] = "invalid"
        else:
            changes = {}
            for outcome in pairing.outcomes:
                bv, nv = outcome.value(b), outcome.value(n)
                row[f"base_{outcome.name}"], row[f"new_{outcome.name}"] = bv, nv
                if bv is None or nv is None or bv == nv:
                    continue
                worse = (nv > bv) if outcome.higher_is_worse else (nv < bv)
                changes[outcome.name] = "worse" if worse else "better"
            row["status"] = (
                "became worse"
                if "worse" in changes.values()
                else ("became better" if changes else "unchanged")
            )
            row["changes"] = changes
        rows.append(row)
    return rows


MAX_SHOWN = 2000
"""Changed cases whose text and answers are read and written out (the rest are counted)."""


def _add_shown(
    pairing: Pairing,
    pairs: list[dict[str, Any]],
    b_index: dict[str, dict[str, Any]],
    n_index: dict[str, dict[str, Any]],
    base: LoadedRun,
    new: LoadedRun,
) -> None:
    """Text and answers of both models for the cases that changed, worse first."""
    changed = [p for p in pairs if p.get("status") == "became worse"]
    changed += [p for p in pairs if p.get("status") == "became better"]
    changed = changed[:MAX_SHOWN]
    b_whole = base.whole({b_index[p["id"]]["id"] for p in changed})
    n_whole = new.whole({n_index[p["id"]]["id"] for p in changed})
    for p in changed:
        b = b_whole.get(b_index[p["id"]]["id"])
        n = n_whole.get(n_index[p["id"]]["id"])
        if b is not None and n is not None:
            p["base"], p["new"] = pairing.show(b), pairing.show(n)
