"""The machine's state: a wave of warps (registers as warp x lane arrays, masks, reconvergence stacks,
shared memory) and device memory (real NumPy buffers at labsim's addresses); reading operands, writing
results under a mask."""
from __future__ import annotations

import numpy as np

from ...compiler.isa import Imm, KernelIR, Param, Reg, Special, reg_dtype
from ...core.dtypes import ITEMSIZE
from ...hardware import WARP_SIZE as WARP
from .results import SimtError

_BASE_SHIFT = 40  # buffer i lives at address (i + 1) << 40
_LANE_BITS = (np.uint64(1) << np.arange(WARP, dtype=np.uint64))


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


def _write(wave: _Wave, dst: Reg, idx, mask, val) -> None:
    cur = wave.regs[dst.name]
    val = np.broadcast_to(np.asarray(val), (len(idx), WARP)).astype(cur.dtype, copy=False)
    if mask.all():
        cur[idx] = val
    else:
        cur[idx] = np.where(mask, val, cur[idx])
