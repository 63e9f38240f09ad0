"""Buffer assignment: every device buffer of a program gets an offset, decided at compile time.

Introduced in "The compiler at work". The kernels run in a fixed order, so the compiler knows when each
buffer is first written and last read (its *lifetime*). A buffer whose last reader has run is dead and
its memory can hold a later buffer: no allocation at run time, and no fragmentation that the program
did not plan. Parameters and constants live for the whole call; program outputs live until the end.

``peak_bytes`` is the most memory live at any one time; ``heap_bytes`` is the size of the arena the
assignment actually needs (at least the peak: the difference is planned fragmentation);
``no_reuse_bytes`` is what a program that never reused memory would need.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core.ir import Var


@dataclass(frozen=True)
class Buffer:
    name: str
    size: int
    first: int  # index of the kernel that writes it (-1: present before the first kernel)
    last: int  # index of the last kernel that reads it (n_kernels: needed after the program)
    offset: int
    kind: str  # "parameter", "constant", "temporary", "output"

    def live_at(self, step: int) -> bool:
        return self.first <= step <= self.last


@dataclass(frozen=True)
class BufferPlan:
    buffers: tuple[Buffer, ...]
    n_steps: int

    @property
    def heap_bytes(self) -> int:
        return max((b.offset + b.size for b in self.buffers), default=0)

    @property
    def no_reuse_bytes(self) -> int:
        return sum(b.size for b in self.buffers)

    def live_bytes(self, step: int) -> int:
        return sum(b.size for b in self.buffers if b.live_at(step))

    @property
    def peak_bytes(self) -> int:
        return max((self.live_bytes(s) for s in range(-1, self.n_steps + 1)), default=0)

    def table(self) -> list[dict]:
        return [{"buffer": b.name, "kind": b.kind, "bytes": b.size, "offset": b.offset,
                 "written by kernel": b.first if b.first >= 0 else "(before)",
                 "last read by kernel": b.last if b.last < self.n_steps else "(after)"} for b in self.buffers]


def _fit(free: list[list[int]], size: int) -> int | None:
    """Best fit: the smallest free chunk that holds ``size``; split it. Returns the offset."""
    best = None
    for i, (off, sz) in enumerate(free):
        if sz >= size and (best is None or sz < free[best][1]):
            best = i
    if best is None:
        return None
    off, sz = free[best]
    if sz == size:
        free.pop(best)
    else:
        free[best] = [off + size, sz - size]
    return off


def _release(free: list[list[int]], off: int, size: int) -> None:
    free.append([off, size])
    free.sort()
    merged: list[list[int]] = []
    for o, s in free:
        if merged and merged[-1][0] + merged[-1][1] == o:
            merged[-1][1] += s
        else:
            merged.append([o, s])
    free[:] = merged


def assign_buffers(prog, *, reuse: bool = True, alignment: int = 256) -> BufferPlan:
    """Plan device memory for ``prog``: lifetimes from the kernel order, then offsets (best fit,
    freed buffers reused when ``reuse``). Sizes are rounded up to ``alignment`` bytes."""
    g = prog.graph
    names = g.names()
    n = len(prog.kernels)
    align = lambda s: -(-s // alignment) * alignment if s else 0
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    var_of: dict[int, Var] = {}
    kind: dict[int, str] = {}
    for v in g.inputs:
        b = prog.buffer(v)
        first[id(b)], var_of[id(b)], kind[id(b)] = -1, b, "parameter"
        last[id(b)] = n  # the caller owns parameters for the whole call
    for c in prog.constants:
        first[id(c)], var_of[id(c)], kind[id(c)], last[id(c)] = -1, c, "constant", n
    for i, k in enumerate(prog.kernels):
        for v in k.inputs:
            b = prog.buffer(v)
            last[id(b)] = max(last.get(id(b), i), i)
            var_of.setdefault(id(b), b)
        for v in k.outputs:
            b = prog.buffer(v)
            first.setdefault(id(b), i)
            var_of[id(b)] = b
            kind.setdefault(id(b), "temporary")
            last.setdefault(id(b), i)
    for o in g.outputs:
        if isinstance(o, Var):
            b = prog.buffer(o)
            if id(b) in first:
                last[id(b)] = n
                if kind.get(id(b)) == "temporary":
                    kind[id(b)] = "output"
    order = sorted(first, key=lambda k: (first[k], -var_of[k].aval.nbytes))
    free: list[list[int]] = []
    top = 0
    placed: dict[int, int] = {}
    bufs: list[Buffer] = []
    # free a buffer once the kernel after its last reader starts
    for step in range(-1, n + 1):
        if reuse:
            for k_ in list(placed):
                if last[k_] < step and kind[k_] in ("temporary",):
                    _release(free, placed.pop(k_), align(var_of[k_].aval.nbytes))
        for k_ in [k for k in order if first[k] == step]:
            size = align(var_of[k_].aval.nbytes)
            off = _fit(free, size) if reuse and kind[k_] in ("temporary", "output") else None
            if off is None:
                off, top = top, top + size
            placed[k_] = off
            v = var_of[k_]
            bufs.append(Buffer(names.get(id(v), f"buf{v.id}"), size, first[k_], last[k_], off, kind[k_]))
    return BufferPlan(tuple(bufs), n)
