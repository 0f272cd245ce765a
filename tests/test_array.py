"""GpuArray against numpy: creation, attributes, views, copies and host transfers.

numpy is the oracle throughout: values, dtypes, shapes, strides (in bytes) and the
view/copy semantics of every operation are compared with numpy doing the same thing.
Arrays are small and dtype pairs few, since each new kernel costs a build.
"""

import re
import warnings

import numpy as np
import pytest
from conftest import ALL_DTYPES, host_data

import gpuarr as ga
from gpuarr import config
from gpuarr.errors import ReadOnlyError, UnsupportedError

FP64 = (np.dtype(np.float64), np.dtype(np.complex128))


def _name(dtype):
    return np.dtype(dtype).name


def need(ctx, *dts):
    """Skip when the device under test cannot hold one of `dts`."""
    if not ctx.fp64 and any(np.dtype(d) in FP64 for d in dts):
        pytest.skip("device has no fp64")


def floatx():
    return np.dtype(config.floatX)


def byte_offset(view, base):
    return view.__array_interface__["data"][0] - base.__array_interface__["data"][0]


def check(g, h, strides=True):
    """g (GpuArray) equals h (numpy): dtype, shape, values and (if non-empty) strides."""
    assert isinstance(g, ga.GpuArray)
    assert g.dtype == h.dtype
    assert g.shape == h.shape
    if strides and h.size:
        assert g.strides == h.strides
    out = g.get()
    assert out.dtype == h.dtype and out.shape == h.shape
    np.testing.assert_array_equal(out, h)


def significant_strides(a):
    """Strides of the axes longer than 1 (numpy leaves the others unspecified in places)."""
    return tuple(s for n, s in zip(a.shape, a.strides) if n > 1)


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}[
        a.itemsize])


# ============================================================== creation

SHAPES = [(), (0,), (1,), (5,), (3, 0, 2), (2, 3, 4), (1, 4, 1)]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_name)
def test_empty_layout_matches_numpy(ctx, dtype):
    need(ctx, dtype)
    for shape in SHAPES:
        for order in "CF":
            x = ga.empty(shape, dtype, order=order, context=ctx)
            ref = np.empty(shape, dtype, order=order)
            assert x.shape == ref.shape
            assert x.dtype == ref.dtype
            if ref.size:  # numpy 2 gives 0-size arrays all-zero strides
                assert x.strides == ref.strides, (shape, order)
            assert (x.size, x.ndim, x.itemsize, x.nbytes) == (
                ref.size, ref.ndim, ref.itemsize, ref.nbytes)
            assert x.flags.c_contiguous == ref.flags.c_contiguous
            assert x.flags.f_contiguous == ref.flags.f_contiguous
            assert x.offset == 0
            assert x.base is None and x.flags.owndata
            assert x.context is ctx


def test_empty_default_dtype_and_shape_forms(ctx):
    assert ga.empty(3, context=ctx).dtype == floatx()
    assert ga.empty(np.int64(4), "int8", context=ctx).shape == (4,)
    assert ga.empty([2, 3], "int8", context=ctx).shape == (2, 3)
    with pytest.raises(ValueError, match="negative"):
        ga.empty((2, -1), "int8", context=ctx)
    with pytest.raises(ValueError):
        ga.empty(3, "int8", order="K", context=ctx)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_name)
def test_zeros_ones(ctx, dtype):
    need(ctx, dtype)
    for shape, order in [((2, 3), "C"), ((2, 3), "F"), ((), "C"), ((0, 4), "C"), ((7,), "C")]:
        for fn, npfn in [(ga.zeros, np.zeros), (ga.ones, np.ones)]:
            x = fn(shape, dtype, order=order, context=ctx)
            check(x, npfn(shape, dtype, order=order))


def test_zeros_ones_default_dtype(ctx):
    check(ga.zeros((2, 2), context=ctx), np.zeros((2, 2), floatx()))
    check(ga.ones(3, context=ctx), np.ones(3, floatx()))


FILL_VALUES = [7, 2.5, True, False, 0, 1 + 2j]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_name)
def test_full(ctx, dtype):
    need(ctx, dtype)
    for value in FILL_VALUES:
        if isinstance(value, complex) and np.dtype(dtype).kind != "c":
            continue
        x = ga.full((2, 3), value, dtype, context=ctx)
        check(x, np.full((2, 3), value, dtype))
    check(ga.full((3, 2), 3, dtype, order="F", context=ctx), np.full((3, 2), 3, dtype, order="F"))


def test_full_default_dtypes(ctx):
    need(ctx, np.complex128)
    check(ga.full((2,), 7, context=ctx), np.full((2,), 7))            # int64
    check(ga.full((2,), True, context=ctx), np.full((2,), True))      # bool
    check(ga.full((2,), 1 + 2j, context=ctx), np.full((2,), 1 + 2j))  # complex128
    check(ga.full((2,), 2.5, context=ctx), np.full((2,), 2.5, floatx()))  # floatX
    check(ga.full((2,), np.float64(2.5), context=ctx), np.full((2,), np.float64(2.5)))
    check(ga.full((), -1, "int16", context=ctx), np.full((), -1, np.int16))


# -- arange

@pytest.mark.parametrize("args", [(5,), (0,), (1,), (2,), (2, 11, 3), (10, -3, -4), (-5, -1),
                                  (3, 3), (3, 1), (0, 10, 20)])
def test_arange_int(ctx, args):
    ref = np.arange(*args)
    check(ga.arange(*args, context=ctx), ref)
    assert ref.dtype == np.int64


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint64], ids=_name)
def test_arange_int_dtypes(ctx, dtype):
    for args in [(0,), (1,), (2,), (7,), (3, 20, 4)]:
        check(ga.arange(*args, dtype=dtype, context=ctx), np.arange(*args, dtype=dtype))
    if np.dtype(dtype).kind == "i":
        check(ga.arange(10, -9, -3, dtype=dtype, context=ctx), np.arange(10, -9, -3, dtype=dtype))


FLOAT_RANGES = [(0, 1, 0.1), (-3, 7.5, 0.7), (10, 0, -0.3), (0.5,), (2.5,), (0, 0.1, 0.1),
                (0, 0.2, 0.1), (1.0, 1.0), (1.0, 0.0), (-1, 1, 0.125), (0, 100, 0.37)]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=_name)
def test_arange_float_exact_bits(ctx, dtype):
    need(ctx, dtype)
    for args in FLOAT_RANGES:
        ref = np.arange(*args, dtype=dtype)
        x = ga.arange(*args, dtype=dtype, context=ctx)
        assert x.shape == ref.shape, args
        assert x.dtype == ref.dtype
        np.testing.assert_array_equal(bits(x.get()), bits(ref), err_msg=str(args))


def test_arange_default_dtype(ctx):
    need(ctx, np.float64)
    # Python floats take floatX, with numpy's values for that dtype
    x = ga.arange(-3, 7.5, 0.7, context=ctx)
    ref = np.arange(-3, 7.5, 0.7, dtype=floatx())
    assert x.dtype == floatx()
    np.testing.assert_array_equal(bits(x.get()), bits(ref))
    # numpy floating scalars keep their dtype
    x = ga.arange(np.float64(0), 1, 0.1, context=ctx)
    ref = np.arange(np.float64(0), 1, 0.1)
    assert x.dtype == np.float64
    np.testing.assert_array_equal(bits(x.get()), bits(ref))
    check(ga.arange(np.int16(4), context=ctx), np.arange(np.int16(4)))


def test_arange_bool(ctx):
    for n in (0, 1, 2):
        check(ga.arange(n, dtype=bool, context=ctx), np.arange(n, dtype=bool))


