"""A clear error for every misuse (issue 8).

Each row of ``CASES`` is a call that misuses a public entry point, the labsim error it must raise, and a
regex its message must match: the message names the op or function, the argument and the limit. No
IndexError, KeyError, AttributeError or ZeroDivisionError, and no raw NumPy or Python wording, reaches
the user. Rows that need a change in ``labsim/frontend/numpy.py``, ``core/ops.py`` or ``core/dtypes.py``
(being reworked in the lnp semantics change) are strict xfails: they fail loudly once fixed.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import labsim as ls
import labsim.nn as lnn
import labsim.numpy as lnp
from labsim.models import counting, llm

S = ls.ShapeDtype
LNP = pytest.mark.xfail(strict=True, reason="lnp: being fixed in the semantics change")

# wording of errors that come from NumPy or Python itself, not from labsim
RAW = re.compile(r"zero-size array|no identity|out of bounds for array|list index out of range|"
                 r"int\(\) argument must be|object has no attribute|division by zero|modulo by zero|"
                 r"truth value of an array|numpy boolean|einstein sum|is not iterable|operands could not be broadcast|"
                 r"Python integer .* out of bounds|int too large to convert")


def x23():
    return np.ones((2, 3), np.float32)


def _prog():
    return ls.compile(ls.trace(lambda x: x * 2.0 + 1.0, S((8,))))


def _graph():
    return ls.trace(lambda x: x * 2.0 + 1.0, S((8,)))


def _trace():
    return ls.simulate(_prog(), "H100 SXM").trace


GPT2 = llm.PRESETS["GPT-2 small"]


def _plotly():
    return pytest.importorskip("plotly.graph_objects")


def _viz():
    _plotly()
    import labsim.viz as viz
    return viz


def _interactive(make_fig, **controls):
    return _viz().interactive(make_fig, controls=controls, alt="a figure")


def _bar(n):
    return _plotly().Figure(_plotly().Bar(x=[n], y=["n"], orientation="h"))


# (id, call, expected exception type, regex the message must match)
CASES = [
    # -- reductions and axes -------------------------------------------------------------------
    pytest.param(lambda: lnp.max(np.ones((0, 3), np.float32), axis=0), ls.ShapeError,
                 r"reduce_max.*(empty|size 0|zero)", id="max-over-empty-axis-eager"),
    pytest.param(lambda: ls.trace(lambda x: lnp.max(x, axis=0), S((0, 3))), ls.ShapeError,
                 r"reduce_max.*(empty|size 0|zero)", id="max-over-empty-axis-traced"),
    pytest.param(lambda: lnp.min(np.ones((0,), np.float32)), ls.ShapeError,
                 r"reduce_min.*(empty|size 0|zero)", id="min-of-empty-array"),
    pytest.param(lambda: lnp.sum(x23(), axis=(0, 0)), ls.ShapeError, r"reduce_sum: repeated axis in \(0, 0\)",
                 id="sum-duplicate-axes"),
    pytest.param(lambda: ls.trace(lambda x: lnp.sum(x, axis=(1, -1)), S((2, 3))), ls.ShapeError,
                 r"reduce_sum: repeated axis", id="sum-duplicate-axes-negative"),
    pytest.param(lambda: lnp.mean(np.float32(1.0), axis=0), ls.ShapeError, r"mean: axis 0 .*rank 0",
                 id="mean-of-scalar-axis-0"),
    pytest.param(lambda: lnp.swapaxes(np.float32(1.0), 0, 0), ls.ShapeError, r"swapaxes: axis 0 .*rank 0",
                 id="swapaxes-of-scalar"),
    pytest.param(lambda: lnp.transpose(x23(), ((0, 1),)), ls.ShapeError, r"transpose: axis must be one integer here, got tuple \(0, 1\)",
                 id="transpose-tuple-axis"),
    pytest.param(lambda: lnp.expand_dims(x23(), (0, 1)), ls.ShapeError, r"expand_dims.*axis.*\(0, 1\)",
                 id="expand_dims-tuple-axis"),
    pytest.param(lambda: lnn.softmax(x23(), axis=(0, 1)), ls.ShapeError, r"softmax: axis must be one int.*\(0, 1\)",
                 id="softmax-tuple-axis"),
    pytest.param(lambda: ls.trace(lambda x: lnn.standardize(x, axis=1.0), S((2, 3))), ls.ShapeError,
                 r"layer_norm: axis must be one int, got float", id="standardize-float-axis"),
    # -- einsum --------------------------------------------------------------------------------
    pytest.param(lambda: lnp.einsum("ij,jk", x23(), np.ones((3, 4), np.float32)), ValueError,
                 r"einsum: .*explicit output", id="einsum-no-arrow"),
    pytest.param(lambda: lnp.einsum("ij,jk->ik,l", x23(), np.ones((3, 4), np.float32)), ValueError,
                 r"einsum: .*'ij,jk->ik,l'.*one output", id="einsum-two-outputs"),
    pytest.param(lambda: lnp.einsum("i j->", x23()), ValueError, r"einsum: .*'i j->'.*letters",
                 id="einsum-spaces"),
    pytest.param(lambda: lnp.einsum("i1,1k->ik", x23(), np.ones((3, 4), np.float32)), ValueError,
                 r"einsum: .*'1'.*letters", id="einsum-non-letter"),
    pytest.param(lambda: lnp.einsum("ij,jk->ik", x23()), ValueError, r"einsum: 'ij,jk->ik' names 2 operand",
                 id="einsum-operand-count"),
    # -- indexing ------------------------------------------------------------------------------
    pytest.param(lambda: ls.trace(lambda x: x[np.array([0, 1])], S((2, 3))), ls.ShapeError,
                 r"an array or list as an index \(advanced indexing, a gather\) is not supported",
                 id="integer-array-index"),
    # -- dtypes and Python numbers ---------------------------------------------------------------
    pytest.param(lambda: lnp.subtract(np.ones(2, bool), True), TypeError, r"^subtract: .*(bool|pred)",
                 id="bool-subtract"),
    pytest.param(lambda: ls.trace(lambda x: -x, S((2,), "bool")), TypeError, r"^negate: .*(bool|pred)",
                 id="bool-negate-traced"),
    pytest.param(lambda: ls.trace(lambda x: x + 2**70, S((2,), "int32")), ls.DtypeError,
                 r"add: the Python int 2\*\*70 does not fit in int32 \(range -2147483648 to 2147483647\)",
                 id="huge-int-traced"),
    pytest.param(lambda: lnp.add(np.ones(2, np.int32), 2**70), ls.DtypeError,
                 r"add: the Python int 2\*\*70 does not fit in int32", id="huge-int-eager"),
    pytest.param(lambda: lnp.multiply(np.ones(2, np.int8), 300), ls.DtypeError,
                 r"multiply: the Python int 300 does not fit in int8 \(range -128 to 127\)", id="int-too-big-for-int8"),
    pytest.param(lambda: ls.trace(lambda x: x * 2**2000, S((2,))), ls.DtypeError,
                 r"multiply: the Python int 2\*\*2000 does not fit in float32", id="huge-int-on-float"),
    pytest.param(lambda: lnp.arange(0, 10, 0), ValueError, r"arange: step must not be 0", id="arange-step-0"),
    # -- the pipeline: the wrong object ------------------------------------------------------------
    pytest.param(lambda: ls.evaluate(_prog(), np.ones(8, np.float32)), TypeError,
                 r"evaluate: expected a Graph.*got a Program.*prog\.graph", id="evaluate-a-program"),
    pytest.param(lambda: ls.evaluate("graph"), TypeError, r"evaluate: expected a Graph.*got str",
                 id="evaluate-a-string"),
    pytest.param(lambda: ls.compile(_graph(), passes=["cse"]), TypeError,
                 r"compile: passes\[0\] is str 'cse', not a pass.*ls\.passes\.cse", id="compile-pass-by-name"),
    pytest.param(lambda: ls.compile(_prog()), TypeError, r"compile: expected a Graph.*got Program",
                 id="compile-a-program"),
    pytest.param(lambda: ls.estimate(_graph(), "H100 SXM"), TypeError,
                 r"estimate: prog must be a Program, got Graph.*ls\.compile", id="estimate-a-graph"),
    pytest.param(lambda: ls.kernel_cost(_prog(), "H100 SXM"), TypeError,
                 r"kernel_cost: kernel must be a Kernel, got Program.*prog\.kernels", id="kernel_cost-a-program"),
    pytest.param(lambda: ls.memory_check(_graph(), "H100 SXM"), TypeError,
                 r"memory_check: prog must be a Program, got Graph", id="memory_check-a-graph"),
    pytest.param(lambda: ls.simulate(_graph(), "H100 SXM"), TypeError,
                 r"simulate: prog must be a Program, got Graph", id="simulate-a-graph"),
    pytest.param(lambda: ls.simulate(_prog(), "H100 SXM", host_api_time=-1), ValueError,
                 r"simulate: host_api_time must be a finite number of seconds >= 0, got -1", id="negative-host_api_time"),
    pytest.param(lambda: ls.simulate(_prog(), "H100 SXM", host_api_time=math.nan), ValueError,
                 r"simulate: host_api_time .* got nan", id="nan-host_api_time"),
    # -- chips and models by name ----------------------------------------------------------------
    pytest.param(lambda: ls.estimate(_prog(), "H900"), ValueError, r"unknown chip 'H900'; presets are .*'H100 SXM'",
                 id="unknown-chip"),
    pytest.param(lambda: ls.simulate(_prog(), 42), TypeError, r"expected a chip name .* got int 42",
                 id="chip-not-a-name"),
    pytest.param(lambda: llm.param_count("GPT-5"), ValueError, r"unknown model 'GPT-5'; presets are .*'GPT-2 small'",
                 id="unknown-model"),
    # -- grad, vjp -------------------------------------------------------------------------------
    pytest.param(lambda: ls.grad(lambda x: lnp.sum(x), argnums=1)(np.ones(2, np.float32)), ValueError,
                 r"grad\(<lambda>\): argnums 1 is out of range for the 1 argument\(s\).*-1 to 0", id="argnums-too-big"),
    pytest.param(lambda: ls.grad(lambda x: lnp.sum(x), argnums=-2)(np.ones(2, np.float32)), ValueError,
                 r"argnums -2 is out of range", id="argnums-too-negative"),
    pytest.param(lambda: ls.grad(lambda x: lnp.sum(x), argnums="0"), TypeError,
                 r"grad\(<lambda>\): argnums must be an int or a non-empty tuple of ints, got str", id="argnums-str"),
    pytest.param(lambda: ls.grad(lambda x: lnp.sum(x), argnums=0.0), TypeError,
                 r"argnums must be an int .* got float 0\.0", id="argnums-float"),
    pytest.param(lambda: ls.grad(lambda x: lnp.sum(x), argnums=()), TypeError,
                 r"argnums must be an int or a non-empty tuple", id="argnums-empty"),
    pytest.param(lambda: ls.grad(lambda x: lnp.sum(lnp.astype(x, "float32")))(np.ones(3, np.int32)), TypeError,
                 r"grad\(<lambda>\) requires real-valued inputs.*argument 0 \(x\) is int32", id="grad-of-int-input"),
    pytest.param(lambda: ls.grad(lambda p: lnp.sum(lnp.astype(p["n"], "float32")))({"n": np.ones(2, bool)}), TypeError,
                 r"requires real-valued inputs.*argument 0 \(p\.n\) is bool", id="grad-of-bool-leaf"),
    pytest.param(lambda: ls.grad(3.0), TypeError, r"grad: expected a function .* got float", id="grad-of-non-function"),
    pytest.param(lambda: ls.vjp(lambda x: x * 2.0, np.ones(3, np.float32))[1](np.ones(4, np.float32)), ValueError,
                 r"vjp\(<lambda>\): cotangent 0 has shape \(4,\), the output is f32\[3\]", id="vjp-cotangent-shape"),
    pytest.param(lambda: ls.vjp(lambda x: x * 2.0, np.ones(3, np.float32))[1]("a"), ls.TraceError,
                 r"vjp\(<lambda>\): cotangent 0 is str 'a', not an array", id="vjp-cotangent-str"),
    # -- transformer accounting ------------------------------------------------------------------
    pytest.param(lambda: GPT2.with_(n_heads=0), ValueError, r"'GPT-2 small': n_heads must be at least 1, got 0",
                 id="n_heads-0"),
    pytest.param(lambda: GPT2.with_(n_kv_heads=0), ValueError,
                 r"n_kv_heads must be at least 1, got 0 \(None means as many as n_heads\)", id="n_kv_heads-0"),
    pytest.param(lambda: GPT2.with_(d_model=768.5), ValueError, r"d_model must be a positive whole number, got float 768\.5",
                 id="fractional-d_model"),
    pytest.param(lambda: GPT2.with_(n_layers=12.0), ValueError, r"n_layers must be a positive whole number, got float",
                 id="float-n_layers"),
    pytest.param(lambda: GPT2.with_(n_layers=-1), ValueError, r"n_layers must be at least 1, got -1", id="negative-layers"),
    pytest.param(lambda: GPT2.with_(d_ff=0), ValueError, r"d_ff must be at least 1, got 0", id="zero-width"),
    pytest.param(lambda: GPT2.with_(vocab=True), ValueError, r"vocab must be a positive whole number, got bool",
                 id="bool-vocab"),
    pytest.param(lambda: GPT2.with_(n_kv_heads=5), ValueError, r"n_heads 12 is not a multiple of n_kv_heads 5",
                 id="n_kv_heads-not-a-divisor"),
    pytest.param(lambda: llm.layer_fn(GPT2, "mlpp"), ValueError,
                 r"layer_fn: unknown layer part 'mlpp'; parts are \['attention', 'mlp', 'block'\]", id="unknown-part"),
    pytest.param(lambda: llm.param_specs(GPT2, "mlpp"), ValueError, r"param_specs: unknown layer part 'mlpp'",
                 id="unknown-part-specs"),
    pytest.param(lambda: llm.flops_per_token(GPT2, -5), ValueError, r"flops_per_token: seq_len must be at least 1, got -5",
                 id="negative-seq_len"),
    pytest.param(lambda: llm.flops_per_token(GPT2, 0), ValueError, r"seq_len must be at least 1, got 0",
                 id="zero-seq_len"),
    pytest.param(lambda: llm.flops_per_token(GPT2, 2.5), ValueError, r"seq_len must be a positive whole number, got float",
                 id="fractional-seq_len"),
    pytest.param(lambda: llm.attention_flops_per_token(GPT2, -1), ValueError,
                 r"attention_flops_per_token: seq_len must be at least 1", id="negative-seq_len-attention"),
    pytest.param(lambda: llm.flops_split(GPT2, -1), ValueError, r"flops_split: seq_len must be at least 1",
                 id="negative-seq_len-split"),
    pytest.param(lambda: counting.matmul_intensity(0, 4, 4), ValueError, r"matmul_intensity: m must be at least 1, got 0",
                 id="matmul_intensity-zero"),
    pytest.param(lambda: counting.matmul_intensity(4, -4, 4), ValueError, r"matmul_intensity: n must be at least 1",
                 id="matmul_intensity-negative"),
    pytest.param(lambda: counting.blas(1, -8), ValueError, r"blas: n must be at least 1, got -8", id="blas-negative-n"),
    pytest.param(lambda: counting.blas(4, 8), ValueError, r"blas: BLAS has levels 1, 2 and 3, not 4", id="blas-level-4"),
    # -- figures ---------------------------------------------------------------------------------
    pytest.param(lambda: _viz().timeline(_prog()), TypeError, r"timeline: trace must be a Trace, got Program.*\.trace",
                 id="timeline-of-a-program"),
    pytest.param(lambda: _viz().timeline(_trace(), max_time=0), ValueError,
                 r"timeline: max_time must be a finite number > 0, got 0", id="timeline-max_time-0"),
    pytest.param(lambda: _viz().timeline(_trace(), max_time=-1e-3), ValueError, r"max_time .* got -0\.001",
                 id="timeline-max_time-negative"),
    pytest.param(lambda: _viz().timeline(_trace(), max_time=math.nan), ValueError, r"max_time .* got nan",
                 id="timeline-max_time-nan"),
    pytest.param(lambda: _viz().draw_graph(42), TypeError,
                 r"draw_graph: expected a Graph \(from ls\.trace\) or a Program .* got int 42", id="draw_graph-42"),
    pytest.param(lambda: _viz().buffer_chart(_prog()), TypeError,
                 r"buffer_chart: plan must be a BufferPlan, got Program.*prog\.buffers", id="buffer_chart-of-a-program"),
    pytest.param(lambda: _viz().roofline("H900"), ValueError, r"unknown chip 'H900'", id="roofline-unknown-chip"),
    pytest.param(lambda: _viz().roofline("H100 SXM", xrange=(-1, 10)), ValueError,
                 r"roofline: xrange low end must be a finite number > 0, got -1", id="roofline-negative-range"),
    pytest.param(lambda: _viz().roofline("H100 SXM", xrange=(100, 1)), ValueError,
                 r"roofline: xrange must run from low to high, got \(100, 1\)", id="roofline-reversed-range"),
    pytest.param(lambda: _viz().roofline("H100 SXM", xrange=(1, math.nan)), ValueError,
                 r"xrange high end .* got nan", id="roofline-nan-range"),
    pytest.param(lambda: _viz().roofline("H100 SXM", [("gemm", math.nan, None)]), ValueError,
                 r"roofline: the intensity of point 'gemm' must be a finite number > 0, got nan", id="roofline-nan-point"),
    pytest.param(lambda: _viz().roofline("H100 SXM", [("gemm", 10.0, -1.0)]), ValueError,
                 r"the FLOP/s of point 'gemm' must be a finite number > 0", id="roofline-negative-flops"),
    pytest.param(lambda: _viz().bar_compare(["a", "b"], [1.0]), ValueError,
                 r"bar_compare: 2 labels but 1 values", id="bar_compare-lengths"),
    pytest.param(lambda: _viz().bar_compare(["a"], [math.nan]), ValueError,
                 r"bar_compare: the value for 'a' is nan, not a finite number", id="bar_compare-nan"),
    pytest.param(lambda: _viz().bar_compare(["a"], [0.0], log=True), ValueError,
                 r"bar_compare: the value for 'a' is 0\.0; a log axis needs values > 0", id="bar_compare-log-zero"),
    pytest.param(lambda: _viz().bar_compare([], []), ValueError, r"bar_compare: no bars to draw", id="bar_compare-empty"),
    pytest.param(lambda: _viz().show(42, alt="x"), TypeError, r"show: expected a Plotly figure, got int 42",
                 id="show-not-a-figure"),
    pytest.param(lambda: _viz().show(_plotly().Figure(), alt="x"), ValueError, r"show: the figure is empty",
                 id="show-empty-figure"),
    pytest.param(lambda: _viz().show(_plotly().Figure(_plotly().Scatter(x=[math.nan], y=[math.nan])), alt="x"),
                 ValueError, r"show: every trace.s data is NaN or infinite", id="show-nan-figure"),
    pytest.param(lambda: _interactive(_bar, n=[1.0, math.nan]), ValueError,
                 r"control 'n' has the value nan; a control's values must be finite", id="interactive-nan-control"),
    pytest.param(lambda: _interactive(_bar, n=[1, 2, 2]), ValueError, r"control 'n' repeats a value",
                 id="interactive-repeated-value"),
    pytest.param(lambda: _interactive(lambda n: None, n=[1, 2]), ValueError,
                 r"interactive: make_fig\(n=2\) gave no figure to draw: expected a Plotly figure, got NoneType",
                 id="interactive-make_fig-returns-none"),
]


@pytest.mark.parametrize("call, exc, pattern", CASES)
def test_misuse_gives_a_clear_error(call, exc, pattern):
    with pytest.raises(exc) as info:
        call()
    msg = str(info.value)
    assert re.search(pattern, msg), f"{pattern!r} does not match {msg!r}"
    assert not RAW.search(msg), f"raw NumPy/Python wording reaches the user: {msg!r}"
    for banned in (IndexError, KeyError, AttributeError, ZeroDivisionError):
        if isinstance(info.value, banned):
            # a labsim error may also be a KeyError for old `except KeyError` code, but it prints as a message
            assert isinstance(info.value, (ValueError, TypeError)), f"{type(info.value).__name__}: {msg}"
            assert not msg.startswith("'"), f"printed as a bare KeyError: {msg}"


def test_the_table_expects_no_python_lookup_errors():
    """Every expected exception is a labsim error, a ValueError or a TypeError; none is a lookup error."""
    assert len(CASES) >= 60
    for case in CASES:
        exc = case.values[1]
        assert issubclass(exc, (ValueError, TypeError)), case.id
        assert not issubclass(exc, (IndexError, KeyError, AttributeError, ZeroDivisionError)), case.id
        assert isinstance(case.values[2], str) and case.values[2], case.id
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"


def test_a_refused_figure_value_keeps_the_last_good_figure():
    """A control value that would draw an impossible figure is refused; the live face keeps the last one."""
    viz = _viz()
    trace = _trace()
    fig = viz.interactive(lambda t: viz.timeline(trace, max_time=t), controls={"t": [-1.0, 1e-6, 2e-6]},
                          alt="timeline", defaults={"t": 1e-6})
    good = fig.figure
    assert len(good.data) > 0
    fig.update(t=-1.0)
    assert fig.error is not None and "max_time" in fig.error and "-1.0" in fig.error
    assert fig.figure is good and fig.params["t"] == 1e-6


def test_an_empty_or_nan_figure_is_never_drawn_by_the_live_face():
    go = _plotly()
    fig = _interactive(lambda n: go.Figure(go.Scatter(x=[n], y=[n if n < 3 else math.nan])), n=[1, 2, 3])
    before = fig.figure
    fig.update(n=3)
    assert fig.error is not None and "NaN" in fig.error and "n=3" in fig.error
    assert fig.figure is before


def test_unknown_names_are_value_errors_that_still_satisfy_except_keyerror():
    with pytest.raises(KeyError):  # old code catching KeyError around a preset lookup keeps working
        ls.hardware.get("H900")
    with pytest.raises(ValueError) as info:
        ls.hardware.get("H900")
    assert str(info.value).startswith("unknown chip 'H900'")


def test_small_python_ints_still_take_the_array_dtype():
    """The range check refuses only what does not fit: ints at the edge of the dtype still work."""
    out = lnp.add(np.zeros(2, np.int32), 2**31 - 1)
    assert out.dtype == np.int32 and int(out[0]) == 2**31 - 1
    out = lnp.add(np.zeros(2, np.uint8), 255)
    assert out.dtype == np.uint8 and int(out[0]) == 255
    g = ls.trace(lambda x: x * -128, S((2,), "int8"))
    assert g.out_avals[0].dtype == "int8"


def test_grad_still_accepts_an_integer_argument_left_out_of_argnums():
    f = lambda x, n: lnp.sum(x * lnp.astype(n, "float32"))
    x, n = np.ones(3, np.float32), np.full(3, 2, np.int32)
    np.testing.assert_allclose(ls.grad(f)(x, n), lnp.astype(n, "float32"))
    np.testing.assert_allclose(ls.grad(f, argnums=-2)(x, n), ls.grad(f, argnums=0)(x, n))


def test_index_updates_have_min_and_max_and_name_what_they_support():
    """``x.at[...].min/max`` exist (as in JAX); an unknown method is an AttributeError (what Python's
    ``getattr`` protocol needs) whose message lists the supported ones."""
    g = ls.trace(lambda x: x.at[0].max(1.0).at[1].min(-1.0), S((2, 3)))
    x = np.array([[0.5, 2.0, -3.0], [0.5, -2.0, 3.0]], np.float32)
    want = x.copy()
    want[0] = np.maximum(want[0], 1.0)
    want[1] = np.minimum(want[1], -1.0)
    np.testing.assert_array_equal(ls.evaluate(g, x), want)
    with pytest.raises(AttributeError, match=r"x\.at\[\.\.\.\] has no method 'power'; labsim supports .*\.min\(v\) and \.max\(v\)"):
        ls.trace(lambda x: x.at[0].power(1.0), S((2, 3)))


# ---- meta-test (issue 21): every misuse in the tables is refused with a labsim error ----------------------
# Rows that still raise a plain ValueError or TypeError from modules other helpers own (lnp, the compiler,
# grad, the figures): strict xfails, so each fails loudly once its module raises a labsim error; then drop it.
KNOWN_PLAIN: set[str] = set()


def _all_tables():
    from test_misuse_models import CASES as MODEL_CASES
    rows = []
    for case in list(CASES) + list(MODEL_CASES):
        marks = list(case.marks)
        if case.id in KNOWN_PLAIN:
            marks.append(pytest.mark.xfail(strict=True, reason="still a plain ValueError/TypeError"))
        rows.append(pytest.param(case.values[0], marks=marks, id=case.id))
    return rows


@pytest.mark.parametrize("call", _all_tables())
def test_every_misuse_raises_a_labsim_error(call):
    """No raw Python error type: whatever a misuse raises is a subclass of ls.LabsimError (which keeps
    ValueError, TypeError or MemoryError as a base, so old ``except`` clauses still work)."""
    try:
        call()
    except ls.LabsimError:
        return
    except Exception as e:  # noqa: BLE001 - the point is to catch what is not a labsim error
        pytest.fail(f"{type(e).__module__}.{type(e).__name__} is not a labsim error: {e}")
    pytest.fail("the misuse raised nothing")


def test_known_plain_errors_are_rows_of_the_table():
    assert KNOWN_PLAIN <= {c.id for c in CASES}
