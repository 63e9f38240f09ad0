"""Lowering a kernel to the executable kernel IR (:mod:`labsim.compiler.isa`), and its listing.

Introduced in "Inside a GPU". Every kernel kind the compiler emits has a lowering here, and the
kernel's listing (``kernel.listing``) is the rendering of that IR, which ``ls.simt`` runs:

* **loop and copy kernels**: one thread per output element. ``i = %ctaid.x * %ntid.x + %tid.x``;
  threads with ``i`` past the end branch to the exit; ``i`` is split into coordinates (``div``/``rem``
  by the dimensions' sizes); each input's address is computed from the coordinates the fused data
  movement (broadcast, transpose, slice, reshape, concatenate) maps them to; loads come first, then the
  arithmetic in registers, then one store per output.
* **reduction kernels**: one block per element of the reduction's result (a "row"). Each thread walks
  the row with a stride of the block size, combining into a register; the warp combines its 32 values
  with five ``shfl.sync.bfly`` steps; lane 0 of each warp writes its partial to shared memory,
  ``bar.sync``; every warp reads the partials back and combines them again, so every thread holds the
  row's result (a second ``bar.sync`` frees the shared memory for the next reduction). A fused kernel
  (softmax, layer_norm) runs its reductions in order and then writes its outputs; a reduction needed
  at a coordinate that is not the block's row is recomputed by the thread that needs it (a plain loop).
* **contractions**: one block per tile of the output (the chip's tile plan,
  :func:`labsim.compiler.codegen.tile_plan`). Per step along K the block copies the A and B tiles to
  shared memory (Ampere: ``cp.async`` per thread; Hopper: one ``cp.async.bulk.tensor`` by the TMA;
  operands with a prologue: loads and stores by the threads), ``bar.sync``, then each warp (Ampere) or
  warpgroup (Hopper) issues the tile-level matrix instruction for its rows. The epilogue reads the
  accumulators, applies the fused element-wise ops and stores.

labsim's simplifications (not how a production compiler does it): no loop unrolling or vector loads;
accumulators of a contraction live in shared memory so that any thread can read them in the epilogue;
one instruction of the IR may stand for several hardware instructions of the same kind (a tile-level
``mma`` for the warp's ``mma.sync`` instructions; ``div.rn.f32`` for the division sequence).
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from ..core import alu, ops
from ..core.dtypes import ITEMSIZE
from ..core.ir import Literal, Node, Var
from ..core.ops import Op, OpKind
from ..core.trace import expand_composites, trace_decomposition
from ..hardware import Chip, ChipKind, get as get_chip
from .codegen import PSEUDO_IR, _contraction_listing, _plan
from .isa import Builder, Imm, KernelIR, Label, Param, Reg, Special, Unit, ptx_type, reg_dtype
from .kernel import Kernel, KernelKind, Launch

_COMBINE = {Op.REDUCE_SUM: "add", Op.REDUCE_MAX: "max", Op.REDUCE_MIN: "min"}
_COMBINE_OP = {o: c for o, (c, _) in alu.REDUCE.items()}

# What PTX runs where labsim's IR has one instruction for an op (the instruction computes the op's value
# as the ALU table does, so the machine agrees with ls.evaluate to the bit).
_PTX_NOTE = {
    Op.EXP: "exp: PTX multiplies by log2(e), then ex2.approx",
    Op.LOG: "log: PTX lg2.approx, then a multiply by ln 2",
    Op.LOGISTIC: "logistic: PTX ex2.approx, add 1, rcp.approx",
    Op.ERF: "erf: a libdevice function (__nv_erff), no single instruction",
    Op.POWER: "pow: a libdevice function (__nv_powf)",
}


def _rule(op: Op) -> tuple:
    """(mnemonic, modifiers, unit, note) of ``op``'s instruction, from the op table's ``ptx`` column."""
    name, *mod = ops.get(op).ptx.split(".")
    return name, tuple(mod), Unit.SFU if op in ops.TRANSCENDENTAL else Unit.ALU, _PTX_NOTE.get(op, "")


LOWERING: dict[Op, tuple] = {op: _rule(op) for op in (
    Op.ADD, Op.SUBTRACT, Op.MULTIPLY, Op.DIVIDE, Op.MAXIMUM, Op.MINIMUM, Op.NEGATE, Op.ABS, Op.EXP, Op.LOG,
    Op.TANH, Op.SQRT, Op.RSQRT, Op.LOGISTIC, Op.ERF, Op.POWER)}
"""Elementwise Op -> its instruction in the kernel IR; each instruction names its Op (``attrs["alu"]``)."""


class LoweringError(NotImplementedError):
    """A kernel this lowering does not handle (the message says which part)."""


def _identity(op: str, dtype: str):
    nd = reg_dtype(ptx_type(dtype))
    if op == Op.REDUCE_SUM:
        return 0
    big = float("inf") if nd.kind == "f" else (np.iinfo(nd).max if nd.kind in "iu" else True)
    small = float("-inf") if nd.kind == "f" else (np.iinfo(nd).min if nd.kind in "iu" else False)
    return small if op == Op.REDUCE_MAX else big


class _Lower:
    """The state of lowering one kernel: builder, parameters, memo of computed values (scoped)."""

    def __init__(self, k: Kernel, chip: Chip | None) -> None:
        self.k = k
        self.chip = chip
        self.b = Builder()
        self.producer: dict[int, Node] = {}
        self.alias: dict[int, object] = {}  # inner decomposition input -> outer atom; composite out -> inner out
        for n in k.nodes:
            self._add_node(n)
        given = list(k.param_names) if len(k.param_names) == len(k.inputs) + len(k.outputs) else []
        allv = (*k.inputs, *k.outputs)
        pn = [given[i] if given else f"buf{v.id}" for i, v in enumerate(allv)]
        names = pn[:len(k.inputs)]
        onames = [x + "_out" for x in pn[len(k.inputs):]]
        self.views = {id(a): b for a, b in k.views}
        self.params = [(nm, v.aval.dtype, v.aval.size) for nm, v in zip(names + onames, (*k.inputs, *k.outputs))]
        self.in_param = {id(v): i for i, v in enumerate(k.inputs)}
        self.base: dict[int, Reg] = {}
        self.scopes: list[dict] = [{}]
        self.uniform: set[str] = set()
        self.cooperative = False  # True while emitting top-level code of a reduction kernel

    # --- nodes and composites
    def _add_node(self, n: Node) -> None:
        if n.op in ops.COMPOSITE:
            g = expand_composites(trace_decomposition(n.op, tuple(a.aval for a in n.operands), n.params))
            for inner, outer in zip(g.inputs, n.operands):
                self.alias[id(inner)] = outer
            for m in g.nodes:
                self._add_node(m)
            self.alias[id(n.out)] = g.outputs[0]
            return
        self.producer[id(n.out)] = n

    def resolve(self, a):
        while isinstance(a, Var) and id(a) in self.alias and id(a) not in self.in_param:
            a = self.alias[id(a)]
        return a

    # --- memo (scoped: a value computed inside a loop body is not visible after the loop)
    def get(self, key):
        for s in reversed(self.scopes):
            if key in s:
                return s[key]
        return None

    def put(self, key, val):
        self.scopes[-1][key] = val
        return val

    def push(self):
        self.scopes.append({})

    def pop(self):
        self.scopes.pop()

    @staticmethod
    def _k(x):
        return ("i", x.value) if isinstance(x, Imm) else (x.name if isinstance(x, Reg) else str(x))

    def is_uniform(self, *xs) -> bool:
        return all(isinstance(x, Imm) or (isinstance(x, Reg) and x.name in self.uniform) or x is Special.CTAID
                   or x is Special.NTID or x is Special.NCTAID for x in xs)

    # --- index arithmetic (u32), folded and shared
    def iop(self, op: str, *srcs, comment: str = "", mod: tuple = ()) -> Imm | Reg:
        vals = [s.value if isinstance(s, Imm) else None for s in srcs]
        if all(v is not None for v in vals):
            a = vals
            r = {"add": lambda: a[0] + a[1], "mul": lambda: a[0] * a[1], "div": lambda: a[0] // a[1],
                 "rem": lambda: a[0] % a[1], "mad": lambda: a[0] * a[1] + a[2], "sub": lambda: a[0] - a[1]}[op]()
            return Imm(int(r), "u32")
        if op == "add":
            if vals[0] == 0:
                return srcs[1]
            if vals[1] == 0:
                return srcs[0]
        if op == "mul":
            if 0 in vals:
                return Imm(0, "u32")
            if vals[1] == 1:
                return srcs[0]
            if vals[0] == 1:
                return srcs[1]
        if op == "sub" and vals[1] == 0:
            return srcs[0]
        if op == "div" and vals[1] == 1:
            return srcs[0]
        if op == "rem" and vals[1] == 1:
            return Imm(0, "u32")
        if op == "mad":
            if vals[1] == 1:
                return self.iop("add", srcs[0], srcs[2])
            if vals[2] == 0:
                return self.iop("mul", srcs[0], srcs[1])
            if vals[0] == 0 or vals[1] == 0:
                return srcs[2]
        key = ("iop", op, mod, tuple(self._k(s) for s in srcs))
        hit = self.get(key)
        if hit is not None:
            return hit
        if op == "mad":
            mod = mod or ("lo",)
        if op == "mul":
            mod = mod or ("lo",)
        d = self.b.op(op, "u32", *srcs, mod=mod, comment=comment)
        if self.is_uniform(*srcs):
            self.uniform.add(d.name)
        return self.put(key, d)

    def unravel(self, flat, shape) -> tuple:
        if len(shape) == 0:
            return ()
        coords = []
        stride = 1
        strides = []
        for d in reversed(shape):
            strides.append(stride)
            stride *= d
        strides = strides[::-1]
        for i, (d, s) in enumerate(zip(shape, strides)):
            if d == 1:
                coords.append(Imm(0, "u32"))
                continue
            q = self.iop("div", flat, Imm(s, "u32"))
            coords.append(q if i == 0 else self.iop("rem", q, Imm(d, "u32")))
        return tuple(coords)

    def linear(self, coords, shape):
        acc = Imm(0, "u32")
        for c, d in zip(coords, shape):
            acc = self.iop("mad", acc, Imm(d, "u32"), c) if not (isinstance(acc, Imm) and acc.value == 0) else c
        return acc

    # --- values
    def param_base(self, idx: int) -> Reg:
        if idx not in self.base:
            name = self.params[idx][0]
            r = self.b.op("ld", "u64", Param(name, idx), mod=("param",), comment=f"address of {name}")
            self.uniform.add(r.name)
            self.base[idx] = r
        return self.base[idx]

    def address(self, idx: int, lin) -> Reg:
        isz = ITEMSIZE[self.params[idx][1]]
        base = self.param_base(idx)
        key = ("addr", idx, self._k(lin))
        hit = self.get(key)
        if hit is not None:
            return hit
        if isinstance(lin, Imm):
            if lin.value == 0:
                return base
            d = self.b.op("add", "u64", base, Imm(lin.value * isz, "u64"))
        else:
            d = self.b.op("mad", "u32", lin, Imm(isz, "u32"), base, mod=("wide",), dst_type="u64")
        if self.is_uniform(lin):
            self.uniform.add(d.name)
        return self.put(key, d)

    def load(self, var: Var, coords) -> Reg:
        key = ("val", id(var), tuple(self._k(c) for c in coords))
        hit = self.get(key)
        if hit is not None:
            return hit
        idx = self.in_param[id(var)]
        lin = self.linear(coords, var.aval.shape)
        a = self.address(idx, lin)
        t = ptx_type(var.aval.dtype)
        r = self.b.op("ld", t, a, mod=("global",), unit=Unit.MEM)
        if self.is_uniform(a):
            self.uniform.add(r.name)
        return self.put(key, r)

    def value(self, atom, coords) -> Reg | Imm:
        atom = self.resolve(atom)
        if isinstance(atom, Literal):
            return Imm(atom.value, ptx_type(atom.aval.dtype))
        if id(atom) in self.in_param:
            return self.load(atom, coords)
        buf = self.views.get(id(atom))
        if buf is not None and id(buf) in self.in_param:  # a reshape of an input: the same bytes, other shape
            return self.load(buf, self.unravel(self.linear(coords, atom.aval.shape), buf.aval.shape))
        n = self.producer.get(id(atom))
        if n is None:
            raise LoweringError(f"kernel {self.k.name}: value {atom} has no producer in the kernel")
        key = ("val", id(atom), tuple(self._k(c) for c in coords))
        hit = self.get(key)
        if hit is not None:
            return hit
        return self.put(key, self.node_value(n, coords))

    def node_value(self, n: Node, coords) -> Reg | Imm:
        op = n.op
        out = n.out.aval
        kind = ops.get(op).kind
        if op == Op.SELECT and self.select_as == "branch":
            return self.select_branch(n, coords)
        if kind is OpKind.ELEMENTWISE and op != Op.IOTA:
            args = [self.value(a, coords if (not isinstance(a, Literal) and a.aval.shape == out.shape) else ())
                    for a in n.operands]
            return self.elementwise(n, args)
        if op == Op.IOTA:
            c = coords[n.params["dimension"]]
            return self.convert(c, "u32", ptx_type(out.dtype))
        if op == Op.BROADCAST:
            x = n.operands[0]
            dims = n.params["broadcast_dimensions"]
            sub = tuple(Imm(0, "u32") if x.aval.shape[i] == 1 and out.shape[d] != 1 else coords[d]
                        for i, d in enumerate(dims))
            return self.value(x, sub)
        if op == Op.TRANSPOSE:
            perm = n.params["permutation"]
            sub = [None] * len(perm)
            for j, p in enumerate(perm):
                sub[p] = coords[j]
            return self.value(n.operands[0], tuple(sub))
        if op == Op.RESHAPE:
            x = n.operands[0]
            return self.value(x, self.unravel(self.linear(coords, out.shape), x.aval.shape))
        if op == Op.SLICE:
            sub = tuple(self.iop("mad", c, Imm(st, "u32"), Imm(s, "u32"))
                        for c, s, st in zip(coords, n.params["start_indices"], n.params["strides"]))
            return self.value(n.operands[0], sub)
        if op == Op.CONCATENATE:
            d = int(n.params["dimension"])
            t = ptx_type(out.dtype)
            res = None
            off = 0
            for a in n.operands:
                size = a.aval.shape[d]
                if size == 0:
                    continue
                local = self.iop("sub", coords[d], Imm(off, "u32")) if off else coords[d]
                # clamp into the operand so the load stays inside it; the select keeps the right one
                if isinstance(local, Imm):
                    clamp = Imm(min(max(int(local.value), 0), size - 1), "u32")
                else:
                    clamp = self.b.op("max", "s32", self.b.op("min", "s32", local, Imm(size - 1, "s32")), Imm(0, "s32"))
                v = self.value(a, coords[:d] + (clamp,) + coords[d + 1:])
                if res is None:
                    res = v
                else:
                    p = self.b.op("setp", "u32", coords[d], Imm(off, "u32"), mod=("ge",), dst_type="pred")
                    res = self.b.op("selp", t, v, res, p)
                off += size
            return res
        if op == Op.UPDATE_SLICE:
            x, upd = n.operands
            start = [int(s) for s in n.params["start_indices"]]
            t = ptx_type(out.dtype)
            base = self.value(x, coords)
            if upd.aval.size == 0:
                return base
            inside = None
            local = []
            for c, s, size in zip(coords, start, upd.aval.shape):
                l = self.b.op("sub", "s32", c, Imm(s, "s32"))
                p1 = self.b.op("setp", "s32", l, Imm(0, "s32"), mod=("ge",), dst_type="pred")
                p2 = self.b.op("setp", "s32", l, Imm(size, "s32"), mod=("lt",), dst_type="pred")
                both = self.b.op("and", "pred", p1, p2)
                inside = both if inside is None else self.b.op("and", "pred", inside, both)
                cl = self.b.op("max", "s32", self.b.op("min", "s32", l, Imm(size - 1, "s32")), Imm(0, "s32"))
                local.append(cl)
            if inside is None:
                return self.value(upd, ())
            v = self.value(upd, tuple(local))
            return self.b.op("selp", t, v, base, inside)
        if op == Op.CONSTANT:
            arr = np.asarray(n.params["value"].array)
            if arr.size == 1:
                return Imm(arr.reshape(()).item(), ptx_type(out.dtype))
            raise LoweringError(f"kernel {self.k.name}: an array constant inside a kernel")
        if kind is OpKind.REDUCTION:
            return self.reduction(n, coords, cooperative=False)
        if kind is OpKind.CONTRACTION:
            return self.dot_value(n, coords)
        raise LoweringError(f"kernel {self.k.name}: no lowering for op {op}")

    select_as = "select"

    def select_branch(self, n: Node, coords):
        """``where(p, x, y)`` as a data-dependent branch: only the lanes whose p holds compute x, the
        others y; a warp whose lanes disagree runs both paths one after the other."""
        b = self.b
        out = n.out.aval
        t = ptx_type(out.dtype)
        sub = lambda a: coords if (not isinstance(a, Literal) and a.aval.shape == out.shape) else ()
        pv, xv, yv = n.operands
        p = self.value(pv, sub(pv))
        r = b.reg(t)
        other, join = b.fresh_label("ELSE"), b.fresh_label("JOIN")
        if isinstance(p, Imm):
            p = b.op("mov", "pred", p)
        b.emit("bra", None, Label(other), guard=p, neg=True, unit=Unit.CONTROL, comment="where: lanes with p false jump")
        self.push()
        x = self.convert(self.value(xv, sub(xv)), ptx_type(xv.aval.dtype), t)
        b.emit("mov", r, x, type=t, comment="the 'true' path")
        self.pop()
        b.emit("bra", None, Label(join), mod=("uni",), unit=Unit.CONTROL)
        b.label(other)
        self.push()
        y = self.convert(self.value(yv, sub(yv)), ptx_type(yv.aval.dtype), t)
        b.emit("mov", r, y, type=t, comment="the 'false' path")
        self.pop()
        b.label(join)
        return r

    def convert(self, x, src: str, dst: str):
        if src == dst:
            return x
        if isinstance(x, Imm):
            return Imm(x.value, dst)
        mod = ()
        if dst.startswith(("f", "bf")) and not src.startswith(("f", "bf")):
            mod = ("rn",)
        elif not dst.startswith(("f", "bf")) and src.startswith(("f", "bf")) and dst != "pred":
            mod = ("rzi",)
        if dst == "pred":
            return self.b.op("setp", src, x, Imm(0, src), mod=("ne",), dst_type="pred")
        if src == "pred":
            return self.b.op("selp", dst, Imm(1, dst), Imm(0, dst), x)
        d = self.b.reg(dst)
        self.b.emit("cvt", d, x, type=f"{dst}.{src}", mod=mod)
        return d

    def elementwise(self, n: Node, args) -> Reg:
        op = n.op
        out_t = ptx_type(n.out.aval.dtype)
        in_t = ptx_type(n.operands[0].aval.dtype) if n.operands else out_t
        b = self.b
        if op == Op.COMPARE:
            return b.op("setp", in_t, *args, mod=(n.params["direction"],), dst_type="pred", alu=op)
        if op == Op.SELECT:
            p, x, y = args
            x = self.convert(x, ptx_type(n.operands[1].aval.dtype), out_t)
            y = self.convert(y, ptx_type(n.operands[2].aval.dtype), out_t)
            return b.op("selp", out_t, x, y, p, comment="select, not a branch")
        if op == Op.CONVERT:
            return self.convert(args[0], in_t, out_t)
        if op == Op.FLOOR:
            d = b.reg(out_t)
            b.emit("cvt", d, args[0], type=f"{out_t}.{out_t}", mod=("rmi",), comment="round toward -inf", alu=op)
            return d
        if op == Op.INTEGER_POW:
            y = int(n.params["y"])
            x = args[0]
            if y == 0:
                return b.op("mov", out_t, Imm(1, out_t), comment="x**0")
            e = abs(y)
            result, sq = None, x
            first = True
            while e:
                if e & 1:
                    result = sq if result is None else b.op("mul", out_t, result, sq, alu=Op.MULTIPLY)
                e >>= 1
                if e:
                    sq = b.op("mul", out_t, sq, sq, comment="square" if first else "", alu=Op.MULTIPLY)
                    first = False
            if result is x:
                result = b.op("mov", out_t, x)
            if y < 0:
                result = b.op("div", out_t, Imm(1.0, out_t), result, mod=("rn",), comment=f"x**{y} = 1 / x**{-y}",
                              alu=Op.DIVIDE)
            return result
        rule = LOWERING.get(op)
        if rule is None:
            raise LoweringError(f"kernel {self.k.name}: no lowering for elementwise op {op}")
        name, mod, unit, note = rule
        if op == Op.DIVIDE and not out_t.startswith(("f", "bf")):
            mod = ()  # integer division: the IR's floor division (see the ALU table)
        return b.op(name, out_t, *args, mod=mod, unit=unit, comment=note, alu=op)


    # --- reductions
    def reduction(self, n: Node, coords, cooperative: bool) -> Reg:
        x = n.operands[0]
        axes = tuple(n.params["axes"])
        keep = [i for i in range(x.aval.ndim) if i not in axes]
        rshape = tuple(x.aval.shape[a] for a in axes)
        per = math.prod(rshape)
        t = ptx_type(n.out.aval.dtype)
        comb = _COMBINE[n.op]
        b = self.b
        acc = b.reg(t)
        b.emit("mov", acc, Imm(_identity(n.op, n.out.aval.dtype), t), type=t,
               comment=f"{n.op}: start from the identity")
        j = b.reg("u32")
        top, end = b.fresh_label("RED"), b.fresh_label("RED_END")
        if cooperative:
            b.emit("mov", j, Special.TID, type="u32", comment="each thread takes every ntid-th element")
        else:
            b.emit("mov", j, Imm(0, "u32"), type="u32", comment="this thread walks the whole row")
        b.label(top)
        p = b.op("setp", "u32", j, Imm(per, "u32"), mod=("ge",), dst_type="pred")
        b.emit("bra", None, Label(end), guard=p, unit=Unit.CONTROL)
        self.push()
        jc = self.unravel(j, rshape)
        full = [None] * x.aval.ndim
        for a, c in zip(axes, jc):
            full[a] = c
        for a, c in zip(keep, coords):
            full[a] = c
        v = self.value(x, tuple(full))
        self.pop()
        b.emit(comb, acc, acc, v, type=t, alu=_COMBINE_OP[n.op])
        b.emit("add", j, j, Special.NTID if cooperative else Imm(1, "u32"), type="u32")
        b.emit("bra", None, Label(top), mod=("uni",), unit=Unit.CONTROL)
        b.label(end)
        if not cooperative:
            return acc
        nw = self.k_block // 32
        for off in (16, 8, 4, 2, 1):
            o = b.op("shfl", "b32" if t in ("f32", "s32", "u32") else t, acc, Imm(off, "u32"),
                     mod=("sync", "bfly"), unit=Unit.SHARED, dst_type=t,
                     comment="combine with lane ^ %d" % off if off == 16 else "")
            b.emit(comb, acc, acc, o, type=t, alu=_COMBINE_OP[n.op])
        lane = self.lane()
        warp = self.warp()
        isz = reg_dtype(t).itemsize
        slot = self.iop("mul", warp, Imm(isz, "u32"))
        p0 = b.op("setp", "u32", lane, Imm(0, "u32"), mod=("eq",), dst_type="pred")
        b.emit("st", None, slot, acc, type=t, mod=("shared",), guard=p0, unit=Unit.SHARED,
               comment="lane 0: this warp's partial")
        b.emit("bar", None, Imm(0, "u32"), mod=("sync",), unit=Unit.CONTROL)
        pl = b.op("setp", "u32", lane, Imm(nw, "u32"), mod=("lt",), dst_type="pred")
        laddr = self.iop("mul", lane, Imm(isz, "u32"))
        part = b.reg(t)
        b.emit("mov", part, Imm(_identity(n.op, n.out.aval.dtype), t), type=t)
        b.emit("ld", part, laddr, type=t, mod=("shared",), guard=pl, unit=Unit.SHARED,
               comment=f"every warp reads the {nw} partials")
        b.emit("bar", None, Imm(0, "u32"), mod=("sync",), unit=Unit.CONTROL,
               comment="shared memory free for the next reduction")
        for off in (16, 8, 4, 2, 1):
            o = b.op("shfl", "b32" if t in ("f32", "s32", "u32") else t, part, Imm(off, "u32"),
                     mod=("sync", "bfly"), unit=Unit.SHARED, dst_type=t)
            b.emit(comb, part, part, o, type=t, alu=_COMBINE_OP[n.op])
        self.uniform.add(part.name)
        return part

    def lane(self):
        if self.get(("lane",)) is None:
            self.put(("lane",), self.b.op("mov", "u32", Special.LANEID))
        return self.get(("lane",))

    def warp(self):
        if self.get(("warp",)) is None:
            self.put(("warp",), self.b.op("shr", "u32", Special.TID, Imm(5, "u32"), mod=(), comment="warp = tid / 32"))
        return self.get(("warp",))

    # --- contraction epilogue: the dot's value at a coordinate is an accumulator in shared memory
    def dot_value(self, n: Node, coords):
        c = self.contraction
        if c is None or n is not c["dot"]:
            raise LoweringError(f"kernel {self.k.name}: a second matrix product in one kernel")
        nb = len(c["bshape"])
        nm = len(c["mshape"])
        m = self.linear(coords[nb:nb + nm], c["mshape"])
        nn = self.linear(coords[nb + nm:], c["nshape"])
        r = self.iop("sub", m, c["m0"])
        col = self.iop("sub", nn, c["n0"])
        e = self.iop("mad", r, Imm(c["tn"], "u32"), col)
        addr = self.iop("mad", e, Imm(4, "u32"), Imm(c["acc"], "u32"))
        v = self.b.op("ld", "f32", addr, mod=("shared",), unit=Unit.SHARED, comment="the accumulator")
        return self.convert(v, "f32", ptx_type(n.out.aval.dtype))

    contraction = None
    k_block = 256

    # --- stores
    def store(self, out_index: int, var: Var, coords) -> None:
        v = self.value(var, coords)
        idx = len(self.k.inputs) + out_index
        lin = self.linear(coords, var.aval.shape)
        a = self.address(idx, lin)
        t = ptx_type(var.aval.dtype)
        if isinstance(v, Imm):
            v = self.b.op("mov", t, v)
        self.b.emit("st", None, a, v, type=t, mod=("global",), unit=Unit.MEM)


def _global_index(L: _Lower, threads: int) -> Reg:
    b = L.b
    i = b.op("mad", "u32", Special.CTAID, Special.NTID, Special.TID, mod=("lo",),
             comment=f"i = blockIdx.x * {threads} + threadIdx.x")
    return i


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
    b.emit("bra", None, Label("DONE"), guard=p, unit=Unit.CONTROL, comment="threads past the end do nothing")
    for j, (o, size) in enumerate(zip(outs, sizes)):
        skip = None
        if size < n:
            skip = b.fresh_label("SKIP")
            q = b.op("setp", "u32", i, Imm(size, "u32"), mod=("ge",), dst_type="pred")
            b.emit("bra", None, Label(skip), guard=q, unit=Unit.CONTROL)
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
    b.emit("exit", unit=Unit.CONTROL)
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
            b.emit("bra", None, Label(skip), guard=p, unit=Unit.CONTROL, comment="thread 0 writes the row's result")
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
            b.emit("bra", None, Label(end), guard=p, unit=Unit.CONTROL)
            L.push()
            full = [None] * len(shape)
            for a_, c_ in zip(axes, L.unravel(jr, rshape)):
                full[a_] = c_
            for a_, c_ in zip(keep, kept):
                full[a_] = c_
            L.store(j, o, tuple(full))
            L.pop()
            b.emit("add", jr, jr, Special.NTID, type="u32")
            b.emit("bra", None, Label(top), mod=("uni",), unit=Unit.CONTROL)
            b.label(end)
        elif split is not None:
            chunk = size // n_out
            lead = L.unravel(row, shape[:split])
            jr = b.reg("u32")
            b.emit("mov", jr, Special.TID, type="u32")
            top, end = b.fresh_label("OUT"), b.fresh_label("OUT_END")
            b.label(top)
            p = b.op("setp", "u32", jr, Imm(chunk, "u32"), mod=("ge",), dst_type="pred")
            b.emit("bra", None, Label(end), guard=p, unit=Unit.CONTROL)
            L.push()
            L.store(j, o, lead + L.unravel(jr, shape[split:]))
            L.pop()
            b.emit("add", jr, jr, Special.NTID, type="u32")
            b.emit("bra", None, Label(top), mod=("uni",), unit=Unit.CONTROL)
            b.label(end)
        else:  # no row structure: the blocks share the output element by element
            e = b.op("mad", "u32", Special.CTAID, Special.NTID, Special.TID, mod=("lo",))
            step = b.op("mul", "u32", Special.NCTAID, Special.NTID, mod=("lo",))
            top, end = b.fresh_label("ALL"), b.fresh_label("ALL_END")
            b.label(top)
            p = b.op("setp", "u32", e, Imm(size, "u32"), mod=("ge",), dst_type="pred")
            b.emit("bra", None, Label(end), guard=p, unit=Unit.CONTROL)
            L.push()
            L.store(j, o, L.unravel(e, shape))
            L.pop()
            b.emit("add", e, e, step, type="u32")
            b.emit("bra", None, Label(top), mod=("uni",), unit=Unit.CONTROL)
            b.label(end)
    b.emit("exit", unit=Unit.CONTROL)
    return _build(L, n_out, threads, 32 * 8 if any(reg_dtype(ptx_type(r.out.aval.dtype)).itemsize == 8 for r in reds)
                  else 32 * 4, f"one block per row ({n_out}), {per} elements each")


def _contraction(L: _Lower, chip) -> KernelIR:
    k = L.k
    dot = next(n for n in L.producer.values() if ops.get(n.op).kind is OpKind.CONTRACTION)
    lhs, rhs = dot.operands
    (lc, rc), (lb, rb) = dot.params["contracting"], dot.params["batch"]
    lfree = [i for i in range(lhs.aval.ndim) if i not in tuple(lc) + tuple(lb)]
    rfree = [i for i in range(rhs.aval.ndim) if i not in tuple(rc) + tuple(rb)]
    bshape = tuple(lhs.aval.shape[i] for i in lb)
    mshape = tuple(lhs.aval.shape[i] for i in lfree)
    nshape = tuple(rhs.aval.shape[i] for i in rfree)
    kshape = tuple(lhs.aval.shape[i] for i in lc)
    B, M, N, K = math.prod(bshape), math.prod(mshape), math.prod(nshape), math.prod(kshape)
    plan = _plan(k, chip)
    tm, tn, tk = plan.tile
    arch = plan.path.arch
    threads = plan.path.threads or 256
    L.k_block = threads
    gx, gy = -(-N // tn), -(-M // tm)
    grid = gx * gy * B
    in_t = ptx_type(lhs.aval.dtype)
    isz = reg_dtype(in_t).itemsize
    a_off, b_off = 0, tm * tk * isz
    acc_off = -(-(b_off + tk * tn * isz) // 16) * 16
    shared = acc_off + tm * tn * 4
    b = L.b
    for idx in range(len(k.inputs) + len(k.outputs)):
        L.param_base(idx)
    ct = Special.CTAID
    bn = L.iop("rem", ct, Imm(gx, "u32"))
    bm = L.iop("rem", L.iop("div", ct, Imm(gx, "u32")), Imm(gy, "u32")) if gy > 1 else Imm(0, "u32")
    bb = L.iop("div", ct, Imm(gx * gy, "u32")) if B > 1 else Imm(0, "u32")
    L.uniform.add("%ctaid.x")
    m0 = L.iop("mul", bm, Imm(tm, "u32"))
    n0 = L.iop("mul", bn, Imm(tn, "u32"))
    L.contraction = {"dot": dot, "bshape": bshape, "mshape": mshape, "nshape": nshape, "m0": m0, "n0": n0,
                     "tn": tn, "acc": acc_off}
    tid = Special.TID
    # zero the accumulators
    _strided(L, tm * tn, lambda e: b.emit("st", None, L.iop("mad", e, Imm(4, "u32"), Imm(acc_off, "u32")),
                                           Imm(0.0, "f32"), type="f32", mod=("shared",), unit=Unit.SHARED),
             "acc = 0")
    kk = b.reg("u32")
    b.emit("mov", kk, Imm(0, "u32"), type="u32")
    top, end = b.fresh_label("K"), b.fresh_label("K_END")
    b.label(top)
    p = b.op("setp", "u32", kk, Imm(K, "u32"), mod=("ge",), dst_type="pred")
    b.emit("bra", None, Label(end), guard=p, unit=Unit.CONTROL, comment=f"K in steps of {tk}")
    L.push()

    def operand_coord(side, bidx, free, kidx):
        """Coordinates into the operand from flat batch, free and contracting indices."""
        var = lhs if side == "a" else rhs
        batch_dims, con, fr = (lb, lc, lfree) if side == "a" else (rb, rc, rfree)
        full = [None] * var.aval.ndim
        for d, c in zip(batch_dims, L.unravel(bidx, bshape)):
            full[d] = c
        for d, c in zip(fr, L.unravel(free, mshape if side == "a" else nshape)):
            full[d] = c
        for d, c in zip(con, L.unravel(kidx, kshape)):
            full[d] = c
        return tuple(full)

    def plain(var, side):
        v = L.resolve(var)
        return id(v) in L.in_param and v.aval.ndim == 2 and not (lb or rb)

    def load_tile(side):
        var = lhs if side == "a" else rhs
        rows, cols = (tm, tk) if side == "a" else (tk, tn)
        off = a_off if side == "a" else b_off
        what = "A" if side == "a" else "B"
        v = L.resolve(var)
        if arch == "Hopper" and plain(var, side) and plan.tensor_path and \
                ((side == "a" and tuple(lc) == (1,)) or (side == "b" and tuple(rc) == (0,))):
            # TMA: one thread copies the whole box; out-of-range parts are filled with zeros
            r0, c0 = (m0, kk) if side == "a" else (kk, n0)
            p0 = b.op("setp", "u32", tid, Imm(0, "u32"), mod=("eq",), dst_type="pred")
            b.emit("cp", None, Imm(off, "u32"), r0, c0, type="", mod=("async", "bulk", "tensor", "2d", "shared::cluster",
                                                                        "global"),
                   guard=p0, unit=Unit.MEM, comment=f"TMA: the {rows}x{cols} {what} tile, issued by one thread",
                   bulk=True, param=L.in_param[id(v)], shape=v.aval.shape, box=(rows, cols), dtype=in_t)
            return

        def body(e):
            r = L.iop("div", e, Imm(cols, "u32"))
            c = L.iop("rem", e, Imm(cols, "u32"))
            if side == "a":
                gi, gk = L.iop("add", m0, r), L.iop("add", kk, c)
                ok1 = b.op("setp", "u32", gi, Imm(M, "u32"), mod=("lt",), dst_type="pred")
                ok2 = b.op("setp", "u32", gk, Imm(K, "u32"), mod=("lt",), dst_type="pred")
                coord = lambda: operand_coord("a", bb, gi, gk)
            else:
                gk, gj = L.iop("add", kk, r), L.iop("add", n0, c)
                ok1 = b.op("setp", "u32", gk, Imm(K, "u32"), mod=("lt",), dst_type="pred")
                ok2 = b.op("setp", "u32", gj, Imm(N, "u32"), mod=("lt",), dst_type="pred")
                coord = lambda: operand_coord("b", bb, gj, gk)
            ok = b.op("and", "pred", ok1, ok2)
            saddr = L.iop("mad", e, Imm(isz, "u32"), Imm(off, "u32"))
            if arch == "Ampere" and plain(var, side):
                # clamp the address into the tensor; src-size 0 makes cp.async write zeros instead
                cc = coord()
                cl = tuple(b.op("min", "u32", x, Imm(v.aval.shape[d] - 1, "u32")) if not isinstance(x, Imm) else x
                           for d, x in enumerate(cc))
                ga = L.address(L.in_param[id(v)], L.linear(cl, v.aval.shape))
                size = b.op("selp", "u32", Imm(isz, "u32"), Imm(0, "u32"), ok)
                b.emit("cp", None, saddr, ga, size, mod=("async", "ca", "shared", "global"), unit=Unit.MEM,
                       type=in_t, comment=f"cp.async: {what} element to shared memory, skipping registers")
                return
            skip = b.fresh_label("OUTSIDE")
            val = b.reg(in_t)
            b.emit("mov", val, Imm(0, in_t), type=in_t)
            nok = b.op("not", "pred", ok)
            b.emit("bra", None, Label(skip), guard=nok, unit=Unit.CONTROL)
            L.push()
            x = L.value(var, coord())
            b.emit("mov", val, x, type=in_t, comment=f"{what} element (prologue applied)")
            L.pop()
            b.label(skip)
            b.emit("st", None, saddr, val, type=in_t, mod=("shared",), unit=Unit.SHARED)
        _strided(L, rows * cols, body, f"{what} tile -> shared memory")

    load_tile("a")
    load_tile("b")
    if arch == "Ampere":
        b.emit("cp", None, mod=("async", "wait_all"), unit=Unit.MEM, comment="wait for this thread's copies")
    elif arch == "Hopper":
        b.emit("fence", None, mod=("proxy", "async"), unit=Unit.CONTROL, comment="TMA writes visible (mbarrier wait)")
    b.emit("bar", None, Imm(0, "u32"), mod=("sync",), unit=Unit.CONTROL, comment="tiles are in shared memory")
    warps = threads // 32
    if plan.tensor_path and arch == "Hopper":
        groups = max(1, warps // 4 - 1)  # one producer warpgroup (TMA), the rest consumers
        rows = -(-tm // groups)
        sm_, sn_, sk_ = plan.instruction_shape
        wg = b.op("shr", "u32", Special.TID, Imm(7, "u32"), comment="warpgroup = tid / 128")
        isc = b.op("setp", "u32", wg, Imm(0, "u32"), mod=("ne",), dst_type="pred")
        b.emit("mma", None, Imm(a_off, "u32"), Imm(b_off, "u32"), Imm(acc_off, "u32"),
               mod=("mma_async", "sync", "aligned", f"m{rows}n{tn}k{tk}"), type=f"f32.{in_t}.{in_t}", guard=isc,
               unit=Unit.TENSOR, tm=tm, tn=tn, tk=tk, rows=rows, group=4, shift_groups=1, a=a_off, b=b_off,
               acc=acc_off, dtype=in_t,
               comment=f"wgmma: each consumer warpgroup, {rows} rows ({math.ceil(rows / sm_) * math.ceil(tk / sk_)} "
                       f"x m{sm_}n{sn_}k{sk_})")
        ins = b.code[-1]
        b.code[-1] = type(ins)("wgmma", None, ins.srcs, ins.type, ins.mod, ins.guard, False, Unit.TENSOR,
                               dict(ins.attrs), ins.comment)
    else:
        rows = -(-tm // warps)
        name = "mma" if plan.tensor_path else "fma"
        sm_, sn_, sk_ = plan.instruction_shape if plan.tensor_path else (1, 1, 1)
        count = math.ceil(rows / sm_) * math.ceil(tn / sn_) * math.ceil(tk / sk_) if plan.tensor_path else rows * tn * tk
        mod = ("sync", "aligned", f"m{sm_}n{sn_}k{sk_}", "row", "col") if plan.tensor_path else ("tile",)
        b.emit(name, None, Imm(a_off, "u32"), Imm(b_off, "u32"), Imm(acc_off, "u32"), mod=mod,
               type=f"f32.{in_t}.{in_t}.f32" if plan.tensor_path else "f32",
               unit=Unit.TENSOR if plan.tensor_path else Unit.ALU, tm=tm, tn=tn, tk=tk, rows=rows, group=1,
               a=a_off, b=b_off, acc=acc_off, dtype=in_t,
               comment=(f"each warp: its {rows} rows = {count} x mma.sync" if plan.tensor_path else
                        f"each warp: its {rows} rows as FFMA on the fp32 lanes ({count} per K step)"))
    b.emit("bar", None, Imm(0, "u32"), mod=("sync",), unit=Unit.CONTROL, comment="tiles can be overwritten")
    L.pop()
    b.emit("add", kk, kk, Imm(tk, "u32"), type="u32")
    b.emit("bra", None, Label(top), mod=("uni",), unit=Unit.CONTROL)
    b.label(end)
    # epilogue: every output element of this tile
    dshape = dot.out.aval.shape

    def epi(e):
        r = L.iop("div", e, Imm(tn, "u32"))
        c = L.iop("rem", e, Imm(tn, "u32"))
        gi, gj = L.iop("add", m0, r), L.iop("add", n0, c)
        ok1 = b.op("setp", "u32", gi, Imm(M, "u32"), mod=("lt",), dst_type="pred")
        ok2 = b.op("setp", "u32", gj, Imm(N, "u32"), mod=("lt",), dst_type="pred")
        nok = b.op("not", "pred", b.op("and", "pred", ok1, ok2))
        skip = b.fresh_label("EDGE")
        b.emit("bra", None, Label(skip), guard=nok, unit=Unit.CONTROL, comment="outside C")
        L.push()
        dcoord = L.unravel(bb, bshape) + L.unravel(gi, mshape) + L.unravel(gj, nshape)
        for j, o in enumerate(k.outputs):
            oc = _forward(L, dot, o, dcoord, dshape)
            L.store(j, o, oc)
        L.pop()
        b.label(skip)
    _strided(L, tm * tn, epi, "epilogue: C tile -> global memory")
    b.emit("exit", unit=Unit.CONTROL)
    # the launch declares what a real kernel holds: double-buffered A and B tiles of the input dtype
    # (labsim's layout above is larger: 16-bit tiles held as fp32 and the accumulators in shared memory)
    declared = (tm * tk + tk * tn) * lhs.aval.itemsize * 2
    ir = _build(L, grid, threads, shared, f"one block per {tm}x{tn} tile of C",
                launch=Launch((gx, gy, B), (threads, 1, 1), declared))
    ir.arch = arch
    ir.tiles = {"A": (tm, tk), "B": (tk, tn), "acc": (tm, tn)}
    return ir


def _forward(L: _Lower, dot: Node, out: Var, coord, shape):
    """The output coordinate that the dot's element ``coord`` becomes, following elementwise ops,
    transposes and reshapes from the dot to ``out``."""
    target = L.resolve(out)
    users = {}
    for n in L.producer.values():
        for a in n.operands:
            a = L.resolve(a)
            if isinstance(a, Var):
                users.setdefault(id(a), []).append(n)
    # depth-first search for a path dot.out -> out
    path = []

    def dfs(var):
        if var is target:
            return True
        for u in users.get(id(var), []):
            path.append((u, var))
            if dfs(u.out):
                return True
            path.pop()
        return False
    start = L.resolve(dot.out)
    if not dfs(start):
        raise LoweringError(f"kernel {L.k.name}: output {out} does not come from the matrix product")
    c = tuple(coord)
    for n, src in path:
        kind = ops.get(n.op).kind
        if n.op == Op.TRANSPOSE:
            perm = n.params["permutation"]
            c = tuple(c[p] for p in perm)
        elif n.op == Op.RESHAPE:
            c = L.unravel(L.linear(c, src.aval.shape), n.out.aval.shape)
        elif kind is OpKind.ELEMENTWISE and n.out.aval.shape == src.aval.shape:
            pass
        else:
            raise LoweringError(f"kernel {L.k.name}: the machine lowers contraction epilogues of elementwise "
                                f"ops, transposes and reshapes; this one has {n.op}")
    return c


def _strided(L: _Lower, count: int, body, what: str) -> None:
    """for (e = tid; e < count; e += ntid) body(e)"""
    b = L.b
    e = b.reg("u32")
    b.emit("mov", e, Special.TID, type="u32", comment=what)
    top, end = b.fresh_label("T"), b.fresh_label("T_END")
    b.label(top)
    p = b.op("setp", "u32", e, Imm(count, "u32"), mod=("ge",), dst_type="pred")
    b.emit("bra", None, Label(end), guard=p, unit=Unit.CONTROL)
    L.push()
    body(e)
    L.pop()
    b.emit("add", e, e, Special.NTID, type="u32")
    b.emit("bra", None, Label(top), mod=("uni",), unit=Unit.CONTROL)
    b.label(end)


def _build(L: _Lower, grid: int, block: int, shared: int, how: str, launch: Launch | None = None) -> KernelIR:
    k = L.k
    launch = launch or Launch((grid, 1, 1), (block, 1, 1), shared)
    header = [f"// {k.name}: {' → '.join(k.ops)}; {how}", PSEUDO_IR, f"// launch: {launch}"]
    ir = L.b.build(k.name, L.params, len(k.inputs), grid, block, shared_bytes=shared, header=header, launch=launch)
    return ir


_CACHE: "weakref.WeakKeyDictionary[Kernel, dict]" = weakref.WeakKeyDictionary()


def kernel_ir(k: Kernel, chip: Chip | str | None = None, *, select: str = "select") -> KernelIR:
    """The executable IR of kernel ``k`` for ``chip``'s generation (``None``: the generic, chip-free
    path), lowered once per (kernel, chip, select) and cached: every caller (the roofline's GPU terms,
    ``ls.simt.run``, the listing) gets the same object, so they see one launch (``ir.launch``).
    :meth:`KernelIR.verify` runs after the lowering.

    ``select="select"`` lowers ``where``/``select`` to ``selp`` (both values computed, no branch);
    ``select="branch"`` to a data-dependent branch (each lane computes only its value; a warp whose
    lanes disagree runs both paths with masks)."""
    if not isinstance(k, Kernel):
        raise TypeError(f"kernel_ir: kernel must be a Kernel (prog.kernels[i]), got {type(k).__name__}")
    if select not in ("select", "branch"):
        raise ValueError(f"select must be 'select' or 'branch', got {select!r}")
    c = get_chip(chip) if chip is not None else None
    per = _CACHE.setdefault(k, {})
    key = (c.name if c is not None else None, select)
    ir = per.get(key)
    if ir is None:
        ir = per[key] = _lower(k, c, select)
    return ir


def _lower(k: Kernel, c: Chip | None, select: str) -> KernelIR:
    L = _Lower(k, c)
    L.select_as = select
    if k.kind is KernelKind.CONTRACTION:
        if c is not None and c.kind is not ChipKind.GPU:
            raise LoweringError(f"{c.name} is not a GPU: the SIMT machine runs contractions on NVIDIA GPUs")
        ir = _contraction(L, c)
    elif k.kind is KernelKind.REDUCTION:
        ir = _reduction(L)
    else:
        ir = _loop(L)
    ir.verify()
    return ir


def listing(k: Kernel, chip: Chip | str | None = None) -> str:
    """The kernel's listing. Loop, copy and reduction kernels: the rendering of their kernel IR (what
    ``ls.simt`` runs). Contractions: the chip's tile plan (:func:`labsim.compiler.codegen.listing`);
    ``kernel_ir(k, chip).render()`` prints their instructions."""
    if k.kind is KernelKind.CONTRACTION:
        return _contraction_listing(k, chip)
    try:
        text = kernel_ir(k, chip).render()
    except LoweringError as e:  # say so instead of printing code that is not what runs
        return f"// {k.name}: {' → '.join(k.ops)}\n// labsim has no kernel IR for this kernel: {e}"
    if chip is not None and get_chip(chip).kind is not ChipKind.GPU:
        text = (f"// as a GPU would run it; on {get_chip(chip).name} the compiler emits vector code "
                "for the same loop\n" + text)
    return text


__all__ = ["LoweringError", "kernel_ir", "listing"]
