"""User ReductionKernel / ScanKernel, complex reductions, the GPU decompositions (run on PoCL by
patching reduction.device_class), determinism, and numpy's where=/initial=; numpy is the oracle.
"""

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import reduction
from gpuarr.caches import Cache
from gpuarr.errors import ArgumentError, ArgumentTypeError, ContextMismatch
from gpuarr.reduction import ReductionKernel, ScanKernel


def _check(got, expected, rtol=0.0):
    """got (a GpuArray) has numpy's shape and dtype, and its values (exact where rtol is 0;
    NaNs equal; complex compared part by part)."""
    expected = np.asarray(expected)
    assert isinstance(got, ga.GpuArray), type(got)
    g = got.get()
    assert g.shape == expected.shape, (g.shape, expected.shape)
    assert g.dtype == expected.dtype, (g.dtype, expected.dtype)
    if rtol == 0:
        np.testing.assert_array_equal(g, expected)
        return
    parts = [(g.real, expected.real), (g.imag, expected.imag)] if g.dtype.kind == "c" \
        else [(g, expected)]
    for a, b in parts:
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol,
                                   atol=rtol, equal_nan=True)


def _ints(shape, dtype, lo=-3, hi=4, seed=0):
    return np.asarray(np.random.default_rng(seed).integers(lo, hi, shape)).astype(dtype)


def _floats(shape, seed=0, lo=0.5, hi=2.5):
    rng = np.random.default_rng(seed)
    return np.asarray(rng.random(shape) * (hi - lo) + lo, dtype=np.float32)


# n-d views: gpuarr and numpy views of the same elements
LAYOUTS = {
    "C": lambda a: a,
    "F": lambda a: a.T,
    "negative": lambda a: a[(slice(None, None, -1),) * a.ndim],
    "sliced": lambda a: a[(slice(1, None, 2),) + (slice(None, None, 3),) * (a.ndim - 1)],
}


def _fp64(ctx, dtype):
    if np.dtype(dtype) in (np.float64, np.complex128) and not ctx.fp64:
        pytest.skip("no fp64 on this device")


# ================================================================ ReductionKernel

DOT = ReductionKernel(np.float32, "0", "a + b", "x[i] * y[i]", "const float *x, const float *y",
                      name="dot")
SUM = ReductionKernel(np.float32, "0", "a + b", "x[i]", "const float *x", name="fsum")
MAX = ReductionKernel(np.float32, "-INFINITY", "fmax(a, b)", "x[i]", "const float *x",
                      name="fmax")
MIXED = ReductionKernel(np.float32, "0", "a + b", "x[i] * y[i]", "const float *x, const int *y",
                        name="mixed")
AXES_2D = [None, 0, 1, -1, (0, 1), (-1, 0)]


def _dot_host(hx, hy, axis, keepdims=False):
    prod = hx.astype(np.float64) * hy.astype(np.float64)
    return np.sum(prod, axis=axis, keepdims=keepdims).astype(np.float32)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_user_dot_axes_keepdims_layouts(ctx, layout):
    hx, hy = _floats((37, 130), 1), _floats((37, 130), 2)
    take = LAYOUTS[layout]
    hxv, hyv = take(hx), take(hy)
    xv, yv = take(ga.asarray(hx, context=ctx)), take(ga.asarray(hy, context=ctx))
    for axis in AXES_2D:
        for keepdims in (False, True):
            got = DOT(xv, yv, axis=axis, keepdims=keepdims)
            _check(got, _dot_host(hxv, hyv, axis, keepdims), 2e-5)
    if layout != "C":  # one view and one contiguous array: the layouts differ
        yc = ga.asarray(np.ascontiguousarray(hyv), context=ctx)
        for axis in (None, 0, 1):
            _check(DOT(xv, yc, axis=axis), _dot_host(hxv, hyv, axis), 2e-5)
            _check(DOT(yc, xv, axis=axis), _dot_host(hyv, hxv, axis), 2e-5)


@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, (0, 2), (2, 0), (0, 1), (1, 2), (0, 1, 2)],
                         ids=str)
def test_user_reduction_3d_axes(ctx, axis):
    hx = _floats((4, 5, 6), 3)
    x = ga.asarray(hx, context=ctx)
    for hv, xv in ((hx, x), (hx.transpose(1, 2, 0), x.transpose(1, 2, 0)),
                   (hx[::-1, :, ::2], x[::-1, :, ::2])):
        for keepdims in (False, True):
            expected = np.sum(hv.astype(np.float64), axis=axis, keepdims=keepdims)
            _check(SUM(xv, axis=axis, keepdims=keepdims), expected.astype(np.float32), 2e-5)


def test_user_dot_same_layout_different_offsets(ctx):
    """Arrays of one layout at different offsets in one buffer (each its own offset)."""
    h = _floats((1000,), 4)
    x = ga.asarray(h, context=ctx)
    _check(DOT(x[1:], x[:-1]), _dot_host(h[1:], h[:-1], None), 2e-5)
    h2 = h.reshape(40, 25)
    x2 = x.reshape(40, 25)
    for axis in (None, 0, 1):
        _check(DOT(x2[3:, 1:], x2[:-3, :-1], axis=axis),
               _dot_host(h2[3:, 1:], h2[:-3, :-1], axis), 2e-5)


def test_user_reduction_long_and_0d(ctx):
    h = _floats((100003,), 5)
    x = ga.asarray(h, context=ctx)
    _check(DOT(x, x), _dot_host(h, h, None), 2e-5)
    _check(DOT(x[::-3], x[::-3]), _dot_host(h[::-3], h[::-3], None), 2e-5)
    s = ga.asarray(np.float32(3.0), context=ctx)
    _check(DOT(s, s), np.float32(9.0))
    _check(DOT(s, s, keepdims=True), np.float32(9.0))


def test_user_broadcast_views_and_other_dtypes(ctx):
    hx, hy = _floats((7,), 18), _floats((5, 1), 19)
    x, y = ga.asarray(hx, context=ctx), ga.asarray(hy, context=ctx)
    bx, by = ga.broadcast_to(x, (5, 7)), ga.broadcast_to(y, (5, 7))  # zero strides
    bhx, bhy = np.broadcast_to(hx, (5, 7)), np.broadcast_to(hy, (5, 7))
    for axis in (None, 0, 1):
        _check(DOT(bx, bx, axis=axis), _dot_host(bhx, bhx, axis), 2e-5)
        _check(DOT(bx, by, axis=axis), _dot_host(bhx, bhy, axis), 2e-5)
    # float16 input into a float32 result; complex64 result
    hh = _ints((12, 30), np.float16, -4, 5, seed=35)
    half_sum = ReductionKernel(np.float32, "0", "a + b", "x[i]", "const half *x")
    hc = _cdata((12, 30), np.complex64, 36)
    csum = ReductionKernel(np.complex64, "(float2)(0, 0)", "a + b", "x[i]", "const float2 *x")
    for axis in (None, 0, 1):
        _check(half_sum(ga.asarray(hh, context=ctx), axis=axis),
               np.sum(hh.astype(np.float32), axis=axis))
        _check(csum(ga.asarray(hc, context=ctx), axis=axis), np.sum(hc, axis=axis), 1e-6)


SCALED = ReductionKernel(np.float32, "0", "a + b", "s * x[i] + n", "float s, const float *x, int n",
                         name="scaled")


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_user_scalar_arguments(ctx, axis):
    hx = _ints((33, 20), np.float32, -8, 9)
    x = ga.asarray(hx, context=ctx)
    for s, n in ((0.5, 3), (np.float32(-2.0), np.int32(-7)), (4, 0)):
        expected = np.sum(np.float64(s) * hx + n, axis=axis).astype(np.float32)
        _check(SCALED(s, x, n, axis=axis), expected)
        _check(SCALED(s, x.T, n, axis=axis), np.sum(np.float64(s) * hx.T + n, axis=axis)
               .astype(np.float32))


