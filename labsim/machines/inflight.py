"""Little's law for memory-bound kernels: the bytes that must be in flight to reach a bandwidth.

Introduced in chapter 8 (*Warps*), beside the issue-slot view of latency hiding. A memory system with
bandwidth ``B`` (bytes/s) and latency ``L`` (seconds from a load's issue to its data) delivers at most
``in_flight / L`` bytes per second when only ``in_flight`` bytes of requests are outstanding (Little's
law: items in a system = arrival rate × time in the system). So to reach the full bandwidth the chip must
keep ``B · L`` bytes of loads outstanding at every moment:

* chip-wide ``B · L``; per SM ``B · L / SMs``;
* per resident thread ``B · L / (SMs · threads per SM)``; divided by the bytes of one load, the loads
  each thread must have in flight (occupancy × independent loads per thread is what supplies them).

``achieved_bandwidth(in_flight_per_sm) = min(B, SMs · in_flight_per_sm / L)``.

The latency is labsim's assumption, not a measurement: by default the SIMT machine's load latency
(``ls.simt.Timing().memory`` cycles) at the SM clock the preset implies (``ls.tiling.sm_clock``).
Microbenchmarks of Hopper and Ampere measure global-memory latencies of several hundred cycles; real
latency also grows as the memory system fills (queueing), which this bound leaves out.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..hardware import Chip, get
from ..support.errors import ArgumentError, LabsimError, nonnegative, positive


@dataclass(frozen=True)
class InFlight:
    """Little's law on one chip: ``bandwidth`` (B/s), ``latency`` (s; ``latency_cycles`` at ``clock`` Hz),
    ``sms``, and the bytes in flight the bandwidth needs, chip-wide (``chip_bytes``) and per SM."""

    chip: str
    bandwidth: float
    latency_cycles: float
    clock: float
    sms: int

    @property
    def latency(self) -> float:
        return self.latency_cycles / self.clock

    @property
    def chip_bytes(self) -> float:
        return self.bandwidth * self.latency

    @property
    def sm_bytes(self) -> float:
        return self.chip_bytes / self.sms

    def per_thread_bytes(self, threads_per_sm: int) -> float:
        """Bytes each of ``threads_per_sm`` resident threads must keep in flight."""
        if not isinstance(threads_per_sm, int) or isinstance(threads_per_sm, bool) or threads_per_sm < 1:
            raise ArgumentError(f"per_thread_bytes: threads_per_sm must be a positive integer, got {threads_per_sm!r}")
        return self.sm_bytes / threads_per_sm

    def loads_per_thread(self, threads_per_sm: int, bytes_per_load: int = 4) -> int:
        """Independent loads of ``bytes_per_load`` each thread must have in flight (rounded up)."""
        if not isinstance(bytes_per_load, int) or isinstance(bytes_per_load, bool) or bytes_per_load < 1:
            raise ArgumentError(f"loads_per_thread: bytes_per_load must be a positive integer, got {bytes_per_load!r}")
        return math.ceil(self.per_thread_bytes(threads_per_sm) / bytes_per_load - 1e-9)

    def achieved_bandwidth(self, in_flight_per_sm: float) -> float:
        """``min(B, SMs · in_flight_per_sm / L)``: the bandwidth that many bytes in flight per SM sustain."""
        in_flight_per_sm = nonnegative("achieved_bandwidth", "in_flight_per_sm (bytes)", in_flight_per_sm)
        return min(self.bandwidth, self.sms * in_flight_per_sm / self.latency)


def littles_law(chip: Chip | str = "H100 SXM", *, latency_cycles: float | None = None, clock: float | None = None,
                bandwidth: float | None = None) -> InFlight:
    """Little's law for ``chip``'s HBM: ``latency_cycles`` defaults to the SIMT machine's load latency
    (an assumption, see the module), ``clock`` to the SM clock the preset implies, ``bandwidth`` to the
    preset's HBM bandwidth."""
    from .simt import Timing
    from .tiling import _gpu, sm_clock

    if get(chip).sm is None:  # name the function the reader called, not the tiling model it borrows
        raise ArgumentError(f"littles_law: {get(chip).name} has no SMs; it applies to a GPU preset "
                         "(A100 80GB, H100 SXM, H200, B200)")
    c = _gpu(chip)
    lat = Timing().memory if latency_cycles is None else latency_cycles
    clk = sm_clock(c) if clock is None else clock
    bw = c.hbm_bandwidth if bandwidth is None else bandwidth
    for name, v in (("latency_cycles", lat), ("clock", clk), ("bandwidth", bw)):
        try:
            positive("littles_law", name, v)
        except LabsimError:
            raise ArgumentError(f"littles_law: {name} must be a positive number (finite, > 0), got {v!r}") from None
    return InFlight(chip=c.name, bandwidth=float(bw), latency_cycles=float(lat), clock=float(clk), sms=c.compute_units)


__all__ = ["InFlight", "littles_law"]
