"""Labs: the reader writes a kernel, labsim checks it (``ls.labs``), as GPU Puzzles' checkers do.

A :class:`Task` is data: a name, what to compute (a NumPy reference), the input shapes, the kernel's
signature and a :class:`Target`. The reader writes the kernel with ``ls.blocks`` (Triton style)::

    import labsim as ls
    tl = ls.blocks

    @tl.jit
    def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=m), mask=m)

    ls.labs.check(scale, "scale", BLOCK=256)      # a Verdict: "pass" or "fail: <reason>"

:func:`check` runs the kernel twice on the same inputs (fixed seed): once in ``ls.blocks``' interpreter,
which counts the lanes each program built and the lanes its masks let through; once lowered to the SIMT
machine (``ls.simt.run_blocks``) on the chip's SMs, which counts the 32-byte sectors its loads and stores
touched and the cycles it took. The verdict compares the output with NumPy, the sectors with the fewest
that could carry the task's bytes, the lanes used, and the cycles with the task's target.

The targets are labsim's, chosen so that the lab's intended kernel passes and its starter does not:
sectors against the minimum (every byte read or written once, in whole sectors), lanes used, and cycles
counted in the memory latency of the SIMT machine's issue model (``ls.simt.Timing().memory``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

from ..compiler.blocks import BlockError, JITFunction, cdiv
from ..hardware import Chip, ChipKind, get
from ..machines.simt import SECTOR, SimtError, Timing, run_blocks
from ..support.errors import ArgumentError, ArgumentTypeError, LabsimError
from ..support.tables import Table
from .labs_matmul import Step, progression


@dataclass(frozen=True)
class Target:
    """What a passing kernel must reach (``None``: not checked)."""

    max_sector_ratio: float | None = None  # sectors moved / the minimum
    min_lane_use: float | None = None  # lanes the masks let through / lanes the programs built
    max_latencies: float | None = None  # cycles / the memory latency of ls.simt.Timing


@dataclass(frozen=True)
class Task:
    """One lab: ``inputs`` maps each input array to its shape; ``scalars`` are the runtime ints passed after
    the arrays; ``reference`` computes the output from the inputs with NumPy; ``grid`` gives the launch
    grid from the kernel's constants."""

    name: str
    statement: str
    signature: str
    inputs: Mapping[str, tuple]
    output: tuple[str, tuple]
    scalars: Mapping[str, int]
    reference: Callable = field(repr=False)
    grid: Callable = field(repr=False)
    target: Target = Target()
    tolerance: float = 1e-5  # relative to the largest reference value

    def arrays(self, seed: int = 0) -> dict[str, np.ndarray]:
        """The task's inputs (standard normal, float32, fixed seed) and its output buffer (zeros)."""
        rng = np.random.default_rng(seed)
        out = {k: rng.standard_normal(s).astype(np.float32) for k, s in self.inputs.items()}
        out[self.output[0]] = np.zeros(self.output[1], np.float32)
        return out

    @property
    def min_sectors(self) -> int:
        """The fewest 32-byte sectors that carry every input once and write the output once."""
        shapes = list(self.inputs.values()) + [self.output[1]]
        return sum(cdiv(math.prod(s) * 4, SECTOR) for s in shapes)


N_SCALE = 4096
N_RELU = 1100
MM = 32

TASKS: dict[str, Task] = {t.name: t for t in (
    Task("scale", "out = 2·x for a vector of float32; move no sector more than once",
         "(x_ptr, out_ptr, n, BLOCK: tl.constexpr)", {"x": (N_SCALE,)}, ("out", (N_SCALE,)), {"n": N_SCALE},
         lambda x: 2 * x, lambda c: (cdiv(N_SCALE, c.get("BLOCK", 1)),), Target(max_sector_ratio=1.0)),
    Task("relu", "out = max(x, 0) for a vector whose length is no power of two; keep the lanes busy and "
         "the warps many", "(x_ptr, out_ptr, n, BLOCK: tl.constexpr)", {"x": (N_RELU,)}, ("out", (N_RELU,)),
         {"n": N_RELU}, lambda x: np.maximum(x, 0), lambda c: (cdiv(N_RELU, c.get("BLOCK", 1)),),
         Target(min_lane_use=0.9, max_latencies=3.0)),
    Task("matmul", "c = a @ b for 32 × 32 float32 matrices, one program per row or column of c, with "
         "coalesced accesses", "(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr)",
         {"a": (MM, MM), "b": (MM, MM)}, ("c", (MM, MM)), {"M": MM, "N": MM, "K": MM},
         lambda a, b: a @ b, lambda c: (MM,), Target(max_sector_ratio=16.0), tolerance=1e-4),
)}


