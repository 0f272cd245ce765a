"""A small tour of every kernel family, for Oclgrind to check memory accesses and races
(see conftest.py; .ci/run's Oclgrind step). Sizes are chosen to reach each code path:
ragged tails, several work-groups, multi-part reductions and scans, GEMM edge tiles.
Oclgrind's device is a GPU, so gpuarr takes its GPU paths; the `path` fixture also runs
the CPU paths (what PoCL uses) by making the device look like a CPU."""

import dataclasses

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import blas, reduction

RNG = np.random.default_rng(7)


def _host(shape, dtype=np.float32):
    return (RNG.standard_normal(shape) * 10).astype(dtype)


@pytest.fixture(params=["gpu", "cpu"])
def path(request, ctx, monkeypatch):
    """The device's own (GPU) paths, or the CPU ones: gpuarr's CPU decisions are taken from
    the device type and device_class, which this patches; plans start afresh."""
    if request.param == "cpu":
        monkeypatch.setattr(ctx, "device", dataclasses.replace(ctx.device, type="CPU"))
        monkeypatch.setattr(ctx, "per_item", 1)
        monkeypatch.setattr(reduction, "device_class", lambda c: "cpu")
        monkeypatch.setattr(blas, "device_class", lambda c: "cpu")
    monkeypatch.setattr(ctx, "plans", {})
    return request.param


def _close(got, want, rtol=1e-5, atol=1e-3):
    np.testing.assert_allclose(got.get(), want, rtol=rtol, atol=atol)


def test_elementwise(ctx, path):
    h = _host(3 * 1024 + 7)  # a ragged tail after whole work-groups
    x = ga.asarray(h, context=ctx)
    _close(x * 2.0 + x, h * 2 + h)
    m, hm = x[: 60 * 50].reshape(60, 50), h[: 60 * 50].reshape(60, 50)
    _close(m[::-2, 1::3] - m[1::2, -2::-3], hm[::-2, 1::3] - hm[1::2, -2::-3])  # strided
    _close(m + m[0], hm + hm[0])  # broadcast
    _close(ga.where(m > 0, m, -1.0), np.where(hm > 0, hm, np.float32(-1)))


def test_copies_and_manipulation(ctx, path):
    h = _host((37, 41))
    x = ga.asarray(h, context=ctx)
    _close(x.T.copy(), h.T.copy())
    _close(x[::-3, 2::5].astype(np.float64), h[::-3, 2::5].astype(np.float64))
    y = ga.zeros((37, 41), np.float32, context=ctx)
    y[1::2, ::-4] = x[1::2, ::4]
    hy = np.zeros((37, 41), np.float32)
    hy[1::2, ::-4] = h[1::2, ::4]
    _close(y, hy)
    y[::3] = 5.0  # a fill through a strided view
    hy[::3] = 5
    _close(y, hy)
    _close(ga.concatenate([x[:5], x[-7:][::-1]]), np.concatenate([h[:5], h[-7:][::-1]]))
    _close(ga.roll(ga.flip(x, 1), 5, axis=0), np.roll(np.flip(h, 1), 5, axis=0))
    _close(ga.repeat(x[:3], 3, axis=1), np.repeat(h[:3], 3, axis=1))


@pytest.mark.parametrize("shape, axis", [
    ((20000,), None),     # one output: several work-groups and parts (GPU: one launch)
    ((8, 3001), 1),       # reduced axis inner (GPU: rows at every alignment, a head each)
    ((3000, 8), 0),       # reduced axis outer: work-items, two stages
    ((5, 7, 33), (0, 2)),
])
def test_reductions(ctx, path, shape, axis):
    h = _host(shape)
    x = ga.asarray(h, context=ctx)
    scale = np.abs(h).sum() * 1e-6
    _close(x.sum(axis=axis), h.sum(axis=axis, dtype=np.float64), atol=scale)
    _close(x.max(axis=axis), h.max(axis=axis))
    if not isinstance(axis, tuple):
        np.testing.assert_array_equal(x.argmin(axis=axis).get(), h.argmin(axis=axis))


