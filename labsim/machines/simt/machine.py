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
and 128-byte lines its active lanes' addresses fall in (:mod:`.coalescing`). While every warp of the
wave stands at one instruction and none has diverged, a step works on whole register arrays (no gather
or scatter), and an instruction with all lanes active runs as decoded once per wave (:mod:`.decoded`);
that changes how fast the values are computed, not what they are.

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
from ...support.errors import ArgumentError

import numpy as np

from ...compiler.isa import KernelIR
from ...core.dtypes import numpy_dtype
from ...hardware import WARP_SIZE as WARP, Chip, get as get_chip  # noqa: F401  (WARP: re-exported)
from .results import KernelRun, MemStat, SimtError, Stall, Timing, WarpTrace
from .schedule import _play
from .state import _LANE_BITS, _Memory, _Wave
from .decoded import decode
from .values import _execute


def _run_values(ir: KernelIR, mem: _Memory, blocks: np.ndarray, log: list, memstats: list, record_mem: bool,
                max_steps: int) -> None:
    """Run the warps of ``blocks`` to the end, logging (pc, warps, masks) for every issued instruction.

    Each step runs the instruction at the lowest pc among running warps for every warp standing there.
    While every warp of the wave runs at one pc and none has diverged (the common case), the step
    reads and writes whole register arrays (no gather or scatter) and keeps one copy of the masks."""
    wave = _Wave(ir, blocks)
    fast = decode(ir, wave, mem)
    code = ir.code
    n = len(code)
    labels = ir.labels
    nw = ir.warps_per_block
    W = wave.W
    all_idx = np.arange(W)
    steps = 0
    uni = False  # every warp running at pc ``upc``, no warp diverged: ``umask`` holds their masks
    upc = 0
    umask = None
    ufull = False
    while True:
        if uni:
            pc, idx, masks = upc, all_idx, umask
            wave.sel = _ALL
        else:
            running = np.flatnonzero(wave.state == 0)
            if running.size == 0:
                waiting = np.flatnonzero(wave.state == 1)
                if waiting.size == 0:
                    break
                _release(wave, waiting, nw)
                continue
            pcs = wave.pc[running]
            pc = int(pcs.min())
            if running.size == W and wave.ndiv == 0 and (pcs == pc).all():
                uni, upc, idx = True, pc, all_idx
                masks = umask = wave.mask.copy()
                ufull = bool(umask.all())
                wave.sel = _ALL
            else:
                idx = running[pcs == pc]
                masks = wave.mask[idx]
                wave.sel = idx
        steps += 1
        if steps > max_steps:
            raise SimtError(f"kernel {ir.name} ran more than {max_steps} steps (an endless loop?)")
        wave.full = False
        if pc >= n:
            wave.state[idx] = 2
            uni = False
            continue
        log.append((pc, idx, masks))
        ins = code[pc]
        if uni and ufull:
            f = fast[pc]
            if f is not None:  # every lane of every warp: dst[...] = rule(*operands), no lookups
                f[2][...] = f[0](*f[1])
                upc = pc + 1
                continue
            if ins.op == "bra" and ins.guard is not None:  # taken by all lanes, or by none?
                p = wave.regs[ins.guard.name]
                if p.all() if not ins.guard_neg else not p.any():
                    upc = labels[ins.srcs[0].name]
                    continue
                if not p.any() if not ins.guard_neg else p.all():
                    upc = pc + 1
                    continue
        gmask = masks
        if ins.guard is not None:
            p = wave.regs[ins.guard.name][wave.sel]
            gmask = masks & (~p if ins.guard_neg else p)
        op = ins.op
        if op == "bra":
            tgt = labels[ins.srcs[0].name]
            if ins.guard is None:
                if uni:
                    upc = tgt
                else:
                    _goto(wave, idx, tgt)
            else:
                taken_all = (gmask == masks).all(axis=1)
                none = ~gmask.any(axis=1)
                if uni and taken_all.all():
                    upc = tgt
                    continue
                if uni and none.all() and not taken_all.any():
                    upc = pc + 1
                    continue
                uni = False
                _goto(wave, idx[taken_all], tgt)
                _goto(wave, idx[none & ~taken_all], pc + 1)
                for g in np.flatnonzero(~taken_all & ~none):
                    w = idx[g]
                    r = ir.reconverge[pc]
                    # the top becomes the reconvergence entry; push not-taken, then taken (runs first)
                    _push(wave, w, [r, wave.mask[w].copy(), wave.rpc[w]])
                    _push(wave, w, [pc + 1, masks[g] & ~gmask[g], r])
                    wave.pc[w], wave.mask[w], wave.rpc[w] = tgt, gmask[g], r
                    _settle(wave, w)
            continue
        if op in ("exit", "ret"):
            uni = False
            _exit(wave, idx, gmask, pc)
            continue
        wave.full = uni and ufull and ins.guard is None
        _execute(ins, pc, wave, mem, idx, gmask, memstats, record_mem)
        if uni:
            # bar.sync with every warp of every block arriving: all are released at once. (While
            # uniform, wave.pc is not kept: every way out of it sets the pc of every warp.)
            upc = pc + 1
            continue
        if op == "bar":
            wave.state[idx] = 1
        _goto(wave, idx, pc + 1)


_ALL = slice(None)


def _release(wave: _Wave, waiting: np.ndarray, nw: int) -> None:
    """Release every block whose warps are all at the barrier or exited."""
    released = False
    for b in np.unique(wave.wblock_local[waiting]):
        ws = np.arange(b * nw, (b + 1) * nw)
        if (wave.state[ws] != 0).all():
            wave.state[ws[wave.state[ws] == 1]] = 0
            released = True
    if not released:
        raise SimtError("barrier deadlock")


