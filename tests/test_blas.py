"""BLAS cases that test_blas_core.py leaves out: every size in each of M, N and K; C as an
F-order, offset or reversed view; gemv, ger and gemm_batched with transposes, views and beta;
matmul batch broadcasting; out= and read-only outputs; complex products; random layouts
(hypothesis). numpy in float64/complex128 is the oracle; the device_class fixture (conftest.py)
runs each test on the CPU kernels and on the GPU tiles.

PoCL builds each distinct kernel in about a second (a GPU tile of the column shape in about
four): cases are chosen to share kernels (dtype, tile and layout flags, never sizes)."""

import dataclasses
import itertools
import re

import numpy as np
import pytest
from conftest import using_flags
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpuarr as ga
from gpuarr import blas
from gpuarr.errors import ArgumentTypeError, ReadOnlyError, ShapeError

SIZES = (1, 7, 31, 64, 129, 257)
SCALARS = (0, 1, -1, 0.5)
TOL = {"e": 2e-3, "f": 1e-5, "d": 1e-12}  # by the real dtype's char: float16, 32, 64


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind in "biu":
        return rng.integers(0, 5, shape).astype(dt)
    x = rng.random(shape) - 0.5
    if dt.kind == "c":
        x = x + 1j * (rng.random(shape) - 0.5)
    return x.astype(dt)


def _wide(x):
    """x in the oracle's precision."""
    return x.astype({"f": np.float64, "c": np.complex128}.get(x.dtype.kind, x.dtype))


def _close(got, expected, dtype, k):
    """got (a GpuArray) has dtype and matches expected within what k products allow."""
    assert isinstance(got, ga.GpuArray), type(got)
    got, expected, dt = got.get(), np.asarray(expected), np.dtype(dtype)
    assert got.dtype == dt, (got.dtype, dt)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if dt.kind in "biu":
        np.testing.assert_array_equal(got, expected)
        return
    tol = TOL[np.finfo(dt).dtype.char]
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * max(k, 1) ** 0.5)


def _fp64(ctx, dtype):
    if np.dtype(dtype) in (np.float64, np.complex128) and not ctx.fp64:
        pytest.skip("no fp64 on this device")


def _place(ctx, x, trans=False, order="C", offset=0, step=1):
    """The host matrix x as a device view into a buffer of junk (NaN): stored transposed
    (x.T in memory, seen through .T) or not, in C or F order, `offset` rows and columns in,
    every |step|-th column, reversed for a negative step. Returns the view, the device buffer,
    its host copy and `pick`, which makes the same view of any copy of the buffer."""
    r, c = x.shape[::-1] if trans else x.shape

    def pick(buf):
        v = buf[offset:offset + r, offset:offset + c * abs(step):abs(step)]
        v = v if step > 0 else v[:, ::-1]
        return v.T if trans else v

    junk = {"b": True, "i": 77, "u": 77}.get(x.dtype.kind, np.nan)
    host = np.full((r + offset + 1, c * abs(step) + offset + 1), junk, x.dtype, order=order)
    pick(host)[...] = x
    buf = ga.asarray(host, context=ctx)
    return pick(buf), buf, host, pick


def _expect_buffer(host, pick, values):
    """host with the placed view's elements replaced by values, in the oracle's precision."""
    out = _wide(host)
    pick(out)[...] = values
    return out


# ---------------------------------------------------------------- gemm: sizes, layouts, dtypes

@pytest.mark.parametrize("dim", ["m", "n", "k"])
def test_every_size_in_each_dimension(ctx, device_class, dim):
    """M, N and K each over SIZES with the other two fixed at 31 and 64."""
    fixed = {"m": dict(n=64, k=31), "n": dict(m=31, k=64), "k": dict(m=64, n=31)}[dim]
    for size in SIZES:
        m, n, k = (dict(fixed, **{dim: size})[d] for d in "mnk")
        a, b = _data((m, k), np.float32, size), _data((k, n), np.float32, size + 1)
        got = ga.asarray(a, context=ctx) @ ga.asarray(b, context=ctx)
        _close(got, _wide(a) @ b, np.float32, k)


@pytest.mark.parametrize("layout", [dict(order="F"), dict(offset=3), dict(offset=1, step=-2)],
                         ids=["F", "offset", "reversed-strided"])
def test_gemm_c_views_every_alpha_beta(ctx, device_class, layout):
    """C as an F-order array, an offset view or a reversed strided view, written in place for
    every alpha and beta of SCALARS; the rest of C's buffer is left alone."""
    m, k, n = 33, 19, 40
    a, b, c = _data((m, k), np.float32, 1), _data((k, n), np.float32, 2), _data((m, n),
                                                                             np.float32, 3)
    ga_, gb = ga.asarray(a, context=ctx), ga.asarray(b, context=ctx)
    ref = _wide(a) @ b
    for alpha in SCALARS:
        for beta in SCALARS:
            view, buf, host, pick = _place(ctx, c, **layout)
            assert blas.gemm(alpha, ga_, gb, beta, view, overwrite_c=True) is view
            _close(buf, _expect_buffer(host, pick, alpha * ref + beta * c), np.float32, k)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_gemm_dtypes_transposed_views(ctx, device_class, dtype):
    """float16, float64 and integer gemm with op(A) = A^T, op(B) = B^T (offset and F-order
    views), alpha and beta, into an F-order C (beta = 0 in these dtypes: test_blas_core)."""
    _fp64(ctx, dtype)
    m, k, n = 20, 45, 37
    a, b, c = _data((m, k), dtype, 4), _data((k, n), dtype, 5), _data((m, n), dtype, 6)
    at = _place(ctx, a.T, trans=True, offset=2)[0]
    bt = _place(ctx, b.T, order="F", offset=1)[0]
    alpha, beta = (-1, 2) if np.dtype(dtype).kind == "i" else (0.5, -1)
    view, buf, host, pick = _place(ctx, c, order="F")
    blas.gemm(alpha, at, bt, beta, view, trans_a=True, trans_b=True, overwrite_c=True)
    expected = alpha * _wide(a) @ _wide(b) + beta * _wide(c)
    _close(buf, _expect_buffer(host, pick, expected.astype(dtype)), dtype, k)


def test_integer_gemm_and_gemv_with_default_scalars(ctx, device_class):
    """pygpu's defaults (alpha an int, beta=0.0) on integer matrices: the kernels take their
    scalars in the accumulator's integer type."""
    a, b, x = _data((9, 13), np.int32, 7), _data((13, 6), np.int32, 8), _data(13, np.int32, 9)
    da, db, dx = (ga.asarray(h, context=ctx) for h in (a, b, x))
    _close(blas.gemm(3, da, db), 3 * (a @ b), np.int32, 13)
    _close(blas.gemv(2, da, dx), 2 * (a @ x), np.int32, 13)
    _close(blas.gemm(1, da, db, 2, blas.gemm(1, da, db)), 3 * (a @ b), np.int32, 13)


# ---------------------------------------------------------------- gemv, ger, gemm_batched

def test_gemv_transposes_views_beta(ctx, device_class):
    """gemv with op(A) read through a transposed or F-order offset view, x reversed and
    strided, y an offset strided view updated in place for each beta."""
    m, n = 23, 40
    a = _data((m, n), np.float32, 7)
    x, y = _data(n, np.float32, 8), _data(m, np.float32, 9)
    gx = _place(ctx, x[None, :], offset=1, step=-2)[0][0]
    ref = _wide(a) @ x
    for trans in (False, True):  # op(A) = a, column-major (A = a^T row-major when trans)
        ga_ = _place(ctx, a.T if trans else a, order="C" if trans else "F", offset=2)[0]
        for beta in SCALARS:
            view, buf, host, pick = _place(ctx, y[None, :], offset=1, step=3)
            out = blas.gemv(0.5, ga_, gx, beta, view[0], trans_a=trans, overwrite_y=True)
            _close(out, 0.5 * ref + beta * y, np.float32, n)
            _close(buf, _expect_buffer(host, pick, 0.5 * ref + beta * y), np.float32, n)
        gy = ga.asarray(y, context=ctx)
        _close(blas.gemv(1.0, ga_, gx, -1.0, gy, trans_a=trans), ref - y, np.float32, n)
        _close(gy, y, np.float32, 1)  # overwrite_y=False leaves y alone
        # without y, beta has nothing to scale
        _close(blas.gemv(2.0, ga_, gx, 5.0, trans_a=trans), 2 * ref, np.float32, n)


