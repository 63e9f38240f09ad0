"""Compiler passes: pure, named ``Graph -> Graph`` functions, listed once in :data:`PIPELINE`.

Introduced in "The compiler at work". Each pass lives in a module of its own in ``labsim.compiler``
(``decompose``, ``fold``, ``simplify``, ``cse``, ``layout``, ``dce``, ``fusion``); this module is the
one place that names them and their order. Each pass returns a new graph (the old one is untouched), or
the very same graph when it has nothing to do, and keeps the program's meaning: ``ls.evaluate`` gives the
same result before and after (tested on random programs). ``ls.compile(g)`` runs :data:`PIPELINE` in
order and records every intermediate graph in ``prog.stages``; ``ls.compile(g, passes=[...])`` runs the
passes you choose.
"""
from __future__ import annotations

from typing import Callable

from ..core.ir import Graph
from . import simplify as _simplify_module
from .cse import cse
from .dce import dce
from .decompose import decompose
from .fold import MAX_FOLD_ELEMENTS, constant_fold
from .fusion import FusionPlan, Reason, fuse, fusion_plan
from .layout import fold_transpose
from .simplify import simplify

Pass = Callable[[Graph], Graph]

PIPELINE: tuple[Pass, ...] = (decompose, constant_fold, simplify, cse, fold_transpose, dce, fuse)
"""The default pipeline ``ls.compile`` runs, in order."""

PASSES: dict[str, Pass] = {p.__name__: p for p in PIPELINE}

SIMPLIFY_RULES = _simplify_module.RULES
"""The pattern → rewrite rules of :func:`simplify`, in the order it tries them."""
simplify_rules_table = _simplify_module.table

__all__ = ["PIPELINE", "PASSES", "Pass", "decompose", "simplify", "constant_fold", "cse", "fold_transpose", "dce",
           "fuse", "fusion_plan", "FusionPlan", "Reason", "SIMPLIFY_RULES", "simplify_rules_table", "MAX_FOLD_ELEMENTS"]
