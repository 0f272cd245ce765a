"""`ga.fuse` (trace a function into one elementwise kernel) and `ElemwiseKernel` (user kernels in
pyopencl's form). numpy is the oracle for values and dtypes."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpuarr as ga
from gpuarr import elemwise
from gpuarr.elemwise import ElemwiseKernel
from gpuarr.errors import (
    ArgumentError,
    ArgumentTypeError,
    ContextMismatch,
    KernelBuildError,
    ShapeError,
    UnsupportedError,
)


def _host(shape, dtype, seed=0, lo=-5, hi=5):
    """Deterministic test data of `dtype` (nonzero, small) in `shape`."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind == "u":
        return rng.integers(1, hi, size=shape).astype(dt)
    if dt.kind == "i":
        v = rng.integers(lo, hi, size=shape)
        return np.where(v == 0, 1, v).astype(dt)
    v = rng.uniform(lo, hi, size=shape)
    if dt.kind == "c":
        v = v + 1j * rng.uniform(lo, hi, size=shape)
    return v.astype(dt)


def _dev(host, ctx):
    return ga.asarray(host, context=ctx)


def _check(got, want, rtol=1e-6, atol=0.0):
    """got (GpuArray) equals want (numpy) in dtype, shape and values."""
    assert isinstance(got, ga.GpuArray)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got.get(), want)
    else:
        np.testing.assert_allclose(got.get(), want, rtol=rtol, atol=atol)


def _elemwise_kernels(ctx):
    return {k for k in ctx.kernels if k[0] == "elemwise"}


@pytest.fixture
def count_runs(monkeypatch):
    """Counts elemwise.run calls (each is one kernel enqueue)."""
    calls = []
    real = elemwise.run

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(elemwise, "run", counting)
    return calls


def _need_fp64(ctx, *dts):
    if not ctx.fp64 and any(np.dtype(d) in (np.float64, np.complex128) for d in dts):
        pytest.skip("device without fp64")


# =================================================================== fuse: values

def test_fuse_single_output(ctx):
    @ga.fuse
    def f(x, y):
        return ga.exp(x) * y - x / 2

    hx, hy = _host((7, 9), np.float32, 1), _host((7, 9), np.float32, 2)
    _check(f(_dev(hx, ctx), _dev(hy, ctx)), np.exp(hx) * hy - hx / 2, rtol=1e-5)
    assert f.__name__ == "f"


def test_fuse_decorator_with_parentheses_and_numpy_ufuncs(ctx):
    @ga.fuse()
    def f(x):
        return np.sqrt(np.exp(x) + 1) + np.sin(x)

    hx = _host(100, np.float32, 3)
    _check(f(_dev(hx, ctx)), np.sqrt(np.exp(hx) + 1) + np.sin(hx), rtol=1e-5)


def test_fuse_multiple_outputs(ctx):
    @ga.fuse
    def f(x, y):
        return x + y, x - y, x * y > 0

    hx, hy = _host((4, 5), np.float32, 4), _host((4, 5), np.float32, 5)
    out = f(_dev(hx, ctx), _dev(hy, ctx))
    assert isinstance(out, tuple) and len(out) == 3
    for got, want in zip(out, (hx + hy, hx - hy, hx * hy > 0)):
        _check(got, want)


def test_fuse_returning_an_input_and_the_same_value_twice(ctx):
    @ga.fuse
    def f(x):
        y = x * 3
        return x, y, y

    hx = _host(10, np.int32, 6)
    a, b, c = f(_dev(hx, ctx))
    _check(a, hx)
    _check(b, hx * 3)
    _check(c, hx * 3)


def test_fuse_broadcasting(ctx):
    @ga.fuse
    def f(x, y):
        return x * y + y, x - y

    hx, hy = _host((3, 1, 4), np.float32, 7), _host((5, 1), np.float32, 8)
    s, d = f(_dev(hx, ctx), _dev(hy, ctx))
    _check(s, hx * hy + hy)
    _check(d, hx - hy)
    assert s.shape == (3, 5, 4)


