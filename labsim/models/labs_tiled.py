"""Steps 3 to 5 of chapter 10's progression as kernels the SIMT machine runs, and the runs that measure them.

One builder writes both, in the kernel IR the compiler emits (as ``ls.simt``'s experiments do), for
``C[M, N] = A[M, K] @ B[K, N]`` in float32, row-major, one block per ``BM × BN`` tile of C:

* the block's ``(BM / TM) · (BN / TN)`` threads copy a ``BM × BK`` tile of A and a ``BK × BN`` tile
  of B from global to shared memory (``ld.global``, ``st.shared``), then ``bar.sync``;
* for each of the ``BK`` values of k, each thread reads ``TM`` values of A's tile and ``TN`` of B's from
  shared memory into registers and does ``TM · TN`` multiply-adds (``mad.rn.f32``, one FFMA each) into
  its ``TM × TN`` accumulators; the k loop inside a tile is unrolled, as ``#pragma unroll`` does;
* ``bar.sync``, the next tile along K; at the end each thread stores its outputs.

``TM = TN = 1`` is Boehm's kernel 3 (shared-memory tiles: two shared loads per multiply-add);
``TM = TN = 8`` is his kernel 5 (register tiles: ``TM + TN`` shared loads for ``TM · TN``
multiply-adds), after Boehm's CUDA matmul worklog. M, N and K must be multiples of the tile (no edge code).
The shared-memory addresses a thread reads are kept in registers (PTX folds them into ``[reg + imm]``);
since labsim counts every virtual register (an upper bound), the SIMT machine's occupancy for these
kernels is lower than a real compiler's register allocation would allow.

:func:`measure_tiled` (steps 3 and 4) and :func:`measure_tensor` (step 5: the compiler's bfloat16 kernel)
run one wave on one SM at two depths of K and return a :class:`Measured`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..compiler.isa import Builder, Imm, KernelIR, Label, Param, Pipe, Special
from ..machines.simt import SECTOR, run_ir
from ..support.errors import ArgumentError, LabsimError

FP32 = 4


def tiled_kernel(m: int, n: int, k: int, tile: tuple = (32, 32, 32), per_thread: tuple = (1, 1)) -> KernelIR:
    """The kernel IR of a shared-memory tiled float32 product ``[m, k] @ [k, n]``: block tile
    ``tile = (BM, BN, BK)``, ``per_thread = (TM, TN)`` outputs per thread. Parameters a, b (inputs), c."""
    fn = "labsim.models.labs_tiled.tiled_kernel"
    for name, v in (("m", m), ("n", n), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ArgumentError(f"{fn}: {name}={v!r} must be a positive int")
    if not (isinstance(tile, tuple) and len(tile) == 3 and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in tile)):
        raise ArgumentError(f"{fn}: tile={tile!r} must be three positive ints (BM, BN, BK)")
    if not (isinstance(per_thread, tuple) and len(per_thread) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in per_thread)):
        raise ArgumentError(f"{fn}: per_thread={per_thread!r} must be two positive ints (TM, TN)")
    for name, elems in (("A (m × k)", m * k), ("B (k × n)", k * n), ("C (m × n)", m * n)):
        if elems >= 2**32:  # the kernel indexes elements with 32-bit registers, as the compiler's kernels do
            raise ArgumentError(f"{fn}: {name} has {elems:,} elements, more than the 2**32 a 32-bit index reaches")
    bm, bn, bk = tile
    tm, tn = per_thread
    if bm % tm or bn % tn:
        raise ArgumentError(f"{fn}: per_thread={per_thread!r} must divide the block tile's BM={bm} and BN={bn}")
    if m % bm or n % bn or k % bk:
        raise ArgumentError(f"{fn}: m, n, k = {m}, {n}, {k} must be multiples of tile={tile!r} (no edge code)")
    cols = bn // tn
    threads = (bm // tm) * cols
    if threads % 32 or threads > 1024:
        raise ArgumentError(f"{fn}: tile={tile!r} with per_thread={per_thread!r} gives {threads} threads per "
                            f"block; give a multiple of 32 up to 1,024")
    if (bm * bk) % threads or (bk * bn) % threads:
        raise ArgumentError(f"{fn}: tile={tile!r} with per_thread={per_thread!r} gives {threads} threads, which "
                            f"must split the A tile ({bm}×{bk}) and the B tile ({bk}×{bn}) evenly")
    gx = n // bn
    b = Builder()
    u = lambda x: Imm(x, "u32")
    ra, rb, rc = (b.op("ld", "u64", Param(p, i), mod=("param",), comment=f"address of {p}")
                  for i, p in enumerate("abc"))
    tid = b.op("mov", "u32", Special.TID)
    cta = b.op("mov", "u32", Special.CTAID)
    m0 = b.op("mul", "u32", b.op("div", "u32", cta, u(gx)), u(bm), comment="first row of this block's tile")
    n0 = b.op("mul", "u32", b.op("rem", "u32", cta, u(gx)), u(bn), comment="first column of this block's tile")
    row = b.op("mul", "u32", b.op("div", "u32", tid, u(cols)), u(tm), comment=f"this thread's first row in the tile")
    col = b.op("mul", "u32", b.op("rem", "u32", tid, u(cols)), u(tn), comment=f"this thread's first column")
    copies = []  # (global element offset before k0 is added, k0's multiplier, shared byte address)
    for side, rows_, cols_, base, stride in (("A", bm, bk, 0, 1), ("B", bk, bn, bm * bk, n)):
        for j in range((rows_ * cols_) // threads):
            e = b.op("add", "u32", tid, u(j * threads))
            r, c = b.op("div", "u32", e, u(cols_)), b.op("rem", "u32", e, u(cols_))
            if side == "A":
                g = b.op("mad", "u32", b.op("add", "u32", m0, r), u(k), c, mod=("lo",), comment="a[m0 + r, c]")
            else:
                g = b.op("mad", "u32", r, u(n), b.op("add", "u32", n0, c), mod=("lo",), comment="b[r, n0 + c]")
            copies.append((side, g, stride, b.op("mul", "u32", b.op("add", "u32", e, u(base)), u(FP32))))
    # shared byte addresses each thread reads, kept in registers (PTX would fold them into [reg + imm])
    a_row = [b.op("mul", "u32", b.op("add", "u32", row, u(i)), u(bk * FP32)) for i in range(tm)]
    a_at = [[b.op("add", "u32", a_row[i], u(kk * FP32)) for i in range(tm)] for kk in range(bk)]
    b_at = [[b.op("mul", "u32", b.op("add", "u32", col, u(bm * bk + kk * bn + j)), u(FP32)) for j in range(tn)]
            for kk in range(bk)]
    acc = [[b.op("mov", "f32", Imm(0.0)) for _ in range(tn)] for _ in range(tm)]
    av, bv = [b.reg("f32") for _ in range(tm)], [b.reg("f32") for _ in range(tn)]
    k0 = b.op("mov", "u32", u(0))
    b.label("K")
    done = b.op("setp", "u32", k0, u(k), mod=("ge",), dst_type="pred")
    b.emit("bra", None, Label("K_END"), guard=done, pipe=Pipe.CONTROL, comment=f"K in steps of {bk}")
    loaded = []  # every load first, then every store: the loads' latencies overlap
    for side, g, stride, s in copies:
        off = b.op("mad", "u32", k0, u(stride), g, mod=("lo",))
        addr = b.op("mad", "u32", off, u(FP32), ra if side == "A" else rb, mod=("wide",), dst_type="u64")
        loaded.append((side, s, b.op("ld", "f32", addr, mod=("global",), pipe=Pipe.MEM, comment=f"{side} element")))
    for side, s, v in loaded:
        b.emit("st", None, s, v, type="f32", mod=("shared",), pipe=Pipe.SHARED, comment=f"-> {side} tile")
    b.emit("bar", None, u(0), mod=("sync",), pipe=Pipe.CONTROL, comment="tiles are in shared memory")
    for kk in range(bk):
        for i in range(tm):
            b.emit("ld", av[i], a_at[kk][i], type="f32", mod=("shared",), pipe=Pipe.SHARED)
        for j in range(tn):
            b.emit("ld", bv[j], b_at[kk][j], type="f32", mod=("shared",), pipe=Pipe.SHARED)
        for i in range(tm):
            for j in range(tn):
                b.emit("mad", acc[i][j], av[i], bv[j], acc[i][j], type="f32", mod=("rn",), comment="FFMA")
    b.emit("bar", None, u(0), mod=("sync",), pipe=Pipe.CONTROL, comment="tiles can be overwritten")
    b.emit("add", k0, k0, u(bk), type="u32")
    b.emit("bra", None, Label("K"), mod=("uni",), pipe=Pipe.CONTROL)
    b.label("K_END")
    for i in range(tm):
        rbase = b.op("mul", "u32", b.op("add", "u32", b.op("add", "u32", m0, row), u(i)), u(n))
        for j in range(tn):
            e = b.op("add", "u32", b.op("add", "u32", rbase, n0), b.op("add", "u32", col, u(j)))
            addr = b.op("mad", "u32", e, u(FP32), rc, mod=("wide",), dst_type="u64")
            b.emit("st", None, addr, acc[i][j], type="f32", mod=("global",), pipe=Pipe.MEM)
    b.emit("exit", pipe=Pipe.CONTROL)
    name = "smem_tiles" if tm * tn == 1 else "register_tiles"
    return b.build(name, [("a", "float32", m * k), ("b", "float32", k * n), ("c", "float32", m * n)], 2,
                   (m // bm) * gx, threads, shared_bytes=(bm * bk + bk * bn) * FP32,
                   header=[f"// C = A @ B, float32: one block of {threads} threads per {bm}x{bn} tile of C, "
                           f"{bk}-wide K tiles in shared memory, {tm}x{tn} outputs per thread in registers",
                           "// pseudo-PTX: PTX-like for reading (labsim's kernel IR, run by ls.simt)"]).verify()


@dataclass(frozen=True)
class Measured:
    """One kernel of the progression run on the SIMT machine: one wave (``blocks_per_sm`` blocks, each a
    ``tile[0] × tile[1]`` tile of C) on one SM, at two depths ``ks`` of K. ``cycles`` and ``hbm_bytes``
    are the wave's at each depth (cycles from the issue model; bytes from the sectors its global loads
    and stores touched, or, for copies the machine does not count, from the tiles it copies).
    ``max_error`` is the worst difference from NumPy's product over both runs."""

    kernel: str
    chip: str
    tile: tuple[int, int]
    blocks_per_sm: int
    ks: tuple[int, int]
    cycles: tuple[int, int]
    hbm_bytes: tuple[float, float]
    max_error: float
    ir: KernelIR

    def _line(self, ys, k: int) -> float:
        (k1, k2), (y1, y2) = self.ks, ys
        return y1 + (y2 - y1) / (k2 - k1) * (k - k1)

    def wave_cycles(self, k: int) -> float:
        """One wave's cycles at depth ``k``: the straight line through the two runs (labsim's
        extrapolation: a fixed start, then the same cycles for every K tile)."""
        return self._line(self.cycles, k)

    def block_bytes(self, k: int) -> float:
        """One block's HBM bytes at depth ``k`` (the line through the two runs)."""
        return self._line(self.hbm_bytes, k) / self.blocks_per_sm


