"""``ls.evaluate`` (and ``Machine.call``, which runs it) frees each value after its last use: the peak
memory of a long chain is a few arrays, not one per op (issue 21). Measured with ``tracemalloc``."""
from __future__ import annotations

import tracemalloc

import numpy as np

import labsim as ls
import labsim.numpy as lnp
from labsim.core.trace import last_uses

STEPS = 80
SIDE = 512  # 1 MiB of float32: every intermediate kept alive would be 240 of them


def _chain(steps: int):
    def f(x):
        for _ in range(steps):
            x = lnp.tanh(x) * 1.5 + x
        return x

    return f


def _reference(x: np.ndarray, steps: int) -> np.ndarray:
    x = x.copy()
    for _ in range(steps):
        x = np.tanh(x) * np.float32(1.5) + x
    return x


def _peak(fn):
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        return out, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def _x():
    return np.random.default_rng(0).uniform(-1, 1, (SIDE, SIDE)).astype(np.float32)


def test_an_80_step_chain_peaks_at_a_few_arrays():
    x = _x()
    g = ls.trace(_chain(STEPS), ls.ShapeDtype(x.shape, "float32"))
    assert len(g.nodes) == 3 * STEPS
    y, peak = _peak(lambda: ls.evaluate(g, x))
    # kept alive, the 240 intermediates would take 240 arrays; freed after their last use, a few
    assert peak < 10 * x.nbytes, f"evaluate peaked at {peak / x.nbytes:.1f} arrays of {x.nbytes:,} B"
    np.testing.assert_allclose(y, _reference(x, STEPS), rtol=1e-5, atol=1e-5)


def test_machine_call_peaks_at_a_few_arrays():
    x = _x()
    g = ls.trace(_chain(STEPS), ls.ShapeDtype(x.shape, "float32"))
    m = ls.host.Machine()
    a = m.put(x)
    prog = ls.compile(g)
    out, peak = _peak(lambda: m.call(prog, a))
    assert peak < 10 * x.nbytes, f"Machine.call peaked at {peak / x.nbytes:.1f} arrays of {x.nbytes:,} B"
    np.testing.assert_allclose(m.get(out), _reference(x, STEPS), rtol=1e-5, atol=1e-5)


def test_the_peak_does_not_grow_with_the_chain():
    x = _x()[:256, :256].copy()
    peaks = []
    for steps in (10, 100):
        g = ls.trace(_chain(steps), ls.ShapeDtype(x.shape, "float32"))
        peaks.append(_peak(lambda: ls.evaluate(g, x))[1])
    assert peaks[1] < 1.5 * peaks[0] + x.nbytes, peaks


def test_last_uses_frees_each_value_once_and_never_an_output():
    def f(x, y):
        a = lnp.exp(x)
        b = a + y          # last use of y
        dead = lnp.tanh(x)  # read by no one: freed as soon as it is made  # noqa: F841
        c = b * b          # last use of b (read twice)
        return c, x + 1.0, a * 0.0 + c  # x is read up to here; a is read again here
    S = ls.ShapeDtype((3,), "float32")
    g = ls.trace(f, S, S)
    drops = last_uses(g)
    assert len(drops) == len(g.nodes)
    freed = [v for d in drops for v in d]
    assert len(freed) == len({id(v) for v in freed}), "a value is freed twice"
    outs = {id(o) for o in g.outputs}
    assert not outs & {id(v) for v in freed}, "an output was freed"
    defined_at = {id(n.out): i for i, n in enumerate(g.nodes)}
    for i, d in enumerate(drops):
        for v in d:
            readers = [j for j, n in enumerate(g.nodes) if any(a is v for a in n.in_vars)]
            assert (max(readers) if readers else defined_at[id(v)]) == i, (v, i, readers)
    x, y = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    c, x1, c2 = ls.evaluate(g, x, y)
    want = (np.exp(x) + y) ** 2
    np.testing.assert_allclose(c, want, rtol=1e-6)
    np.testing.assert_allclose(x1, x + 1)
    np.testing.assert_allclose(c2, want, rtol=1e-6)


def test_an_input_returned_as_an_output_survives():
    g = ls.trace(lambda x: (x, lnp.tanh(x)), ls.ShapeDtype((4,), "float32"))
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    a, b = ls.evaluate(g, x)
    np.testing.assert_array_equal(a, x)
    np.testing.assert_allclose(b, np.tanh(x), rtol=1e-6)
