"""Advanced indexing against numpy: integer and boolean arrays in x[key] and x[key] = v,
take, take_along_axis, put, nonzero, argwhere, flatnonzero, compress, where(cond).

One program (gpuarr/kernels/indexing.cl.mako) serves every dtype and layout, so the tests
sweep dtypes, layouts and keys freely; masks and indices come from the host or are uploaded
(no elementwise kernel), except where a test is about a device-made mask.
"""

import numpy as np
import pytest
from conftest import ALL_DTYPES

import gpuarr as ga
from gpuarr import indexing
from gpuarr.errors import IndexOutOfRange, ReadOnlyError


def data(dtype, shape, seed=0):
    """Distinct-where-possible values of `dtype`; floats include -0.0 where zeros fall."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    i = np.random.default_rng(seed).permutation(n)
    if dt == np.bool_:
        v = i % 3 == 1
    elif dt.kind in "iu":
        v = (i * 7 + 3) % 100 - (40 if dt.kind == "i" else 0)
    elif dt.kind == "f":
        v = i * 1.25 - 8.5
    else:
        v = (i * 1.25 - 8.5) + 1j * (3.0 - 0.5 * i)
    return np.asarray(v).astype(dt).reshape(shape)


def check(got, want):
    assert isinstance(got, ga.GpuArray)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got.get(), want)


# Layouts of one (4, 5, 6) base: the gather walks each through its strides and offset.
LAYOUTS = {
    "contiguous": lambda a: a,
    "transposed": lambda a: a.transpose(2, 0, 1),
    "reversed": lambda a: a[::-1, :, ::-2],
    "offset": lambda a: a[1:, 1:4],
}


def _layout(ctx, name, dtype=np.int32):
    base = data(dtype, (5, 6, 8))
    h = LAYOUTS[name](base[1:, :5, 1:7])
    x = LAYOUTS[name](ga.asarray(base, context=ctx)[1:, :5, 1:7])
    assert x.shape == h.shape
    return x, h


ix = np.array
# Keys for a 3-d array whose axes are at least (3, 4, 3) long.
KEYS = [
    [1, 0, -1],                                   # list on axis 0, negative wraps
    ix([[0, 2], [1, -3]]),                        # 2-d index array
    (slice(None), [2, 0, 1, 2]),                  # repeated index, axis 1
    (Ellipsis, ix([1, 0], np.uint8)),             # on the last axis, uint8
    (0, slice(None), [1, 2]),                     # int + array separated: B first
    (slice(None), 1, ix([0, 2], np.int16)),       # int + array adjacent: in place
    ([0, 1], slice(1, 3), [2, 0]),                # separated by a slice: B first
    (slice(None), [0, 1], [2, 0]),                # adjacent pair
    ([[0], [1]], slice(None), [0, 2]),            # broadcast (2, 1) with (2,)
    ([0, 1], None, [0, 1]),                       # separated by None
    (slice(None), [0, 1], None),                  # None after
    (None, Ellipsis, [1]),
    [],                                           # empty integer index
    (slice(None), ix([], np.int64)),
    True,                                         # 0-d bool: a new axis of length 1
    False,
    (0, True),
    ([1, 0], True),
    (ix([True, False, True]),),                   # a mask over the first axis
    (slice(None), ix([True, False, False, True])),  # over the middle axis
    (1, Ellipsis, [True, False, True]),           # int, then a mask over the last axis
    ix([[True, False, True, False]] * 3),         # over the two leading axes
    (ix([[True, False, True, False]] * 3), [2, 0]),  # mask + int array
    (slice(None, None, -1), [2, 1]),
]


def _fit(h, key):
    """numpy's result or None for keys that do not fit the layout's shape."""
    try:
        return h[key]
    except IndexError:
        return None


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("run", [1, 4], ids=["item-per-element", "runs"])
def test_getitem_keys_match_numpy(ctx, monkeypatch, layout, run):
    """Every key on every layout, with a work-item per element (GPUs) and per run of the
    last dim (CPUs; runs of 4 so that rows hold several)."""
    monkeypatch.setattr(indexing, "take_run", lambda ctx: run)
    x, h = _layout(ctx, layout)
    ran = 0
    for key in KEYS:
        want = _fit(h, key)
        if want is None:
            continue
        check(x[key], want)
        ran += 1
        # the same key with its index arrays on the device
        dkey = tuple(ga.asarray(np.asarray(k), context=ctx) if isinstance(k, list | np.ndarray)
                     and np.asarray(k).size else k for k in (key if isinstance(key, tuple)
                                                             else (key,)))
        check(x[dkey], want)
    assert ran >= len(KEYS) // 2


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_gathers_compacts_and_scatters(ctx, dtype):
    h = data(dtype, (7, 9))
    x = ga.asarray(h, context=ctx)
    idx = np.array([[6, 0], [-1, 3]])
    check(x[idx], h[idx])
    check(x[:, idx], h[:, idx])
    check(x.T[ga.asarray((idx % 9).astype(np.uint16), context=ctx)], h.T[idx % 9])
    mask = data(np.bool_, h.shape, seed=1)
    check(x[mask], h[mask])
    check(x[::-1, ::2][mask[:, :5]], h[::-1, ::2][mask[:, :5]])
    # scatter: scalar, broadcast row, a mask with values and with a scalar
    h2, x2 = h.copy(), ga.asarray(h, context=ctx)
    h2[[4, 1], 2:5] = h[0, :3]
    x2[[4, 1], 2:5] = ga.asarray(h[0, :3], context=ctx)
    h2[mask] = h[::-1][mask]
    x2[ga.asarray(mask, context=ctx)] = h[::-1][mask]
    h2[~mask] = h[0, 0]
    x2[~mask] = h[0, 0]
    check(x2, h2)
    # nonzero of every dtype: -0.0 and NaN count as numpy counts them
    if h.dtype.kind in "fc":
        h[0, :3] = [-0.0, np.nan, 0.0]
    for got, want in zip(ga.nonzero(ga.asarray(h, context=ctx)), np.nonzero(h)):
        check(got, want)


def test_index_dtypes_and_mixed_sources(ctx):
    h = data(np.float32, (6, 7, 5))
    x = ga.asarray(h, context=ctx)
    for dt in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
        idx = np.array([[5, 0], [2, 3]]) - (3 if np.dtype(dt).kind == "i" else 0)
        check(x[ga.asarray(idx.astype(dt), context=ctx)], h[idx.astype(dt)])
        check(x[:, :, ga.asarray(idx.astype(dt) % 5, context=ctx)], h[:, :, idx.astype(dt) % 5])
    # host and device index arrays in one key; device ones strided, reversed, broadcast
    d0 = ga.asarray(np.array([5, 4, 3, 2, 1, 0]), context=ctx)[::-2]
    d2 = ga.asarray(np.array([[0, 9, 1], [9, 9, 9]], np.int32), context=ctx)[0, ::2]
    h0, h2 = np.array([5, 4, 3, 2, 1, 0])[::-2], np.array([0, 1], np.int32)
    check(x[d0[:, None], [1, 6], d2], h[h0[:, None], [1, 6], h2])
    check(x[d0[:2], :, d2], h[h0[:2], :, h2])
    x2 = ga.asarray(h, context=ctx)
    h[h0[:2], 3, h2] = -5
    x2[d0[:2], 3, d2] = -5
    check(x2, h)
    # x[mask] = values from a strided device array
    m = data(np.bool_, h.shape, seed=4)
    vals = data(np.float32, (2 * int(m.sum()),), seed=6)
    h[m] = vals[::-2]
    x2[ga.asarray(m, context=ctx)] = ga.asarray(vals, context=ctx)[::-2]
    check(x2, h)


@pytest.mark.parametrize("n", [1, 63, 1000, 70001])
@pytest.mark.parametrize("density", [0.0, 0.03, 0.5, 1.0])
@pytest.mark.parametrize("sequential", [True, False], ids=["in-order", "tiles"])
def test_mask_compaction_sizes(ctx, monkeypatch, n, density, sequential):
    """Both write passes (a work-item per chunk; a work-group per chunk, tiles staged in
    local memory) on one device, over several chunks and tiles."""
    monkeypatch.setattr(indexing, "mask_sequential", lambda ctx: sequential)
    rng = np.random.default_rng(n)
    h = rng.standard_normal(n).astype(np.float32)
    mask = rng.random(n) < density
    x = ga.asarray(h, context=ctx)
    m = ga.asarray(mask, context=ctx)
    check(x[m], h[mask])
    check(ga.flatnonzero(m), np.flatnonzero(mask))
    h2, x2 = h.copy(), ga.asarray(h, context=ctx)
    h2[mask] = np.arange(mask.sum(), dtype=np.float32)
    x2[m] = np.arange(mask.sum(), dtype=np.float32)
    check(x2, h2)


def test_device_made_mask_and_where(ctx):
    h = data(np.float32, (30, 41))
    x = ga.asarray(h, context=ctx)
    check(x[x > 0], h[h > 0])
    for got, want in zip(ga.where(x > 0), np.where(h > 0)):
        check(got, want)
    x[x > 0] = 0
    h[h > 0] = 0
    check(x, h)


def test_strided_masks_and_nonzero_shapes(ctx):
    h = data(np.int16, (6, 5, 4))
    x = ga.asarray(h, context=ctx)
    mbase = data(np.bool_, (6, 10, 4), seed=3)
    m = ga.asarray(mbase, context=ctx)[:, ::2]          # a non-contiguous mask
    check(x[m], h[mbase[:, ::2]])
    check(x[m[:, :, 0]], h[mbase[:, ::2, 0]])
    pairs = [(x, h), (x[:, ::-1], h[:, ::-1]), (x.transpose(2, 0, 1), h.transpose(2, 0, 1)),
             (x[:1, :1, :1], h[:1, :1, :1]), (x[:, :0], h[:, :0])]
    for g, a in pairs:
        for got, want in zip(ga.nonzero(g), np.nonzero(a)):
            check(got, want)
        check(ga.argwhere(g), np.argwhere(a))
        check(ga.flatnonzero(g), np.flatnonzero(a))
    check(ga.argwhere(ga.asarray(np.array(3), context=ctx)), np.argwhere(np.array(3)))
    check(ga.argwhere(ga.asarray(np.array(0.0), context=ctx)), np.argwhere(np.array(0.0)))
    with pytest.raises(ValueError, match="nonzero on 0d arrays"):
        ga.nonzero(ga.asarray(np.array(1), context=ctx))
    m0 = ga.asarray(np.array(True), context=ctx)
    check(ga.asarray(np.array(5), context=ctx)[m0], np.array(5)[np.array(True)])


SET_KEYS = [
    ([3, 0, -2], 7),
    ((slice(None), [2, 0]), "row"),
    ((0, slice(None), [1, 2]), "bcast"),
    (([0, 1], slice(1, 3), [2, 0]), "bcast"),
    ((slice(None), [0, 1], [2, 0]), "full"),
    (ix([True, False, True, True]), "full"),
    ((slice(None), ix([True, False, False, True])), "bcast"),
    (True, "full"),
    (([[0], [1]], slice(None), [0, 2]), "full"),
]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_setitem_matches_numpy(ctx, layout):
    for key, kind in SET_KEYS:
        x, h = _layout(ctx, layout)
        want = _fit(h, key)
        if want is None:
            continue
        if kind == "full":
            value = data(np.int32, want.shape, seed=5)
        elif kind == "row":
            value = data(np.int32, want.shape[-1:], seed=5)
        elif kind == "bcast":
            value = data(np.int32, (1,) * (want.ndim + 1), seed=5)  # leading 1s dropped
        else:
            value = kind
        h[key] = value
        x[key] = value if np.isscalar(value) else ga.asarray(value, context=ctx)
        np.testing.assert_array_equal(x.get(), h, err_msg=str(key))


def test_long_rows(ctx):
    """Rows longer than a CPU work-item's run (256): several runs per row, a ragged last."""
    h = data(np.float32, (5, 700))
    x = ga.asarray(h, context=ctx)
    rng = np.random.default_rng(1)
    cols = rng.permutation(700)[:600]
    cols[::2] -= 700                                     # distinct columns, half negative
    for key in ([4, 0, -1], (slice(None), cols), ([[1], [3]], cols), (slice(None, None, -2),
                                                                      cols[::-3])):
        check(x[key], h[key])
        check(x.T[key[::-1] if isinstance(key, tuple) else key],
              h.T[key[::-1] if isinstance(key, tuple) else key])
    check(ga.take(x, cols + 1400, axis=1, mode="wrap"), np.take(h, cols + 1400, 1, mode="wrap"))
    check(ga.take(x, cols.astype(np.int16), axis=1, mode="clip"),
          np.take(h, cols.astype(np.int16), axis=1, mode="clip"))
    x[:, cols[:300]] = ga.asarray(h[:, :300], context=ctx)
    h[:, cols[:300]] = h[:, :300].copy()
    h[[3, 1]] = -1.0
    x[[3, 1]] = -1.0
    check(x, h)
    bad = cols.copy()
    bad[437] = 700
    with pytest.raises(IndexError, match="index 700 is out of bounds for axis 1 with size 700"):
        x[:, bad]
    with pytest.raises(IndexError, match="index 700 is out of bounds for axis 1 with size 700"):
        x[:, bad] = 0
    check(x, h)