def test_arange_errors(ctx):
    with pytest.raises(ValueError):
        ga.arange(0, 5, 0, context=ctx)
    with pytest.raises(UnsupportedError):
        ga.arange(3, dtype=np.complex64, context=ctx)
    with pytest.raises(ValueError):
        ga.arange(5, dtype=bool, context=ctx)


# -- *_like

def _like_sources(ctx):
    host_c = host_data(np.int16, (2, 3, 4))
    host_f = np.asfortranarray(host_c)
    return [host_c, host_f, ga.asarray(host_c, context=ctx), ga.asarray(host_f, context=ctx)]


@pytest.mark.parametrize("order", ["K", "A", "C", "F"])
def test_like_functions(ctx, order):
    for src in _like_sources(ctx):
        host = src.get() if isinstance(src, ga.GpuArray) else src
        for dtype in (None, np.float32, np.uint8):
            for fn, npfn, extra in [(ga.empty_like, np.empty_like, ()),
                                    (ga.zeros_like, np.zeros_like, ()),
                                    (ga.ones_like, np.ones_like, ()),
                                    (ga.full_like, np.full_like, (3,))]:
                x = fn(src, *extra, dtype=dtype, order=order, context=ctx)
                ref = npfn(host, *extra, dtype=dtype, order=order)
                if fn is ga.empty_like:
                    assert (x.shape, x.dtype, x.strides) == (ref.shape, ref.dtype, ref.strides)
                else:
                    check(x, ref)
                assert x.context is ctx


def test_like_keeps_context_and_takes_shape(ctx):
    src = ga.zeros((2, 3), "int32", order="F", context=ctx)
    x = ga.zeros_like(src)
    assert x.context is ctx
    assert x.strides == np.zeros((2, 3), np.int32, order="F").strides
    x = ga.full_like(src, 2.75, shape=(4,))
    check(x, np.full_like(np.zeros((2, 3), np.int32), 2.75, shape=(4,)))
    y = ga.full_like(np.zeros(3, np.float32), 2.75, context=ctx)
    check(y, np.full(3, 2.75, np.float32))


# -- asarray / array / ascontiguousarray

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_name)
def test_asarray_numpy_keeps_dtype_and_layout(ctx, dtype):
    need(ctx, dtype)
    host = host_data(dtype, (3, 4))
    x = ga.asarray(host, context=ctx)
    check(x, host)
    assert x.flags.owndata and x.flags.c_contiguous
    f = np.asfortranarray(host)
    xf = ga.asarray(f, context=ctx)
    check(xf, f)
    assert xf.flags.f_contiguous and not xf.flags.c_contiguous
    check(ga.asarray(host[1, 2], context=ctx), np.asarray(host[1, 2]))  # a numpy scalar


def test_asarray_python_objects(ctx):
    need(ctx, np.complex128)
    cases = [
        ([1.5, 2.0, -3.25], np.array([1.5, 2.0, -3.25], floatx())),
        ([1, 2, 3], np.array([1, 2, 3])),
        ([True, False], np.array([True, False])),
        ([[1, 2], [3, 4], [5, 6]], np.array([[1, 2], [3, 4], [5, 6]])),
        ([[1.0, 2], [3, 4.5]], np.array([[1.0, 2], [3, 4.5]], floatx())),
        ([[[True]]], np.array([[[True]]])),
        ([1 + 2j, 3], np.array([1 + 2j, 3])),
        (3, np.array(3)),
        (2.5, np.array(2.5, floatx())),
        (True, np.array(True)),
        (np.float64(2.5), np.array(2.5, np.float64)),
        (np.float16(1.5), np.array(1.5, np.float16)),
        ([], np.array([], floatx())),
        ((1, 2), np.array((1, 2))),
    ]
    for obj, ref in cases:
        x = ga.asarray(obj, context=ctx)
        check(x, ref)


def test_asarray_dtype_and_order_arguments(ctx):
    host = host_data(np.int32, (2, 3))
    check(ga.asarray(host, dtype=np.float32, context=ctx), host.astype(np.float32))
    check(ga.asarray([1.7, -2.2], dtype="int16", context=ctx), np.asarray([1.7, -2.2], "int16"))
    xf = ga.asarray(host, order="F", context=ctx)
    check(xf, np.asfortranarray(host))
    assert xf.flags.f_contiguous
    # order="C" of an F-ordered host array gives a C-contiguous array, as numpy does
    xc = ga.asarray(np.asfortranarray(host), order="C", context=ctx)
    check(xc, np.asarray(np.asfortranarray(host), order="C"))
    assert xc.flags.c_contiguous


def test_asarray_of_gpuarray(ctx):
    x = ga.asarray(host_data(np.int32, (2, 3)), context=ctx)
    assert ga.asarray(x) is x
    assert ga.asarray(x, context=ctx) is x
    assert ga.asarray(x, dtype=np.int32) is x
    y = ga.asarray(x, dtype=np.float32)
    check(y, x.get().astype(np.float32))
    z = ga.asarray(x.T, order="C")
    check(z, np.ascontiguousarray(x.get().T))
    assert z.flags.c_contiguous
    with pytest.raises(TypeError):
        ga.asarray(ctx)


def test_array_copies(ctx):
    host = host_data(np.float32, (2, 3))
    x = ga.asarray(host, context=ctx)
    y = ga.array(x)
    assert y is not x and y.base is None
    check(y, host)
    y[...] = 0
    check(x, host)  # the copy is independent
    assert ga.array(x, copy=False) is x
    # host data is always copied
    h = host.copy()
    z = ga.array(h, context=ctx)
    h[...] = 0
    check(z, host)
    # dtype and order
    check(ga.array(x, dtype=np.int16), np.array(host, dtype=np.int16))
    zf = ga.array(x, order="F")
    check(zf, np.array(host, order="F"))
    assert zf.flags.f_contiguous


def test_array_ndmin(ctx):
    for obj in ([1, 2, 3], 5, [[1, 2]], np.zeros((2, 3), np.int8)):
        for ndmin in (0, 1, 2, 4):
            x, ref = ga.array(obj, ndmin=ndmin, context=ctx), np.array(obj, ndmin=ndmin)
            check(x, ref, strides=False)
            assert significant_strides(x) == significant_strides(ref)
            assert x.flags.c_contiguous
    x = ga.asarray(host_data(np.int8, (2, 3)), context=ctx)
    check(ga.array(x, ndmin=3), np.array(x.get(), ndmin=3), strides=False)


def test_ascontiguousarray(ctx):
    # 0-d becomes 1-d, as numpy (the stride of a length-1 axis is not compared)
    check(ga.ascontiguousarray(np.array(5, np.int32), context=ctx),
          np.ascontiguousarray(np.array(5, np.int32)), strides=False)
    assert ga.ascontiguousarray(np.array(5, np.int32), context=ctx).shape == (1,)
    x0 = ga.asarray(np.array(2.5, np.float32), context=ctx)
    check(ga.ascontiguousarray(x0), np.ascontiguousarray(np.array(2.5, np.float32)),
          strides=False)
    host = host_data(np.int32, (3, 4))
    for src in (host, host.T, host[:, ::-2]):
        ref = np.ascontiguousarray(src)
        y = ga.ascontiguousarray(ga.asarray(src, context=ctx))
        check(y, ref)
        assert y.flags.c_contiguous
    c = ga.asarray(host, context=ctx)
    assert ga.ascontiguousarray(c) is c
    check(ga.ascontiguousarray(c, dtype=np.float32), np.ascontiguousarray(host, np.float32))


def test_ascontiguousarray_of_fortran_host_array(ctx):
    f = np.asfortranarray(host_data(np.int32, (3, 4)))
    y = ga.ascontiguousarray(f, context=ctx)
    check(y, np.ascontiguousarray(f))
    assert y.flags.c_contiguous