def _exact(rng, shape) -> np.ndarray:
    """Inputs that bfloat16 holds exactly (quarters from -2 to 2): every product is exact in float32."""
    return (rng.integers(-8, 9, shape) / 4).astype(np.float32)


def _fit(chip, kernel: str, run, tile, bk: int) -> Measured:
    """Run ``run(blocks, k, rng, timed) -> (KernelRun, m, out, a, b, copied bytes per block per K step)``
    for one wave at K = bk and K = 2·bk."""
    rng = np.random.default_rng(0)
    cycles, hbm, err, ir = [], [], 0.0, None
    bps = run(1, bk, rng, False)[0].blocks_per_sm  # a values-only run tells the occupancy
    for k in (bk, 2 * bk):
        r, m, out, a, b, copied = run(bps, k, rng, True)  # one full wave
        err = max(err, float(np.max(np.abs(out.reshape(m, tile[1]) - a @ b))))
        if err > 0:  # exact inputs: a right kernel gives NumPy's product to the bit
            raise LabsimError(f"ls.labs.progression: the {kernel} kernel on {getattr(chip, 'name', chip)} differs "
                              f"from NumPy's a @ b by {err:g} at K = {k}; it cannot feed the chart")
        cycles.append(r.cycles)
        hbm.append(r.transactions()["sectors"] * SECTOR + copied * bps * -(-k // bk))
        ir = r.ir
    return Measured(kernel, getattr(chip, "name", chip), tuple(tile), bps, (bk, 2 * bk), tuple(cycles), tuple(hbm),
                    err, ir)


def measure_tiled(chip, tile: tuple, per_thread: tuple) -> Measured:
    """Steps 3 and 4: :func:`tiled_kernel` on ``chip`` (a preset name or a ``Chip``), one wave on one SM,
    at K = BK and 2·BK. Runs once per process for a preset name and tile."""
    return (_tiled_cached if isinstance(chip, str) else _measure_tiled)(chip, tuple(tile), tuple(per_thread))


def measure_tensor(chip) -> Measured:
    """Step 5: the compiler's kernel for a bfloat16 ``a @ b`` (``ls.compile``; operand tiles copied to
    shared memory, the chip's matrix instruction), one wave on one SM, at K = tk and 2·tk. The tile
    copies (TMA, cp.async) are not counted in sectors by the machine; their bytes are the tiles'.
    Runs once per process for a preset name."""
    return (_tensor_cached if isinstance(chip, str) else _measure_tensor)(chip)


def _measure_tiled(chip, tile: tuple, per_thread: tuple) -> Measured:
    bm, bn, bk = tile

    def run(blocks, k, rng, timed):
        m = bm * blocks
        a, b = _exact(rng, (m, k)), _exact(rng, (k, bn))
        r = run_ir(tiled_kernel(m, bn, k, tile, per_thread), {"a": a, "b": b}, chip, sms=1, trace=timed)
        return r, m, r.outputs["c"], a, b, 0
    return _fit(chip, "register tiles" if per_thread != (1, 1) else "shared-memory tiles", run, (bm, bn), bk)


def _measure_tensor(chip) -> Measured:
    from ..compiler.pipeline import compile as compile_
    from ..compiler.plans import matrix_path
    from ..core.avals import ShapeDtype
    from ..core.trace import trace
    from ..machines.simt import run as simt_run

    tm, tn, tk = matrix_path(chip).tile

    def run(blocks, k, rng, timed):
        m = tm * blocks
        a, b = _exact(rng, (m, k)), _exact(rng, (k, tn))
        prog = compile_(trace(lambda x, y: x @ y, ShapeDtype((m, k), "bfloat16"), ShapeDtype((k, tn), "bfloat16")))
        pr = simt_run(prog, a, b, chip=chip, sms=1, trace=timed)
        if len(pr.kernels) != 1:
            raise LabsimError(f"ls.labs.progression: the compiler emitted {len(pr.kernels)} kernels for a @ b")
        r = pr.kernels[0]
        rows, cols = r.ir.tiles["A"]
        copied = (rows * cols + r.ir.tiles["B"][0] * r.ir.tiles["B"][1]) * 2  # bf16 tiles per K step
        return r, m, np.asarray(pr.outputs, np.float32), a, b, copied
    return _fit(chip, "tensor-core tiles", run, (tm, tn), tk)


_tiled_cached = functools.lru_cache(maxsize=16)(_measure_tiled)
_tensor_cached = functools.lru_cache(maxsize=8)(_measure_tensor)

__all__ = ["Measured", "measure_tensor", "measure_tiled", "tiled_kernel"]