def test_setitem_casts_and_aliases(ctx):
    h = data(np.uint8, (10,))
    x = ga.asarray(h, context=ctx)
    x[[1, 2]] = 2.7                     # cast like numpy
    x[[3, 4]] = [7.9, 250]
    x[np.array([5, 6])] = np.array([-1.5, 300.0]).astype(np.float32).astype(np.uint8)
    h[[1, 2]] = 2.7
    h[[3, 4]] = [7.9, 250]
    h[np.array([5, 6])] = np.array([-1.5, 300.0]).astype(np.float32).astype(np.uint8)
    check(x, h)
    x[[0, 1, 2]] = x[::-1][:3]          # the value aliases the destination
    h[[0, 1, 2]] = h[::-1][:3].copy()
    check(x, h)
    with pytest.raises(OverflowError):
        x[[0]] = -1
    # the index array or mask is the array written
    hi = np.array([3, 1, 0, 2, 4, 4], np.int64)
    xi = ga.asarray(hi, context=ctx)
    xi[xi[:4]] = 9
    hi[hi[:4].copy()] = 9
    check(xi, hi)
    hb = data(np.bool_, (50,))
    xb = ga.asarray(hb, context=ctx)
    xb[xb[::-1]] = True
    hb[hb[::-1].copy()] = True
    check(xb, hb)
    f = ga.asarray(np.zeros(4, np.float32), context=ctx)
    f[[0, 2]] = ga.asarray(np.array([3, 4], np.int16), context=ctx)   # a device cast
    check(f, np.array([3, 0, 4, 0], np.float32))
    # repeated indices: one of the writes wins (unspecified which, as in numpy)
    f[[1, 1, 1]] = [5, 6, 7]
    assert f.get()[1] in (5, 6, 7)