def test_float64_on_device_without_fp64(ctx, monkeypatch):
    monkeypatch.setattr(type(ctx), "fp64", property(lambda self: False))
    assert not ctx.fp64
    attempts = [
        lambda: ga.empty(3, np.float64, context=ctx),
        lambda: ga.zeros((2, 2), "complex128", context=ctx),
        lambda: ga.asarray(np.arange(3.0), context=ctx),
        lambda: ga.full(2, np.float64(1.0), context=ctx),
        lambda: ga.asarray(np.ones(2, np.float32), context=ctx).astype(np.float64),
        lambda: ga.arange(3, dtype=np.float64, context=ctx),
    ]
    for attempt in attempts:
        with pytest.raises(UnsupportedError) as info:
            attempt()
        assert isinstance(info.value, TypeError)
        msg = str(info.value)
        assert ctx.devname in msg
        assert "float64" in msg or "complex128" in msg
    # what the device does support still works, and Python floats take floatX: float32 here
    # under floatX=auto (the default), as with floatX=float32
    if config.flags.floatX != "float64":
        check(ga.asarray([1.5, 2.5], context=ctx), np.array([1.5, 2.5], np.float32))
        assert ga.zeros(2, context=ctx).dtype == np.float32
    check(ga.zeros(2, np.complex64, context=ctx), np.zeros(2, np.complex64))


def test_fp64_capability_restored(ctx):
    # after monkeypatch undid the fake capability, the real one is back
    assert ctx.fp64 == ctx.device.fp64


@pytest.mark.parametrize("dtype", [object, "U5", "S3", "datetime64[s]", "timedelta64[ms]",
                                   np.longdouble, [("a", np.int32)]],
                         ids=["object", "U5", "S3", "datetime64", "timedelta64", "longdouble",
                              "struct"])
def test_unsupported_dtypes(ctx, dtype):
    if np.dtype(dtype) == np.float64:  # longdouble is double on some platforms
        pytest.skip("longdouble is float64 here")
    for attempt in (lambda: ga.empty(3, dtype, context=ctx),
                    lambda: ga.zeros(2, dtype, context=ctx),
                    lambda: ga.asarray(np.zeros(2, dtype), context=ctx)):
        with pytest.raises(UnsupportedError) as info:
            attempt()
        assert isinstance(info.value, TypeError)
    x = ga.zeros(2, np.float32, context=ctx)
    with pytest.raises(UnsupportedError):
        x.astype(dtype)


def test_unsupported_python_objects(ctx):
    with pytest.raises(UnsupportedError):
        ga.asarray(["ab", "c"], context=ctx)
    with pytest.raises(UnsupportedError):
        ga.asarray(np.array(["2020-01-01"], dtype="datetime64[D]"), context=ctx)
    with pytest.raises(UnsupportedError):
        ga.asarray([object()], context=ctx)


# ============================================================== attributes

def test_attributes_of_views(ctx):
    host = host_data(np.int32, (2, 3, 4))
    x = ga.asarray(host, context=ctx)
    for key in [(), (1,), (slice(None), slice(None, None, 2)), (slice(None, None, -1), 1),
                (Ellipsis, slice(1, 3)), (1, slice(2, None), slice(None, None, -3))]:
        v, ref = x[key], host[key]
        check(v, ref)
        assert v.offset == byte_offset(ref, host)
        assert (v.size, v.ndim, v.itemsize, v.nbytes) == (ref.size, ref.ndim, ref.itemsize,
                                                          ref.nbytes)
        assert v.flags.c_contiguous == ref.flags.c_contiguous, key
        assert v.flags.f_contiguous == ref.flags.f_contiguous, key
        assert not v.flags.owndata and v.base is x
        assert v.flags.writeable
        assert v.context is ctx
        assert v.storage is x.storage
    # a view of a view keeps the owner as base, as numpy does
    assert x[1][::-1].base is x
    assert x.T.base is x
    assert x.base is None and x.flags.owndata


def test_flags_mapping(ctx):
    x = ga.zeros((3, 4), np.float32, context=ctx)
    ref = np.zeros((3, 4), np.float32)
    for a, r in [(x, ref), (x.T, ref.T), (x[:, ::2], ref[:, ::2]), (x[1], ref[1])]:
        for key in ("C_CONTIGUOUS", "F_CONTIGUOUS", "WRITEABLE", "OWNDATA", "C", "F", "W", "O"):
            assert a.flags[key] == r.flags[key], key
        assert a.flags.c_contiguous == r.flags.c_contiguous
        assert a.flags.f_contiguous == r.flags.f_contiguous
        assert a.flags.writeable == r.flags.writeable
        assert a.flags.owndata == r.flags.owndata
    with pytest.raises(KeyError):
        x.flags["NOT_A_FLAG"]
    x.flags.writeable = False
    with pytest.raises(ValueError):
        x[0] = 1
    x.flags["WRITEABLE"] = True
    x[0] = 1
    ref[0] = 1
    check(x, ref)


def test_transpose_attribute_T(ctx):
    for shape in [(), (4,), (2, 3), (2, 3, 4)]:
        host = host_data(np.int16, shape)
        x = ga.asarray(host, context=ctx)
        check(x.T, host.T)
        assert x.T.T.strides == x.strides


def test_len_and_iter(ctx):
    host = host_data(np.int8, (3, 2))
    x = ga.asarray(host, context=ctx)
    assert len(x) == 3
    assert len(ga.zeros((0, 2), "int8", context=ctx)) == 0
    rows = list(x)
    assert len(rows) == 3
    for r, h in zip(rows, host):
        check(r, h)
    x0 = ga.asarray(np.array(1, np.int8), context=ctx)
    with pytest.raises(TypeError):
        len(x0)
    with pytest.raises(TypeError):
        iter(x0)


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float32, np.complex64], ids=_name)
def test_bool_int_float(ctx, dtype):
    for value in (0, 1, 3):
        for shape in ((), (1,), (1, 1)):
            h = np.full(shape, value, dtype)
            x = ga.asarray(h, context=ctx)
            assert bool(x) is bool(h)
            if np.dtype(dtype).kind != "c":
                assert int(x) == int(h.reshape(()))
                assert float(x) == float(h.reshape(()))
            assert complex(x) == complex(h.reshape(()))
    with pytest.raises(ValueError):
        bool(ga.zeros(2, dtype, context=ctx))
    with pytest.raises(ValueError):
        bool(ga.zeros((0,), dtype, context=ctx))
    with pytest.raises(ValueError):
        bool(ga.zeros((2, 0), dtype, context=ctx))
    with pytest.raises(TypeError):
        int(ga.zeros(3, dtype, context=ctx))
    with pytest.raises(TypeError):
        float(ga.zeros((0,), dtype, context=ctx))


def test_float_int_values(ctx):
    assert float(ga.asarray(np.array(2.75, np.float32), context=ctx)) == 2.75
    assert int(ga.asarray(np.array(-2.75, np.float32), context=ctx)) == -2
    assert int(ga.asarray(np.array([2**40 + 3], np.int64), context=ctx)) == 2**40 + 3
    assert int(ga.asarray(np.array(2**64 - 1, np.uint64), context=ctx)) == 2**64 - 1
    x = ga.asarray(np.arange(5, dtype=np.int32), context=ctx)
    assert [0, 1, 2, 3, 4][ga.asarray(np.array(3, np.int32), context=ctx)] == 3
    check(x[ga.asarray(np.array(2, np.int64), context=ctx)], np.array(2, np.int32))
    with pytest.raises(TypeError):
        [1, 2][ga.asarray(np.array(1.0, np.float32), context=ctx)]


def test_no_hash(ctx):
    x = ga.zeros(2, "int8", context=ctx)
    with pytest.raises(TypeError):
        hash(x)
    with pytest.raises(TypeError):
        _ = {x}


