"""float64 GEMM on NVIDIA FP64 tensor cores (kernels/gemm_mma.cl.mako): the probe and its
fallback everywhere, accuracy against numpy on an NVIDIA device of compute capability 8.0+."""

import itertools

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import blas
from gpuarr.kernels import render

SIZES = (1, 7, 129, 257, 1000)


def _data(shape, seed):
    return np.random.default_rng(seed).random(shape) - 0.5


def _rel(got, ref):
    return float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-300))


def _capable(ctx):
    cc = blas._nv_capability(ctx)
    return cc is not None and cc >= (8, 0) and ctx.fp64


@pytest.fixture
def mma(ctx):
    """The MMA_TILES entry in use on ctx's device (skips elsewhere)."""
    if not _capable(ctx):
        pytest.skip(f"needs an NVIDIA device with compute capability 8.0+ (mma.sync): "
                    f"{ctx.devname} is {ctx.device.device_name}")
    tile = blas._mma_tile(ctx)
    assert tile is not None, "the tensor-core probe failed on a capable NVIDIA device"
    return tile


def test_probe(ctx):
    assert blas._mma_ok(ctx) is _capable(ctx)
    assert blas._mma_ok(ctx) is _capable(ctx)  # cached


@pytest.mark.parametrize("entry", sorted(blas.MMA_TILES), ids=lambda e: f"sm{e}x")
@pytest.mark.parametrize("variant", [("k", "n", False, False), ("m", "k", True, True)],
                         ids=["aligned", "ragged-transposed"])
def test_template_renders(entry, variant):
    a_fast, b_fast, edge, use_beta = variant
    tile = blas.MMA_TILES[entry]
    src = render("gemm_mma.cl.mako", name="gemm_mma", **tile, a_fast=a_fast, b_fast=b_fast,
                 edge_mn=edge, edge_k=edge, use_beta=use_beta)
    assert f"mma.sync.aligned.{tile['shape']}.row.col.f64.f64.f64.f64" in src
    assert "__kernel" in src and ("min(" in src) == edge


@pytest.mark.parametrize("shape", [(130, 70, 200), (257, 129, 31), (1000, 257, 129)], ids=str)
def test_fallback_identical(ctx, device_class, monkeypatch, shape):
    """Where the probe fails, float64 products are the portable kernels' bit for bit."""
    if _capable(ctx):
        pytest.skip("the device runs the tensor-core kernel")
    assert not blas._mma_ok(ctx)
    m, k, n = shape
    a, b, c = _data((m, k), 1), _data((k, n), 2), _data((m, n), 3)
    A, B, C = (ga.asarray(x, context=ctx) for x in (a, b, c))
    got = blas.gemm(0.5, A, B, -1.0, C).get()
    monkeypatch.setattr(blas, "_mma_tile", lambda ctx: None)
    np.testing.assert_array_equal(got, blas.gemm(0.5, A, B, -1.0, C).get())


@pytest.mark.parametrize("shape", list(itertools.product(SIZES, repeat=3)), ids=str)
def test_mma_shapes(ctx, mma, shape):
    """The kernel itself on every shape (ragged tiles included), next to the SIMT kernel."""
    m, k, n = shape
    a, b, c = _data((1, m, k), 4), _data((1, k, n), 5), _data((1, m, n), 6)
    ref = 0.5 * (a @ b) - c
    out = ga.asarray(c, context=ctx)
    blas._gemm_mma(ctx, 0.5, ga.asarray(a, context=ctx), ga.asarray(b, context=ctx), -1.0,
                   out, mma)
    err = _rel(out.get(), ref)
    simt = ga.asarray(c, context=ctx)
    tile = blas._tile(ctx, np.dtype(np.float64), m, n)
    blas._gemm_tiled(ctx, 0.5, ga.asarray(a, context=ctx), ga.asarray(b, context=ctx), -1.0,
                     simt, tile)
    simt_err = _rel(simt.get(), ref)
    print(f"{shape}: max relative error mma {err:.2e}, SIMT {simt_err:.2e}")
    assert err <= max(4 * simt_err, 1e-14), (err, simt_err)


@pytest.mark.parametrize("alpha,beta", list(itertools.product((0, 1, -1, 0.5), repeat=2)))
@pytest.mark.parametrize("trans_a,trans_b", list(itertools.product((False, True), repeat=2)))
def test_mma_gemm(ctx, mma, alpha, beta, trans_a, trans_b):
    """blas.gemm on a big ragged product (the tensor-core path): transposes, alpha, beta."""
    m, k, n = 257, 1000, 129 + mma["bn"]
    a = _data((k, m) if trans_a else (m, k), 7)
    b = _data((n, k) if trans_b else (k, n), 8)
    c = _data((m, n), 9)
    ref = alpha * ((a.T if trans_a else a) @ (b.T if trans_b else b)) + beta * c
    got = blas.gemm(alpha, ga.asarray(a, context=ctx), ga.asarray(b, context=ctx), beta,
                    ga.asarray(c, context=ctx), trans_a=trans_a, trans_b=trans_b).get()
    err = _rel(got, ref) if alpha or beta else float(np.max(np.abs(got)))
    print(f"alpha={alpha} beta={beta} trans_a={trans_a} trans_b={trans_b}: "
          f"max relative error {err:.2e}")
    assert err < 1e-13


def test_mma_batched_broadcast(ctx, mma):
    a, b = _data((2, 1, 300, 257), 10), _data((3, 257, 140), 11)
    ref = a @ b
    got = (ga.asarray(a, context=ctx) @ ga.asarray(b, context=ctx)).get()
    err = _rel(got, ref)
    print(f"batched (2, 1, 300, 257) @ (3, 257, 140): max relative error {err:.2e}")
    assert got.shape == ref.shape and err < 1e-13