def test_take(ctx):
    h = data(np.float32, (4, 5, 3))
    x = ga.asarray(h, context=ctx)
    for idx in ([0, 2], [[1, -1], [0, 4]], np.array(3), 2, [], np.array([1, 0], np.int8),
                np.array([True, False])):
        for axis in (None, 0, 1, -1):
            if axis is not None and np.max(np.asarray(idx, int), initial=0) >= h.shape[axis]:
                continue
            check(ga.take(x, idx, axis=axis), np.take(h, idx, axis=axis))
    check(x.transpose(1, 2, 0).take([4, 0], axis=0), h.transpose(1, 2, 0).take([4, 0], axis=0))
    check(ga.take(x[:, ::-2], ga.asarray(np.array([7, 1]), context=ctx)),
          np.take(h[:, ::-2], np.array([7, 1])))
    for mode in ("wrap", "clip"):
        idx = [-7, 9, 2, -1, 60]
        check(ga.take(x, idx, axis=1, mode=mode), np.take(h, idx, axis=1, mode=mode))
    out = ga.empty((4, 2, 3), np.float32, context=ctx)
    assert ga.take(x, [3, 3], axis=1, out=out) is out
    check(out, np.take(h, [3, 3], axis=1))
    out64 = ga.zeros((2,), np.float64, context=ctx)[::-1]   # a safe cast, reversed
    ga.take(x, [5, 7], out=out64)
    check(out64, np.take(h, [5, 7]).astype(np.float64))
    with pytest.raises(TypeError, match="rule 'safe'"):
        ga.take(x, [1], out=ga.empty((1,), np.int8, context=ctx))
    with pytest.raises(TypeError, match="rule 'safe'"):
        ga.take(x, [1.0])
    with pytest.raises(ValueError, match="clipmode"):
        ga.take(x, [1], mode="bogus")
    with pytest.raises(IndexError, match="empty axes"):
        ga.take(ga.zeros((0,), context=ctx), [1], mode="wrap")
    with pytest.raises(IndexError, match="out of bounds"):
        ga.take(x, [1], axis=3)


