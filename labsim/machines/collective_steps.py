"""The sends of a ring, a bidirectional ring and a line (an axis without wraparound), with real values.

Used by ``collectives.py``. Each function works within ``members`` (device ids in order along the ring
or line) and returns what every member ends with and the sends of each step, one list per step of
``(src, dst, nbytes, what, link index)``. A device's links: index ``base`` one way (to the next device),
``base + 1`` the other way.

The line algorithms (labsim's; they reach the bound that an end device receives everything over one
link): AllGather sends every piece both ways, one hop per step; device ``p`` sends rightwards at step
``s`` the piece that started at ``p − s`` and leftwards the one that started at ``p + s``. ReduceScatter
runs partial sums towards each chunk's owner from both ends: rightwards, device ``p`` sends at step ``s``
the sum over devices ``0..p`` of chunk ``k − 1 − s + p``; leftwards mirrors it. Both take ``k − 1`` steps
of one chunk per link direction.
"""
from __future__ import annotations

import math

import numpy as np


def ring_ag(pieces: dict, members: list, reverse: bool):
    """AllGather: member k starts with ``pieces[members[k]]``; every member ends with all pieces."""
    order = members[::-1] if reverse else members
    m = len(order)
    have = {d: {d: pieces[d]} for d in members}
    steps = []
    for s in range(m - 1):
        sends, moved = [], []
        for p in range(m):
            src, dst, c = order[p], order[(p + 1) % m], order[(p - s) % m]
            v = have[src][c]
            sends.append((src, dst, v.nbytes, f"chunk of device {c}"))
            moved.append((dst, c, v))
        for dst, c, v in moved:
            have[dst][c] = v
        steps.append(sends)
    return have, steps


def ring_rs(chunks: dict, members: list, reverse: bool):
    """ReduceScatter: ``chunks[d][k]`` is device d's chunk destined for ``members[k]``; member d ends with
    the sum over members of their chunk for d."""
    order = members[::-1] if reverse else members
    m = len(order)
    idx = {d: k for k, d in enumerate(members)}
    acc = {d: {order[c]: chunks[d][idx[order[c]]] for c in range(m)} for d in members}
    steps = []
    for s in range(m - 1):
        sends, moved = [], []
        for p in range(m):
            src, dst, c = order[p], order[(p + 1) % m], order[(p - s - 1) % m]
            sends.append((src, dst, acc[src][c].nbytes, f"partial sum for device {c}"))
            moved.append((dst, c, acc[src][c]))
        for dst, c, v in moved:
            acc[dst][c] = acc[dst][c] + v
        steps.append(sends)
    return {d: acc[d][d] for d in members}, steps


def line_ag(pieces: dict, members: list, base: int):
    """AllGather on a line: every member ends with all pieces (``have[d][origin]``)."""
    k = len(members)
    have = {d: {d: pieces[d]} for d in members}
    steps = []
    for s in range(k - 1):
        sends, moved = [], []
        for p in range(k):
            src = members[p]
            if p + 1 < k and p - s >= 0:  # rightwards: the piece that started s hops to the left
                c = members[p - s]
                sends.append((src, members[p + 1], have[src][c].nbytes, f"chunk of device {c}", base))
                moved.append((members[p + 1], c, have[src][c]))
            if p - 1 >= 0 and p + s < k:  # leftwards
                c = members[p + s]
                sends.append((src, members[p - 1], have[src][c].nbytes, f"chunk of device {c}", base + 1))
                moved.append((members[p - 1], c, have[src][c]))
        for dst, c, v in moved:
            have[dst][c] = v
        steps.append(sends)
    return have, steps


def line_rs(chunks: dict, members: list, base: int):
    """ReduceScatter on a line: ``chunks[d][j]`` is device d's chunk for ``members[j]``; member j ends with
    the sum of every member's chunk j."""
    k = len(members)
    right, left = {}, {}  # (p, j): partial sum received by member p for chunk j, from the left / right
    steps = []
    for s in range(k - 1):
        sends, moved = [], []
        for p in range(k):
            d = members[p]
            j = k - 1 - s + p  # rightwards: the sum over members 0..p of chunk j
            if p <= s and j > p:
                v = chunks[d][j] + right.pop((p, j)) if p > 0 else chunks[d][j]
                sends.append((d, members[p + 1], v.nbytes, f"partial sum for device {members[j]}", base))
                moved.append((right, p + 1, j, v))
            j = s + p - k + 1  # leftwards: the sum over members p..k-1 of chunk j
            if k - 1 - p <= s and 0 <= j < p:
                v = chunks[d][j] + left.pop((p, j)) if p < k - 1 else chunks[d][j]
                sends.append((d, members[p - 1], v.nbytes, f"partial sum for device {members[j]}", base + 1))
                moved.append((left, p - 1, j, v))
        for box, p, j, v in moved:
            box[(p, j)] = v
        steps.append(sends)
    out = {}
    for p, d in enumerate(members):
        v = chunks[d][p]
        if (p, p) in right:
            v = v + right[(p, p)]
        if (p, p) in left:
            v = v + left[(p, p)]
        out[d] = v
    return out, steps


