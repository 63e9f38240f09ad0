"""labsim: an IR-to-hardware simulator that draws the labsim book.

    Python function ──trace──▶ Graph ──passes──▶ optimised Graph + FusionPlan ──lower──▶ Program (kernels)
                                                        └──▶ roofline · host ⇄ device runtime · ...

The package is laid out by stage, one floor per folder; a floor imports only the floors below it
(``tests/test_layout.py`` keeps it so). ``labsim/README.md`` is the map.

    support/   lookup, plain tables                         (imports nothing of labsim)
    core/      dtypes, ShapeDtype, the op table, the IR, tracing, evaluate
    hardware/  chips, links, presets with sources           (core)
    frontend/  labsim.numpy (lnp), nn, autodiff             (core)
    compiler/  passes, fusion, lowering, codegen, buffers   (core, hardware)
    machines/  events, roofline cost, host runtime          (compiler, hardware, core)
    models/    transformer accounting, counting             (everything above but viz)
    peers/     parity with XLA and PyTorch
    viz/       the faces of every figure                    (reads everything; imported by none)

Public API (see DESIGN.md)::

    import labsim as ls
    import labsim.numpy as lnp
    g = ls.trace(f, ls.ShapeDtype((1024, 1024), "float32"), ...)
    out = ls.evaluate(g, x, y, z)
    prog = ls.compile(g)
    ls.grad(f)
"""
from __future__ import annotations

import sys as _sys

from . import core, hardware
from .core import dtypes, ops
from .core.avals import ShapeDtype, ShapeError, TraceError
from .core.dtypes import DtypeError
from .core.interpreter import evaluate
from .core.ir import Graph, Literal, Node, Var, VerifyError
from .core import pytree as tree_util
from .core.pytree import TreeDef, tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten
from .core.ops import Op, OpKind
from .core.trace import Tracer, trace
from .frontend import numpy, nn, autodiff  # numpy installs the Tracer operators; nn registers composites
from .frontend.autodiff import grad, value_and_grad, vjp
from .hardware import Chip, ChipKind, Link, ExecUnit
from .compiler import blocks, passes
from .compiler.buffers import assign_buffers
from .compiler.kernel import Kernel, KernelKind, Launch
from .compiler.lower import lower
from .compiler.pipeline import PlanLostError, compile
from .compiler.program import Program
from .machines import host, roofline as cost
from .machines import simt, systolic
from .machines import tiling, tpu
from .machines import collectives, inflight, splitk
from .machines.events import HOST_CHIP, Direction, Event, EventKind, Trace, UnitId, UnitKind
from .support.errors import ArgumentError, ArgumentTypeError, LabsimError
from .machines.roofline import Bound, KernelCost, OutOfMemory, OutOfMemoryError, kernel_cost, memory_check
from .machines.program_cost import ProgramCost, estimate
from .machines.runtime import RunResult, simulate
from .models import counting, llm, serving
from .peers import parity
from .importers import ImportUnsupportedError, MissingPackageError, from_jax, from_torch, torch_arguments
from .support.tables import Table

# The short names the book and its readers use (``import labsim.numpy as lnp``, ``ls.passes``, ...)
# stand for the modules in their floors: one module object under two names, not a copy.
for _name, _mod in {"numpy": numpy, "nn": nn, "autodiff": autodiff, "ops": ops, "dtypes": dtypes,
                    "passes": passes, "blocks": blocks, "tree_util": tree_util, "cost": cost, "host": host,
                    "counting": counting, "llm": llm, "serving": serving, "parity": parity, "simt": simt, "systolic": systolic,
                    "tiling": tiling, "tpu": tpu, "collectives": collectives,
                    "inflight": inflight, "splitk": splitk}.items():
    _sys.modules[f"{__name__}.{_name}"] = _mod
del _name, _mod

__version__ = "0.1.0"

__all__ = [
    "ShapeDtype", "Graph", "Node", "Var", "Literal", "ShapeError", "TraceError", "VerifyError", "DtypeError",
    "Op", "OpKind", "trace", "Tracer", "evaluate", "compile", "lower", "Program", "Kernel", "KernelKind", "Launch",
    "PlanLostError", "grad", "value_and_grad", "vjp",
    "TreeDef", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map", "tree_util",
    "Chip", "ChipKind", "Link", "ExecUnit", "hardware", "ops", "dtypes", "numpy", "nn",
    "estimate", "kernel_cost", "KernelCost", "ProgramCost", "Bound", "OutOfMemory", "OutOfMemoryError", "LabsimError", "ArgumentError", "ArgumentTypeError",
    "memory_check", "passes", "assign_buffers", "llm", "serving", "counting", "parity", "host", "blocks", "simt", "systolic",
    "tiling", "tpu", "collectives", "inflight", "splitk",
    "simulate", "RunResult", "Event", "EventKind", "Trace", "UnitId", "UnitKind", "Direction", "HOST_CHIP", "Table",
]

# Public names the chapters read (issue 20, item 6): a contraction kernel's tile plan on a chip, and the
# largest row the fusion pass keeps in one block; the GPU calibration plan and the measurements it is
# compared with (the accuracy page).
from .compiler.codegen import tile_plan  # noqa: E402
from .compiler.fusion import ROW_LIMIT  # noqa: E402
from .peers import calibration, measured  # noqa: E402
from .models import labs  # noqa: E402  (ls.labs: the chapters' kernel labs and their checker)
__all__ += ["tile_plan", "ROW_LIMIT", "calibration", "measured", "labs"]
__all__ += ["from_jax", "from_torch", "torch_arguments", "ImportUnsupportedError", "MissingPackageError"]

# The language labsim draws in (issue 25): ls.set_language("ko"), or ``with ls.language("ko"):``; an
# IPython kernel's outputs follow it (and carry a Korean rendition in the book build).
from .support import i18n  # noqa: E402
from .support.i18n import get_language, language, set_language  # noqa: E402
_sys.modules[f"{__name__}.i18n"] = i18n
i18n.install_hooks()
__all__ += ["i18n", "set_language", "get_language", "language"]
