"""What a Meta-Fair run tested, and why a requested relation or dimension produced no test (issue 39:
a requested attribute with no data is never silent).

Requested: the relations of ``mrs`` and the dimensions of ``dimensions`` (``all``: the 14 relations of
metafair.txt Table 1 and the five dimensions of the catalogue). Tested: those with at least one
execution with a usable verdict, with their tests and executions counted. A requested one without is
named with why: every execution was INVALID, every test was rejected before execution, the relation
applies to none of the dimensions run, the tests file has none, ``per_mr`` / ``limit`` left its tests
out, or the generator wrote none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fairprobe.methods.metafair.block import MetaFairBlock
from fairprobe.methods.metafair.relations import relations, select_dimensions, select_relations


def coverage(block: MetaFairBlock, findings: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"tested": {MR or dimension: counts}, "untested": {MR or dimension: why}, "relations": {...},
    "dimensions": {...}}`` for ``summary.json``; ``relations`` and ``dimensions`` list the ids of each
    kind, tested and untested."""
    executions = [f for f in findings if f.get("kind") == "test"]
    rejected = [f for f in findings if f.get("kind") == "invalid_test"]
    rels = select_relations(block.mrs)
    dims = select_dimensions(block.dimensions)
    on_file = _tests_on_file(block, {r.id for r in rels}, set(dims))
    tested: dict[str, dict[str, int]] = {}
    untested: dict[str, str] = {}
    kinds: dict[str, dict[str, list[str]]] = {
        "relations": {"tested": [], "untested": []},
        "dimensions": {"tested": [], "untested": []},
    }
    for kind, key, wanted in (("relations", "mr", [r.id for r in rels]), ("dimensions", "dimension", dims)):
        for name in wanted:
            ran = [f for f in executions if f.get(key) == name]
            decided = [f for f in ran if f.get("verdict") != "INVALID"]
            if decided:
                tested[name] = {
                    "tests": len({f["test_id"] for f in decided}),
                    "executions": len(decided),
                }
                kinds[kind]["tested"].append(name)
                continue
            kinds[kind]["untested"].append(name)
            refused = sum(f.get(key) == name for f in rejected)
            if ran:
                why = f"all {len(ran)} of its executions were INVALID (refused, unparsable, too long or unjudged)"
            elif refused:
                why = f"all {refused} of its tests were rejected before execution (listed among the findings)"
            else:
                why = _not_run(block, kind, name, rels, dims, on_file)
            untested[name] = f"{_title(kind, name)}: {why}"
    return {"tested": tested, "untested": untested, **kinds}


def _title(kind: str, name: str) -> str:
    if kind == "relations":
        return f"relation “{relations()[name].name}”"
    return "dimension"


def _not_run(
    block: MetaFairBlock,
    kind: str,
    name: str,
    rels: list[Any],
    dims: list[str],
    on_file: dict[tuple[str, str], int] | None,
) -> str:
    if kind == "relations":
        applies = [d for d in dims if d in relations()[name].dimensions]
        if not applies:
            return f"it applies to none of the dimensions run ({', '.join(dims)})"
        held = sum(n for (mr, _), n in (on_file or {}).items() if mr == name)
    else:
        if not any(name in r.dimensions for r in rels):
            return "none of the relations run applies to it"
        held = sum(n for (_, dim), n in (on_file or {}).items() if dim == name)
    if block.generator:
        return f"the generator {block.generator} wrote no valid test for it"
    source = f"the tests file {Path(block.tests).name}" if block.tests else "the shipped tests"
    if on_file is None:
        return f"no test of {source} for it ran"
    if not held:
        other = f"dimensions run ({', '.join(dims)})" if kind == "relations" else "relations run"
        return f"{source} {'has' if block.tests else 'have'} no test of it for the {other}"
    cut = [
        f"--per-mr {block.per_mr}" if block.per_mr else "",
        f"--limit {block.limit}" if block.limit else "",
    ]
    return f"{' and '.join(c for c in cut if c) or 'the selection'} left its {held} test(s) out"


def _tests_on_file(block: MetaFairBlock, mrs: set[str], dims: set[str]) -> dict[tuple[str, str], int] | None:
    """Valid tests of the tests file (or the shipped set) per (MR, dimension) among those run; ``None``
    for generated tests or a file that no longer reads."""
    if block.generator:
        return None
    from fairprobe.methods.metafair.schema import read_tests, shipped_tests_path

    try:
        tests, _ = read_tests(block.tests or shipped_tests_path())
    except Exception:  # noqa: BLE001 - the file may have moved since the run: say less
        return None
    out: dict[tuple[str, str], int] = {}
    for t in tests:
        if t.mr in mrs and t.dimension in dims:
            out[(t.mr, t.dimension)] = out.get((t.mr, t.dimension), 0) + 1
    return out