PRE_MAP = ReductionKernel(np.float32, "0", "a + b", "clamp_sq(x[i], lim)", "const float *x, "
                          "float lim", preamble="inline float clamp_sq(float v, float lim) "
                          "{ return fmin(v * v, lim); }", name="clamped")
PRE_REDUCE = ReductionKernel(np.float32, "0", "absmax(a, b)", "x[i]", "const float *x",
                             preamble="inline float absmax(float a, float b) "
                             "{ return fmax(fabs(a), fabs(b)); }", name="absmax")


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_user_preamble_helpers(ctx, axis):
    hx = _ints((33, 20), np.float32, -6, 7, seed=6)
    x = ga.asarray(hx, context=ctx)
    _check(PRE_MAP(x, 9.0, axis=axis), np.sum(np.minimum(hx * hx, 9.0), axis=axis)
           .astype(np.float32))
    _check(PRE_REDUCE(x, axis=axis), np.max(np.abs(hx), axis=axis))
    _check(PRE_REDUCE(x[::-1, ::2], axis=axis), np.max(np.abs(hx[::-1, ::2]), axis=axis))


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_user_max_with_infinite_neutral(ctx, axis):
    hx = _floats((33, 20), 7, lo=-5, hi=-1)  # all negative: a neutral of 0 would show
    x = ga.asarray(hx, context=ctx)
    for hv, xv in ((hx, x), (hx.T, x.T), (hx[::-2, 1:], x[::-2, 1:])):
        _check(MAX(xv, axis=axis), np.max(hv, axis=axis))
        _check(MAX(xv, axis=axis, keepdims=True), np.max(hv, axis=axis, keepdims=True))


SUMSQ64 = ReductionKernel(np.int64, "0", "a + b", "(long)x[i] * x[i]", "const int *x",
                          name="sumsq")
MAX64 = ReductionKernel(np.int64, "LONG_MIN", "max(a, b)", "x[i]", "const long *x", name="max64")


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_user_int64_outputs(ctx, axis):
    hx = _ints((40, 30), np.int32, -50000, 50001, seed=8)  # squares overflow int32
    x = ga.asarray(hx, context=ctx)
    expected = np.sum(hx.astype(np.int64) ** 2, axis=axis)
    assert np.max(expected) > 2**31
    _check(SUMSQ64(x, axis=axis), expected)
    _check(SUMSQ64(x.T, axis=axis), np.sum(hx.T.astype(np.int64) ** 2, axis=axis))
    hl = _ints((40, 30), np.int64, -(2**62), 2**62, seed=9)
    hl[5, 7] = -(2**63)  # LONG_MIN itself
    hl[:, 3] = -(2**63)
    xl = ga.asarray(hl, context=ctx)
    _check(MAX64(xl, axis=axis), np.max(hl, axis=axis))
    _check(MAX64(xl[::-1], axis=axis), np.max(hl[::-1], axis=axis))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_user_mixed_input_dtypes(ctx, axis):
    hx, hy = _floats((37, 130), 10), _ints((37, 130), np.int32, -20, 21, seed=11)
    x, y = ga.asarray(hx, context=ctx), ga.asarray(hy, context=ctx)
    _check(MIXED(x, y, axis=axis), _dot_host(hx, hy, axis), 2e-5)
    _check(MIXED(x.T, y.T, axis=axis), _dot_host(hx.T, hy.T, axis), 2e-5)
    _check(MIXED(x[:, ::-1], y[::-1], axis=axis), _dot_host(hx[:, ::-1], hy[::-1], axis), 2e-5)


@pytest.mark.parametrize(("xshape", "yshape"), [((5, 1), (1, 7)), ((7,), (5, 7)),
                                                ((5, 1), (7,)), ((), (5, 7)), ((5, 7), (1, 1))],
                         ids=str)
def test_user_broadcasting(ctx, xshape, yshape):
    hx, hy = _floats(xshape, 12), _floats(yshape, 13)
    x, y = ga.asarray(hx, context=ctx), ga.asarray(hy, context=ctx)
    hyi = _ints(yshape, np.int32, -5, 6, seed=14)
    yi = ga.asarray(hyi, context=ctx)
    for axis in (None, 0, 1, -1, (0, 1)):
        for keepdims in (False, True):
            _check(DOT(x, y, axis=axis, keepdims=keepdims), _dot_host(hx, hy, axis, keepdims),
                   2e-5)
            _check(DOT(y, x, axis=axis, keepdims=keepdims), _dot_host(hy, hx, axis, keepdims),
                   2e-5)
        _check(MIXED(x, yi, axis=axis), _dot_host(hx, hyi, axis), 2e-5)


def test_user_out(ctx):
    hx, hy = _floats((37, 130), 15), _floats((37, 130), 16)
    x, y = ga.asarray(hx, context=ctx), ga.asarray(hy, context=ctx)
    out = ga.zeros(130, dtype=np.float32, context=ctx)
    assert DOT(x, y, axis=0, out=out) is out
    _check(out, _dot_host(hx, hy, 0), 2e-5)
    out1 = ga.zeros((37, 1), dtype=np.float32, context=ctx)
    assert DOT(x, y, axis=1, keepdims=True, out=out1) is out1
    _check(out1, _dot_host(hx, hy, 1, True), 2e-5)
    out0 = ga.zeros((), dtype=np.float32, context=ctx)
    assert DOT(x, y, out=out0) is out0
    _check(out0, _dot_host(hx, hy, None), 2e-5)
    # a strided view of a bigger array: only its elements are written
    big = ga.full((37, 3), -1.0, dtype=np.float32, context=ctx)
    column = big[:, 1]
    assert DOT(x, y, axis=1, out=column) is column
    expected = np.full((37, 3), -1.0, np.float32)
    expected[:, 1] = _dot_host(hx, hy, 1)
    _check(big, expected, 2e-5)
    big0 = ga.full((2, 130), -1.0, dtype=np.float32, context=ctx)
    DOT(x, y, axis=0, out=big0[1, ::-1])
    _check(big0[1, ::-1], _dot_host(hx, hy, 0), 2e-5)
    _check(big0[0], np.full(130, -1.0, np.float32))
    # another dtype: cast into out, as numpy does
    out64 = ga.zeros(37, dtype=np.float64, context=ctx)
    assert DOT(x, y, axis=1, out=out64) is out64
    _check(out64, _dot_host(hx, hy, 1).astype(np.float64), 2e-5)
    for bad in (ga.zeros(37, dtype=np.float32, context=ctx),
                ga.zeros((1, 130), dtype=np.float32, context=ctx),
                ga.zeros((), dtype=np.float32, context=ctx)):
        with pytest.raises(ValueError):
            DOT(x, y, axis=0, out=bad)


def test_user_zero_size(ctx):
    """A 0-size reduced axis gives the neutral element; a 0-size kept axis an empty result."""
    e = ga.zeros((0, 4), dtype=np.float32, context=ctx)
    _check(SUM(e, axis=0), np.zeros(4, np.float32))
    _check(SUM(e), np.float32(0))
    _check(SUM(e.T, axis=1, keepdims=True), np.zeros((4, 1), np.float32))
    _check(MAX(e, axis=0), np.full(4, -np.inf, np.float32))
    _check(MAX(e, axis=(0, 1), keepdims=True), np.full((1, 1), -np.inf, np.float32))
    _check(MAX(e, axis=1), np.zeros(0, np.float32))
    _check(MAX64(ga.zeros((3, 0, 2), dtype=np.int64, context=ctx), axis=1),
           np.full((3, 2), -(2**63), np.int64))
    _check(DOT(e, ga.zeros((0, 1), dtype=np.float32, context=ctx), axis=0),
           np.zeros(4, np.float32))


