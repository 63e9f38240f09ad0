"""Bad input gives a labsim error whose message names the problem, never a raw NumPy message."""
from __future__ import annotations

import re

import numpy as np
import pytest

import labsim as ls
import labsim.nn as lnn
import labsim.numpy as lnp

S = ls.ShapeDtype

# messages NumPy itself would print: none may reach the user
RAW_NUMPY = re.compile(r"operands could not be broadcast|shape mismatch: objects|cannot reshape array of size|"
                       r"invalid literal for int|unexpected keyword argument|matmul: Input operand|"
                       r"einstein sum subscripts|setting an array element with a sequence")


def raises(exc, f, *needles):
    """``f()`` raises ``exc``; its message contains every needle and no raw NumPy wording."""
    with pytest.raises(exc) as info:
        f()
    msg = str(info.value)
    for n in needles:
        assert n in msg, f"{n!r} not in {msg!r}"
    assert not RAW_NUMPY.search(msg), msg
    return msg


# ----------------------------------------------------------------------------------------------
# shape mismatches name the op and both shapes, traced and eager
@pytest.mark.parametrize("mode", ["traced", "eager"])
def test_add_shape_mismatch(mode):
    f = lambda a, b: a + b if mode == "traced" else lnp.add(a, b)
    call = (lambda: ls.trace(f, S((3, 4)), S((5,)))) if mode == "traced" else \
        (lambda: lnp.add(np.ones((3, 4), np.float32), np.ones(5, np.float32)))
    raises(ls.ShapeError, call, "add", "(3, 4)", "(5,)")


def test_binary_ops_name_themselves():
    for name in ["subtract", "multiply", "maximum", "minimum"]:
        raises(ls.ShapeError, lambda: ls.trace(getattr(lnp, name), S((2, 3)), S((4,))), name, "(2, 3)", "(4,)")


def test_dot_shape_mismatch():
    raises(ls.ShapeError, lambda: ls.trace(lnp.dot, S((4, 5)), S((6, 3))), "dot", "(4, 5)", "(6, 3)")
    raises(ls.ShapeError, lambda: lnp.dot(np.ones((4, 5)), np.ones((6, 3))), "dot", "(4, 5)", "(6, 3)")


def test_matmul_shape_mismatch():
    raises(ls.ShapeError, lambda: ls.trace(lambda a, b: a @ b, S((4, 5)), S((6, 3))), "matmul", "(4, 5)", "(6, 3)")
    raises(ls.ShapeError, lambda: ls.trace(lnp.matmul, S((2, 4, 5)), S((3, 5, 3))), "matmul", "(2, 4, 5)", "(3, 5, 3)")
    raises(ls.ShapeError, lambda: ls.trace(lnp.matmul, S(()), S((3,))), "matmul", "scalar")


def test_einsum_shape_mismatch():
    raises(ls.ShapeError, lambda: ls.trace(lambda a, b: lnp.einsum("ij,jk->ik", a, b), S((2, 3)), S((4, 5))),
           "einsum", "'j'", "(2, 3)", "(4, 5)")


def test_reshape_size_mismatch():
    raises(ls.ShapeError, lambda: ls.trace(lambda a: lnp.reshape(a, (7,)), S((2, 3))), "reshape", "6", "7")
    raises(ls.ShapeError, lambda: ls.trace(lambda a: a.reshape(4, -1), S((2, 3))), "reshape", "(2, 3)", "(4, -1)")
    raises(ls.ShapeError, lambda: lnp.reshape(np.ones((2, 3)), (5,)), "reshape", "(5,)")


def test_where_broadcast_mismatch():
    raises(ls.ShapeError, lambda: ls.trace(lambda x, y: lnp.where(x > 0, x, y), S((2, 3)), S((4,))),
           "where", "(2, 3)", "(4,)")


def test_other_shape_errors():
    raises(ls.ShapeError, lambda: ls.trace(lambda x: lnp.sum(x, axis=3), S((2, 3))), "axis 3", "rank 2")
    raises(ls.ShapeError, lambda: ls.trace(lambda x: lnp.transpose(x, (0, 0)), S((2, 3))), "transpose", "(0, 0)")
    raises(ls.ShapeError, lambda: lnp.broadcast_to(np.ones(3), (2, 4)), "broadcast_to", "(3,)", "(2, 4)")
    raises(ls.ShapeError, lambda: ls.trace(lambda x: lnn.softmax(x, axis=2), S((2, 3))), "softmax", "axis 2")
    raises(IndexError, lambda: ls.trace(lambda x: x[5], S((2, 3))), "index 5", "size 2")


# ----------------------------------------------------------------------------------------------
# dtypes
def test_unknown_dtype_names_it():
    msg = raises(ls.DtypeError, lambda: S((2,), "float17"), "float17")
    assert "float32" in msg  # and says what labsim knows
    raises(ls.DtypeError, lambda: lnp.astype(np.ones(2), "float17"), "float17")
    raises((ls.DtypeError, ls.TraceError), lambda: ls.trace(lambda x: x, np.ones(2, complex)), "argument 0",
           "complex128")


def test_dtype_error_is_both_type_and_value_error():
    assert issubclass(ls.DtypeError, TypeError) and issubclass(ls.DtypeError, ValueError)


# ----------------------------------------------------------------------------------------------
# wrong number of arguments
def test_trace_argument_count():
    raises(TypeError, lambda: ls.trace(lambda a, b: a + b, S((2,))), "1 abstract argument", "'b'")
    raises(TypeError, lambda: ls.trace(lambda a: a, S((2,)), S((2,))), "2 abstract argument", "too many")