def test_scans(ctx, path, monkeypatch):
    for entry in reduction.TUNING.values():  # chunks of 2048: several chunks, few elements
        monkeypatch.setitem(entry, "scan_least", 2048)
    # the GPU's look-back scan in blocks of 128: 71 tiles, 17 groups of 4 (group totals);
    # its form for rows neighbouring in memory in chunks of 8: 2 groups of 16 chunks
    monkeypatch.setattr(reduction, "LOOKBACK_LOCAL", 16)
    monkeypatch.setitem(reduction.TUNING["gpu"], "scan_unroll", 8)
    monkeypatch.setattr(reduction, "COLUMNS_LOCAL", 16)
    monkeypatch.setattr(reduction, "COLUMNS_UNROLL", 8)
    h = _host(9000)
    x = ga.asarray(h, context=ctx)
    _close(x.cumsum(), np.cumsum(h, dtype=np.float64), atol=np.abs(h).sum() * 1e-6)
    hi = np.arange(6 * 90, dtype=np.int32).reshape(6, 90) % 7
    xi = ga.asarray(hi, context=ctx)
    np.testing.assert_array_equal(xi.cumsum(axis=1).get(), hi.cumsum(axis=1))
    np.testing.assert_array_equal(xi[::-1].cumsum(axis=0).get(), hi[::-1].cumsum(axis=0))
    hc = np.arange(300 * 70, dtype=np.int32).reshape(300, 70) % 11
    np.testing.assert_array_equal(ga.asarray(hc, context=ctx).cumsum(axis=0).get(),
                                  hc.cumsum(axis=0))


@pytest.mark.parametrize("m, k, n", [(37, 29, 45), (130, 20, 140)])
def test_gemm(ctx, path, m, k, n):
    """The portable tiled GEMM with edge tiles, transposed operands, a batch and GEMV."""
    a, b = _host((m, k)), _host((k, n))
    ga_, gb = ga.asarray(a, context=ctx), ga.asarray(b, context=ctx)
    _close(ga_ @ gb, a @ b, rtol=1e-4, atol=1e-2)
    _close(gb.T @ ga_.T, b.T @ a.T, rtol=1e-4, atol=1e-2)
    _close(ga_ @ gb[:, 3], a @ b[:, 3], rtol=1e-4, atol=1e-2)  # gemv
    batch = _host((3, m, k))
    _close(ga.asarray(batch, context=ctx) @ gb, batch @ b, rtol=1e-4, atol=1e-2)


def test_indexing(ctx, path):
    h = _host((50, 40))
    x = ga.asarray(h, context=ctx)
    rows = np.array([3, -1, 0, 49, 7])
    np.testing.assert_array_equal(x[rows].get(), h[rows])
    cols = np.array([0, 39, -40, 5, 5])
    np.testing.assert_array_equal(x[rows, cols].get(), h[rows, cols])
    np.testing.assert_array_equal(x[:, [5, 1]][::2].get(), h[:, [5, 1]][::2])
    np.testing.assert_array_equal(x[x > 3].get(), h[h > 3])  # mask compaction
    np.testing.assert_array_equal(ga.nonzero(x[:7] > 0)[1].get(), np.nonzero(h[:7] > 0)[1])
    y, hy = x.copy(), h.copy()
    y[[4, 9, 2]] = 0.5  # scatter
    hy[[4, 9, 2]] = 0.5
    y[y < -5] = -5  # masked write
    hy[hy < -5] = -5
    np.testing.assert_array_equal(y.get(), hy)
    with pytest.raises(IndexError, match="index 50"):
        x[np.array([1, 50])]  # the device's bounds flag
    np.testing.assert_array_equal(x[[0, 1]].get(), h[[0, 1]])


