"""How a node's value at a coordinate becomes instructions: element-wise ops (through the lowering
table), conversions, ``where`` as a select or a branch, reductions (a thread's loop, then the warp's
shuffle tree and the block's shared-memory combine), and a contraction's accumulator in the epilogue."""
from __future__ import annotations

import math

import numpy as np

from ...core import ops
from ...core.ir import Literal, Node
from ...core.ops import Op, OpKind
from ..isa import Imm, Label, Reg, Special, Pipe, ptx_type, reg_dtype
from .builder import _Base
from .table import _COMBINE, _COMBINE_OP, LOWERING, LoweringError, _identity


class _Lower(_Base):
    """The state of lowering one kernel (see :class:`_Base`) and how values become instructions."""

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
        b.emit("bra", None, Label(other), guard=p, neg=True, pipe=Pipe.CONTROL, comment="where: lanes with p false jump")
        self.push()
        x = self.convert(self.value(xv, sub(xv)), ptx_type(xv.aval.dtype), t)
        b.emit("mov", r, x, type=t, comment="the 'true' path")
        self.pop()
        b.emit("bra", None, Label(join), mod=("uni",), pipe=Pipe.CONTROL)
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
        return b.op(name, out_t, *args, mod=mod, pipe=unit, comment=note, alu=op)


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
        b.emit("bra", None, Label(end), guard=p, pipe=Pipe.CONTROL)
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
        b.emit("bra", None, Label(top), mod=("uni",), pipe=Pipe.CONTROL)
        b.label(end)
        if not cooperative:
            return acc
        nw = self.k_block // 32
        for off in (16, 8, 4, 2, 1):
            o = b.op("shfl", "b32" if t in ("f32", "s32", "u32") else t, acc, Imm(off, "u32"),
                     mod=("sync", "bfly"), pipe=Pipe.SHARED, dst_type=t,
                     comment="combine with lane ^ %d" % off if off == 16 else "")
            b.emit(comb, acc, acc, o, type=t, alu=_COMBINE_OP[n.op])
        lane = self.lane()
        warp = self.warp()
        isz = reg_dtype(t).itemsize
        slot = self.iop("mul", warp, Imm(isz, "u32"))
        p0 = b.op("setp", "u32", lane, Imm(0, "u32"), mod=("eq",), dst_type="pred")
        b.emit("st", None, slot, acc, type=t, mod=("shared",), guard=p0, pipe=Pipe.SHARED,
               comment="lane 0: this warp's partial")
        b.emit("bar", None, Imm(0, "u32"), mod=("sync",), pipe=Pipe.CONTROL)
        pl = b.op("setp", "u32", lane, Imm(nw, "u32"), mod=("lt",), dst_type="pred")
        laddr = self.iop("mul", lane, Imm(isz, "u32"))
        part = b.reg(t)
        b.emit("mov", part, Imm(_identity(n.op, n.out.aval.dtype), t), type=t)
        b.emit("ld", part, laddr, type=t, mod=("shared",), guard=pl, pipe=Pipe.SHARED,
               comment=f"every warp reads the {nw} partials")
        b.emit("bar", None, Imm(0, "u32"), mod=("sync",), pipe=Pipe.CONTROL,
               comment="shared memory free for the next reduction")
        for off in (16, 8, 4, 2, 1):
            o = b.op("shfl", "b32" if t in ("f32", "s32", "u32") else t, part, Imm(off, "u32"),
                     mod=("sync", "bfly"), pipe=Pipe.SHARED, dst_type=t)
            b.emit(comb, part, part, o, type=t, alu=_COMBINE_OP[n.op])
        self.uniform.add(part.name)
        return part

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
        v = self.b.op("ld", "f32", addr, mod=("shared",), pipe=Pipe.SHARED, comment="the accumulator")
        return self.convert(v, "f32", ptx_type(n.out.aval.dtype))

    contraction = None
    k_block = 256

    # --- stores
