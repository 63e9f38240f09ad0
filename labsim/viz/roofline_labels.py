"""Where a roofline's kernel names go (``viz.roofline``): which side of its marker each name is written on,
names in two lines, and numbered labels of nearby markers written once, together."""
from __future__ import annotations

import math


def _label_sides(xs, ys, xrange, roof) -> list[str]:
    """Where each roofline point's name goes: towards the middle of the plot (a name at the left end
    written leftwards is cut off), below a point on the roof (above it is the plot's edge), else
    alternately below (right of the slope) and above."""
    lo, hi = math.log10(xrange[0]), math.log10(xrange[1])
    lys = [math.log10(y) for y in ys] + [math.log10(roof)]
    # a label's box in decades on a phone's plot: about a third of the width, an eighth of the height
    w, h = 0.35 * (hi - lo), 0.13 * (max(lys) - min(lys) + 1)
    out, placed = [], []
    for i, (x, y) in enumerate(zip(xs, ys)):
        lx, ly = math.log10(x), math.log10(y)
        f = (lx - lo) / (hi - lo)
        side = "right" if f < 0.4 else "left" if f > 0.6 else "center"
        x0 = lx if side == "right" else lx - w if side == "left" else lx - w / 2
        order = ["bottom", "top"] if y >= 0.8 * roof or i % 2 == 0 else ["top", "bottom"]

        def box(v):
            return (x0, x0 + w, ly - h, ly) if v == "bottom" else (x0, x0 + w, ly, ly + h)

        # a neighbour's label where this one would go: take the other side of the point
        free = [v for v in order if not any(min(b[1], box(v)[1]) > max(b[0], box(v)[0])
                                            and min(b[3], box(v)[3]) > max(b[2], box(v)[2]) for b in placed)]
        vert = (free or order)[0]
        placed.append(box(vert))
        out.append(f"{vert} {side}")
    return out


def _two_lines(name: str, width: int = 18) -> str:
    """A point's name on two lines when long (at its " (" or the space nearest its middle): one line of
    30 characters runs off a phone's plot."""
    if len(name) <= width or "<br>" in name:
        return name
    cut = name.find(" (")
    if cut < 6:
        spaces = [i for i, ch in enumerate(name) if ch == " "]
        if not spaces:
            return name
        cut = min(spaces, key=lambda i: abs(i - len(name) / 2))
    return name[:cut] + "<br>" + name[cut + 1:]


def _cluster_labels(xs, ys, labels, *, dx: float = 0.3, dy: float = 0.25, char: float = 0.15) -> list[str]:
    """Number labels of roofline points closer than ``dx``/``dy`` decades (a phone's plot has about 50 px
    a decade) are written once, together, at the cluster's first point ("2, 6-9"): side by side they pile up.
    So are two written labels whose texts, at about ``char`` decades a character, would touch."""
    lx = [math.log10(x) for x in xs]
    ly = [math.log10(y) for y in ys]
    owner = list(range(len(xs)))
    for j in range(len(xs)):
        for i in range(j):
            if owner[i] == i and abs(lx[i] - lx[j]) < dx and abs(ly[i] - ly[j]) < dy:
                owner[j] = i
                break
    def texts():
        out = []
        for i in range(len(labels)):
            if owner[i] != i:
                out.append("")
                continue
            members = [int(labels[k]) for k in range(len(labels)) if owner[k] == i]
            runs, start = [], members[0]
            for a, b in zip(members, members[1:] + [None]):
                if b != a + 1:
                    runs.append(str(start) if start == a else f"{start}–{a}")
                    start = b
            out.append(", ".join(runs))
        return out

    # two written labels whose texts would touch (centred on their points, about `char` decades a
    # character on a phone's plot) are written once, together, as well
    while True:
        out = texts()
        leaders = [i for i in range(len(xs)) if owner[i] == i]
        pair = next(((a, b) for a in leaders for b in leaders if a < b and abs(ly[a] - ly[b]) < dy
                     and abs(lx[a] - lx[b]) < max(dx, char * (len(out[a]) + len(out[b])) / 2)), None)
        if pair is None:
            return out
        for k in range(len(owner)):
            if owner[k] == pair[1]:
                owner[k] = pair[0]
