"""The core floor: the tensor IR and its executable meaning. Imports nothing above it.

``dtypes`` → ``avals`` (ShapeDtype) → ``ops`` (the op table) → ``ir`` (Var, Node, Graph, verify)
→ ``pytree`` (nested containers ↔ flat leaves) → ``trace`` (Tracer, bind, trace) → ``interpreter``
(evaluate, the reference semantics).
"""
from __future__ import annotations

from .avals import ShapeDtype, ShapeError, TraceError
from .dtypes import DtypeError
from .interpreter import evaluate
from .ir import Graph, Literal, Node, Var, VerifyError
from . import ops_movement  # noqa: F401  (registers the op table's data-movement rows)
from .ops import Op, OpKind
from .trace import Tracer, trace

__all__ = ["ShapeDtype", "ShapeError", "TraceError", "DtypeError", "Graph", "Literal", "Node", "Var",
           "VerifyError", "Op", "OpKind", "Tracer", "trace", "evaluate"]