def test_take_along_axis(ctx):
    h = data(np.int64, (4, 5))
    x = ga.asarray(h, context=ctx)
    order = np.argsort(h, axis=1)
    for idx, axis in ((order, 1), (np.argsort(h, axis=0), 0), (order[:, :2], 1),
                      (np.array([[0], [4], [-1], [2]]), 1), (np.array([[1, 0, 2, 3, 3]]), 0),
                      (np.array([3, 0, 19]), None)):
        check(ga.take_along_axis(x, idx, axis), np.take_along_axis(h, idx, axis))
    check(ga.take_along_axis(x.T, ga.asarray(order.T.copy(), context=ctx), 0),
          np.take_along_axis(h.T, order.T, 0))
    check(ga.take_along_axis(ga.asarray(h[:, :1], context=ctx), np.zeros((1, 3), int), 1),
          np.take_along_axis(h[:, :1], np.zeros((1, 3), int), 1))
    with pytest.raises(ValueError, match="same number of dimensions"):
        ga.take_along_axis(x, np.array([0, 1]), 1)
    with pytest.raises(IndexError, match="integer array"):
        ga.take_along_axis(x, np.array([[0.5]]), 1)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 5"):
        ga.take_along_axis(x, np.array([[0], [5], [1], [1]]), 1)
    with pytest.raises(IndexError, match="shape mismatch"):
        ga.take_along_axis(x, np.zeros((2, 2), int), 1)


