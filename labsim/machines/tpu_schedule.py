"""The static schedule of one TPU contraction (``ls.tpu.schedule_dot``), step by step and in aggregate.

:mod:`labsim.machines.tpu` explains the model. Here it is computed two ways that give the same numbers:

* :func:`walk` plays the schedule one grid step at a time and yields each :class:`Step` (when its copy
  in ran, when the MXU ran, when the C block left). ``DotSchedule.steps`` is a lazy sequence over it, so
  a chapter's table of the first steps costs only those steps.
* :func:`aggregate` gives the totals (time, MXU time, DMA time, bytes, FLOPs, folds) without visiting
  every step. Each step moves three clocks forward (when its copy in ends, when the MXU step before it
  ended, when the DMA queue is free) by maxima and sums: a max-plus linear map. Steps with the same block
  shape have the same map, and the grid (batch, i, j, k) is a nest of runs of identical steps (interior
  blocks, then an edge block), so the whole schedule is a product of a few maps raised to the run
  lengths, by repeated squaring: O(log of the grid) work instead of one Python step per block (16,384³
  with 128-blocks is 2,097,152 steps). The tests check it against :func:`walk` on a grid of small shapes.
"""
from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass

from ..compiler.tpu_blocks import SUBLANES  # noqa: F401  (rows of A per MXU push; one constant for labsim)
from ..support.errors import ArgumentError, ArgumentTypeError

NEG = float("-inf")


