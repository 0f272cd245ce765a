"""The row-major GEMV kernel (kernels/gemv.cl.mako) against numpy (float64 reference), in its
CPU and GPU variants (the GPU one runs on PoCL by patching blas.device_class): sizes, offset
views, strides, alpha/beta, dtypes, batches and the products that dispatch to it."""

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import blas

SIZES = (1, 7, 31, 64, 129, 257, 1000, 4099)
PAD = 11  # A is a view of a wider matrix: rows contiguous, row stride > k, odd offsets
FLOATS = (np.float16, np.float32, np.float64)


@pytest.fixture(params=["cpu", "gpu"])
def variant(request, monkeypatch):
    """Which kernel variant runs; records the launches of GEMV plans (a repeated product
    runs its kept plan: each launch counts)."""
    calls = []
    real = blas.GemmPlan.launch

    def spy(plan, *args):
        if plan.family == "gemv":
            calls.append(args)
        return real(plan, *args)

    monkeypatch.setattr(blas, "device_class", lambda ctx: request.param)
    monkeypatch.setattr(blas.GemmPlan, "launch", spy)
    return calls


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 7, shape).astype(dtype)
    return (rng.random(shape) - 0.5).astype(dtype)


def _reference(dtype, alpha, a, x, beta=0, y=None):
    """alpha * a @ x + beta * y as the kernel computes it: float16 in float32, integers
    wrapping in the storage dtype."""
    if np.dtype(dtype).kind in "iu":
        r = alpha * (a.astype(np.int64) @ x.astype(np.int64))
        return (r if y is None else r + beta * y.astype(np.int64)).astype(dtype)
    r = alpha * (a.astype(np.float64) @ x.astype(np.float64))
    return r if y is None else r + beta * y.astype(np.float64)


def _close(got, expected, dtype, k):
    got = got.get() if isinstance(got, ga.GpuArray) else got
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if np.dtype(dtype).kind in "iu":
        np.testing.assert_array_equal(got, expected)
        return
    rtol, atol = {np.float16: (2e-3, 2e-3), np.float32: (1e-5, 1e-6 * max(k, 1)),
                  np.float64: (1e-12, 1e-14 * max(k, 1))}[np.dtype(dtype).type]
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=rtol, atol=atol)


@pytest.fixture(scope="module")
def wide(ctx):
    """A float32 matrix wider than the largest A, on the host and the device."""
    h = _data((max(SIZES), max(SIZES) + PAD), np.float32, 1)
    return h, ga.asarray(h, context=ctx)


@pytest.mark.parametrize("k", SIZES)
@pytest.mark.parametrize("m", SIZES)
def test_sizes_on_offset_views(ctx, variant, wide, m, k):
    h, d = wide
    off = 1 + (m + k) % PAD
    a_h, a_d = h[:m, off:off + k], d[:m, off:off + k]
    x = _data(k, np.float32, 2)
    _close(blas.gemv(1.0, a_d, ga.asarray(x, context=ctx)), _reference(np.float32, 1, a_h, x),
           np.float32, k)
    assert len(variant) == 1


@pytest.mark.parametrize("m, k", [(257, 1000), (31, 4099), (1000, 7)])
def test_strides_alpha_beta(ctx, variant, m, k):
    a = _data((m, k), np.float32, 3)
    x_full, y_full = _data(3 * k + 2, np.float32, 4), _data(2 * m + 1, np.float32, 5)
    a_d = ga.asarray(a, context=ctx)
    x_d = ga.asarray(x_full, context=ctx)
    xs = [(slice(1, k + 1), "unit stride, offset"), (slice(None, None, -3), "negative"),
          (slice(2, None, 3), "sliced")]
    ys = [slice(None, None, -2), slice(1, None, 2), slice(m)]
    for (xsl, _), ysl in zip(xs, ys):
        x = x_full[xsl][:k]
        for alpha in (0, 1, -1, 0.5):
            for beta in (0, 1, -1, 0.5):
                y_d = ga.asarray(y_full, context=ctx)
                blas.gemv(alpha, a_d, x_d[xsl][:k], beta, y_d[ysl][:m], overwrite_y=True)
                expected = y_full.astype(np.float64)
                view = expected[ysl][:m]
                view[...] = _reference(np.float32, alpha, a, x, beta, y_full[ysl][:m])
                _close(y_d, expected, np.float32, k)  # and the rest of y untouched
    # A with k-stride -1: read as the reversed problem
    _close(blas.gemv(1.0, a_d[:, ::-1], x_d[:k]), _reference(np.float32, 1, a[:, ::-1],
                                                            x_full[:k]), np.float32, k)
    assert len(variant) == 3 * 16 + 1


