"""The SIMT machine: runs a :class:`~labsim.compiler.isa.KernelIR` with real values, warp by warp.

Introduced in "Inside a GPU" and "Warps: scheduling and divergence". Two halves:

**Values (functional execution).** The grid's blocks are cut into warps of 32 threads. Every register
is a NumPy array with one row per warp and one column per lane, so one instruction runs for every warp
that stands at the same instruction at once ("a whole wave of warps"). Each warp has an active mask and
a reconvergence stack of entries (pc, mask, reconvergence pc), as GPGPU-Sim keeps them: at a
divergent branch the top entry becomes the reconvergence entry (its pc the branch's immediate
post-dominator), the not-taken path is pushed, then the taken path, so the taken path runs first; an
entry is popped when its pc reaches its reconvergence pc. ``bar.sync`` holds a warp until every warp of
its block has arrived. Loads and stores touch real NumPy buffers; each one records the 32-byte sectors
and 128-byte lines its active lanes' addresses fall in (:mod:`.coalescing`).

**Time (the issue model).** The sequence of instructions each warp executed (with its masks) is then
played on SMs cycle by cycle: blocks are placed on SMs as occupancy allows (``ls.simt.occupancy``) and a
new block takes the place of one that finishes (waves); each SM has ``schedulers`` warp schedulers (one
per sub-partition; warp *s* of the SM belongs to scheduler *s* mod 4), each issuing one instruction
per cycle from its warps (``issue_width`` slots, to different units, if asked), chosen by the policy: loose round-robin (``"lrr"``: the first
ready warp after the one issued last) or greedy-then-oldest (``"gto"``: the last issued warp while it
is ready, else the oldest ready warp). A warp is ready when the registers its next instruction reads
are ready (a scoreboard), the unit it needs is free, and it is not waiting at a barrier.

labsim's timing is a teaching model, not a measured GPU: latencies are parameters (:class:`Timing`,
defaults are round numbers of the right order, labelled as labsim's); an instruction occupies its unit
for 32 / (lanes per sub-partition) cycles (FP32 lanes and SFUs from ``chip.sm``); caches, memory
bandwidth, bank conflicts and instruction fetch are not modelled.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from ...compiler.isa import Imm, Instr, KernelIR, Label, Param, Reg, Special, Unit, reg_dtype
from ...core import alu
from ...core.dtypes import ITEMSIZE, numpy_dtype
from ...hardware import WARP_SIZE as WARP, Chip, get as get_chip
from .coalescing import LINE, SECTOR

_BASE_SHIFT = 40  # buffer i lives at address (i + 1) << 40
_LANE_BITS = (np.uint64(1) << np.arange(WARP, dtype=np.uint64))


class SimtError(RuntimeError):
    """A kernel did something no GPU would let pass (an access out of bounds, a barrier deadlock)."""


class Stall(enum.IntEnum):
    """What a resident warp did in one cycle (the trace's ``state`` codes)."""

    ISSUED = 0  # it issued an instruction
    NOT_SELECTED = 1  # it was ready, but its scheduler issued another warp
    MEMORY = 2  # waiting for a global-memory load
    DEPENDENCY = 3  # waiting for the result of an arithmetic, SFU or shared-memory instruction
    PIPE_BUSY = 4  # the unit it needs (SFU, FMA lanes, tensor core) is still busy
    BARRIER = 5  # waiting at bar.sync for the rest of its block
    EXITED = 6  # finished
    NOT_LAUNCHED = 7  # its block is not on an SM yet (it waits for a later wave)


@dataclass(frozen=True)
class Timing:
    """The issue model's parameters, in cycles. Defaults are labsim's round numbers (not measurements):
    a global load's result arrives ``memory`` cycles after issue (hundreds of cycles on HBM GPUs),
    shared memory and shuffles in ``shared``, FMA-lane results in ``alu``, special functions in
    ``sfu``. A tile-level matrix instruction keeps its sub-partition's tensor core busy for
    FLOPs / ``tensor_flops`` cycles. The default 1,024 dense 16-bit FLOPs per cycle per tensor core
    is derived, not published: H100 SXM's 989.4 TFLOP/s / (132 SMs x 4 tensor cores x 1.83 GHz)
    is about 1,024 (preset numbers and the boost clock of NVIDIA's Hopper architecture table); a
    labsim assumption for the other generations."""

    alu: int = 4
    sfu: int = 16
    shared: int = 24
    memory: int = 400
    branch: int = 1
    tensor_flops: int = 1024  # dense 16-bit FLOPs per cycle per tensor core (derived for H100, see above)


@dataclass
class MemStat:
    """One global load or store instruction executed by some warps: per warp, how many lanes took part
    and how many 32-byte sectors and 128-byte lines their addresses touched."""

    pc: int
    store: bool
    warps: np.ndarray
    lanes: np.ndarray
    sectors: np.ndarray
    lines: np.ndarray


@dataclass
class WarpTrace:
    """What happened, per cycle and per (SM, warp). Compact NumPy arrays:

    * one row per issued warp-instruction: ``issue_cycle``, ``issue_warp`` (global warp id),
      ``issue_pc`` (index into ``code``), ``issue_mask`` (uint32, bit *l* = lane *l* active);
    * ``state[c, w]``: a :class:`Stall` code for warp ``w`` in cycle ``c`` (``ISSUED`` when it issued);
    * per traced warp (the columns of ``state``): ``warps`` (its global id), ``warp_sm``,
      ``warp_block``, ``warp_scheduler``.

    ``code`` holds each instruction's text and ``units`` its unit name, so ``code[issue_pc[i]]`` is
    what issued. Only the SMs in ``sms`` were played (all of them unless the run asked for fewer).
    """

    cycles: int
    schedulers: int
    code: list[str]
    units: list[str]
    issue_cycle: np.ndarray
    issue_warp: np.ndarray
    issue_pc: np.ndarray
    issue_mask: np.ndarray
    state: np.ndarray
    warp_sm: np.ndarray
    warp_block: np.ndarray
    warp_scheduler: np.ndarray
    sms: tuple[int, ...]
    policy: str
    warps: np.ndarray | None = None  # the global warp id of each column of ``state`` (ascending)

    @property
    def n_warps(self) -> int:
        return len(self.warp_sm)

    def active_lanes(self) -> np.ndarray:
        """Active lanes of each issued instruction."""
        return np.array([bin(int(m)).count("1") for m in self.issue_mask], dtype=np.int64)

    def lane_utilisation(self) -> float:
        """Mean of active lanes / 32 over the issued instructions."""
        return float(self.active_lanes().mean() / WARP) if len(self.issue_mask) else 0.0

    def issue_utilisation(self, sm: int | None = None) -> float:
        """Issued instructions / (cycles x schedulers) on one SM (default: the first traced one)."""
        sm = self.sms[0] if sm is None else sm
        warps = np.flatnonzero(self.warp_sm == sm)
        issued = np.isin(self.issue_warp, warps).sum()
        return float(issued / (self.cycles * self.schedulers)) if self.cycles else 0.0

    def stall_counts(self) -> dict[str, int]:
        """Warp-cycles in each state, over the traced SMs (resident warps only)."""
        vals, counts = np.unique(self.state, return_counts=True)
        return {Stall(int(v)).name.lower(): int(c) for v, c in zip(vals, counts)}

    def issues_of(self, warp: int) -> np.ndarray:
        """The pcs warp ``warp`` issued, in order."""
        return self.issue_pc[self.issue_warp == warp]


@dataclass
class KernelRun:
    """One kernel on the machine: its IR, outputs (flat buffers by parameter name), the trace and counts."""

    ir: KernelIR
    outputs: dict[str, np.ndarray]
    trace: WarpTrace | None
    warp_instructions: int  # issued warp-instructions (all warps)
    thread_instructions: int  # sum of active lanes over them
    mem: list[MemStat]
    blocks_per_sm: int
    chip: str

    @property
    def launch(self):
        """The launch it ran with: its IR's (``ls.simt.kernel_ir(kernel, chip).launch``, one object)."""
        return self.ir.launch

    @property
    def cycles(self) -> int | None:
        return self.trace.cycles if self.trace is not None else None

    def transactions(self, pc: int | None = None, store: bool | None = None) -> dict[str, int]:
        """Requests (warp-instructions), sectors and lines of global loads/stores, optionally at one pc."""
        ms = [m for m in self.mem if (pc is None or m.pc == pc) and (store is None or m.store == store)]
        return {"requests": sum(len(m.warps) for m in ms), "sectors": int(sum(m.sectors.sum() for m in ms)),
                "lines": int(sum(m.lines.sum() for m in ms)), "lanes": int(sum(m.lanes.sum() for m in ms))}


# ----------------------------------------------------------------------------------------------
# values

def _cmp(direction):
    return {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal}[direction]


def _div(a, b):
    if np.issubdtype(np.result_type(a, b), np.integer):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.floor_divide(a, np.where(b == 0, 1, b)) * (b != 0)  # HLO-like: x // 0 -> 0 (labsim)
    with np.errstate(divide="ignore", invalid="ignore"):
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


class _Wave:
    """Registers, shared memory and reconvergence stacks of the warps of some blocks."""

    def __init__(self, ir: KernelIR, blocks: np.ndarray) -> None:
        self.ir = ir
        nw = ir.warps_per_block
        self.nb = len(blocks)
        self.W = self.nb * nw
        self.wblock_local = np.repeat(np.arange(self.nb), nw)
        self.wblock = np.repeat(blocks, nw)
        self.winb = np.tile(np.arange(nw), self.nb)
        lane = np.arange(WARP)
        tid = self.winb[:, None] * WARP + lane[None, :]
        self.special = {
            Special.TID: tid.astype(np.uint32),
            Special.NTID: np.full((self.W, WARP), ir.block, np.uint32),
            Special.CTAID: np.repeat(self.wblock[:, None], WARP, 1).astype(np.uint32),
            Special.NCTAID: np.full((self.W, WARP), ir.grid, np.uint32),
            Special.LANEID: np.tile(lane, (self.W, 1)).astype(np.uint32),
            Special.WARPID: np.repeat(self.winb[:, None], WARP, 1).astype(np.uint32),
        }
        self.regs: dict[str, np.ndarray] = {}
        for r in ir.registers():
            self.regs[r.name] = np.zeros((self.W, WARP), reg_dtype(r.type))
        self.smem = np.zeros((self.nb, max(ir.shared_bytes, 16)), np.uint8)
        full = tid < ir.block
        # reconvergence stacks: the top entry in arrays (pc, mask, reconvergence pc), the entries
        # below it in a Python list per warp (empty while a warp has not diverged)
        self.pc = np.zeros(self.W, np.int64)
        self.mask = full.copy()
        self.rpc = np.full(self.W, -1, np.int64)
        self.below: list[list[list]] = [[] for _ in range(self.W)]
        self.state = np.zeros(self.W, np.int8)  # 0 running, 1 barrier, 2 exited


class _Memory:
    def __init__(self, ir: KernelIR, buffers: list[np.ndarray]) -> None:
        self.bufs = buffers
        self.itemsize = [ITEMSIZE[dt] for _, dt, _ in ir.params]
        self.names = [n for n, _, _ in ir.params]

    def base(self, i: int) -> np.uint64:
        return np.uint64((i + 1) << _BASE_SHIFT)

    def locate(self, addr: np.ndarray, pc: int):
        """Buffer index and element index of each address (a 1-D array of active-lane addresses)."""
        b = (addr >> np.uint64(_BASE_SHIFT)).astype(np.int64) - 1
        off = (addr & np.uint64((1 << _BASE_SHIFT) - 1)).astype(np.int64)
        ub = np.unique(b)
        if len(ub) and (ub.min() < 0 or ub.max() >= len(self.bufs)):
            raise SimtError(f"pc {pc}: address outside every buffer")
        return b, off, ub


def _operand(wave: _Wave, mem: _Memory, s, idx, dtype=None):
    if isinstance(s, Reg):
        return wave.regs[s.name][idx]
    if isinstance(s, Special):
        return wave.special[s][idx]
    if isinstance(s, Imm):
        return np.asarray(s.value, dtype=reg_dtype(s.type) if dtype is None else dtype)
    if isinstance(s, Param):
        return np.full((len(idx), WARP), mem.base(s.index), np.uint64)
    raise TypeError(f"operand {s!r}")


def _execute(ins: Instr, pc: int, wave: _Wave, mem: _Memory, idx: np.ndarray, mask: np.ndarray,
             memstats: list, record_mem: bool) -> None:
    """Run one non-control instruction for warps ``idx`` with lane masks ``mask`` (already guarded)."""
    op = ins.op
    dst = ins.dst
    if op == "bar" or op == "fence" or op == "nop":
        return
    if op == "ld" and "global" in ins.mod or op == "ld" and "param" in ins.mod:
        if "param" in ins.mod:
            val = _operand(wave, mem, ins.srcs[0], idx)
            _write(wave, dst, idx, mask, val)
            return
        addr = np.broadcast_to(_operand(wave, mem, ins.srcs[0], idx), (len(idx), WARP)).astype(np.uint64)
        out = wave.regs[dst.name][idx].copy()
        a = addr[mask]
        if a.size:
            b, off, ub = mem.locate(a, pc)
            vals = np.empty(a.size, out.dtype)
            for bi in ub:
                sel = b == bi
                el = off[sel] // mem.itemsize[bi]
                buf = mem.bufs[bi]
                if el.size and (el.max() >= buf.size or (off[sel] % mem.itemsize[bi]).any()):
                    raise SimtError(f"pc {pc} ({ins.text()}): load outside buffer {mem.names[bi]} "
                                    f"({buf.size} elements) or misaligned")
                vals[sel] = buf[el].astype(out.dtype)
            out[mask] = vals
        wave.regs[dst.name][idx] = out
        if record_mem:
            _record(memstats, pc, idx, addr, mask, False)
        return
    if op == "st" and "global" in ins.mod:
        addr = np.broadcast_to(_operand(wave, mem, ins.srcs[0], idx), (len(idx), WARP)).astype(np.uint64)
        val = np.broadcast_to(_operand(wave, mem, ins.srcs[1], idx), addr.shape)
        a = addr[mask]
        if a.size:
            b, off, ub = mem.locate(a, pc)
            v = val[mask]
            for bi in ub:
                sel = b == bi
                el = off[sel] // mem.itemsize[bi]
                buf = mem.bufs[bi]
                if el.size and el.max() >= buf.size:
                    raise SimtError(f"pc {pc} ({ins.text()}): store outside buffer {mem.names[bi]} ({buf.size} elements)")
                buf[el] = v[sel].astype(buf.dtype)
        if record_mem:
            _record(memstats, pc, idx, addr, mask, True)
        return
    if op in ("ld", "st") and "shared" in ins.mod:
        nd = reg_dtype(ins.type)
        view = wave.smem.view(nd)
        addr = np.broadcast_to(_operand(wave, mem, ins.srcs[0], idx), (len(idx), WARP)).astype(np.int64)
        blk = np.broadcast_to(wave.wblock_local[idx][:, None], addr.shape)
        el = addr // nd.itemsize
        if (el[mask] >= view.shape[1]).any() or (el[mask] < 0).any():
            raise SimtError(f"pc {pc} ({ins.text()}): shared-memory access outside {wave.smem.shape[1]} bytes")
        if op == "ld":
            out = wave.regs[dst.name][idx].copy()
            out[mask] = view[blk[mask], el[mask]]
            wave.regs[dst.name][idx] = out
        else:
            val = np.broadcast_to(_operand(wave, mem, ins.srcs[1], idx, nd), addr.shape)
            view[blk[mask], el[mask]] = val[mask]
        return
    if op == "cp" and "wait_all" in ins.mod:
        return
    if op == "cp":  # cp.async (per thread, 4..16 bytes) or the TMA's bulk tensor copy (one thread, a box)
        _copy(ins, pc, wave, mem, idx, mask)
        return
    if op in ("mma", "wgmma", "fma"):
        _mma(ins, wave, idx, mask)
        return
    if op == "shfl":
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
        return
    if op == "setp":
        a = _operand(wave, mem, ins.srcs[0], idx)
        b = _operand(wave, mem, ins.srcs[1], idx)
        with np.errstate(invalid="ignore"):
            _write(wave, dst, idx, mask, _cmp(ins.mod[0])(a, b))
        return
    if op == "selp":
        a, b, p = (_operand(wave, mem, s, idx) for s in ins.srcs)
        _write(wave, dst, idx, mask, np.where(p, a, b))
        return
    if op == "mad":
        a, b, c = (_operand(wave, mem, s, idx) for s in ins.srcs)
        if "wide" in ins.mod:
            r = a.astype(np.uint64) * np.uint64(b) + c.astype(np.uint64) if np.ndim(b) == 0 else \
                a.astype(np.uint64) * b.astype(np.uint64) + c.astype(np.uint64)
        else:
            r = a * b + c
        _write(wave, dst, idx, mask, r)
        return
    if op in ("mov", "cvt"):
        a = _operand(wave, mem, ins.srcs[0], idx)
        if op == "cvt" and "rmi" in ins.mod:
            a = np.floor(a)
        if op == "cvt" and np.issubdtype(reg_dtype(dst.type), np.integer) and np.asarray(a).dtype.kind == "f":
            with np.errstate(invalid="ignore", over="ignore"):
                a = np.trunc(a)
                info = np.iinfo(reg_dtype(dst.type))
                a = np.where(np.isnan(a), 0, np.clip(a, info.min, info.max))
        _write(wave, dst, idx, mask, a)
        return
    rule = ins.attrs.get("alu")
    if rule is not None:  # an instruction that names its Op: the ALU table's value rule (as ls.evaluate)
        args = [_operand(wave, mem, s, idx) for s in ins.srcs]
        _write(wave, dst, idx, mask, alu.apply(rule, *args))
        return
    if op in _ARITH:
        a = _operand(wave, mem, ins.srcs[0], idx)
        b = _operand(wave, mem, ins.srcs[1], idx)
        with np.errstate(all="ignore"):
            _write(wave, dst, idx, mask, _ARITH[op](a, b))
        return
    if op in _UNARY and _UNARY[op] is not None:
        a = _operand(wave, mem, ins.srcs[0], idx)
        with np.errstate(all="ignore"):
            _write(wave, dst, idx, mask, _UNARY[op](a))
        return
    raise SimtError(f"pc {pc}: the machine has no instruction {ins.mnemonic()!r}")


def _write(wave: _Wave, dst: Reg, idx, mask, val) -> None:
    cur = wave.regs[dst.name]
    val = np.broadcast_to(np.asarray(val), (len(idx), WARP)).astype(cur.dtype, copy=False)
    if mask.all():
        cur[idx] = val
    else:
        cur[idx] = np.where(mask, val, cur[idx])


def _distinct(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row, how many distinct values ``ids`` has among the lanes in ``mask``."""
    x = np.where(mask, ids, -1)
    x.sort(axis=1)
    new = (x[:, 1:] != x[:, :-1]) & (x[:, 1:] >= 0)
    return new.sum(axis=1) + (x[:, 0] >= 0)


def _record(memstats, pc, idx, addr, mask, store) -> None:
    a = addr.astype(np.int64)
    lanes = mask.sum(axis=1)
    keep = lanes > 0
    if not keep.any():
        return
    a, m = a[keep], mask[keep]
    memstats.append(MemStat(pc, store, idx[keep].copy(), lanes[keep], _distinct(a // SECTOR, m),
                            _distinct(a // LINE, m)))


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
    shp = (len(idx), WARP)
    sdst = np.broadcast_to(_operand(wave, mem, ins.srcs[0], idx), shp).astype(np.int64)
    gsrc = np.broadcast_to(_operand(wave, mem, ins.srcs[1], idx), shp).astype(np.uint64)
    keep = np.broadcast_to(_operand(wave, mem, ins.srcs[2], idx), sdst.shape) != 0
    blk = np.broadcast_to(wave.wblock_local[idx][:, None], sdst.shape)
    vals = np.zeros(sdst.shape, nd)
    m2 = mask & keep
    a = gsrc[m2]
    if a.size:
        b, off, ub = mem.locate(a, pc)
        v = np.empty(a.size, nd)
        for bi in ub:
            sel = b == bi
            el = off[sel] // mem.itemsize[bi]
            if el.max() >= mem.bufs[bi].size:
                raise SimtError(f"pc {pc}: cp.async reads outside buffer {mem.names[bi]}")
            v[sel] = mem.bufs[bi][el]
        vals[m2] = v
    view[blk[mask], sdst[mask] // nd.itemsize] = vals[mask]


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


def _run_values(ir: KernelIR, mem: _Memory, blocks: np.ndarray, log: list, memstats: list, record_mem: bool,
                max_steps: int) -> None:
    wave = _Wave(ir, blocks)
    code = ir.code
    n = len(code)
    labels = ir.labels
    nw = ir.warps_per_block
    steps = 0
    while True:
        running = np.flatnonzero(wave.state == 0)
        if running.size == 0:
            waiting = np.flatnonzero(wave.state == 1)
            if waiting.size == 0:
                break
            # release every block whose warps are all at the barrier or exited
            released = False
            for b in np.unique(wave.wblock_local[waiting]):
                ws = np.arange(b * nw, (b + 1) * nw)
                if (wave.state[ws] != 0).all():
                    wave.state[ws[wave.state[ws] == 1]] = 0
                    released = True
            if not released:
                raise SimtError("barrier deadlock")
            continue
        pc = int(wave.pc[running].min())
        idx = running[wave.pc[running] == pc]
        steps += 1
        if steps > max_steps:
            raise SimtError(f"kernel {ir.name} ran more than {max_steps} steps (an endless loop?)")
        if pc >= n:
            for w in idx:
                wave.state[w] = 2
            continue
        ins = code[pc]
        masks = wave.mask[idx]
        log.append((pc, idx.copy(), masks))
        gmask = masks
        if ins.guard is not None:
            p = wave.regs[ins.guard.name][idx]
            gmask = masks & (~p if ins.guard_neg else p)
        op = ins.op
        if op == "bra":
            tgt = labels[ins.srcs[0].name]
            if ins.guard is None:
                _goto(wave, idx, tgt)
            else:
                taken_all = (gmask == masks).all(axis=1)
                none = ~gmask.any(axis=1)
                _goto(wave, idx[taken_all], tgt)
                _goto(wave, idx[none & ~taken_all], pc + 1)
                for g in np.flatnonzero(~taken_all & ~none):
                    w = idx[g]
                    r = ir.reconverge[pc]
                    # the top becomes the reconvergence entry; push not-taken, then taken (runs first)
                    wave.below[w].append([r, wave.mask[w].copy(), wave.rpc[w]])
                    wave.below[w].append([pc + 1, masks[g] & ~gmask[g], r])
                    wave.pc[w], wave.mask[w], wave.rpc[w] = tgt, gmask[g], r
                    _settle(wave, w)
            continue
        if op in ("exit", "ret"):
            for g, w in enumerate(idx):
                gone = gmask[g]
                wave.mask[w] &= ~gone
                for e in wave.below[w]:
                    e[1] = e[1] & ~gone
                wave.pc[w] = pc + 1
                while not wave.mask[w].any() and wave.below[w]:
                    wave.pc[w], wave.mask[w], wave.rpc[w] = wave.below[w].pop()
                if not wave.mask[w].any():
                    wave.state[w] = 2
                else:
                    _settle(wave, w)
            continue
        _execute(ins, pc, wave, mem, idx, gmask, memstats, record_mem)
        if op == "bar":
            wave.state[idx] = 1
        _goto(wave, idx, pc + 1)


def _goto(wave: _Wave, ws, pc: int) -> None:
    if len(ws) == 0:
        return
    wave.pc[ws] = pc
    hit = ws[wave.rpc[ws] == pc]
    for w in hit:
        _settle(wave, w)


def _settle(wave: _Wave, w: int) -> None:
    """Pop entries whose pc reached their reconvergence pc (the paths met again)."""
    while wave.below[w] and wave.pc[w] == wave.rpc[w]:
        wave.pc[w], wave.mask[w], wave.rpc[w] = wave.below[w].pop()


# ----------------------------------------------------------------------------------------------
# time

def _latency_and_busy(ins: Instr, chip: Chip, timing: Timing) -> tuple[int, int, str]:
    sm = chip.sm
    per_part = lambda lanes: max(1, -(-WARP // max(1, lanes // sm.sub_partitions)))
    u = ins.unit
    if u is Unit.SFU:
        return timing.sfu, per_part(sm.sfu_lanes), "sfu"
    if u is Unit.MEM:
        return timing.memory, 1, "mem"
    if u is Unit.SHARED:
        return timing.shared, 1, "shared"
    if u is Unit.TENSOR:
        flops = 2 * ins.attrs.get("rows", 16) * ins.attrs.get("tn", 8) * ins.attrs.get("tk", 16)
        per_clock = timing.tensor_flops
        busy = max(1, int(np.ceil(flops / per_clock)))
        return busy + timing.alu, busy, "tensor"
    if u is Unit.CONTROL:
        return timing.branch, 1, "control"
    if ins.op in ("ld",) and "param" in ins.mod:
        return timing.alu, 1, "alu"
    return timing.alu, per_part(sm.fp32_lanes), "alu"


def _play(ir: KernelIR, chip: Chip, seqs: list[tuple[np.ndarray, np.ndarray]], n_blocks: int, blocks_per_sm: int,
          n_sms: int, traced_sms: int, policy: str, timing: Timing, schedulers: int,
          max_cycles: int, issue_width: int = 1) -> WarpTrace:
    """Play each warp's executed instruction sequence on ``traced_sms`` SMs (blocks given out in waves)."""
    nw = ir.warps_per_block
    code = ir.code
    regs = {r.name: i for i, r in enumerate(ir.registers())}
    # asynchronous copies (cp.async, the TMA) complete into a pseudo-register that cp.async.wait_all
    # and the fence before the barrier read: the copy's memory latency is paid there
    regs["%async"] = len(regs)
    lat = [_latency_and_busy(ins, chip, timing) for ins in code]
    reads = [[regs[r.name] for r in ins.reads()] for ins in code]
    writes = [regs[ins.dst.name] if ins.dst is not None else -1 for ins in code]
    for pc, ins in enumerate(code):
        if ins.op == "cp" and "wait_all" not in ins.mod:
            writes[pc] = regs["%async"]
        elif (ins.op == "cp" and "wait_all" in ins.mod) or (ins.op == "fence" and "async" in ins.mod):
            reads[pc] = reads[pc] + [regs["%async"]]
    unit_id = {"alu": 0, "sfu": 1, "mem": 2, "shared": 3, "tensor": 4, "control": 5}
    # blocks to SMs: round robin, then to whichever SM frees a slot
    sms = list(range(min(n_sms, max(1, n_blocks))))[:traced_sms]
    pending = {s: [] for s in sms}
    # the first wave: block b -> SM b % n_sms while each SM has room; later blocks queue per SM in order
    for b in range(n_blocks):
        s = b % min(n_sms, max(1, n_blocks))
        if s in pending:
            pending[s].append(b)
    W = n_blocks * nw
    warp_sm = np.full(W, -1, np.int64)
    warp_sched = np.full(W, -1, np.int64)
    for s in sms:
        for b in pending[s]:
            warp_sm[b * nw:(b + 1) * nw] = s
    traced = np.flatnonzero(warp_sm >= 0)
    col = {int(w): i for i, w in enumerate(traced)}
    states = []
    ic, iw, ip, im = [], [], [], []
    cycle = 0
    # per SM state
    class SM:
        pass
    sm_state = {}
    for s in sms:
        o = SM()
        o.queue = list(pending[s])
        o.slots = [None] * (blocks_per_sm * nw)  # warp ids resident in slots
        o.block_warps = {}
        o.last = [-1] * schedulers
        o.busy = [[0] * len(unit_id) for _ in range(schedulers)]
        sm_state[s] = o
    pos = [0] * W
    ready = {}
    age = {}
    at_barrier = [False] * W
    done = [False] * W
    launched = [False] * W
    seq_pc = [q[0].tolist() for q in seqs]
    seq_mask = [q[1].tolist() for q in seqs]
    nseq = [len(q) for q in seq_pc]
    NL, EX, BA, ME, DE, PB, NS, IS = (int(x) for x in (Stall.NOT_LAUNCHED, Stall.EXITED, Stall.BARRIER, Stall.MEMORY,
                                                       Stall.DEPENDENCY, Stall.PIPE_BUSY, Stall.NOT_SELECTED,
                                                       Stall.ISSUED))
    unit_of = [unit_id[x[2]] for x in lat]
    pending_mem = {}

    def launch(o, cyc):
        while o.queue:
            free = [i for i, w in enumerate(o.slots) if w is None]
            if len(free) < nw:
                return
            b = o.queue.pop(0)
            ws = list(range(b * nw, (b + 1) * nw))
            o.block_warps[b] = ws
            for i, w in zip(free, ws):
                o.slots[i] = w
                warp_sched[w] = i % schedulers
                ready[w] = [cyc] * len(regs)
                pending_mem[w] = [False] * len(regs)
                age[w] = (cyc, w)
                launched[w] = True
                if nseq[w] == 0:
                    done[w] = True

    for s in sms:
        launch(sm_state[s], 0)
    n_issued = 0
    remaining = sum(len(pending[s]) for s in sms)
    total_blocks = remaining
    finished_blocks = 0
    while finished_blocks < total_blocks:
        if cycle >= max_cycles:
            raise SimtError(f"timing model ran past {max_cycles} cycles")
        st = [NL] * len(traced)
        wake = max_cycles
        for s in sms:
            o = sm_state[s]
            for k in range(schedulers):
                cands = [w for w in o.slots[k::schedulers] if w is not None]
                ready_ws = []
                busy_k = o.busy[k]
                for w in cands:
                    cw = col[w]
                    if done[w]:
                        st[cw] = EX
                        continue
                    if at_barrier[w]:
                        st[cw] = BA
                        continue
                    pc = seq_pc[w][pos[w]]
                    rw = ready[w]
                    late = [r for r in reads[pc] if rw[r] > cycle]
                    if late:
                        pm = pending_mem[w]
                        st[cw] = ME if any(pm[r] for r in late) else DE
                        t = max(rw[r] for r in late)
                        if t < wake:
                            wake = t
                        continue
                    t = busy_k[unit_of[pc]]
                    if t > cycle:
                        st[cw] = PB
                        if t < wake:
                            wake = t
                        continue
                    ready_ws.append(w)
                    st[cw] = NS
                for _slot in range(issue_width):
                    if not ready_ws:
                        break
                    last = o.last[k]
                    if policy == "gto":
                        w = last if last in ready_ws else min(ready_ws, key=age.__getitem__)
                    else:  # lrr: the first ready warp after the last issued one, in slot order
                        order = sorted(cands, key=age.__getitem__)
                        start = order.index(last) + 1 if last in order else 0
                        rot = order[start:] + order[:start]
                        w = next(x for x in rot if x in ready_ws)
                    o.last[k] = w
                    st[col[w]] = IS
                    pc = seq_pc[w][pos[w]]
                    latency, busy, uname = lat[pc]
                    busy_k[unit_of[pc]] = cycle + busy
                    if writes[pc] >= 0:
                        ready[w][writes[pc]] = cycle + latency
                        pending_mem[w][writes[pc]] = uname == "mem"
                    ic.append(cycle)
                    iw.append(w)
                    ip.append(pc)
                    im.append(seq_mask[w][pos[w]])
                    pos[w] += 1
                    if code[pc].op == "bar":
                        at_barrier[w] = True
                    if pos[w] >= nseq[w]:
                        done[w] = True
                    # a further slot this cycle: another ready warp whose unit is still free
                    ready_ws = [x for x in ready_ws if x != w and busy_k[unit_of[seq_pc[x][pos[x]]]] <= cycle]
            # barriers: release a block when all its unfinished warps wait
            for b, ws in list(o.block_warps.items()):
                live = [w for w in ws if not done[w]]
                if live and all(at_barrier[w] for w in live):
                    for w in live:
                        at_barrier[w] = False
                if all(done[w] for w in ws):
                    del o.block_warps[b]
                    finished_blocks += 1
                    for i, x in enumerate(o.slots):
                        if x in ws:
                            o.slots[i] = None
                    launch(o, cycle + 1)
        states.append(st)
        cycle += 1
        if len(ic) == n_issued and finished_blocks < total_blocks:
            # nothing issued: every warp waits for a register, a pipe or a barrier. Skip to the next
            # cycle at which something becomes ready; the states repeat meanwhile.
            if cycle < wake < max_cycles:
                skip = wake - cycle
                states.extend([st] * skip)
                cycle += skip
        n_issued = len(ic)
    state = np.array(states, np.uint8).reshape(cycle, len(traced)) if states else np.zeros((0, len(traced)), np.uint8)
    return WarpTrace(
        cycles=cycle, schedulers=schedulers, code=[i.text() for i in code], units=[i.unit.value for i in code],
        issue_cycle=np.array(ic, np.int64), issue_warp=np.array(iw, np.int64), issue_pc=np.array(ip, np.int64),
        issue_mask=np.array(im, np.uint32), state=state, warp_sm=warp_sm[traced],
        warp_block=traced // nw, warp_scheduler=warp_sched[traced], sms=tuple(sms), policy=policy, warps=traced)


# ----------------------------------------------------------------------------------------------
# the public entry point for one kernel IR

def run_ir(ir: KernelIR, buffers: dict[str, np.ndarray] | list, chip: str | Chip = "H100 SXM", *,
           policy: str = "lrr", timing: Timing | None = None, trace: bool | int | str = "auto",
           schedulers: int | None = None, sms: int | None = None, blocks_per_sm: int | None = None,
           issue_width: int = 1, max_steps: int = 2_000_000, max_cycles: int = 5_000_000,
           record_mem: bool = True) -> KernelRun:
    """Run ``ir`` on ``chip``'s SMs. ``buffers`` gives every parameter's data (by name, or a list in
    parameter order; outputs may be omitted: they start as zeros). Returns a :class:`KernelRun`.

    ``trace``: ``True`` plays every SM in the issue model, an int plays that many SMs, ``False`` none
    (values only), ``"auto"`` all SMs for small kernels (up to 4,096 warp-instructions per SM) and
    the first SM otherwise. ``sms`` overrides the SM count (default ``chip.compute_units``),
    ``schedulers`` the schedulers per SM (default: its sub-partitions), ``issue_width`` the
    instructions one scheduler may issue per cycle (from different warps; default 1), ``blocks_per_sm`` the
    occupancy (default: ``ls.simt.occupancy`` of the kernel's block, registers and shared memory).
    """
    from .occupancy import max_registers_per_thread, occupancy

    c = get_chip(chip)
    if c.sm is None:
        raise SimtError(f"{c.name} is not a GPU with SMs; the SIMT machine runs NVIDIA-style GPUs")
    if issue_width < 1:
        raise ValueError(f"issue_width must be at least 1 instruction per cycle, got {issue_width}")
    if policy not in ("lrr", "gto"):
        raise ValueError(f"policy must be 'lrr' (loose round-robin) or 'gto' (greedy-then-oldest), got {policy!r}")
    timing = timing or Timing()
    if isinstance(buffers, dict):
        missing = [n for n, _, _ in ir.params[:ir.n_inputs] if n not in buffers]
        if missing:
            raise ValueError(f"kernel {ir.name}: no data for input(s) {missing}")
        given = [buffers.get(n) for n, _, _ in ir.params]
    else:
        given = list(buffers) + [None] * (len(ir.params) - len(buffers))
    flat = []
    for (name, dt, size), arr in zip(ir.params, given):
        if arr is None:
            flat.append(np.zeros(size, numpy_dtype(dt)))
            continue
        a = np.asarray(arr)
        if a.size != size:
            raise ValueError(f"kernel {ir.name}: buffer {name} needs {size} elements of {dt}, got {a.size}")
        flat.append(np.array(a, dtype=numpy_dtype(dt)).ravel())
    mem = _Memory(ir, flat)
    regs = min(max_registers_per_thread(c, ir.block), max(16, ir.registers_per_thread))
    if blocks_per_sm is None:
        blocks_per_sm = occupancy(c, threads_per_block=ir.block, registers_per_thread=regs,
                                  shared_bytes_per_block=min(ir.launch.shared_bytes, c.sm.shared_per_block)).blocks_per_sm
    n_sms = sms or c.compute_units
    wave_blocks = max(1, n_sms * blocks_per_sm)
    log: list = []
    memstats: list = []
    chunk = max(1, min(wave_blocks, max(1, 65536 // max(ir.block, 1))))
    for b0 in range(0, ir.grid, chunk):
        blocks = np.arange(b0, min(ir.grid, b0 + chunk))
        part: list = []
        _run_values(ir, mem, blocks, part, memstats, record_mem, max_steps)
        nw = ir.warps_per_block
        log.extend((pc, idx + b0 * nw, m) for pc, idx, m in part)
    W = ir.grid * ir.warps_per_block
    warp_instr = sum(len(idx) for _, idx, _ in log)
    thread_instr = int(sum(int(m.sum()) for _, _, m in log))
    tr = None
    if trace:
        if trace == "auto":
            per_sm = warp_instr / max(1, min(n_sms, ir.grid))
            traced = n_sms if per_sm <= 4096 else 1
        elif trace is True:
            traced = n_sms
        else:
            traced = int(trace)
        pcs = np.concatenate([np.full(len(idx), pc) for pc, idx, _ in log]) if log else np.zeros(0, np.int64)
        ws = np.concatenate([idx for _, idx, _ in log]) if log else np.zeros(0, np.int64)
        ms = np.concatenate([(m.astype(np.uint64) * _LANE_BITS).sum(axis=1) for _, _, m in log]) if log else np.zeros(0)
        order = np.argsort(ws, kind="stable")
        ws_s, pcs_s, ms_s = ws[order], pcs[order], ms[order].astype(np.uint32)
        bounds = np.searchsorted(ws_s, np.arange(W + 1))
        seqs = [(pcs_s[bounds[w]:bounds[w + 1]], ms_s[bounds[w]:bounds[w + 1]]) for w in range(W)]
        tr = _play(ir, c, seqs, ir.grid, blocks_per_sm, n_sms, traced, policy, timing,
                   schedulers or c.sm.sub_partitions, max_cycles, issue_width)
    outs = {name: flat[i] for i, (name, _, _) in enumerate(ir.params) if i >= ir.n_inputs}
    return KernelRun(ir, outs, tr, warp_instr, thread_instr, memstats, blocks_per_sm, c.name)


__all__ = ["KernelRun", "MemStat", "SimtError", "Stall", "Timing", "WarpTrace", "run_ir"]
