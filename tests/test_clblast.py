"""The optional CLBlast GEMM backend: flag blas_backend, the dispatch, and (where libclblast is
installed) CLBlast's results against numpy (float64 reference) over shapes, layouts, views,
alpha/beta and batches, with the layouts CLBlast cannot take falling back to gpuarr's kernels.
Few distinct CLBlast routines on purpose: each costs seconds to build on PoCL."""

import time

import numpy as np
import pyopencl as cl
import pytest
from conftest import using_flags

import gpuarr as ga
from gpuarr import blas, clblast, config
from gpuarr.errors import FlagError, OutOfMemory, UnsupportedError

QUIET = "print_active_device=False"
DTYPES = [np.float32, np.float64]
# (m, k, n): 1, 7 and 129 in each of M, N and K; the last is large enough for CLBlast's
# indirect (padded) GEMM.
SHAPES = [(1, 7, 129), (7, 129, 1), (129, 1, 7), (129, 129, 129), (513, 129, 1025)]
# A and B stored as given ("C") or as a transposed view ("T"), C in C or F order, alpha, beta.
LAYOUTS = [("C", "C", "C", 1, 0), ("T", "C", "F", 0.5, -1), ("C", "T", "C", -1, 0.5),
           ("T", "T", "F", 0, 1)]


def _data(shape, dtype, seed):
    return (np.random.default_rng(seed).random(shape) - 0.5).astype(dtype)


def _close(got, expected, dtype, k):
    tol = {np.float32: 1e-5, np.float64: 1e-12}[np.dtype(dtype).type]
    np.testing.assert_allclose(np.asarray(got, np.float64), expected, rtol=tol * 10,
                               atol=tol * max(k, 1))


def _on(x, ctx, how="C"):
    """x on the device, as stored (C), a transposed view of its stored transpose (T), or in
    Fortran order (F)."""
    if how == "T":
        return ga.asarray(np.ascontiguousarray(x.T), context=ctx).T
    return ga.asarray(np.asfortranarray(x) if how == "F" else x, context=ctx)


@pytest.fixture
def clblast_on(ctx, monkeypatch):
    """Flag blas_backend=clblast; yields a list that records, per call, whether CLBlast took
    it (True) or returned None for gpuarr's kernels (False)."""
    if not clblast.available():
        pytest.skip("libclblast not installed: apt-get install libclblast1 (Debian/Ubuntu)")
    taken, real = [], clblast.gemm_into

    def spy(*args):
        result = real(*args)
        taken.append(result is not None)
        return result

    monkeypatch.setattr(clblast, "gemm_into", spy)
    with using_flags(f"blas_backend=clblast,{QUIET}"):
        yield taken


# ---------------------------------------------------------------- flag and dispatch

@pytest.mark.parametrize("text", ["auto", "gpuarr", " clblast "])
def test_flag_values(text):
    assert config.parse_flags(f"blas_backend={text}") == {"blas_backend": text.strip()}


def test_flag_default_is_auto():
    with using_flags(QUIET) as flags:
        assert flags.blas_backend == "auto"


def test_flag_rejects_bad_value():
    with pytest.raises(FlagError, match=r"'cublas' for flag blas_backend.*auto, gpuarr or clblast"):
        config.parse_flags("blas_backend=cublas")


@pytest.mark.parametrize("flag, tile_backend, present, gemv, expected", [
    ("gpuarr", "clblast", True, False, "gpuarr"), ("clblast", None, False, False, "clblast"),
    ("clblast", None, True, True, "clblast"), ("auto", None, True, False, "gpuarr"),
    ("auto", "clblast", True, False, "clblast"), ("auto", "clblast", True, True, "gpuarr"),
    ("auto", "clblast", False, False, "gpuarr")])
def test_backend_choice(ctx, monkeypatch, flag, tile_backend, present, gemv, expected):
    monkeypatch.setattr(clblast, "available", lambda: present)
    tile = dict(mwg=16) if tile_backend is None else dict(mwg=16, backend=tile_backend)
    with using_flags(f"blas_backend={flag},{QUIET}"):
        assert blas._backend(ctx, tile, gemv) == expected


