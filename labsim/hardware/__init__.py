"""Hardware: chips, links and their presets, the one home of every datasheet number (data, no simulation).

Introduced in the opening chapter ("The journey of one matrix product") and used by the roofline,
host/device, GPU, TPU and many-chip chapters. ``chip`` defines the types, ``presets`` holds the numbers,
each with its source (a BibTeX key in ``book/references.bib``).
"""
from __future__ import annotations

from ..support.lookup import lookup
from .chip import Chip, ChipKind, Link, SMLimits, Unit
from .presets import PRESETS


def get(name: str | Chip) -> Chip:
    """Look up a preset by name (case-insensitive), or pass a Chip through."""
    return lookup(PRESETS, name, "chip", Chip)


__all__ = ["Chip", "ChipKind", "Link", "SMLimits", "Unit", "PRESETS", "get"]
