"""Loop and copy kernels: one thread per output element."""
from __future__ import annotations

from ...core import ops
from ...core.ir import Var
from ...core.ops import Op, OpKind
from ..isa import Imm, KernelIR, Label, Pipe
from .builder import _build, _global_index
from .values import _Lower


def _loop(L: _Lower) -> KernelIR:
    k = L.k
    outs = k.outputs
    sizes = [o.aval.size for o in outs]
    n = max(sizes)
    threads = 256
    grid = max(1, -(-n // threads))
    L.k_block = threads
    b = L.b
    for idx in range(len(k.inputs)):
        L.param_base(idx)
    for j in range(len(outs)):
        L.param_base(len(k.inputs) + j)
    i = _global_index(L, threads)
    p = b.op("setp", "u32", i, Imm(n, "u32"), mod=("ge",), dst_type="pred")
    b.emit("bra", None, Label("DONE"), guard=p, pipe=Pipe.CONTROL, comment="threads past the end do nothing")
    for j, (o, size) in enumerate(zip(outs, sizes)):
        skip = None
        if size < n:
            skip = b.fresh_label("SKIP")
            q = b.op("setp", "u32", i, Imm(size, "u32"), mod=("ge",), dst_type="pred")
            b.emit("bra", None, Label(skip), guard=q, pipe=Pipe.CONTROL)
            L.push()
        coords = L.unravel(i, o.aval.shape)
        # loads first: every input read at this thread's own element (reached from the output through
        # element-wise ops of the output's shape only)
        if j == 0:
            for v in _own_element_inputs(L, o):
                L.load(v, coords)
        L.store(j, o, coords)
        if skip:
            L.pop()
            b.label(skip)
    b.label("DONE")
    b.emit("exit", pipe=Pipe.CONTROL)
    return _build(L, grid, threads, 0, "one thread per output element")


def _own_element_inputs(L: _Lower, out: Var) -> list:
    """Kernel inputs that the output's element i reads at element i, in the kernel's input order."""
    shape = out.aval.shape
    found: set[int] = set()
    seen: set[int] = set()
    stack = [L.resolve(out)]
    while stack:
        a = stack.pop()
        if not isinstance(a, Var) or id(a) in seen:
            continue
        seen.add(id(a))
        if id(a) in L.in_param:
            found.add(id(a))
            continue
        n = L.producer.get(id(a))
        if n is None or ops.get(n.op).kind is not OpKind.ELEMENTWISE or n.op == Op.IOTA:
            continue
        if n.op == Op.SELECT and L.select_as == "branch":
            stack.append(L.resolve(n.operands[0]))
            continue
        for x in n.operands:
            x = L.resolve(x)
            if isinstance(x, Var) and x.aval.shape == shape:
                stack.append(x)
    return [v for v in L.k.inputs if id(v) in found]