def test_user_kernel_errors(ctx):
    x = ga.zeros((3, 4), dtype=np.float32, context=ctx)
    with pytest.raises(ArgumentError):  # wrong argument count
        DOT(x)
    with pytest.raises(ArgumentError):
        DOT(x, x, x)
    with pytest.raises(ValueError):
        SCALED(x, 1.0)
    with pytest.raises(ArgumentTypeError):  # wrong array dtype
        DOT(x, x.astype(np.int32))
    with pytest.raises(ArgumentTypeError):
        MIXED(x, x)
    with pytest.raises(TypeError):  # a numpy array is not a GpuArray
        DOT(x, np.zeros((3, 4), np.float32))
    with pytest.raises(ArgumentError):  # unparseable argument strings
        ReductionKernel(np.float32, "0", "a + b", "x[i]", "const float x[")
    with pytest.raises(ArgumentError):
        ReductionKernel(np.float32, "0", "a + b", "x[i]", "float *x,, float *")
    with pytest.raises(ValueError):  # no array argument
        ReductionKernel(np.float32, "0", "a + b", "x", "float x")
    with pytest.raises(ValueError):  # shapes that do not broadcast
        DOT(x, ga.zeros((3, 5), dtype=np.float32, context=ctx))
    with pytest.raises(ga.errors.AxisError):
        DOT(x, x, axis=2)
    with pytest.raises(ValueError):
        DOT(x, x, axis=(1, -1))


def test_user_kernels_two_contexts(ctx_pair):
    a_ctx, b_ctx = ctx_pair
    assert a_ctx is not b_ctx
    h = _floats((6, 5), 17)
    xa, xb = ga.asarray(h, context=a_ctx), ga.asarray(h, context=b_ctx)
    with pytest.raises(ContextMismatch):
        DOT(xa, xb)
    with pytest.raises(ValueError):
        DOT(xb, xa, axis=0)
    bound = ReductionKernel(np.float32, "0", "a + b", "x[i]", "const float *x", context=b_ctx)
    with pytest.raises(ContextMismatch):
        bound(xa)
    _check(bound(xb, axis=1), h.astype(np.float64).sum(axis=1).astype(np.float32), 2e-5)
    # the same kernel object runs on either context
    _check(DOT(xa, xa), _dot_host(h, h, None), 2e-5)
    _check(DOT(xb, xb), _dot_host(h, h, None), 2e-5)
    scan = ScanKernel(np.float32, "a + b", "0", context=b_ctx)
    with pytest.raises(ContextMismatch):
        scan(xa)
    _check(scan(xb, axis=0), np.cumsum(h, axis=0), 2e-6)


@pytest.mark.parametrize(("arguments", "map_expr", "scalar_first"), [
    ("const float *x, float k", "x[i] * k", False),
    ("const float *x, float o", "x[i] * o", False),
    ("const float *x, float at", "x[i] * at", False),
    ("float acc, const float *x", "x[i] * acc", True),
    ("const float *row, float begin", "row[i] * begin", False),
], ids=["k", "o", "at", "acc", "row-begin"])
def test_user_arguments_named_like_kernel_variables(ctx, arguments, map_expr, scalar_first):
    """Argument names the kernel body uses itself (loop index k, output o, ...) mean the
    user's arguments in map_expr (they once failed to build, or in the CPU's row bands,
    axis=0, were silently shadowed by the kernel's loop variables)."""
    hx = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = ga.asarray(hx, context=ctx)
    kernel = ReductionKernel(np.float32, "0", "a + b", map_expr, arguments)
    for axis in (0, 1, None):
        got = kernel(2.0, x, axis=axis) if scalar_first else kernel(x, 2.0, axis=axis)
        _check(got, (hx * 2).sum(axis=axis))


_HALF_SCRIPT = """
import numpy as np
import gpuarr as ga
from gpuarr import reduction
from gpuarr.reduction import ReductionKernel, ScanKernel
ctx = ga.init({device!r})
bad = []
h = (np.arange(12 * 30) % 5).astype(np.float16).reshape(12, 30)
hl = np.zeros(50001, np.float16)
hl[::1000] = 1
hs = np.zeros(300001, np.float16)
hs[::1000] = 1
k = ReductionKernel(np.float16, "0", "a + b", "x[i]", "const half *x")
scan = ScanKernel(np.float16, "a + b", "0")
exscan = ScanKernel(np.float16, "a + b", "0", exclusive=True)
for cls in ("cpu", "gpu"):  # row bands; work-groups finishing in one launch
    reduction.device_class = lambda c, cls=cls: cls
    for axis in (None, 0, 1):
        want = h.astype(np.float32).sum(axis=axis).astype(np.float16)
        got = k(ga.asarray(h, context=ctx), axis=axis).get()
        if got.dtype != np.float16 or not np.array_equal(got, want):
            bad.append((cls, "reduce", axis, got, want))
    got = k(ga.asarray(hl, context=ctx)).get()
    if got != 51:
        bad.append((cls, "long reduce", got))
    got = scan(ga.asarray(hs, context=ctx)).get()
    want = np.cumsum(hs.astype(np.float32)).astype(np.float16)
    if got.dtype != np.float16 or not np.array_equal(got, want):
        bad.append((cls, "scan", got[-3:]))
    got = exscan(ga.asarray(hs, context=ctx)).get()
    if not np.array_equal(got[1:], want[:-1]) or got[0] != 0:
        bad.append((cls, "exclusive scan", got[-3:]))
print("BAD", bad) if bad else print("ALL-OK")
"""


def test_user_float16_accumulator(ctx):
    """ReductionKernel / ScanKernel with dtype float16 (accumulated in float). In a subprocess:
    this once wrote floats into float16 buffers (the CPU's row bands, the scan's chunk
    totals): wrong results and out-of-bounds writes that corrupted the heap."""
    path = [str(Path(ga.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, path)))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_HALF_SCRIPT).format(
        device=ctx.device.name)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0 and "ALL-OK" in proc.stdout, (proc.returncode, proc.stdout,
                                                              proc.stderr[-2000:])


# ================================================================ ScanKernel

RUNMAX = ScanKernel(np.float32, "fmax(a, b)", "-INFINITY", name="runmax")
EXMAX = ScanKernel(np.float32, "fmax(a, b)", "-INFINITY", exclusive=True, name="exmax")
INSUM = ScanKernel(np.int64, "a + b", "0", name="insum")
EXSUM = ScanKernel(np.int64, "a + b", "0", exclusive=True, name="exsum")


def _np_scan(h, axis, ufunc, exclusive, neutral, dtype):
    """numpy's inclusive scan (ufunc.accumulate) or its exclusive form."""
    h = np.asarray(h).astype(dtype)
    if axis is None:
        h, axis = h.ravel(), 0
    inc = np.moveaxis(ufunc.accumulate(h, axis=axis), axis, -1)
    if not exclusive:
        return np.moveaxis(inc, -1, axis)
    ex = np.empty_like(inc)
    ex[..., 0] = neutral
    ex[..., 1:] = inc[..., :-1]
    return np.moveaxis(ex, -1, axis)


def _check_scans(hf, xf, hi, xi, axis):
    _check(RUNMAX(xf, axis=axis), _np_scan(hf, axis, np.maximum, False, -np.inf, np.float32))
    _check(EXMAX(xf, axis=axis), _np_scan(hf, axis, np.maximum, True, -np.inf, np.float32))
    _check(INSUM(xi, axis=axis), _np_scan(hi, axis, np.add, False, 0, np.int64))
    _check(EXSUM(xi, axis=axis), _np_scan(hi, axis, np.add, True, 0, np.int64))


@pytest.mark.parametrize("shape", [(37, 130), (4, 5, 6)], ids=str)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_scan_kernels_axes_layouts(ctx, shape, layout):
    take = LAYOUTS[layout]
    hf = _floats(shape, 20, lo=-3, hi=3)
    hi = _ints(shape, np.int8, -128, 128, seed=21)  # int8 input, int64 scan
    hfv, hiv = take(hf), take(hi)
    xfv, xiv = take(ga.asarray(hf, context=ctx)), take(ga.asarray(hi, context=ctx))
    for axis in [None, *range(len(shape)), -1]:
        _check_scans(hfv, xfv, hiv, xiv, axis)


