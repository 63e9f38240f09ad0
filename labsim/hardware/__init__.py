"""Hardware: chips, links and their presets, the one home of every datasheet number (data, no simulation).

Introduced in the opening chapter ("The journey of one matrix product") and used by the roofline,
host/device, GPU, TPU and many-chip chapters. ``chip`` defines the types; ``presets`` (with the TPUs
in ``presets_tpu``) holds the numbers, each with its source (a BibTeX key in ``book/references.bib``).
"""
from __future__ import annotations

from ..support.lookup import lookup
from .chip import WARP_SIZE, Chip, ChipKind, Link, SMLimits, ExecUnit
from .presets import HOST_LINKS, PRESETS
from .systems import SYSTEMS, System


def get(name: str | Chip) -> Chip:
    """Look up a preset by name (case-insensitive), or pass a Chip through."""
    return lookup(PRESETS, name, "chip", Chip)


def get_link(name: str | Link) -> Link:
    """Look up a host link by name (``HOST_LINKS``: "PCIe Gen4 x16", "NVLink-C2C", ...), or pass a Link through."""
    return lookup(HOST_LINKS, name, "host link", Link)


__all__ = ["Chip", "ChipKind", "Link", "SMLimits", "ExecUnit", "WARP_SIZE", "PRESETS", "HOST_LINKS", "SYSTEMS", "System", "get",
           "get_link"]
