"""GEMM and the products built on it, against numpy (float64 reference), on the CPU kernel
and on the GPU tiles (run on PoCL by patching blas.device_class)."""

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import blas
from gpuarr.errors import ArgumentTypeError, ContextMismatch, ShapeError

SHAPES = [(1, 1, 1), (7, 31, 129), (64, 64, 64), (257, 129, 31), (31, 257, 7),
          (129, 7, 257), (257, 1, 129), (1, 257, 64), (130, 70, 200)]


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "biu":
        return rng.integers(0, 5, shape).astype(dtype)
    return (rng.random(shape) - 0.5).astype(dtype)


def _close(got, expected, dtype, k):
    got = got.get() if isinstance(got, ga.GpuArray) else got
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if np.dtype(dtype).kind in "biu":
        np.testing.assert_array_equal(got, expected)
        return
    tol = {np.float16: 2e-2, np.float32: 1e-5, np.float64: 1e-12}[np.dtype(dtype).type]
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=tol * 10,
                               atol=tol * max(k, 1))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_gemm_shapes_and_transposes(ctx, device_class, shape):
    m, k, n = shape
    a, b = _data((m, k), np.float32, 1), _data((k, n), np.float32, 2)
    c = _data((m, n), np.float32, 3)
    ref = a.astype(np.float64) @ b
    _close(blas.gemm(1.0, ga.asarray(a, context=ctx), ga.asarray(b, context=ctx)), ref,
           np.float32, k)
    at, bt = ga.asarray(a.T.copy(), context=ctx), ga.asarray(b.T.copy(), context=ctx)
    for alpha, beta in ((1, 0), (0.5, -1), (-1, 0.5), (0, 1)):
        cg = ga.asarray(c, context=ctx)
        out = blas.gemm(alpha, at, bt, beta, cg, trans_a=True, trans_b=True)
        _close(out, alpha * ref + beta * c, np.float32, k)
        np.testing.assert_array_equal(cg.get(), c)  # overwrite_c=False leaves C alone
    cg = ga.asarray(c, context=ctx)
    blas.gemm(2.0, ga.asarray(a, context=ctx), bt, 1.0, cg, trans_b=True, overwrite_c=True)
    _close(cg, 2 * ref + c, np.float32, k)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int8, np.int32, np.int64,
                                   np.uint8, np.bool_], ids=lambda d: np.dtype(d).name)
def test_matmul_dtypes(ctx, device_class, dtype):
    if np.dtype(dtype) == np.float64 and not ctx.fp64:
        pytest.skip("no fp64")
    a, b = _data((37, 45), dtype, 4), _data((45, 70), dtype, 5)
    got = ga.asarray(a, context=ctx) @ ga.asarray(b, context=ctx)
    if dtype == np.float16:
        expected = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float64)
    else:
        expected = a @ b
    assert got.dtype == (a @ b).dtype
    _close(got, expected, dtype, 45)


def test_layouts_views_and_batches(ctx, device_class):
    big = _data((300, 300), np.float32, 6)
    x = ga.asarray(big, context=ctx)
    views = [(big[3:60, 2:50], x[3:60, 2:50]), (big[::2, ::-3][:40, :48], x[::2, ::-3][:40, :48]),
             (np.asfortranarray(big[:40, :48]), ga.asarray(np.asfortranarray(big[:40, :48]),
                                                          context=ctx))]
    for ha, ga_ in views:
        hb = big[100:100 + ha.shape[1], 10:73]
        _close(ga_ @ x[100:100 + ha.shape[1], 10:73], ha.astype(np.float64) @ hb, np.float32,
               ha.shape[1])
    a4, b3 = _data((4, 1, 5, 6), np.float32, 7), _data((3, 6, 2), np.float32, 8)
    _close(ga.asarray(a4, context=ctx) @ ga.asarray(b3, context=ctx), a4 @ b3, np.float32, 6)
    ab, bb = _data((9, 17, 33), np.float32, 9), _data((1, 33, 20), np.float32, 10)
    _close(blas.gemm_batched(1.0, ga.asarray(ab, context=ctx), ga.asarray(bb, context=ctx)),
           ab @ bb, np.float32, 33)
    _close(blas.gemm_batched(1.0, ga.asarray(ab, context=ctx), ga.asarray(ab, context=ctx),
                             trans_b=True),
           ab @ ab.swapaxes(1, 2), np.float32, 33)