def test_ger_views_and_alpha(ctx, device_class):
    """ger with reversed strided x and y, A an F-order offset view updated in place."""
    m, n = 17, 26
    x, y, a = _data(m, np.float32, 10), _data(n, np.float32, 11), _data((m, n), np.float32, 12)
    gx = _place(ctx, x[None, :], offset=2, step=-3)[0][0]
    gy = _place(ctx, y[None, :], step=2)[0][0]
    for alpha in SCALARS:
        view, buf, host, pick = _place(ctx, a, order="F", offset=1)
        assert blas.ger(alpha, gx, gy, view, overwrite_a=True) is view
        expected = a + alpha * np.outer(_wide(x), y)
        _close(buf, _expect_buffer(host, pick, expected), np.float32, 1)
    ga_ = ga.asarray(a, context=ctx)
    # a numpy float64 alpha scales, the result keeps A's dtype
    _close(blas.ger(np.float64(-1), gx, gy, ga_), a - np.outer(_wide(x), y), np.float32, 1)
    _close(ga_, a, np.float32, 1)  # overwrite_a=False leaves A alone
    _close(blas.ger(0.5, gx, gy), 0.5 * np.outer(_wide(x), y), np.float32, 1)


def test_gemm_batched_transposes_broadcast_beta(ctx, device_class):
    """gemm_batched for each trans_a, trans_b, a batch of one broadcast on either side, C
    updated in place with beta."""
    p, m, k, n = 5, 9, 21, 14
    for trans_a in (False, True):
        for trans_b in (False, True):
            a = _data((p if trans_b else 1, m, k), np.float32, 13)
            b = _data((1 if trans_b else p, k, n), np.float32, 14)
            c = _data((p, m, n), np.float32, 15)
            ga_ = ga.asarray(a.swapaxes(1, 2).copy() if trans_a else a, context=ctx)
            gb = ga.asarray(b.swapaxes(1, 2).copy() if trans_b else b, context=ctx)
            gc = ga.asarray(c, context=ctx)
            out = blas.gemm_batched(0.5, ga_, gb, -1.0, gc, trans_a=trans_a, trans_b=trans_b,
                                    overwrite_c=True)
            assert out is gc
            _close(gc, 0.5 * _wide(a) @ b - c, np.float32, k)


# ---------------------------------------------------------------- matmul broadcasting, dtypes

BROADCASTS = [((5,), (2, 3, 5, 4)), ((2, 3, 4, 5), (5,)), ((2, 1, 3, 4, 5), (4, 1, 5, 6)),
              ((3, 1, 4, 5), (1, 2, 5, 6)), ((1, 4, 5), (3, 5, 2)), ((0, 3, 4), (4, 5)),
              ((2, 3, 4), (5, 1, 4, 2)), ((7,), (7,))]


def test_matmul_batch_broadcasting(ctx, device_class):
    """Batch dimensions broadcast (1-d operands on either side, 4-d and 5-d batches, an
    empty batch), and batches whose strides do not collapse (a transposed batch) or are 0."""
    for i, (sa, sb) in enumerate(BROADCASTS):
        a, b = _data(sa, np.float32, 20 + i), _data(sb, np.float32, 40 + i)
        got = ga.matmul(ga.asarray(a, context=ctx), ga.asarray(b, context=ctx))
        _close(got, np.matmul(_wide(a), b), np.float32, sa[-1])
    a, b = _data((3, 2, 4, 5), np.float32, 60), _data((2, 3, 5, 6), np.float32, 61)
    ta = ga.asarray(a, context=ctx).transpose(1, 0, 2, 3)
    _close(ta @ ga.asarray(b, context=ctx), _wide(a).transpose(1, 0, 2, 3) @ b, np.float32, 5)
    flat = ga.broadcast_to(ga.asarray(a[0, 0], context=ctx), (3, 4, 5))
    _close(flat @ ga.asarray(b[0], context=ctx), _wide(a[0, 0]) @ b[0], np.float32, 5)


@pytest.mark.parametrize("pair", [(np.int8, np.float32), (np.uint8, np.int8),
                                  (np.bool_, np.float32), (np.float16, np.float32)],
                         ids=lambda p: f"{np.dtype(p[0]).name}-{np.dtype(p[1]).name}")
def test_matmul_mixed_dtypes_promote(ctx, device_class, pair):
    """Mixed real operands promote as numpy's matmul."""
    a, b = _data((6, 45), pair[0], 62), _data((45, 11), pair[1], 63)
    expected = np.matmul(a, b)
    if expected.dtype.kind == "f":
        expected = _wide(a) @ _wide(b)
    _close(ga.asarray(a, context=ctx) @ ga.asarray(b, context=ctx), expected,
           np.matmul(a, b).dtype, 45)


def _rel(got, ref):
    return np.abs(got - ref).max() / np.abs(ref).max()


@pytest.mark.parametrize("k", [1 << 18, (1 << 17) + 4097])
def test_long_k_is_summed_in_chunks(ctx, device_class, k):
    """A long k is split into chunks summed by a reduction: x.T @ x of a 2^18 x 8 float32
    array is within a few times numpy's error (one float32 accumulator over all of k was
    ~300x worse), also with alpha, beta and a k that is no multiple of the chunk."""
    rng = np.random.default_rng(k)
    h = rng.standard_normal((k, 8), dtype=np.float32) + 0.5
    ref = h.T.astype(np.float64) @ h.astype(np.float64)
    x = ga.asarray(h, context=ctx)
    numpy_err = _rel(h.T @ h, ref)
    assert _rel((x.T @ x).get(), ref) <= max(4 * numpy_err, 2e-6)
    hc = rng.standard_normal((8, 8), dtype=np.float32)
    c = ga.asarray(hc, context=ctx)
    got = blas.gemm(0.5, x, x, 2.0, c, trans_a=True, overwrite_c=True).get()
    assert _rel(got, 0.5 * ref + 2.0 * hc) <= max(4 * numpy_err, 2e-6)
    v = ga.asarray(h[:, 0].copy(), context=ctx)  # a long matrix-vector product too
    assert _rel((x.T @ v).get(), ref[:, 0]) <= max(4 * numpy_err, 2e-6)


def test_contractions_of_length_zero(ctx):
    """A sum over an empty axis is 0 (then alpha * 0 + beta * C), complex alike."""
    for dtype, alpha, beta in ((np.float32, 1, -0.5), (np.complex64, 1, -0.5),
                               (np.complex64, 1j, 0.5 - 1j)):
        def zeros(*shape, dtype=dtype):
            return ga.zeros(shape, dtype, context=ctx)

        _close(ga.tensordot(zeros(3, 0), zeros(0, 4), 1), np.zeros((3, 4)), dtype, 1)
        _close(ga.inner(zeros(3, 0), zeros(2, 0)), np.zeros((3, 2)), dtype, 1)
        _close(ga.dot(zeros(2, 3, 0), zeros(0, 4)), np.zeros((2, 3, 4)), dtype, 1)
        c = _data((3, 4), dtype, 79)
        out = blas.gemm(alpha, zeros(3, 0), zeros(0, 4), beta, ga.asarray(c, context=ctx))
        _close(out, beta * _wide(c), dtype, 1)