def _long_row(ctx, seed, n=300001):
    """(float32 host, int8 host, their GpuArrays) of one long row: a rising float32 ramp
    with noise, random int8."""
    hf = (_floats((n,), seed, lo=-1, hi=1) + np.linspace(0, 50, n)).astype(np.float32)
    hi = _ints((n,), np.int8, -128, 128, seed=seed + 1)
    return hf, hi, ga.asarray(hf, context=ctx), ga.asarray(hi, context=ctx)


def test_scan_kernels_long_rows(ctx):
    """Rows long enough to be cut in several chunks (the carries between chunks)."""
    hf, hi, xf, xi = _long_row(ctx, 22)
    _check_scans(hf, xf, hi, xi, 0)
    _check_scans(hf[::-1], xf[::-1], hi[::-1], xi[::-1], None)
    _check_scans(hf[3::2], xf[3::2], hi[3::2], xi[3::2], -1)
    # two long rows, in C order (along axis 1) and F order (along axis 0)
    h2 = hi[:300000].reshape(2, 150000)
    x2 = xi[:300000].reshape(2, 150000)
    for axis in (1, -1):
        _check(EXSUM(x2, axis=axis), _np_scan(h2, axis, np.add, True, 0, np.int64))
    _check(INSUM(x2.T, axis=0), _np_scan(h2.T, 0, np.add, False, 0, np.int64))


def test_scan_kernels_many_short_rows(ctx):
    hi = _ints((20000, 3), np.int8, -128, 128, seed=24)
    hf = _floats((20000, 3), 25, lo=-3, hi=3)
    xi, xf = ga.asarray(hi, context=ctx), ga.asarray(hf, context=ctx)
    _check_scans(hf, xf, hi, xi, 1)
    _check_scans(hf.T, xf.T, hi.T, xi.T, 0)
    _check_scans(hf[::-1], xf[::-1], hi[::-1], xi[::-1], 1)
    h1 = hi[:, :1]
    _check(EXSUM(xi[:, :1], axis=1), np.zeros((20000, 1), np.int64))  # rows of one element
    _check(INSUM(xi[:, :1], axis=1), h1.astype(np.int64))


def test_scan_kernel_input_dtypes(ctx):
    """Inputs are converted to the scan dtype: bool, uint8, float32 into int64 / float32."""
    hb = np.random.default_rng(26).random((50, 60)) > 0.4
    xb = ga.asarray(hb, context=ctx)
    for axis in (None, 0, 1):
        _check(INSUM(xb, axis=axis), _np_scan(hb, axis, np.add, False, 0, np.int64))
        _check(EXSUM(xb, axis=axis), _np_scan(hb, axis, np.add, True, 0, np.int64))
    hu = _ints((50, 60), np.uint8, 0, 256, seed=27)
    _check(INSUM(ga.asarray(hu, context=ctx), axis=1), np.cumsum(hu, axis=1, dtype=np.int64))
    hi = _ints((50, 60), np.int32, -1000, 1000, seed=28)
    _check(RUNMAX(ga.asarray(hi, context=ctx), axis=0),
           np.maximum.accumulate(hi.astype(np.float32), axis=0))


def test_scan_kernel_out(ctx):
    hi = _ints((37, 130), np.int8, -128, 128, seed=29)
    xi = ga.asarray(hi, context=ctx)
    out = ga.zeros((37, 130), dtype=np.int64, context=ctx)
    assert EXSUM(xi, axis=1, out=out) is out
    _check(out, _np_scan(hi, 1, np.add, True, 0, np.int64))
    assert INSUM(xi, axis=0, out=out) is out  # overwritten
    _check(out, np.cumsum(hi, axis=0, dtype=np.int64))
    # F-order and reversed outputs; a strided view leaves the rest of its base alone
    outf = ga.zeros((130, 37), dtype=np.int64, context=ctx).T
    EXSUM(xi, axis=0, out=outf)
    _check(outf, _np_scan(hi, 0, np.add, True, 0, np.int64))
    outr = ga.zeros((37, 130), dtype=np.int64, context=ctx)
    EXSUM(xi, axis=1, out=outr[::-1, ::-1])
    _check(outr[::-1, ::-1], _np_scan(hi, 1, np.add, True, 0, np.int64))
    big = ga.full((37, 260), 7, dtype=np.int64, context=ctx)
    INSUM(xi, axis=1, out=big[:, ::2])
    _check(big[:, ::2], np.cumsum(hi, axis=1, dtype=np.int64))
    _check(big[:, 1::2], np.full((37, 130), 7, np.int64))
    flat = ga.zeros(37 * 130, dtype=np.int64, context=ctx)
    assert INSUM(xi.T, out=flat) is flat  # axis None: the flattened (C order) view
    _check(flat, np.cumsum(hi.T, dtype=np.int64))
    out32 = ga.zeros((37, 130), dtype=np.float64, context=ctx)  # another dtype: cast
    assert INSUM(xi, axis=1, out=out32) is out32
    _check(out32, np.cumsum(hi, axis=1, dtype=np.int64).astype(np.float64))
    with pytest.raises(ValueError):
        INSUM(xi, axis=1, out=ga.zeros((130, 37), dtype=np.int64, context=ctx))
    with pytest.raises(ValueError):
        INSUM(xi, out=ga.zeros((37, 130), dtype=np.int64, context=ctx))  # None: flat


def test_scan_kernel_in_place(ctx):
    """out= the input itself (numpy's accumulate allows it)."""
    hf = _floats((37, 130), 33, lo=-3, hi=3)
    for axis in (0, 1):
        xf = ga.asarray(hf, context=ctx)
        assert RUNMAX(xf, axis=axis, out=xf) is xf
        _check(xf, np.maximum.accumulate(hf, axis=axis))
    hl = _floats((300001,), 34, lo=-1, hi=1)
    xl = ga.asarray(hl, context=ctx)
    EXMAX(xl, out=xl)  # several chunks: the chunk totals are taken before any write
    _check(xl, _np_scan(hl, 0, np.maximum, True, -np.inf, np.float32))


# x -> a x + b composed left to right: associative, not commutative, identity (1, 0)
AFFINE = ScanKernel(np.complex64, "(float2)(a.x * b.x, a.y * b.x + b.y)", "(float2)(1.0f, 0.0f)",
                    name="affine")


def _np_affine(h):
    """The in-order compositions of h's maps (a + b i: x -> a x + b), exact for small ints."""
    out, a, b = np.empty_like(h), 1.0, 0.0
    for i, z in enumerate(h):
        a, b = a * z.real, b * z.real + z.imag
        out[i] = a + 1j * b
    return out


@pytest.fixture(params=["atomic", "plain"])
def lookback(ctx, monkeypatch, request):
    """The GPUs' one-pass look-back scan on any device, in blocks of 16 x 8: groups of 4
    tiles, and past 12 groups several group totals a work-item; its words polled by atomics
    (most devices) or plain loads (NVIDIA's form)."""
    monkeypatch.setattr(reduction, "SCAN_LOOKBACK", tuple(reduction.TUNING))
    monkeypatch.setitem(reduction.TUNING["gpu"], "scan_unroll", 8)
    monkeypatch.setattr(reduction, "_plain_words", lambda c: request.param == "plain")
    monkeypatch.setattr(ctx, "plans", Cache("plans", ctx.plans.maxsize))  # (plans afresh)
    monkeypatch.setattr(reduction, "LOOKBACK_LOCAL", 16)
    # rows neighbouring in memory: 16 rows a work-group, chunks of 8 (groups of 16 chunks)
    monkeypatch.setattr(reduction, "COLUMNS_LOCAL", 16)
    monkeypatch.setattr(reduction, "COLUMNS_UNROLL", 8)
    monkeypatch.setattr(reduction, "COLUMNS_LEAST", (16, 1 << 16))


