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

The many-chip chapter adds two facts of wiring. A TPU pod's ``ici_axes`` and ``wrap_multiple`` say
which axes of a slice have wraparound links (:meth:`System.wrap`: a v5e 4 × 4 slice has none, the
16 × 16 pod both). ``NODES`` holds GPU nodes whose NVLink domain ends at the node, with the link each
GPU has to the network beyond it (``scale_out``, ``SCALE_OUT_400G``: 400 Gb/s per GPU on a DGX H100).
"""
from __future__ import annotations
from ..support.errors import ArgumentError

from dataclasses import dataclass

from .chip import Chip, Link
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
    #: TPU pods: the ICI axes of a slice (2 on v5e and v6e, 3 on v4 and v5p), and the axis lengths that
    #: get wraparound links: an axis wraps only when its length is a multiple of ``wrap_multiple``
    ici_axes: int = 0
    wrap_multiple: int = 0
    #: GPU nodes: the link per GPU to the scale-out network that joins nodes (None: not modelled)
    scale_out: Link | None = None

    def __post_init__(self) -> None:
        if self.chip not in PRESETS:
            raise ArgumentError(f"System {self.name!r}: chip {self.chip!r} is not a preset; "
                             f"labsim knows {sorted(PRESETS)}")
        if not isinstance(self.size, int) or self.size < 1:
            raise ArgumentError(f"System {self.name!r}: size must be a positive int, got {self.size!r}")

    def wrap(self, mesh) -> tuple[bool, ...]:
        """Which axes of a slice of shape ``mesh`` have wraparound links (TPU pods only)."""
        dims = tuple(mesh)
        if not self.ici_axes:
            raise ArgumentError(f"System {self.name!r} is not a TPU pod: it has no ICI slice shapes")
        if len(dims) > self.ici_axes or self.size % max(1, _prod(dims)):
            raise ArgumentError(f"System {self.name!r}: a slice {dims} does not fit a pod of {self.size} chips "
                             f"with {self.ici_axes} ICI axes")
        return tuple(d > 1 and d % self.wrap_multiple == 0 for d in dims)

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

def _prod(dims) -> int:
    out = 1
    for d in dims:
        out *= int(d)
    return out


#: the network between DGX H100 nodes: one ConnectX-7 per GPU at up to 400 Gb/s (InfiniBand or Ethernet),
#: 400e9 / 8 bytes/s each way. Beyond one node, NVLink is not used: "NVLink is only supported within a
#: single node ... For scaling beyond a single node, then IB or RoCE is required" (nccl-issue-1031).
SCALE_OUT_400G = Link("InfiniBand NDR / 400 GbE, one ConnectX-7 per GPU", 400e9 / 8,
                      source="nvidia-dgx-basepod, NVIDIA DGX H200 and H100 Systems (eight single-port "
                             "ConnectX-7, up to 400 Gb/s)")

_TPU_WRAP = "austin2025scaling, How to Think About TPUs (wraparound only on full axes; tpus.md Q5)"

#: GPU nodes whose NVLink domain ends at the node: beyond it, traffic crosses the scale-out network
NODES: dict[str, System] = {s.name: s for s in (
    System("DGX H100", "H100 SXM", 8, "NVLink 4 through four NVSwitch chips",
           "nvidia-dgx-basepod, NVIDIA DGX H200 and H100 Systems (eight Hopper GPUs)", scale_out=SCALE_OUT_400G),
)}

SYSTEMS: dict[str, System] = {s.name: s for s in (
    System("DGX B200", "B200", 8, "NVLink 5 through NVSwitch",
           "nvidia2024dgxb200, 8x NVIDIA Blackwell GPUs"),
    System("NVL72 rack", "B200", 72, "NVLink 5 through NVLink Switch trays",
           "nvidia-gb200-nvl72, 72 Blackwell GPUs in one NVLink domain", notes=_NVL_NOTE),
    System("TPU v5e pod", "TPU v5e", 256, "ICI, 2D torus (16 × 16)",
           "google-tpu-v5e, TPU Pod size", notes=_TPU_WRAP, ici_axes=2, wrap_multiple=16),
    System("TPU v6e pod", "TPU v6e", 256, "ICI, 2D torus (16 × 16)",
           "google-tpu7x, Number of chips per pod (v6e column)", notes=_TPU_WRAP, ici_axes=2, wrap_multiple=16),
    System("TPU v4 pod", "TPU v4", 4096, "ICI, 3D torus (4 × 4 × 4 cubes, optical switches)",
           "google-tpu-v4, TPU Pod size", notes=_TPU_WRAP, ici_axes=3, wrap_multiple=4),
    System("TPU v5p pod", "TPU v5p", 8960, "ICI, 3D torus (4 × 4 × 4 cubes, optical switches)",
           "google-tpu-v5p, Number of chips per pod", notes=_TPU_WRAP, ici_axes=3, wrap_multiple=4),
    System("TPU7x pod", "TPU7x", 9216, "ICI", "google-tpu7x, Number of chips per pod"),
)}

__all__ = ["System", "SYSTEMS", "NODES", "SCALE_OUT_400G"]