# ---------------------------------------------------------------- out=, read-only, errors

def test_out_argument(ctx):
    """out= of matmul (numpy's same_kind casting) and dot (numpy's exact dtype); a wrong
    shape or dtype raises and leaves out alone."""
    a, b = _data((4, 5), np.float32, 64), _data((5, 3), np.float32, 65)
    ga_, gb = ga.asarray(a, context=ctx), ga.asarray(b, context=ctx)
    for f in (ga.matmul, ga.dot):
        out = ga.zeros((4, 3), np.float32, context=ctx)
        assert f(ga_, gb, out=out) is out
        _close(out, _wide(a) @ b, np.float32, 5)
        for bad in ((3, 4), (4, 3, 1), (12,)):
            out = ga.zeros(bad, np.float32, context=ctx)
            with pytest.raises(ShapeError, match=re.escape(str(bad))):
                f(ga_, gb, out=out)
            _close(out, np.zeros(bad), np.float32, 1)
    out = ga.zeros((4, 3), np.float64, context=ctx)
    assert ga.matmul(ga_, gb, out=out) is out  # same_kind: the float32 product, cast
    np.testing.assert_allclose(out.get(), _wide(a) @ b, rtol=1e-5)
    assert out.dtype == np.float64
    with pytest.raises(ArgumentTypeError, match="float64"):
        ga.dot(ga_, gb, out=out)  # numpy's dot takes only the product's dtype
    with pytest.raises(TypeError, match="int32"):
        ga.matmul(ga_, gb, out=ga.zeros((4, 3), np.int32, context=ctx))
    with pytest.raises(TypeError):
        ga.matmul(ga_, gb, out=np.zeros((4, 3), np.float32))
    v = ga.asarray(a[0], context=ctx)
    with pytest.raises(ShapeError):
        ga.matmul(v, v, out=ga.zeros(5, np.float32, context=ctx))
    with pytest.raises(TypeError):
        ga.matmul(v, v, out=ga.zeros((), np.int64, context=ctx))
    out = ga.zeros((), np.float32, context=ctx)
    _close(ga.matmul(v, v, out=out), _wide(a[0]) @ a[0], np.float32, 5)


def _read_only(x, ctx):
    g = ga.asarray(x, context=ctx)
    g.flags.writeable = False
    return g


def test_read_only_outputs_raise(ctx, device_class):
    """overwrite_c/overwrite_y/overwrite_a and out= into a read-only array, a view of one or
    a broadcast view raise ReadOnlyError and leave the data alone; without overwrite the
    read-only array is only read."""
    a, b, c = _data((6, 8), np.float32, 66), _data((8, 5), np.float32, 67), _data((6, 5),
                                                                             np.float32, 68)
    ga_, gb = ga.asarray(a, context=ctx), ga.asarray(b, context=ctx)
    rc = _read_only(c, ctx)
    for target in (rc, rc[1:]):
        with pytest.raises(ReadOnlyError):
            blas.gemm(1.0, ga_[:target.shape[0]], gb, 1.0, target, overwrite_c=True)
        with pytest.raises(ReadOnlyError):
            ga.matmul(ga_[:target.shape[0]], gb, out=target)
    _close(rc, c, np.float32, 1)
    _close(blas.gemm(1.0, ga_, gb, -1.0, rc), _wide(a) @ b - c, np.float32, 8)
    rb = ga.broadcast_to(ga.asarray(c[None], context=ctx), (3, 6, 5))
    with pytest.raises(ReadOnlyError):
        blas.gemm_batched(1.0, ga.broadcast_to(ga_, (3, 6, 8)), gb.reshape(1, 8, 5), 1.0, rb,
                          overwrite_c=True)
    with pytest.raises(ReadOnlyError):
        blas.gemv(1.0, ga_, gb[:, 0], 1.0, rc[:, 0], overwrite_y=True)
    with pytest.raises(ReadOnlyError):
        blas.ger(1.0, ga_[:, 0], gb[0], _read_only(a[:, :5], ctx), overwrite_a=True)
    _close(rc, c, np.float32, 1)


def test_errors_name_the_shapes_and_dtypes(ctx):
    def f32(*shape):
        return ga.zeros(shape, np.float32, context=ctx)

    cases = [
        (ShapeError, r"\(3, 4\).*\(5, 2\)", lambda: blas.gemm(1, f32(3, 4), f32(2, 5),
                                                             trans_b=True)),
        (ShapeError, r"\(4,\)", lambda: blas.gemm(1, f32(4), f32(4, 2))),
        (ShapeError, r"\(2, 3\)", lambda: blas.gemm(1, f32(3, 4), f32(4, 2), 1, f32(2, 3))),
        (ShapeError, r"\(3, 4, 5\).*\(2, 5, 6\)",
         lambda: blas.gemm_batched(1, f32(3, 4, 5), f32(2, 5, 6))),
        (ShapeError, r"\(4, 5\)", lambda: blas.gemm_batched(1, f32(4, 5), f32(1, 5, 6))),
        (ShapeError, r"\(3, 4, 7\).*\(3, 4, 6\)",
         lambda: blas.gemm_batched(1, f32(3, 4, 5), f32(1, 5, 6), 1, f32(3, 4, 7))),
        (ShapeError, r"\(3, 4\), x is \(3,\)", lambda: blas.gemv(1, f32(3, 4), f32(3))),
        (ShapeError, r"y is \(4,\).*y of \(3,\)", lambda: blas.gemv(1, f32(3, 4), f32(4), 1,
                                                                   f32(4))),
        (ShapeError, r"\(3, 4\)", lambda: blas.ger(1, f32(3), f32(5), f32(3, 4))),
        (ShapeError, r"\(3, 1\)", lambda: blas.ger(1, f32(3, 1), f32(5))),
        (ShapeError, r"\(5,\).*\(6,\)", lambda: ga.matmul(f32(5), f32(6))),
        (ShapeError, r"\(2,\).*\(5,\)", lambda: ga.matmul(f32(2, 3, 4), f32(5, 4, 2))),
        (ShapeError, r"\(3, 4\).*\(5, 4\)",
         lambda: ga.tensordot(f32(3, 4), f32(5, 4), ([0], [0]))),
        (ShapeError, r"\(3, 4\)", lambda: ga.dot(f32(3, 4), f32(3, 4))),
        (ArgumentTypeError, "float32.*int32",
         lambda: blas.gemm_batched(1, f32(1, 2, 2), ga.zeros((1, 2, 2), np.int32,
                                                             context=ctx))),
        (ArgumentTypeError, "float32.*float16",
         lambda: blas.gemv(1, f32(2, 2), f32(2), 1, ga.zeros(2, np.float16, context=ctx))),
        (ArgumentTypeError, "float32.*complex64",
         lambda: blas.ger(1, f32(2), ga.zeros(2, np.complex64, context=ctx))),
    ]
    for error, pattern, call in cases:
        with pytest.raises(error, match=pattern):
            call()


# ---------------------------------------------------------------- complex

