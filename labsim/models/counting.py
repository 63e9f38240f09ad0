"""Counting helpers: FLOPs by op kind, BLAS levels, matmul intensity, the cost of backprop.

Introduced in "Counting FLOPs and bytes". Every helper reads the op registry through a traced graph or a
compiled program, so the numbers are the ones the rest of labsim uses.
"""
from __future__ import annotations
from ..support.errors import ArgumentError

from dataclasses import dataclass
from typing import Callable

from ..compiler.passes import dce
from ..compiler.pipeline import compile as _compile
from ..core import ops
from ..core.avals import ShapeDtype
from ..core.dtypes import itemsize
from ..core.ir import Graph
from ..core.ops import OpKind
from ..core.trace import trace
from ..frontend import numpy as lnp
from ..frontend.autodiff import value_and_grad
from .llm import _positive_int


def flops_by_kind(g: Graph) -> dict[str, int]:
    """FLOPs of a graph's nodes, summed per op kind (composites count their decomposition)."""
    out: dict[str, int] = {}
    for n in g.nodes:
        opdef = ops.get(n.op)
        f = opdef.count_flops(tuple(a.aval for a in n.operands), n.out.aval, n.params)
        out[opdef.kind.value] = out.get(opdef.kind.value, 0) + f
    return out


def matmul_flops(g: Graph) -> int:
    """FLOPs of the contractions only (PyTorch's FLOP-counter convention)."""
    return flops_by_kind(g).get(OpKind.CONTRACTION.value, 0)


def total_flops(g: Graph) -> int:
    return sum(flops_by_kind(g).values())


@dataclass(frozen=True)
class BlasCost:
    level: int
    name: str
    flops: int
    bytes: int

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes


def blas(level: int, n: int, dtype="float32") -> BlasCost:
    """Work and traffic of the classic example of each BLAS level at size n, counted by labsim:
    level 1 AXPY (y = a·x + y), level 2 GEMV (y = A·x), level 3 GEMM (C = A·B), all n-sized."""

    if isinstance(level, bool) or level not in (1, 2, 3):
        raise ArgumentError(f"blas: BLAS has levels 1, 2 and 3, not {level!r}")
    n = _positive_int(n, "n", "blas")
    s = lambda *shape: ShapeDtype(shape, dtype)
    if level == 1:
        name, g = "AXPY  y ← a·x + y", trace(lambda x, y: 2.0 * x + y, s(n), s(n))
    elif level == 2:
        name, g = "GEMV  y ← A·x", trace(lambda a, x: a @ x, s(n, n), s(n))
    elif level == 3:
        name, g = "GEMM  C ← A·B", trace(lambda a, b: a @ b, s(n, n), s(n, n))
    else:
        raise ArgumentError(f"BLAS has levels 1, 2 and 3, not {level}")
    prog = _compile(g)
    return BlasCost(level, name, prog.flops, prog.bytes)


def matmul_intensity(m: int, n: int, k: int, dtype="bfloat16") -> float:
    """FLOP per byte of (M×K)·(K×N): 2MNK / (bytes of A, B and C), each moved once."""
    m, n, k = (_positive_int(v, name, "matmul_intensity") for v, name in ((m, "m"), (n, "n"), (k, "k")))
    return 2 * m * n * k / ((m * k + k * n + m * n) * itemsize(dtype))


def backprop_cost(f: Callable, *specs: ShapeDtype, argnums=None) -> dict[str, int]:
    """Matrix-product FLOPs of ``f``'s forward pass and of forward + backward (gradients w.r.t. all
    arguments unless ``argnums`` is given), both traced by labsim."""

    argnums = tuple(range(len(specs))) if argnums is None else argnums
    loss = lambda *a: lnp.sum(f(*a))
    fwd = trace(f, *specs)
    both = dce(trace(value_and_grad(loss, argnums), *specs))
    return {"forward": matmul_flops(fwd), "forward+backward": matmul_flops(both)}


__all__ = ["flops_by_kind", "matmul_flops", "total_flops", "BlasCost", "blas", "matmul_intensity", "backprop_cost"]