def _chunked(a, m, ax):
    """``a`` cut into ``m`` equal chunks along ``ax``, stacked on a new first axis (``np.split``'s pieces)."""
    sh = a.shape
    return np.moveaxis(a.reshape(sh[:ax] + (m, sh[ax] // m) + sh[ax + 1:]), ax, 0)


def _unchunked(x, ax):
    """The inverse of :func:`_chunked`: ``m`` stacked pieces joined along ``ax``."""
    y = np.moveaxis(x, 0, ax)
    sh = y.shape
    return y.reshape(sh[:ax] + (sh[ax] * sh[ax + 1],) + sh[ax + 2:])


def ring_rs_array(values: dict, members: list, ax: int, base: int):
    """:func:`ring_rs` on one array per member (one way round), with each step's adds done at once in
    NumPy: ``X[p, q]`` is member p's copy of chunk q; at step s every p adds its chunk (p−s−1) mod m
    into the next member's. The same sums in the same order as :func:`ring_rs`."""
    m = len(members)
    x = np.stack([_chunked(np.asarray(values[d]), m, ax) for d in members])
    P = np.arange(m)
    nb = x[0, 0].nbytes
    steps = []
    nxt = members[1:] + members[:1]
    what = [f"partial sum for device {d}" for d in members]  # made once, not once per send
    for s in range(m - 1):
        q = (P - s - 1) % m
        x[(P + 1) % m, q] += x[P, q]
        steps.append([(src, dst, nb, what[c], base) for src, dst, c in zip(members, nxt, q.tolist())])
    return {d: x[p, p].copy() for p, d in enumerate(members)}, steps


def ring_ag_array(values: dict, members: list, ax: int, base: int):
    """:func:`ring_ag` on one array per member, each step's copies done at once: ``Y[p, c]`` is member
    p's copy of piece c; at step s every p passes piece (p−s) mod m to the next member."""
    m = len(members)
    first = np.asarray(values[members[0]])
    y = np.zeros((m, m) + first.shape, dtype=np.result_type(*[values[d] for d in members]))
    P = np.arange(m)
    y[P, P] = np.stack([values[d] for d in members])
    nb = first.nbytes
    steps = []
    nxt = members[1:] + members[:1]
    what = [f"chunk of device {d}" for d in members]
    for s in range(m - 1):
        c = (P - s) % m
        y[(P + 1) % m, c] = y[P, c]
        steps.append([(src, dst, nb, what[k], base) for src, dst, k in zip(members, nxt, c.tolist())])
    return {d: _unchunked(y[p], ax) for p, d in enumerate(members)}, steps


def _halves(a, ax):
    return np.array_split(a, 2, axis=ax)


def _tag(steps, link):
    return [[(a, b, nb, w, link) for a, b, nb, w in st] for st in steps]


def gather(values: dict, members: list, ax: int, mode: str, base: int):
    """AllGather within ``members`` (``mode``: ``ring``, ``bidir`` or ``line``); each member's
    concatenation along ``ax`` and the steps."""
    if mode == "line":
        have, steps = line_ag(values, members, base)
        return {d: np.concatenate([have[d][k] for k in members], axis=ax) for d in members}, steps
    if mode == "ring":
        return ring_ag_array(values, members, ax, base)
    h = {d: _halves(values[d], ax) for d in members}
    have0, s0 = ring_ag({d: h[d][0] for d in members}, members, False)
    have1, s1 = ring_ag({d: h[d][1] for d in members}, members, True)
    steps = [x + y for x, y in zip(_tag(s0, base), _tag(s1, base + 1))]
    return {d: np.concatenate([p for k in members for p in (have0[d][k], have1[d][k])], axis=ax)
            for d in members}, steps


def scatter(values: dict, members: list, ax: int, mode: str, base: int):
    """ReduceScatter within ``members``: member k ends with chunk k of the group's sum (along ``ax``)."""
    m = len(members)
    if mode == "ring":
        return ring_rs_array(values, members, ax, base)
    split = {d: np.split(values[d], m, axis=ax) for d in members}
    if mode == "line":
        return line_rs(split, members, base)
    h = {d: [_halves(c, ax) for c in split[d]] for d in members}
    out0, s0 = ring_rs({d: [c[0] for c in h[d]] for d in members}, members, False)
    out1, s1 = ring_rs({d: [c[1] for c in h[d]] for d in members}, members, True)
    steps = [x + y for x, y in zip(_tag(s0, base), _tag(s1, base + 1))]
    return {d: np.concatenate([out0[d], out1[d]], axis=ax) for d in members}, steps


def groups(dims, axis):
    """Devices (row-major ids) that differ only along mesh ``axis``, each list in coordinate order."""
    n = math.prod(dims)
    out = {}
    for d in range(n):
        coords = list(np.unravel_index(d, dims))
        key = tuple(coords[:axis] + coords[axis + 1:])
        out.setdefault(key, []).append(d)
    return list(out.values())


__all__ = ["ring_ag", "ring_rs", "ring_ag_array", "ring_rs_array", "line_ag", "line_rs", "gather", "scatter", "groups"]