def test_alignments_of_a_and_x(ctx, variant, wide):
    """Every pairing of A's row start and x's start modulo a vector: x is read as aligned
    vectors exactly where the two meet, as unaligned vectors elsewhere."""
    h, d = wide
    m, k = 31, 1000
    x_full = _data(k + 4, np.float32, 8)
    x_d = ga.asarray(x_full, context=ctx)
    for a_off in range(4):
        for x_off in range(4):
            a_h, a_d = h[:m, a_off:a_off + k], d[:m, a_off:a_off + k]
            x = x_full[x_off:x_off + k]
            _close(blas.gemv(1.0, a_d, x_d[x_off:x_off + k]),
                   _reference(np.float32, 1, a_h, x), np.float32, k)
    assert len(variant) == 16


def test_beta_zero_ignores_nan(ctx, variant):
    a, x = _data((129, 257), np.float32, 6), _data(257, np.float32, 7)
    y = ga.asarray(np.full(129, np.nan, np.float32), context=ctx)
    blas.gemv(0.5, ga.asarray(a, context=ctx), ga.asarray(x, context=ctx), 0.0, y,
              overwrite_y=True)
    _close(y, _reference(np.float32, 0.5, a, x), np.float32, 257)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64,
                                   np.uint8], ids=lambda d: np.dtype(d).name)
def test_dtypes(ctx, variant, dtype):
    if dtype == np.float64 and not ctx.fp64:
        pytest.skip("no fp64")
    floating = dtype in FLOATS
    for m, k in ((129, 1000), (7, 4099), (64, 31)):
        a = _data((m, k + PAD), dtype, 8)
        x_full, y = _data(2 * k, dtype, 9), _data(m, dtype, 10)
        a_d = ga.asarray(a, context=ctx)[:, 3:k + 3]
        for xsl in (slice(k), slice(None, None, -2)):
            x = x_full[xsl][:k]
            alpha, beta = (0.5, -1) if floating else (2, -1)
            got = blas.gemv(alpha, a_d, ga.asarray(x_full, context=ctx)[xsl][:k], beta,
                            ga.asarray(y, context=ctx), overwrite_y=True)
            assert got.dtype == dtype
            _close(got, _reference(dtype, alpha, a[:, 3:k + 3], x, beta, y), dtype, k)
    assert len(variant) == 6


def test_batched(ctx, variant):
    b, m, k = 5, 129, 257
    a = _data((b, m, k + PAD), np.float32, 11)
    x, xb = _data(k, np.float32, 12), _data((b, k, 1), np.float32, 13)
    a_d = ga.asarray(a, context=ctx)[:, :, 2:k + 2]
    a = a[:, :, 2:k + 2]
    _close(a_d @ ga.asarray(x, context=ctx), a.astype(np.float64) @ x, np.float32, k)
    _close(a_d @ ga.asarray(xb, context=ctx), a.astype(np.float64) @ xb, np.float32, k)
    _close(ga.matmul(a_d[1], ga.asarray(xb, context=ctx)), a[1].astype(np.float64) @ xb,
           np.float32, k)  # A broadcast over the batch (batch stride 0)
    assert len(variant) == 3


def test_dispatch(ctx, variant):
    """Row-major A (and its transposes read as such) reaches the gemv kernel; a column-major
    A stays with the GEMM."""
    m, k = 257, 129
    a = _data((m, k), np.float32, 14)
    x = _data(k, np.float32, 15)
    a_c = ga.asarray(a, context=ctx)
    a_f = ga.asarray(np.asfortranarray(a.T), context=ctx)  # (k, m), F-order: A^T row-major
    x_d = ga.asarray(x, context=ctx)
    ref = a.astype(np.float64) @ x
    _close(a_c @ x_d, ref, np.float32, k)
    _close(blas.gemv(1.0, a_c, x_d), ref, np.float32, k)
    _close(blas.gemv(-1.0, a_f, x_d, trans_a=True), -ref, np.float32, k)
    _close(x_d @ a_f, ref, np.float32, k)  # a row times a matrix whose transpose is row-major
    _close(x_d.reshape(1, k) @ a_f, ref[None], np.float32, k)
    assert len(variant) == 5
    # w @ A reads A^T, column-major: the GEMM's layout (its tests are test_blas_core's)
    assert not blas._row_major(blas._as_batch(a_c.T))
    assert not blas._row_major(blas._as_batch(a_f))