@dataclass(frozen=True)
class Verdict:
    """What :func:`check` found. ``passed`` and ``reason`` sum it up (``str(verdict)`` is one line)."""

    task: str
    chip: str
    kernel: str
    correct: bool
    max_error: float
    sectors: int
    min_sectors: int
    lane_use: float
    issue_lane_use: float | None  # active lanes / 32 over the warp-instructions the machine issued
    cycles: int | None
    latency: int  # the SIMT machine's memory latency, cycles
    target: Target
    reason: str  # "" when passed

    @property
    def passed(self) -> bool:
        return not self.reason

    @property
    def verdict(self) -> str:
        return "pass" if self.passed else f"fail: {self.reason}"

    @property
    def sector_ratio(self) -> float:
        return self.sectors / self.min_sectors

    def rows(self) -> list[dict]:
        t = self.target
        rows = [{"measure": "correct against NumPy", "kernel": "yes" if self.correct else "no",
                 "target": f"worst error {self.max_error:.2g}"},
                {"measure": "32-byte sectors moved", "kernel": f"{self.sectors:,} ({self.sector_ratio:.1f}× the "
                 f"minimum {self.min_sectors:,})",
                 "target": f"≤ {t.max_sector_ratio:g}× the minimum" if t.max_sector_ratio else "—"},
                {"measure": "lanes used", "kernel": f"{self.lane_use:.0%}",
                 "target": f"≥ {t.min_lane_use:.0%}" if t.min_lane_use else "—"},
                {"measure": "active lanes per issued warp-instruction",
                 "kernel": "—" if self.issue_lane_use is None else f"{self.issue_lane_use:.0%}", "target": "—"},
                {"measure": "cycles", "kernel": "—" if self.cycles is None else f"{self.cycles:,}",
                 "target": f"≤ {t.max_latencies * self.latency:,.0f} ({t.max_latencies:g} memory latencies)"
                 if t.max_latencies else "—"},
                {"measure": "verdict", "kernel": self.verdict, "target": ""}]
        return rows

    def table(self) -> Table:
        return Table(self.rows(), caption=f"ls.labs.check: {self.kernel} on task {self.task!r}, {self.chip}")

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()

    def __str__(self) -> str:
        return f"{self.kernel} on {self.task!r} ({self.chip}): {self.verdict}"


def _lookup(name) -> Task:
    """The task called ``name`` (or ``name`` itself when it is a :class:`Task`); ``ls.labs.task``."""
    if isinstance(name, Task):
        return name
    if not isinstance(name, str) or name.lower() not in TASKS:
        raise ArgumentError(f"ls.labs.check: task={name!r} is not a lab task; the tasks are {sorted(TASKS)}")
    return TASKS[name.lower()]


task = _lookup


def _chip(chip) -> Chip:
    try:
        c = get(chip)
    except (KeyError, LabsimError, TypeError):
        raise ArgumentError(f"ls.labs.check: chip={chip!r} is not a known chip; give a GPU preset such as "
                            f"'H100 SXM' or 'A100 80GB'") from None
    if c.kind is not ChipKind.GPU or c.sm is None:
        raise ArgumentError(f"ls.labs.check: chip={chip!r} is not a GPU with SMs; the labs run on the SIMT "
                            f"machine (give 'H100 SXM', 'A100 80GB' or 'H200')")
    return c


def _fail(t: Task, c: Chip, name: str, reason: str) -> Verdict:
    return Verdict(t.name, c.name, name, False, math.inf, 0, t.min_sectors, 0.0, None, None, Timing().memory,
                   t.target, reason)


def check(kernel, task, chip="H100 SXM", **constants) -> Verdict:
    """Run ``kernel`` (an ``@ls.blocks.jit`` kernel with the task's signature) on ``task`` (a name or a
    :class:`Task`) and ``chip``; ``constants`` are its ``tl.constexpr`` values (``BLOCK=256``). Returns a
    :class:`Verdict`.
    A kernel that breaks a rule of ``ls.blocks`` or of the machine fails with that rule as its reason."""
    if not isinstance(kernel, JITFunction):
        raise ArgumentTypeError(f"ls.labs.check: kernel must be an @ls.blocks.jit kernel, got {kernel!r:.60} "
                                f"({type(kernel).__name__})")
    t, c = _lookup(task), _chip(chip)
    for k, v in constants.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ArgumentError(f"ls.labs.check: {k}={v!r} must be a positive int (a tl.constexpr of the kernel)")
    name = kernel.name
    grid = t.grid(constants)
    scalars = list(t.scalars.values())
    a = t.arrays()
    ref = t.reference(*[a[k] for k in t.inputs])
    try:
        run = kernel[grid](*a.values(), *scalars, **constants)
        b = t.arrays()
        machine = run_blocks(kernel, grid, *b.values(), *scalars, chip=c, **constants)
    except (BlockError, SimtError) as e:
        return _fail(t, c, name, f"the kernel broke a rule: {e}")
    out = b[t.output[0]]
    err = float(np.max(np.abs(out - ref)))
    correct = bool(err <= t.tolerance * max(1.0, float(np.max(np.abs(ref)))))
    sectors = machine.transactions()["sectors"]
    lane_use = 1 - run.idle_lanes / run.lanes if run.lanes else 0.0
    latency = Timing().memory
    tg, reasons = t.target, []
    if not correct:
        worst = np.unravel_index(int(np.argmax(np.abs(out - ref))), ref.shape)
        reasons.append(f"wrong values (worst error {err:.3g} at {t.output[0]}{list(map(int, worst))})")
    if tg.max_sector_ratio is not None and sectors > tg.max_sector_ratio * t.min_sectors:
        reasons.append(f"moves {sectors:,} sectors, {sectors / t.min_sectors:.1f}× the minimum "
                       f"(target ≤ {tg.max_sector_ratio:g}×)")
    if tg.min_lane_use is not None and lane_use < tg.min_lane_use:
        reasons.append(f"uses {lane_use:.0%} of its lanes (target ≥ {tg.min_lane_use:.0%})")
    if tg.max_latencies is not None and machine.cycles is not None and machine.cycles > tg.max_latencies * latency:
        reasons.append(f"takes {machine.cycles:,} cycles (target ≤ {tg.max_latencies * latency:,.0f})")
    issue = machine.trace.lane_utilisation() if machine.trace is not None else None
    return Verdict(t.name, c.name, name, correct, err, sectors, t.min_sectors, lane_use, issue, machine.cycles, latency,
                   tg, "; ".join(reasons))


__all__ = ["Target", "Task", "TASKS", "Verdict", "check", "task", "Step", "progression"]
