"""Joining, splitting, repeating, padding, diagonals and the creation functions against numpy.

numpy is the oracle for values, dtypes and shapes. Copies move raw items of a dtype's size,
so the all-dtypes sweep costs one build per item size and layout, not per dtype; the other
tests use one or two dtypes and reuse the sweep's layouts where they can.
"""

import numpy as np
import pytest
from conftest import ALL_DTYPES, host_data

import gpuarr as ga
from gpuarr import config
from gpuarr.errors import (
    ArgumentError,
    ArgumentTypeError,
    AxisError,
    ContextMismatch,
    ReadOnlyError,
    ShapeError,
    UnsupportedError,
)

FP64 = (np.dtype(np.float64), np.dtype(np.complex128))


def need(ctx, *dts):
    if not ctx.fp64 and any(np.dtype(d) in FP64 for d in dts):
        pytest.skip("device has no fp64")


def check(g, h):
    """g (GpuArray) equals h (numpy) in dtype, shape and values."""
    assert isinstance(g, ga.GpuArray), type(g)
    assert (g.dtype, g.shape) == (h.dtype, h.shape)
    np.testing.assert_array_equal(g.get(), h)


def check_all(gs, hs):
    assert isinstance(gs, tuple | list) and len(gs) == len(hs)
    for g, h in zip(gs, hs):
        check(g, h)


def byte_offset(view, base):
    return view.__array_interface__["data"][0] - base.__array_interface__["data"][0]


def check_view(gv, hv, g, h):
    """gv, a view of g (h uploaded), is numpy's view hv of h: the same storage, shape,
    strides and offset, hence the same values (read back without a copy kernel)."""
    assert isinstance(gv, ga.GpuArray) and gv.storage is g.storage
    assert (gv.dtype, gv.shape) == (hv.dtype, hv.shape)
    if hv.size:
        assert [s for n, s in zip(gv.shape, gv.strides) if n > 1] == \
            [s for n, s in zip(hv.shape, hv.strides) if n > 1]
        assert gv.offset - g.offset == byte_offset(hv, h)


def check_views(gs, hs, g, h):
    assert isinstance(gs, tuple | list) and len(gs) == len(hs)
    for gv, hv in zip(gs, hs):
        check_view(gv, hv, g, h)


def floatx():
    return np.dtype(config.floatX)


@pytest.fixture(scope="module")
def f32(ctx):
    """A float32 (4, 5, 6) array on the device and its host twin."""
    h = host_data(np.float32, (4, 5, 6))
    return ga.asarray(h, context=ctx), h


# ---------------------------------------------------------------- every dtype

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype(ctx, dtype):
    """Copies and gathers move every dtype's items unchanged (one build per item size)."""
    need(ctx, dtype)
    h = host_data(dtype, (3, 4))
    g = ga.asarray(h, context=ctx)
    check(ga.concatenate([g, g[::-1, ::2]], axis=1), np.concatenate([h, h[::-1, ::2]], axis=1))
    check(ga.concatenate([g[::-1, ::2], g], axis=None),
          np.concatenate([h[::-1, ::2], h], axis=None))
    check(ga.stack([g, g[::-1]], axis=-2), np.stack([h, h[::-1]], axis=-2))
    check(ga.concatenate([g[:0], g[:0]]), np.concatenate([h[:0], h[:0]]))
    check(ga.pad(g, ((1, 2), (3, 0)), mode="edge"), np.pad(h, ((1, 2), (3, 0)), mode="edge"))
    check(ga.repeat(g, [2, 0, 1], axis=0), np.repeat(h, [2, 0, 1], axis=0))
    check_views(ga.split(g, [1, 3], axis=1), np.split(h, [1, 3], axis=1), g, h)
    check_view(ga.flip(g), np.flip(h), g, h)
    check_view(ga.diagonal(g, 1), np.diagonal(h, 1), g, h)