@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_complex_products(ctx, device_class, dtype):
    """Every product function on complex operands (real and imaginary parts as strided real
    views, four real GEMMs), real and complex alpha and beta, operands and C as views."""
    _fp64(ctx, dtype)
    if dtype == np.complex128 and device_class == "gpu":
        pytest.skip("complex128 on the GPU tiles: matmul only (test_complex_mixed_with_real); "
                    "the column tiles of its vector products take ~8 s to build on PoCL")
    m, k, n = 13, 21, 10
    a, b, c = _data((m, k), dtype, 70), _data((k, n), dtype, 71), _data((m, n), dtype, 72)
    wa, wb, wc = _wide(a), _wide(b), _wide(c)
    ga_ = _place(ctx, a, offset=1, step=-2)[0]
    gb = _place(ctx, b, trans=True, order="F")[0]
    for alpha, beta in ((1, 0), (0.5, -1), (1j, 0), (0.5 - 2j, 1 + 1j), (-1, 1j), (0, 0.5)):
        view, buf, host, pick = _place(ctx, c, offset=2)
        blas.gemm(alpha, ga_, gb, beta, view, overwrite_c=True)
        _close(buf, _expect_buffer(host, pick, alpha * wa @ wb + beta * wc), dtype, k)
    at = ga.asarray(a.T.copy(), context=ctx)
    _close(blas.gemm(2.0, at, gb, trans_a=True), 2 * wa @ wb, dtype, k)
    _close(ga_ @ gb, wa @ wb, dtype, k)
    _close(np.matmul(ga_, gb), wa @ wb, dtype, k)
    gv, gw = ga_[0], gb[:, 0]
    _close(gv @ gw, wa[0] @ wb[:, 0], dtype, k)  # no conjugate, as numpy
    _close(ga_ @ gw, wa @ wb[:, 0], dtype, k)
    _close(gv @ gb, wa[0] @ wb, dtype, k)
    _close(ga.dot(ga_, gb), wa @ wb, dtype, k)
    _close(ga.dot(gv, gw), np.dot(wa[0], wb[:, 0]), dtype, k)
    _close(ga.vdot(gv, gw), np.vdot(wa[0], wb[:, 0]), dtype, k)
    _close(ga.vdot(ga_, ga_), np.vdot(wa, wa), dtype, m * k)
    _close(ga.inner(ga_, ga_), np.inner(wa, wa), dtype, k)
    _close(ga.outer(gv, gw), np.outer(wa[0], wb[:, 0]), dtype, 1)
    t3, t2 = _data((3, 4, 5), dtype, 73), _data((5, 4, 2), dtype, 74)
    g3, g2 = ga.asarray(t3, context=ctx), ga.asarray(t2, context=ctx)
    _close(ga.tensordot(g3, g2, ([1, 2], [1, 0])),
           np.tensordot(_wide(t3), _wide(t2), ([1, 2], [1, 0])), dtype, 20)
    _close(ga.dot(g3, g2[:, 0]), np.dot(_wide(t3), _wide(t2)[:, 0]), dtype, 5)
    p3 = _data((1, 3, 5), dtype, 75)  # B^T, a batch of one
    _close(blas.gemm_batched(1j, g3, ga.asarray(p3, context=ctx), trans_b=True),
           1j * _wide(t3) @ _wide(p3).swapaxes(1, 2), dtype, 5)
    x, y, d = _data(m, dtype, 76), _data(k, dtype, 77), _data((k, n), dtype, 78)
    _close(blas.gemv(1 - 1j, ga_, ga.asarray(x, context=ctx), 0.5, ga.asarray(y, context=ctx),
                     trans_a=True), (1 - 1j) * wa.T @ x + 0.5 * y, dtype, m)
    _close(blas.ger(2j, gv, gb[0], ga.asarray(d, context=ctx)),
           d + 2j * np.outer(wa[0], wb[0]), dtype, 1)


def test_complex_mixed_with_real(ctx, device_class):
    """Real and complex operands promote as numpy's matmul (float64 or int32 with complex64:
    complex128). Not vdot: vectors take the column tile, slow to build on PoCL."""
    pairs = [(np.float32, np.complex64), (np.complex64, np.float32)]
    if ctx.fp64:
        pairs += [(np.float64, np.complex64), (np.int32, np.complex64)]
    for i, (da, db) in enumerate(pairs):
        a, b = _data((6, 9), da, 80 + i), _data((9, 4), db, 90 + i)
        dt = np.matmul(a, b).dtype
        _close(ga.asarray(a, context=ctx) @ ga.asarray(b, context=ctx), _wide(a) @ _wide(b),
               dt, 9)


# ---------------------------------------------------------------- random layouts

_SIDE = st.integers(2, 70)  # 1 is in the size sweep; here it would add a tile of its own
# order, offset, step, stored transposed (see _place)
_LAYOUT = st.tuples(st.sampled_from("CF"), st.integers(0, 3), st.sampled_from([1, 2, -1]),
                    st.booleans())


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=_SIDE, n=_SIDE, k=st.integers(1, 70), trans_a=st.booleans(), trans_b=st.booleans(),
       layouts=st.tuples(_LAYOUT, _LAYOUT, _LAYOUT), alpha=st.sampled_from(SCALARS[1:]),
       beta=st.sampled_from(SCALARS))
def test_gemm_random_layouts(ctx, device_class, m, n, k, trans_a, trans_b, layouts, alpha,
                             beta):
    """gemm on random sizes, transposes, orders, offsets and strides of A, B and C."""
    a, b, c = _data((m, k), np.float32, m), _data((k, n), np.float32, n), _data((m, n),
                                                                             np.float32, k)
    la, lb, lc = (dict(zip(("order", "offset", "step", "trans"), x)) for x in layouts)
    ga_ = _place(ctx, a.T if trans_a else a, **la)[0]
    gb = _place(ctx, b.T if trans_b else b, **lb)[0]
    view, buf, host, pick = _place(ctx, c, **lc)
    blas.gemm(alpha, ga_, gb, beta, view, trans_a=trans_a, trans_b=trans_b, overwrite_c=True)
    expected = alpha * _wide(a) @ b + beta * c
    _close(buf, _expect_buffer(host, pick, expected), np.float32, k)


# ---------------------------------------------------------------- small shapes, every size

SWEEP = (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 127, 128, 129,
         191, 255, 256, 257, 383, 511, 513, 767, 1023, 1024, 1025, 1100)


@pytest.fixture
def builtin_table(monkeypatch):
    """Dispatch by the built-in tiles on a device of 2 compute units, whatever the device's
    tuned entries and units (on an H200 its tuned small tile outbids the tiny kernel)."""
    cost = blas._tile_cost
    monkeypatch.setattr(blas, "_tile_cost", lambda units, *args, **kw: cost(2, *args, **kw))
    monkeypatch.setattr(blas.tuning, "entries", lambda *args, **kw: {})
    blas.forget_plans()
    yield
    blas.forget_plans()


@pytest.mark.parametrize("sizes", [SWEEP, pytest.param(range(1, 1101), marks=pytest.mark.slow)],
                         ids=["sampled", "every"])
@pytest.mark.parametrize("dim", ["m", "n", "k"])
def test_small_shape_sweep(ctx, device_class, builtin_table, dim, sizes):
    """M, N or K over 1..1100 with the other two at 40 and 64, on views into one matrix (row
    stride 1100, offsets): the tiny direct kernel (GPU), the small, medium and big tiles or
    the CPU kernel, as the table picks them, against numpy."""
    fixed = {"m": dict(n=64, k=40), "n": dict(m=40, k=64), "k": dict(m=64, n=40)}[dim]
    ha, hb = _data((1101, 1101), np.float32, 3), _data((1101, 1101), np.float32, 4)
    da, db = ga.asarray(ha, context=ctx), ga.asarray(hb, context=ctx)
    wa, wb = _wide(ha), _wide(hb)  # (numpy's float64 @ float32 does not use BLAS: slow)
    families = set()
    for size in sizes:
        m, n, k = (dict(fixed, **{dim: size})[d] for d in "mnk")
        o = size % 2  # the same layout at two offsets: one plan serves both
        got = (da[o:o + m, o:o + k] @ db[:k, o:o + n]).get()
        want = wa[o:o + m, o:o + k] @ wb[:k, o:o + n]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * k ** 0.5,
                                   err_msg=f"m, n, k = {m}, {n}, {k}")
        families.add(blas._choose(ctx, *_as_batches(da[:m, :k], db[:k, :n]), False)[0].name)
    # the GPU table takes small products to the tiny kernel, the others to tiles
    assert "direct" in families if device_class == "cpu" else (
        "tiny" in families and families & {"small", "medium", "big"}), families