def test_sort(ctx, path):
    h = _host(3000)
    x = ga.asarray(h, context=ctx)
    np.testing.assert_array_equal(ga.sort(x).get(), np.sort(h))
    hi = (np.arange(1500) * 7919 % 1000).astype(np.int64)
    np.testing.assert_array_equal(ga.argsort(ga.asarray(hi, context=ctx)).get(),
                                  np.argsort(hi, kind="stable"))
    m = ga.asarray(h[:600].reshape(20, 30), context=ctx)
    np.testing.assert_array_equal(ga.sort(m, axis=1).get(), np.sort(h[:600].reshape(20, 30)))


def test_small_inverses_and_solves(ctx):
    """getri_gj, gesv_gj: matrices sharing a work-group, the last group part empty, one
    singular."""
    from gpuarr import linalg
    h = _host((5, 9, 9)) + 40 * np.eye(9, dtype=np.float32)
    _close(linalg.inv(ga.asarray(h, context=ctx)), np.linalg.inv(h), atol=1e-5)
    b = _host((5, 9, 3))
    _close(linalg.solve(ga.asarray(h, context=ctx), ga.asarray(b, context=ctx)),
           np.linalg.solve(h, b), atol=1e-4)
    h[3, :, 2] = 0
    with pytest.raises(np.linalg.LinAlgError, match=r"\(3,\)"):
        linalg.inv(ga.asarray(h, context=ctx))


