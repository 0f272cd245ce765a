"""Differential fuzzing of reductions and scans against numpy: random ops, dtypes, axes
(None, negative, tuples), keepdims, strided/offset/F-order views, 0-d and 0-size inputs
(where numpy raises, gpuarr must raise the same builtin exception)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gpuarr as ga

from .support import DTYPES, assert_matches, assert_sum_close, fuzz_settings, layouts
from .support import shapes as shapes_st

# op -> (takes a tuple of axes, sums (float bound) rather than exact)
OPS = {"sum": (True, True), "max": (True, False), "min": (True, False),
       "argmax": (False, False), "argmin": (False, False), "any": (True, False),
       "all": (True, False), "mean": (True, True), "prod": (True, False),
       "cumsum": (False, True), "count_nonzero": (True, False)}


@st.composite
def _axis(draw, ndim, tuples):
    choice = draw(st.integers(0, 3))
    if choice == 0 or ndim == 0:
        return None
    if tuples and choice == 3 and ndim > 1:
        axes = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
        return tuple(a - ndim if draw(st.booleans()) else a for a in axes)
    return draw(st.integers(-ndim, ndim - 1))


def _reduced_terms(shape, axis):
    if axis is None:
        return int(np.prod(shape))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return int(np.prod([shape[a] for a in axes]))


@given(data=st.data())
@fuzz_settings(weight=2.0)
def test_reductions_match_numpy(ctx, data):
    op = data.draw(st.sampled_from(sorted(OPS)), label="op")
    tuples, summing = OPS[op]
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    if op == "prod" and dtype in ("float32", "float64"):
        dtype = "int64"  # float products of random values overflow; ints wrap exactly
    shape = data.draw(shapes_st(max_side=7), label="shape")
    finite = summing and dtype.startswith("float")
    host, dev = data.draw(layouts(shape, dtype, ctx, finite=finite,
                                  small=finite and data.draw(st.booleans())), label="x")
    axis = data.draw(_axis(len(shape), tuples), label="axis")
    kwargs = {"axis": axis}
    if op not in ("cumsum", "count_nonzero") and data.draw(st.booleans(), label="keepdims?"):
        kwargs["keepdims"] = True
    try:
        with np.errstate(all="ignore"):
            want = getattr(np, op)(host, **kwargs)
    except (ValueError, TypeError, IndexError) as e:
        builtin = type(e).__mro__[1] if type(e).__module__ != "builtins" else type(e)
        try:
            getattr(ga, op)(dev, **kwargs)
        except builtin:
            return
        raise AssertionError(f"numpy raised {e!r}, gpuarr did not") from None
    got = getattr(ga, op)(dev, **kwargs)
    if not isinstance(want, np.ndarray):
        want = np.asarray(want)
    if summing and want.dtype.kind == "f":
        with np.errstate(all="ignore"):
            magnitude = np.abs(host.astype(np.float64))
            if op == "cumsum":
                magnitude = np.cumsum(magnitude, axis=axis)
            else:
                magnitude = np.sum(magnitude, **kwargs)
                if op == "mean":
                    magnitude = magnitude / max(_reduced_terms(shape, axis), 1)
        assert_sum_close(got, want, magnitude, _reduced_terms(shape, axis), what=op)
    else:
        assert_matches(got, want, what=op)


@pytest.mark.parametrize("shape, axis", [((1, 0), 0), ((0, 3), 1), ((2, 0, 3), 2)])
def test_arg_extremum_with_an_empty_result(ctx, shape, axis):
    """Found by the long profile: an empty result along a non-empty axis is numpy's empty
    array, not an error (only an empty reduced axis raises)."""
    x = ga.zeros(shape, np.float32, context=ctx)
    for op in ("argmax", "argmin"):
        assert_matches(getattr(ga, op)(x, axis=axis), getattr(np, op)(np.zeros(shape), axis=axis))
