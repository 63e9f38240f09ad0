"""``compile``: run the passes in order, keep every stage, lower the result to a :class:`Program`.

Introduced in "The journey of one matrix product" and studied in "The compiler at work".
"""
from __future__ import annotations

from typing import Sequence

from ..core.ir import Graph
from .lower import lower
from .passes import PIPELINE, Pass
from .program import Program


class PlanLostError(ValueError):
    """A pass after ``fuse`` changed the graph, so the fusion plan no longer describes it."""


def compile(g: Graph, passes: Sequence[Pass] | None = None, *, verify: bool | str = True) -> Program:  # noqa: A001
    """Run ``passes`` (each a pure ``Graph -> Graph`` function) in order, then lower to kernels.

    ``passes=None`` runs the default pipeline (:data:`labsim.compiler.passes.PIPELINE`); ``passes=[]`` runs none,
    so every op is its own kernel: the eager, operator-by-operator program.
    ``prog.stages`` holds ("traced", g) followed by (pass name, graph after it) for each pass.
    ``verify=True`` checks the graph it is given; ``verify="each"`` also checks the graph after every
    pass (the tests do this on random programs for every pass); ``False`` skips the checks.
    """
    if passes is None:
        passes = PIPELINE
    passes = list(passes)
    for i, p in enumerate(passes):
        if not callable(p):
            raise TypeError(f"compile: passes[{i}] is {type(p).__name__} {p!r:.40}, not a pass; passes are "
                            f"functions such as ls.passes.cse (the pipeline: {[q.__name__ for q in PIPELINE]})")
    if not isinstance(g, Graph):
        raise TypeError(f"compile: expected a Graph (from ls.trace), got {type(g).__name__}")
    if verify:
        g.verify()
    stages = [("traced", g)]
    cur = g
    lost_by = None  # the pass that invalidated the fusion plan, until fuse runs again
    for p in passes:
        prev, cur = cur, p(cur)
        name = getattr(p, "__name__", str(p))
        if not isinstance(cur, Graph):
            raise TypeError(f"compile: pass {name} returned {type(cur).__name__}, not a Graph")
        valid = cur.plan is not None and cur.plan.nodes is cur.nodes
        if prev.plan is not None and cur is not prev and not valid:
            lost_by = name
        elif valid:
            lost_by = None
        if verify == "each":
            cur.verify()
            if cur.plan is not None:
                cur.plan.verify(cur)
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
