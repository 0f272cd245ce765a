"""Differential fuzzing of indexing against numpy: random keys mixing ints, slices, None,
Ellipsis, integer arrays (host or device, broadcast against each other, negative, now and
then out of range) and boolean masks, read and written through strided views; take,
take_along_axis, nonzero and compress. Where numpy raises IndexError, gpuarr must too."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import gpuarr as ga

from .support import assert_matches, fuzz_settings, layouts
from .support import shapes as shapes_st

DTYPES = ["bool", "uint8", "int32", "float64"]  # itemsizes 1, 4 and 8


def _index_array(draw, n, shape, ctx, allow_oob):
    """Integer indices into an axis of length n (negative too), host or device."""
    lo, hi = (-n - 2, n + 1) if allow_oob else (-n, n - 1)
    if n == 0 and not allow_oob:
        return np.zeros((0,), np.int64)
    size = int(np.prod(shape))
    idx = np.array(draw(st.lists(st.integers(lo, hi), min_size=size, max_size=size)),
                   dtype=draw(st.sampled_from([np.int64, np.int32]))).reshape(shape)
    if draw(st.booleans()):
        return ga.asarray(idx, context=ctx)
    return idx if draw(st.booleans()) else idx.tolist()


def _as_host(k):
    return k.get() if isinstance(k, ga.GpuArray) else k


@st.composite
def _keys(draw, shape, ctx):
    """A numpy index of `shape`: per axis a slice, an int or an index array (all index
    arrays broadcast to one drawn shape), or one boolean mask over leading axes."""
    ndim = len(shape)
    allow_oob = draw(st.integers(0, 9)) == 0
    if ndim and draw(st.integers(0, 4)) == 0:
        k = draw(st.integers(1, ndim))
        mask = np.array(draw(st.lists(st.booleans(), min_size=int(np.prod(shape[:k])),
                                      max_size=int(np.prod(shape[:k]))))).reshape(shape[:k])
        rest = [slice(None, None, draw(st.sampled_from([1, -1, 2]))) for _ in shape[k:]]
        return (ga.asarray(mask, context=ctx) if draw(st.booleans()) else mask, *rest)
    ishape = draw(st.lists(st.integers(0, 3), max_size=2).map(tuple))
    key = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "slice", "int", "array", "array"]))
        if kind == "int" and (n or allow_oob):
            key.append(draw(st.integers(-n - allow_oob, n - 1 + allow_oob)))
        elif kind == "array":
            sub = tuple(1 if draw(st.booleans()) else s for s in ishape)
            key.append(_index_array(draw, n, sub, ctx, allow_oob))
        else:
            key.append(slice(draw(st.none() | st.integers(-n - 1, n)),
                             draw(st.none() | st.integers(-n - 1, n)),
                             draw(st.sampled_from([None, 1, 2, -1, -3]))))
    if ndim and draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), None)
    if ndim > 1 and draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(key) - 1))
        key[at:at + 1] = [Ellipsis]
    return tuple(key)


def _numpy_or_error(fn):
    try:
        return fn(), None
    except IndexError as e:
        return None, e


@given(data=st.data())
@fuzz_settings(weight=1.5)
def test_getitem_and_setitem_match_numpy(ctx, data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = data.draw(shapes_st(max_dims=3, max_side=5), label="shape")
    host, dev = data.draw(layouts(shape, dtype, ctx), label="x")
    key = data.draw(_keys(shape, ctx), label="key")
    hkey = tuple(_as_host(k) for k in key)
    want, err = _numpy_or_error(lambda: host[hkey])
    if err is not None:
        try:
            dev[key]
        except IndexError:
            return
        raise AssertionError(f"numpy raised {err!r}; gpuarr did not")
    assert_matches(dev[key], want, what=f"x[{key!r}]")
    # setitem with a scalar or an array broadcast to the result; duplicate positions would
    # leave numpy's last write against the device's any write, so only unique ones.
    flat = np.arange(host.size).reshape(host.shape)[hkey]
    if np.unique(flat).size != np.size(flat):
        return
    value = host.dtype.type(1) if data.draw(st.booleans()) else np.flip(want).copy()
    h2, d2 = host.copy(), dev.copy()
    h2[hkey] = value
    d2[key] = value if data.draw(st.booleans()) else ga.asarray(value, context=ctx)
    assert_matches(d2, h2, what=f"x[{key!r}] = ...")


@given(data=st.data())
@fuzz_settings(weight=0.6)
def test_take_nonzero_compress_match_numpy(ctx, data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = tuple(data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=3), label="shape"))
    host, dev = data.draw(layouts(shape, dtype, ctx), label="x")
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1), label="axis")
    n = host.size if axis is None else shape[axis]
    if n:
        ishape = data.draw(st.lists(st.integers(0, 3), max_size=2).map(tuple), label="ishape")
        idx = np.asarray(_as_host(_index_array(data.draw, n, ishape, ctx, False)), np.int64)
        assert_matches(ga.take(dev, ga.asarray(idx, context=ctx), axis=axis),
                       np.take(host, idx, axis=axis), what="take")
        if axis is not None:
            along = np.asarray(data.draw(st.lists(st.integers(-n, n - 1), min_size=host.size,
                                                  max_size=host.size)),
                               np.int64).reshape(shape)
            assert_matches(ga.take_along_axis(dev, ga.asarray(along, context=ctx), axis),
                           np.take_along_axis(host, along, axis), what="take_along_axis")
    for g, w in zip(ga.nonzero(dev), np.nonzero(host)):
        assert_matches(g, w, what="nonzero")
    cond = host.reshape(-1)[: data.draw(st.integers(0, host.size), label="len")] != 0
    assert_matches(ga.compress(ga.asarray(cond, context=ctx), dev, axis=None),
                   np.compress(cond, host, axis=None), what="compress")