@pytest.mark.parametrize("dtype", [np.bool_, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_fill_and_band_item_sizes(ctx, dtype):
    """pad's constants and the triangles' zeros through raw items (16-byte ones in halves)."""
    need(ctx, dtype)
    h = host_data(dtype, (3, 4))
    g = ga.asarray(h, context=ctx)
    check(ga.tril(g, 1), np.tril(h, 1))
    check(ga.eye(3, 4, -1, dtype=dtype, context=ctx), np.eye(3, 4, -1, dtype=dtype))
    check(ga.pad(g, 2, constant_values=1 - 2j if dtype == np.complex128 else 1),
          np.pad(h, 2, constant_values=1 - 2j if dtype == np.complex128 else 1))


# ---------------------------------------------------------------- joining

def test_concatenate_layouts_and_axes(ctx, f32):
    g, h = f32
    o = host_data(np.float32, (6, 5, 4))
    go = ga.asarray(o, context=ctx).transpose(2, 1, 0)
    ho = o.transpose(2, 1, 0)  # (4, 5, 6), not contiguous
    for axis in (0, 1, -1, None):
        step = [slice(None)] * 3
        step[axis or 0] = slice(None, None, -2)
        gs = [g, go, g[tuple(step)], go[tuple(step)]]
        hs = [h, ho, h[tuple(step)], ho[tuple(step)]]
        check(ga.concatenate(gs, axis=axis), np.concatenate(hs, axis=axis))
    check(ga.concatenate(g), np.concatenate(h))  # an array is a sequence of its rows
    check(ga.concatenate((g[:, :0], g[:, :2]), axis=1), np.concatenate((h[:, :0], h[:, :2]), 1))


def test_concatenate_dtypes_out_and_mixed_inputs(ctx, f32):
    g, h = f32
    hi = np.arange(6, dtype=np.int16).reshape(1, 6)
    gi = ga.asarray(hi, context=ctx)
    row = h[0]
    # numpy's promotion; host arrays join the device ones
    check(ga.concatenate([g[0], gi, hi]), np.concatenate([row, hi, hi]))
    rows = [[0.5, 1, 2, 3, 4, 5]]  # a list of Python floats uploads as floatX
    check(ga.concatenate([g[0], rows]), np.concatenate([row, np.array(rows, floatx())]))
    check(ga.concatenate([g[0], g[1]], dtype=np.int32, casting="unsafe"),
          np.concatenate([row, h[1]], dtype=np.int32, casting="unsafe"))
    with pytest.raises(TypeError, match=r"Cannot cast array data.*'same_kind'"):
        ga.concatenate([g[0], g[1]], dtype=np.int32)
    with pytest.raises(ArgumentTypeError, match="'safe'"):
        ga.concatenate([g[0], gi], dtype=np.float16, casting="safe")
    with pytest.raises(ArgumentError, match="casting"):
        ga.concatenate([g[0], g[1]], casting="sometimes")
    out = ga.zeros((5, 12), np.float32, context=ctx)
    res = ga.concatenate([g[0], g[1]], axis=1, out=out[:, ::-1])  # into a strided view
    assert res.shape == (5, 12) and res.storage is out.storage
    check(out, np.concatenate([row, h[1]], axis=1)[:, ::-1])
    out32 = ga.zeros((10, 6), np.int32, context=ctx)
    assert ga.concatenate([g[0], g[1]], out=out32, casting="unsafe") is out32
    check(out32, np.concatenate([row, h[1]]).astype(np.int32))
    with pytest.raises(ShapeError, match="wrong shape"):
        ga.concatenate([g[0], g[1]], out=out)
    with pytest.raises(TypeError, match="only takes `out` or `dtype`"):
        ga.concatenate([g[0]], out=out, dtype=np.float32)
    with pytest.raises(TypeError, match="Cannot cast"):
        ga.concatenate([g[0], g[0]], out=out32)
    with pytest.raises(ReadOnlyError):
        readonly = ga.broadcast_to(ga.zeros(6, np.float32, context=ctx), (10, 6))
        ga.concatenate([g[0], g[0]], out=readonly)


def test_join_errors(ctx, f32):
    g, _ = f32
    with pytest.raises(ValueError, match="need at least one array to concatenate"):
        ga.concatenate([])
    with pytest.raises(ShapeError, match="zero-dimensional arrays cannot be concatenated"):
        ga.concatenate([g[0, 0, 0], g[0, 0, 1]])
    with pytest.raises(ShapeError, match=r"same number of dimensions.*index 0 has 3.*index 1 "
                                         r"has 2"):
        ga.concatenate([g, g[0]])
    with pytest.raises(ShapeError, match="along dimension 1, the array at index 0 has size 5 "
                                         "and the array at index 1 has size 4"):
        ga.concatenate([g, g[:, :4]])
    with pytest.raises(AxisError, match="axis 3 is out of bounds for array of dimension 3"):
        ga.concatenate([g, g], axis=3)
    with pytest.raises(IndexError):
        ga.concatenate([g, g], axis=-4)
    with pytest.raises(ValueError, match="need at least one array to stack"):
        ga.stack([])
    with pytest.raises(ShapeError, match="all input arrays must have the same shape"):
        ga.stack([g, g[:, :4]])
    with pytest.raises(AxisError, match="axis 4 is out of bounds for array of dimension 4"):
        ga.stack([g, g], axis=4)
    with pytest.raises(TypeError, match="sequence"):
        ga.vstack(x for x in (g, g))
    with pytest.raises(ShapeError):
        ga.hstack([g[0], g[0, 0]])


def test_stack_family(ctx):
    a = np.arange(3, dtype=np.float32)
    b = np.arange(3, 6, dtype=np.float32)
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    ga_, gb, gm = (ga.asarray(v, context=ctx) for v in (a, b, m))
    s = np.float32(7)
    gs = ga.asarray(s, context=ctx)
    check(ga.stack([ga_, gb], axis=1), np.stack([a, b], axis=1))
    check(ga.stack([gs, gs]), np.stack([s, s]))
    check(ga.stack([ga_, gb], axis=-1, out=ga.empty((3, 2), np.float32, context=ctx)),
          np.stack([a, b], axis=-1))
    check(ga.vstack([ga_, gb, gm]), np.vstack([a, b, m]))
    check(ga.vstack([gs, gs]), np.vstack([s, s]))
    check(ga.hstack([ga_, gb[::-1], b]), np.hstack([a, b[::-1], b]))
    check(ga.hstack([gm, gm[:, :1]]), np.hstack([m, m[:, :1]]))
    check(ga.hstack([gs, ga_]), np.hstack([s, a]))
    check(ga.dstack([ga_, gb]), np.dstack([a, b]))
    check(ga.dstack([gm, gm]), np.dstack([m, m]))
    check(ga.column_stack([ga_, gb, gm.T]), np.column_stack([a, b, m.T]))
    check(ga.vstack([ga_, gb], dtype=np.int32, casting="unsafe"),
          np.vstack([a, b], dtype=np.int32, casting="unsafe"))


def test_atleast(ctx):
    for h in (np.array(2, np.float32), np.arange(3, dtype=np.float32),
              np.arange(6, dtype=np.float32).reshape(2, 3),
              np.arange(24, dtype=np.float32).reshape(2, 3, 4)):
        g = ga.asarray(h, context=ctx)
        for fn in ("atleast_1d", "atleast_2d", "atleast_3d"):
            check_view(getattr(ga, fn)(g), getattr(np, fn)(h), g, h)
    got = ga.atleast_2d(ga.asarray(np.arange(2), context=ctx), [1, 2, 3])
    assert isinstance(got, tuple) and [x.shape for x in got] == [(1, 2), (1, 3)]
    assert ga.atleast_1d() == ()


# ---------------------------------------------------------------- splitting

def test_split_family(ctx, f32):
    g, h = f32
    for fn, args in [("split", (2,)), ("split", ([1, 3, 10, -1],)), ("split", (3, 2)),
                     ("split", ([], 1)), ("array_split", (3, -1)), ("array_split", (4, 1)),
                     ("array_split", ([2, 2, 1], 0)), ("array_split", (np.array([1, 4]), 1)),
                     ("hsplit", (5,)), ("vsplit", ([1],)), ("dsplit", (2,))]:
        check_views(getattr(ga, fn)(g, *args), getattr(np, fn)(h, *args), g, h)
    t, ht = g.transpose(1, 2, 0)[::-1], h.transpose(1, 2, 0)[::-1]
    check_views(ga.array_split(t, 4, axis=-1), np.array_split(ht, 4, -1), g, h)
    check_views(ga.hsplit(g[0, 0], [2, 5]), np.hsplit(h[0, 0], [2, 5]), g, h)
    check_views(ga.split(g[0, 0], ga.asarray(np.array([2, 3]), context=ctx)),
                np.split(h[0, 0], [2, 3]), g, h)
    check_views(ga.array_split(g[0, 0, :0], 3), np.array_split(h[0, 0, :0], 3), g, h)
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        ga.split(g, 3)
    with pytest.raises(ValueError, match="number sections must be larger than 0"):
        ga.array_split(g, 0)
    with pytest.raises(AxisError):
        ga.split(g, 2, axis=3)
    with pytest.raises(ShapeError, match="hsplit only works on arrays of 1 or more dim"):
        ga.hsplit(g[0, 0, 0], 1)
    with pytest.raises(ShapeError, match="vsplit only works on arrays of 2 or more dim"):
        ga.vsplit(g[0, 0], 1)
    with pytest.raises(ShapeError, match="dsplit only works on arrays of 3 or more dim"):
        ga.dsplit(g[0], 1)


# ---------------------------------------------------------------- tile and repeat

def test_tile(ctx, f32):
    g, h = f32
    m, hm = g[1, ::-2], h[1, ::-2]
    for reps in [2, (2, 1), (1, 3), (2, 1, 2), (0, 2), (), (1, 1)]:
        check(ga.tile(m, reps), np.tile(hm, reps))
    check(ga.tile(g[0, 0, 0], 3), np.tile(h[0, 0, 0], 3))
    check(ga.tile(g[:, :0], 2), np.tile(h[:, :0], 2))
    check(ga.tile(np.arange(3, dtype=np.float32), (2, 2)),
          np.tile(np.arange(3, dtype=np.float32), (2, 2)))
    with pytest.raises(ShapeError, match="negative dimensions are not allowed"):
        ga.tile(m, (2, -1))
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        ga.tile(m, 2.0)


def test_repeat(ctx, f32):
    g, h = f32
    m, hm = g[1, 1:4, ::-2], h[1, 1:4, ::-2]
    for reps, axis in [(2, None), (3, 0), (2, -1), (0, 1), (np.int8(2), 1), ([2], 0),
                       ([1, 0, 3], -1), (np.array([0, 2, 1], np.uint8), 0),
                       (range(9), None), (True, 0)]:
        check(ga.repeat(m, reps, axis=axis), np.repeat(hm, reps, axis=axis))
        check(m.repeat(reps, axis), hm.repeat(reps, axis))
    check(ga.repeat(g[0, 0, 0], 3), np.repeat(h[0, 0, 0], 3))
    check(ga.repeat(g[:0], [], axis=0), np.repeat(h[:0], [], axis=0))
    check(ga.repeat(g[:0], 2, axis=1), np.repeat(h[:0], 2, axis=1))
    # counts on the device: their total sizes the result
    for counts in (np.array([3, 0, 1, 2, 0]), np.array([0, 0, 0, 0, 0]), np.array([4])):
        dc = ga.asarray(counts, context=ctx)
        check(ga.repeat(g[0], dc, axis=0), np.repeat(h[0], counts, axis=0))
    with pytest.raises(ArgumentError, match="repeats may not contain negative values"):
        ga.repeat(g[0], ga.asarray(np.array([1, -1, 0, 0, 2]), context=ctx), axis=0)
    with pytest.raises(ArgumentError, match="repeats may not contain negative values"):
        ga.repeat(g[0], [1, -1, 0, 0, 2], axis=0)
    with pytest.raises(ShapeError, match="negative dimensions are not allowed"):
        ga.repeat(g, -1)
    with pytest.raises(ShapeError, match=r"could not be broadcast together with shape \(5,\) "
                                         r"\(2,\)"):
        ga.repeat(g[0], [1, 2], axis=0)
    with pytest.raises(TypeError, match=r"Cannot cast array data from dtype\('float64'\) to "
                                        r"dtype\('int64'\) according to the rule 'safe'"):
        ga.repeat(g, np.array([1.0, 2.0, 1.0, 1.0]), axis=0)
    with pytest.raises(TypeError, match="rule 'safe'"):
        ga.repeat(g, ga.asarray(np.array([1, 2, 1, 1], np.uint64), context=ctx), axis=0)
    with pytest.raises(AxisError):
        ga.repeat(g[0, 0, 0], 2, axis=0)


# ---------------------------------------------------------------- rearranging

def test_flip_roll_moveaxis(ctx, f32):
    g, h = f32
    t, ht = g.transpose(2, 0, 1)[1:, ::-1], h.transpose(2, 0, 1)[1:, ::-1]
    for axis in (None, 0, -1, (0, 2), ()):
        check_view(ga.flip(t, axis), np.flip(ht, axis), g, h)
    check_view(ga.fliplr(t), np.fliplr(ht), g, h)
    check_view(ga.flipud(t[0, 0]), np.flipud(ht[0, 0]), g, h)
    check(ga.flip(g[0, 0, 0]), np.asarray(h[0, 0, 0]))
    for shift, axis in [(3, None), (-7, 0), ((1, 2), (0, 2)), (4, (1, 1)), ((1, -2), 1),
                        (0, 1), (11, -1)]:
        check(ga.roll(t, shift, axis), np.roll(ht, shift, axis))
    check(ga.roll(g[0, 0, 0], 1), np.roll(h[0, 0, 0], 1))
    check(ga.roll(g[:0], 2, 1), np.roll(h[:0], 2, 1))
    for src, dst in [(0, -1), (-1, 0), ((0, 1), (2, 0)), ([], [])]:
        check_view(ga.moveaxis(t, src, dst), np.moveaxis(ht, src, dst), g, h)
    with pytest.raises(ShapeError, match="Input must be >= 2-d"):
        ga.fliplr(t[0, 0])
    with pytest.raises(ShapeError, match="Input must be >= 1-d"):
        ga.flipud(g[0, 0, 0])
    with pytest.raises(ArgumentError, match="repeated axis"):
        ga.flip(t, (0, -3))
    with pytest.raises(AxisError):
        ga.flip(t, 3)
    with pytest.raises(ShapeError, match="shape mismatch"):
        ga.roll(t, (1, 2), axis=(0, 1, 2))
    with pytest.raises(AxisError):
        ga.roll(g[0, 0, 0], 1, axis=0)
    with pytest.raises(AxisError, match="source: axis 3 is out of bounds"):
        ga.moveaxis(t, 3, 0)
    with pytest.raises(AxisError, match="destination: axis -4 is out of bounds"):
        ga.moveaxis(t, 0, -4)
    with pytest.raises(ValueError, match="must have the same number of elements"):
        ga.moveaxis(t, (0, 1), 0)
    with pytest.raises(ValueError, match="repeated axis in `source` argument"):
        ga.moveaxis(t, (0, 0), (0, 1))


def test_broadcast_arrays(ctx, f32):
    g, h = f32
    got = ga.broadcast_arrays(g[0, :1], g[1, 0], g[2, 1:3, :1, None][..., 0])
    want = np.broadcast_arrays(h[0, :1], h[1, 0], h[2, 1:3, :1, None][..., 0])
    for gv, hv in zip(got, want):
        assert gv.strides == hv.strides
    check_views(got, want, g, h)
    with pytest.raises(ReadOnlyError):
        got[0][...] = 1
    same = ga.broadcast_arrays(g, g)
    assert same[0] is g and same[1] is g
    assert ga.broadcast_arrays() == ()
    five = ga.broadcast_arrays(g[0], 5.0)[1]  # Python floats take floatX
    assert (five.dtype, five.shape) == (floatx(), (5, 6))
    with pytest.raises(ShapeError, match="shape mismatch: objects cannot be broadcast"):
        ga.broadcast_arrays(g, g[0, 0, :4])


def test_context_mismatch(ctx_pair):
    c0, c1 = ctx_pair
    a, b = ga.zeros(3, np.float32, context=c0), ga.zeros(3, np.float32, context=c1)
    for call in (lambda: ga.concatenate([a, b]), lambda: ga.stack([a, b]),
                 lambda: ga.concatenate([a, a], out=ga.empty(6, np.float32, context=c1)),
                 lambda: ga.meshgrid(a, b), lambda: ga.linspace(a, b, 3),
                 lambda: ga.repeat(a, ga.asarray(np.array([1, 2, 0]), context=c1))):
        with pytest.raises(ContextMismatch):
            call()


# ---------------------------------------------------------------- pad

@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
def test_pad_modes(ctx, f32, mode):
    g, h = f32
    t, ht = g.transpose(1, 0, 2)[::-1, :, 1::2], h.transpose(1, 0, 2)[::-1, :, 1::2]
    for width in [1, (2, 3), ((1, 0), (9, 2), (0, 7)), [[4], [1], [0]], {-1: (3, 1)},
                  {0: 2}, np.int8(2), ((0, 0),) * 3]:
        check(ga.pad(t, width, mode=mode), np.pad(ht, width, mode=mode))
    check(ga.pad(t[:, :1, :1], 5, mode=mode), np.pad(ht[:, :1, :1], 5, mode=mode))
    check(ga.pad(t[0, 0], (13, 11), mode), np.pad(ht[0, 0], (13, 11), mode))  # wider than t
    check(ga.pad(g[0, 0, 0], 3, mode), np.pad(h[0, 0, 0], 3, mode))
    check(ga.pad(t[:, :0], ((1, 1), (0, 0), (2, 0)), mode),
          np.pad(ht[:, :0], ((1, 1), (0, 0), (2, 0)), mode))


def test_pad_constant_values_and_errors(ctx, f32):
    g, h = f32
    m, hm = g[0, :3, :4], h[0, :3, :4]
    for values in [7.5, (1, 2), ((1, 2), (3, 4)), [[-1], [5]]]:
        check(ga.pad(m, ((1, 2), (2, 1)), constant_values=values),
              np.pad(hm, ((1, 2), (2, 1)), constant_values=values))
    hu = np.arange(4, dtype=np.float32)
    check(ga.pad(hu, 2, constant_values=-1), np.pad(hu, 2, constant_values=-1))
    hb = np.arange(4, dtype=np.uint8)  # numpy's cast of the values: -1 -> 255, 2.7 -> 2
    check(ga.pad(hb, (2, 0), constant_values=-1), np.pad(hb, (2, 0), constant_values=-1))
    check(ga.pad(hb, (2, 0), constant_values=2.7), np.pad(hb, (2, 0), constant_values=2.7))
    check(ga.pad(g[:0], ((1, 1), (0, 0), (0, 0)), constant_values=3),
          np.pad(h[:0], ((1, 1), (0, 0), (0, 0)), constant_values=3))
    assert ga.pad(m, 2, mode="empty").shape == (7, 8)
    np.testing.assert_array_equal(ga.pad(m, 2, mode="empty").get()[2:5, 2:6], hm)
    with pytest.raises(ValueError, match="mode 'foo' is not supported"):
        ga.pad(m, 1, mode="foo")
    with pytest.raises(UnsupportedError, match="mean"):
        ga.pad(m, 1, mode="mean")
    with pytest.raises(UnsupportedError, match="odd"):
        ga.pad(m, 1, mode="reflect", reflect_type="odd")
    with pytest.raises(ValueError, match="index can't contain negative values"):
        ga.pad(m, -1)
    with pytest.raises(ValueError, match="index can't contain negative values"):
        ga.pad(m, ((1, 1), (1, -1)))
    with pytest.raises(ShapeError, match="broadcast"):
        ga.pad(m, ((1, 2, 3), (1, 2, 3)))
    with pytest.raises(TypeError, match="`pad_width` must be of integral type"):
        ga.pad(m, 1.5)
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        ga.pad(m, 1, mode="edge", constant_values=3)
    with pytest.raises(ValueError, match="can't extend empty axis 0 using modes other than"):
        ga.pad(g[:0], 1, mode="wrap")


# ---------------------------------------------------------------- diagonals and triangles

def test_diagonal_trace_diag(ctx, f32):
    g, h = f32
    t, ht = g.transpose(2, 1, 0)[::-1], h.transpose(2, 1, 0)[::-1]
    for offset, a1, a2 in [(0, 0, 1), (2, 0, 1), (-3, 1, 0), (1, -1, 0), (10, 0, 2), (-5, 2, 1)]:
        got = ga.diagonal(t, offset, a1, a2)
        check_view(got, np.diagonal(ht, offset, a1, a2), g, h)
        assert not got.flags.writeable
        check_view(t.diagonal(offset, a1, a2), ht.diagonal(offset, a1, a2), g, h)
    check(ga.trace(t, 1, 2, 0), np.trace(ht, 1, 2, 0))
    check(t.trace(-1, 2, 0), ht.trace(-1, 2, 0))
    hi = np.arange(12, dtype=np.int32).reshape(3, 4)
    check(ga.trace(ga.asarray(hi, context=ctx), 1), np.asarray(np.trace(hi, 1)))  # in int64
    out = ga.zeros(5, np.float32, context=ctx)
    assert ga.trace(t, -2, 2, 0, out=out) is out
    check(out, np.trace(ht, -2, 2, 0))
    for k in (0, 2, -1, 7):
        check_view(ga.diag(t[0], k), np.diag(ht[0], k), g, h)
        check(ga.diag(t[0, 1], k), np.diag(ht[0, 1], k))
    check(ga.diag(g[0, :0, 0], 1), np.diag(h[0, :0, 0], 1))
    with pytest.raises(ShapeError, match="Input must be 1- or 2-d"):
        ga.diag(g)
    with pytest.raises(ShapeError, match="diag requires an array of at least two dimensions"):
        ga.diagonal(g[0, 0])
    with pytest.raises(ValueError, match="axis1 and axis2 cannot be the same"):
        ga.diagonal(g, 0, 1, -2)
    with pytest.raises(AxisError, match="axis2: axis 3 is out of bounds"):
        ga.diagonal(g, 0, 0, 3)


def test_triangles_eye_tri(ctx, f32):
    g, h = f32
    t, ht = g.transpose(0, 2, 1)[:, ::-1], h.transpose(0, 2, 1)[:, ::-1]
    for k in (0, 1, -2, 9, -9):
        check(ga.tril(t, k), np.tril(ht, k))
        check(ga.triu(t, k), np.triu(ht, k))
    check(ga.tril(g[0, 0]), np.tril(h[0, 0]))  # 1-d: the rows of a square
    check(ga.triu(g[:0]), np.triu(h[:0]))
    with pytest.raises(TypeError, match="at least 1 dimension"):
        ga.tril(g[0, 0, 0])
    for args in [(3,), (3, 5), (4, 2, 1), (4, None, -2), (0,), (3, 0)]:
        check(ga.tri(*args, context=ctx), np.tri(*args, dtype=floatx()))
        check(ga.eye(*args, context=ctx), np.eye(*args, dtype=floatx()))
    check(ga.tri(3, 4, 1, dtype=np.uint32, context=ctx), np.tri(3, 4, 1, dtype=np.uint32))
    got = ga.eye(4, 3, 1, dtype=np.int32, order="F", context=ctx)
    assert got.flags.f_contiguous
    check(got, np.eye(4, 3, 1, np.int32, "F"))
    check(ga.identity(3, np.uint8, context=ctx), np.identity(3, np.uint8))
    check(ga.identity(2, context=ctx), np.identity(2, floatx()))
    with pytest.raises(ShapeError, match="negative dimensions"):
        ga.eye(-1, context=ctx)
    with pytest.raises(ArgumentError, match="order"):
        ga.eye(2, order="K", context=ctx)


# ---------------------------------------------------------------- grids and ranges

def test_meshgrid(ctx):
    x = np.arange(3, dtype=np.float32)
    y = np.arange(4, dtype=np.float32)[::-1] * 2
    z = np.arange(6, dtype=np.float32).reshape(2, 3)
    gx, gy, gz = (ga.asarray(v, context=ctx) for v in (x, y, z))
    for kw in [{}, {"indexing": "ij"}, {"sparse": True}, {"sparse": True, "indexing": "ij"}]:
        for args, hargs in [((gx,), (x,)), ((gx, gy[::-1]), (x, y[::-1])),
                            ((gx, gy, gz), (x, y, z)), ((gx[:0], gy), (x[:0], y))]:
            got = ga.meshgrid(*args, **kw)
            check_all(got, np.meshgrid(*hargs, **kw))
            assert all(v.flags.writeable and v.flags.c_contiguous for v in got)
    views = ga.meshgrid(gx, gy, copy=False)
    assert [(v.shape, v.flags.writeable) for v in views] == [((4, 3), False)] * 2
    assert views[0].storage is gx.storage
    assert ga.meshgrid() == ()
    with pytest.raises(ValueError, match="Valid values for `indexing` are 'xy' and 'ij'"):
        ga.meshgrid(gx, indexing="yx")


def test_linspace_scalars(ctx):
    need(ctx, np.float64)
    # Python numbers: floatX, computed in float64 as numpy does, then cast: the same bits
    for args in [(0, 1, 7), (-2.5, 3.25, 50), (5, 5, 4), (0, 1, 1), (0, 1, 0), (0, 5e-324, 3)]:
        for endpoint in (True, False):
            check(ga.linspace(*args, endpoint=endpoint, context=ctx),
                  np.linspace(*args, endpoint=endpoint, dtype=floatx()))
    got, step = ga.linspace(0, 1, 5, retstep=True, context=ctx)
    want, wstep = np.linspace(0, 1, 5, retstep=True, dtype=floatx())
    check(got, want)
    assert step == wstep and type(step) is type(wstep)
    assert np.isnan(ga.linspace(0, 1, 1, retstep=True, context=ctx)[1])
    # numpy scalars keep their dtype (float16 rounds every step, as numpy's); dtype= picks
    # the result (integers are floored)
    for start, stop, dtype in [(np.float16(-1), np.float16(3.3), None),
                               (np.float64(-3.1), 7.5, None), (np.int8(-7), np.int64(5), int),
                               (0, 1j, None)]:
        for num in (9, 100):
            check(ga.linspace(start, stop, num, dtype=dtype, context=ctx),
                  np.linspace(start, stop, num, dtype=dtype))
    with pytest.raises(ValueError, match="Number of samples, -1, must be non-negative"):
        ga.linspace(0, 1, -1, context=ctx)
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        ga.linspace(0, 1, 2.5, context=ctx)
    with pytest.raises(AxisError, match="destination"):
        ga.linspace(0, 1, 5, axis=1, context=ctx)


def test_linspace_arrays_and_logspace(ctx):
    need(ctx, np.float64)
    start = np.array([0.0, 1.0, 2.0])
    stop = np.array([[3.0, 1.0, 5.0], [-1.0, 4.0, 2.5]])
    for axis in (0, 1, -1):
        got, step = ga.linspace(start, stop, 6, axis=axis, retstep=True, context=ctx)
        want, wstep = np.linspace(start, stop, 6, axis=axis, retstep=True)
        assert got.strides == want.strides
        np.testing.assert_array_equal(ga.moveaxis(got, axis, 0).get(),
                                      np.moveaxis(want, axis, 0))
        check(step, wstep)
    s32 = start.astype(np.float32)
    gstart = ga.asarray(s32, context=ctx)
    check(ga.linspace(gstart, 4, 5, endpoint=False), np.linspace(s32, 4, 5, endpoint=False))
    got, step = ga.linspace(gstart, gstart[::-1], 4, retstep=True)  # one step is 0
    want, wstep = np.linspace(s32, s32[::-1], 4, retstep=True)
    check(got, want)
    check(step, wstep)
    for args, kw, dtype in [((0, 2, 5), {}, floatx()),
                            ((0, 3, 4), {"base": 2.0, "endpoint": False}, floatx()),
                            ((0, [1, 2], 3), {"base": np.array([2.0, 3.0]), "axis": 1},
                             np.float64)]:
        want = np.logspace(*args, **kw).astype(dtype)
        got = ga.logspace(*args, **kw, context=ctx)
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        np.testing.assert_allclose(got.get(), want, rtol=1e-6)