def test_put_and_compress(ctx):
    for mode, ind in (("raise", [0, 2, -1]), ("wrap", [0, 2, 4, 7, -9]), ("clip", [0, 9, -3])):
        h = data(np.float64, (2, 3))
        x = ga.asarray(h, context=ctx)
        np.put(h, ind, [10, 20], mode=mode)
        assert ga.put(x, ind, [10, 20], mode=mode) is None
        check(x, h)
    h = data(np.int32, (4, 6))
    x = ga.asarray(h, context=ctx)
    v = x[:, ::2]                                       # not contiguous: written back
    hv = h[:, ::2]
    v.put(ga.asarray(np.array([[0, 5], [11, 3]]), context=ctx), ga.asarray(
        np.array([-1, -2, -3, -4], np.int32), context=ctx))
    np.put(hv, [[0, 5], [11, 3]], [-1, -2, -3, -4])
    check(x, h)
    x.put([1], [])                                      # nothing to put
    check(x, h)
    cond = [True, False, True, True]
    for axis in (None, 0, 1):
        check(ga.compress(cond, x, axis=axis), np.compress(cond, h, axis=axis))
        check(x.compress(ga.asarray(np.array(cond), context=ctx), axis=axis),
              h.compress(cond, axis=axis))
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 1 with size 6"):
        ga.compress([False] * 6 + [True], x, axis=1)
    with pytest.raises(ValueError, match="condition must be a 1-d array"):
        ga.compress([[True]], x)


def test_host_indices_checked_on_the_host(ctx):
    """Host index arrays are checked before the launch (no flag read back): negative ones
    resolve as numpy's, the first index out of range in numpy's order is named, nothing is
    written."""
    h = data(np.float32, (6, 5))
    x = ga.asarray(h, context=ctx)
    check(x[[-1, 0, -6, 3]], h[[-1, 0, -6, 3]])
    check(x[:, np.array([[-5, 4], [0, -1]])], h[:, np.array([[-5, 4], [0, -1]])])
    check(x[[1, -2], ga.asarray(np.array([4, -5]), context=ctx)], h[[1, -2], [4, -5]])
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 6"):
        x[[0, 6, -9, 7]]
    with pytest.raises(IndexError, match="index -9 is out of bounds for axis 0 with size 6"):
        x[[0, -9, 6]] = 1
    check(x, h)
    y = ga.asarray(h, context=ctx)
    y[[-1, 2], [-2, 0]] = 7
    g = h.copy()
    g[[-1, 2], [-2, 0]] = 7
    check(y, g)


