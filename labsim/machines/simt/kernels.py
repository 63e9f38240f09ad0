"""Small hand-written kernels for the chapters' experiments: divergence, latency hiding, coalescing.

Each builder returns a :class:`~labsim.compiler.isa.KernelIR` and the input data that drives it, so
``ls.simt.run_ir(ir, inputs)`` runs it on the machine with real values. The kernels are written in the
same IR the compiler emits (``labsim.compiler.emit``), not in a separate toy language.
"""
from __future__ import annotations
from ...support.errors import ArgumentError

from dataclasses import dataclass

import numpy as np

from ...compiler.isa import Builder, Imm, KernelIR, Param, Special, Pipe
from ...hardware import WARP_SIZE as WARP



@dataclass
class Experiment:
    """A kernel, its inputs (by parameter name) and what the text needs to explain it."""

    ir: KernelIR
    inputs: dict[str, np.ndarray]
    expected: dict[str, np.ndarray]
    info: dict


def taken_lanes(pattern: str, taken: int) -> np.ndarray:
    """Which of a warp's 32 lanes take the branch: ``"contiguous"`` (lanes 0..taken-1) or
    ``"interleaved"`` (``taken`` lanes spread evenly: every second lane for 16)."""
    if not 0 <= taken <= WARP:
        raise ArgumentError(f"taken must be between 0 and {WARP} lanes, got {taken}")
    lane = np.arange(WARP)
    if pattern == "contiguous":
        return lane < taken
    if pattern == "interleaved":
        return (lane + 1) * taken // WARP > lane * taken // WARP
    raise ArgumentError(f"pattern must be 'contiguous' or 'interleaved', got {pattern!r}")


def divergent_kernel(a: int = 4, b: int = 4, *, pattern: str = "contiguous", taken: int = 16, warps: int = 1,
                     select: bool = False) -> Experiment:
    """``y = x + a if x > 0 else x * 2**b``, one thread per element, as a branch or as a select.

    The condition is data-dependent: ``x`` is +1 on the lanes that take the ``if`` path (``pattern``,
    ``taken``) and -1 elsewhere. As a branch (``select=False``) the ``if`` path is ``a`` adds and the
    ``else`` path ``b`` multiplies plus the jump over the ``if`` path; a warp whose lanes disagree runs
    both, one after the other, with the other lanes masked off, and meets again at the join (the
    branch's immediate post-dominator). As a select both paths run on all lanes and ``selp`` keeps one.
    """
    if a < 1 or b < 1:
        raise ArgumentError("path lengths a and b must be at least 1 instruction")
    bld = Builder()
    n = warps * WARP
    x_p, y_p = Param("x", 0), Param("y", 1)
    rx = bld.op("ld", "u64", x_p, mod=("param",), comment="address of x")
    ry = bld.op("ld", "u64", y_p, mod=("param",), comment="address of y")
    tid = bld.op("mov", "u32", Special.TID)
    ax = bld.op("mad", "u32", tid, Imm(4, "u32"), rx, mod=("wide",), dst_type="u64", comment="&x[tid]")
    ay = bld.op("mad", "u32", tid, Imm(4, "u32"), ry, mod=("wide",), dst_type="u64", comment="&y[tid]")
    fx = bld.op("ld", "f32", ax, mod=("global",), pipe=Pipe.MEM)
    p = bld.op("setp", "f32", fx, Imm(0.0), mod=("gt",), dst_type="pred", comment="the data-dependent condition")
    v = bld.reg("f32")
    paths = {}
    if not select:
        bld.emit("mov", v, fx, type="f32")
        bld.emit("bra", None, _L("IF"), guard=p, pipe=Pipe.CONTROL, comment="lanes with x > 0 jump")
        start = len(bld.code)
        for _ in range(b):
            bld.emit("mul", v, v, Imm(2.0), type="f32", comment="else path")
        bld.emit("bra", None, _L("JOIN"), mod=("uni",), pipe=Pipe.CONTROL, comment="skip the if path")
        paths["else"] = (start, len(bld.code))
        bld.label("IF")
        start = len(bld.code)
        for _ in range(a):
            bld.emit("add", v, v, Imm(1.0), type="f32", comment="if path")
        paths["if"] = (start, len(bld.code))
        bld.label("JOIN")
    else:
        t, e = bld.reg("f32"), bld.reg("f32")
        bld.emit("mov", t, fx, type="f32")
        bld.emit("mov", e, fx, type="f32")
        start = len(bld.code)
        for _ in range(a):
            bld.emit("add", t, t, Imm(1.0), type="f32", comment="if path, on every lane")
        paths["if"] = (start, len(bld.code))
        start = len(bld.code)
        for _ in range(b):
            bld.emit("mul", e, e, Imm(2.0), type="f32", comment="else path, on every lane")
        paths["else"] = (start, len(bld.code))
        bld.emit("selp", v, t, e, p, type="f32", comment="keep one result per lane: no branch")
    bld.emit("st", None, ay, v, type="f32", mod=("global",), pipe=Pipe.MEM)
    bld.emit("exit", pipe=Pipe.CONTROL)
    ir = bld.build("divergent" if not select else "select", [("x", "float32", n), ("y", "float32", n)], 1, 1, n,
                   header=[f"// y = x + {a} if x > 0 else x * 2**{b}  ({'select' if select else 'branch'}, "
                           f"{pattern} lanes, {taken} of 32 take the if path)",
                           "// pseudo-PTX: PTX-like for reading (labsim's kernel IR, run by ls.simt)"]).verify()
    lanes = taken_lanes(pattern, taken)
    x = np.tile(np.where(lanes, 1.0, -1.0), warps).astype(np.float32)
    y = np.where(x > 0, x + a, x * 2.0 ** b).astype(np.float32)
    return Experiment(ir, {"x": x}, {"y": y}, {"paths": paths, "taken": lanes, "a": a, "b": b, "select": select})


