"""HBM traffic of a tiled GEMM when L2 keeps what one wave of blocks shares, in closed form.

:func:`labsim.machines.tiling.plan` (``l2=True``) charges each wave of ``concurrent`` blocks (row-major
order over a ``gm × gn`` grid of tiles) the bytes of the distinct A rows and B columns it touches,
plus, when their k-slices do not fit L2, a share of what its blocks would read without sharing (the
model is in :func:`wave_traffic`'s docstring). A wave's bytes depend only on how many tile rows it
spans, how many last-column tiles it holds and whether it holds last-row tiles, so labsim counts the
waves of each kind instead of visiting them: with ``o`` the column where a wave starts, those counts are
sums of ``floor((a·w + b) / gn)`` over the waves ``w``, which :func:`floor_sum` gives in O(log) steps.
At most two waves (the one that crosses into the last row of tiles, and the last, partial wave) are
computed one by one. So ``plan`` answers 10⁹ per side as fast as 10³ (the loop over waves it replaces
took 0.6 s at 10⁶ per side); the tests check it against that loop on a grid of small shapes.
"""
from __future__ import annotations


def floor_sum(n: int, m: int, a: int, b: int) -> int:
    """Σ_{i=0}^{n-1} ⌊(a·i + b) / m⌋ for n ≥ 0, m ≥ 1, a ≥ 0, b ≥ 0 (the Euclid-like algorithm, O(log))."""
    total = 0
    while n > 0:
        if a >= m:
            total += (n - 1) * n // 2 * (a // m)
            a %= m
        if b >= m:
            total += n * (b // m)
            b %= m
        y_max = a * n + b
        if y_max < m:
            break
        n, b, m, a = y_max // m, y_max % m, a, m
    return total


class _Grid:
    def __init__(self, m, n, k, t, gm, gn, s, l2_bytes):
        self.m, self.n, self.k, self.t, self.gm, self.gn, self.s, self.l2 = m, n, k, t, gm, gn, s, l2_bytes
        self.rl = m - (gm - 1) * t.bm  # the last row of tiles
        self.cl = n - (gn - 1) * t.bn  # the last column of tiles

    def row(self, r):
        return self.t.bm if r < self.gm - 1 else self.rl

    def rpre(self, r):  # Σ of the first r rows
        return r * self.t.bm if r < self.gm else self.m

    def cpre(self, c):  # Σ of the first c columns
        return c * self.t.bn if c < self.gn else self.n

    def own(self, b0, b1):  # Σ over blocks b0..b1-1 (row-major) of their row size + column size
        gn = self.gn
        r0, r1 = b0 // gn, (b1 - 1) // gn
        if r0 == r1:
            return self.row(r0) * (b1 - b0) + self.cpre((b1 - 1) % gn + 1) - self.cpre(b0 % gn)
        first = self.row(r0) * (gn - b0 % gn) + self.n - self.cpre(b0 % gn)
        last = self.row(r1) * ((b1 - 1) % gn + 1) + self.cpre((b1 - 1) % gn + 1)
        mid = (self.rpre(r1) - self.rpre(r0 + 1)) * gn + self.n * (r1 - r0 - 1)
        return first + mid + last

    def term(self, width, own):
        t = self.t
        footprint = width * t.bk * self.s * t.stages
        miss = max(0.0, 1.0 - self.l2 / footprint)
        return (width + (own - width) * miss) * self.k * self.s

    def one(self, w0, w1):
        """One wave, blocks w0..w1-1, as the loop computed it."""
        gn = self.gn
        r0, r1 = w0 // gn, (w1 - 1) // gn
        width_c = self.n if r1 > r0 else self.cpre((w1 - 1) % gn + 1) - self.cpre(w0 % gn)
        width = self.rpre(r1 + 1) - self.rpre(r0) + width_c
        return self.term(width, self.own(w0, w1))

    def full_waves(self, wa, wb, cc, R):
        """Σ of the terms of the full waves wa..wb-1 (cc blocks each), all within rows of size R."""
        n_w = wb - wa
        if n_w <= 0:
            return 0.0
        gn, bn, cl = self.gn, self.t.bn, self.cl
        rem = cc % gn

        def count_ge(T):  # waves whose start column o = (w·cc) mod gn is at least T (0 ≤ T ≤ gn)
            return (floor_sum(n_w, gn, cc, cc * wa + gn - T) - floor_sum(n_w, gn, cc, cc * wa))

        cuts = sorted(c for c in {0, 1, gn - rem, gn - rem + 1, gn} if 0 <= c <= gn)
        total = 0.0
        for lo, hi in zip(cuts, cuts[1:]):
            cnt = count_ge(lo) - count_ge(hi)
            if not cnt:
                continue
            h = 1 + (lo + cc - 1) // gn      # tile rows the wave spans
            j = (lo + cc) // gn              # last-column tiles it holds
            cols = cc * bn - j * (bn - cl)   # Σ of its blocks' column sizes
            width = h * R + (self.n if h > 1 else cols)
            total += cnt * self.term(width, cc * R + cols)
        return total


def wave_traffic(m, n, k, t, gm, gn, concurrent, s, s_out, l2_bytes) -> int:
    """HBM bytes when L2 keeps the panels one wave of blocks shares (blocks start in row-major order).

    The blocks of a wave walk K together, so L2 needs to hold only the k-slices they are working on:
    ``(distinct rows·BM + distinct columns·BN)·BK·s·stages`` bytes. A wave whose footprint fits reads
    each distinct panel once (``unique`` bytes); one that does not keeps the fraction ``L2 / footprint``
    and reads ``unique + (own - unique)·(1 - L2/footprint)``, where ``own`` is what its blocks would read
    with no sharing (labsim's interpolation). Counted in closed form (see the module docstring)."""
    g = _Grid(m, n, k, t, gm, gn, s, l2_bytes)
    cc, blocks = concurrent, gm * gn
    last_row = (gm - 1) * gn                      # the first block of the last row of tiles
    w1 = last_row // cc                           # waves wholly before the last row
    w2 = -(-last_row // cc)                       # the first wave that starts inside the last row
    wf = blocks // cc                             # full waves
    total = g.full_waves(0, min(w1, wf), cc, t.bm)
    if w1 < w2 and w1 < wf:                       # the wave that crosses into the last row
        total += g.one(w1 * cc, (w1 + 1) * cc)
    total += g.full_waves(max(w2, w1), wf, cc, g.rl) if w2 <= wf else 0.0
    if blocks % cc:                               # the last, partial wave
        total += g.one(wf * cc, blocks)
    return int(round(total)) + s_out * m * n


__all__ = ["floor_sum", "wave_traffic"]
