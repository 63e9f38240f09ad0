"""The book's one palette: colour-blind-safe colours (Okabe & Ito, 2008), one meaning each.

Every figure of the book, and every machine that draws, takes its colours from :data:`ROLE`, so a colour
means the same thing on every page. The meanings:

=========  ================  ==========================================================================
role       colour            what it marks
=========  ================  ==========================================================================
compute    blue              work of a matrix unit or a kernel's compute time (tensor core, MXU, dot)
vector     sky blue          vector/elementwise and reduction work (FMA lanes, VPU, fused loops)
memory     orange            memory traffic: loads, stores, copies, HBM and PCIe transfers, data movement
overhead   reddish purple    launch, dispatch and stall time: what is neither compute nor memory
host       grey              the host CPU and its software (Python, framework, driver calls)
idle       light grey        waiting, empty issue slots, unused processing elements, constants
mismatch   vermillion        wrong, over a limit, differs from the reference, the binding limit
match      bluish green      agrees with the reference, fits, within the limit
data       yellow            input values and operands as data (a program's parameters)
=========  ================  ==========================================================================

Series that carry no meaning of their own beyond "a different series" (several chips on one roofline,
several sizes) are drawn in black and greys and told apart by dashes (:data:`SEQUENCE` with
:data:`DASHES`, or :func:`series_style`), as the book's introduction promises: a colour is kept for a
meaning. Such a figure says in its legend or labels what each line is.
"""
from __future__ import annotations
from ..support.errors import ArgumentError

from types import MappingProxyType

OKABE_ITO = MappingProxyType({
    "orange": "#E69F00", "sky blue": "#56B4E9", "bluish green": "#009E73", "yellow": "#F0E442",
    "blue": "#0072B2", "vermillion": "#D55E00", "reddish purple": "#CC79A7", "grey": "#999999",
    "black": "#000000",
})

#: concept -> colour, one meaning per colour across the whole book (see the module docstring)
ROLE = MappingProxyType({
    "compute": OKABE_ITO["blue"],
    "vector": OKABE_ITO["sky blue"],
    "memory": OKABE_ITO["orange"],
    "overhead": OKABE_ITO["reddish purple"],
    "host": OKABE_ITO["grey"],
    "idle": "#DDDDDD",
    "mismatch": OKABE_ITO["vermillion"],
    "match": OKABE_ITO["bluish green"],
    "data": OKABE_ITO["yellow"],
})

#: light tints of the roles, for filled areas behind text (graph clusters, table highlights)
TINT = MappingProxyType({
    "compute": "#CCE3F0", "vector": "#D6EEFA", "memory": "#FAE7C2", "overhead": "#F3DCEA",
    "host": "#EEEEEE", "idle": "#F5F5F5", "mismatch": "#F7D9C4", "match": "#CCECE3", "data": "#FBF8C8",
})

#: neutral series colours (no role): black, then greys, told apart by dash and label
NEUTRAL = ["#000000", "#555555", "#999999"]

#: series without a meaning of their own (chips, sizes): black and greys, in step with :data:`DASHES`
#: (series i is SEQUENCE[i] drawn DASHES[i]: no two of the first nine look alike)
SEQUENCE = [NEUTRAL[i % 3] for i in range(9)]
#: the dash of series i (each grey comes with three dashes)
DASHES = ["solid", "solid", "solid", "dash", "dash", "dash", "dot", "dot", "dot"]


def series_style(i: int) -> dict:
    """Line style (Plotly ``line=``) of the i-th series that has no palette meaning: a grey and a dash."""
    if not isinstance(i, int) or isinstance(i, bool) or i < 0:
        raise ArgumentError(f"series_style: i must be a series index 0, 1, 2, ..., got {i!r}")
    return dict(color=SEQUENCE[i % len(SEQUENCE)], dash=DASHES[i % len(DASHES)])

#: op kinds (graph nodes) and event kinds (timelines) -> colour, each through its role
KIND_COLORS = MappingProxyType({
    # graph nodes: what the op does
    "input": ROLE["data"], "elementwise": ROLE["vector"], "reduction": ROLE["vector"],
    "contraction": ROLE["compute"], "data movement": ROLE["memory"], "constant": ROLE["idle"],
    "composite": "#FFFFFF", "output": "#FFFFFF",
    # timeline events: where the time goes
    "kernel": ROLE["compute"], "copy": ROLE["memory"], "api": ROLE["host"], "wait": ROLE["idle"],
    "launch": ROLE["overhead"], "compute": ROLE["compute"],
})

#: graph node text drawn on a dark fill is white
DARK = frozenset({ROLE["compute"], ROLE["mismatch"], ROLE["match"]})

#: buffer kinds (memory plans) -> colour
BUFFER_COLORS = MappingProxyType({
    "parameter": ROLE["data"], "constant": ROLE["idle"], "temporary": ROLE["memory"], "output": TINT["memory"],
})


def role(name: str) -> str:
    """The colour of a role, or a KeyError that lists the roles."""
    try:
        return ROLE[name]
    except KeyError:
        raise KeyError(f"no colour role {name!r}; the roles are {', '.join(ROLE)}") from None