def test_repr(ctx):
    x = ga.asarray(np.array([1.0, 2.0], np.float32), context=ctx)
    assert repr(x) == f"gpuarray.array([1., 2.], dtype=float32, context={ctx.name!r})"
    y = ga.asarray(np.array([[1, 2], [3, 4]], np.int16), context=ctx)
    assert repr(y) == (f"gpuarray.array([[1, 2],\n                [3, 4]], dtype=int16, "
                       f"context={ctx.name!r})")
    assert str(y) == str(np.array([[1, 2], [3, 4]], np.int16))
    assert repr(ga.zeros(0, "uint8", context=ctx)) == (
        f"gpuarray.array([], dtype=uint8, context={ctx.name!r})")


# ============================================================== views: basic indexing

S = slice
INDEX_CASES = {
    (): [(), Ellipsis, None, (None, Ellipsis), (Ellipsis, None, None)],
    (0,): [S(None), S(None, None, -1), None, Ellipsis, (S(2, 5),), (None, S(None, None, 3))],
    (5,): [0, -1, 4, -5, S(None, None, -1), S(1, None, 2), S(4, 0, -2), S(-2, None),
           S(10, 20), S(-100, 100), S(3, 1), S(None, None, -4), (None, S(1, 4)), (2, None),
           Ellipsis, np.int64(3), np.array(1), np.uint8(2)],
    (4, 5): [1, -1, (S(None), 2), (S(None, None, -1),), (S(1, None, 2), -2), (Ellipsis, 1),
             (None, 2, Ellipsis, None), (S(3, 0, -2), S(None, None, -3)), (S(10, 20),),
             (), (S(-100, 100), S(4, 5)), (S(None), S(5, None)), (1, S(5, None)),
             (Ellipsis, S(None, None, -1), None), (-4, -5), (S(None, None, 3), Ellipsis)],
    (3, 0, 2): [1, (S(None, None, -1), S(None), 1), (Ellipsis, -1), (None, 2, Ellipsis),
                (S(1, 2), S(None, None, -1))],
    (2, 3, 4): [(1, S(None, None, -1), S(1, None, 2)), (Ellipsis, None, 0), (-1, -2, -3),
                (S(None), None, S(2, 0, -1)), (S(None, None, -1), Ellipsis, S(None, None, -2)),
                (0, Ellipsis), (Ellipsis, 0, S(None)), (None, None, 1, None, S(1, 3))],
}


def numpy_view(host, key):
    """host[key] as a view even where numpy would return a scalar (all axes indexed)."""
    key = key if isinstance(key, tuple) else (key,)
    # numpy treats a 0-d integer array inside a tuple as advanced indexing (a copy)
    key = tuple(int(k) if isinstance(k, np.ndarray) else k for k in key)
    if not any(k is Ellipsis for k in key):
        key = (*key, Ellipsis)
    ref = host[key]
    assert ref.size == 0 or np.shares_memory(ref, host)
    return ref


@pytest.mark.parametrize("shape", list(INDEX_CASES), ids=str)
def test_basic_indexing_matches_numpy_and_shares_memory(ctx, shape):
    host = host_data(np.int32, shape)
    x = ga.asarray(host, context=ctx)
    for key in INDEX_CASES[shape]:
        ref = numpy_view(host, key)
        v = x[key]
        assert v.shape == ref.shape, key
        if host.size:  # numpy 2 gives 0-size arrays all-zero strides
            assert v.strides == ref.strides, key
        if ref.size:
            assert v.offset == byte_offset(ref, host), key
        np.testing.assert_array_equal(v.get(), ref, err_msg=str(key))
        assert v.base is x
        # write through the view, read the base
        h2 = host.copy()
        x2 = ga.asarray(host, context=ctx)
        h2[key] = -7
        x2[key][...] = -7
        check(x2, h2)


def test_chained_indexing(ctx):
    host = host_data(np.float32, (6, 5, 4))
    x = ga.asarray(host, context=ctx)
    v, ref = x[1:][::-2][:, 3], host[1:][::-2][:, 3]
    check(v, ref)
    v, ref = x[..., ::-1][None][0, 2, 1:], host[..., ::-1][None][0, 2, 1:]
    check(v, ref)
    assert v.offset == byte_offset(ref, host)
    v[...] = 100
    ref[...] = 100
    check(x, host)


def test_index_errors(ctx):
    x = ga.zeros((4, 5), "int32", context=ctx)
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        x[4]
    with pytest.raises(IndexError, match="index -6 is out of bounds for axis 1 with size 5"):
        x[:, -6]
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 0 with size 4"):
        x[-5]
    with pytest.raises(IndexError):
        ga.zeros((0,), "int32", context=ctx)[0]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="too many indices"):
        x[..., 0, 0, None, 0]
    with pytest.raises(IndexError):
        ga.zeros((), "int32", context=ctx)[0]
    with pytest.raises(IndexError):
        x[..., ...]
    for bad in (1.0, np.float32(1), "a", [0.5], ga.asarray(np.array(1.0, np.float32), context=ctx),
                np.array(1.0)):  # (integer arrays index: tests/test_indexing.py)
        with pytest.raises(IndexError):
            x[bad]
    with pytest.raises(IndexError):
        x[1.0] = 3


def test_bool_scalar_index_is_not_an_integer(ctx):
    """x[True] is numpy advanced indexing (a new axis of length 1), never x[1]."""
    host = host_data(np.int32, (3, 4))
    x = ga.asarray(host, context=ctx)
    for key in (True, False, np.True_, (0, True)):
        ref = host[key]
        try:
            v = x[key]
        except IndexError:
            continue  # advanced indexing not supported yet: fine
        assert v.shape == ref.shape, key
        np.testing.assert_array_equal(v.get(), ref)


# ============================================================== views: reshape and friends

RESHAPE_CASES = [
    # (how to view the base, new shape, order)
    (lambda a: a, (6, 4), "C"),
    (lambda a: a, (4, 6), "C"),
    (lambda a: a, (-1,), "C"),
    (lambda a: a, (24,), "F"),
    (lambda a: a, (2, -1, 3), "C"),
    (lambda a: a, (1, 24, 1), "C"),
    (lambda a: a, (4, 3, 2), "F"),
    (lambda a: a.T, (24,), "C"),              # needs a copy
    (lambda a: a.T, (24,), "F"),              # a view
    (lambda a: a.T, (4, 6), "F"),
    (lambda a: a.T, (2, 12), "C"),
    (lambda a: a[:, ::2], (2, 2, 2, 2), "C"),  # a view
    (lambda a: a[:, ::2], (16,), "C"),        # a copy
    (lambda a: a[:, ::2], (4, 4), "C"),       # a copy
    (lambda a: a[:, ::2], (2, 8), "F"),       # a copy
    (lambda a: a[:, :, ::-1], (6, 4), "C"),   # a view with negative strides
    (lambda a: a[:, :, ::-1], (24,), "C"),    # a copy
    (lambda a: a[1], (3, 4), "A"),
    (lambda a: a[1], (12,), "A"),
    (lambda a: a[:, 1:2], (2, 4), "C"),
    (lambda a: a[:1, :, :1], (3,), "C"),
    (lambda a: a[0, 0, 0, ...], (1, 1), "C"),
    (lambda a: a[0, 0, :1], (), "C"),
    (lambda a: a[:, :0], (0, 5), "C"),
    (lambda a: a[:, :0], (-1,), "F"),
]