def test_fuse_broadcast_mismatch_raises(ctx):
    @ga.fuse
    def f(x, y):
        return x + y

    with pytest.raises(ShapeError):
        f(ga.zeros((3, 4), "float32", context=ctx), ga.zeros((5,), "float32", context=ctx))


@pytest.mark.parametrize("view", ["reversed", "transposed", "offset", "mixed"])
def test_fuse_non_contiguous_inputs(ctx, view):
    @ga.fuse
    def f(x, y):
        return ga.where(x > y, x * 2.0, y - x), x + y

    hx, hy = _host((6, 8), np.float32, 9), _host((8, 6), np.float32, 10)
    x, y = _dev(hx, ctx), _dev(hy, ctx)
    cut = {
        "reversed": lambda a, h: (a[::-1, ::-2], h[::-1, ::-2]),
        "transposed": lambda a, h: (a.T, h.T),
        "offset": lambda a, h: (a[1:4, 2:6], h[1:4, 2:6]),
        "mixed": lambda a, h: (a[::-1].T[1:5, ::2], h[::-1].T[1:5, ::2]),
    }[view]
    x2, hx2 = cut(x, hx)
    if view == "transposed":
        y2, hy2 = y, hy                           # (8, 6): x.T is (8, 6)
    else:
        y2, hy2 = cut(y.T, hy.T)                  # the same view of a (6, 8) transpose
    a, b = f(x2, y2)
    _check(a, np.where(hx2 > hy2, hx2 * 2.0, hy2 - hx2).astype(np.float32))
    _check(b, hx2 + hy2)
    # the inputs are untouched
    np.testing.assert_array_equal(x.get(), hx)
    np.testing.assert_array_equal(y.get(), hy)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    steps=st.lists(st.sampled_from([1, 2, -1, -2]), min_size=3, max_size=3),
    drop=st.lists(st.booleans(), min_size=3, max_size=3),
    transpose=st.booleans(),
)
def test_fuse_hypothesis_layouts(ctx, shape, steps, drop, transpose):
    """Random strided views, broadcast against a lower-rank operand: one dtype, few builds."""
    @ga.fuse
    def f(x, y):
        return x * y - 1.5, ga.maximum(x, y)

    big = tuple(2 * n for n in shape)
    hx = _host(big, np.float32, 11)
    key = tuple(slice(0, n * abs(s), s) if s > 0 else slice(n * abs(s) - 1, None, s)
                for s, n in zip(steps, shape))
    hxv = hx[key]
    xv = _dev(hx, ctx)[key]
    if transpose:
        hxv, xv = hxv.T, xv.T
    yshape = tuple(1 if d else n for d, n in zip(drop, hxv.shape))[1:]
    hy = _host(yshape, np.float32, 12)
    a, b = f(xv, _dev(hy, ctx))
    _check(a, hxv * hy - np.float32(1.5))
    _check(b, np.maximum(hxv, hy))


# =================================================================== fuse: scalars and dtypes

def test_fuse_python_scalar_argument_is_weak(ctx):
    @ga.fuse
    def f(x, s):
        return x + s

    hx = _host(10, np.int8, 13)
    got = f(_dev(hx, ctx), 3)
    _check(got, hx + 3)
    assert got.dtype == np.int8
    _check(f(_dev(hx, ctx), 7), hx + 7)                 # same kernel, another value
    hf = _host(10, np.float32, 14)
    _check(f(_dev(hf, ctx), 0.25), hf + 0.25)           # float32 stays float32
    _check(f(_dev(hx, ctx), 0.5), hx + 0.5)             # int8 + float -> float64 as numpy


def test_fuse_python_int_out_of_range_overflows_like_numpy(ctx):
    @ga.fuse
    def f(x, s):
        return x + s

    hx = _host(4, np.int8, 15)
    with pytest.raises(OverflowError):
        hx + 300
    with pytest.raises(OverflowError):
        f(_dev(hx, ctx), 300)


def test_fuse_python_bool_scalar_argument(ctx):
    @ga.fuse
    def f(x, s):
        return x + s

    hx = _host(6, np.int8, 16)
    _check(f(_dev(hx, ctx), True), hx + True)   # numpy: int8


