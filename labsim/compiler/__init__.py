"""The compiler floor: passes over the graph, fusion, lowering to kernels, buffer assignment.

Reads the core (and the hardware floor, for targets); never imports a machine or a figure. One module
per pass (``decompose``, ``fold``, ``simplify``, ``cse``, ``layout``, ``dce``, ``fusion``), named and
ordered in ``passes``; ``pipeline.compile`` runs them and ``lower`` cuts the result into kernels
(``kernel``) whose listings ``codegen`` writes; ``program`` holds the result, ``buffers`` plans its memory.
"""
from __future__ import annotations

from .kernel import Kernel, KernelKind, Launch
from .lower import lower
from .pipeline import PlanLostError, compile
from .program import Program

__all__ = ["Kernel", "KernelKind", "Launch", "lower", "compile", "PlanLostError", "Program"]
