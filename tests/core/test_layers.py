"""The package's import graph has layers: no import circle anywhere in the package, the core never
imports a technique package (techniques plug in through the registry's entry points), a technique
builds on the contract (:mod:`fairprobe.technique`) and core packages only, never on the run engine's
runner, the command line's app or another technique, and the package root stays a handful of modules.

Every ``import`` / ``from`` statement counts, at module level and inside functions (a function-level
import is a dependency too, only a later one); imports under ``if TYPE_CHECKING:`` are left out, as
they never run."""

from __future__ import annotations

import ast
from pathlib import Path

import fairprobe

SRC = Path(fairprobe.__file__).parent
PACKAGE = "fairprobe"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def resolve(name: str) -> str:
    """The project module ``name`` stands for: itself, or its longest parent that is a module (an
    attribute such as ``fairprobe.technique.spec.Threshold`` is in ``fairprobe.technique.spec``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def imports_of(module: str) -> set[str]:
    """Project modules ``module`` imports at run time (TYPE_CHECKING blocks skipped)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    found.add(resolve(alias.name))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] == PACKAGE:
                for alias in node.names:
                    found.add(resolve(f"{base}.{alias.name}"))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(module)
    found.discard("")
    return found


def is_core(module: str) -> bool:
    return not (module == f"{PACKAGE}.methods" or module.startswith(f"{PACKAGE}.methods."))


GRAPH = {m: imports_of(m) for m in MODULES}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle in ``graph`` as a list of modules (first == last), or ``None``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := dfs(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := dfs(node)):
            return cycle
    return None


def test_the_graph_is_read() -> None:
    # the parser sees module-level and function-level imports, and resolves names to modules
    assert "fairprobe.errors" in GRAPH["fairprobe.technique.registry"]
    assert "fairprobe.run.runner" in GRAPH["fairprobe.cli.commands"]  # imported inside commands
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_circle_among_core_modules() -> None:
    core = {m: {d for d in deps if is_core(d)} for m, deps in GRAPH.items() if is_core(m)}
    cycle = find_cycle(core)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_core_never_imports_a_technique() -> None:
    bad = {m: sorted(d for d in deps if not is_core(d)) for m, deps in GRAPH.items() if is_core(m)}
    bad = {m: deps for m, deps in bad.items() if deps}
    assert not bad, f"core modules importing technique packages: {bad}"


def test_no_import_circle_anywhere() -> None:
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def technique_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "methods" else None


def test_a_technique_builds_on_the_contract_not_the_engine() -> None:
    # a technique's own sub-command (its cli module) builds its options with fairprobe.cli.build
    forbidden = ("fairprobe.run.runner", "fairprobe.cli.commands", "fairprobe.api")
    bad = {}
    for module, deps in GRAPH.items():
        own = technique_of(module)
        if own is None:
            continue
        wrong = sorted(
            d
            for d in deps
            if d.startswith(forbidden) or (technique_of(d) is not None and technique_of(d) != own)
        )
        if wrong:
            bad[module] = wrong
    assert not bad, f"technique modules importing the runner, the CLI or another technique: {bad}"


def test_the_package_root_is_a_handful_of_modules() -> None:
    root = sorted(p.name for p in SRC.glob("*.py"))
    assert len(root) <= 12, f"{len(root)} modules directly in src/fairprobe: {root}"