def test_fuse_arithmetic_of_weak_scalars_stays_weak(ctx):
    """The same function on numpy arrays is the oracle: s * s of Python floats is a Python
    float, so float32 x * s - s * s stays float32."""
    def body(x, s):
        return x * s - s * s

    hx = _host(10, np.float32, 42)
    want = body(hx, 1.5)
    assert want.dtype == np.float32
    _check(ga.fuse(body)(_dev(hx, ctx), 1.5), want)


def test_fuse_python_constants_in_body(ctx):
    @ga.fuse
    def f(x):
        return x * 2 + 1, 1 - x, x // 2, x % 3, -x

    hx = _host((3, 4), np.int16, 17)
    for got, want in zip(f(_dev(hx, ctx)), (hx * 2 + 1, 1 - hx, hx // 2, hx % 3, -hx)):
        _check(got, want)

    @ga.fuse
    def g(x):
        return x * 2.5 + 1

    hf = _host(5, np.float32, 18)
    _check(g(_dev(hf, ctx)), hf * 2.5 + 1)


@pytest.mark.parametrize("position", [0, 1])
@pytest.mark.parametrize(("adt", "scalar"), [
    (np.int8, np.int16(3)),
    (np.float32, np.float64(2)),
    (np.int32, np.float32(1.5)),
])
def test_fuse_numpy_scalar_argument_is_strong(ctx, adt, scalar, position):
    _need_fp64(ctx, np.result_type(adt, scalar))

    @ga.fuse
    def f(a, b):
        return a * b

    hx = _host(8, adt, 19)
    args = (_dev(hx, ctx), scalar) if position else (scalar, _dev(hx, ctx))
    want = hx * scalar if position else scalar * hx
    got = f(*args)
    assert got.dtype == want.dtype   # e.g. float32 * np.float64 -> float64
    _check(got, want)


@pytest.mark.parametrize("constant", [np.float64(2), np.int16(3), np.complex64(1 + 1j)])
def test_fuse_numpy_scalar_constant_in_body(ctx, constant):
    _need_fp64(ctx, np.result_type(np.float32, constant))

    @ga.fuse
    def f(x):
        return x * constant

    hx = _host(6, np.float32, 20)
    _check(f(_dev(hx, ctx)), hx * constant)


@pytest.mark.parametrize(("d1", "d2"), [
    (np.int8, np.uint8),
    (np.int32, np.float32),
    (np.uint64, np.int64),
    (np.float16, np.int16),
    (np.bool_, np.int8),
    (np.bool_, np.bool_),
    (np.uint16, np.float16),
    (np.complex64, np.float64),
])
def test_fuse_mixed_dtypes_promote_like_numpy(ctx, d1, d2):
    _need_fp64(ctx, np.result_type(d1, d2))

    @ga.fuse
    def f(x, y):
        return x * y + x

    hx, hy = _host((4, 3), d1, 21), _host((4, 3), d2, 22)
    want = hx * hy + hx
    got = f(_dev(hx, ctx), _dev(hy, ctx))
    assert got.dtype == want.dtype
    rtol = 3e-3 if want.dtype == np.float16 else 1e-6
    _check(got, want, rtol=rtol, atol=1e-2 if want.dtype == np.float16 else 0)


def test_fuse_bool_outputs_and_where(ctx):
    @ga.fuse
    def f(x, y):
        m = (x > 0) & (y <= x)
        return m, ga.where(m, x, y), x == y, ~m | (x != 1)

    hx, hy = _host((5, 6), np.int32, 23), _host((5, 6), np.int32, 24)
    hy[0] = hx[0]
    m = (hx > 0) & (hy <= hx)
    want = (m, np.where(m, hx, hy), hx == hy, ~m | (hx != 1))
    for got, w in zip(f(_dev(hx, ctx), _dev(hy, ctx)), want):
        _check(got, w)


def test_fuse_where_with_python_scalar_keeps_numpy_dtype(ctx):
    @ga.fuse
    def f(x):
        return ga.where(x > 0, x, 0.0)

    hx = _host(9, np.float32, 25)
    want = np.where(hx > 0, hx, 0.0)           # numpy 2: float32 (the 0.0 is weak)
    got = f(_dev(hx, ctx))
    assert got.dtype == want.dtype
    _check(got, want)


def test_fuse_float16(ctx):
    @ga.fuse
    def f(x, y):
        return ga.exp(x) * y - x, x < y

    hx, hy = _host(64, np.float16, 26, -2, 2), _host(64, np.float16, 27, -2, 2)
    a, b = f(_dev(hx, ctx), _dev(hy, ctx))
    want = np.exp(hx) * hy - hx
    assert want.dtype == np.float16 and a.dtype == np.float16
    np.testing.assert_allclose(a.get().astype(np.float32), want.astype(np.float32),
                               rtol=4e-3, atol=2e-2)
    _check(b, hx < hy)


def test_fuse_float16_with_scalar(ctx):
    @ga.fuse
    def f(x, s):
        return x * s + 0.5

    hx = _host(32, np.float16, 28, -2, 2)
    got = f(_dev(hx, ctx), 1.5)
    want = hx * 1.5 + 0.5
    assert got.dtype == want.dtype == np.float16
    np.testing.assert_allclose(got.get().astype(np.float32), want.astype(np.float32),
                               rtol=2e-3, atol=1e-3)


def test_fuse_complex(ctx):
    @ga.fuse
    def f(x, y):
        return x * y + x, ga.absolute(x)

    hx, hy = _host(7, np.complex64, 29), _host(7, np.complex64, 30)
    a, b = f(_dev(hx, ctx), _dev(hy, ctx))
    _check(a, hx * hy + hx, rtol=1e-5)
    _check(b, np.abs(hx), rtol=1e-5)


def test_fuse_numpy_array_argument_is_uploaded(ctx):
    @ga.fuse
    def f(x, y):
        return x - y

    hx, hy = _host(5, np.float32, 31), _host(5, np.float32, 32)
    _check(f(_dev(hx, ctx), hy), hx - hy)


# =================================================================== fuse: one kernel, caching

def test_fuse_one_call_is_one_kernel(ctx, count_runs):
    @ga.fuse
    def f(x, y):
        t = ga.exp(x) + ga.sin(y)
        return ga.where(t > 1, t * x, -y), ga.sqrt(ga.absolute(t))

    hx, hy = _host(50, np.float32, 33), _host(50, np.float32, 34)
    x, y = _dev(hx, ctx), _dev(hy, ctx)
    before = _elemwise_kernels(ctx)
    a, b = f(x, y)
    assert len(count_runs) == 1
    new = _elemwise_kernels(ctx) - before
    assert len(new) == 1
    (loop,) = {k[1] for k in new}
    entry = f._cache[next(iter(f._cache))]
    assert entry[0] is loop or entry[0] == loop
    for step in ("exp(", "sin(", "sqrt(", "fabs(", "?", "out0 =", "out1 ="):
        assert step in loop.operation, (step, loop.operation)
    t = np.exp(hx) + np.sin(hy)
    _check(a, np.where(t > 1, t * hx, -hy), rtol=1e-5)
    _check(b, np.sqrt(np.abs(t)), rtol=1e-5)


def test_fuse_caches_per_dtype_signature(ctx, count_runs):
    @ga.fuse
    def f(x, y):
        return (x - y) * (x + y) - x * 7

    hx16, hy16 = _host(20, np.int16, 35), _host(20, np.uint16, 36)
    x16, y16 = _dev(hx16, ctx), _dev(hy16, ctx)
    f(x16, y16)
    assert len(f._cache) == 1
    kernels = _elemwise_kernels(ctx)
    plans = len(ctx.plans)
    _check(f(x16, y16), (hx16 - hy16) * (hx16 + hy16) - hx16 * 7)  # same dtypes, same shapes
    assert _elemwise_kernels(ctx) == kernels
    assert len(ctx.plans) == plans
    assert len(f._cache) == 1
    # new shape, same dtypes: no new kernel (sizes are arguments)
    hx2, hy2 = _host((3, 11), np.int16, 37), _host((3, 11), np.uint16, 38)
    _check(f(_dev(hx2, ctx), _dev(hy2, ctx)), (hx2 - hy2) * (hx2 + hy2) - hx2 * 7)
    assert _elemwise_kernels(ctx) == kernels
    assert len(f._cache) == 1
    # new dtypes: a new trace and a new kernel
    hx8, hy8 = _host(20, np.int8, 39), _host(20, np.uint8, 40)
    _check(f(_dev(hx8, ctx), _dev(hy8, ctx)), (hx8 - hy8) * (hx8 + hy8) - hx8 * 7)
    assert len(f._cache) == 2
    assert len(_elemwise_kernels(ctx) - kernels) == 1
    assert len(count_runs) == 4


def test_fuse_scalar_values_share_one_kernel(ctx):
    @ga.fuse
    def f(x, s):
        return x * s - s

    hx = _host(10, np.float32, 41)
    x = _dev(hx, ctx)
    f(x, 1.0)
    kernels = _elemwise_kernels(ctx)
    for s in (2.0, -3.5, 0.125):
        _check(f(x, s), hx * s - s)
    assert _elemwise_kernels(ctx) == kernels
    assert len(f._cache) == 1
    f(x, 2)                                  # a Python int is another signature
    assert len(f._cache) == 2


# =================================================================== fuse: errors

def test_fuse_returning_a_constant_raises(ctx):
    @ga.fuse
    def f(x):
        return 3

    @ga.fuse
    def g(x, s):
        return x + 1, s                      # a weak scalar input is not an array

    x = ga.zeros(4, "float32", context=ctx)
    with pytest.raises(ArgumentError):
        f(x)
    with pytest.raises(ValueError):
        f(x)
    with pytest.raises(ArgumentError):
        g(x, 2.0)


def test_fuse_python_if_on_traced_value_raises(ctx):
    @ga.fuse
    def f(x):
        if x > 0:
            return x
        return -x

    @ga.fuse
    def g(x, y):
        return x and y

    x = ga.zeros(4, "float32", context=ctx)
    with pytest.raises(ArgumentError, match="where"):
        f(x)
    with pytest.raises(ArgumentError):
        g(x, x)


def test_fuse_arrays_of_two_contexts_raise(ctx_pair):
    c0, c1 = ctx_pair

    @ga.fuse
    def f(x, y):
        return x + y

    with pytest.raises(ContextMismatch):
        f(ga.zeros(4, "float32", context=c0), ga.zeros(4, "float32", context=c1))


def test_fuse_unsupported_ops_raise(ctx):
    @ga.fuse
    def bits(x, y):
        return x & y

    @ga.fuse
    def root(x):
        return ga.floor(x) + 1

    xf = ga.zeros(4, "float32", context=ctx)
    with pytest.raises(UnsupportedError):
        bits(xf, xf)                          # numpy: no bitwise_and loop for floats
    with pytest.raises(TypeError):
        bits(xf, xf)
    xc = ga.zeros(4, "complex64", context=ctx)
    with pytest.raises(UnsupportedError):
        root(xc)                              # numpy: no complex floor


def test_fuse_unsupported_operand_raises(ctx):
    @ga.fuse
    def f(x):
        return x + "a"

    x = ga.zeros(4, "float32", context=ctx)
    with pytest.raises((ArgumentError, TypeError)):
        f(x)


# =================================================================== ElemwiseKernel

def test_kernel_basic(ctx):
    k = ElemwiseKernel("float *x, float a, float *y", "y[i] = a * exp(x[i])")
    hx = _host((5, 7), np.float32, 50, -2, 2)
    x = _dev(hx, ctx)
    y = ga.empty((5, 7), "float32", context=ctx)
    k(x, 2.0, y)
    np.testing.assert_allclose(y.get(), np.float32(2.0) * np.exp(hx), rtol=1e-5)
    k(x, -0.5, y)                             # another value, same kernel
    np.testing.assert_allclose(y.get(), np.float32(-0.5) * np.exp(hx), rtol=1e-5)
    np.testing.assert_array_equal(x.get(), hx)


def test_kernel_several_outputs(ctx):
    k = ElemwiseKernel("const float *x, const float *y, float *s, float *d, int *c",
                       "s[i] = x[i] + y[i]; d[i] = x[i] - y[i]; c[i] = x[i] > y[i];",
                       name="sums")
    hx, hy = _host(33, np.float32, 51), _host(33, np.float32, 52)
    s, d = ga.empty(33, "float32", context=ctx), ga.empty(33, "float32", context=ctx)
    c = ga.empty(33, "int32", context=ctx)
    k(_dev(hx, ctx), _dev(hy, ctx), s, d, c)
    np.testing.assert_array_equal(s.get(), hx + hy)
    np.testing.assert_array_equal(d.get(), hx - hy)
    np.testing.assert_array_equal(c.get(), (hx > hy).astype(np.int32))


def test_kernel_strided_operands(ctx):
    k = ElemwiseKernel("float *x, float *y", "y[i] = 2 * x[i] + 1")
    hx = _host((6, 4), np.float32, 53)
    x = _dev(hx, ctx).T                       # (4, 6), transposed
    hbig = np.full((9, 13), -7.0, np.float32)
    big = _dev(hbig, ctx)
    y = big[1::2, 12:0:-2]                    # (4, 6), strided and reversed
    assert y.shape == (4, 6)
    k(x, y)
    want = hbig.copy()
    want[1::2, 12:0:-2] = 2 * hx.T + 1
    np.testing.assert_array_equal(big.get(), want)   # only the view's elements changed


def test_kernel_broadcast_input(ctx):
    k = ElemwiseKernel("float *row, float *col, float *y", "y[i] = row[i] * 10 + col[i]")
    hrow = np.arange(4, dtype=np.float32).reshape(1, 4)
    hcol = np.arange(3, dtype=np.float32).reshape(3, 1)
    y = ga.empty((3, 4), "float32", context=ctx)
    k(_dev(hrow, ctx), _dev(hcol, ctx), y)
    np.testing.assert_array_equal(y.get(), hrow * 10 + hcol)


def test_kernel_shape_mismatch_raises(ctx):
    k = ElemwiseKernel("float *x, float *y", "y[i] = x[i]")
    with pytest.raises(ShapeError):
        k(ga.zeros((3, 4), "float32", context=ctx), ga.zeros((4, 3), "float32", context=ctx))


def test_kernel_flat_index(ctx):
    k = ElemwiseKernel("int *y", "y[i] = i")
    y = ga.empty((3, 5), "int32", context=ctx)
    k(y)
    np.testing.assert_array_equal(y.get(), np.arange(15).reshape(3, 5))
    # on a view, i is the C-order index within the view
    hbig = np.full((6, 10), -1, np.int32)
    big = _dev(hbig, ctx)
    k(big[::2, 1::3].T)
    want = hbig.copy()
    want[::2, 1::3] = np.arange(9).reshape(3, 3).T
    np.testing.assert_array_equal(big.get(), want)


@pytest.mark.parametrize(("ctype", "dtype"), [
    ("int", np.int32), ("long", np.int64), ("unsigned int", np.uint32), ("short", np.int16),
    ("char", np.int8), ("ulong", np.uint64), ("double", np.float64),
])
def test_kernel_types(ctx, ctype, dtype):
    _need_fp64(ctx, dtype)
    k = ElemwiseKernel(f"{ctype} *x, {ctype} a, {ctype} *y", "y[i] = x[i] * a + (x[i] >> 1)"
                       if np.dtype(dtype).kind in "iu" else "y[i] = x[i] * a + x[i] / 4")
    hx = _host(40, dtype, 54, 0, 20)
    y = ga.empty(40, dtype, context=ctx)
    k(_dev(hx, ctx), 3, y)
    integer = np.dtype(dtype).kind in "iu"
    want = hx * dtype(3) + (hx >> 1) if integer else hx * 3 + hx / 4
    np.testing.assert_array_equal(y.get(), want.astype(dtype))


def test_kernel_uchar_is_uint8(ctx):
    """'uchar' names uint8 (dtypes.from_cl_type's own docstring: 'uchar' -> uint8)."""
    k = ElemwiseKernel("uchar *x, uchar *y", "y[i] = x[i] + 1")
    hx = np.arange(10, dtype=np.uint8)
    y = ga.empty(10, "uint8", context=ctx)
    k(_dev(hx, ctx), y)
    np.testing.assert_array_equal(y.get(), hx + 1)


def test_kernel_int_n_scalar(ctx):
    k = ElemwiseKernel("int *x, int n, int *y", "y[i] = x[i] * n + i % n")
    hx = np.arange(12, dtype=np.int32)
    y = ga.empty(12, "int32", context=ctx)
    k(_dev(hx, ctx), 5, y)
    np.testing.assert_array_equal(y.get(), hx * 5 + np.arange(12) % 5)


@pytest.mark.parametrize("layout", ["contiguous", "strided", "per_item_4"])
@pytest.mark.parametrize("name", ["c", "rem", "g", "G"])
def test_kernel_scalar_names_do_not_clash_with_generated_code(ctx, monkeypatch, name, layout):
    """A user's scalar may have any C name; the generated kernel's own variables must not
    capture it (c and rem in the strided variant, g and G in the GPU variant)."""
    if layout == "per_item_4":
        monkeypatch.setattr(ctx, "per_item", 4)
        monkeypatch.setattr(ctx, "plans", {})
    k = ElemwiseKernel(f"int *x, int {name}, int *y", f"y[i] = x[i] * {name}")
    hx = np.arange(24, dtype=np.int32).reshape(4, 6)
    x = _dev(hx, ctx)
    y = ga.zeros((4, 6), "int32", context=ctx)
    if layout == "strided":
        x, y, hx = x[:, ::2], y[:, ::2], hx[:, ::2]
    k(x, 3, y)
    np.testing.assert_array_equal(y.get(), hx * 3)


@pytest.mark.parametrize("n", [1, 5, 4096 * 4 + 3])
def test_gpu_variant_several_elements_per_work_item(ctx, monkeypatch, n):
    """The GPU layout (4 elements per work-item, forced on this device): fused outputs and
    user kernels see every element once, ragged tails included, and i is the flat index."""
    monkeypatch.setattr(ctx, "per_item", 4)
    monkeypatch.setattr(ctx, "plans", {})

    @ga.fuse
    def f(x, y):
        return x * y - 1, ga.where(x > y, x, y)

    hx, hy = _host(n, np.float32, 60), _host(n, np.float32, 61)
    a, b = f(_dev(hx, ctx), _dev(hy, ctx))
    _check(a, hx * hy - 1)
    _check(b, np.where(hx > hy, hx, hy))
    k = ElemwiseKernel("float *x, int *idx, float *y", "idx[i] = i; y[i] = x[i] + 1")
    idx, y = ga.zeros(n, "int32", context=ctx), ga.zeros(n, "float32", context=ctx)
    k(_dev(hx, ctx), idx, y)
    np.testing.assert_array_equal(idx.get(), np.arange(n))
    np.testing.assert_array_equal(y.get(), hx + 1)


def test_kernel_int_scalar_other_name(ctx):
    k = ElemwiseKernel("int *x, int m, float b, int *y", "y[i] = x[i] * m + (int)b")
    hx = np.arange(12, dtype=np.int32)
    y = ga.empty(12, "int32", context=ctx)
    k(_dev(hx, ctx), 5, 2.0, y)
    np.testing.assert_array_equal(y.get(), hx * 5 + 2)


def test_kernel_preamble(ctx):
    pre = "float sq_plus(float v, float w) { return v * v + w; }"
    k = ElemwiseKernel("float *x, float w, float *y", "y[i] = sq_plus(x[i], w)",
                       name="pre", preamble=pre)
    hx = _host(17, np.float32, 55)
    y = ga.empty(17, "float32", context=ctx)
    k(_dev(hx, ctx), 0.5, y)
    np.testing.assert_allclose(y.get(), hx * hx + np.float32(0.5), rtol=1e-6)


def test_kernel_in_place(ctx):
    k = ElemwiseKernel("float *x", "x[i] = x[i] * x[i]")
    hx = _host((4, 4), np.float32, 56)
    x = _dev(hx, ctx)
    k(x[:, ::2])
    want = hx.copy()
    want[:, ::2] **= 2
    np.testing.assert_array_equal(x.get(), want)


@pytest.mark.parametrize("arguments", [
    "float *",
    "float *x, int",
    "float *x; float *y",
    "float *x, float *y z",
    "float ** x",
    "",
    "float a",                                # no array argument
])
def test_kernel_malformed_arguments_raise(arguments):
    with pytest.raises(ArgumentError):
        ElemwiseKernel(arguments, "x[i] = 0")


def test_kernel_unknown_type_raises():
    with pytest.raises(TypeError):
        ElemwiseKernel("flot *x", "x[i] = 0")


def test_kernel_wrong_number_of_arguments_raises(ctx):
    k = ElemwiseKernel("float *x, float a, float *y", "y[i] = a * x[i]")
    x = ga.zeros(4, "float32", context=ctx)
    with pytest.raises(ArgumentError):
        k(x, x)
    with pytest.raises(ArgumentError):
        k(x, 1.0, x, x)


def test_kernel_wrong_dtype_raises(ctx):
    k = ElemwiseKernel("float *x, float *y", "y[i] = x[i]")
    x = ga.zeros(4, "float32", context=ctx)
    with pytest.raises(ArgumentTypeError):
        k(x, ga.zeros(4, "int32", context=ctx))
    with pytest.raises(TypeError):
        k(ga.zeros(4, "float64" if ctx.fp64 else "int16", context=ctx), x)
    with pytest.raises(ArgumentTypeError):
        k(np.zeros(4, np.float32), x)          # a host array is not a GpuArray


def test_kernel_build_error(ctx):
    k = ElemwiseKernel("float *x, float *y", "y[i] = undefined_thing_42(x[i])")
    with pytest.raises(KernelBuildError) as info:
        k(ga.zeros(4, "float32", context=ctx), ga.zeros(4, "float32", context=ctx))
    msg = str(info.value)
    assert "undefined_thing_42" in msg
    # the driver's diagnostics (PoCL says "error", NVIDIA "warning ... ptxas fatal") name it
    log = msg.split("--- build log ---", 1)[1].split("--- generated source ---", 1)[0]
    assert "undefined_thing_42" in log
    assert "   1| " in msg                     # numbered source lines
    lines = [ln for ln in msg.splitlines() if "undefined_thing_42" in ln]
    assert any(ln.lstrip()[:1].isdigit() and "| " in ln for ln in lines)
    # the build log itself, not only the source: a log line names the problem
    assert any("|" not in ln for ln in lines), msg


def test_kernel_contexts(ctx_pair):
    c0, c1 = ctx_pair
    k = ElemwiseKernel("float *x, float *y", "y[i] = x[i]")
    with pytest.raises(ContextMismatch):
        k(ga.zeros(4, "float32", context=c0), ga.zeros(4, "float32", context=c1))
    bound = ElemwiseKernel("float *x", "x[i] = 1", context=c0)
    with pytest.raises(ContextMismatch):
        bound(ga.zeros(4, "float32", context=c1))
    x = ga.zeros(4, "float32", context=c0)
    bound(x)
    np.testing.assert_array_equal(x.get(), np.ones(4, np.float32))


def test_kernel_one_build_serves_shapes_and_values(ctx):
    k = ElemwiseKernel("float *x, float a", "x[i] = x[i] + a + 0.125f")
    x = ga.zeros(10, "float32", context=ctx)
    k(x, 1.0)
    kernels = _elemwise_kernels(ctx)
    for n in (3, 100):
        y = ga.zeros(n, "float32", context=ctx)
        k(y, 2.0)
        np.testing.assert_array_equal(y.get(), np.full(n, 2.125, np.float32))
    assert _elemwise_kernels(ctx) == kernels
