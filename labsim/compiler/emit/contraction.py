"""Contraction kernels: one block per tile of the output, the chip's matrix path, a fused epilogue."""
from __future__ import annotations

import math

from ...core import ops
from ...core.ir import Node, Var
from ...core.ops import Op, OpKind
from ..isa import Imm, KernelIR, Label, Special, Pipe, ptx_type, reg_dtype
from ..launch import Launch
from ..plans import _plan
from .builder import _build, _strided
from .table import LoweringError
from .values import _Lower


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
                                           Imm(0.0, "f32"), type="f32", mod=("shared",), pipe=Pipe.SHARED),
             "acc = 0")
    kk = b.reg("u32")
    b.emit("mov", kk, Imm(0, "u32"), type="u32")
    top, end = b.fresh_label("K"), b.fresh_label("K_END")
    b.label(top)
    p = b.op("setp", "u32", kk, Imm(K, "u32"), mod=("ge",), dst_type="pred")
    b.emit("bra", None, Label(end), guard=p, pipe=Pipe.CONTROL, comment=f"K in steps of {tk}")
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
                   guard=p0, pipe=Pipe.MEM, comment=f"TMA: the {rows}x{cols} {what} tile, issued by one thread",
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
                cl = tuple(b.op("min", "u32", x, Imm(max(v.aval.shape[d] - 1, 0), "u32")) if not isinstance(x, Imm) else x
                           for d, x in enumerate(cc))
                ga = L.address(L.in_param[id(v)], L.linear(cl, v.aval.shape))
                size = b.op("selp", "u32", Imm(isz, "u32"), Imm(0, "u32"), ok)
                b.emit("cp", None, saddr, ga, size, mod=("async", "ca", "shared", "global"), pipe=Pipe.MEM,
                       type=in_t, comment=f"cp.async: {what} element to shared memory, skipping registers")
                return
            skip = b.fresh_label("OUTSIDE")
            val = b.reg(in_t)
            b.emit("mov", val, Imm(0, in_t), type=in_t)
            nok = b.op("not", "pred", ok)
            b.emit("bra", None, Label(skip), guard=nok, pipe=Pipe.CONTROL)
            L.push()
            x = L.value(var, coord())
            b.emit("mov", val, x, type=in_t, comment=f"{what} element (prologue applied)")
            L.pop()
            b.label(skip)
            b.emit("st", None, saddr, val, type=in_t, mod=("shared",), pipe=Pipe.SHARED)
        _strided(L, rows * cols, body, f"{what} tile -> shared memory")

    load_tile("a")
    load_tile("b")
    if arch == "Ampere":
        b.emit("cp", None, mod=("async", "wait_all"), pipe=Pipe.MEM, comment="wait for this thread's copies")
    elif arch == "Hopper":
        b.emit("fence", None, mod=("proxy", "async"), pipe=Pipe.CONTROL, comment="TMA writes visible (mbarrier wait)")
    b.emit("bar", None, Imm(0, "u32"), mod=("sync",), pipe=Pipe.CONTROL, comment="tiles are in shared memory")
    warps = threads // 32
    if plan.tensor_path and arch == "Hopper":
        groups = max(1, warps // 4 - 1)  # one producer warpgroup (TMA), the rest consumers
        rows = -(-tm // groups)
        sm_, sn_, sk_ = plan.instruction_shape
        wg = b.op("shr", "u32", Special.TID, Imm(7, "u32"), comment="warpgroup = tid / 128")
        isc = b.op("setp", "u32", wg, Imm(0, "u32"), mod=("ne",), dst_type="pred")
        b.emit("mma", None, Imm(a_off, "u32"), Imm(b_off, "u32"), Imm(acc_off, "u32"),
               mod=("mma_async", "sync", "aligned", f"m{rows}n{tn}k{tk}"), type=f"f32.{in_t}.{in_t}", guard=isc,
               pipe=Pipe.TENSOR, tm=tm, tn=tn, tk=tk, rows=rows, group=4, shift_groups=1, a=a_off, b=b_off,
               acc=acc_off, dtype=in_t,
               comment=f"wgmma: each consumer warpgroup, {rows} rows ({math.ceil(rows / sm_) * math.ceil(tk / sk_)} "
                       f"x m{sm_}n{sn_}k{sk_})")
        ins = b.code[-1]
        b.code[-1] = type(ins)("wgmma", None, ins.srcs, ins.type, ins.mod, ins.guard, False, Pipe.TENSOR,
                               dict(ins.attrs), ins.comment)
    else:
        rows = -(-tm // warps)
        name = "mma" if plan.tensor_path else "fma"
        sm_, sn_, sk_ = plan.instruction_shape if plan.tensor_path else (1, 1, 1)
        count = math.ceil(rows / sm_) * math.ceil(tn / sn_) * math.ceil(tk / sk_) if plan.tensor_path else rows * tn * tk
        mod = ("sync", "aligned", f"m{sm_}n{sn_}k{sk_}", "row", "col") if plan.tensor_path else ("tile",)
        b.emit(name, None, Imm(a_off, "u32"), Imm(b_off, "u32"), Imm(acc_off, "u32"), mod=mod,
               type=f"f32.{in_t}.{in_t}.f32" if plan.tensor_path else "f32",
               pipe=Pipe.TENSOR if plan.tensor_path else Pipe.ALU, tm=tm, tn=tn, tk=tk, rows=rows, group=1,
               a=a_off, b=b_off, acc=acc_off, dtype=in_t,
               comment=(f"each warp: its {rows} rows = {count} x mma.sync" if plan.tensor_path else
                        f"each warp: its {rows} rows as FFMA on the fp32 lanes ({count} per K step)"))
    b.emit("bar", None, Imm(0, "u32"), mod=("sync",), pipe=Pipe.CONTROL, comment="tiles can be overwritten")
    L.pop()
    b.emit("add", kk, kk, Imm(tk, "u32"), type="u32")
    b.emit("bra", None, Label(top), mod=("uni",), pipe=Pipe.CONTROL)
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
        b.emit("bra", None, Label(skip), guard=nok, pipe=Pipe.CONTROL, comment="outside C")
        L.push()
        dcoord = L.unravel(bb, bshape) + L.unravel(gi, mshape) + L.unravel(gj, nshape)
        for j, o in enumerate(k.outputs):
            oc = _forward(L, dot, o, dcoord, dshape)
            L.store(j, o, oc)
        L.pop()
        b.label(skip)
    _strided(L, tm * tn, epi, "epilogue: C tile -> global memory")
    b.emit("exit", pipe=Pipe.CONTROL)
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
