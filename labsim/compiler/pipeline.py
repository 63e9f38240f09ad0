"""``compile``: run the passes in order, keep every stage, lower the result to a :class:`Program`.

Introduced in "The journey of one matrix product" and studied in "The compiler at work".
"""
from __future__ import annotations

from ..support.errors import ArgumentTypeError, LabsimError

import contextlib
import gc
from typing import Sequence

from ..core.ir import Graph, VerifyError
from .lower import lower
from .passes import PIPELINE, Pass
from .program import Program


class PlanLostError(LabsimError, ValueError):
    """A pass after ``fuse`` changed the graph, so the fusion plan no longer describes it."""


def _check_pass(name: str, before: Graph, after: Graph, full: bool) -> None:
    """A pass keeps the program's signature and leaves a valid graph. Nodes are immutable, so
    ``verify`` runs each new node's shape rule once; nodes a pass kept were checked already."""
    if after is before:
        return
    if after.in_avals != before.in_avals or after.out_avals != before.out_avals:
        sig = lambda g: f"({', '.join(a.short() for a in g.in_avals)}) -> ({', '.join(a.short() for a in g.out_avals)})"
        raise VerifyError(f"pass {name} changed the program's signature from {sig(before)} to {sig(after)}")
    try:
        after.verify()
        if full and after.plan is not None:
            after.plan.verify(after)
    except VerifyError as e:
        raise VerifyError(f"after pass {name}: {e}") from None


@contextlib.contextmanager
def _gc_paused():
    """Pause Python's cyclic garbage collector while compiling. A compile allocates hundreds of thousands of
    small acyclic objects (nodes, tuples, sets), and each allocation burst made the collector rescan every
    live graph: a quarter of a 10,000-op compile. Reference counting still frees everything at once; the
    collector runs again (at its usual thresholds) when the compile returns."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def compile(g: Graph, passes: Sequence[Pass] | None = None, *, verify: bool | str = True) -> Program:  # noqa: A001
    """Run ``passes`` (each a pure ``Graph -> Graph`` function) in order, then lower to kernels.

    ``passes=None`` runs the default pipeline (:data:`labsim.compiler.passes.PIPELINE`); ``passes=[]`` runs none,
    so every op is its own kernel: the eager, operator-by-operator program.
    ``prog.stages`` holds ("traced", g) followed by (pass name, graph after it) for each pass.
    ``verify=True`` (the default) checks the graph it is given and, after every pass, that the pass kept
    the program's signature and left a valid graph (cheap: only new nodes run their shape rules);
    ``verify="each"`` also checks the fusion plan after every pass; ``False`` skips the checks.
    """
    if passes is None:
        passes = PIPELINE
    passes = list(passes)
    for i, p in enumerate(passes):
        if not callable(p):
            raise ArgumentTypeError(f"compile: passes[{i}] is {type(p).__name__} {p!r:.40}, not a pass; passes are "
                            f"functions such as ls.passes.cse (the pipeline: {[q.__name__ for q in PIPELINE]})")
    if not isinstance(g, Graph):
        raise ArgumentTypeError(f"compile: expected a Graph (from ls.trace), got {type(g).__name__}")
    with _gc_paused():
        return _compile(g, passes, verify)


def _compile(g: Graph, passes: list, verify: bool | str) -> Program:
    if verify:
        g.verify()
    stages = [("traced", g)]
    cur = g
    lost_by = None  # the pass that invalidated the fusion plan, until fuse runs again
    for p in passes:
        prev, cur = cur, p(cur)
        name = getattr(p, "__name__", str(p))
        if not isinstance(cur, Graph):
            raise ArgumentTypeError(f"compile: pass {name} returned {type(cur).__name__}, not a Graph")
        valid = cur.plan is not None and cur.plan.nodes is cur.nodes
        if prev.plan is not None and cur is not prev and not valid:
            lost_by = name
        elif valid:
            lost_by = None
        if verify:
            _check_pass(name, prev, cur, full=verify == "each")
        stages.append((name, cur))
    if lost_by is not None:
        raise PlanLostError(
            f"pass {lost_by} rebuilt the graph after fuse had planned its kernels, so the fusion plan no "
            f"longer describes it. Put {lost_by} before fuse, or run fuse again after it "
            f"(passes=[..., {lost_by}, ls.passes.fuse]).")
    if cur.plan is not None:
        cur.plan.verify(cur)
    kernels, constants, alias = lower(cur)
    return Program(graph=cur, kernels=kernels, stages=tuple(stages), constants=constants, alias=alias)
