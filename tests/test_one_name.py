"""One name per idea (issue 20, item 5): labsim once had three classes called ``Unit`` (the chip's
execution units, an instruction's issue pipe, and a trace lane's kind), two public ``listing``
functions (the kernel IR printed, and a contraction's tile plan printed) and two ``stream_time`` closed
forms. Each idea now has one name and one home; this test fails if a duplicate comes back."""
from __future__ import annotations

import ast
import collections

import pytest

import labsim as ls
from conftest import ROOT

LABSIM = ROOT / "labsim"


def _top_level_names():
    """(kind, name) -> the modules (paths relative to the repository) that define it at top level."""
    found = collections.defaultdict(list)
    for path in sorted(LABSIM.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                found["class", node.name].append(path.relative_to(ROOT).as_posix())
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found["def", node.name].append(path.relative_to(ROOT).as_posix())
    return found


NAMES = _top_level_names()

# each idea, its one name and the one module that defines it
ONE_HOME = {
    ("class", "ExecUnit"): "labsim/hardware/chip.py",  # a chip's matrix unit or vector lanes
    ("class", "Pipe"): "labsim/compiler/instr.py",  # the SM pipe one instruction issues to
    ("class", "UnitKind"): "labsim/machines/events.py",  # the kind of a lane in a trace
    ("def", "listing"): "labsim/compiler/emit/__init__.py",  # the kernel IR printed
    ("def", "tile_plan_text"): "labsim/compiler/codegen.py",  # a contraction's tile plan printed
    ("def", "stream_time"): "labsim/machines/stream.py",  # the host timeline of one stream, on ls.host
}


@pytest.mark.parametrize("kind,name", sorted(ONE_HOME), ids=lambda v: v)
def test_each_idea_has_one_home(kind, name):
    assert NAMES[kind, name] == [ONE_HOME[kind, name]], (
        f"{kind} {name} should be defined once, in {ONE_HOME[kind, name]}; found in {NAMES[kind, name]}")


def test_no_class_is_called_unit_again():
    assert NAMES["class", "Unit"] == [], (
        f"a class named Unit is back in {NAMES['class', 'Unit']}: name what it is (ExecUnit, Pipe, UnitKind)")
    assert not hasattr(ls, "Unit") and ls.ExecUnit.MATRIX.value == "matrix"


def test_the_walk_sees_the_modules():
    """The scan reads labsim's sources (a moved package would make the checks above pass vacuously)."""
    assert len({m for ms in NAMES.values() for m in ms}) > 50
    assert ("class", "Chip") in NAMES and ("def", "kernel_ir") in NAMES


def test_a_kernel_listing_is_the_ir_printed_or_the_tile_plan():
    from labsim.compiler import codegen, emit

    S = ls.ShapeDtype
    prog = ls.compile(ls.trace(lambda a, b: ls.nn.relu(a @ b) + 1.0, S((64, 64)), S((64, 64))), passes=[])
    dot, *rest = prog.kernels
    assert dot.listing_for("H100 SXM") == codegen.tile_plan_text(dot, "H100 SXM")
    assert emit.listing(dot, "H100 SXM") == ls.simt.kernel_ir(dot, "H100 SXM").render()
    for k in rest:
        assert k.listing == emit.listing(k) == ls.simt.kernel_ir(k, None).render()
    with pytest.raises(ls.ArgumentError, match=r"tile_plan_text: k='.*' is not a contraction kernel"):
        codegen.tile_plan_text(rest[0])