def test_clblast_flag_without_library(ctx, monkeypatch):
    monkeypatch.setattr(clblast, "_load", lambda: None)
    assert not clblast.available()
    a = ga.asarray(_data((3, 4), np.float32, 0), context=ctx)
    with using_flags(f"blas_backend=clblast,{QUIET}"), \
            pytest.raises(UnsupportedError, match="apt-get install libclblast1"):
        blas.gemm(1.0, a, a.T)
    # auto with a tile entry that picks CLBlast runs gpuarr's kernels instead
    tile = blas._tile
    monkeypatch.setattr(blas, "_tile", lambda *args: dict(tile(*args), backend="clblast"))
    with using_flags(f"blas_backend=auto,{QUIET}"):
        _close(blas.gemm(1.0, a, a.T).get(), a.get().astype(np.float64) @ a.get().T,
               np.float32, 4)


def test_status_error_names_code_routine_and_shapes(ctx, monkeypatch):
    class Failing:  # every CLBlast routine returns CLBlastTempBufferAllocFailure
        def __getattr__(self, name):
            return lambda *args: -4

    monkeypatch.setattr(clblast, "_load", Failing)
    a = ga.asarray(np.ones((3, 4), np.float32), context=ctx)
    c = ga.zeros((3, 3), np.float32, context=ctx)
    with pytest.raises(OutOfMemory, match=r"CLBlastSgemm returned status -4 \(CLBlastTemp"
                                          r"BufferAllocFailure: .*\) for float32 m=3 n=3 k=4"):
        clblast.gemm_into(1.0, blas._as_batch(a), blas._as_batch(a.T), 0.0, blas._as_batch(c))


# ---------------------------------------------------------------- CLBlast against numpy

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_gemm_shapes_layouts_alpha_beta(clblast_on, ctx, dtype, shape):
    m, k, n = shape
    a, b, c = _data((m, k), dtype, 1), _data((k, n), dtype, 2), _data((m, n), dtype, 3)
    ref = a.astype(np.float64) @ b
    for how_a, how_b, how_c, alpha, beta in LAYOUTS:
        cg = _on(c, ctx, how_c)
        blas.gemm(alpha, _on(a, ctx, how_a), _on(b, ctx, how_b), beta, cg, overwrite_c=True)
        _close(cg.get(), alpha * ref + beta * c, dtype, k)
    assert clblast_on == [True] * len(LAYOUTS)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_gemm_sliced_views(clblast_on, ctx, dtype):
    m, k, n = 7, 129, 33
    a_big, b_big = _data((20, 140), dtype, 1), _data((150, 50), dtype, 2)
    a, b = a_big[3:3 + m, 5:5 + k], b_big[2:2 + k, 1:1 + n]  # offsets, row strides > width
    ag = ga.asarray(a_big, context=ctx)[3:3 + m, 5:5 + k]
    bg = ga.asarray(np.asfortranarray(b_big), context=ctx)[2:2 + k, 1:1 + n]  # column-major
    ref = a.astype(np.float64) @ b
    c_big = _data((30, 40), dtype, 3)
    c_gpu = ga.asarray(c_big, context=ctx)
    blas.gemm(-1, ag, bg, 0.5, c_gpu[4:4 + m, 3:3 + n], overwrite_c=True)
    expected = c_big.astype(np.float64)
    expected[4:4 + m, 3:3 + n] = -ref + 0.5 * c_big[4:4 + m, 3:3 + n]
    _close(c_gpu.get(), expected, dtype, k)  # and nothing written around the view
    # beta = 0 ignores C, NaN included (C need not be set, as in BLAS)
    nan = ga.asarray(np.full((30, 40), np.nan, dtype), context=ctx)
    blas.gemm(1, ag, bg, 0, nan[1:1 + m, 2:2 + n], overwrite_c=True)
    got = nan.get()
    _close(got[1:1 + m, 2:2 + n], ref, dtype, k)
    assert np.isnan(got).sum() == 30 * 40 - m * n
    assert clblast_on == [True, True]


