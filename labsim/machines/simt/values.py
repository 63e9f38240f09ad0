"""What each instruction computes: the instruction table (mnemonic -> handler) and its handlers. An
instruction that names its Op (``attrs["alu"]``) takes its value from the ALU table (:mod:`labsim.core.alu`),
as ``ls.evaluate`` does; the rest (index arithmetic, loads and stores, copies, matrix tiles, shuffles) are
the machine's own."""
from __future__ import annotations

import numpy as np

from ...compiler.isa import Instr
from ...core import alu
from ...hardware import WARP_SIZE as WARP
from .coalescing import LINE, SECTOR
from .results import MemStat, SimtError
from .state import _Memory, _Wave, _operand, _write, reg_dtype


def _cmp(direction):
    return {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal}[direction]


def _div(a, b):  # (run_ir silences floating-point warnings)
    if np.issubdtype(np.result_type(a, b), np.integer):
        return np.floor_divide(a, np.where(b == 0, 1, b)) * (b != 0)  # HLO-like: x // 0 -> 0 (labsim)
    return np.true_divide(a, b)


_ARITH = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
    "div": _div, "and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor,
    "rem": lambda a, b: np.remainder(a, np.where(b == 0, 1, b)),
    "shl": np.left_shift, "shr": np.right_shift,
}
_UNARY = {
    "neg": np.negative, "abs": np.abs, "ex2": np.exp2, "lg2": np.log2, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "rcp": lambda x: 1.0 / x, "tanh": np.tanh, "not": np.logical_not,
    "erf": None, "floor": np.floor,
}


