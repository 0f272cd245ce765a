"""Differential fuzzing of matrix products against numpy: matmul/@/dot of small shapes
(vectors, matrices, batches broadcast against each other, 0-size dims) with transposed,
strided, negative-stride and offset operands; float32/float64 within the summation bound,
int32/int64 exactly (wrapping as numpy does)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import gpuarr as ga

from .support import assert_matches, assert_sum_close, fuzz_settings, layouts

DTYPES = ["float32", "float64", "int32", "int64"]


@st.composite
def _operand(draw, shape, dtype, ctx):
    """A (host, device) operand of `shape`, now and then a transposed view of its mirror."""
    if len(shape) >= 2 and draw(st.booleans()):
        h, d = draw(layouts((*shape[:-2], shape[-1], shape[-2]), dtype, ctx, small=True))
        return np.swapaxes(h, -1, -2), d.swapaxes(-1, -2)
    return draw(layouts(shape, dtype, ctx, small=True))


@given(data=st.data())
@fuzz_settings(weight=1.0)
def test_matmul_matches_numpy(ctx, data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    m, k, n = (data.draw(st.integers(0, 9), label=s) for s in "mkn")
    form = data.draw(st.sampled_from(["mm", "mm", "vm", "mv", "batch", "bcast"]), label="form")
    batch = data.draw(st.integers(1, 3), label="batch")
    a_shape, b_shape = {"mm": ((m, k), (k, n)), "vm": ((k,), (k, n)), "mv": ((m, k), (k,)),
                        "batch": ((batch, m, k), (batch, k, n)),
                        "bcast": ((1, m, k), (batch, 1, k, n))}[form]
    a = data.draw(_operand(a_shape, dtype, ctx), label="a")
    b = data.draw(_operand(b_shape, dtype, ctx), label="b")
    call = data.draw(st.sampled_from(["matmul", "operator", "dot"]), label="call")
    if call == "dot" and form in ("batch", "bcast"):
        call = "matmul"
    with np.errstate(all="ignore"):
        want = np.dot(a[0], b[0]) if call == "dot" else np.matmul(a[0], b[0])
    got = {"matmul": lambda: ga.matmul(a[1], b[1]), "operator": lambda: a[1] @ b[1],
           "dot": lambda: ga.dot(a[1], b[1])}[call]()
    if np.dtype(dtype).kind == "f":
        magnitude = np.matmul(np.abs(a[0]).astype(np.float64), np.abs(b[0]).astype(np.float64))
        assert_sum_close(got, want, magnitude, k, what=f"{call} {a_shape} x {b_shape}")
    else:
        assert_matches(got, want, what=f"{call} {a_shape} x {b_shape}")