def test_gemm_batched_broadcast_and_strided(clblast_on, ctx):
    # float32 only: the strided-batched binding is the same for every dtype, and each of
    # CLBlast's batched routines takes over 10 s to build on PoCL
    dtype = np.float32
    m, k, n = 7, 129, 33
    a, b = _data((1, m, k), dtype, 1), _data((4, n, k), dtype, 2)
    ref = a.astype(np.float64) @ b.swapaxes(1, 2)  # A broadcast over the batch: stride 0
    ag, bg = ga.asarray(a, context=ctx), ga.asarray(b, context=ctx)
    _close(blas.gemm_batched(0.5, ag, bg, trans_b=True).get(), 0.5 * ref, dtype, k)
    # C: every other matrix of a larger batch, each column-major; beta = -1
    c_big = _data((8, n, m), dtype, 3)
    c_gpu = ga.asarray(c_big, context=ctx)
    blas.gemm_batched(1, ag, bg, -1, c_gpu.swapaxes(1, 2)[::2], trans_b=True,
                      overwrite_c=True)
    expected = c_big.astype(np.float64)
    expected[::2] = (ref - c_big.swapaxes(1, 2)[::2]).swapaxes(1, 2)
    _close(c_gpu.get(), expected, dtype, k)
    # matmul broadcasting a matrix against a stack, beta = 0 over NaN
    out = ga.asarray(np.full((4, m, n), np.nan, dtype), context=ctx)
    blas.gemm_batched(1, ag[0:1], bg, 0, out, trans_b=True, overwrite_c=True)
    _close(out.get(), ref, dtype, k)
    _close((ag[0] @ bg.swapaxes(1, 2)).get(), ref, dtype, k)
    assert clblast_on == [True] * 4


def test_layouts_clblast_cannot_take_fall_back(clblast_on, ctx):
    a, b = _data((9, 20), np.float32, 1), _data((20, 8), np.float32, 2)
    ag, bg = ga.asarray(a, context=ctx), ga.asarray(b, context=ctx)
    cases = [(ag[::-1], bg, a[::-1], b),                      # negative stride
             (ag[:, ::2], bg[::2, ::2], a[:, ::2], b[::2, ::2])]  # no unit stride
    for x, y, xh, yh in cases:
        _close(blas.gemm(1, x, y).get(), xh.astype(np.float64) @ yh, np.float32, 20)
    ai, bi = (np.arange(12, dtype=np.int32).reshape(3, 4), np.ones((4, 2), np.int32))
    got = (ga.asarray(ai, context=ctx) @ ga.asarray(bi, context=ctx)).get()
    np.testing.assert_array_equal(got, ai @ bi)
    calls = 3
    if not clblast._has_fp16(ctx):  # CLBlastHgemm needs cl_khr_fp16
        ah, bh = a.astype(np.float16), b.astype(np.float16)
        got = blas.gemm(1, ga.asarray(ah, context=ctx), ga.asarray(bh, context=ctx)).get()
        np.testing.assert_allclose(got, ah.astype(np.float64) @ bh, rtol=2e-2, atol=2e-2)
        calls += 1
    # each product offered to CLBlast and declined; a narrow product of an operand with no
    # unit stride is offered again once copied ("strided"), and declined again for B
    assert set(clblast_on) == {False} and calls <= len(clblast_on) <= calls + 1


def test_waits_for_a_write_on_another_queue(clblast_on, ctx):
    """CLBlast takes no wait list: a barrier holds it until the last write of an operand,
    recorded on another queue, has finished."""
    a = _data((7, 9), np.float32, 1)
    ag = ga.asarray(a, context=ctx)
    ag.sync()
    other = cl.CommandQueue(ctx.cl_context, ctx.device.cl_device)
    gate = cl.UserEvent(ctx.cl_context)
    ag.storage.written(gate, other)
    try:
        c = blas.gemm(1, ag, ag.T)
        time.sleep(0.2)
        assert c.storage.event.command_execution_status != cl.command_execution_status.COMPLETE
    finally:
        gate.set_status(cl.command_execution_status.COMPLETE)
    _close(c.get(), a.astype(np.float64) @ a.T, np.float32, 9)
    assert clblast_on == [True]