def test_scan_lookback(ctx, lookback):
    """Look-back scans: long rows (2344 tiles), several long rows either way, short rows,
    in place, a non-commutative operator, and the same bits every run."""
    hf, hi, xf, xi = _long_row(ctx, 40)
    _check_scans(hf, xf, hi, xi, 0)
    _check_scans(hf[::-1], xf[::-1], hi[::-1], xi[::-1], None)
    h2, x2 = hi[:300000].reshape(3, 100000), xi[:300000].reshape(3, 100000)
    _check(EXSUM(x2, axis=1), _np_scan(h2, 1, np.add, True, 0, np.int64))
    _check(INSUM(x2.T, axis=0), _np_scan(h2.T, 0, np.add, False, 0, np.int64))
    hs, xs = hi[:60000].reshape(20000, 3), xi[:60000].reshape(20000, 3)
    _check(INSUM(xs, axis=1), _np_scan(hs, 1, np.add, False, 0, np.int64))
    for k in (1, 127, 128, 129, 128 * 4 * 12 + 1):  # one block, its edges, past 12 groups
        _check(ga.cumsum(xi[:k]), np.cumsum(hi[:k], dtype=np.int64))
    hm = ((_ints((5000,), np.int8, 0, 2, seed=42) * 2 - 1)
          + 1j * _ints((5000,), np.int8, -3, 4, seed=43)).astype(np.complex64)
    _check(AFFINE(ga.asarray(hm, context=ctx)), _np_affine(hm))
    first, again = ga.cumsum(xf).get(), ga.cumsum(xf).get()
    assert first.tobytes() == again.tobytes()
    np.testing.assert_allclose(first, np.cumsum(hf, dtype=np.float64), rtol=1e-5)
    xl = ga.asarray(hf, context=ctx)
    EXMAX(xl, out=xl)  # in place: a tile reads its block before it writes it
    _check(xl, _np_scan(hf, 0, np.maximum, True, -np.inf, np.float32))


def test_scan_lookback_columns(ctx, lookback):
    """Look-back scans of rows that are neighbours in memory along a strided axis (a row a
    work-item): several groups of chunks, ragged row blocks and chunks, rows over two
    dimensions, F order, in place, a non-commutative operator, the same bits every run."""
    hi = _ints((1000, 37), np.int8, -128, 128, seed=44)
    xi = ga.asarray(hi, context=ctx)
    for axis in (0, None):
        _check(INSUM(xi, axis=axis), _np_scan(hi, axis, np.add, False, 0, np.int64))
    _check(EXSUM(xi, axis=0), _np_scan(hi, 0, np.add, True, 0, np.int64))
    _check(EXSUM(xi.T, axis=1), _np_scan(hi.T, 1, np.add, True, 0, np.int64))
    h3 = hi[:960].reshape(3, 320, 37)
    _check(INSUM(xi[:960].reshape(3, 320, 37), axis=1), _np_scan(h3, 1, np.add, False, 0,
                                                                 np.int64))
    hf = _floats((700, 50), 45, lo=-1, hi=1)
    xf = ga.asarray(hf, context=ctx)
    first, again = ga.cumsum(xf, axis=0).get(), ga.cumsum(xf, axis=0).get()
    assert first.tobytes() == again.tobytes()
    np.testing.assert_allclose(first, np.cumsum(hf, axis=0, dtype=np.float64), rtol=1e-4,
                               atol=1e-4)
    RUNMAX(xf, axis=0, out=xf)
    _check(xf, np.maximum.accumulate(hf, axis=0))
    hm = ((_ints((300, 20), np.int8, 0, 2, seed=46) * 2 - 1)
          + 1j * _ints((300, 20), np.int8, -3, 4, seed=47)).astype(np.complex64)
    want = np.stack([_np_affine(hm[:, j]) for j in range(20)], axis=1)
    _check(AFFINE(ga.asarray(hm, context=ctx), axis=0), want)


def test_scan_kernel_errors_and_edges(ctx):
    with pytest.raises(TypeError):
        INSUM(np.arange(5))
    with pytest.raises(TypeError):
        INSUM([1, 2, 3])
    x = ga.asarray(np.arange(6, dtype=np.int8).reshape(2, 3), context=ctx)
    with pytest.raises(ga.errors.AxisError):
        INSUM(x, axis=2)
    _check(EXSUM(ga.zeros((0, 3), dtype=np.int8, context=ctx), axis=0),
           np.zeros((0, 3), np.int64))
    _check(EXSUM(ga.zeros((3, 0), dtype=np.int8, context=ctx), axis=0),
           np.zeros((3, 0), np.int64))
    _check(EXSUM(ga.asarray(np.int8(5), context=ctx)), np.zeros(1, np.int64))
    _check(INSUM(ga.asarray(np.int8(5), context=ctx)), np.full(1, 5, np.int64))


# ================================================================ complex reductions

CDTYPES = [np.complex64, np.complex128]
C_LAYOUTS = {k: LAYOUTS[k] for k in ("C", "negative")}  # (F: the same kernels as C)


def _cdata(shape, dtype, seed, kind="small"):
    rng = np.random.default_rng(seed)
    if kind == "small":  # Gaussian integers with parts in -2..2: many ties in each part
        return (rng.integers(-2, 3, shape) + 1j * rng.integers(-2, 3, shape)).astype(dtype)
    # products stay exact: units, and 1 +- 1j for short reductions
    values = [1, -1, 1j, -1j] + ([1 + 1j, 1 - 1j] if kind == "unit2" else [])
    return rng.choice(np.array(values, dtype=np.complex128), shape).astype(dtype)


C_FUNCS = ("sum", "max", "min", "argmax", "argmin", "mean", "any", "cumsum", "prod", "cumprod")


@pytest.mark.parametrize(("dtype", "shape", "funcs"), [
    (np.complex64, (6, 7), C_FUNCS),
    (np.complex128, (6, 7), ("sum", "max", "argmin", "mean", "prod", "cumprod")),
    # several parts and the CPU's row bands
    (np.complex64, (257, 129), ("max", "argmin", "prod")),
], ids=["complex64", "complex128", "complex64-large"])
def test_complex_reductions(ctx, dtype, shape, funcs):
    _fp64(ctx, dtype)
    rtol = 1e-5 if dtype == np.complex64 else 1e-12
    small = _cdata(shape, dtype, 30)
    unit = _cdata(shape, dtype, 31, "unit2" if shape == (6, 7) else "unit")
    xs, xu = ga.asarray(small, context=ctx), ga.asarray(unit, context=ctx)
    for take in C_LAYOUTS.values():
        hs, hu, vs, vu = take(small), take(unit), take(xs), take(xu)
        for axis in (None, 0, 1):
            for name in funcs:  # products of the units (exact)
                h, v = (hu, vu) if name in ("prod", "cumprod") else (hs, vs)
                _check(getattr(ga, name)(v, axis=axis), getattr(np, name)(h, axis=axis), rtol)
        _check(vs.max(axis=0, keepdims=True), hs.max(axis=0, keepdims=True), rtol)
        _check(vs.argmin(axis=1, keepdims=True), hs.argmin(axis=1, keepdims=True), rtol)


@pytest.mark.parametrize("dtype", CDTYPES, ids=lambda d: np.dtype(d).name)
def test_complex_nan_propagates(ctx, dtype):
    """numpy orders complex lexicographically; a NaN in either part wins max/min, and
    argmax/argmin give the first NaN."""
    _fp64(ctx, dtype)
    h = _cdata((6, 7), dtype, 32)
    h[1, 2] = complex(np.nan, 0)
    h[1, 5] = complex(1, np.nan)
    h[4, 2] = complex(1, np.nan)
    h[5, 0] = complex(np.nan, np.nan)
    h[5, 6] = complex(np.nan, 1)
    x = ga.asarray(h, context=ctx)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for hv, xv in ((h, x), (h.T, x.T), (h[::-1, ::-1], x[::-1, ::-1])):
            for axis in (None, 0, 1):
                for name in ("argmax", "argmin"):
                    _check(getattr(xv, name)(axis=axis), getattr(np, name)(hv, axis=axis))
                for name in ("max", "min"):
                    got = getattr(xv, name)(axis=axis).get()
                    expected = getattr(np, name)(hv, axis=axis)
                    assert got.dtype == expected.dtype and got.shape == expected.shape
                    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
                    keep = ~np.isnan(expected)
                    np.testing.assert_array_equal(got[keep], expected[keep])