def _L(name: str):
    from ...compiler.isa import Label
    return Label(name)


def latency_kernel(independent: int = 4, repeats: int = 32, *, warps: int = 8) -> Experiment:
    """Each thread repeats ``repeats`` times: one global load, ``independent`` arithmetic instructions
    that do not need it, then one add that uses the loaded value. With one warp, the add waits for
    the load; with more warps the scheduler issues the others' instructions meanwhile.

    Issue model (one scheduler issuing one instruction per cycle, loads of latency L, the warps
    starting together): in each round every warp issues ``n = I + 2`` instructions (the load, I
    independent ones, the use). Greedy-then-oldest runs one warp until it stalls on its use, so the
    warps' loads are I + 1 cycles apart and none delays another: a warp repeats every L + 1 cycles.
    Loose round-robin interleaves the warps; after the loads return, the uses come round one per
    cycle before the first warp's next load, so a round lasts L + W cycles. The busy fraction is

        gto: min(1, W n / (L + 1)),    lrr: min(1, W n / (L + W))

    (:func:`latency_utilisation`), measured away from the first and last round.
    """
    if independent < 0 or repeats < 1 or warps < 1:
        raise ArgumentError("independent >= 0, repeats >= 1 and warps >= 1 are needed")
    bld = Builder()
    n = warps * WARP
    rx = bld.op("ld", "u64", Param("x", 0), mod=("param",))
    ry = bld.op("ld", "u64", Param("y", 1), mod=("param",))
    tid = bld.op("mov", "u32", Special.TID)
    ax = bld.op("mad", "u32", tid, Imm(4, "u32"), rx, mod=("wide",), dst_type="u64")
    ay = bld.op("mad", "u32", tid, Imm(4, "u32"), ry, mod=("wide",), dst_type="u64")
    acc = bld.op("mov", "f32", Imm(0.0))
    one = bld.op("mov", "f32", Imm(1.0))
    tmp = [bld.reg("f32") for _ in range(max(1, independent))]
    val = bld.reg("f32")
    for r in range(repeats):
        bld.emit("ld", val, ax, type="f32", mod=("global",), pipe=Pipe.MEM, comment=f"load {r}")
        for i in range(independent):
            bld.emit("add", tmp[i], one, Imm(float(i)), type="f32", comment="independent of the load")
        bld.emit("add", acc, acc, val, type="f32", comment="needs the load")
    for i in range(independent):
        bld.emit("add", acc, acc, tmp[i], type="f32")
    bld.emit("st", None, ay, acc, type="f32", mod=("global",), pipe=Pipe.MEM)
    bld.emit("exit", pipe=Pipe.CONTROL)
    ir = bld.build("latency", [("x", "float32", n), ("y", "float32", n)], 1, 1, n,
                   header=[f"// {repeats} x (load, {independent} independent instructions, use)"]).verify()
    x = np.arange(n, dtype=np.float32)
    extra = sum(1.0 + i for i in range(independent))
    y = (x * repeats + extra).astype(np.float32)
    return Experiment(ir, {"x": x}, {"y": y}, {"independent": independent, "repeats": repeats, "warps": warps,
                                                "per_repeat": independent + 2})