@pytest.mark.parametrize("case", range(len(RESHAPE_CASES)))
def test_reshape_matches_numpy_view_or_copy(ctx, case):
    take, newshape, order = RESHAPE_CASES[case]
    host = host_data(np.float32, (2, 3, 4))
    x = ga.asarray(host, context=ctx)
    hv, gv = take(host), take(x)
    ref = hv.reshape(newshape, order=order)
    r = gv.reshape(newshape, order=order)
    check(r, ref, strides=False)
    assert significant_strides(r) == significant_strides(ref)
    assert r.flags.c_contiguous == ref.flags.c_contiguous
    assert r.flags.f_contiguous == ref.flags.f_contiguous
    # a view exactly when numpy makes one: writing through it changes the base the same way
    ref[...] = -9
    r[...] = -9
    check(x, host)
    if ref.size:
        assert (r.base is x) == np.shares_memory(ref, host)


def test_reshape_forms(ctx):
    host = host_data(np.int8, (2, 3))
    x = ga.asarray(host, context=ctx)
    check(x.reshape(3, 2), host.reshape(3, 2))
    check(x.reshape((3, 2)), host.reshape((3, 2)))
    check(x.reshape([6]), host.reshape([6]))
    check(x.reshape(6), host.reshape(6))
    check(x.reshape(-1, 2), host.reshape(-1, 2))
    check(x.reshape(np.int64(6)), host.reshape(np.int64(6)))
    check(ga.reshape(x, (2, 1, 3)), np.reshape(host, (2, 1, 3)))
    check(ga.reshape(host, (3, 2)), np.reshape(host, (3, 2)))
    z = ga.zeros((0, 3), "int8", context=ctx)
    check(z.reshape(-1, 3), np.zeros((0, 3), np.int8).reshape(-1, 3), strides=False)
    check(z.reshape(3, 0, 5), np.zeros((3, 0, 5), np.int8), strides=False)
    check(ga.asarray(np.array(4, np.int8), context=ctx).reshape(1, 1), np.array([[4]], np.int8),
          strides=False)


def test_reshape_errors(ctx):
    x = ga.zeros((2, 3), "int8", context=ctx)
    msg = "cannot reshape array of size 6 into shape (4,)"
    with pytest.raises(ValueError, match=re.escape(msg)):
        x.reshape(4)
    with pytest.raises(ValueError, match=re.escape("cannot reshape array of size 6 into shape")):
        x.reshape(4, -1)
    with pytest.raises(ValueError):
        x.reshape(-1, -1)
    with pytest.raises(ValueError):
        x.reshape(-2, -3)
    with pytest.raises(ValueError):
        x.reshape(6, order="K")
    with pytest.raises(ValueError):
        ga.zeros((0, 3), "int8", context=ctx).reshape(0, -1)
    with pytest.raises(TypeError):
        x.reshape(2.0, 3)


@pytest.mark.parametrize("axes", [None, (1, 0, 2), (-1, 0, 1), (2, 1, 0), [0, 2, 1],
                                  np.array([2, 0, 1])], ids=str)
def test_transpose(ctx, axes):
    host = host_data(np.int16, (2, 3, 4))
    x = ga.asarray(host, context=ctx)
    if axes is None:
        pairs = [(x.transpose(), host.transpose()), (ga.transpose(x), np.transpose(host))]
    else:
        pairs = [(x.transpose(axes), host.transpose(axes)),
                 (x.transpose(*axes), host.transpose(*axes)),
                 (ga.transpose(x, axes), np.transpose(host, axes))]
    for v, ref in pairs:
        check(v, ref)
        assert v.base is x
    v, ref = pairs[0]
    v[0] = 99
    ref[0] = 99
    check(x, host)


def test_transpose_and_swapaxes_errors(ctx):
    x = ga.zeros((2, 3, 4), "int8", context=ctx)
    with pytest.raises(ValueError):
        x.transpose(0, 1)
    with pytest.raises(ValueError):
        x.transpose(0, 0, 1)
    with pytest.raises(IndexError):
        x.transpose(0, 1, 3)
    with pytest.raises(IndexError):  # numpy's AxisError is an IndexError too
        x.swapaxes(0, 3)


@pytest.mark.parametrize("a1,a2", [(0, 2), (-1, 0), (1, 1), (2, -2)])
def test_swapaxes(ctx, a1, a2):
    host = host_data(np.int16, (2, 3, 4))
    x = ga.asarray(host, context=ctx)
    for v, ref in [(x.swapaxes(a1, a2), host.swapaxes(a1, a2)),
                   (ga.swapaxes(x, a1, a2), np.swapaxes(host, a1, a2))]:
        check(v, ref)
        assert v.base is x


def test_squeeze(ctx):
    host = host_data(np.int32, (1, 3, 1, 2))
    x = ga.asarray(host, context=ctx)
    for axis in (None, 0, 2, -2, -4, (0, 2), (2,)):
        v, ref = x.squeeze(axis), host.squeeze(axis)
        check(v, ref)
        assert v.base is x
        check(ga.squeeze(x, axis), np.squeeze(host, axis))
    v = x.squeeze()
    v[1] = 50
    host.squeeze()[1] = 50
    check(x, host)
    check(ga.asarray(np.array(3), context=ctx).squeeze(), np.array(3))
    with pytest.raises(ValueError):
        x.squeeze(1)
    with pytest.raises(ValueError):
        x.squeeze((0, 3))
    with pytest.raises(IndexError):
        x.squeeze(4)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3, (0, 2), (-1, -2), (0, 1, 4), (3, 0)],
                         ids=str)
def test_expand_dims(ctx, axis):
    host = host_data(np.int32, (2, 3))
    x = ga.asarray(host, context=ctx)
    v, ref = ga.expand_dims(x, axis), np.expand_dims(host, axis)
    check(v, ref, strides=False)
    assert significant_strides(v) == significant_strides(ref)
    assert v.base is x
    v[...] = 4
    ref[...] = 4
    check(x, host)


def test_expand_dims_errors(ctx):
    x = ga.zeros((2, 3), "int8", context=ctx)
    with pytest.raises(IndexError):
        ga.expand_dims(x, 3)
    with pytest.raises(IndexError):
        ga.expand_dims(x, -4)
    with pytest.raises(ValueError):
        ga.expand_dims(x, (0, 0))
    with pytest.raises(ValueError):
        ga.expand_dims(x, (1, -3))
    check(ga.expand_dims(np.arange(3), 0), np.expand_dims(np.arange(3), 0), strides=False)


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_ravel(ctx, order):
    host = host_data(np.float32, (3, 4))
    for take in (lambda a: a, lambda a: a.T, lambda a: a[:, ::2], lambda a: a[::-1],
                 lambda a: a[1:, :]):
        hv = take(host)
        if order == "K" and not (hv.flags.c_contiguous or hv.flags.f_contiguous):
            continue  # numpy's K follows memory order of any strides; covered: C and F
        h = host.copy()
        x = ga.asarray(h, context=ctx)
        ref, r = take(h).ravel(order), take(x).ravel(order)
        check(r, ref)
        assert (r.base is x) == np.shares_memory(ref, h)
        ref[...] = -1
        r[...] = -1
        check(x, h)
        check(ga.ravel(take(x), order), np.ravel(take(h), order))


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_flatten(ctx, order):
    host = host_data(np.int16, (3, 4))
    for take in (lambda a: a, lambda a: a.T, lambda a: a[::-1, ::2]):
        hv = take(host)
        if order == "K" and not (hv.flags.c_contiguous or hv.flags.f_contiguous):
            continue
        x = ga.asarray(host, context=ctx)
        ref, r = hv.flatten(order), take(x).flatten(order)
        check(r, ref)
        r[...] = 0  # always a copy
        check(x, host)