# ================================================================ GPU decompositions on PoCL

class _Recorder(dict):
    """A kernel cache that records the keys looked up (every launch looks its kernel up)."""

    def __init__(self, base):
        super().__init__(base.items())
        self.looked_up = set()

    def get(self, key, default=None):
        self.looked_up.add(key)
        return super().get(key, default)

    def plans(self):
        return {key[2] for key in self.looked_up if key[0] == "reduce"}


def _use_device_class(ctx, monkeypatch, cls):
    """Reductions on `ctx` take the decompositions of `cls`; the launches worked out per
    layout (ctx.plans) start afresh, so that every kernel used is looked up (and recorded)
    here, and are dropped after. Returns (ctx.kernels, the recorder standing in for it)."""
    base = ctx.kernels
    recorder = _Recorder(base)
    monkeypatch.setattr(reduction, "device_class", lambda c: cls)
    monkeypatch.setattr(ctx, "plans", {})
    monkeypatch.setattr(ctx, "kernels", recorder)
    return base, recorder


@pytest.fixture
def gpu_plans(ctx, monkeypatch):
    """The GPU decompositions on this device; yields the recorder of the kernels used."""
    base, recorder = _use_device_class(ctx, monkeypatch, "gpu")
    yield recorder
    base.update(recorder)  # keep what was built for later tests


GPU_FUNCS = ("sum", "max", "argmax", "argmin", "mean", "any", "cumsum")


def _np_reduce(name, h, axis):
    """numpy's result; float16 through float32 (numpy sums float16 in float16)."""
    fn = getattr(np, name)
    if h.dtype != np.float16 or name in ("max", "argmax", "argmin", "any"):
        return fn(h, axis=axis)
    dtype = fn(h[:1], axis=0 if axis is not None else None).dtype
    with np.errstate(over="ignore"):  # sums past float16's range are inf either way
        return fn(h.astype(np.float32), axis=axis).astype(dtype)


def _check_funcs(h, x, axis, funcs=GPU_FUNCS):
    for name in funcs:
        expected = _np_reduce(name, h, axis)
        kind = np.asarray(expected).dtype.kind
        rtol = 0 if kind in "biu" or name in ("max", "argmax", "argmin") else \
            {np.float32: 2e-5, np.float16: 2e-3}.get(h.dtype.type, 1e-12)
        if name == "cumsum" and h.dtype == np.float32:
            rtol = 1e-4 if axis is None and h.size > 10**5 else 2e-5
            expected = np.cumsum(h.astype(np.float64), axis=axis).astype(np.float32)
        elif name in ("sum", "mean") and h.dtype == np.float32:
            expected = getattr(np, name)(h.astype(np.float64), axis=axis).astype(np.float32)
        _check(getattr(ga, name)(x, axis=axis), expected, rtol)


def test_gpu_plans_long_1d(ctx, gpu_plans):
    n = (1 << 20) + 3
    h = _floats((n,), 40)
    x = ga.asarray(h, context=ctx)
    for view in (slice(None), slice(1, None), slice(None, None, 2), slice(None, None, -1)):
        _check_funcs(h[view], x[view], None)
        _check_funcs(h[view], x[view], 0, ("sum", "argmin"))
    # NaN: max gives NaN, argmax/argmin the first NaN
    hn = h.copy()
    hn[[700001, 5, 999999]] = np.nan
    xn = ga.asarray(hn, context=ctx)
    for view in (slice(None), slice(1, None), slice(None, None, -1)):
        _check_funcs(hn[view], xn[view], None, ("max", "argmax", "argmin"))
    # user kernels on the GPU decompositions
    for view in (slice(None), slice(1, None), slice(None, None, -1)):
        hv, xv = h[view], x[view]
        _check(DOT(xv, xv), _dot_host(hv, hv, None), 2e-5)
        _check(EXMAX(xv), _np_scan(hv, 0, np.maximum, True, -np.inf, np.float32))
    # any: one non-zero element, inside or outside the view
    hz = np.zeros(n, np.float32)
    hz[n - 2] = 1
    xz = ga.asarray(hz, context=ctx)
    for view in (slice(None), slice(1, None), slice(None, None, 2), slice(None, n - 2)):
        _check(ga.any(xz[view]), np.any(hz[view]))
    plans = gpu_plans.plans()  # one output: work-groups in parts, vector loads
    assert {p.mode for p in plans} == {"group"}, plans
    assert any(p.vec > 1 for p in plans), plans
    assert any(p.parts > 1 for p in plans), plans


def test_gpu_vector_loads_at_any_alignment(ctx, gpu_plans):
    """Work-groups reading a contiguous slice load vectors from its first aligned element
    on, the elements before it one at a time: slices at every offset modulo the vector
    (views of a vector, rows of odd length: each row its own head), the extremum and its
    ties inside a head, a slice shorter than its head."""
    h = _floats((6, 2053), 41)
    h[:, 1] = h[:, 5] = 9.0  # a tie: the first one (in the head past offset 1) wins
    x = ga.asarray(h, context=ctx)
    for offset in range(4):
        _check_funcs(h[2, offset:], x[2, offset:], None, ("sum", "max", "argmax"))
    _check_funcs(h[:, 1:], x[:, 1:], 1, ("sum", "argmax", "argmin"))
    _check_funcs(h[1:, 3:], x[1:, 3:], 1, ("max", "argmax"))
    _check_funcs(h[0, 1:3], x[0, 1:3], None, ("sum", "argmax"))
    grouped = [p for p in gpu_plans.plans() if p.mode == "group"]
    assert grouped and all(p.vec == 4 for p in grouped), grouped


@pytest.mark.parametrize(("dtype", "funcs"), [
    (np.float32, GPU_FUNCS),
    # narrow inputs (fewer functions: each is a few more kernels to build)
    (np.int8, ("sum", "max", "argmin", "cumsum")),
    (np.bool_, ("sum", "any", "argmax", "cumsum")),
    (np.float16, ("sum", "max", "argmax", "mean", "cumsum")),
], ids=["float32", "int8", "bool", "float16"])
def test_gpu_plans_2d(ctx, gpu_plans, dtype, funcs):
    shape = (1023, 1025)
    if dtype == np.float32:
        h = _floats(shape, 41)
    elif dtype == np.bool_:
        h = np.random.default_rng(42).random(shape) > 0.7
    else:  # few distinct values: ties for argmax/argmin, exact float16 sums in float32
        h = _ints(shape, dtype, -3, 4, seed=43) if dtype == np.int8 else \
            _ints(shape, dtype, 0, 4, seed=43)
    x = ga.asarray(h, context=ctx)
    layouts = ("C", "F", "negative") if dtype == np.float32 else ("C", "negative")
    for lname in layouts:
        take = LAYOUTS[lname] if lname != "negative" else (lambda a: a[::-1, ::-1])
        hv, xv = take(h), take(x)
        for axis in (None, 0, 1):
            _check_funcs(hv, xv, axis, funcs)
    if dtype == np.int8:  # user scans with int8 input
        for hv, xv in ((h, x), (h.T, x.T)):
            for axis in (None, 0, 1):
                _check(EXSUM(xv, axis=axis), _np_scan(hv, axis, np.add, True, 0, np.int64))
    if dtype == np.float32:
        for axis in (None, 0, 1):
            _check(DOT(x, x.T.T, axis=axis), _dot_host(h, h, axis), 2e-5)
        hn = h.copy()
        hn[::97, ::89] = np.nan
        xn = ga.asarray(hn, context=ctx)
        for hv, xv in ((hn, xn), (hn.T, xn.T)):
            for axis in (None, 0, 1):
                _check_funcs(hv, xv, axis, ("max", "argmax", "argmin"))
    plans = gpu_plans.plans()
    assert {p.mode for p in plans} >= {"group", "item"}, plans
    assert "band" not in {p.mode for p in plans}, plans