def _up(x: int, m: int) -> int:
    return -(-x // m) * m


@dataclass(frozen=True)
class Step:
    """One grid step: which blocks, what was copied in, the MXU work, and when each thing ran."""

    index: tuple[int, int, int, int]  # (batch, i, j, k)
    shape: tuple[int, int, int]  # (rows, cols, depth) of this step's real (unpadded) block
    load_bytes: int  # A and B bytes copied HBM -> VMEM before this step (0 where the blocks were reused)
    load: tuple[float, float]  # (start, end) of the copy in
    compute: tuple[float, float]  # (start, end) on the MXU (and the VPU epilogue on the last k step)
    folds: int  # weight tiles loaded into the MXU
    flops: int  # real FLOPs of the step's product
    padded_flops: int  # the MXU's work, block rounded up to 8 rows and to the array's sides
    store_bytes: int = 0  # C bytes copied VMEM -> HBM after this step (last k step only)
    store: tuple[float, float] | None = None


@dataclass(frozen=True)
class Plan:
    """Everything the schedule depends on (sizes, blocks, rates)."""

    batch: int
    m: int
    n: int
    k: int
    bm: int
    bn: int
    bk: int
    s_in: int
    s_out: int
    peak: float
    vpu: float
    bw: float
    r: int
    c: int
    epi_per_elem: float
    double_buffer: bool

    @property
    def grid(self) -> tuple[int, int, int, int]:
        return (self.batch, -(-self.m // self.bm), -(-self.n // self.bn), -(-self.k // self.bk))


@dataclass(frozen=True)
class Totals:
    """The schedule's sums (what ``DotSchedule``'s properties report)."""

    time: float
    mxu_time: float
    dma_time: float
    bytes_read: int
    bytes_written: int
    flops: int
    padded_flops: int
    folds: int
    steps: int


def walk(p: Plan):
    """Yield every :class:`Step` of the schedule in order (batch, i, j, k; k innermost)."""
    nb, ni, nj, nk = p.grid
    bw, r, c = p.bw, p.r, p.c
    order = itertools.product(range(nb), range(ni), range(nj), range(nk))
    total = nb * ni * nj * nk
    prev_a = prev_b = None
    prev_comp_end = 0.0

    def load_of(idx):
        b, i, j, kk = idx
        rows, cols = min(p.bm, p.m - i * p.bm), min(p.bn, p.n - j * p.bn)
        depth = min(p.bk, p.k - kk * p.bk)
        a_id, b_id = (b, i, kk), (b, kk, j)
        nbytes = (rows * depth * p.s_in if a_id != prev_a else 0) + (depth * cols * p.s_in if b_id != prev_b else 0)
        return nbytes, a_id, b_id, (rows, cols, depth)

    idx = next(order)
    nbytes, a_id, b_id, shape = load_of(idx)
    load = (0.0, nbytes / bw)
    dma = load[1]
    for s in range(total):
        rows, cols, depth = shape
        prev_a, prev_b = a_id, b_id
        last_k = idx[3] == nk - 1
        folds = -(-depth // r) * -(-cols // c)
        flops = 2 * rows * cols * depth
        padded = 2 * _up(rows, SUBLANES) * _up(cols, c) * _up(depth, r)
        t = padded / p.peak + (rows * cols * p.epi_per_elem / p.vpu if last_k else 0.0)
        start = max(load[1], prev_comp_end)
        comp = (start, start + t)
        store = None
        store_bytes = rows * cols * p.s_out if last_k else 0
        if not p.double_buffer and last_k:  # single buffer: the C block leaves before the next copy may start
            st = max(dma, comp[1])
            dma = st + store_bytes / bw
            store = (st, dma)
        nxt = None
        if s + 1 < total:
            idx_n = next(order)
            nb_, a_n, b_n, shape_n = load_of(idx_n)
            slot_free = prev_comp_end if p.double_buffer else comp[1]
            if nb_:
                st = max(dma, slot_free)
                dma = st + nb_ / bw
                nxt = (idx_n, nb_, a_n, b_n, shape_n, (st, dma))
            else:  # both blocks already in VMEM: nothing to copy, nothing to wait for
                nxt = (idx_n, 0, a_n, b_n, shape_n, (comp[0], comp[0]))
        if p.double_buffer and last_k:
            st = max(dma, comp[1])
            dma = st + store_bytes / bw
            store = (st, dma)
        yield Step(index=idx, shape=shape, load_bytes=nbytes, load=load, compute=comp, folds=folds,
                   flops=flops, padded_flops=padded, store_bytes=store_bytes, store=store)
        prev_comp_end = comp[1]
        if nxt is not None:
            idx, nbytes, a_id, b_id, shape, load = nxt


class _StepIndexError(ArgumentError, IndexError):
    """An index past the schedule's steps (an IndexError, so iteration protocols still work)."""


class Steps:
    """``DotSchedule.steps``: the steps of :func:`walk` as a lazy sequence (``len``, indexing, slicing and
    iteration play the schedule only as far as they need)."""

    def __init__(self, plan: Plan, count: int):
        self._plan, self._n = plan, count

    @property
    def count(self) -> int:
        """How many steps (also past ``sys.maxsize``, where ``len`` cannot answer)."""
        return self._n

    def __len__(self) -> int:
        if self._n > sys.maxsize:
            raise ArgumentError(f"DotSchedule.steps: {self._n:,} steps is more than len() can return; "
                                f"use steps.count (or the schedule's totals)")
        return self._n

    def __iter__(self):
        return walk(self._plan)

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            if step < 0:
                return tuple(self)[i]
            return tuple(itertools.islice(walk(self._plan), start, stop, step))
        if isinstance(i, bool) or not hasattr(i, "__index__"):
            raise ArgumentTypeError(f"DotSchedule.steps: an index must be an integer or a slice, got {i!r}")
        i = i.__index__()
        j = i + self._n if i < 0 else i
        if not 0 <= j < self._n:
            raise _StepIndexError(f"DotSchedule.steps: index {i} out of range for {self._n:,} steps")
        return next(itertools.islice(walk(self._plan), j, None))

    def __eq__(self, other) -> bool:
        return isinstance(other, Steps) and other._plan == self._plan

    def __hash__(self) -> int:
        return hash(self._plan)

    def __repr__(self) -> str:
        return f"<{self._n:,} steps>"


# --- the aggregate: max-plus maps over the state (L, P, D) -----------------------------------------------
# L: when this step's copy in ends; P: when the MXU step before it ended; D: when the DMA queue is free.

def _compose(b, a):
    """The map ``a`` then ``b`` (3×3 max-plus matrices as tuples of rows)."""
    return tuple(tuple(max(b[i][q] + a[q][j] for q in range(3)) for j in range(3)) for i in range(3))


_ID = ((0.0, NEG, NEG), (NEG, 0.0, NEG), (NEG, NEG, 0.0))


def _power(a, n: int):
    out, sq = _ID, a
    while n:
        if n & 1:
            out = _compose(sq, out)
        n >>= 1
        if n:
            sq = _compose(sq, sq)
    return out


def _fmax(x, y):
    return tuple(max(u, v) for u, v in zip(x, y))


def _fadd(x, t: float):
    return tuple(u + t for u in x)


class _Aggregate:
    def __init__(self, p: Plan):
        self.p = p
        self.maps: dict = {}
        self.sums: dict = {}

    # a step: ("s", rows, cols, depth, last_k, a_loaded, b_loaded)
    def first_bytes(self, node) -> int:
        while node[0] != "s":
            node = node[1][0][0]
        _, rows, cols, depth, _, al, bl = node
        return (rows * depth * al + depth * cols * bl) * self.p.s_in

    def step_map(self, node, nxt):
        p = self.p
        _, rows, cols, depth, last_k, _, _ = node
        padded = 2 * _up(rows, SUBLANES) * _up(cols, p.c) * _up(depth, p.r)
        t = padded / p.peak + (rows * cols * p.epi_per_elem / p.vpu if last_k else 0.0)
        so = rows * cols * p.s_out / p.bw if last_k else 0.0
        L, P, D = (0.0, NEG, NEG), (NEG, 0.0, NEG), (NEG, NEG, 0.0)
        cs = _fmax(L, P)
        ce = _fadd(cs, t)
        if last_k and not p.double_buffer:
            D = _fadd(_fmax(D, ce), so)
        Ln = L
        if nxt is not None:
            slot = P if p.double_buffer else ce
            if nxt:
                D = _fadd(_fmax(D, slot), nxt / p.bw)
                Ln = D
            else:
                Ln = cs
        if last_k and p.double_buffer:
            D = _fadd(_fmax(D, ce), so)
        return (Ln, ce, D)

    def map(self, node, nxt):
        key = (node, nxt)
        hit = self.maps.get(key)
        if hit is not None:
            return hit
        if node[0] == "s":
            out = self.step_map(node, nxt)
        else:
            runs = node[1]
            out = _ID
            for q, (child, cnt) in enumerate(runs):
                after = self.first_bytes(runs[q + 1][0]) if q + 1 < len(runs) else nxt
                if cnt > 1:
                    out = _compose(_power(self.map(child, self.first_bytes(child)), cnt - 1), out)
                out = _compose(self.map(child, after), out)
        self.maps[key] = out
        return out

    def totals(self, node) -> tuple:
        """(mxu_time, dma_time, bytes_read, bytes_written, flops, padded, folds, steps) of ``node``."""
        hit = self.sums.get(node)
        if hit is not None:
            return hit
        p = self.p
        if node[0] == "s":
            _, rows, cols, depth, last_k, al, bl = node
            padded = 2 * _up(rows, SUBLANES) * _up(cols, p.c) * _up(depth, p.r)
            t = padded / p.peak + (rows * cols * p.epi_per_elem / p.vpu if last_k else 0.0)
            rd = (rows * depth * al + depth * cols * bl) * p.s_in
            wr = rows * cols * p.s_out if last_k else 0
            out = (t, rd / p.bw + wr / p.bw, rd, wr, 2 * rows * cols * depth, padded,
                   -(-depth // p.r) * -(-cols // p.c), 1)
        else:
            acc = [0.0, 0.0, 0, 0, 0, 0, 0, 0]
            for child, cnt in node[1]:
                for q, v in enumerate(self.totals(child)):
                    acc[q] += cnt * v
            out = tuple(acc)
        self.sums[node] = out
        return out


def _rle(items) -> tuple:
    runs: list = []
    for key, cnt in items:
        if cnt <= 0:
            continue
        if runs and runs[-1][0] == key:
            runs[-1] = (key, runs[-1][1] + cnt)
        else:
            runs.append((key, cnt))
    return ("q", tuple(runs))


def _three(n: int, of) -> list:
    """The runs of an index 0..n-1 whose item is ``of(index)``: the first, the middle ones, the last."""
    if n == 1:
        return [(of(0), 1)]
    return [(of(0), 1), (of(1), n - 2), (of(n - 1), 1)]


def tree(p: Plan):
    """The schedule as nested runs of identical steps (batch ⊃ rows of blocks ⊃ blocks ⊃ k steps)."""
    nb, ni, nj, nk = p.grid

    def tile(rows, cols, al, bl):
        dl = p.k - (nk - 1) * p.bk
        if nk == 1:
            return _rle([(("s", rows, cols, dl, True, al, bl), 1)])
        return _rle([(("s", rows, cols, p.bk, False, al, bl), 1), (("s", rows, cols, p.bk, False, 1, 1), nk - 2),
                     (("s", rows, cols, dl, True, 1, 1), 1)])

    def row(i):
        rows = min(p.bm, p.m - i * p.bm)
        return _rle(_three(nj, lambda j: tile(rows, min(p.bn, p.n - j * p.bn), int(nk > 1 or j == 0),
                                              int(nk > 1 or nj > 1 or i == 0))))

    batch = _rle(_three(ni, row))
    return _rle([(batch, nb)])


def aggregate(p: Plan) -> Totals:
    """The schedule's totals without visiting every step (see the module docstring)."""
    ag = _Aggregate(p)
    root = tree(p)
    mx = ag.map(root, None)
    l0 = ag.first_bytes(root) / p.bw
    x0 = (l0, 0.0, l0)
    _, P, D = (max(mx[i][j] + x0[j] for j in range(3)) for i in range(3))
    mxu, dma, rd, wr, flops, padded, folds, steps = ag.totals(root)
    return Totals(time=max(P, D), mxu_time=mxu, dma_time=dma, bytes_read=int(rd), bytes_written=int(wr),
                  flops=int(flops), padded_flops=int(padded), folds=int(folds), steps=int(steps))


__all__ = ["Plan", "Step", "Steps", "Totals", "aggregate", "tree", "walk"]