def test_view_dtype(ctx):
    host = np.array([[1.5, -2.0, 0.0], [np.inf, -0.0, 3.25]], np.float32)
    x = ga.asarray(host, context=ctx)
    check(x.view(np.int32), host.view(np.int32))
    check(x.view(np.uint32), host.view(np.uint32))
    check(x.view(), host.view())
    assert x.view().base is x and x.view(np.int32).base is x
    check(x.view(np.uint8), host.view(np.uint8))
    check(x.view(np.int16), host.view(np.int16))
    check(x[:, 1:].view(np.uint16), host[:, 1:].view(np.uint16))
    check(x.T.view(np.int32), host.T.view(np.int32))
    check(x[::-1].view(np.uint8), host[::-1].view(np.uint8))
    u8 = np.arange(16, dtype=np.uint8).reshape(2, 8)
    y = ga.asarray(u8, context=ctx)
    check(y.view(np.int32), u8.view(np.int32))
    check(y.view(np.int64), u8.view(np.int64))
    check(y.view(np.float16), u8.view(np.float16))
    check(y[:, 4:].view(np.uint32), u8[:, 4:].view(np.uint32))
    c = np.array([1 + 2j, -3.5 + 0.25j], np.complex64)
    check(ga.asarray(c, context=ctx).view(np.float32), c.view(np.float32))
    check(ga.asarray(c.view(np.float32), context=ctx).view(np.complex64), c)
    check(ga.asarray(np.array([1, 0, 2], np.uint8), context=ctx).view(np.bool_)[:2],
          np.array([1, 0, 2], np.uint8).view(np.bool_)[:2])
    # writes through a view of another dtype land in the base
    v = x.view(np.int32)
    hv = host.view(np.int32)
    v[1, 1] = 0x3F800000
    hv[1, 1] = 0x3F800000
    check(x, host)


def test_view_dtype_of_empty_array(ctx):
    zero = np.zeros((3, 0), np.uint8)
    check(ga.asarray(zero, context=ctx).view(np.int32), zero.view(np.int32), strides=False)
    check(ga.zeros((0, 8), np.uint8, context=ctx).view(np.int32),
          np.zeros((0, 8), np.uint8).view(np.int32), strides=False)


def test_view_dtype_errors(ctx):
    x = ga.asarray(host_data(np.float32, (2, 3)), context=ctx)
    with pytest.raises(ValueError):
        x.view(np.float64)            # 12 bytes per row is not a multiple of 8
    with pytest.raises(ValueError):
        x[:, ::2].view(np.int16)      # last axis not contiguous
    with pytest.raises(ValueError):
        x.T.view(np.int16)
    with pytest.raises(ValueError):
        ga.asarray(np.array(1.0, np.float32), context=ctx).view(np.int16)  # 0-d
    with pytest.raises(UnsupportedError):
        x.view(object)


def test_broadcast_to(ctx):
    for shape, target in [((3,), (2, 3)), ((1, 3), (4, 2, 3)), ((), (2, 2)), ((2, 1), (2, 5)),
                          ((3,), (3,)), ((1,), (0,)), ((2, 1), (3, 2, 0))]:
        host = host_data(np.int32, shape)
        x = ga.asarray(host, context=ctx)
        v, ref = ga.broadcast_to(x, target), np.broadcast_to(host, target)
        check(v, ref, strides=bool(ref.size))
        assert v.base is x
        assert not v.flags.writeable
        assert not v.flags.owndata


def test_broadcast_to_is_read_only(ctx):
    x = ga.asarray(np.arange(3, dtype=np.int32), context=ctx)
    v = ga.broadcast_to(x, (2, 3))
    for write in (lambda: v.__setitem__(Ellipsis, 1), lambda: v.fill(2),
                  lambda: v.__setitem__((0, 1), 5), lambda: v[1].fill(3),
                  lambda: v.set(np.zeros((2, 3), np.int32)),
                  lambda: v.__setitem__(Ellipsis, ga.zeros(3, "int32", context=ctx))):
        with pytest.raises(ReadOnlyError) as info:
            write()
        assert isinstance(info.value, ValueError)
    check(x, np.arange(3, dtype=np.int32))
    assert not v[0].flags.writeable and not v.T.flags.writeable
    r, ref = v.reshape(6), np.broadcast_to(np.arange(3, dtype=np.int32), (2, 3)).reshape(6)
    check(r, ref)
    assert r.flags.writeable == ref.flags.writeable  # a copy
    with pytest.raises(ValueError):
        ga.broadcast_to(x, (2, 4))
    with pytest.raises(ValueError):
        ga.broadcast_to(x, ())
    # copies of a broadcast view are ordinary writeable arrays
    c = v.copy()
    c[0, 0] = 9
    check(c, np.array([[9, 1, 2], [0, 1, 2]], np.int32))


def test_broadcast_to_cannot_be_made_writeable(ctx):
    """A broadcast view stays read-only: its elements alias each other."""
    x = ga.asarray(np.arange(3, dtype=np.int32), context=ctx)
    v = ga.broadcast_to(x, (2, 3))
    with pytest.raises(ValueError):
        v.flags.writeable = True
    assert not v.flags.writeable


# ============================================================== copies

def _layouts():
    base_c = host_data(np.float32, (3, 4, 5))
    base_f = np.asfortranarray(base_c)
    return {
        "C": (base_c, lambda a: a),
        "F": (base_f, lambda a: a),
        "negative": (base_c, lambda a: a[::-1, :, ::-2]),
        "offset": (base_c, lambda a: a[1:, 2:, 1:4]),
        "offset-1d": (base_c, lambda a: a[2, 1, 1:]),
        "reversed-1d": (base_c, lambda a: a[1, 2, ::-1]),
        "transposed": (base_c, lambda a: a.T),
        "0-d": (base_c, lambda a: a[1, 2, 3]),
        "empty": (base_c, lambda a: a[:, 4:1]),
    }


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("layout", list(_layouts()))
def test_copy_orders(ctx, layout, order):
    base, take = _layouts()[layout]
    x = ga.asarray(base, context=ctx)
    hv, gv = take(base), take(x)
    ref, c = hv.copy(order), gv.copy(order)
    check(c, ref)
    assert c.flags.c_contiguous == ref.flags.c_contiguous
    assert c.flags.f_contiguous == ref.flags.f_contiguous
    assert c.base is None and c.flags.owndata and c.offset == 0
    if c.size:
        c[...] = 0  # independent of the base
        check(x, base)


def test_copy_bad_order(ctx):
    with pytest.raises(ValueError):
        ga.zeros(3, "int8", context=ctx).copy("X")


# -- astype

_PAIRS = [
    (np.float32, d) for d in ALL_DTYPES  # one full row
] + [
    (np.bool_, np.int8), (np.bool_, np.float32), (np.bool_, np.complex64), (np.int8, np.bool_),
    (np.int32, np.float16), (np.int32, np.uint8), (np.int64, np.float32),
    (np.uint64, np.float64), (np.int16, np.complex128), (np.uint16, np.float16),
    (np.float64, np.float16), (np.float64, np.int64), (np.float16, np.float32),
    (np.float16, np.int16), (np.complex64, np.float32), (np.complex64, np.bool_),
    (np.complex64, np.int32), (np.complex64, np.complex128), (np.complex128, np.complex64),
    (np.complex128, np.float16),
]