def test_vector_products_and_numpy_protocol(ctx, device_class):
    v, w = _data(300, np.float32, 11), _data(300, np.float32, 12)
    m = _data((20, 300), np.float32, 13)
    gv, gw, gm = (ga.asarray(h, context=ctx) for h in (v, w, m))
    _close(ga.dot(gv, gw), v.astype(np.float64) @ w, np.float32, 300)
    _close(gv @ gw, v.astype(np.float64) @ w, np.float32, 300)
    _close(gm @ gv, m.astype(np.float64) @ v, np.float32, 300)
    _close(gv @ gm.T, v.astype(np.float64) @ m.T, np.float32, 300)
    _close(np.matmul(gm, gv), m.astype(np.float64) @ v, np.float32, 300)
    _close(gm.dot(gv), m.astype(np.float64) @ v, np.float32, 300)
    _close(ga.inner(gm, gv), np.inner(m.astype(np.float64), v), np.float32, 300)
    _close(ga.outer(gv[:7], gw[:9]), np.outer(v[:7], w[:9]), np.float32, 1)
    _close(ga.vdot(gv, gw), np.vdot(v.astype(np.float64), w), np.float32, 300)
    t3 = _data((4, 5, 6), np.float32, 14)
    t2 = _data((6, 5), np.float32, 15)
    _close(ga.tensordot(ga.asarray(t3, context=ctx), ga.asarray(t2, context=ctx),
                        ([1, 2], [1, 0])), np.tensordot(t3, t2, ([1, 2], [1, 0])), np.float32, 30)
    _close(ga.dot(ga.asarray(t3, context=ctx), ga.asarray(t2, context=ctx)),
           np.dot(t3, t2), np.float32, 6)
    _close(blas.gemv(0.5, gm, gv, 2.0, ga.asarray(w[:20], context=ctx)),
           0.5 * m.astype(np.float64) @ v + 2 * w[:20], np.float32, 300)
    _close(blas.gemv(1.0, gm, gw[:20], trans_a=True), m.T.astype(np.float64) @ w[:20],
           np.float32, 20)
    _close(blas.ger(2.0, gv[:20], gw[:300], gm), m + 2 * np.outer(v[:20], w), np.float32, 1)


def test_empty_dimensions(ctx, device_class):
    for m, k, n in ((0, 5, 3), (4, 0, 3), (4, 5, 0)):
        a, b = np.ones((m, k), np.float32), np.ones((k, n), np.float32)
        _close(ga.asarray(a, context=ctx) @ ga.asarray(b, context=ctx), a @ b, np.float32, 1)
    c = np.full((4, 3), 2.0, np.float32)
    out = blas.gemm(1.0, ga.zeros((4, 0), np.float32, context=ctx),
                    ga.zeros((0, 3), np.float32, context=ctx), 0.5, ga.asarray(c, context=ctx))
    _close(out, 0.5 * c, np.float32, 1)


def test_deterministic(ctx):
    a = ga.asarray(_data((200, 300), np.float32, 16), context=ctx)
    assert (a @ a.T).get().tobytes() == (a @ a.T).get().tobytes()


def test_errors(ctx, ctx_pair):
    a = ga.zeros((3, 4), np.float32, context=ctx)
    with pytest.raises(ShapeError, match=r"\(3, 4\)"):
        a @ a
    with pytest.raises(ValueError, match="shapes"):
        ga.matmul(a, ga.zeros((5, 2), np.float32, context=ctx))
    with pytest.raises(ValueError):
        ga.matmul(a, ga.zeros((), np.float32, context=ctx))
    with pytest.raises(ArgumentTypeError, match="float64"):
        blas.gemm(1.0, a, ga.zeros((4, 2), np.float64, context=ctx))
    with pytest.raises(TypeError):
        blas.gemm(1.0, np.zeros((3, 4)), a.T)
    with pytest.raises(ShapeError):
        blas.gemm(1.0, a, a.T, 1.0, ga.zeros((2, 2), np.float32, context=ctx))
    with pytest.raises(ValueError):
        blas.gemm(1.0, a, a.T, 1.0, ga.broadcast_to(ga.zeros(3, np.float32, context=ctx),
                                                    (3, 3)), overwrite_c=True)
    first, second = ctx_pair
    with pytest.raises(ContextMismatch):
        ga.zeros((2, 2), np.float32, context=first) @ ga.zeros((2, 2), np.float32,
                                                                context=second)
