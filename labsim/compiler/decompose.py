"""The ``decompose`` pass: composite ops (softmax, layer_norm, gelu, mean) become primitives.

As PyTorch's decompositions lower thousands of ATen ops to a few hundred core ones. The expansion
itself lives in the core (:func:`labsim.core.trace.expand_composites`), because ``grad`` needs it too.
"""
from __future__ import annotations

from ..core import ops
from ..core.ir import Graph
from ..core.trace import expand_composites


def decompose(g: Graph) -> Graph:
    """Expand composite ops (softmax, layer_norm, gelu, mean) into primitives, as PyTorch's
    decomposition lowers thousands of ATen ops to a few hundred core ones."""
    if not any(n.op in ops.COMPOSITE for n in g.nodes):
        return g
    return expand_composites(g)
