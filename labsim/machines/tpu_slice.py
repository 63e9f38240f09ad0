"""TPU slices: which axes of a slice wrap around, and what a missing wraparound link costs a collective.

Introduced in "Inside a TPU" (chapter 9, "Chips joined by ICI"). TPU chips link to their neighbours
directly over ICI; a *slice* is a box of chips, 2D on v5e and v6e, 3D on v4 and v5p. The facts, from
How to Scale Your Model ({austin2025scaling}, "How to Think About TPUs"):

* **v5e and v6e**: a pod is 16 × 16 chips. An axis has a wraparound link (its last chip joined to its
  first) only when it spans the full 16; a smaller slice, such as 4 × 4, is a *mesh*, not a torus.
* **v4 and v5p**: chips come in 4 × 4 × 4 cubes, joined through optical circuit switches (OCS), which
  also close the wraparound links: an axis wraps around when its length is a multiple of 4.

labsim's model of one collective along one axis of ``n`` chips (:func:`labsim.machines.collectives.time`):
with a wraparound the axis is a bidirectional ring; without one it is a line, whose busiest link must
carry what a one-way ring carries, so labsim charges it as a one-way ring: about twice the time
(How to Scale Your Model: without wraparound "it typically doubles the time of most communication").
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

from ..hardware import Chip, ChipKind, get
from ..support.errors import ArgumentError
from . import collectives

# generation (Chip.arch) -> (axes of a slice, rule, length): "full": wraps only at that length;
# "cube": wraps at any multiple of it (OCS between cubes). Source: austin2025scaling (tpus.md).
WRAP_RULES = {"TPU v5e": (2, "full", 16), "TPU v6e": (2, "full", 16),
              "TPU v4": (3, "cube", 4), "TPU v5p": (3, "cube", 4)}


@dataclass(frozen=True)
class Slice:
    """A slice of ``chip`` with ``shape`` chips along each axis; ``wrap[i]``: axis i has a wraparound."""

    chip: Chip
    shape: tuple[int, ...]
    wrap: tuple[bool, ...]

    @property
    def chips(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def topology(self) -> str:
        """"torus" (every axis wraps around), "mesh" (none does) or "partial torus"."""
        return "torus" if all(self.wrap) else "mesh" if not any(self.wrap) else "partial torus"

    @property
    def diameter(self) -> int:
        """The most ICI hops between two chips: d // 2 on an axis that wraps, d − 1 on one that does not."""
        return sum(d // 2 if w else d - 1 for d, w in zip(self.shape, self.wrap))

    def axis_time(self, op: str, nbytes: float, axis: int = 0) -> float:
        """Seconds for collective ``op`` on ``nbytes`` among the chips along ``axis``: a bidirectional
        ring if the axis wraps around, else a line (charged as a one-way ring; see the module)."""
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral) or not 0 <= axis < len(self.shape):
            raise ArgumentError(f"axis_time: axis must be 0 to {len(self.shape) - 1}, got {axis!r}")
        n = self.shape[axis]
        topo = "bidir_ring" if self.wrap[axis] else "ring"
        return collectives.time(op, nbytes, n, self.chip.chip_link, topology=topo)

    def __str__(self) -> str:
        return f"{self.chip.arch} {'×'.join(map(str, self.shape))} ({self.topology})"


def tpu_slice(chip: Chip | str, shape) -> Slice:
    """The slice of ``chip`` (a TPU preset of a generation in :data:`WRAP_RULES`) with ``shape`` chips
    per axis, each axis marked with or without its wraparound link."""
    c = get(chip)
    if c.kind is not ChipKind.TPU or c.arch not in WRAP_RULES:
        raise ArgumentError(f"tpu_slice: chip must be one of {', '.join(WRAP_RULES)}, got {c.name!r}")
    axes, rule, length = WRAP_RULES[c.arch]
    try:
        dims = tuple(shape)
    except TypeError:
        raise ArgumentError(f"tpu_slice: shape must be {axes} chip counts, got {shape!r}") from None
    if len(dims) != axes or any(isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1 for d in dims):
        raise ArgumentError(f"tpu_slice: shape must be {axes} integers >= 1 for a {c.arch} slice, got {shape!r}")
    if rule == "full" and any(d > length for d in dims):
        raise ArgumentError(f"tpu_slice: a {c.arch} pod is {length} chips per axis, got shape {dims}")
    wrap = tuple(d == length if rule == "full" else d % length == 0 for d in dims)
    return Slice(c, tuple(int(d) for d in dims), wrap)


__all__ = ["WRAP_RULES", "Slice", "tpu_slice"]