def test_evaluate_argument_count():
    g = ls.trace(lambda a, b: a + b, S((2,)), S((2,)))
    raises(TypeError, lambda: ls.evaluate(g, np.ones(2)), "takes 2 argument(s), got 1", "a: f32[2]", "b: f32[2]")
    raises(TypeError, lambda: ls.evaluate(g, np.ones(2), np.ones(2), np.ones(2)), "got 3")


def test_evaluate_wrong_shape_and_dtype():
    g = ls.trace(lambda a, b: a + b, S((2,)), S((2,)))
    raises(ls.ShapeError, lambda: ls.evaluate(g, np.ones(2), np.ones(3)), "argument 1 (b)", "(3,)", "f32[2]")
    raises(ls.TraceError, lambda: ls.evaluate(g, np.ones(2, complex), np.ones(2)), "argument 0 (a)", "complex128")
    raises(ls.TraceError, lambda: ls.evaluate(g, "ab", np.ones(2)), "argument 0 (a)", "str")


# ----------------------------------------------------------------------------------------------
# values tracing cannot handle
def test_string_argument_to_trace():
    raises(ls.TraceError, lambda: ls.trace(lambda a: a, "hello"), "argument 0 (a)", "str", "ShapeDtype")
    raises(ls.TraceError, lambda: ls.trace(lambda a: a, 3.0), "argument 0 (a)", "float")


def test_python_if_on_a_traced_value():
    def f(x):
        if x > 0:
            return x
        return -x

    raises(ls.TraceError, lambda: ls.trace(f, S((2,))), "pred[2]", "concrete value", "lnp.where")


@pytest.mark.parametrize("what, f", [
    ("float()", lambda x: float(x)), ("int()", lambda x: int(x)), ("an index", lambda x: [1, 2, 3][x]),
    ("while", lambda x: [x for _ in iter(lambda: bool(x), False)]),
])
def test_concretisation_is_refused(what, f):
    raises(ls.TraceError, lambda: ls.trace(f, S((), "int32")), "concrete value")


def test_returning_a_non_array_leaf_or_none():
    raises(ls.TraceError, lambda: ls.trace(lambda x: {"a": x, "b": "text"}, S((2,))), "returned str", "output 1")
    raises(ls.TraceError, lambda: ls.trace(lambda x: None, S((2,))), "returned NoneType")
    raises(ls.TraceError, lambda: ls.trace(lambda x: (), S((2,))), "no values")


def test_passing_a_list_to_lnp():
    raises(ls.TraceError, lambda: lnp.exp([1.0, 2.0]), "exp", "list", "lnp.asarray")
    raises(ls.TraceError, lambda: ls.trace(lambda x: lnp.exp([1.0, 2.0]) + x, S((2,))), "exp", "list")
    raises(ls.TraceError, lambda: ls.trace(lambda x: lnp.add(x, [1.0, 2.0]), S((2,))), "add", "list")


def test_strings_as_operands():
    raises(ls.TraceError, lambda: ls.trace(lambda x: x + "a", S((2,))), "add", "str")
    raises(ls.TraceError, lambda: lnp.tanh("a"), "tanh", "str")


def test_numpy_functions_on_traced_values():
    raises(ls.TraceError, lambda: ls.trace(lambda x: np.exp(x), S((2,))), "f32[2]", "concrete value")
    raises(ls.TraceError, lambda: ls.trace(lambda x: np.sum(x), S((2,))), "numpy.sum", "lnp.sum")


def test_leaked_tracer():
    leaked = []
    ls.trace(lambda x: leaked.append(x) or x, S((2,)))
    raises(ls.TraceError, lambda: ls.trace(lambda y: y + leaked[0], S((2,))), "different traces")


# ----------------------------------------------------------------------------------------------
# grad, hardware, figures
def test_grad_of_a_non_scalar_function():
    raises(TypeError, lambda: ls.grad(lambda x: x * 2.0)(np.ones(3, np.float32)), "one scalar output", "f32[3]")
    raises(TypeError, lambda: ls.grad(lambda x: lnp.sum(x))(np.ones(3, np.int32)), "int32", "not a float")
    raises(ls.TraceError, lambda: ls.grad(lambda x: x)("a"), "argument 0", "str")


def test_unknown_chip_names_it_and_the_presets():
    prog = ls.compile(ls.trace(lambda x: x + 1.0, S((2,))))
    msg = raises(KeyError, lambda: ls.estimate(prog, "H900"), "H900")
    for name in ls.hardware.PRESETS:
        assert name in msg


def test_unknown_op_names_it():
    raises(KeyError, lambda: ls.ops.get("frobnicate"), "frobnicate")


def test_interactive_needs_controls_and_valid_defaults():
    pytest.importorskip("plotly")
    import labsim.viz as lv
    raises(ValueError, lambda: lv.interactive(lambda n: None, controls={}, alt="x"), "at least one control")
    raises(ValueError, lambda: lv.interactive(lambda n: None, controls={"n": []}, alt="x"), "'n'", "no values")
    raises(ValueError, lambda: lv.interactive(lambda n: None, controls={"n": [1, 2]}, alt="x", defaults={"n": 3}),
           "n=3")
    raises(ValueError, lambda: lv.show(object(), alt=""), "alt text")