def _cast_source(src, dst):
    """Values of src whose cast to dst numpy defines exactly (no out-of-range float->int)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src.kind in "fc":
        re_ = [0.0, -0.0, 0.5, 1.5, 2.9, 100.25, 65504.0, 1e-3, 7.0, 0.75, -2.7, -0.5, -100.9,
               -1.0, 1e30, 1 + 2.0**-11 + 2.0**-40, 3.14159265358979, 1e-8, -6e-8, 70000.5]
        if dst.kind in "iu":
            info = np.iinfo(dst)
            re_ = [v for v in re_ if info.min <= np.trunc(v) <= info.max]
        else:
            re_ += [np.inf, -np.inf, np.nan]
        re_ = np.array(re_)
        v = re_ + 1j * np.linspace(-3, 3, len(re_)) if src.kind == "c" else re_
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            v = v.astype(src)
        if dst.kind in "iu":  # what rounding to src pushed out of range goes too
            info = np.iinfo(dst)
            keep = (np.trunc(v.real) >= info.min) & (np.trunc(v.real) <= info.max)
            v = v[keep & np.isfinite(v.real)]
        return v
    if src == np.bool_:
        return np.array([True, False, True])
    info = np.iinfo(src)
    vals = [0, 1, 2, 7, 100, int(info.max), int(info.min), int(info.max) - 1]
    if src.kind == "i":
        vals += [-1, -2, -100]
    if src.itemsize >= 4:
        vals += [2**24 + 1, 2**24 + 3, 300, 255, 256, 65519, 65520]
    if src.itemsize == 8:
        vals += [2**53 + 1, 2**60 + 7]
    return np.array(vals, dtype=object).astype(src)


@pytest.mark.parametrize("src,dst", _PAIRS, ids=[f"{_name(a)}->{_name(b)}" for a, b in _PAIRS])
def test_astype_matches_numpy_bits(ctx, src, dst):
    need(ctx, src, dst)
    host = _cast_source(src, dst)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        ref = host.astype(dst)
    y = ga.asarray(host, context=ctx).astype(dst)
    assert y.dtype == ref.dtype and y.shape == ref.shape and y.strides == ref.strides
    out = y.get()
    if ref.dtype.kind in "fc":
        # exact bits, NaN included (every NaN here comes from a NaN of numpy's too)
        np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
        keep = ~np.isnan(ref)
        np.testing.assert_array_equal(bits(out[keep]), bits(ref[keep]))
    else:
        np.testing.assert_array_equal(out, ref)


def test_astype_single_rounding_to_float16(ctx):
    """double -> half rounds once (numpy), not double -> float -> half."""
    need(ctx, np.float64, np.complex128)
    v = 1 + 2.0**-11 + 2.0**-40   # just above a half-way point between two halves
    for src in (np.float64, np.complex128):
        host = np.array([v, -v, 2048 + 1 + 2.0**-30], src)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = host.astype(np.float16)
        out = ga.asarray(host, context=ctx).astype(np.float16).get()
        np.testing.assert_array_equal(bits(out), bits(ref), err_msg=_name(src))


def test_astype_of_views_and_orders(ctx):
    need(ctx, np.float64)
    host = host_data(np.float32, (3, 4))
    x = ga.asarray(host, context=ctx)
    check(x[::-1, ::2].astype(np.float64), host[::-1, ::2].astype(np.float64))
    f = np.asfortranarray(host)
    xf = ga.asarray(f, context=ctx)
    for order in ("K", "A", "C", "F"):
        y, ref = xf.astype(np.int16, order=order), f.astype(np.int16, order=order)
        check(y, ref)
    check(x.T.astype(np.int16), host.T.astype(np.int16))  # K keeps the F layout of x.T
    assert x.astype(np.float32, copy=False) is x
    y = x.astype(np.float32)
    assert y is not x and y.base is None
    y[...] = 0
    check(x, host)
    check(x.astype("int16", copy=False), host.astype("int16"))


def test_copy_and_astype_order_k_follow_memory_order(ctx):
    """order='K' keeps the memory order of strided views, as numpy does."""
    f = np.asfortranarray(host_data(np.float32, (3, 4)))
    xf = ga.asarray(f, context=ctx)
    for take in (lambda a: a[::-1], lambda a: a[:, ::2]):
        ref, c = take(f).copy("K"), take(xf).copy("K")
        check(c, ref)
    base = host_data(np.float32, (2, 3, 4))
    hv = base.transpose(1, 0, 2)
    gv = ga.asarray(base, context=ctx).transpose(1, 0, 2)
    check(gv.astype(np.int16), hv.astype(np.int16))


# -- fill and scalar setitem

FILL_SCALARS = [True, False, 3, 0, 2.5, np.bool_(True), np.int8(-3), np.uint8(200),
                np.int64(2**40 + 1), np.uint64(7), np.float16(1.5), np.float32(0.25),
                np.float64(3.75), np.complex64(2 + 0j), np.complex128(1.5 - 2j), 1 + 2j]


def _fill_cases(dtype):
    for value in FILL_SCALARS:
        host = np.zeros((3, 4), dtype)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                host[...] = value
        except (TypeError, OverflowError, ValueError) as e:
            yield value, None, type(e)
            continue
        yield value, host, None


def _numpy_fill(h, key, value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h[key] = value


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_name)
def test_fill_contiguous(ctx, dtype):
    need(ctx, dtype)
    for value, _, err in _fill_cases(dtype):
        for order in "CF":
            x = ga.empty((3, 4), dtype, order=order, context=ctx)
            if err is not None:
                with pytest.raises(err):
                    x.fill(value)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert x.fill(value) is x
            ref = np.empty((3, 4), dtype, order=order)
            _numpy_fill(ref, Ellipsis, value)
            check(x, ref)
    # an offset contiguous view keeps its neighbours
    host = host_data(dtype, (5,))
    x = ga.asarray(host, context=ctx)
    x[1:3].fill(1)
    host[1:3] = 1
    check(x, host)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_name)
def test_fill_noncontiguous(ctx, dtype):
    need(ctx, dtype)
    for value, _, err in _fill_cases(dtype):
        if err is not None:
            continue
        host = host_data(dtype, (3, 4))
        x = ga.asarray(host, context=ctx)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x[:, ::2].fill(value)
            x[::-1, 1::2] = value
        _numpy_fill(host, (slice(None), slice(None, None, 2)), value)
        _numpy_fill(host, (slice(None, None, -1), slice(1, None, 2)), value)
        check(x, host)


def test_scalar_setitem(ctx):
    host = host_data(np.int32, (3, 4))
    x = ga.asarray(host, context=ctx)
    for key, value in [(1, 5), ((slice(None), slice(None, None, 2)), 2.7), (Ellipsis, True),
                       ((0, -1), np.int64(-8)), ((slice(None, None, -2), 1), np.float32(9.5)),
                       ((2, slice(1, 3)), np.array(11)), ((), np.uint8(3)),
                       (slice(5, 9), 100)]:
        x[key] = value
        host[key] = value
        check(x, host)
    f = ga.zeros((), "float32", context=ctx)
    f[()] = 1.25
    check(f, np.array(1.25, np.float32))
    f[...] = 2
    check(f, np.array(2, np.float32))


# -- setitem with arrays

def test_setitem_numpy_arrays_broadcast(ctx):
    host = host_data(np.int32, (3, 4))
    x = ga.asarray(host, context=ctx)
    cases = [
        ((slice(1, None), slice(None, None, 2)), np.array([[10, 11], [12, 13]])),
        (Ellipsis, np.arange(4, dtype=np.int32)),                 # a row to every row
        (Ellipsis, np.arange(3, dtype=np.int16)[:, None]),        # a column to every column
        ((slice(None), 1), np.array([7.9, -2.5, 3.0])),           # float64 -> int32, truncation
        (0, [1, 2, 3, 4]),                                        # a list
        (1, np.array([[[5, 6, 7, 8]]])),                          # leading 1s dropped
        ((slice(None, None, -1), slice(None, None, -1)), np.arange(12).reshape(3, 4)),
        ((slice(None), slice(None, None, 3)), np.array([[1], [2], [3]], np.uint8)),
        (Ellipsis, np.array(-4)),                                 # 0-d array
        ((2, slice(2, 2)), np.zeros(0)),                          # empty
    ]
    for key, value in cases:
        x[key] = value
        host[key] = value
        check(x, host)


def test_setitem_gpuarrays_broadcast(ctx):
    hy = host_data(np.float32, (2, 3, 4))
    y = ga.asarray(hy, context=ctx)
    host = host_data(np.float32, (3, 4))
    x = ga.asarray(host, context=ctx)
    cases = [
        ((slice(1, None), slice(None, None, 2)), lambda a: a[0, 1:, ::2]),
        ((slice(1, None), slice(None, None, 2)), lambda a: a[0, 0, ::2]),   # broadcasts rows
        (Ellipsis, lambda a: a[1, 2]),                                     # x[...] = row
        (Ellipsis, lambda a: a[1:, ::-1, :]),                              # (1,3,4): lead 1
        (0, lambda a: a[None, None, 0, 1]),                                # (1,1,4) -> (4,)
        ((slice(None), 0), lambda a: a[1, :, 3]),
        ((slice(None, None, -1), slice(None, None, 2)), lambda a: a[0, :, 1:2]),
        (Ellipsis, lambda a: a[0, 0, 0]),                                  # 0-d array
        (Ellipsis, lambda a: a[1].T.T),
    ]
    for key, take in cases:
        x[key] = take(y)
        host[key] = take(hy)
        check(x, host)
    check(y, hy)  # the sources are untouched
    # another dtype is cast as numpy casts
    xi = ga.zeros((2, 4), np.int16, context=ctx)
    xi[...] = y[0, :2]
    check(xi, hy[0, :2].astype(np.int16))


def test_setitem_overlapping_self_assignment(ctx):
    cases = [
        ((5,), lambda a: a[1:], lambda a: a[:-1]),
        ((5,), lambda a: a[:-1], lambda a: a[1:]),
        ((6,), lambda a: a[::-1], lambda a: a),
        ((3, 4), lambda a: a[1:], lambda a: a[:-1]),
        ((3, 4), lambda a: a[:, ::-1], lambda a: a),
        ((4, 4), lambda a: a, lambda a: a.T),
        ((3, 4), lambda a: a[:, 1:], lambda a: a[:, :1]),
        ((3, 4), lambda a: a[1:, 1:], lambda a: a[:-1, :-1]),
        ((8,), lambda a: a[::2], lambda a: a[1::2]),
    ]
    for shape, dst, src in cases:
        host = host_data(np.int32, shape)
        x = ga.asarray(host, context=ctx)
        dst(x)[...] = src(x)
        dst(host)[...] = src(host)
        check(x, host)


def test_setitem_shape_mismatch(ctx):
    x = ga.zeros((3, 4), "float32", context=ctx)
    for key, value in [(Ellipsis, np.ones(3)), (0, np.ones((2, 4))), (Ellipsis, np.ones((3, 5))),
                       (Ellipsis, ga.zeros(3, "float32", context=ctx)),
                       (0, ga.zeros((2, 4), "float32", context=ctx)),
                       (slice(None), ga.zeros((4, 3), "float32", context=ctx)),
                       (Ellipsis, np.ones((2, 3, 4)))]:
        with pytest.raises(ValueError):
            np.zeros((3, 4), np.float32)[key] = (value.get() if isinstance(value, ga.GpuArray)
                                                 else value)
        with pytest.raises(ValueError):
            x[key] = value
    check(x, np.zeros((3, 4), np.float32))


# -- host transfers

def test_get_of_noncontiguous(ctx):
    base = host_data(np.int16, (3, 4, 5))
    x = ga.asarray(base, context=ctx)
    for take in (lambda a: a[::-1], lambda a: a[:, ::-2, 1:], lambda a: a.T,
                 lambda a: a.transpose(1, 2, 0), lambda a: a[1:, 2], lambda a: a[2, 3, 4],
                 lambda a: a[..., ::-1].T[1:, ::2], lambda a: a[:, :0], lambda a: a[None, 1]):
        ref = take(base)
        out = take(x).get()
        assert isinstance(out, np.ndarray)
        assert out.dtype == ref.dtype and out.shape == ref.shape
        np.testing.assert_array_equal(out, ref)
        assert out.flags.c_contiguous or out.flags.f_contiguous
    assert x.T.get().flags.f_contiguous  # an F-contiguous array comes back as F


@pytest.mark.parametrize("out_order", ["C", "F"])
def test_get_into_out(ctx, out_order):
    base = host_data(np.float32, (3, 4))
    x = ga.asarray(base, context=ctx)
    for take in (lambda a: a, lambda a: a.T, lambda a: a[::-1, 1:], lambda a: a[:, ::2]):
        ref = take(base)
        out = np.full(ref.shape, -1, np.float32, order=out_order)
        got = take(x).get(out=out)
        assert got is out
        np.testing.assert_array_equal(out, ref)
    # a non-contiguous out
    big = np.zeros((3, 8), np.float32)
    x.get(out=big[:, ::2])
    np.testing.assert_array_equal(big[:, ::2], base)
    with pytest.raises(ValueError):
        x.get(out=np.empty((4, 3), np.float32))
    with pytest.raises(ValueError):
        x.get(out=np.empty((3, 4), np.float64))


def test_numpy_array_protocol(ctx):
    need(ctx, np.float64)
    base = host_data(np.float32, (2, 3))
    x = ga.asarray(base, context=ctx)
    a = np.asarray(x)
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    np.testing.assert_array_equal(a, base)
    np.testing.assert_array_equal(np.asarray(x[:, ::-1]), base[:, ::-1])
    b = np.asarray(x, dtype=np.float64)
    assert b.dtype == np.float64
    np.testing.assert_array_equal(b, base.astype(np.float64))
    c = np.array(x, copy=True)
    np.testing.assert_array_equal(c, base)
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":  # numpy 1.x: copy=False copies if needed
        with pytest.raises(ValueError):
            np.array(x, copy=False)
    np.testing.assert_array_equal(np.asarray(ga.asarray(np.array(3, np.int8), context=ctx)),
                                  np.array(3, np.int8))
    assert np.asarray(x.T).shape == (3, 2)


def test_set(ctx):
    need(ctx, np.float64)
    x = ga.zeros((3, 4), np.float32, context=ctx)
    h = host_data(np.float32, (3, 4))
    assert x.set(h) is x
    check(x, h)
    x.set(h.T.copy().T)                       # F-ordered host into a C array
    check(x, h)
    x.set(h.astype(np.float64) + 0.5)         # cast as numpy casts
    check(x, (h.astype(np.float64) + 0.5).astype(np.float32))
    xf = ga.zeros((3, 4), np.float32, order="F", context=ctx)
    xf.set(h)
    check(xf, np.asfortranarray(h))
    # non-contiguous views
    host = host_data(np.int32, (4, 6))
    y = ga.asarray(host, context=ctx)
    for key in [(slice(None), slice(None, None, 2)), (slice(None, None, -1), slice(1, 3)),
                (slice(1, None), 0), (Ellipsis,), (slice(None, None, -2), slice(None, None, -3))]:
        val = -np.arange(host[key].size, dtype=np.int32).reshape(host[key].shape) - 1
        y[key].set(val)
        host[key] = val
        check(y, host)
    y.T[1:3].set(np.full((2, 4), 9))
    host.T[1:3] = 9
    check(y, host)
    ga.zeros((0, 3), np.int8, context=ctx).set(np.zeros((0, 3)))


def test_set_wrong_shape(ctx):
    x = ga.zeros((3, 4), np.float32, context=ctx)
    for bad in (np.zeros((4, 3)), np.zeros(12), np.zeros((1, 3, 4)), np.zeros(4)):
        with pytest.raises(ValueError):
            x.set(bad)
    with pytest.raises(ValueError):
        x[:, ::2].set(np.zeros((3, 3)))
    check(x, np.zeros((3, 4), np.float32))
