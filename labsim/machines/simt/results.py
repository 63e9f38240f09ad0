"""What a run of the SIMT machine returns: its errors, stall reasons, timing parameters, memory records,
the :class:`WarpTrace` (an ``ls.Trace`` that keeps its per-cycle record) and the :class:`KernelRun`."""
from __future__ import annotations

from ...support.errors import ArgumentError, LabsimError

import enum
from dataclasses import dataclass, field

import numpy as np

from ...compiler.isa import KernelIR
from ...core import alu
from ...hardware import WARP_SIZE as WARP
from ..events import Event, EventKind, Trace, UnitId, UnitKind


class SimtError(LabsimError, RuntimeError):
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


# what a warp waiting in each state is waiting for, as a WAIT event of its per-warp row names it
_WAITS = {Stall.NOT_SELECTED: "not selected", Stall.MEMORY: "memory", Stall.DEPENDENCY: "dependency",
          Stall.PIPE_BUSY: "pipe busy", Stall.BARRIER: "barrier"}


@dataclass(frozen=True, eq=False, kw_only=True)
class WarpTrace(Trace):
    """A kernel's run on the SIMT machine: an ``ls.Trace`` (what ``viz.timeline`` draws) that also keeps
    the per-cycle record its events summarise. One record, two views of it:

    * as a :class:`~labsim.machines.events.Trace`: the kernel on stream 0 for ``cycles`` cycles at
      ``clock_hz`` (the SM clock), and on each played SM the span from its first to its last issued
      instruction, counting them; :meth:`per_warp` adds one row per warp (issue and stall spans);
    * per cycle, as compact NumPy arrays: one row per issued warp-instruction (``issue_cycle``,
      ``issue_warp`` (global warp id), ``issue_pc`` (index into ``code``), ``issue_mask`` (uint32, bit
      *l* = lane *l* active)); ``state[c, w]``, a :class:`Stall` code for warp ``w`` in cycle ``c``
      (``ISSUED`` when it issued); per traced warp (the columns of ``state``): ``warps`` (its global
      id), ``warp_sm``, ``warp_block``, ``warp_scheduler``.

    ``code`` holds each instruction's text and ``pipes`` the name of its
    :class:`~labsim.compiler.instr.Pipe`, so ``code[issue_pc[i]]`` is what issued. Only the SMs in
    ``sms`` were played (all of them unless the run asked for fewer).
    """

    events: tuple = field(default=(), repr=False)  # built from the per-cycle record (never given)
    cycles: int
    schedulers: int
    code: list[str] = field(repr=False)
    pipes: list[str] = field(repr=False)
    issue_cycle: np.ndarray = field(repr=False)
    issue_warp: np.ndarray = field(repr=False)
    issue_pc: np.ndarray = field(repr=False)
    issue_mask: np.ndarray = field(repr=False)
    state: np.ndarray = field(repr=False)
    warp_sm: np.ndarray = field(repr=False)
    warp_block: np.ndarray = field(repr=False)
    warp_scheduler: np.ndarray = field(repr=False)
    sms: tuple[int, ...]
    policy: str
    warps: np.ndarray | None = field(default=None, repr=False)  # global warp id of each column of ``state``
    clock_hz: float = 1.0  # the SM clock: cycle c runs from c / clock_hz to (c + 1) / clock_hz seconds
    name: str = "kernel"  # the kernel's name, which its events carry
    warp_instructions: int | None = None  # issued by all warps (the played SMs issued len(issue_cycle))

    def __post_init__(self) -> None:
        if self.events:
            raise ArgumentError("WarpTrace: events are built from the per-cycle record; do not pass them")
        if self.warps is None:
            object.__setattr__(self, "warps", np.arange(len(self.warp_sm)))
        object.__setattr__(self, "events", tuple(self._events()))
        object.__setattr__(self, "chip_names", tuple(self.chip_names))
        super().__post_init__()

    def _events(self) -> list[Event]:
        hz, n = self.clock_hz, self.warp_instructions
        n = len(self.issue_cycle) if n is None else n
        evs = [Event(UnitId(0, UnitKind.STREAM), self.name, 0.0, self.cycles / hz, EventKind.KERNEL,
                     detail=f"{self.cycles:,} cycles; {n:,} warp-instructions")]
        if len(self.issue_cycle):
            sm_of = np.asarray(self.warp_sm)[np.searchsorted(np.asarray(self.warps), self.issue_warp)]
            for sm in np.unique(sm_of):
                cyc = self.issue_cycle[sm_of == sm]
                evs.append(Event(UnitId(0, UnitKind.SM, int(sm)), self.name, float(cyc.min()) / hz,
                                 float(cyc.max() + 1) / hz, EventKind.COMPUTE,
                                 detail=f"{len(cyc):,} warp-instructions issued"))
        return evs

    def per_warp(self, warps=None) -> Trace:
        """This trace with one row per traced warp (``warps``: some global warp ids; default all): its
        runs of issuing cycles as ``COMPUTE`` events and its stalls as ``WAIT`` events named by what it
        waits for (``memory``, ``dependency``, ``pipe busy``, ``barrier``, ``not selected``), in
        seconds at ``clock_hz``. Cycles before its block launched and after it exited are left empty."""
        pos = {int(w): j for j, w in enumerate(self.warps)}
        if warps is None:
            cols = range(self.n_warps)
        else:
            ids = [warps] if isinstance(warps, (int, np.integer)) else list(warps)
            bad = [w for w in ids if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or int(w) not in pos]
            if bad:
                raise ArgumentError(f"WarpTrace.per_warp: warps={bad[0]!r} is not a traced warp; it takes global "
                                    f"warp ids among {self.warps[:8].tolist()}{' ...' if self.n_warps > 8 else ''}")
            cols = [pos[int(w)] for w in ids]
        hz, evs, rows = self.clock_hz, list(self.events), []
        for j in cols:
            unit = UnitId(0, UnitKind.WARP, int(self.warps[j]))
            rows.append(unit)
            col = self.state[:, j]
            cut = np.flatnonzero(np.diff(col)) + 1
            starts, ends = np.concatenate(([0], cut)), np.concatenate((cut, [len(col)]))
            for a, b, v in zip(starts.tolist(), ends.tolist(), col[starts].tolist()):
                if v == Stall.ISSUED:
                    evs.append(Event(unit, self.name, a / hz, b / hz, EventKind.COMPUTE,
                                     detail=f"issued in {b - a:,} cycle(s)"))
                elif Stall(v) in _WAITS:
                    evs.append(Event(unit, _WAITS[Stall(v)], a / hz, b / hz, EventKind.WAIT,
                                     detail=f"{b - a:,} cycle(s) waiting: {_WAITS[Stall(v)]}"))
        return Trace(tuple(evs), (*self.units, *rows), self.chip_names)

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
    trace: WarpTrace | None  # an ls.Trace with the per-cycle record (None: a values-only run)
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
