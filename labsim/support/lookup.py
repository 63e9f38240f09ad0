"""Case-insensitive lookup in a table of presets, with an error that lists the names it knows."""
from __future__ import annotations

from typing import Mapping, TypeVar

T = TypeVar("T")


def lookup(presets: Mapping[str, T], name, kind: str, cls: type) -> T:
    """``presets[name]`` ignoring case; an instance of ``cls`` passes through unchanged."""
    if isinstance(name, cls):
        return name
    key = {k.lower(): k for k in presets}.get(str(name).lower())
    if key is None:
        raise KeyError(f"unknown {kind} {name!r}; presets are {sorted(presets)}")
    return presets[key]
