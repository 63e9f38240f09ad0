"""labsim: an IR-to-hardware simulator that draws the labsim book."""
from __future__ import annotations

__version__ = "0.1.0"