def _active(wave: _Wave, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The values of ``x`` on the active lanes, warp by warp, lane by lane (as ``x[mask]``)."""
    return x.ravel() if wave.full else x[mask]


def _ld_global(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask, memstats: list, record_mem: bool) -> None:
    """ld.global / ld.param: a load from device memory (or a parameter's address)."""
    dst = ins.dst
    if "param" in ins.mod:
        val = _operand(wave, mem, ins.srcs[0], idx)
        _write(wave, dst, idx, mask, val)
        return
    addr = _lanes(_operand(wave, mem, ins.srcs[0], idx), len(idx), np.uint64)
    if getattr(ins.srcs[0], "name", None) == dst.name:
        addr = addr.copy()  # the load overwrites its own address register; the record needs the address
    reg = wave.regs[dst.name]
    a = _active(wave, addr, mask)
    if a.size:
        vals = np.empty(a.size, reg.dtype)
        for bi, sel, off in mem.parts(a, pc):
            size = mem.itemsize[bi]
            el = off // size
            buf = mem.bufs[bi]
            if el.max() >= buf.size or (off % size).any():
                raise SimtError(f"pc {pc} ({ins.text()}): load outside buffer {mem.names[bi]} "
                                f"({buf.size} elements) or misaligned")
            if sel is None:
                vals = buf[el].astype(reg.dtype, copy=False)
            else:
                vals[sel] = buf[el]
        if wave.full:
            reg[wave.sel] = vals.reshape(addr.shape)
        else:
            out = reg[wave.sel].copy()
            out[mask] = vals
            reg[wave.sel] = out
    if record_mem:
        _record(memstats, pc, idx, addr, mask, False)


def _st_global(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask, memstats: list, record_mem: bool) -> None:
    """st.global: a store to device memory."""
    addr = _lanes(_operand(wave, mem, ins.srcs[0], idx), len(idx), np.uint64)
    val = np.broadcast_to(_operand(wave, mem, ins.srcs[1], idx), addr.shape)
    a = _active(wave, addr, mask)
    if a.size:
        v = _active(wave, val, mask)
        for bi, sel, off in mem.parts(a, pc):
            el = off // mem.itemsize[bi]
            buf = mem.bufs[bi]
            if el.max() >= buf.size:
                raise SimtError(f"pc {pc} ({ins.text()}): store outside buffer {mem.names[bi]} ({buf.size} elements)")
            buf[el] = (v if sel is None else v[sel]).astype(buf.dtype, copy=False)
    if record_mem:
        _record(memstats, pc, idx, addr, mask, True)


def _shared(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask, memstats: list, record_mem: bool) -> None:
    """ld.shared / st.shared: the block's shared memory."""
    op = ins.op
    dst = ins.dst
    nd = reg_dtype(ins.type)
    view = wave.smem.view(nd)
    addr = _lanes(_operand(wave, mem, ins.srcs[0], idx), len(idx), np.int64)
    el = addr // nd.itemsize
    if wave.full:  # every lane: no mask to apply
        blk = wave.wblock_local[idx][:, None]
        if el.max() >= view.shape[1] or el.min() < 0:
            raise SimtError(f"pc {pc} ({ins.text()}): shared-memory access outside {wave.smem.shape[1]} bytes")
        if op == "ld":
            wave.regs[dst.name][wave.sel] = view[blk, el]
        else:
            view[blk, el] = _operand(wave, mem, ins.srcs[1], idx, nd)
        return
    blk = np.broadcast_to(wave.wblock_local[idx][:, None], addr.shape)
    if (el[mask] >= view.shape[1]).any() or (el[mask] < 0).any():
        raise SimtError(f"pc {pc} ({ins.text()}): shared-memory access outside {wave.smem.shape[1]} bytes")
    if op == "ld":
        out = wave.regs[dst.name][wave.sel].copy()
        out[mask] = view[blk[mask], el[mask]]
        wave.regs[dst.name][wave.sel] = out
    else:
        val = np.broadcast_to(_operand(wave, mem, ins.srcs[1], idx, nd), addr.shape)
        view[blk[mask], el[mask]] = val[mask]


def _lanes(x, n: int, dtype) -> np.ndarray:
    """Operand value ``x`` as an (n warps, 32 lanes) array of ``dtype`` (not a copy where it already is one)."""
    x = np.asarray(x)
    if x.shape != (n, WARP):
        x = np.broadcast_to(x, (n, WARP))
    return x if dtype is None or x.dtype == dtype else x.astype(dtype)


def _cp(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask, memstats: list, record_mem: bool) -> None:
    """cp.async (per thread, 4..16 bytes) or the TMA's bulk tensor copy (one thread, a box)."""
    _copy(ins, pc, wave, mem, idx, mask)


def _matrix(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask, memstats: list, record_mem: bool) -> None:
    """A tile-level matrix instruction (mma.sync, wgmma, or FFMA on the fp32 lanes)."""
    _mma(ins, wave, idx, mask)


def _shfl(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask, memstats: list, record_mem: bool) -> None:
    """shfl.sync: exchange registers between the lanes of a warp."""
    dst = ins.dst
    a = _operand(wave, mem, ins.srcs[0], idx)
    k = int(ins.srcs[1].value)
    lane = np.arange(WARP)
    if "bfly" in ins.mod:
        src = lane ^ k
    elif "down" in ins.mod:
        src = np.where(lane + k < WARP, lane + k, lane)
    elif "idx" in ins.mod:
        src = np.full(WARP, k)
    else:
        raise SimtError(f"shfl mode {ins.mod}")
    _write(wave, dst, idx, mask, a[:, src])


def _setp(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask, memstats: list, record_mem: bool) -> None:
    """setp: compare, into a predicate."""
    dst = ins.dst
    a = _operand(wave, mem, ins.srcs[0], idx)
    b = _operand(wave, mem, ins.srcs[1], idx)
    _write(wave, dst, idx, mask, _cmp(ins.mod[0])(a, b))


def _selp(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask, memstats: list, record_mem: bool) -> None:
    """selp: select by a predicate."""
    dst = ins.dst
    a, b, p = (_operand(wave, mem, s, idx) for s in ins.srcs)
    _write(wave, dst, idx, mask, np.where(p, a, b))


def _mad(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask, memstats: list, record_mem: bool) -> None:
    """mad: multiply-add (index arithmetic; .wide into 64 bits)."""
    dst = ins.dst
    a, b, c = (_operand(wave, mem, s, idx) for s in ins.srcs)
    r = _wide_mad(a, b, c) if "wide" in ins.mod else a * b + c
    _write(wave, dst, idx, mask, r)


def _mov(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask, memstats: list, record_mem: bool) -> None:
    """mov / cvt: copy or convert (cvt.rmi rounds toward -inf; float to int truncates and saturates)."""
    _write(wave, ins.dst, idx, mask, _converted(ins, _operand(wave, mem, ins.srcs[0], idx)))


def _converted(ins: Instr, a):
    """The value ``mov`` / ``cvt`` ``ins`` writes for source value ``a``."""
    op = ins.op
    if op == "cvt" and "rmi" in ins.mod:
        a = np.floor(a)
    if op == "cvt" and np.issubdtype(reg_dtype(ins.dst.type), np.integer) and np.asarray(a).dtype.kind == "f":
        a = np.trunc(a)
        info = np.iinfo(reg_dtype(ins.dst.type))
        a = np.where(np.isnan(a), 0, np.clip(a, info.min, info.max))
    return a


def _wide_mad(a, b, c):
    c = c if c.dtype == np.uint64 else c.astype(np.uint64)
    if np.ndim(b) == 0:
        return a.astype(np.uint64) * np.uint64(b) + c
    return a.astype(np.uint64) * b.astype(np.uint64) + c


def _alu(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask, memstats: list, record_mem: bool) -> None:
    """An instruction that names its Op: the ALU table's value rule, as ls.evaluate computes it."""
    dst = ins.dst
    rule = ins.attrs["alu"]
    args = [_operand(wave, mem, s, idx) for s in ins.srcs]
    fn = alu.ALU.get(rule)  # alu.apply's rule, called directly: run_ir silences warnings as apply does
    _write(wave, dst, idx, mask, alu.apply(rule, *args) if fn is None else fn(*args))


def _arith(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask, memstats: list, record_mem: bool) -> None:
    """Index arithmetic and logic on the FMA lanes (the machine's own integer semantics)."""
    op = ins.op
    dst = ins.dst
    a = _operand(wave, mem, ins.srcs[0], idx)
    b = _operand(wave, mem, ins.srcs[1], idx)
    _write(wave, dst, idx, mask, _ARITH[op](a, b))


def _unary(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask, memstats: list, record_mem: bool) -> None:
    """Unary instructions without an Op (index arithmetic, rcp of the IR's helpers)."""
    op = ins.op
    dst = ins.dst
    a = _operand(wave, mem, ins.srcs[0], idx)
    _write(wave, dst, idx, mask, _UNARY[op](a))


def _nop(ins, pc, wave, mem, idx, mask, memstats, record_mem) -> None:
    """bar.sync, fence, nop, cp.async.wait_all: no value (their effect is on control or on timing)."""


def _ld(ins, pc, wave, mem, idx, mask, memstats, record_mem) -> None:
    (_shared if "shared" in ins.mod else _ld_global)(ins, pc, wave, mem, idx, mask, memstats, record_mem)


def _st(ins, pc, wave, mem, idx, mask, memstats, record_mem) -> None:
    (_shared if "shared" in ins.mod else _st_global)(ins, pc, wave, mem, idx, mask, memstats, record_mem)


def _cp_or_wait(ins, pc, wave, mem, idx, mask, memstats, record_mem) -> None:
    (_nop if "wait_all" in ins.mod else _cp)(ins, pc, wave, mem, idx, mask, memstats, record_mem)


INSTRUCTIONS = {
    "bar": _nop, "fence": _nop, "nop": _nop, "ld": _ld, "st": _st, "cp": _cp_or_wait,
    "mma": _matrix, "wgmma": _matrix, "fma": _matrix, "shfl": _shfl, "setp": _setp, "selp": _selp,
    "mad": _mad, "mov": _mov, "cvt": _mov,
}
"""Mnemonic -> handler. Any other instruction that names its Op (``attrs["alu"]``) runs :func:`_alu`;
the rest of the machine's own arithmetic is :data:`_ARITH` and :data:`_UNARY`."""


def _execute(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx: np.ndarray, mask: np.ndarray,
             memstats: list, record_mem: bool) -> None:
    """Run one non-control instruction for warps ``idx`` with lane masks ``mask`` (already guarded)."""
    h = INSTRUCTIONS.get(ins.op)
    if h is None:
        if ins.attrs.get("alu") is not None:
            h = _alu
        elif ins.op in _ARITH:
            h = _arith
        elif _UNARY.get(ins.op) is not None:
            h = _unary
        else:
            raise SimtError(f"pc {pc}: the machine has no instruction {ins.mnemonic()!r}")
    h(ins, pc, wave, mem, idx, mask, memstats, record_mem)


def _record(memstats, pc, idx, addr, mask, store) -> None:
    """A MemStat for one load or store: per warp with an active lane, its lanes and the distinct 32-byte
    sectors and 128-byte lines their addresses fall in (one sort of the addresses serves both counts:
    an address's sector and line grow with it; rows already in order, as coalesced accesses are, are
    not sorted)."""
    lanes = mask.sum(axis=1)
    keep = lanes > 0
    if not keep.any():
        return
    a = addr.view(np.int64) if addr.dtype == np.uint64 else addr.astype(np.int64)  # addresses < 2**63
    if not keep.all():
        a, mask, idx, lanes = a[keep], mask[keep], idx[keep], lanes[keep]
    full = bool(mask.all())
    x = a if full else np.where(mask, a, -1)  # an inactive lane: -1, below every address
    if not (x[:, 1:] >= x[:, :-1]).all():
        x = np.sort(x, axis=1)
    memstats.append(MemStat(pc, store, idx.copy(), lanes, _distinct_sorted(x // SECTOR, full),
                            _distinct_sorted(x // LINE, full)))


def _distinct_sorted(x: np.ndarray, full: bool) -> np.ndarray:
    """Per row of ``x`` (sorted; -1 marks an inactive lane), how many distinct values >= 0 it holds."""
    if full:  # no inactive lane
        return (x[:, 1:] != x[:, :-1]).sum(axis=1) + 1
    new = (x[:, 1:] != x[:, :-1]) & (x[:, 1:] >= 0)
    return new.sum(axis=1) + (x[:, 0] >= 0)


def _copy(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx, mask) -> None:
    at = ins.attrs
    if at.get("bulk"):  # TMA: srcs (shared byte address, row0, col0); attrs: param, rows, cols, box, dtype
        shp = (len(idx), WARP)
        sdst = np.broadcast_to(_operand(wave, mem, ins.srcs[0], idx), shp).astype(np.int64)
        r0 = np.broadcast_to(_operand(wave, mem, ins.srcs[1], idx), shp).astype(np.int64)
        c0 = np.broadcast_to(_operand(wave, mem, ins.srcs[2], idx), shp).astype(np.int64)
        buf = mem.bufs[at["param"]]
        rows, cols = at["shape"]
        br, bc = at["box"]
        view = wave.smem.view(reg_dtype(at["dtype"]))
        src = buf.reshape(rows, cols)
        for g in range(len(idx)):
            lanes = np.flatnonzero(mask[g])
            for l in lanes:
                a, b = int(r0[g, l]), int(c0[g, l])
                box = np.zeros((br, bc), view.dtype)
                part = src[a:a + br, b:b + bc]
                box[:part.shape[0], :part.shape[1]] = part
                e0 = int(sdst[g, l]) // view.itemsize
                view[wave.wblock_local[idx[g]], e0:e0 + br * bc] = box.ravel()
        return
    # cp.async: srcs (shared byte address, global address, src_size): src_size 0 fills zeros
    nd = reg_dtype(ins.type)
    view = wave.smem.view(nd)
    n = len(idx)
    sdst = _lanes(_operand(wave, mem, ins.srcs[0], idx), n, np.int64)
    gsrc = _lanes(_operand(wave, mem, ins.srcs[1], idx), n, np.uint64)
    keep = _lanes(_operand(wave, mem, ins.srcs[2], idx), n, None) != 0
    if wave.full and keep.all():  # every lane copies: no mask, no zero fill
        v = np.empty(gsrc.size, nd)
        _gather(mem, gsrc.ravel(), v, pc)
        view[wave.wblock_local[idx][:, None], sdst // nd.itemsize] = v.reshape(sdst.shape)
        return
    blk = np.broadcast_to(wave.wblock_local[idx][:, None], sdst.shape)
    vals = np.zeros(sdst.shape, nd)
    m2 = mask & keep
    a = gsrc[m2]
    if a.size:
        v = np.empty(a.size, nd)
        _gather(mem, a, v, pc)
        vals[m2] = v
    view[blk[mask], sdst[mask] // nd.itemsize] = vals[mask]


def _gather(mem: _Memory, a: np.ndarray, v: np.ndarray, pc: int) -> None:
    """cp.async's reads: ``v[i]`` = the element at device address ``a[i]``."""
    for bi, sel, off in mem.parts(a, pc):
        el = off // mem.itemsize[bi]
        if el.max() >= mem.bufs[bi].size:
            raise SimtError(f"pc {pc}: cp.async reads outside buffer {mem.names[bi]}")
        if sel is None:
            v[:] = mem.bufs[bi][el]
        else:
            v[sel] = mem.bufs[bi][el]


def _mma(ins: Instr, wave: _Wave, idx, mask) -> None:
    """Tile-level matrix instruction: acc[rows of this warp (group)] += A_s[rows, :] @ B_s (fp32 accumulate).

    attrs: a, b, acc = shared byte offsets; tm, tn, tk; rows = rows per issuing warp (group); the
    warp's row block is (warp index in block // group) * rows. Only warps with an active lane issue."""
    at = ins.attrs
    tm, tn, tk, rows = at["tm"], at["tn"], at["tk"], at["rows"]
    nd = reg_dtype(at["dtype"])
    v_in = wave.smem.view(nd)
    v_acc = wave.smem.view(np.float32)
    issuing = mask.any(axis=1)
    for g in np.flatnonzero(issuing):
        w = idx[g]
        b = wave.wblock_local[w]
        if int(wave.winb[w]) % at.get("group", 1):
            continue  # a warpgroup instruction: the group's first warp stands for the four
        r0 = (int(wave.winb[w]) // at.get("group", 1) - at.get("shift_groups", 0)) * rows
        if r0 >= tm or r0 < 0:
            continue
        a0 = at["a"] // nd.itemsize
        A = v_in[b, a0:a0 + tm * tk].reshape(tm, tk)[r0:r0 + rows].astype(np.float32)
        b0 = at["b"] // nd.itemsize
        B = v_in[b, b0:b0 + tk * tn].reshape(tk, tn).astype(np.float32)
        c0 = at["acc"] // 4
        C = v_acc[b, c0:c0 + tm * tn].reshape(tm, tn)
        C[r0:r0 + rows] += A @ B
