"""The SIMT machine: an NVIDIA-style GPU that runs kernels warp by warp (``ls.simt``).

``occupancy`` (blocks and warps per SM and the limiting resource). More modules follow: the machine
that executes the compiler's kernel IR, coalescing, schedulers.
"""
from __future__ import annotations

from .occupancy import Limiter, Occupancy, OccupancyError, occupancy

__all__ = ["Limiter", "Occupancy", "OccupancyError", "occupancy"]