def test_row_swaps(ctx):
    """laswp_group: two work-groups of columns, a batch of two, pivots past the block and
    repeated, the columns of a block skipped."""
    from gpuarr import factorizations
    h = _host((2, 90, 40))
    sc = factorizations._local_sizes(ctx, np.dtype(np.float32))[4]
    piv = np.array([[3, 70, 70, 3, 89, 5, 6, 50], [1, 1, 2, 3, 40, 40, 40, 7]], np.int32)
    a = ga.asarray(h, context=ctx)
    factorizations.laswp(a, ga.asarray(piv, context=ctx), skip=(2, 4))
    want = h.copy()
    for q in range(2):
        for k, p in enumerate(piv[q]):
            want[q, [k, p]] = want[q, [p, k]]
    want[:, :, 2:4] = h[:, :, 2:4]
    assert -(-38 // sc) >= 2  # two work-groups of columns
    np.testing.assert_array_equal(a.get(), want)


def test_lu_and_triangular_solves_by_grid_kernels(ctx, monkeypatch):
    """getrf_grid (one work-group: Oclgrind runs work-groups one after another; portable
    leaders): the panels, their row swaps on the rest of the matrix and the rows' order;
    trsm_grid (the blocks in turn, each after its flags): the two solves of a 110 x 110
    system with a ragged last block."""
    from gpuarr import factorizations, linalg
    grid = factorizations._grid
    monkeypatch.setattr(factorizations, "_grid", lambda x: grid(x, warp=1, rows=x.shape[1]))
    monkeypatch.setattr(factorizations, "_trsm_groups", lambda c, nblk: 1)
    h, b = _host((110, 110)), _host((110, 3))  # (rows swapped at most columns)
    x = linalg.solve(ga.asarray(h, context=ctx), ga.asarray(b, context=ctx)).get()
    assert np.linalg.norm(h @ x - b) < 1e-5 * np.linalg.norm(h) * np.linalg.norm(x)
    assert {"getrf_grid", "trsm_grid"} <= {k[1] for k in ctx.programs if k[0] == "linalg-grid"}


def test_tridiagonal_eigensolver(ctx):
    """sytrd_grid (one work-group: Oclgrind runs work-groups one after another), bounds,
    stebz (a ragged last work-group) and stein through eigh_tridiagonal, Q by block_t and
    the block reflectors: the eigenvalues of a 21 x 21 symmetric matrix, its tridiagonal
    form's vectors."""
    from gpuarr import factorizations, tridiagonal
    h = _host((21, 21))
    h = h + h.T
    fit = factorizations.sytrd_fits(ctx, 21, np.dtype(np.float32), groups=1)
    d, e, tau, vt, check = factorizations.sytrd(ga.asarray(h, context=ctx), fit)
    check()
    w, z = tridiagonal.eigh_tridiagonal(d, e)
    _close(w, np.linalg.eigvalsh(h), atol=1e-3)
    t = np.diag(d.get()) + np.diag(e.get(), 1) + np.diag(e.get(), -1)
    zh = z.get()
    np.testing.assert_allclose(t @ zh, zh * w.get(), atol=1e-3)
    v = tridiagonal._apply_q(vt, tau, z.astype(np.float32))
    np.testing.assert_allclose(h @ v.get(), v.get() * w.get(), atol=1e-2)


def test_cholesky_steps(ctx):
    """potrf_panel (a diagonal block and the panel below it, three work-groups), tril_blocks,
    the update GEMMs; potrf_leaf and trsm_tile through a batch and a triangular solve."""
    from gpuarr import linalg
    h = _host((130, 130))
    s = h @ h.T / 130 + np.eye(130, dtype=np.float32)
    _close(linalg.cholesky(ga.asarray(s, context=ctx)), np.linalg.cholesky(s), atol=1e-4)
    small = s[None, :9, :9].repeat(3, axis=0)
    _close(linalg.cholesky(ga.asarray(small, context=ctx)), np.linalg.cholesky(small),
           atol=1e-4)
    t = np.tril(s[:70, :70])
    b = _host((70, 3))
    _close(linalg.solve_triangular(ga.asarray(t, context=ctx), ga.asarray(b, context=ctx),
                                   lower=True), np.linalg.solve(t, b), atol=1e-4)


def test_random_and_user_kernels(ctx):
    u = ga.random.default_rng(3).random(5000, dtype=np.float32).get()
    assert u.shape == (5000,) and u.min() >= 0 and u.max() < 1
    x = ga.asarray(_host(999), context=ctx)
    y = ga.empty_like(x)
    ga.ElemwiseKernel("float *x, float a, float *y", "y[i] = a * x[i]")(x, 3.0, y)
    _close(y, x.get() * 3)


def test_the_check_catches_an_out_of_bounds_write(ctx, capfd):
    """The step is live: a user kernel writing past its array is reported (and the report
    consumed here, so that the autouse check passes)."""
    from .conftest import unexpected

    x = ga.zeros(64, np.float32, context=ctx)
    # (x[i] becomes out0_p[out0_i] in the generated kernel: write 64 elements further)
    ga.ElemwiseKernel("float *x", "out0_p[out0_i + 64] = 1", name="out_of_bounds")(x)
    ctx.sync()
    found = unexpected(capfd.readouterr().err)
    assert any("Invalid write" in r and "out0_i + 64" in r for r in found), found


def test_one_sided_jacobi(ctx, monkeypatch):
    """gesvj_round (the Gram matrix, the inner sweep, the rotation, padded rows, pairs that
    skip) through an SVD and a batched eigh, and the row gathers after it."""
    from gpuarr import factorizations, linalg
    for table, value in ((factorizations.GESVJ_MIN, 17), (factorizations.GESVJ_BATCH, 2)):
        for cls in ("cpu", "gpu"):
            monkeypatch.setitem(table, cls, value)
    monkeypatch.setitem(factorizations.JACOBI_MAX, "cpu", 16)
    monkeypatch.setitem(factorizations.JACOBI_MAX, "gpu", 16)
    a = _host((30, 20))
    u, s, vh = linalg.svd(ga.asarray(a, context=ctx), full_matrices=False)
    _close(s, np.linalg.svd(a, compute_uv=False), atol=1e-4)
    _close((u * s[None, :]) @ vh, a, atol=1e-4)
    h = _host((2, 20, 20))
    h = h + h.swapaxes(1, 2)
    w, v = linalg.eigh(ga.asarray(h, context=ctx))
    _close(w, np.linalg.eigvalsh(h), atol=1e-4)
    _close(ga.asarray(h, context=ctx) @ v, (v * w[:, None, :]).get(), atol=1e-4)
