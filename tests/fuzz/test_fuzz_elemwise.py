"""Differential fuzzing of elementwise work against numpy: random expressions (depth <= 2)
of ufuncs and operators over random shapes (0-d, 0-size, broadcasting), dtypes, strided and
offset views, Python scalars, in-place updates of overlapping views, and one fused kernel.

Exact ops may nest; a transcendental function, a division or a comparison only comes last,
on an exact subtree, so that every result has a known bound (see support.py). Operands of
one expression share a dtype (Python scalars are weak), which keeps the kernels built few.
"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import gpuarr as ga

from .support import (
    DTYPES,
    assert_matches,
    broadcastable,
    elements,
    fuzz_settings,
    layouts,
    ulp_bound,
)
from .support import shapes as shapes_st

# Exact ops per dtype kind: (binary, unary); the root may also take ROOT's.
EXACT = {
    "b": (["add", "multiply", "logical_xor", "maximum"], ["logical_not"]),
    "u": (["add", "subtract", "multiply", "maximum", "bitwise_xor"], ["square"]),
    "i": (["add", "subtract", "multiply", "minimum", "bitwise_and"], ["negative", "absolute"]),
    "f": (["add", "subtract", "multiply", "maximum", "minimum"], ["negative", "absolute",
                                                                  "square"]),
}
ROOT = {
    "b": (["not_equal"], []),
    "u": (["less", "floor_divide"], []),
    "i": (["less", "floor_divide", "remainder", "right_shift"], []),
    "f": (["less", "true_divide", "equal"], ["exp", "log", "sin", "sqrt", "tanh", "isnan",
                                             "floor"]),
}
# Operators the expressions use instead of the ufunc now and then (the same kernels).
OPERATORS = {"add": "__add__", "subtract": "__sub__", "multiply": "__mul__", "less": "__lt__",
             "true_divide": "__truediv__", "floor_divide": "__floordiv__",
             "remainder": "__mod__", "bitwise_xor": "__xor__", "bitwise_and": "__and__",
             "negative": "__neg__", "absolute": "__abs__", "equal": "__eq__",
             "right_shift": "__rshift__"}


def _apply(name, args, use_operator):
    """(numpy result, gpuarr result) of ufunc `name` on (host, device) pairs."""
    hosts = [h for h, _ in args]
    devs = [d for _, d in args]
    with np.errstate(all="ignore"):
        want = getattr(np, name)(*hosts)
    op = OPERATORS.get(name)
    if use_operator and op and isinstance(devs[0], ga.GpuArray):
        got = getattr(devs[0], op)(*devs[1:])
    else:
        got = getattr(ga, name)(*devs)
    return want, got


@st.composite
def _leaf(draw, out_shape, dtype, ctx, kinds):
    """An operand: a strided view broadcasting to out_shape, or a Python scalar."""
    if draw(st.integers(0, 5)) == 0:
        value = draw(elements(dtype, **kinds))
        value = bool(value) if dtype == "bool" else \
            (int(value) if np.dtype(dtype).kind in "iu" else float(value))
        return value, value
    shape = draw(broadcastable(out_shape))
    return draw(layouts(shape, dtype, ctx, **kinds))


def _with_array(draw, args, out_shape, dtype, ctx, kinds):
    """Make sure at least one operand is an array (numpy and gpuarr differ on scalars)."""
    if not any(isinstance(d, ga.GpuArray) for _, d in args):
        args[0] = draw(layouts(out_shape, dtype, ctx, **kinds))
    return args


@st.composite
def _exact(draw, out_shape, dtype, ctx, depth, kinds):
    """(host, device) of an exact expression of `depth` ops at most."""
    kind = np.dtype(dtype).kind
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(_leaf(out_shape, dtype, ctx, kinds))
    binary, unary = EXACT[kind]
    name = draw(st.sampled_from(binary + unary))
    nin = 2 if name in binary else 1
    args = [draw(_exact(out_shape, dtype, ctx, depth - 1, kinds)) for _ in range(nin)]
    args = _with_array(draw, args, out_shape, dtype, ctx, kinds)
    want, got = _apply(name, args, draw(st.booleans()))
    return want, got


@given(data=st.data())
@fuzz_settings(weight=2.5)
def test_expressions_match_numpy(ctx, data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    kind = np.dtype(dtype).kind
    out_shape = data.draw(shapes_st(), label="shape")
    kinds = {"small": data.draw(st.integers(0, 3), label="small?") == 0}
    binary, unary = EXACT[kind]
    root_binary, root_unary = ROOT[kind]
    name = data.draw(st.sampled_from(binary + unary + root_binary + root_unary), label="root")
    nin = 2 if name in binary + root_binary else 1
    depth = data.draw(st.integers(0, 1), label="depth")
    args = [data.draw(_exact(out_shape, dtype, ctx, depth, kinds)) for _ in range(nin)]
    args = _with_array(data.draw, args, out_shape, dtype, ctx, kinds)
    want, got = _apply(name, args, data.draw(st.booleans(), label="operator?"))
    ulps = ulp_bound(name, dtype, ctx) if kind == "f" else 0
    assert_matches(got, want, ulps, what=name)


@given(data=st.data())
@fuzz_settings(weight=0.6)
def test_out_and_inplace_on_overlapping_views(ctx, data):
    """`out=` a strided view, and `x op= y` where y overlaps x with other strides: numpy's
    result is as if the inputs were read before any output was written."""
    dtype = data.draw(st.sampled_from(["int32", "float32"]), label="dtype")
    name = data.draw(st.sampled_from(["add", "multiply", "subtract"]), label="op")
    n = data.draw(st.integers(1, 12), label="n")
    base = data.draw(layouts((n + 3,), dtype, ctx, small=True), label="base")
    host, dev = base[0].copy(), base[1].copy()
    s1 = data.draw(st.sampled_from([slice(0, n), slice(3, n + 3), slice(n - 1, None, -1),
                                    slice(1, n + 1)]), label="out view")
    s2 = data.draw(st.sampled_from([slice(1, n + 1), slice(n + 2, 2, -1), slice(0, n),
                                    slice(2, n + 2)]), label="in view")
    inplace = data.draw(st.booleans(), label="operator?")
    with np.errstate(all="ignore"):
        if inplace:
            op = {"add": "__iadd__", "multiply": "__imul__", "subtract": "__isub__"}[name]
            getattr(host[s1], op)(host[s2])
            getattr(dev[s1], op)(dev[s2])
        else:
            getattr(np, name)(host[s2], host[::-1][:n], out=host[s1])
            getattr(ga, name)(dev[s2], dev[::-1][:n], out=dev[s1])
    assert_matches(dev, host, what=f"{name} into an overlapping view")


@ga.fuse
def _fused(a, b):
    return ga.maximum(a * b - a, b) + a, a - b


@given(data=st.data())
@fuzz_settings(weight=0.4)
def test_fused_kernel_on_random_layouts(ctx, data):
    """One fused kernel (two outputs) over broadcast, strided and offset operands."""
    dtype = data.draw(st.sampled_from(["float32", "int64"]), label="dtype")
    out_shape = data.draw(shapes_st(), label="shape")
    a = data.draw(layouts(data.draw(broadcastable(out_shape)), dtype, ctx), label="a")
    b = data.draw(layouts(out_shape, dtype, ctx), label="b")
    with np.errstate(all="ignore"):
        want = (np.maximum(a[0] * b[0] - a[0], b[0]) + a[0], a[0] - b[0])
    got = _fused(a[1], b[1])
    for g, w in zip(got, want):
        assert_matches(g, w, what="fused")