def _exit(wave: _Wave, idx: np.ndarray, gmask: np.ndarray, pc: int) -> None:
    """``exit``: the guarded lanes leave; a warp whose lanes all left pops its stack or is done."""
    flat = wave.depth[idx] == 0
    if flat.any():  # warps that never diverged (or met again): their stacks are empty
        ws = idx[flat]
        left = wave.mask[ws] & ~gmask[flat]
        wave.mask[ws] = left
        wave.pc[ws] = pc + 1
        wave.state[ws[~left.any(axis=1)]] = 2
    for g in np.flatnonzero(~flat):
        w = idx[g]
        gone = gmask[g]
        wave.mask[w] &= ~gone
        for e in wave.below[w]:
            e[1] = e[1] & ~gone
        wave.pc[w] = pc + 1
        while not wave.mask[w].any() and wave.below[w]:
            wave.pc[w], wave.mask[w], wave.rpc[w] = _pop(wave, w)
        if not wave.mask[w].any():
            wave.state[w] = 2
        else:
            _settle(wave, w)


def _push(wave: _Wave, w: int, entry: list) -> None:
    if not wave.below[w]:
        wave.ndiv += 1
    wave.below[w].append(entry)
    wave.depth[w] += 1


def _pop(wave: _Wave, w: int) -> list:
    e = wave.below[w].pop()
    wave.depth[w] -= 1
    if not wave.below[w]:
        wave.ndiv -= 1
    return e


def _goto(wave: _Wave, ws, pc: int) -> None:
    if len(ws) == 0:
        return
    wave.pc[ws] = pc
    if wave.ndiv == 0:
        return  # no stack entries: no reconvergence pc to meet
    hit = ws[wave.rpc[ws] == pc]
    for w in hit:
        _settle(wave, w)


def _settle(wave: _Wave, w: int) -> None:
    """Pop entries whose pc reached their reconvergence pc (the paths met again)."""
    while wave.below[w] and wave.pc[w] == wave.rpc[w]:
        wave.pc[w], wave.mask[w], wave.rpc[w] = _pop(wave, w)


# ----------------------------------------------------------------------------------------------
# time


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

    from .runargs import check_run_kwargs

    c = get_chip(chip)
    if c.sm is None:
        raise SimtError(f"{c.name} is not a GPU with SMs; the SIMT machine runs NVIDIA-style GPUs")
    # the same checks as ls.simt.run (a hang at blocks_per_sm=0, 0 cycles at sms=-4 otherwise)
    check_run_kwargs("ls.simt.run_ir", c, dict(policy=policy, timing=timing, trace=trace, schedulers=schedulers,
                                                 sms=sms, blocks_per_sm=blocks_per_sm, issue_width=issue_width,
                                                 max_steps=max_steps, max_cycles=max_cycles, record_mem=record_mem))
    timing = timing or Timing()
    if isinstance(buffers, dict):
        missing = [n for n, _, _ in ir.params[:ir.n_inputs] if n not in buffers]
        if missing:
            raise ArgumentError(f"kernel {ir.name}: no data for input(s) {missing}")
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
            raise ArgumentError(f"kernel {ir.name}: buffer {name} needs {size} elements of {dt}, got {a.size}")
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
        with np.errstate(all="ignore"):  # inf and nan are values, as in alu.apply
            _run_values(ir, mem, blocks, part, memstats, record_mem, max_steps)
        nw = ir.warps_per_block
        if b0 == 0:
            log.extend(part)
        else:
            moved: dict = {}  # the uniform steps share one warp array: shift it once
            for pc, idx, m in part:
                j = moved.get(id(idx))
                if j is None:
                    j = moved[id(idx)] = idx + b0 * nw
                log.append((pc, j, m))
    W = ir.grid * ir.warps_per_block
    warp_instr = sum(len(idx) for _, idx, _ in log)
    lanes: dict = {}  # id of a mask array (the log holds them all, so ids are distinct) -> active lanes
    thread_instr = 0
    for _, _, m in log:
        k = lanes.get(id(m))
        if k is None:
            k = lanes[id(m)] = int(np.count_nonzero(m))
        thread_instr += k
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
        bits: dict = {}  # id of a mask array -> its lanes as bits, one number per warp
        for _, _, m in log:
            if id(m) not in bits:
                bits[id(m)] = (m.astype(np.uint64) * _LANE_BITS).sum(axis=1)
        ms = np.concatenate([bits[id(m)] for _, _, m in log]) if log else np.zeros(0)
        order = np.argsort(ws, kind="stable")
        ws_s, pcs_s, ms_s = ws[order], pcs[order], ms[order].astype(np.uint32)
        bounds = np.searchsorted(ws_s, np.arange(W + 1))
        seqs = [(pcs_s[bounds[w]:bounds[w + 1]], ms_s[bounds[w]:bounds[w + 1]]) for w in range(W)]
        tr = _play(ir, c, seqs, ir.grid, blocks_per_sm, n_sms, traced, policy, timing,
                   schedulers or c.sm.sub_partitions, max_cycles, issue_width)
    outs = {name: flat[i] for i, (name, _, _) in enumerate(ir.params) if i >= ir.n_inputs}
    return KernelRun(ir, outs, tr, warp_instr, thread_instr, memstats, blocks_per_sm, c.name)


__all__ = ["KernelRun", "MemStat", "SimtError", "Stall", "Timing", "WarpTrace", "run_ir"]