# ================================================================ determinism

@pytest.mark.parametrize("device_class", ["cpu", "gpu"])
def test_deterministic_bits(ctx, monkeypatch, device_class):
    base, recorder = _use_device_class(ctx, monkeypatch, device_class)
    h1 = _floats((1 << 20,), 50, lo=-1, hi=1)
    h2 = _floats((1000, 999), 51, lo=-1, hi=1)
    h3 = _floats((300001,), 52, lo=-1, hi=1)
    x1, x2, x3 = (ga.asarray(h, context=ctx) for h in (h1, h2, h3))
    runs = [
        lambda x1=x1: ga.sum(x1),
        lambda x2=x2: ga.sum(x2, axis=0),
        lambda x2=x2: ga.sum(x2, axis=1),
        lambda x2=x2: ga.sum(x2.T, axis=0),
        lambda x3=x3: ga.cumsum(x3),
        lambda x2=x2: ga.cumsum(x2, axis=0),
        lambda x1=x1: DOT(x1, x1),
    ]
    for run in runs:
        a, b = run().get(), run().get()
        assert a.tobytes() == b.tobytes()
    # a copy in another buffer, same layout: the same bits
    assert ga.sum(x1).get().tobytes() == ga.sum(x1.copy()).get().tobytes()
    assert ga.sum(x2, axis=0).get().tobytes() == ga.sum(x2.copy(), axis=0).get().tobytes()
    np.testing.assert_allclose(float(ga.sum(x1)), h1.astype(np.float64).sum(), rtol=1e-4,
                               atol=1e-2)
    modes = {p.mode for p in recorder.plans()}
    assert "group" in modes if device_class == "gpu" else "group" not in modes, modes
    base.update(recorder)


def test_device_class_patch_applies_to_cached_layouts(ctx, monkeypatch):
    """Patching device_class (as its docstring says tests do) changes the decomposition of a
    layout already reduced (the launches cached per layout once ignored the class)."""
    monkeypatch.setattr(ctx, "plans", {})
    monkeypatch.setattr(reduction, "device_class", lambda c: "cpu")
    x = ga.asarray(_floats((300, 301), 70), context=ctx)
    _check(ga.sum(x, axis=1), x.get().astype(np.float64).sum(axis=1).astype(np.float32), 2e-5)
    base = ctx.kernels
    recorder = _Recorder(base)
    monkeypatch.setattr(ctx, "kernels", recorder)
    monkeypatch.setattr(reduction, "device_class", lambda c: "gpu")
    _check(ga.sum(x, axis=1), x.get().astype(np.float64).sum(axis=1).astype(np.float32), 2e-5)
    base.update(recorder)
    assert "group" in {p.mode for p in recorder.plans()}, recorder.plans()


# ================================================================ CPU tuning classes

def _use_tuning_class(ctx, monkeypatch, cls):
    """Reductions on `ctx` take the CPU decompositions with TUNING entry `cls` (as
    _use_device_class); returns (ctx.kernels, the recorder standing in for it)."""
    base, recorder = _use_device_class(ctx, monkeypatch, "cpu")
    monkeypatch.setattr(reduction, "tuning_class", lambda c: cls)
    return base, recorder


