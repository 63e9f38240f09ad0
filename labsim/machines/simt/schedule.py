"""The issue model: each warp's executed instruction sequence played on SMs cycle by cycle (blocks placed
as occupancy allows, warp schedulers choosing by policy, a scoreboard of register readiness)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...compiler.isa import Instr, KernelIR, Pipe
from ...hardware import WARP_SIZE as WARP, Chip
from .results import SimtError, Stall, Timing, WarpTrace


@dataclass
class _SMState:
    """One SM while the issue model plays: blocks waiting for it, its warp slots, the warps of each
    resident block, each scheduler's last issued warp and each scheduler's units' busy-until cycles."""

    queue: list
    slots: list  # warp ids resident in slots (None: free)
    block_warps: dict
    last: list
    busy: list


def _latency_and_busy(ins: Instr, chip: Chip, timing: Timing) -> tuple[int, int, str]:
    sm = chip.sm
    per_part = lambda lanes: max(1, -(-WARP // max(1, lanes // sm.sub_partitions)))
    u = ins.pipe
    if u is Pipe.SFU:
        return timing.sfu, per_part(sm.sfu_lanes), "sfu"
    if u is Pipe.MEM:
        return timing.memory, 1, "mem"
    if u is Pipe.SHARED:
        return timing.shared, 1, "shared"
    if u is Pipe.TENSOR:
        return _tensor_cost(ins, 0, timing)
    if u is Pipe.CONTROL:
        return timing.branch, 1, "control"
    if ins.op in ("ld",) and "param" in ins.mod:
        return timing.alu, 1, "alu"
    return timing.alu, per_part(sm.fp32_lanes), "alu"


def _tensor_cost(ins: Instr, warp_in_block: int, timing: Timing) -> tuple[int, int, str]:
    """A tile-level matrix instruction on one warp's sub-partition tensor core, by the rule the values
    follow (``values._mma``): ``rows`` rows per issuing group of ``group`` warps, so a warpgroup
    instruction (``group`` 4) puts a quarter of its FLOPs on each of its four warps' tensor cores; a warp
    whose row block lies outside the tile (the copying warpgroup, ``shift_groups``) does no tensor work
    and only takes an issue slot."""
    at = ins.attrs
    group, rows, tm = at.get("group", 1), at.get("rows", 16), at.get("tm", at.get("rows", 16))
    r0 = (warp_in_block // group - at.get("shift_groups", 0)) * rows
    if not 0 <= r0 < tm:
        return timing.alu, 1, "tensor"
    flops = 2 * rows * at.get("tn", 8) * at.get("tk", 16) / group
    busy = max(1, int(np.ceil(flops / timing.tensor_flops)))
    return busy + timing.alu, busy, "tensor"


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
    sm_state = {s: _SMState(list(pending[s]), [None] * (blocks_per_sm * nw), {}, [-1] * schedulers,
                            [[0] * len(unit_id) for _ in range(schedulers)]) for s in sms}
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
    tensor_cost = {}  # (pc, warp in block) -> the tensor instruction's cost for that warp

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
                    if uname == "tensor":
                        key = (pc, w % nw)
                        if key not in tensor_cost:
                            tensor_cost[key] = _tensor_cost(code[pc], w % nw, timing)
                        latency, busy, _ = tensor_cost[key]
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
        cycles=cycle, schedulers=schedulers, code=[i.text() for i in code], pipes=[i.pipe.value for i in code],
        issue_cycle=np.array(ic, np.int64), issue_warp=np.array(iw, np.int64), issue_pc=np.array(ip, np.int64),
        issue_mask=np.array(im, np.uint32), state=state, warp_sm=warp_sm[traced],
        warp_block=traced // nw, warp_scheduler=warp_sched[traced], sms=tuple(sms), policy=policy, warps=traced,
        clock_hz=chip.sm_clock(), name=ir.name, chip_names=(chip.name,),
        warp_instructions=int(sum(len(p) for p, _ in seqs)))


# ----------------------------------------------------------------------------------------------
# the public entry point for one kernel IR