def latency_utilisation(warps: int, latency: int, independent: int, policy: str = "lrr") -> float:
    """The closed form of :func:`latency_kernel`'s steady-state issue utilisation on one scheduler."""
    n = independent + 2
    if policy == "gto":
        return min(1.0, warps * n / (latency + 1))
    if policy == "lrr":
        return min(1.0, warps * n / (latency + warps))
    raise ArgumentError(f"policy must be 'lrr' or 'gto', got {policy!r}")


def strided_kernel(stride: int = 1, *, offset: int = 0, dtype: str = "float32", threads: int = 32,
                   transposed: bool = False, rows: int = 32, cols: int = 32) -> Experiment:
    """``y[i] = x[offset + i * stride]``: one load per thread, so one warp-wide request per warp. With
    ``transposed=True``, thread i of a ``rows x cols`` row-major matrix reads column element
    ``x[i, 0]`` … i.e. ``x[i * cols]`` (a transpose's read: stride = cols)."""
    from ...compiler.isa import ptx_type
    from ...core.dtypes import ITEMSIZE, numpy_dtype

    if transposed:
        stride, offset = cols, 0
        size = rows * cols
    else:
        size = offset + (threads - 1) * stride + 1
    isz = ITEMSIZE[dtype]
    t = ptx_type(dtype)
    bld = Builder()
    rx = bld.op("ld", "u64", Param("x", 0), mod=("param",))
    ry = bld.op("ld", "u64", Param("y", 1), mod=("param",))
    tid = bld.op("mov", "u32", Special.TID)
    j = bld.op("mad", "u32", tid, Imm(stride, "u32"), Imm(offset, "u32"), mod=("lo",), comment="element index")
    ax = bld.op("mad", "u32", j, Imm(isz, "u32"), rx, mod=("wide",), dst_type="u64", comment="its address")
    v = bld.op("ld", t, ax, mod=("global",), pipe=Pipe.MEM, comment="the access being measured")
    ay = bld.op("mad", "u32", tid, Imm(isz, "u32"), ry, mod=("wide",), dst_type="u64")
    bld.emit("st", None, ay, v, type=t, mod=("global",), pipe=Pipe.MEM)
    bld.emit("exit", pipe=Pipe.CONTROL)
    ir = bld.build("strided", [("x", dtype, size), ("y", dtype, threads)], 1, 1, threads,
                   header=[f"// y[i] = x[{offset} + i*{stride}]"]).verify()
    x = np.arange(size).astype(numpy_dtype(dtype))
    y = x[offset + np.arange(threads) * stride]
    load_pc = next(i for i, ins in enumerate(ir.code) if ins.op == "ld" and "global" in ins.mod)
    return Experiment(ir, {"x": x}, {"y": y}, {"load_pc": load_pc, "stride": stride, "itemsize": isz})


__all__ = ["Experiment", "divergent_kernel", "latency_kernel", "latency_utilisation", "strided_kernel", "taken_lanes"]
