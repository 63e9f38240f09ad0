"""labsim is laid out by stage, and a floor imports only the floors below it (DESIGN.md).

The import graph is read from the source (every ``import`` statement, including those inside
functions), so an import hidden in a function body cannot make a cycle or climb a floor unnoticed.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "labsim"

# floor -> the floors it may import (itself included). Top-level modules (labsim/__init__.py) see all.
ALLOWED = {
    "support": {"support"},
    "core": {"support", "core"},
    "hardware": {"support", "core", "hardware"},
    "frontend": {"support", "core", "frontend"},
    "compiler": {"support", "core", "hardware", "compiler"},
    "machines": {"support", "core", "hardware", "compiler", "machines"},
    "models": {"support", "core", "hardware", "frontend", "compiler", "machines", "models"},
    "peers": {"support", "core", "hardware", "frontend", "compiler", "machines", "models", "peers"},
    "viz": {"support", "core", "hardware", "frontend", "compiler", "machines", "models", "peers", "viz"},
}


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def resolve(mod: str, is_pkg: bool, node: ast.AST) -> list[str]:
    """The labsim modules an import statement in ``mod`` loads."""
    out = []
    if isinstance(node, ast.Import):
        out = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = mod.split(".") if is_pkg else mod.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        out = [target]
        for a in node.names:  # ``from . import ops`` imports the module labsim.core.ops
            if f"{target}.{a.name}" in MODULES:
                out.append(f"{target}.{a.name}")
    return [m for m in out if m == "labsim" or m.startswith("labsim.")]


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for mod, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for m in resolve(mod, path.name == "__init__.py", node):
                    while m not in MODULES and "." in m:  # ``from labsim.core.ir import Graph``
                        m = m.rsplit(".", 1)[0]
                    if m != mod:
                        deps.add(m)
        graph[mod] = deps
    return graph


def floor(mod: str) -> str | None:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ALLOWED else None


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle among modules (package __init__ files count as modules), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            # a module inside a package imports its package's __init__ implicitly; that edge is not a cycle
            if m.startswith(d + "."):
                continue
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if state.get(d) is None:
                found = visit(d)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if state.get(m) is None:
            found = visit(m)
            if found:
                return found
    return None


def test_every_module_lives_in_a_floor():
    stray = [m for m in MODULES if m != "labsim" and floor(m) is None]
    assert stray == [], f"modules outside the floors {sorted(ALLOWED)}: {stray}"


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    assert len(graph) > 30
    cycle = find_cycle({m: d for m, d in graph.items() if m != "labsim"})
    assert cycle is None, " → ".join(cycle)


def test_no_floor_imports_a_higher_one():
    bad = []
    for mod, deps in import_graph().items():
        f = floor(mod)
        if f is None:
            continue
        for d in deps:
            g = floor(d)
            if d == "labsim" or (g is not None and g not in ALLOWED[f]):
                bad.append(f"{mod} ({f}) imports {d} ({g or 'the top-level package'})")
    assert bad == []


def test_core_and_compiler_never_import_machines_or_viz():
    for mod, deps in import_graph().items():
        if floor(mod) in ("core", "compiler"):
            assert not {d for d in deps if floor(d) in ("machines", "viz")}, mod


def test_the_checks_can_fail():
    """The cycle finder and the floor rule see a planted violation."""
    assert find_cycle({"labsim.core.a": {"labsim.core.b"}, "labsim.core.b": {"labsim.core.a"}}) is not None
    assert find_cycle({"labsim.core.a": {"labsim.core"}, "labsim.core": {"labsim.core.a"}}) is None
    tree = ast.parse("from ..viz import plots\n")
    (node,) = tree.body
    assert resolve("labsim.core.ir", False, node) == ["labsim.viz", "labsim.viz.plots"]
    assert "viz" not in ALLOWED["core"]


@pytest.mark.parametrize("alias, real", [("numpy", "labsim.frontend.numpy"), ("nn", "labsim.frontend.nn"),
                                         ("passes", "labsim.compiler.passes"), ("llm", "labsim.models.llm"),
                                         ("serving", "labsim.models.serving"),
                                         ("ops", "labsim.core.ops"), ("cost", "labsim.machines.roofline"),
                                         ("host", "labsim.machines.host"), ("blocks", "labsim.compiler.blocks"),
                                         ("simt", "labsim.machines.simt"), ("tpu", "labsim.machines.tpu"),
                                         ("tiling", "labsim.machines.tiling"), ("systolic", "labsim.machines.systolic"),
                                         ("collectives", "labsim.machines.collectives")])
def test_short_names_are_the_modules_in_their_floors(alias, real):
    import importlib
    assert importlib.import_module(f"labsim.{alias}") is importlib.import_module(real)


#: plotting and display libraries: only the figures floor (labsim/viz) may import them
PLOTTING = {"plotly", "ipywidgets", "graphviz", "matplotlib", "PIL", "IPython"}


def external_imports(path: Path) -> set[str]:
    """The top-level names of the non-labsim packages a module imports (inside functions too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out - {"labsim"}


def test_only_viz_imports_a_plotting_library():
    bad = [f"{mod} imports {sorted(external_imports(p) & PLOTTING)}" for mod, p in MODULES.items()
           if floor(mod) != "viz" and external_imports(p) & PLOTTING]
    assert bad == []
    # the check sees what it looks for: viz itself imports plotly and matplotlib (the print face)
    viz = set().union(*(external_imports(p) for m, p in MODULES.items() if floor(m) == "viz"))
    assert {"plotly", "matplotlib"} <= viz


def test_import_labsim_viz_does_not_load_matplotlib():
    """matplotlib is imported lazily, inside the print face's functions: ``import labsim.viz`` stays fast."""
    import subprocess
    import sys
    code = "import sys, labsim, labsim.viz; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PKG.parent)
    assert out.stdout.strip() == "False"
