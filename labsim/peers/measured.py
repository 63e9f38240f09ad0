"""Measurements of a real GPU that labsim did not make, beside labsim's prediction for them.

The appendix "How accurate is labsim?" shows these so that at least one time-against-hardware check is
on the page even in a build without ``book/data/gpu_calibration.json`` (``labsim.peers.calibration``).
They were taken on one NVIDIA H200 machine in October and November 2026 and recorded in the project's
fact sheet (``FACTS.md``, "Chips"). labsim did not make them and this build of the book does not repeat
them; they are a record, not a calibration file. Each one is stated as a range (low, high) in the unit
:data:`labsim.peers.calibration.UNITS` gives its experiment, and is tied to the experiment of
:data:`labsim.peers.calibration.PLAN` that asks the same question, so the prediction comes from the
same code as the calibration table's.
"""
from __future__ import annotations
from ..support.errors import ArgumentTypeError

from dataclasses import dataclass

from ..hardware import get
from . import calibration

SOURCE = ("measured on one NVIDIA H200 machine (2026-10/11) and recorded in the project's fact sheet "
          "(FACTS.md); not made by labsim and not repeated in this build")


@dataclass(frozen=True)
class Measured:
    """One recorded measurement: what was measured, its range, and the calibration experiment it matches."""

    what: str
    low: float
    high: float
    experiment: dict

    @property
    def unit(self) -> str:
        return calibration.UNITS[self.experiment["group"]]

    def predict(self, chip: str = "H200") -> float:
        """labsim's prediction for the matching experiment, in :attr:`unit`."""
        return calibration.predict(self.experiment, chip)


H200 = (
    Measured("8192³ bf16 matrix product on random data (rate)", 769e12, 798e12,
             {"group": "matmul", "n": 8192, "dtype": "bfloat16", "reps": 20}),
    Measured("device-to-device copy (bytes read + written per second)", 4.3e12, 4.3e12,
             {"group": "copy", "direction": "d2d", "pinned": True, "bytes": 1024 * 2**20}),
)


def rows(chip: str = "H200") -> list[dict]:
    """The H200 measurements beside labsim's prediction for the preset named ``chip``: one dict each."""
    if not isinstance(chip, str):
        raise ArgumentTypeError(f"measured.rows: chip must be a preset name (a string), got {type(chip).__name__}")
    get(chip)  # a clear error naming the presets for an unknown name
    out = []
    for m in H200:
        p = m.predict(chip)
        out.append({"measurement": m.what, "unit": m.unit, "measured (low)": m.low, "measured (high)": m.high,
                    "labsim": p, "measured ÷ labsim (low)": m.low / p, "measured ÷ labsim (high)": m.high / p})
    return out


__all__ = ["H200", "Measured", "SOURCE", "rows"]