def _as_batches(a, b):
    """The 3-d operands, and a C-contiguous 3-d output, of a @ b for blas._choose."""
    c = ga.empty((a.shape[0], b.shape[1]), a.dtype, context=a.context)
    return blas._as_batch(a), blas._as_batch(b), blas._as_batch(c)


# ---------------------------------------------------------------- plans and the dispatch table

def _counting(monkeypatch):
    """(decisions, launches): the calls of blas._decide and the families of the plans
    launched, from now on."""
    decisions, launches = [], []
    decide, launch = blas._decide, blas.GemmPlan.launch

    def counted_decide(*args, **kw):
        decisions.append(args[1:4])
        return decide(*args, **kw)

    def counted_launch(plan, *args):
        launches.append(plan.family)
        return launch(plan, *args)

    monkeypatch.setattr(blas, "_decide", counted_decide)
    monkeypatch.setattr(blas.GemmPlan, "launch", counted_launch)
    return decisions, launches


def test_repeated_product_runs_its_plan(ctx, device_class, monkeypatch):
    """The dispatch table decides once per layout: a repeated product (at other offsets of
    the same alignment too) runs the kept plan, one launch a call; another layout, another
    dtype or other flags decide again."""
    prec = blas._mma_precision(np.dtype(np.float32))
    if prec:  # the tensor cores' probe product (once per device, at first need): not counted
        blas._mma_tile(ctx, prec)
    decisions, launches = _counting(monkeypatch)
    h = _data((40, 40), np.float32, 90)
    buf = ga.asarray(h, context=ctx)
    for row in (0, 4, 8, 0):  # rows of 160 bytes: offsets alike modulo 16 bytes
        a, b = buf[row:row + 16, :16], buf[row + 1:row + 17, 1:18]
        _close(a @ b, _wide(h[row:row + 16, :16]) @ h[row + 1:row + 17, 1:18], np.float32, 16)
    assert len(decisions) == 1 and len(launches) == 4 and len(set(launches)) == 1
    _close(buf[:16, :16].T @ buf[:16, :17], _wide(h[:16, :16]).T @ h[:16, :17], np.float32, 16)
    assert len(decisions) == 2 and len(launches) == 5
    h64 = h.astype(np.float64)
    if ctx.fp64:
        _close(ga.asarray(h64, context=ctx) @ ga.asarray(h64, context=ctx), h64 @ h64,
               np.float64, 40)
        assert len(decisions) == 3
    before = len(decisions)
    with using_flags("gemm_precision=fp32,print_active_device=False"):
        _close(buf[:16, :16] @ buf[1:17, 1:18], _wide(h[:16, :16]) @ h[1:17, 1:18],
               np.float32, 16)
    assert len(decisions) == before + 1


def test_plan_reads_only_storage_and_offset(ctx, device_class):
    """A kept plan launched on other arrays of its layout (other storages, offsets, values)
    computes their product, gemv's swapped operands and reversed k included."""
    for shape_a, shape_b in (((9, 20), (20, 7)), ((1, 30), (30, 5)), ((6, 30), (30, 1))):
        for seed in range(3):
            a, b = _data(shape_a, np.float32, seed), _data(shape_b, np.float32, seed + 9)
            pad = np.zeros((3 + seed, shape_a[1]), np.float32)  # the offset moves
            da = ga.asarray(np.concatenate([pad, a]), context=ctx)[3 + seed:]
            _close(da @ ga.asarray(b, context=ctx), _wide(a) @ b, np.float32, shape_a[1])
    h = _data((5, 40), np.float32, 91)
    x = _data(40, np.float32, 92)
    d = ga.asarray(h, context=ctx)
    for lo in (0, 1):
        got = blas.gemv(1.0, d[lo:lo + 4, ::-1], ga.asarray(x[::-1].copy(), context=ctx))
        _close(got, _wide(h[lo:lo + 4, ::-1]) @ x[::-1], np.float32, 40)


def _family(ctx, monkeypatch, cls, a, b, dtype=np.float32):
    """The dispatch table's entry for a @ b (host shapes, or views) on a device of class cls
    ('nvidia': a GPU whose tensor cores are as the test patches _mma_tile; 'cpu' and 'gpu':
    none, whatever the real device has)."""
    monkeypatch.setattr(blas, "device_class", lambda c: cls)
    if cls != "nvidia":
        monkeypatch.setattr(blas, "_mma_tile", lambda c, prec: None)
    to = lambda x: x if isinstance(x, ga.GpuArray) else ga.zeros(x, dtype, context=ctx)  # noqa: E731
    return blas._choose(ctx, *_as_batches(to(a), to(b)), False)[0].name


