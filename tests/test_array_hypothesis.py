"""Property tests: chains of views on a GpuArray behave as the same chain on numpy.

Random shapes up to 4-d (size-0 and size-1 axes included), random chains of basic indexing
(ints, slices with any step, None, ...), transposes and reshapes; after every step the view
reads back as numpy's, and copies and assignments through the final view leave the base
exactly as numpy leaves its own.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpuarr as ga

DTYPES = [np.float32, np.int16]

SETTINGS = settings(
    deadline=None,
    max_examples=60,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

dims = st.sampled_from([0, 1, 1, 2, 3, 3, 4])
shapes = st.lists(dims, min_size=0, max_size=4).map(tuple)
steps = st.sampled_from([-3, -2, -1, 1, 2, 3])


def base_data(dtype, shape):
    n = int(np.prod(shape))
    if np.dtype(dtype).kind == "f":
        return (np.arange(n) * 1.5 - 3).astype(dtype).reshape(shape)
    return (np.arange(n) * 3 - 100).astype(dtype).reshape(shape)


def draw_component(data, n):
    """An int or a slice for an axis of length n."""
    if n > 0 and data.draw(st.booleans(), label="int?"):
        return data.draw(st.integers(-n, n - 1), label="int")
    bound = st.none() | st.integers(-n - 2, n + 2)
    return slice(data.draw(bound, label="start"), data.draw(bound, label="stop"),
                 data.draw(st.none() | steps, label="step"))


def draw_index(data, shape):
    ndim = len(shape)
    lead = data.draw(st.integers(0, ndim), label="lead")
    ellipsis = data.draw(st.booleans(), label="ellipsis?")
    trail = data.draw(st.integers(0, ndim - lead), label="trail") if ellipsis else 0
    key = [draw_component(data, shape[d]) for d in range(lead)]
    if ellipsis:
        key.append(Ellipsis)
    key += [draw_component(data, shape[d]) for d in range(ndim - trail, ndim)]
    for _ in range(data.draw(st.integers(0, 2), label="newaxes")):
        key.insert(data.draw(st.integers(0, len(key)), label="newaxis at"), None)
    return tuple(key)


def draw_newshape(data, shape):
    size = int(np.prod(shape))
    options = [(-1,), tuple(reversed(shape)), (*shape, 1), (1, *shape)]
    if len(shape) >= 2:
        k = data.draw(st.integers(0, len(shape) - 2), label="merge at")
        options.append((*shape[:k], shape[k] * shape[k + 1], *shape[k + 2:]))
    divisors = [d for d in range(2, size + 1) if size % d == 0 and size > 0]
    if divisors:
        d = data.draw(st.sampled_from(divisors), label="split")
        options.append((d, size // d))
        options.append((size // d, -1))
    return data.draw(st.sampled_from(options), label="newshape")


def significant_strides(a):
    return tuple(s for n, s in zip(a.shape, a.strides) if n > 1)


def compare(g, h, base_size):
    assert g.shape == h.shape
    assert g.dtype == h.dtype
    if base_size and h.size:  # numpy 2 gives arrays created empty all-zero strides
        assert significant_strides(g) == significant_strides(h)
    assert g.flags.c_contiguous == h.flags.c_contiguous
    assert g.flags.f_contiguous == h.flags.f_contiguous
    out = g.get()
    assert out.shape == h.shape and out.dtype == h.dtype
    np.testing.assert_array_equal(out, h)


def run_chain(data, ctx, dtype):
    """Draw a base and a chain of view operations; apply both; return the four arrays."""
    shape = data.draw(shapes, label="shape")
    h0 = base_data(dtype, shape)
    if data.draw(st.booleans(), label="fortran base?"):
        h0 = np.asfortranarray(h0)
    g0 = ga.asarray(h0, context=ctx)
    h, g = h0, g0
    for _ in range(data.draw(st.integers(1, 4), label="chain length")):
        op = data.draw(st.sampled_from(["index", "index", "transpose", "reshape", "T"]),
                       label="op")
        if op == "index":
            key = draw_index(data, h.shape)
            h, g = h[(*key, Ellipsis) if Ellipsis not in key else key], g[key]
        elif op == "transpose":
            axes = tuple(data.draw(st.permutations(range(h.ndim)), label="axes"))
            h, g = h.transpose(axes), g.transpose(axes)
        elif op == "T":
            h, g = h.T, g.T
        else:
            newshape = draw_newshape(data, h.shape)
            order = data.draw(st.sampled_from("CF"), label="order")
            h, g = h.reshape(newshape, order=order), g.reshape(newshape, order=order)
        compare(g, h, h0.size)
    return h0, g0, h, g


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@SETTINGS
@given(data=st.data())
def test_view_chains_read_like_numpy(ctx, dtype, data):
    h0, g0, h, g = run_chain(data, ctx, dtype)
    compare(g, h, h0.size)
    compare(g0, h0, h0.size)  # reading views never changes the base


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@SETTINGS
@given(data=st.data())
def test_copies_of_view_chains(ctx, dtype, data):
    h0, g0, h, g = run_chain(data, ctx, dtype)
    order = data.draw(st.sampled_from("CFA"), label="copy order")
    c, ref = g.copy(order), h.copy(order)
    compare(c, ref, 1)
    assert c.base is None and c.flags.owndata
    if c.size:
        c[...] = 0
        compare(g, h, h0.size)  # the copy is independent
        compare(g0, h0, h0.size)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@SETTINGS
@given(data=st.data())
def test_scalar_setitem_through_view_chains(ctx, dtype, data):
    h0, g0, h, g = run_chain(data, ctx, dtype)
    if np.dtype(dtype).kind == "f":
        value = data.draw(st.sampled_from([-1.5, 0.0, 7.25, 1e4, np.float32(-2.5)]),
                          label="value")
    else:
        value = data.draw(st.integers(-1000, 1000), label="value")
    g[...] = value
    h[...] = value
    compare(g, h, h0.size)
    compare(g0, h0, h0.size)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@SETTINGS
@given(data=st.data())
def test_overlapping_self_assignment_of_view_chains(ctx, dtype, data):
    h0, g0, h, g = run_chain(data, ctx, dtype)
    # the view assigned a flipped (and maybe shifted) view of itself: numpy's result is
    # as if the source were copied first
    key = tuple(slice(None, None, -1) if data.draw(st.booleans(), label="flip?") else
                slice(None) for _ in range(h.ndim))
    g[...] = g[key]
    h[...] = h[key]
    compare(g, h, h0.size)
    compare(g0, h0, h0.size)
    if h.ndim and h.shape[0] > 1:
        g[1:] = g[:-1]
        h[1:] = h[:-1]
        compare(g, h, h0.size)
        compare(g0, h0, h0.size)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@SETTINGS
@given(data=st.data())
def test_array_setitem_through_view_chains(ctx, dtype, data):
    h0, g0, h, g = run_chain(data, ctx, dtype)
    # a value broadcastable to the view: a suffix of its shape, some axes of length 1,
    # maybe with leading length-1 axes that numpy drops
    keep = data.draw(st.integers(0, h.ndim), label="value ndim")
    vshape = list(h.shape[h.ndim - keep:])
    for i in range(len(vshape)):
        if data.draw(st.booleans(), label="broadcast axis?"):
            vshape[i] = 1
    vshape = [1] * data.draw(st.integers(0, 2), label="leading ones") + vshape
    value = (-base_data(dtype, tuple(vshape)) - 7).astype(dtype)
    if data.draw(st.booleans(), label="value on the device?"):
        gvalue = ga.asarray(value, context=ctx)
        if data.draw(st.booleans(), label="strided value?") and value.ndim:
            gvalue = ga.asarray(value[..., ::-1].copy(), context=ctx)[..., ::-1]
        g[...] = gvalue
    else:
        g[...] = value
    h[...] = value
    compare(g, h, h0.size)
    compare(g0, h0, h0.size)
