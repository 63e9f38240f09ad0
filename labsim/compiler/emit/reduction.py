"""Reduction kernels: one block per row of the first reduction; fused outputs written after it."""
from __future__ import annotations

import math

from ...core import ops
from ...core.ir import Var
from ...core.ops import OpKind
from ..isa import Imm, KernelIR, Label, Special, Pipe, ptx_type, reg_dtype
from .builder import _build
from .loop import _loop
from .values import _Lower


def _first_reduction(L: _Lower):
    order = []
    seen = set()

    def visit(a):
        a = L.resolve(a)
        if not isinstance(a, Var) or id(a) in seen or id(a) not in L.producer:
            return
        seen.add(id(a))
        n = L.producer[id(a)]
        for x in n.operands:
            visit(x)
        order.append(n)
    for o in L.k.outputs:
        visit(o)
    return [n for n in order if ops.get(n.op).kind is OpKind.REDUCTION]


def _reduction(L: _Lower) -> KernelIR:
    k = L.k
    reds = _first_reduction(L)
    if not reds:
        return _loop(L)
    n_out = reds[0].out.aval.size  # 0: an empty result, no block has work
    per = max(reds[0].operands[0].aval.size // max(n_out, 1), 1)
    threads = min(1024, max(32, 1 << (per - 1).bit_length()))
    L.k_block = threads
    b = L.b
    for idx in range(len(k.inputs) + len(k.outputs)):
        L.param_base(idx)
    L.uniform.add("%ctaid.x")
    row = Special.CTAID
    # the block's reductions, in order, cooperatively
    for r in reds:
        if r.out.aval.size != n_out:
            continue
        coords = L.unravel(row, r.out.aval.shape)
        key = ("val", id(r.out), tuple(L._k(c) for c in coords))
        if L.get(key) is None:
            L.put(key, L.reduction(r, coords, cooperative=True))
    for j, o in enumerate(k.outputs):
        size = o.aval.size
        shape = o.aval.shape
        split = next((s for s in range(len(shape) + 1) if math.prod(shape[:s]) == n_out), None) if n_out else None
        if size == n_out:
            lead = L.unravel(row, shape)
            skip = b.fresh_label("ONE")
            p = b.op("setp", "u32", Special.TID, Imm(0, "u32"), mod=("ne",), dst_type="pred")
            b.emit("bra", None, Label(skip), guard=p, pipe=Pipe.CONTROL, comment="thread 0 writes the row's result")
            L.push()
            L.store(j, o, lead)
            L.pop()
            b.label(skip)
        elif shape == reds[0].operands[0].aval.shape and n_out:
            # the reduction's own shape (softmax, layer_norm): the block's row = the kept dimensions,
            # its threads walk the reduced ones, so the row's reductions are the ones already computed
            red = reds[0]
            axes = tuple(red.params["axes"])
            keep = [i for i in range(len(shape)) if i not in axes]
            rshape = tuple(shape[a] for a in axes)
            kept = L.unravel(row, red.out.aval.shape)
            jr = b.reg("u32")
            b.emit("mov", jr, Special.TID, type="u32")
            top, end = b.fresh_label("OUT"), b.fresh_label("OUT_END")
            b.label(top)
            p = b.op("setp", "u32", jr, Imm(math.prod(rshape), "u32"), mod=("ge",), dst_type="pred")
            b.emit("bra", None, Label(end), guard=p, pipe=Pipe.CONTROL)
            L.push()
            full = [None] * len(shape)
            for a_, c_ in zip(axes, L.unravel(jr, rshape)):
                full[a_] = c_
            for a_, c_ in zip(keep, kept):
                full[a_] = c_
            L.store(j, o, tuple(full))
            L.pop()
            b.emit("add", jr, jr, Special.NTID, type="u32")
            b.emit("bra", None, Label(top), mod=("uni",), pipe=Pipe.CONTROL)
            b.label(end)
        elif split is not None:
            chunk = size // n_out
            lead = L.unravel(row, shape[:split])
            jr = b.reg("u32")
            b.emit("mov", jr, Special.TID, type="u32")
            top, end = b.fresh_label("OUT"), b.fresh_label("OUT_END")
            b.label(top)
            p = b.op("setp", "u32", jr, Imm(chunk, "u32"), mod=("ge",), dst_type="pred")
            b.emit("bra", None, Label(end), guard=p, pipe=Pipe.CONTROL)
            L.push()
            L.store(j, o, lead + L.unravel(jr, shape[split:]))
            L.pop()
            b.emit("add", jr, jr, Special.NTID, type="u32")
            b.emit("bra", None, Label(top), mod=("uni",), pipe=Pipe.CONTROL)
            b.label(end)
        else:  # no row structure: the blocks share the output element by element
            e = b.op("mad", "u32", Special.CTAID, Special.NTID, Special.TID, mod=("lo",))
            step = b.op("mul", "u32", Special.NCTAID, Special.NTID, mod=("lo",))
            top, end = b.fresh_label("ALL"), b.fresh_label("ALL_END")
            b.label(top)
            p = b.op("setp", "u32", e, Imm(size, "u32"), mod=("ge",), dst_type="pred")
            b.emit("bra", None, Label(end), guard=p, pipe=Pipe.CONTROL)
            L.push()
            L.store(j, o, L.unravel(e, shape))
            L.pop()
            b.emit("add", e, e, step, type="u32")
            b.emit("bra", None, Label(top), mod=("uni",), pipe=Pipe.CONTROL)
            b.label(end)
    b.emit("exit", pipe=Pipe.CONTROL)
    return _build(L, n_out, threads, 32 * 8 if any(reg_dtype(ptx_type(r.out.aval.dtype)).itemsize == 8 for r in reds)
                  else 32 * 4, f"one block per row ({n_out}), {per} elements each")
