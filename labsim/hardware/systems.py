"""Scale-up domains: how many chips a vendor joins with its fastest link, each count with its source.

Introduced in the chapter "Where hardware is going". A :class:`System` is one preset chip repeated
``size`` times inside one fast-link domain: the GPUs of one NVLink domain (an 8-GPU DGX/HGX board, an
NVL72 rack) or the chips of one TPU pod joined by ICI. Its aggregate peak, HBM capacity and HBM
bandwidth are the chip's numbers times ``size``: what the domain could do if every chip were busy,
not what a program reaches (that needs the collectives of the many-chip chapter). Data only.

``size`` is the only number a system adds; it carries its source (a BibTeX key in
``book/references.bib``). Where a vendor's rack uses a variant of a chip that labsim has no preset
for (the GPUs of a GB200 NVL72 are not sold as the DGX B200's parts), ``notes`` says which preset
stands in for it: the aggregates are then labsim's approximation, not the vendor's figure.
"""
from __future__ import annotations

from dataclasses import dataclass

from .chip import Chip
from .presets import PRESETS


@dataclass(frozen=True)
class System:
    """``size`` chips of preset ``chip`` in one domain joined by ``link``; ``source`` cites ``size``."""

    name: str
    chip: str  # a key of labsim.hardware.PRESETS
    size: int  # chips in the domain
    link: str  # what joins them (words, not a number)
    source: str  # "bibkey, where in it" for size
    notes: str = ""

    def __post_init__(self) -> None:
        if self.chip not in PRESETS:
            raise ValueError(f"System {self.name!r}: chip {self.chip!r} is not a preset; "
                             f"labsim knows {sorted(PRESETS)}")
        if not isinstance(self.size, int) or self.size < 1:
            raise ValueError(f"System {self.name!r}: size must be a positive int, got {self.size!r}")

    @property
    def preset(self) -> Chip:
        return PRESETS[self.chip]

    def peak_flops(self, dtype="bfloat16") -> float:
        """Aggregate dense peak: ``size`` x the chip's peak for ``dtype`` (FLOP/s)."""
        return self.size * self.preset.peak_flops(dtype)

    @property
    def hbm_capacity(self) -> float:
        return self.size * self.preset.hbm_capacity

    @property
    def hbm_bandwidth(self) -> float:
        return self.size * self.preset.hbm_bandwidth


_NVL_NOTE = ("The GPUs of a GB200 NVL72 are Blackwell GPUs paired with Grace CPUs; labsim has no "
             "preset for that part and stands in its B200 preset (DGX/HGX figures), so the rack's "
             "aggregates here are labsim's approximation, not NVIDIA's rack datasheet.")

SYSTEMS: dict[str, System] = {s.name: s for s in (
    System("DGX B200", "B200", 8, "NVLink 5 through NVSwitch",
           "nvidia2024dgxb200, 8x NVIDIA Blackwell GPUs"),
    System("NVL72 rack", "B200", 72, "NVLink 5 through NVLink Switch trays",
           "nvidia-gb200-nvl72, 72 Blackwell GPUs in one NVLink domain", notes=_NVL_NOTE),
    System("TPU v5e pod", "TPU v5e", 256, "ICI, 2D torus", "google-tpu-v5e, TPU Pod size"),
    System("TPU v6e pod", "TPU v6e", 256, "ICI, 2D torus", "google-tpu7x, Number of chips per pod (v6e column)"),
    System("TPU v4 pod", "TPU v4", 4096, "ICI, 3D mesh/torus", "google-tpu-v4, TPU Pod size"),
    System("TPU v5p pod", "TPU v5p", 8960, "ICI, 3D torus", "google-tpu-v5p, Number of chips per pod"),
    System("TPU7x pod", "TPU7x", 9216, "ICI", "google-tpu7x, Number of chips per pod"),
)}

__all__ = ["System", "SYSTEMS"]
