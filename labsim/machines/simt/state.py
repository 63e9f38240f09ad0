"""The machine's state: a wave of warps (registers as warp x lane arrays, masks, reconvergence stacks,
shared memory) and device memory (real NumPy buffers at labsim's addresses); reading operands, writing
results under a mask."""
from __future__ import annotations
from ...support.errors import ArgumentTypeError

import numpy as np

from collections import defaultdict
from functools import lru_cache

from ...compiler.isa import Imm, KernelIR, Param, Reg, Special, reg_dtype as _reg_dtype
from ...core.dtypes import ITEMSIZE
from ...hardware import WARP_SIZE as WARP
from .results import SimtError

_BASE_SHIFT = 40  # buffer i lives at address (i + 1) << 40
_LANE_BITS = (np.uint64(1) << np.arange(WARP, dtype=np.uint64))
reg_dtype = lru_cache(maxsize=None)(_reg_dtype)  # a PTX type's NumPy dtype, looked up once


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
        # below it in a Python list per warp (empty while a warp has not diverged; made when first used)
        self.pc = np.zeros(self.W, np.int64)
        self.mask = full.copy()
        self.rpc = np.full(self.W, -1, np.int64)
        self.below: dict[int, list[list]] = defaultdict(list)
        self.state = np.zeros(self.W, np.int8)  # 0 running, 1 barrier, 2 exited
        self.depth = np.zeros(self.W, np.int64)  # entries below the top, per warp
        self.ndiv = 0  # warps with entries below the top (diverged, not yet met again)
        # the warps the current step runs: ``sel`` indexes the register arrays (a slice when it is every
        # warp of the wave, so reads are views and writes need no scatter); ``full``: every lane of
        # them is active and unguarded
        self.sel = slice(None)
        self.full = False


class _Memory:
    def __init__(self, ir: KernelIR, buffers: list[np.ndarray]) -> None:
        self.bufs = buffers
        self.itemsize = [ITEMSIZE[dt] for _, dt, _ in ir.params]
        self.names = [n for n, _, _ in ir.params]

    def base(self, i: int) -> np.uint64:
        return np.uint64((i + 1) << _BASE_SHIFT)

    def parts(self, addr: np.ndarray, pc: int) -> list:
        """Split a 1-D array of active-lane addresses by the buffer each falls in: a list of
        (buffer index, which addresses (None: all of them), their byte offsets), buffers in order."""
        top = addr >> np.uint64(_BASE_SHIFT)  # buffer index + 1
        off = (addr & np.uint64((1 << _BASE_SHIFT) - 1)).view(np.int64)
        lo, hi = int(top.min()) - 1, int(top.max()) - 1
        if lo < 0 or hi >= len(self.bufs):
            raise SimtError(f"pc {pc}: address outside every buffer")
        if lo == hi:
            return [(lo, None, off)]
        b = top.view(np.int64) - 1
        out = []
        for bi in range(lo, hi + 1):
            sel = b == bi
            if sel.any():
                out.append((bi, sel, off[sel]))
        return out


def _operand(wave: _Wave, mem: _Memory, s, idx, dtype=None):
    if isinstance(s, Reg):
        return wave.regs[s.name][wave.sel]
    if isinstance(s, Special):
        return wave.special[s][wave.sel]
    if isinstance(s, Imm):
        return np.asarray(s.value, dtype=reg_dtype(s.type) if dtype is None else dtype)
    if isinstance(s, Param):
        return np.full((len(idx), WARP), mem.base(s.index), np.uint64)
    raise ArgumentTypeError(f"operand {s!r}")


def _write(wave: _Wave, dst: Reg, idx, mask, val) -> None:
    cur = wave.regs[dst.name]
    sel = wave.sel
    val = np.asarray(val)
    if val.shape != (len(idx), WARP):
        val = np.broadcast_to(val, (len(idx), WARP))
    if val.dtype != cur.dtype:
        val = val.astype(cur.dtype)
    if wave.full or mask.all():
        cur[sel] = val
    else:
        cur[sel] = np.where(mask, val, cur[sel])
