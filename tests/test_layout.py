"""labsim is laid out by stage, and a floor imports only the floors below it (DESIGN.md).

The import graph is read from the source (every ``import`` statement, including those inside
functions), so an import hidden in a function body cannot make a cycle or climb a floor unnoticed.

Two rules of size and place: no labsim module is over 500 lines, and no chapter code cell builds a
Plotly figure by hand (``go.Figure``, ``make_subplots``, ``import plotly``): figures go through labsim.viz.
"""
from __future__ import annotations

import ast
import re
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
    # the reader's JAX or PyTorch program as a Graph: tracing and labsim.numpy only (JAX/PyTorch inside functions)
    "importers": {"support", "core", "frontend", "importers"},
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


# ---- rooms of a size to live in ------------------------------------------------------------------------
#: no labsim module may be longer than this: split it by what changes together (a package whose
#: ``__init__`` re-exports keeps the old import path working)
MAX_MODULE_LINES = 500


def long_modules(limit: int = MAX_MODULE_LINES, paths=None, root: Path = PKG.parent) -> list[str]:
    """``"path (N lines)"`` for every module over ``limit`` lines (paths relative to ``root``), longest first."""
    paths = MODULES.values() if paths is None else paths
    sizes = {p: len(p.read_text(encoding="utf-8").splitlines()) for p in paths}
    return [f"{p.relative_to(root)} ({n} lines)" for p, n in sorted(sizes.items(), key=lambda kv: -kv[1])
            if n > limit]


def test_no_labsim_module_is_over_500_lines():
    too_long = long_modules()
    assert too_long == [], (f"{len(too_long)} labsim modules are over {MAX_MODULE_LINES} lines: "
                            + "; ".join(too_long))


def test_the_module_length_check_can_fail(tmp_path):
    planted = [tmp_path / "at_limit.py", tmp_path / "over.py", tmp_path / "far_over.py"]
    for p, n in zip(planted, (MAX_MODULE_LINES, MAX_MODULE_LINES + 1, 2 * MAX_MODULE_LINES)):
        p.write_text("x = 1\n" * n)
    assert long_modules(paths=planted, root=tmp_path) == ["far_over.py (1000 lines)", "over.py (501 lines)"]
    assert len(long_modules(limit=50)) > 10  # it reads labsim's own modules: many are over 50 lines


# ---- chapters draw through labsim.viz ----------------------------------------------------------------
BOOK = PKG.parent
PAGES = sorted((BOOK / "chapters").glob("*.md")) + sorted((BOOK / "book").glob("*.md"))

#: what only labsim.viz may do: build a Plotly figure by hand
HAND_BUILT = [
    (re.compile(r"\bgo\s*\.\s*Figure\b"), "go.Figure"),
    (re.compile(r"\bmake_subplots\b"), "make_subplots"),
    (re.compile(r"^\s*(import\s+plotly\b|from\s+plotly\b)"), "import plotly"),
]


def code_cells(text: str):
    """(first line number, source) of every ``{code-cell}`` of a MyST page (fences of 3+ backticks or
    tildes); the cell's ``:option:`` lines and ``---`` front matter are part of the source."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(`{3,}|~{3,})\{code-cell\}", lines[i])
        if not m:
            i += 1
            continue
        fence, start = m.group(1), i + 1
        j = start
        while j < len(lines) and not re.fullmatch(re.escape(fence[0]) + "{%d,}\\s*" % len(fence), lines[j]):
            j += 1
        yield start + 1, "\n".join(lines[start:j])
        i = j + 1


def hand_built_figures(text: str) -> list[str]:
    """``"line N: what"`` for each line of a code cell that builds a Plotly figure by hand."""
    out = []
    for first, src in code_cells(text):
        for k, line in enumerate(src.splitlines()):
            code = line.split("#", 1)[0]
            found = [what for pattern, what in HAND_BUILT if pattern.search(code)]
            if found:
                out.append(f"line {first + k}: {', '.join(found)}")
    return out


def test_no_chapter_builds_a_plotly_figure_by_hand():
    """Every figure goes through labsim.viz: no ``go.Figure``, ``make_subplots`` or ``import plotly`` in a
    code cell of a chapter (chapters/*.md) or a book page (book/*.md)."""
    assert len(PAGES) > 10
    bad = {str(p.relative_to(BOOK)): hand_built_figures(p.read_text(encoding="utf-8")) for p in PAGES}
    bad = {k: v for k, v in bad.items() if v}
    assert bad == {}, (f"{sum(map(len, bad.values()))} hand-built figures in {len(bad)} pages; put a figure "
                       "helper in labsim.viz: " + "; ".join(f"{k} ({', '.join(v)})" for k, v in bad.items()))


def test_the_chapter_figure_check_can_fail():
    page = "\n".join([
        "Prose may say go.Figure() and show it in a plain block:", "```python", "fig = go.Figure()", "```",
        "```{code-cell} ipython3", ":tags: [hide-input]", "", "import plotly.graph_objects as go",
        "fig = go.Figure(go.Bar(x=[1], y=[2]))  # by hand", "from plotly.subplots import make_subplots",
        "# go.Figure() in a comment is fine", "```",
        "````{code-cell} ipython3", "viz.show(fig)", "```", "fig2 = go . Figure()", "````",
        "```{code-cell} ipython3", "fig = viz.bar(...)", "```",
    ])
    assert [first for first, _ in code_cells(page)] == [6, 14, 19]
    assert hand_built_figures(page) == ["line 8: import plotly", "line 9: go.Figure",
                                        "line 10: make_subplots, import plotly", "line 16: go.Figure"]


@pytest.mark.parametrize("name", ["labsim.numpy", "labsim.nn", "labsim.autodiff", "labsim.collectives",
                                  "labsim.machines.parallelism", "labsim.viz.printface"])
def test_a_sub_namespace_exports_its_api(name):
    """``__all__`` lists what a reader calls: each name exists, none is private, a star import brings
    exactly those names (not the modules and helpers the namespace imports for itself)."""
    import importlib
    mod = importlib.import_module(name)
    names = list(mod.__all__)
    assert len(names) == len(set(names)) and all(hasattr(mod, n) and not n.startswith("_") for n in names)
    ns: dict = {}
    exec(f"from {name} import *", ns)
    assert set(ns) - {"__builtins__"} == set(names)