@pytest.mark.parametrize("cls", ["cpu", "intel-cpu"])
def test_cpu_tuning_classes(ctx, monkeypatch, cls):
    """The plans of each CPU class (Intel's CPU runtime has its own) give numpy's results:
    vector accumulators along a contiguous reduced axis (argmax/argmin too: ties and NaNs
    give the first index), scalar ones along a strided one, rows shorter and longer than a
    vector step, one output in parts, scans."""
    base, recorder = _use_tuning_class(ctx, monkeypatch, cls)
    cases = [(np.float32, ("sum", "max", "argmax", "argmin", "mean", "cumsum")),
             (np.int64, ("sum", "max", "argmin"))]
    if ctx.fp64:
        cases.append((np.float64, ("sum", "argmax")))
    for dtype, funcs in cases:
        for shape in ((7, 63), (5, 129), (2000, 16), (3, 70001)):
            h = _ints(shape, dtype, -40, 40, seed=shape[1]) if dtype == np.int64 else \
                _floats(shape, shape[0]).astype(dtype)
            h[:, shape[1] // 3] = h.max()  # ties: argmax must give the first
            x = ga.asarray(h, context=ctx)
            for hv, xv in ((h, x), (h[:, 1:], x[:, 1:]), (h[:, ::-1], x[:, ::-1]),
                           (h[:, ::2], x[:, ::2])):
                for axis in (None, 1, 0):
                    _check_funcs(hv, xv, axis, funcs)
        if dtype != np.int64:
            hn = _floats((4, 3001), 90).astype(dtype)
            hn[1, [7, 2000]] = np.nan
            hn[2, 2999] = np.nan
            xn = ga.asarray(hn, context=ctx)
            for axis in (None, 1):
                _check_funcs(hn, xn, axis, ("max", "argmax", "argmin"))
    h = _floats(((1 << 20) + 5,), 91)
    _check_funcs(h, ga.asarray(h, context=ctx), None, ("sum", "max", "argmax"))
    base.update(recorder)
    plans = recorder.plans()
    assert any(p.vec > 1 for p in plans) and any(p.vec == 1 for p in plans), plans
    assert any(p.parts > 1 for p in plans), plans
    # many short contiguous rows, scalar accumulators: PoCL vectorises work-groups of 64
    # across work-items, Intel's runtime runs them as gathers (work-groups of 1); vector
    # accumulators: work-groups of 64 on both
    args = (2, 1024, 256, 4096, 16, True, False, False)  # 2 compute units, 4096 rows of 16
    assert reduction._decompose(cls, *args, 1).local == (1 if cls == "intel-cpu" else 64)
    plan = reduction._decompose(cls, *args, 16)
    assert (plan.mode, plan.local, plan.vec) == ("item", 64, 16), plan


# ================================================================ programs

@pytest.mark.parametrize("lazy", [True, False], ids=["one-program", "program-per-kernel"])
def test_programs_of_a_reductions_layouts(ctx, monkeypatch, lazy):
    """Layouts of one reduction take few kernels (kept and reduced dimensions in buckets);
    where kernels compile lazily one program holds them all, else each kernel is a program
    of its own (elemwise.lazy_kernels decides; patched here both ways)."""
    monkeypatch.setattr(reduction, "device_class", lambda c: "cpu")
    monkeypatch.setattr(reduction.elemwise, "lazy_kernels", lambda c: lazy)
    for name in ("kernels", "programs", "plans"):
        monkeypatch.setattr(ctx, name, Cache(name, 4096))
    h = _floats((6, 5, 7, 3), 80)
    x = ga.asarray(h, context=ctx)
    # work-items over the inner axis: 1 kept, 1 reduced dim; 1 and 3 (bucket 4); 3 and 1;
    # row bands over the outer axis
    for view, axis in ((np.s_[:], 3), (np.s_[:, ::2], None), (np.s_[:, ::2], 3), (np.s_[:], 0)):
        expected = h[view].astype(np.float64).sum(axis=axis).astype(np.float32)
        _check(ga.sum(x[view], axis=axis), expected, 2e-5)
    variants = {key[3] for key in ctx.kernels if key[0] == "reduce"}
    assert {(v.mode, v.kdim, v.rdim) for v in variants} == {
        ("item", 1, 1), ("item", 1, 4), ("item", 4, 1), ("band", 1, 1)}, variants
    assert len(ctx.programs) == (1 if lazy else 4), list(ctx.programs)


# ================================================================ where= and initial=

def _masks(shape, seed):
    rng = np.random.default_rng(seed)
    return {
        "full": rng.random(shape) > 0.4,
        "row": rng.random(shape[-1]) > 0.5,   # broadcasts along axis 0
        "column": rng.random((shape[0], 1)) > 0.5,
    }


def _np_where(name, h, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(np, name)(h, **kwargs)


@pytest.mark.parametrize(("dtype", "axis"), [(np.float32, None), (np.float32, 0),
                                             (np.float32, -1), (np.int8, None), (np.int8, 1)],
                         ids=["float32-None", "float32-0", "float32--1", "int8-None", "int8-1"])
def test_where_mask(ctx, dtype, axis):
    h = _ints((30, 41), dtype, -4, 5, seed=60)
    # prod: factors +-1 and a few +-2, so every partial product is exact (or overflows to inf
    # / wraps in int64 whatever the order)
    hp = np.random.default_rng(67).choice(np.array([-1, 1, 2, -2], dtype), (30, 41),
                                           p=[0.45, 0.45, 0.05, 0.05])
    x, xp = ga.asarray(h, context=ctx), ga.asarray(hp, context=ctx)
    rtol = 1e-6 if dtype == np.float32 else 0
    for mask in _masks(h.shape, 61).values():
        for where in (mask, ga.asarray(mask, context=ctx)):
            for keepdims in (False, True):
                kw = dict(axis=axis, keepdims=keepdims)
                _check(ga.sum(x, where=where, **kw), _np_where("sum", h, where=mask, **kw), rtol)
                _check(ga.sum(x, where=where, initial=5, **kw),
                       _np_where("sum", h, where=mask, initial=5, **kw), rtol)
                _check(ga.prod(xp, where=where, **kw), _np_where("prod", hp, where=mask, **kw))
                _check(ga.max(x, where=where, initial=-1, **kw),
                       _np_where("max", h, where=mask, initial=-1, **kw))
                _check(ga.min(x, where=where, initial=2, **kw),
                       _np_where("min", h, where=mask, initial=2, **kw))
                _check(ga.any(x > 3, where=where, **kw),
                       _np_where("any", h > 3, where=mask, **kw))
                _check(ga.all(x > -4, where=where, **kw),
                       _np_where("all", h > -4, where=mask, **kw))
                _check(ga.mean(x, where=where, **kw), _np_where("mean", h, where=mask, **kw),
                       1e-6)


def test_where_views_and_methods(ctx):
    h = _floats((30, 41), 62)
    mask = np.random.default_rng(63).random((41, 30)) > 0.5
    x = ga.asarray(h, context=ctx)
    gm = ga.asarray(mask, context=ctx)
    _check(x.T.sum(axis=0, where=gm), h.T.sum(axis=0, where=mask), 2e-6)
    _check(x.T.sum(axis=1, where=gm.T.T), h.T.sum(axis=1, where=mask), 2e-6)
    _check(x[::-1].sum(axis=1, where=mask.T[::-1]), h[::-1].sum(axis=1, where=mask.T[::-1]), 2e-6)
    _check(x.mean(axis=1, where=gm.T), _np_where("mean", h, axis=1, where=mask.T), 2e-6)
    _check(x.max(axis=0, where=gm.T, initial=-1), h.max(axis=0, where=mask.T, initial=-1))
    # all masked out: the identity / initial / NaN
    none = np.zeros((30, 41), bool)
    _check(ga.sum(x, axis=1, where=none), h.sum(axis=1, where=none))
    _check(ga.prod(x, where=none), h.prod(where=none))
    _check(ga.max(x, axis=0, where=none, initial=-1), h.max(axis=0, where=none, initial=-1))
    _check(ga.mean(x, axis=1, where=none), _np_where("mean", h, axis=1, where=none))
    _check(ga.any(x, where=none), np.any(h, where=none))
    _check(ga.all(x, where=none), np.all(h, where=none))


def test_initial(ctx):
    h = _ints((30, 41), np.int32, -50, 51, seed=64)
    hf = h.astype(np.float32)
    x, xf = ga.asarray(h, context=ctx), ga.asarray(hf, context=ctx)
    for axis in (None, 0, 1):
        _check(ga.sum(x, axis=axis, initial=5), np.sum(h, axis=axis, initial=5))
        _check(ga.sum(xf, axis=axis, initial=5), np.sum(hf, axis=axis, initial=5), 1e-6)
        _check(ga.min(x, axis=axis, initial=-10), np.min(h, axis=axis, initial=-10))
        _check(ga.min(x, axis=axis, initial=-1000), np.min(h, axis=axis, initial=-1000))
        _check(ga.max(xf, axis=axis, initial=1000.5), np.max(hf, axis=axis, initial=1000.5))
        _check(ga.max(xf, axis=axis, initial=10, keepdims=True),
               np.max(hf, axis=axis, initial=10, keepdims=True))
        _check(ga.prod(x[:4, :5], axis=axis, initial=2), np.prod(h[:4, :5], axis=axis,
                                                                initial=2))
    # empty reductions give `initial`
    e = ga.zeros((0, 3), dtype=np.float32, context=ctx)
    he = np.zeros((0, 3), np.float32)
    _check(ga.max(e, axis=0, initial=-1), np.max(he, axis=0, initial=-1))
    _check(ga.min(e, initial=3.5), np.min(he, initial=3.5))
    _check(ga.max(x[:, :0], axis=1, initial=7, keepdims=True),
           np.max(h[:, :0], axis=1, initial=7, keepdims=True))
    _check(ga.sum(e, initial=5), np.sum(he, initial=5))
    _check(ga.sum(e, axis=0, initial=5), np.sum(he, axis=0, initial=5))
    _check(ga.prod(e, axis=0, initial=3), np.prod(he, axis=0, initial=3))
    _check(ga.sum(x[:0], axis=0, initial=-2), np.sum(h[:0], axis=0, initial=-2))
    # into out=
    out = ga.zeros(41, dtype=np.int64, context=ctx)
    assert ga.sum(x, axis=0, initial=5, out=out) is out
    _check(out, np.sum(h, axis=0, initial=5).astype(np.int64))


def test_where_errors(ctx):
    h = _floats((30, 41), 65)
    x = ga.asarray(h, context=ctx)
    mask = np.random.default_rng(66).random((30, 41)) > 0.5
    with pytest.raises(ValueError):
        np.max(h, where=mask)
    with pytest.raises(ValueError):  # no identity: numpy wants `initial`
        ga.max(x, where=mask)
    with pytest.raises(ValueError):
        ga.min(x, axis=0, where=ga.asarray(mask, context=ctx))
    with pytest.raises(ValueError):  # a mask that does not broadcast to x
        ga.sum(x, where=np.ones((30, 2), bool))
    with pytest.raises(ValueError):
        ga.sum(x, where=np.ones((2, 30, 41), bool))


def test_bool_sums_are_logical_or(ctx):
    """sum/cumsum with dtype=bool follow numpy (a logical or), never an 8-bit count that
    wraps at 256 Trues."""
    x = np.ones((3, 300), bool)
    x[1, :290] = False
    x[2] = False
    y = np.array([[2, 0, -3], [0, 0, 0]], np.int32)
    gx, gy = ga.asarray(x, context=ctx), ga.asarray(y, context=ctx)
    for axis in (None, 1):
        np.testing.assert_array_equal(ga.sum(gx, axis=axis, dtype=bool).get(),
                                      np.sum(x, axis=axis, dtype=bool))
        np.testing.assert_array_equal(gx.cumsum(axis=axis, dtype=bool).get(),
                                      np.cumsum(x, axis=axis, dtype=bool))
    np.testing.assert_array_equal(ga.sum(gy, axis=1, dtype=bool).get(),
                                  np.sum(y, axis=1, dtype=bool))
