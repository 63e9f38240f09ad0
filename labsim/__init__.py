"""labsim: an IR-to-hardware simulator that draws the labsim book.

    Python function ──trace──▶ Graph ──passes──▶ optimised Graph ──lower──▶ Program (kernels)
                                                        └──▶ cost (roofline) · runtime (host ⇄ device) · ...

Public API (see DESIGN.md)::

    import labsim as ls
    import labsim.numpy as lnp
    g = ls.trace(f, ls.ShapeDtype((1024, 1024), "float32"), ...)
    out = ls.evaluate(g, x, y, z)
    prog = ls.compile(g)
    ls.grad(f)
"""
from __future__ import annotations

from . import counting, dtypes, hardware, llm, ops, parity, passes
from . import numpy  # noqa: F401  (installs the Tracer operators)
from . import nn  # noqa: F401  (registers composite ops)
from .autodiff import grad, value_and_grad, vjp
from .cost import Bound, KernelCost, OutOfMemory, OutOfMemoryError, ProgramCost, estimate, kernel_cost, memory_check
from .dtypes import DtypeError
from .events import Event, Trace
from .hardware import Chip, ChipKind, Link, Unit
from .buffers import assign_buffers
from .interpreter import evaluate
from .ir import Graph, Literal, Node, ShapeDtype, ShapeError, TraceError, Var, VerifyError
from .program import Kernel, KernelKind, Launch, Program, compile, lower
from .runtime import RunResult, simulate
from .tables import Table
from .trace import Tracer, trace

__version__ = "0.1.0"

__all__ = [
    "ShapeDtype", "Graph", "Node", "Var", "Literal", "ShapeError", "TraceError", "VerifyError", "DtypeError",
    "trace", "Tracer", "evaluate", "compile", "lower", "Program", "Kernel", "KernelKind", "Launch",
    "grad", "value_and_grad", "vjp",
    "Chip", "ChipKind", "Link", "Unit", "hardware", "ops", "dtypes",
    "estimate", "kernel_cost", "KernelCost", "ProgramCost", "Bound", "OutOfMemory", "OutOfMemoryError",
    "memory_check", "passes", "assign_buffers", "llm", "counting", "parity",
    "simulate", "RunResult", "Event", "Trace", "Table",
]