def test_dispatch_table_choices(ctx, builtin_table, monkeypatch):
    """Which entry takes a product: the CPU kernel (B packed first where its layout needs
    it), the tiny direct kernel for small GPU products, GEMV for a row-major column,
    split-K for a long k, tensor cores where the probe passed (and only from their tile
    up), CLBlast under its flag; the tiles by estimated cost."""
    pick = lambda *args, **kw: _family(ctx, monkeypatch, *args, **kw)  # noqa: E731
    assert pick("cpu", (16, 16), (16, 16)) == "direct"
    assert pick("cpu", (16, 16), ga.zeros((16, 16), np.float32, context=ctx).T) == "packed"
    least = blas.CPU_PANELS_LEAST
    monkeypatch.setattr(blas, "CPU_PANELS_LEAST", 16)
    assert pick("cpu", (16, 16), (16, 16)) == "panels"
    assert pick("cpu", (16, 16), (16, 16), np.float64) == "direct"
    assert pick("cpu", (16, 15), (15, 16)) == "direct"  # k under the floor
    monkeypatch.setattr(blas, "CPU_PANELS_LEAST", least)
    assert pick("cpu", (80, 80), (80, 80), np.float16) == "big"
    assert pick("cpu", (30, 80), (80, 80), np.float16) == "small"
    assert pick("gpu", (16, 16), (16, 16)) == "tiny"
    assert pick("gpu", (64, 64), (64, 64)) == "tiny"
    assert pick("gpu", (16, 16), ga.zeros((16, 16), np.float32, context=ctx).T) == "small"
    assert pick("gpu", (16, 16), (16, 16), np.float16) == "small"
    assert pick("gpu", (1024, 1024), (1024, 1024)) in ("big", "medium")
    assert pick("gpu", (300, 40), (40, 1)) == "gemv"
    # x @ A where A's transpose is row-major: GEMV; else the transposed problem's column
    assert pick("gpu", (1, 40), ga.zeros((300, 40), np.float32, context=ctx).T) == "gemv"
    assert pick("gpu", (1, 40), (40, 300)) == "row"
    long = ga.broadcast_to(ga.zeros((1, 8), np.float32, context=ctx), (1 << 20, 8))
    assert pick("gpu", long.T, long) == pick("cpu", long.T, long) == "split_k"
    # GPUs: an output of fewer 64 x 64 tiles than compute units with k of two SPLIT_K_FILL
    # chunks and SPLIT_K_LEAST; narrow ones too, not a GEMV (row-major A), nor on CPUs
    monkeypatch.setattr(blas, "SPLIT_K_LEAST", {4: 1, 8: 1})
    fill, units = 2 * blas.SPLIT_K_FILL, ctx.device.compute_units
    assert pick("gpu", (64, fill), (fill, 64 * max(units - 1, 1))) == "split_k"
    assert pick("gpu", (64, fill - 1), (fill - 1, 64)) != "split_k"
    assert pick("gpu", (64, fill), (fill, 64 * units)) != "split_k"
    column = ga.zeros((fill, 64), np.float32, context=ctx).T
    assert pick("gpu", column, (fill, 1)) == pick("gpu", (64, fill), (fill, 15)) == "split_k"
    assert pick("gpu", (64, fill), (fill, 1)) == "gemv"
    assert pick("cpu", (64, fill), (fill, 64)) != "split_k"
    monkeypatch.setattr(blas, "SPLIT_K_LEAST", {4: fill + 1, 8: 1})
    assert pick("gpu", (64, fill), (fill, 64)) != "split_k"  # k below the floor
    tile = dict(blas.MMA_TILES["3xtf32"][8], bm=128, bn=128)
    monkeypatch.setattr(blas, "_mma_tile", lambda c, prec: tile)
    assert pick("nvidia", (128, 64), (64, 128)) == "mma"
    assert pick("nvidia", (4096, 4096), (4096, 4096)) == "mma"
    assert pick("nvidia", (127, 64), (64, 4096)) != "mma"
    assert pick("nvidia", long.T, long) == "split_k"
    # narrower than the big tile: the mid-sized one (64) from 2^27 multiply-adds up
    monkeypatch.setattr(blas, "_nv_capability", lambda c: (8, 0))
    monkeypatch.setattr(blas, "_mma_probed", lambda c, prec, which, tiles: tiles[0])
    assert pick("nvidia", ga.empty((1 << 16, 64), np.float32, context=ctx), (64, 64)) == "mma"
    assert pick("nvidia", (64, 64), (64, 64)) != "mma"
    a3, b3 = (ga.empty(s, np.float32, context=ctx) for s in ((16, 64, 4096), (16, 4096, 64)))
    c3 = ga.empty((16, 64, 64), np.float32, context=ctx)
    assert blas._choose(ctx, a3, b3, c3, False)[0].name == "mma"  # split-K's partials
    assert blas._choose(ctx, a3[:1], b3[:1], c3[:1], False)[0].name != "mma"  # 2^24
    # two batch levels (4-d operands): made one level for tensor cores, else read as they are
    a4 = ga.broadcast_to(ga.zeros((3, 1, 128, 64), np.float32, context=ctx), (3, 4, 128, 64))
    b4 = ga.broadcast_to(ga.zeros((1, 4, 64, 128), np.float32, context=ctx), (3, 4, 64, 128))
    c4 = ga.empty((3, 4, 128, 128), np.float32, context=ctx)
    assert blas._choose(ctx, a4, b4, c4, False)[0].name == "flatten"
    monkeypatch.setattr(blas, "_mma_tile", lambda c, prec: None)
    assert blas._choose(ctx, a4, b4, c4, False)[0].name in ("big", "medium", "small")
    with using_flags("blas_backend=clblast,print_active_device=False"):
        assert pick("nvidia", (128, 64), (64, 128)) == "clblast"
        assert blas._choose(ctx, a4, b4, c4, False)[0].name == "flatten"  # for CLBlast


def test_tile_cost_keeps_every_unit_working():
    """The estimate prefers tiles that give every compute unit work: on 132 units a 1024^2
    product takes a tile under the big one, a 4096^2 one the big tile; on 2 units the big
    tile serves from 256 up; a tiny product takes the direct kernel."""
    tiles = blas.GEMM_TILES["gpu"]

    def best(units, m, n, k, batch=1):
        classes = list(blas._tiled_classes(tiles, m, n))
        if m * n <= blas.TINY_OUTPUTS:
            classes.append("tiny")
        tile = lambda s: tiles[s]["float32"] if s == "tiny" else tiles[s]  # noqa: E731
        return min(classes, key=lambda s: blas._tile_cost(units, "gpu", s, tile(s), m, n, k,
                                                          batch))

    assert best(132, 1024, 1024, 1024) != "big"
    assert best(132, 4096, 4096, 4096) == "big"
    assert best(2, 256, 256, 256) == best(2, 1024, 1024, 1024) == "big"
    assert best(132, 16, 16, 16) == best(132, 64, 64, 64) == "tiny"
    assert best(132, 64, 64, 64, batch=16384) != "tiny"  # many tiles: a bigger one


# ---------------------------------------------------------------- batches, split-K, long k

@pytest.mark.parametrize("shapes", [((3, 1, 20, 9), (1, 4, 9, 17)), ((3, 1, 20, 9), (4, 9, 17)),
                                    ((2, 1, 3, 1, 5, 6), (4, 1, 2, 6, 7)),
                                    ((1, 5, 8, 3), (6, 1, 3, 8))],
                         ids=["B1-1C", "B1-C", "5d", "1B-C1"])
def test_batch_broadcasting_views(ctx, device_class, shapes, monkeypatch):
    """Broadcast batch dimensions (B, 1, m, k) @ (1, C, k, n) and alike, on transposed,
    offset views, against numpy."""
    sa, sb = shapes
    a = _data((*sa[:-2], sa[-1], sa[-2]), np.float32, 93)
    b = _data((*sb[:-2], sb[-1] + 2, sb[-2]), np.float32, 94)
    da = ga.asarray(a, context=ctx).swapaxes(-1, -2)  # transposed
    db = ga.asarray(b, context=ctx)[..., 1:-1, :].swapaxes(-1, -2)  # offset, strided
    ha, hb = _wide(a).swapaxes(-1, -2), _wide(b)[..., 1:-1, :].swapaxes(-1, -2)
    for _ in range(2):  # the second time through the kept plans
        _close(da @ db, ha @ hb, np.float32, sa[-1])
    # B row-major (what the CPU kernel reads): one launch a product, two batch levels read
    # as they are (more are copied to one by matmul)
    db = ga.asarray(np.ascontiguousarray(hb, np.float32), context=ctx)
    _, launches = _counting(monkeypatch)
    for _ in range(2):
        _close(da @ db, ha @ hb, np.float32, sa[-1])
    assert len(launches) == 2 and "flatten" not in launches, launches


@pytest.mark.parametrize("dtype", [np.int32, np.complex64, np.float64])
def test_batch_broadcasting_dtypes(ctx, device_class, dtype):
    """(B, 1, m, k) @ (1, C, k, n) for integers (the tiles), complex (four real products of
    two batch levels) and float64."""
    _fp64(ctx, dtype)
    a, b = _data((3, 1, 5, 7), dtype, 97), _data((1, 4, 7, 6), dtype, 98)
    _close(ga.asarray(a, context=ctx) @ ga.asarray(b, context=ctx), _wide(a) @ _wide(b),
           dtype, 7)


