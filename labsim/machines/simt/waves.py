"""Waves: how the blocks of one grid are placed on the SMs, wave by wave (chapter 7).

An SM holds at most ``blocks_per_sm`` blocks at once (:func:`.occupancy.occupancy`), so the GPU runs at
most ``SMs x blocks_per_sm`` blocks at a time: a *wave*. A grid of ``blocks`` blocks takes
``ceil(blocks / (SMs x blocks_per_sm))`` waves; a last, partly filled wave is the *tail wave*.

labsim's placement (a simplification, not NVIDIA's undocumented block scheduler): every block takes the
same time; a wave fills every SM up to ``blocks_per_sm``; the blocks of the last wave are dealt to the SMs
one at a time in turn, so they spread over as many SMs as possible.
"""
from __future__ import annotations
from ...support.errors import ArgumentError

from dataclasses import dataclass

from ...hardware import Chip, get as get_chip

__all__ = ["Waves", "place_blocks", "wave_counts"]


def _positive(fn: str, name: str, v) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise ArgumentError(f"{fn}: {name} must be a positive integer, got {v!r}")
    return v


def wave_counts(blocks: int, sms: int, blocks_per_sm: int) -> list[list[int]]:
    """Blocks resident on each SM in each wave: ``[wave][sm]`` (labsim's placement, see the module)."""
    for name, v in (("blocks", blocks), ("sms", sms), ("blocks_per_sm", blocks_per_sm)):
        _positive("wave_counts", name, v)
    per_wave = sms * blocks_per_sm
    full, rest = divmod(blocks, per_wave)
    waves = [[blocks_per_sm] * sms for _ in range(full)]
    if rest:
        waves.append([rest // sms + (1 if s < rest % sms else 0) for s in range(sms)])
    return waves


@dataclass(frozen=True)
class Waves:
    """A grid placed on a GPU: ``per_sm[wave][sm]`` blocks resident on each SM in each wave."""

    blocks: int
    sms: int
    blocks_per_sm: int
    per_sm: tuple[tuple[int, ...], ...]

    @property
    def count(self) -> int:
        """Number of waves: ``ceil(blocks / slots)``."""
        return len(self.per_sm)

    @property
    def slots(self) -> int:
        """Block slots of one wave: SMs x blocks per SM."""
        return self.sms * self.blocks_per_sm

    @property
    def busy(self) -> list[int]:
        """Blocks running in each wave."""
        return [sum(row) for row in self.per_sm]

    @property
    def last(self) -> int:
        """Blocks in the last wave."""
        return self.busy[-1]

    @property
    def tail(self) -> bool:
        """True when the last wave is only partly full."""
        return self.last < self.slots

    @property
    def efficiency(self) -> float:
        """Blocks run over block slots offered during the waves: ``blocks / (waves x slots)``."""
        return self.blocks / (self.count * self.slots)


def place_blocks(blocks: int, chip: str | Chip | int, blocks_per_sm: int) -> Waves:
    """Place ``blocks`` blocks on ``chip``'s SMs (a preset, its name, or a number of SMs), at most
    ``blocks_per_sm`` per SM at once (``ls.simt.occupancy(...).blocks_per_sm``)."""
    if isinstance(chip, int) and not isinstance(chip, bool):
        sms = _positive("place_blocks", "chip", chip)
    else:
        c = get_chip(chip) if isinstance(chip, str) else chip
        if not isinstance(c, Chip) or c.sm is None or "compute_units" not in c.sources:
            raise ArgumentError(f"place_blocks: chip must be a GPU preset with a sourced SM count or a number of SMs, "
                             f"got {chip!r}")
        sms = c.compute_units
    counts = wave_counts(blocks, sms, blocks_per_sm)
    return Waves(blocks=blocks, sms=sms, blocks_per_sm=blocks_per_sm, per_sm=tuple(tuple(r) for r in counts))