def test_errors_touch_nothing_and_name_numpy_values(ctx):
    h = data(np.int32, (3, 4))
    x = ga.asarray(h, context=ctx)
    cases = [
        ([0, 7], "index 7 is out of bounds for axis 0 with size 3"),
        ((slice(None), [0, -5]), "index -5 is out of bounds for axis 1 with size 4"),
        ((slice(None), ga.asarray(np.array([9], np.uint8), context=ctx)),
         "index 9 is out of bounds for axis 1 with size 4"),
        ((np.array([2**63 + 5], np.uint64),), "index -9223372036854775803 is out of bounds"),
        ((ga.asarray(np.ones(4, bool), context=ctx),),
         "boolean index did not match indexed array along axis 0; size of axis is 3 but "
         "size of corresponding boolean axis is 4"),
        (np.ones((3, 5), bool), "along axis 1; size of axis is 4 but size of corresponding "
                                "boolean axis is 5"),
        (([0, 1], [[0, 1, 2]]), "shape mismatch: indexing arrays could not be broadcast "
                                "together with shapes (2,) (1,3)"),
        (([0], 0, 0), "too many indices for array: array is 2-dimensional, but 3"),
        (1.0, "only integers, slices"),
        (np.array([1.0]), "integer (or boolean) type"),
        (ga.asarray(np.array([1.0], np.float32), context=ctx), "integer (or boolean) type"),
        (([0], Ellipsis, Ellipsis), "single ellipsis"),
    ]
    for key, words in cases:
        with pytest.raises(IndexOutOfRange, match=words.replace("(", r"\(").replace(")", r"\)")):
            x[key]
        with pytest.raises(IndexError):
            x[key] = 1
    check(x, h)                                         # no partial write
    with pytest.raises(IndexError, match="index 12 is out of bounds for axis 0 with size 12"):
        ga.put(x, [0, 12], 5)
    with pytest.raises(IndexError, match="index 12 is out of bounds for axis 0 with size 12"):
        ga.take(x, [0, 12])
    check(x, h)
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 5"):
        ga.zeros((5, 0), context=ctx)[[7]]                # checked with an empty result too
    check(x[[2, 0]], h[[2, 0]])                          # the flag was cleared
    with pytest.raises(ValueError, match=r"value array of shape \(3,\) could not be broadcast "
                                         r"to indexing result of shape \(2,4\)"):
        x[[0, 1]] = np.zeros(3, np.int32)
    with pytest.raises(ValueError, match="cannot assign 3 input values to the 5 output"):
        x[h > 5] = [1, 2, 3]
    with pytest.raises(TypeError, match="0 or 1-dimensional input"):
        x[h > 5] = np.zeros((1, 5), np.int32)
    ro = ga.broadcast_to(x[0], (2, 4))
    with pytest.raises(ReadOnlyError):
        ro[[0]] = 1
    check(x, h)


def test_wide_index_program(ctx, monkeypatch):
    """The 64-bit variant (arrays past 2^31 elements), forced on small data, with the
    GPU choices: 256 work-items per mask work-group, a work-item per gathered element."""
    monkeypatch.setattr(indexing, "_INT32_MAX", 0)
    monkeypatch.setattr(indexing, "mask_local_size", lambda ctx: 256)
    monkeypatch.setattr(indexing, "take_run", lambda ctx: 1)
    monkeypatch.setattr(indexing, "mask_sequential", lambda ctx: False)
    h = data(np.float32, (40, 300))
    x = ga.asarray(h, context=ctx)
    mask = data(np.bool_, h.shape, seed=2)
    check(x[mask], h[mask])
    check(x[:, [5, -1, 0]], h[:, [5, -1, 0]])
    for got, want in zip(ga.nonzero(ga.asarray(mask, context=ctx)), np.nonzero(mask)):
        check(got, want)
    x[mask] = 1.5
    h[mask] = 1.5
    check(x, h)
    with pytest.raises(IndexError, match="index 40 is out of bounds for axis 0"):
        x[[40]]


def test_basic_indexing_still_views(ctx):
    x = ga.asarray(data(np.int32, (4, 5)), context=ctx)
    for key in (1, (slice(None), 2), (Ellipsis, None), np.int64(2), (slice(1, 3), -1)):
        assert x[key].base is x
    assert x[[1]].base is None