def test_split_k_fills_a_gpu(ctx, monkeypatch):
    """GPUs: a product of few output tiles and a k of a few SPLIT_K_FILL chunks (a QR's Gram
    matrix, a transposed view) split into parts, against numpy and the unsplit product."""
    monkeypatch.setattr(blas, "device_class", lambda c: "gpu")
    monkeypatch.setattr(blas, "_mma_tile", lambda c, prec: None)
    monkeypatch.setattr(ctx, "device", dataclasses.replace(ctx.device, compute_units=8))
    monkeypatch.setattr(blas, "SPLIT_K_LEAST", {4: 1, 8: 1})
    out = ga.empty((1, 40, 40), np.float32, context=ctx)
    # as many chunks as SPLIT_K_PARTS allows, or fewer where they divide k
    assert blas._split_k_parts(out, 8 * blas.SPLIT_K_FILL) == blas.SPLIT_K_PARTS
    assert blas._split_k_parts(out, 3 * blas.SPLIT_K_FILL) == 6
    assert blas._split_k_parts(out, 1000) == 5  # (7 and 6 do not divide it)
    assert blas._split_k_parts(out, 2 * blas.SPLIT_K_FILL - 1) == 0
    h = _data((3 * blas.SPLIT_K_FILL + 5, 40), np.float32, 99)  # and the rest of k
    x = ga.asarray(h, context=ctx)
    assert blas._split_k_parts(out, h.shape[0]) == 6
    _, launches = _counting(monkeypatch)
    split = x.T @ x
    assert launches[0] == "split_k"
    _close(split, _wide(h).T @ _wide(h), np.float32, h.shape[0])
    c0 = _data((40, 40), np.float32, 98)  # beta != 0: the partials' sum plus beta * c
    before = len(launches)
    got = blas.gemm(0.5, x, x, 2.0, ga.asarray(c0, context=ctx), trans_a=True)
    assert launches[before] == "split_k"
    _close(got, 0.5 * (_wide(h).T @ _wide(h)) + 2 * _wide(c0), np.float32, h.shape[0])
    monkeypatch.setattr(blas, "_split_k_parts", lambda c, k, gemv=False: 0)
    blas.forget_plans()
    np.testing.assert_allclose(split.get(), (x.T @ x).get(), rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_split_k_matches_the_unsplit_product(ctx, device_class, dtype, monkeypatch):
    """The split-K plan of a long k and the product without the split agree within the
    error of the unsplit sum (both against a float64 / longdouble reference)."""
    _fp64(ctx, dtype)
    k = 1 << 16
    h = _data((k, 6), dtype, 95)
    x = ga.asarray(h, context=ctx)
    _, launches = _counting(monkeypatch)
    split = (x.T @ x).get()
    assert launches[0] == "split_k"
    monkeypatch.setattr(blas, "_split_k_parts", lambda c, k, gemv=False: 0)
    blas.forget_plans()
    plain = (x.T @ x).get()
    assert "split_k" not in launches[1:]
    ref = h.T.astype(np.longdouble) @ h.astype(np.longdouble)
    scale = np.abs(h.T.astype(np.float64)) @ np.abs(h)
    eps = np.finfo(dtype).eps
    assert np.all(np.abs(plain - ref) <= k * eps * scale)
    assert np.all(np.abs(split - plain) <= 2 * k * eps * scale)
    assert np.all(np.abs(split - ref) <= np.abs(plain - ref).max() + 4 * eps * scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_k_accuracy_transposed_views(ctx, dtype):
    """K = 2^20 through transposed and strided views: within a few times numpy's error."""
    _fp64(ctx, dtype)
    k = 1 << 20
    rng = np.random.default_rng(96)
    h = (rng.standard_normal((6, 2 * k)) + 0.5).astype(dtype)  # stored k-major, every 2nd
    x = ga.asarray(h, context=ctx)[:, ::2].T  # (k, 6): strides (8 or 16 bytes, row)
    hx = h[:, ::2].T
    ref = hx.T.astype(np.longdouble) @ hx.astype(np.longdouble)
    numpy_err = _rel(hx.T @ hx, ref)
    tiny = 2e-6 if dtype == np.float32 else 1e-14
    assert _rel((x.T @ x).get(), ref) <= max(4 * numpy_err, tiny)
    v = ga.asarray(hx[:, 2].copy(), context=ctx)
    assert _rel((v @ x).get(), ref[2]) <= max(4 * numpy_err, tiny)


# ---------------------------------------------------------------- narrow outputs, any layout

NARROW = (1, 2, 3, 10, 31)  # under and over the CPU kernel's vectors (nwi: 16)
_LAYOUTS = {"C": dict(), "F": dict(order="F"), "T": dict(trans=True),
            "strided": dict(offset=3, step=2)}


@pytest.fixture
def cpu_kernels(monkeypatch):
    """The CPU kernels (the narrow paths are theirs), on the built-in entries, recording the
    families that run."""
    monkeypatch.setattr(blas, "device_class", lambda ctx: "cpu")
    monkeypatch.setattr(blas.tuning, "entries", lambda *args, **kw: {})
    blas.forget_plans()
    yield _counting(monkeypatch)[1]
    blas.forget_plans()


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_narrow_outputs_every_layout(ctx, cpu_kernels, dtype, monkeypatch):
    """An output of 1-31 columns (or rows) from a long or a short k, A and B in C or F order,
    stored transposed or strided at an offset, C in C or F order with beta: numpy's result,
    through the narrow paths ("packed" copies the smaller operand, if any)."""
    _fp64(ctx, dtype)
    families, copied, packed = set(), [], blas._packed
    monkeypatch.setattr(blas, "_packed", lambda x: copied.append(x.size) or packed(x))
    sides = NARROW if dtype == np.float32 else NARROW[::2]  # (kernels to build: ~1 s each)
    for i, (narrow, k, wide_on_m, la, lb) in enumerate(itertools.product(
            sides, (5, 300), (True, False), _LAYOUTS, "CF")):
        m, n = (70, narrow) if wide_on_m else (narrow, 70)
        a, b, c = _data((m, k), dtype, i), _data((k, n), dtype, i + 1), _data((m, n), dtype, 2)
        da, db = _place(ctx, a, **_LAYOUTS[la])[0], _place(ctx, b, **_LAYOUTS[lb])[0]
        f_order = i % 3 == 0  # a third of the cases, every factor above seen both ways
        beta = -1 if f_order else 0
        view, buf, host, pick = _place(ctx, c, order="F" if f_order else "C")
        del cpu_kernels[:], copied[:]
        blas.gemm(0.5, da, db, beta, view, overwrite_c=True)
        _close(buf, _expect_buffer(host, pick, 0.5 * _wide(a) @ b + beta * c), dtype, k)
        assert max(copied, default=0) <= min(a.size, b.size), (m, n, k, la, lb, cpu_kernels)
        families.update(cpu_kernels)
    assert {"narrow", "gemv", "direct", "strided"} <= families, families


def test_panels(ctx, cpu_kernels, monkeypatch):
    """CPU float32 products past CPU_PANELS_LEAST (here 16) read B in panels of the kernel's
    vector width: ragged last panels, a work-item's second vector past n, B transposed
    (and the transposed problem's, where A is the smaller), batches, C contiguous or a
    strided view with beta; numpy's result."""
    monkeypatch.setattr(blas, "CPU_PANELS_LEAST", 16)
    monkeypatch.setattr(blas, "CPU_DIRECT_BY_VECTOR", {})
    tile = dict(blas.GEMM_TILES["cpu"]["direct"]["float32"], nvec=2)
    monkeypatch.setitem(blas.GEMM_TILES["cpu"]["direct"], "float32", tile)
    nwi, rng = tile["nwi"], np.random.default_rng(5)
    for p, m, k, n, strided in [(1, 16, 16, 16, False), (1, 37, 29, 2 * nwi + 3, False),
                                (1, 40, 17, nwi + 1, True), (3, 20, 40, 3 * nwi, True)]:
        a = rng.standard_normal((p, m, k)).astype(np.float32)
        b = rng.standard_normal((p, n, k)).astype(np.float32).swapaxes(1, 2)
        c = rng.standard_normal((p, m, 2 * n if strided else n)).astype(np.float32)
        got = ga.asarray(c, context=ctx)
        blas.gemm_into(0.5, ga.asarray(a, context=ctx), ga.asarray(b, context=ctx), 2.0,
                       got[:, :, ::2] if strided else got)
        want, out = c.copy(), c[:, :, ::2] if strided else c
        want[:, :, ::2 if strided else 1] = 0.5 * (a.astype(np.float64) @ b) + 2.0 * out
        np.testing.assert_allclose(got.get(), want, rtol=1e-4, atol=1e-4)
    assert "panels" in cpu_kernels and "packed" not in cpu_kernels, cpu_kernels


def test_narrow_batched(ctx, cpu_kernels):
    """Batches of narrow products: a broadcast B (copied once with unit stride along k),
    column-major A's, two batch levels, complex64; numpy's result."""
    for dtype in (np.float32, np.complex64):
        a, b = _data((4, 70, 300), dtype, 1), _data((1, 300, 3), dtype, 2)
        da, db = ga.asarray(a, context=ctx), ga.asarray(b, context=ctx)
        _close(da @ db, _wide(a) @ b, dtype, 300)
        af = ga.asarray(np.ascontiguousarray(a.swapaxes(1, 2)), context=ctx).swapaxes(1, 2)
        _close(af @ db, _wide(a) @ b, dtype, 300)
        _close(db.swapaxes(1, 2) @ af.swapaxes(1, 2), _wide(b).swapaxes(1, 2) @
               a.swapaxes(1, 2), dtype, 300)
        a4, b4 = _data((2, 1, 20, 40), dtype, 3), _data((3, 40, 2), dtype, 4)
        _close(ga.asarray(a4, context=ctx) @ ga.asarray(b4, context=ctx), _wide(a4) @ b4,
               dtype, 40)
    assert {"narrow", "direct"} <= set(cpu_kernels), cpu_kernels


def test_narrow_dispatch(ctx, builtin_table, monkeypatch):
    """Which entry takes a narrow output on a CPU: GEMV or the narrow kernel where A (the
    large operand) has unit stride along k, the CPU kernel on the transposed problem where
    it has unit stride along m (a GEMV as one row of NARROW_VECTORS vectors), a copy where
    it has neither; a transposed B no longer copied where A allows the transposed problem.
    The GPU table is as before (no narrow entries)."""
    pick = lambda *args, **kw: _family(ctx, monkeypatch, *args, **kw)  # noqa: E731
    zeros = lambda *s: ga.zeros(s, np.float32, context=ctx)  # noqa: E731
    for cls in ("cpu", "gpu"):
        assert pick(cls, (300, 40), (40, 1)) == "gemv"
    assert pick("cpu", (300, 40), (40, 3)) == pick("cpu", (3, 40), zeros(300, 40).T) == "narrow"
    assert pick("cpu", (300, 40), zeros(3, 40).T) == "narrow"
    assert pick("cpu", zeros(40, 300).T, (40, 3)) == "direct"
    assert pick("cpu", zeros(40, 300).T, (40, 1)) == pick("cpu", (1, 40), (40, 300)) == "direct"
    assert pick("cpu", zeros(300, 80)[:, ::2], (40, 3)) == "strided"
    assert pick("cpu", (300, 4), (4, 3)) == "direct"  # k under a vector
    assert pick("cpu", zeros(300, 40).T, zeros(40, 300).T) == "direct"  # c.T = b.T @ a.T
    for a, b in (((300, 40), (40, 3)), (zeros(40, 300).T, (40, 1)), ((3, 40), (40, 300))):
        assert pick("gpu", a, b) not in ("narrow", "strided", "direct", "packed")
    monkeypatch.setattr(blas, "device_class", lambda c: "cpu")
    a, b, c = _as_batches(zeros(40, 300).T, zeros(40, 1))
    plan = blas._decide(ctx, a, b, c, False)
    assert (plan.params["mwi"], plan.params["nvec"]) == (1, blas.NARROW_VECTORS)


def _spy_allocations(ctx, monkeypatch):
    """The byte counts the context allocates from now on."""
    allocated, allocate = [], type(ctx).allocate
    monkeypatch.setattr(type(ctx), "allocate",
                        lambda self, nbytes: allocated.append(nbytes) or allocate(self, nbytes))
    return allocated


def test_narrow_complex_products(ctx, cpu_kernels, monkeypatch):
    """complex64 outputs of 1-10 columns (or rows): one real GEMM on the large operand's
    storage where it has unit stride along k or m (no temporary of its size), the four real
    GEMMs for other layouts; numpy's result with real and complex alpha and beta."""
    allocated = _spy_allocations(ctx, monkeypatch)
    dtype = np.complex64
    for i, (narrow, k, wide_on_m, la, lb) in enumerate(itertools.product(
            (1, 3, 10), (5, 300), (True, False), _LAYOUTS, "CF")):
        m, n = (70, narrow) if wide_on_m else (narrow, 70)
        a, b, c = _data((m, k), dtype, i), _data((k, n), dtype, i + 1), _data((m, n), dtype, 2)
        da, db = _place(ctx, a, **_LAYOUTS[la])[0], _place(ctx, b, **_LAYOUTS[lb])[0]
        alpha, beta = ((0.5, 0), (-1, 0.5), (1j, 0), (0.5, 1 - 1j))[i % 4]
        view, buf, host, pick = _place(ctx, c, order="CF"[i % 3 == 0])
        del allocated[:]
        blas.gemm(alpha, da, db, beta, view, overwrite_c=True)
        _close(buf, _expect_buffer(host, pick, alpha * _wide(a) @ b + beta * c), dtype, k)
        if k > 5 and la != "strided" and np.imag(alpha) == np.imag(beta) == 0:
            small = b if wide_on_m else a  # temporaries of the small operand's size
            assert max(allocated, default=0) <= 2 * max(small.nbytes, c.nbytes), (
                m, n, k, la, lb, allocated)


@pytest.mark.parametrize("device_class, dtype", [
    ("cpu", np.float32), ("cpu", np.float64), ("cpu", np.complex64), ("gpu", np.float32)],
    ids=lambda x: x if isinstance(x, str) else np.dtype(x).name)
def test_transposed_gemv_reads_the_matrix_in_place(ctx, device_class, dtype, monkeypatch):
    """Matrix-vector products of a matrix in either layout, at an offset with a leading
    stride, as it is or through its transpose (dot(U.T, x), what T.dot(vector, matrix)
    builds): numpy's result, and no allocation but the result's once planned (the context's
    allocate spied): the matrix is read in place, never copied (complex64 on CPUs: vector
    temporaries). The GPU tiles (float32 here: their column tile is slow to build on PoCL)
    read any layout as they did."""
    _fp64(ctx, dtype)
    monkeypatch.setattr(blas, "device_class", lambda c: device_class)
    h = _data((300, 261), dtype, 5)
    hu, hf = h[3:259, 2:250], np.asfortranarray(h[:200, :120])
    x = _data(256, dtype, 6)
    u, f = ga.asarray(h, context=ctx)[3:259, 2:250], ga.asarray(hf, context=ctx)
    dx = ga.asarray(x, context=ctx)
    allocated = _spy_allocations(ctx, monkeypatch)
    for got, want in ((lambda: ga.dot(u.T, dx), hu.T @ x), (lambda: ga.dot(dx, u), x @ hu),
                      (lambda: u.T[:, :200] @ dx[:200], hu.T[:, :200] @ x[:200]),
                      (lambda: ga.dot(f.T, dx[:200]), hf.T @ x[:200]),
                      (lambda: ga.dot(dx[:120], f.T), x[:120] @ hf.T),
                      (lambda: ga.dot(f, dx[:120]), hf @ x[:120]),
                      (lambda: blas.gemv(2.0, u, dx, trans_a=True), 2 * _wide(hu).T @ x)):
        got()  # (the first call decides the plan: matmul sizes a result for it)
        del allocated[:]
        result = got()
        _close(result, _wide(want), dtype, len(x))
        if np.dtype(dtype).kind == "c":  # temporaries of vectors
            assert sum(allocated) <= 8 * result.nbytes + 4 * x.nbytes, allocated
        else:
            assert allocated == [result.nbytes], (allocated, result.shape)
