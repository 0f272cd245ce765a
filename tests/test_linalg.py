"""gpuarr.linalg's factorizations against numpy: residuals (||A x - b||, ||Q R - A||,
||U S V^H - A||, orthogonality) where factors are not unique, values where they are; dtypes,
batch shapes, sizes 0 to 257 (1000: slow), layouts, singular and ill-conditioned input."""

import numpy as np
import pyopencl as cl
import pytest

import gpuarr as ga
from gpuarr import errors, factorizations, tridiagonal
from gpuarr import linalg as la

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
SIZES = [0, 1, 2, 17, 64, 257, pytest.param(1000, marks=pytest.mark.slow)]
BATCHES = [(), (3,), (2, 2), (0,)]


def need(ctx, dt):
    if np.dtype(dt) in (np.float64, np.complex128) and not ctx.fp64:
        pytest.skip("no float64 on this device")


def rand(shape, dt, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def adj(x):
    return np.conj(np.swapaxes(x, -1, -2))


def spd(shape, dt, seed=0):
    a = rand(shape, dt, seed)
    n = shape[-1]
    return (a @ adj(a) / max(n, 1) + np.eye(n, dtype=dt)).astype(dt)


def eps(dt):
    return np.finfo(np.dtype(dt)).eps


def rel(err, scale):
    """err / scale elementwise (for max over stacked matrices), 0 where both are 0."""
    return np.max(np.asarray(err) / np.maximum(np.asarray(scale), np.finfo(np.float64).tiny),
                  initial=0)


def norm2(x):
    return np.linalg.norm(x, axis=(-2, -1)) if x.size else np.zeros(x.shape[:-2])


def close(got, want, dt, factor=1):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    scale = max(np.max(np.abs(want), initial=0), 1)
    assert np.max(np.abs(got - want), initial=0) <= factor * 1e3 * eps(dt) * scale


def g(ctx, x):
    return ga.asarray(x, context=ctx)


# ---------------------------------------------------------------- Cholesky

@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_cholesky(ctx, dt, n):
    need(ctx, dt)
    a = spd((2, n, n), dt, n)
    got = la.cholesky(g(ctx, a))
    assert got.dtype == dt and got.shape == a.shape
    low = got.get()
    assert np.all(np.triu(low, 1) == 0)
    assert rel(norm2(low @ adj(low) - a), norm2(a)) < 30 * max(n, 1) * eps(dt)
    close(low, np.linalg.cholesky(a), dt, max(n, 1) / 10)
    up = la.cholesky(g(ctx, a), upper=True).get()
    close(up, adj(low), dt)


@pytest.mark.parametrize("batch", BATCHES)
def test_cholesky_batches_and_layouts(ctx, batch):
    a = spd((*batch, 5, 5), np.float32, 1)
    want = np.linalg.cholesky(a) if a.size else a
    close(la.cholesky(g(ctx, a)).get(), want, np.float32)
    f = ga.asarray(np.asfortranarray(spd((9, 9), np.float32, 2)), context=ctx)
    assert not f.flags.c_contiguous
    close(la.cholesky(f).get(), np.linalg.cholesky(f.get()), np.float32)
    big = g(ctx, spd((3, 12, 12), np.float32, 3))
    view = big[1:, 1:-1, 1:-1].swapaxes(1, 2)  # offset, transposed, strided
    close(la.cholesky(view).get(), np.linalg.cholesky(view.get()), np.float32)


def test_cholesky_reads_the_lower_triangle_only(ctx):
    a = spd((6, 6), np.float64, 4)
    junk = a + np.triu(np.full((6, 6), 1e3), 1)
    close(la.cholesky(g(ctx, junk)).get(), np.linalg.cholesky(a), np.float64)


def test_cholesky_not_positive_definite_names_the_matrix(ctx):
    a = spd((2, 3, 20, 20), np.float32, 5)
    a[1, 2, 7, 7] = -50  # leading minor of order 8 fails
    with pytest.raises(np.linalg.LinAlgError, match=r"positive definite.*order 8.*\(1, 2\)"):
        la.cholesky(g(ctx, a))
    with pytest.raises(errors.LinAlgError):
        la.cholesky(g(ctx, np.full((3, 3), np.nan, np.float32)))
    a = spd((300, 300), np.float32, 5)  # blocked: a failure past the first block
    a[200, 200] = -1e4
    with pytest.raises(errors.GpuArrayError, match="order 201"):
        la.cholesky(g(ctx, a))


# ---------------------------------------------------------------- LU: solve, inv, det

@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_solve_inv_det(ctx, dt, n):
    need(ctx, dt)
    a = rand((2, n, n), dt, n) + 2 * np.eye(n, dtype=dt)
    b = rand((2, n, 3), dt, n + 1)
    ga_a = g(ctx, a)
    x = la.solve(ga_a, g(ctx, b))
    assert x.dtype == dt and x.shape == b.shape
    x = x.get()
    scale = norm2(a) * norm2(x) + norm2(b)
    assert rel(norm2(a @ x - b), scale) < 30 * max(n, 1) * eps(dt)
    ai = la.inv(ga_a).get()
    eye = np.broadcast_to(np.eye(n, dtype=dt), a.shape)
    assert rel(norm2(a @ ai - eye), norm2(a) * norm2(ai)) < 30 * max(n, 1) * eps(dt)
    if n <= 64:
        s, ld = la.slogdet(ga_a)
        ws, wl = np.linalg.slogdet(a)
        close(s.get(), ws, dt, n + 1)
        assert np.allclose(ld.get(), wl, rtol=1e-4, atol=1e-4 * (n + 1))
        assert ld.dtype == wl.dtype
        d = la.det(ga_a).get()
        with np.errstate(over="ignore", invalid="ignore"):
            want = np.linalg.det(a)
        assert d.dtype == dt
        assert np.allclose(d, want, rtol=50 * max(n, 1) * eps(dt), atol=0) or (
            n == 64 and np.array_equal(np.isinf(d), np.isinf(want)))


@pytest.mark.parametrize(("ashape", "bshape"), [
    ((4, 4), (4,)), ((3, 4, 4), (4,)), ((4, 4), (2, 4, 3)), ((2, 1, 4, 4), (3, 4, 2)),
    ((3, 4, 4), (3, 4, 4)), ((0, 4, 4), (4, 1)), ((4, 4), (4, 0))])
def test_solve_broadcasting(ctx, ashape, bshape):
    a = rand(ashape, np.float64, 1) + 3 * np.eye(4)
    b = rand(bshape, np.float64, 2)
    got = la.solve(g(ctx, a), g(ctx, b))
    want = np.linalg.solve(a, b)
    assert got.shape == want.shape
    close(got.get(), want, np.float64)
    with pytest.raises(ValueError, match=r"4, 4\).*\(3,\)"):
        la.solve(g(ctx, a[..., :4, :4]), g(ctx, np.ones(3)))


def test_solve_mixed_dtypes_and_integers(ctx):
    a = np.array([[4, 1], [2, 3]])
    x = la.solve(g(ctx, a.astype(np.int32)), g(ctx, np.array([1, 2], np.int64)))
    assert x.dtype == np.float64
    close(x.get(), np.linalg.solve(a, [1, 2]), np.float64)
    x = la.solve(g(ctx, a.astype(np.float32)), g(ctx, np.array([1, 2], np.complex64)))
    assert x.dtype == np.complex64
    assert la.inv(g(ctx, np.eye(2, dtype=bool))).dtype == np.float64


def test_singular_matrices(ctx):
    a = rand((2, 3, 6, 6), np.float32, 1)
    a[1, 1, :, 2] = 0
    with pytest.raises(np.linalg.LinAlgError, match=r"Singular matrix.*\(1, 1\)"):
        la.inv(g(ctx, a))
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        la.solve(g(ctx, a), g(ctx, np.ones(6, np.float32)))
    assert la.det(g(ctx, a)).get()[1, 1] == 0
    s, ld = la.slogdet(g(ctx, a))
    assert s.get()[1, 1] == 0 and ld.get()[1, 1] == -np.inf
    ok = np.ones((2, 2), np.float64)
    with pytest.raises(errors.LinAlgError):
        la.inv(g(ctx, ok))


def test_ill_conditioned_solve(ctx):
    n = 10
    h = 1 / (np.arange(n)[:, None] + np.arange(n) + 1)  # Hilbert, cond ~ 1e13
    b = h @ np.ones(n)
    x = la.solve(g(ctx, h), g(ctx, b)).get()
    assert np.linalg.norm(h @ x - b) <= 100 * eps(np.float64) * np.linalg.norm(h) * \
        np.linalg.norm(x)
    assert la.cond(g(ctx, h)).get() == pytest.approx(np.linalg.cond(h), rel=1e-3)


def test_layouts_solve_inv(ctx):
    base = rand((3, 20, 20), np.complex64, 4) + 4 * np.eye(20, dtype=np.complex64)
    big = g(ctx, base)
    for view in (big[1:, 2:-1, 2:-1], big.swapaxes(1, 2), big[::2, ::2, ::2],
                 ga.asarray(np.asfortranarray(base[0]), context=ctx)):
        h = view.get()
        close(la.inv(view).get(), np.linalg.inv(h), np.complex64, 10)
        close(la.solve(view, view).get(), np.linalg.solve(h, h), np.complex64, 10)


def test_batched_small(ctx):
    """Many small matrices: one work-group each (the batched kernels)."""
    a = spd((500, 32, 32), np.float32, 7)
    got = la.inv(g(ctx, a)).get()
    assert rel(norm2(a @ got - np.eye(32)), 1) < 1e-4
    low = la.cholesky(g(ctx, a)).get()
    close(low, np.linalg.cholesky(a), np.float32, 3)


def test_matrix_power_negative(ctx):
    a = rand((2, 5, 5), np.float64, 3) + 3 * np.eye(5)
    close(la.matrix_power(g(ctx, a), -3).get(), np.linalg.matrix_power(a, -3), np.float64)


# ---------------------------------------------------------------- QR

@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize(("m", "n"), [(0, 0), (1, 1), (2, 2), (17, 5), (5, 17), (64, 64),
                                      (257, 70), (70, 257), pytest.param(1000, 1000,
                                                                         marks=pytest.mark.slow)])
def test_qr(ctx, dt, m, n):
    need(ctx, dt)
    a = rand((2, m, n), dt, m + n)
    k = min(m, n)
    q, r = la.qr(g(ctx, a))
    q, r = q.get(), r.get()
    assert q.shape == (2, m, k) and r.shape == (2, k, n) and q.dtype == dt
    tol = 30 * max(m, n, 1) * eps(dt)
    assert rel(norm2(q @ r - a), norm2(a)) < tol
    assert rel(norm2(adj(q) @ q - np.eye(k)), 1) < tol
    assert np.all(np.tril(r, -1) == 0)
    close(np.abs(np.diagonal(r, axis1=1, axis2=2)),
          np.abs(np.diagonal(np.linalg.qr(a, mode="r"), axis1=1, axis2=2)), dt, max(m, n) / 10)
    qc, rc = la.qr(g(ctx, a), mode="complete")
    qc, rc = qc.get(), rc.get()
    assert qc.shape == (2, m, m) and rc.shape == (2, m, n)
    assert rel(norm2(qc @ rc - a), norm2(a)) < tol
    assert rel(norm2(adj(qc) @ qc - np.eye(m)), 1) < tol
    close(la.qr(g(ctx, a), mode="r").get(), r, dt)


def test_qr_batches_layouts_and_modes(ctx):
    a = rand((2, 3, 9, 4), np.float64, 5)
    q, r = la.qr(g(ctx, a).swapaxes(-1, -2))
    assert q.shape == (2, 3, 4, 4) and r.shape == (2, 3, 4, 9)
    assert rel(norm2(q.get() @ r.get() - a.swapaxes(-1, -2)), norm2(a)) < 1e-13
    with pytest.raises(ValueError, match="mode 'bad'"):
        la.qr(g(ctx, a), mode="bad")
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        la.qr(g(ctx, a[0, 0, 0]))


# ---------------------------------------------------------------- eigh and svd

@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 17, 64])
def test_eigh(ctx, dt, n):
    need(ctx, dt)
    a = rand((2, n, n), dt, n)
    h = (a + adj(a)) / 2
    for uplo in ("L", "U"):
        junk = h + (np.triu if uplo == "L" else np.tril)(np.full((n, n), 7.0, dt), 1 if uplo ==
                                                         "L" else -1)
        w, v = la.eigh(g(ctx, junk), UPLO=uplo)
        w, v = w.get(), v.get()
        assert w.dtype == np.finfo(dt).dtype and v.dtype == dt
        tol = 50 * max(n, 1) * eps(dt)
        assert rel(norm2(h @ v - v * w[..., None, :]), norm2(h) + 1) < tol
        assert rel(norm2(adj(v) @ v - np.eye(n)), 1) < tol
        close(w, np.linalg.eigvalsh(h), dt, n + 1)
        close(la.eigvalsh(g(ctx, junk), UPLO=uplo).get(), w, dt, n + 1)


def test_eigh_tridiagonal(ctx):
    """tridiagonal.eigh_tridiagonal (multisection, inverse iteration) against numpy: 1 x 1,
    2 x 2, random, split by a zero off-diagonal, widely spread entries; eigenvalues alone
    the same."""
    rng = np.random.default_rng(5)
    wdt = np.float64 if ctx.fp64 else np.float32
    cases = [(rng.standard_normal(n), rng.standard_normal(n - 1)) for n in (1, 2, 9, 70)]
    d, e = rng.standard_normal(50), rng.standard_normal(49)
    e[20] = 0
    cases += [(d, e), (np.arange(40) * 1e3 + rng.standard_normal(40), rng.standard_normal(39))]
    for d, e in cases:
        n = d.size
        t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
        w, z = tridiagonal.eigh_tridiagonal(g(ctx, d.astype(wdt)), g(ctx, e.astype(wdt)))
        w, z = w.get(), z.get()
        assert w.dtype == z.dtype == wdt
        tol = 50 * n * eps(wdt)
        close(w, np.linalg.eigvalsh(t), wdt, n)
        assert rel(norm2(t @ z - z * w), norm2(t)) < tol
        assert rel(norm2(z.T @ z - np.eye(n)), 1) < tol
        only = tridiagonal.eigh_tridiagonal(g(ctx, d.astype(wdt)), g(ctx, e.astype(wdt)),
                                            vectors=False)
        assert only[1] is None
        np.testing.assert_array_equal(only[0].get(), w)


def nan_outcome(f, x):
    """Where f(x) holds NaNs, or 'LinAlgError'."""
    try:
        return np.isnan(f(x)).tolist()
    except np.linalg.LinAlgError:
        return "LinAlgError"


def test_tridiagonalization_across_work_groups(ctx):
    """sytrd_grid with two work-groups meeting at a barrier a column (PoCL runs both at
    once): Q T Q^H = A and Q orthonormal, Q from the reflectors it returns; sizes that leave
    a work-group without rows, or with a ragged last one."""
    if "Intel" in ctx.device.platform:
        pytest.skip("Intel's CPU runtime crashes running work-groups that wait on each other")
    dt = np.float64 if ctx.fp64 else np.float32
    for n in (1, 2, 3, 45):
        h = rand((n, n), dt, n)
        h = h + h.T
        fit = factorizations.sytrd_fits(ctx, n, np.dtype(dt), groups=2)
        d, e, tau, vt = (x.get() for x in factorizations.sytrd(g(ctx, h), fit)[:4])
        q = np.eye(n)
        for k in reversed(range(n - 1)):
            q -= tau[k] * np.outer(vt[k], vt[k] @ q)
        t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
        assert rel(norm2(q @ t @ q.T - h), norm2(h)) < 30 * max(n, 1) * eps(dt)
        assert rel(norm2(q.T @ q - np.eye(n)), 1) < 30 * max(n, 1) * eps(dt)


@pytest.mark.parametrize("dt", DTYPES)
def test_eigh_tridiagonal_route_across_work_groups(ctx, dt, monkeypatch):
    """One Hermitian matrix through the tridiagonal form: sytrd_grid with two work-groups
    meeting at a barrier a column (PoCL runs both at once), and on NVIDIA GPUs at 600 as
    eigh picks it; UPLO with junk in the other triangle, eigvalsh; repeated eigenvalues (2 I
    + a rank-one term; float64) and a NaN decline to another algorithm, the result right
    either way."""
    need(ctx, dt)
    if "Intel" in ctx.device.platform:
        pytest.skip("Intel's CPU runtime crashes running work-groups that wait on each other")
    sizes = [45]
    if factorizations.sytrd_fits(ctx, 600, np.dtype(dt)):
        sizes.append(600)
    else:
        fits = factorizations.sytrd_fits
        monkeypatch.setattr(factorizations, "sytrd_fits",
                            lambda c, n, d, groups=None: fits(c, n, d, groups=2))
    monkeypatch.setattr(la, "EIGH_TRIDIAGONAL", 40)
    found = []
    route = tridiagonal.eigh
    monkeypatch.setattr(tridiagonal, "eigh", lambda *a: found.append(route(*a)) or found[-1])
    for n in sizes:
        a = rand((n, n), dt, n)
        h = (a + adj(a)) / 2
        u = rand((n, 1), dt, 2)
        twice = 2 * np.eye(n, dtype=dt) + u @ adj(u)
        tol = 50 * n * eps(dt)
        for uplo in ("L", "U"):
            junk = h + (np.triu if uplo == "L" else np.tril)(np.full((n, n), 7.0, dt),
                                                             1 if uplo == "L" else -1)
            w, v = (x.get() for x in la.eigh(g(ctx, junk), UPLO=uplo))
            assert found.pop() is not None
            assert w.dtype == np.finfo(dt).dtype and v.dtype == dt
            assert rel(norm2(h @ v - v * w), norm2(h) + 1) < tol
            assert rel(norm2(adj(v) @ v - np.eye(n)), 1) < tol
            close(w, np.linalg.eigvalsh(h), dt, n + 1)
            close(la.eigvalsh(g(ctx, junk), UPLO=uplo).get(), w, dt, n + 1)
            assert found.pop() is not None
        w, v = (x.get() for x in la.eigh(g(ctx, twice)))
        # (float32's rounding spreads the repeated eigenvalue ~1e-6 apart: resolved there)
        assert found.pop() is None or eps(dt) > 1e-10
        assert rel(norm2(twice @ v - v * w), norm2(twice)) < tol
        assert rel(norm2(adj(v) @ v - np.eye(n)), 1) < tol
        close(w, np.linalg.eigvalsh(twice), dt, n + 1)
        bad = np.eye(n, dtype=dt)
        bad[3, 4] = bad[4, 3] = np.nan  # declined too: numpy's result
        assert nan_outcome(lambda x: la.eigvalsh(g(ctx, x)).get(), bad) == nan_outcome(
            np.linalg.eigvalsh, bad)
        assert found.pop() is None


@pytest.mark.parametrize("dt", DTYPES)
def test_eigh_batched_jacobi(ctx, dt):
    """Batches of small Hermitian matrices: Jacobi on the device, one work-item each."""
    need(ctx, dt)
    n = factorizations.jacobi_max(ctx)
    a = rand((300, n, n), dt, 11)
    h = (a + adj(a)) / 2
    h[7] = np.diag(np.arange(n, 0, -1)).astype(dt)  # diagonal: no rotation, sorted
    h[8] = np.eye(n, dtype=dt)  # all eigenvalues equal
    w, v = (x.get() for x in la.eigh(g(ctx, h)))
    tol = 50 * n * eps(dt)
    assert rel(norm2(h @ v - v * w[..., None, :]), norm2(h)) < tol
    assert rel(norm2(adj(v) @ v - np.eye(n)), 1) < tol
    close(w, np.linalg.eigvalsh(h), dt, n)
    assert np.all(np.diff(w, axis=-1) >= 0)
    close(np.abs(v[7]), np.eye(n)[::-1], dt)


@pytest.mark.parametrize("dt", [*DTYPES, np.int32])
@pytest.mark.parametrize("n", [0, 1, 2, 17, 64])
def test_eig(ctx, dt, n):
    """General eigenproblems: A V = V diag(w) for each matrix of a batch (a transposed view),
    the eigenvalues numpy's (as a multiset), always complex (complex64 for float32)."""
    need(ctx, np.float64 if dt == np.int32 else dt)
    a = (rand((2, 3, n, n), np.float64, n) * 4).astype(dt) if dt == np.int32 else \
        rand((2, 3, n, n), dt, n)
    a[0, 0] = np.diag(np.arange(n)).astype(dt)  # real eigenvalues: complex all the same
    x = g(ctx, np.swapaxes(a, -1, -2).copy()).swapaxes(-1, -2)  # a transposed view of a
    w, v = (r.get() for r in la.eig(x))
    ct = np.result_type(dt if dt != np.int32 else np.float64, np.complex64)
    assert w.dtype == v.dtype == ct and w.shape == a.shape[:-1] and v.shape == a.shape
    af = a.astype(ct)
    tol = 200 * max(n, 1) * eps(ct)
    assert rel(norm2(af @ v - v * w[..., None, :]), norm2(af) + 1) < tol
    assert rel(np.abs(np.linalg.norm(v, axis=-2) - 1), 1) < tol  # unit columns
    want = np.linalg.eigvals(af)
    key = lambda z: np.sort_complex(np.round(z, 3))  # noqa: E731  (a multiset of values)
    assert np.allclose(key(w), key(want), atol=1e-2)
    assert np.allclose(key(la.eigvals(x).get()), key(w), atol=1e-3)
    np.testing.assert_allclose(np.sort(w[0, 0].real), np.arange(n), atol=tol * max(n, 1))


def test_eig_errors_and_numpy(ctx):
    """Non-square and non-matrix input raise numpy's LinAlgError; numpy's eig, eigvals,
    roots and poly of a matrix dispatch to the device and agree with numpy."""
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        la.eig(g(ctx, np.ones((2, 3), np.float32)))
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        la.eigvals(g(ctx, np.ones(3, np.float32)))
    h = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
    w = np.linalg.eigvals(g(ctx, h))
    assert isinstance(w, ga.GpuArray) and w.dtype == np.complex64
    np.testing.assert_allclose(np.sort(w.get().real), np.linalg.eigvalsh(h), rtol=1e-5)
    p = ga.poly(g(ctx, h))  # the characteristic polynomial, real: conjugate roots
    np.testing.assert_allclose(p.get(), np.poly(h), rtol=1e-5)
    for coef in ([1.0, -3.0, 2.0], [1.0, 0.0, 1.0], [0.0, 2.0, 0.0, -8.0, 0.0], [5.0], [0.0]):
        c = np.asarray(coef, np.float32)
        got, want = np.roots(g(ctx, c)), np.roots(c)
        assert isinstance(got, ga.GpuArray) and got.dtype == want.dtype
        np.testing.assert_allclose(np.sort_complex(got.get()), np.sort_complex(want),
                                   atol=1e-5)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize(("m", "n"), [(0, 3), (1, 1), (17, 5), (5, 17), (64, 64)])
def test_svd(ctx, dt, m, n):
    need(ctx, dt)
    a = rand((2, m, n), dt, m * n)
    u, s, vh = (x.get() for x in la.svd(g(ctx, a), full_matrices=False))
    tol = 50 * max(m, n, 1) * eps(dt)
    assert rel(norm2((u * s[..., None, :]) @ vh - a), norm2(a) + 1) < tol
    close(s, np.linalg.svd(a, compute_uv=False), dt, max(m, n))
    close(la.svdvals(g(ctx, a)).get(), s, dt, max(m, n))
    close(la.svd(g(ctx, a), compute_uv=False).get(), s, dt, max(m, n))
    uf, _, vf = la.svd(g(ctx, a))
    assert uf.shape == (2, m, m) and vf.shape == (2, n, n)


@pytest.fixture
def jacobi(monkeypatch):
    """One-sided block Jacobi on the device (gesvj, GPUs' path for large and batched SVDs
    and batched eigh) for every SVD and batched eigh past JACOBI_MAX; gesvj's calls
    counted."""
    for table, value in ((factorizations.GESVJ_MIN, 17), (factorizations.GESVJ_BATCH, 2)):
        for cls in ("cpu", "gpu"):
            monkeypatch.setitem(table, cls, value)
    calls = []
    run = factorizations.gesvj

    def counted(*args, **kw):
        calls.append(args[0].shape)
        return run(*args, **kw)
    monkeypatch.setattr(factorizations, "gesvj", counted)
    return calls


def check_svd(ctx, a, dt, full):
    m, n = a.shape[-2:]
    k = min(m, n)
    u, s, vh = (x.get() for x in la.svd(g(ctx, a), full_matrices=full))
    assert u.shape == (*a.shape[:-2], m, m if full else k)
    assert vh.shape == (*a.shape[:-2], n if full else k, n)
    tol = 50 * max(m, n) * eps(dt)
    assert rel(norm2((u[..., :k] * s[..., None, :]) @ vh[..., :k, :] - a), norm2(a) + 1) < tol
    assert rel(norm2(adj(u) @ u - np.eye(u.shape[-1])), 1) < tol
    assert rel(norm2(vh @ adj(vh) - np.eye(vh.shape[-2])), 1) < tol
    close(s, np.linalg.svd(a, compute_uv=False), dt, max(m, n))
    assert np.all(np.diff(s, axis=-1) <= 0)
    return s


@pytest.mark.parametrize("dt", DTYPES)
def test_svd_by_jacobi(ctx, jacobi, monkeypatch, dt):
    """SVDs by one-sided Jacobi: tall, wide and square, reduced and full, a transposed view,
    rank-deficient (a repeated and a zero column: U completed by a QR), all zero; a NaN and
    too few sweeps raise as numpy's SVD does. Half the dtypes reorder the rows after each
    sweep (gesvj's path for large matrices), half queue sweeps ahead."""
    need(ctx, dt)
    ordered = dt in (np.float32, np.complex128)
    monkeypatch.setattr(factorizations, "GESVJ_ORDER", 0 if ordered else 1 << 30)
    for shape in ((2, 40, 30), (2, 30, 40), (33, 33)):
        a = rand(shape, dt, sum(shape))
        for full in (True, False):
            s = check_svd(ctx, a, dt, full)
        close(la.svdvals(g(ctx, a)).get(), s, dt, max(shape))
        close(la.svd(g(ctx, a), compute_uv=False).get(), s, dt, max(shape))
    t = g(ctx, rand((3, 50, 20), dt, 5)).swapaxes(-1, -2)[1:]  # (2, 20, 50), strided
    u, s, vh = (x.get() for x in la.svd(t, full_matrices=False))
    want = t.get()
    assert rel(norm2((u * s[..., None, :]) @ vh - want), norm2(want)) < 2500 * eps(dt)
    a = rand((2, 45, 36), dt, 9)
    a[:, :, 5] = a[:, :, 3]
    a[:, :, 7] = 0
    a[1] = 0
    s = check_svd(ctx, a, dt, True)
    assert np.all(s[1] == 0) and np.all(s[0, 34:] <= 100 * eps(dt) * s[0, 0])
    assert len(jacobi) == 14  # every call above
    bad = rand((40, 30), dt, 1)
    bad[3, 4] = np.nan
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        la.svd(g(ctx, bad))


def test_built_on_jacobi_svd(ctx, jacobi):
    """pinv, matrix_rank, lstsq, the 2-norm and cond from the device's SVD."""
    need(ctx, np.float64)
    a = rand((2, 45, 30), np.float64, 6)
    a[1, :, 29] = a[1, :, 0]  # rank 29
    close(la.pinv(g(ctx, a)).get(), np.linalg.pinv(a), np.float64, 10)
    assert la.matrix_rank(g(ctx, a)).get().tolist() == [30, 29]
    b = rand((45, 2), np.float64, 7)
    x, resid, rank, s = la.lstsq(g(ctx, a[0]), g(ctx, b))
    want = np.linalg.lstsq(a[0], b)
    close(x.get(), want[0], np.float64, 10)
    close(resid.get(), want[1], np.float64, 10)
    assert rank == want[2]
    close(s.get(), want[3], np.float64, 10)
    close(la.matrix_norm(g(ctx, a), ord=2).get(), np.linalg.norm(a, 2, axis=(1, 2)),
          np.float64, 10)
    assert len(jacobi) == 4


def test_jacobi_gives_up(ctx, jacobi, monkeypatch):
    monkeypatch.setattr(factorizations, "GESVJ_SWEEPS", 1)
    a = rand((40, 30), np.float32, 2)
    with pytest.raises(np.linalg.LinAlgError, match="did not converge"):
        la.svd(g(ctx, a))
    with pytest.raises(np.linalg.LinAlgError, match="did not converge"):
        la.eigh(g(ctx, np.stack([a @ a.T] * 2)))


@pytest.mark.parametrize("dt", DTYPES)
def test_eigh_by_jacobi(ctx, jacobi, monkeypatch, dt):
    """Batched eigh by one-sided Jacobi on the shifted matrices: the lower or upper
    triangle read, eigenvalues in +- pairs (no mixing of their vectors), all equal, already
    diagonal, zero. Half the dtypes take the second pass on V^H A V (large matrices')."""
    need(ctx, dt)
    refine = dt in (np.float64, np.complex64)
    monkeypatch.setattr(la, "EIGH_REFINE", 0 if refine else 1 << 30)
    n = 40
    a = rand((5, n, n), dt, 3)
    h = (a + adj(a)) / 2
    b = rand((n // 2, n // 2), dt, 4)
    h[1] = 0
    h[1, :n // 2, n // 2:] = b  # [[0, B], [B^H, 0]]: eigenvalues +-s(B)
    h[1, n // 2:, :n // 2] = adj(b)
    h[2] = 2 * np.eye(n, dtype=dt)
    h[3] = np.diag(np.arange(n, 0, -1)).astype(dt)
    h[4] = 0
    for uplo in ("L", "U"):
        junk = h + (np.triu if uplo == "L" else np.tril)(np.full((n, n), 7.0, dt),
                                                         1 if uplo == "L" else -1)
        w, v = (x.get() for x in la.eigh(g(ctx, junk), UPLO=uplo))
        assert w.dtype == np.finfo(dt).dtype and v.dtype == dt
        tol = 50 * n * eps(dt)
        assert rel(norm2(h @ v - v * w[..., None, :]), norm2(h) + 1) < tol
        assert rel(norm2(adj(v) @ v - np.eye(n)), 1) < tol
        close(w, np.linalg.eigvalsh(h), dt, n)
        close(la.eigvalsh(g(ctx, junk), UPLO=uplo).get(), w, dt, n)
    calls = 8 if refine else 4
    assert len(jacobi) == calls
    la.eigh(g(ctx, h[0]))  # one matrix below GESVJ_EIGH_ONE: the host's LAPACK
    assert len(jacobi) == calls


# ---------------------------------------------------------------- built on the SVD

def test_pinv_rank_lstsq(ctx):
    a = rand((2, 7, 4), np.float64, 1)
    a[1, :, 3] = a[1, :, 0]  # rank 3
    close(la.pinv(g(ctx, a)).get(), np.linalg.pinv(a), np.float64)
    close(la.pinv(g(ctx, a), rtol=1e-3).get(), np.linalg.pinv(a, rtol=1e-3), np.float64)
    h = a[0] @ a[0].T
    close(la.pinv(g(ctx, h), hermitian=True).get(), np.linalg.pinv(h, hermitian=True),
          np.float64, 10)
    assert la.pinv(g(ctx, np.zeros((0, 3)))).shape == (3, 0)
    assert la.matrix_rank(g(ctx, a)).get().tolist() == [4, 3]
    assert la.matrix_rank(g(ctx, a), rtol=0.9).get().tolist() == \
        np.linalg.matrix_rank(a, rtol=0.9).tolist()
    assert int(la.matrix_rank(g(ctx, np.ones(3))).get()) == 1
    b = rand((7, 2), np.float64, 2)
    for aa, bb in ((a[0], b), (a[0], b[:, 0]), (a[1], b), (a[0].T, b[:4])):
        x, res, rank, s = la.lstsq(g(ctx, aa), g(ctx, bb))
        wx, wres, wrank, ws = np.linalg.lstsq(aa, bb)
        close(x.get(), wx, np.float64, 10)
        assert res.shape == wres.shape and rank == wrank
        close(res.get(), wres, np.float64, 10)
        close(s.get(), ws, np.float64)


@pytest.mark.parametrize("ord", [2, -2, "nuc", None, "fro", 1, np.inf])
def test_norms_and_cond(ctx, ord):
    a = rand((3, 6, 5), np.complex64, 2)
    close(la.matrix_norm(g(ctx, a), ord="fro" if ord is None else ord).get(),
          np.linalg.matrix_norm(a, ord="fro" if ord is None else ord), np.complex64)
    close(la.norm(g(ctx, a[0]), ord=ord).get(), np.linalg.norm(a[0], ord=ord), np.complex64)
    sq = a[:, :5] + 3 * np.eye(5, dtype=np.complex64)
    close(la.cond(g(ctx, sq), ord).get(), np.linalg.cond(sq, ord), np.complex64, 10)
    got = la.matrix_norm(g(ctx, a), ord=2 if ord is None else ord, keepdims=True)
    assert got.shape == (3, 1, 1)


def test_multi_dot_and_tensors(ctx):
    xs = [rand(s, np.float64, i) for i, s in enumerate([(10,), (10, 3), (3, 40), (40, 5),
                                                      (5,)])]
    close(la.multi_dot([g(ctx, x) for x in xs]).get(), np.linalg.multi_dot(xs), np.float64)
    close(la.multi_dot([g(ctx, x) for x in xs[1:4]]).get(), np.linalg.multi_dot(xs[1:4]),
          np.float64)
    t = rand((4, 6, 8, 3), np.float64, 3)
    close(la.tensorinv(g(ctx, t), ind=2).get(), np.linalg.tensorinv(t, ind=2), np.float64, 10)
    b = rand((4, 6), np.float64, 4)
    close(la.tensorsolve(g(ctx, t), g(ctx, b)).get(), np.linalg.tensorsolve(t, b),
          np.float64, 10)
    with pytest.raises(np.linalg.LinAlgError):
        la.tensorinv(g(ctx, t[:, :5]), ind=2)


# ---------------------------------------------------------------- building blocks

@pytest.mark.parametrize("dt", [np.float32, np.complex128])
@pytest.mark.parametrize("n", [3, 70])
def test_lu_factor_solve_triangular(ctx, dt, n):
    need(ctx, dt)
    a = rand((2, n, n), dt, 1) + 2 * np.eye(n, dtype=dt)
    lu, piv = la.lu_factor(g(ctx, a))
    lu, piv = lu.get(), piv.get()
    low = np.tril(lu, -1) + np.eye(n, dtype=dt)
    up = np.triu(lu)
    pa = a.copy()
    for b in range(2):
        for k, p in enumerate(piv[b]):
            pa[b, [k, p]] = pa[b, [p, k]]
    tol = 50 * n * eps(dt)
    assert rel(norm2(low @ up - pa), norm2(a)) < tol
    rhs = rand((2, n, 2), dt, 2)
    x = la.lu_solve(la.lu_factor(g(ctx, a)), g(ctx, rhs)).get()
    assert rel(norm2(a @ x - rhs), norm2(a) * norm2(x)) < tol
    t = np.tril(a) + n * np.eye(n, dtype=dt)
    for lower, tri in ((True, t), (False, adj(t))):
        for trans, op in ((0, tri), ("T", np.swapaxes(tri, -1, -2)), (2, adj(tri))):
            for unit in (False, True):
                want_op = op - np.diagonal(op, axis1=1, axis2=2)[..., None] * np.eye(n) + \
                    np.eye(n) if unit else op
                got = la.solve_triangular(g(ctx, tri + np.triu(np.ones_like(tri), 1) * 9 *
                                            lower + np.tril(np.ones_like(tri), -1) * 9 *
                                            (not lower)),
                                          g(ctx, rhs), lower=lower, trans=trans,
                                          unit_diagonal=unit).get()
                assert rel(norm2(want_op @ got - rhs), norm2(want_op) * norm2(got)) < tol
    c = la.cholesky(g(ctx, spd((n, n), dt, 3)))
    x = la.cho_solve((c, True), g(ctx, rhs[0, :, 0])).get()
    close(spd((n, n), dt, 3) @ x, rhs[0, :, 0], dt, n)


def test_blocked_paths_at_the_device_block_size(ctx, monkeypatch):
    """Tiny blocks exercise every branch of the blocked algorithms on small inputs."""
    monkeypatch.setitem(factorizations.BLOCK, "cpu", 4)
    monkeypatch.setitem(factorizations.BLOCK, "gpu", 4)
    monkeypatch.setattr(factorizations, "PANEL_LEAF", 1)  # LU panels: recursive halves
    a = rand((2, 11, 11), np.complex128, 9) + 3 * np.eye(11)
    s = spd((2, 11, 11), np.complex128, 8)
    close(la.cholesky(g(ctx, s)).get(), np.linalg.cholesky(s), np.complex128)
    close(la.inv(g(ctx, a)).get(), np.linalg.inv(a), np.complex128)
    b = rand((2, 11, 5), np.complex128, 1)
    close(la.solve(g(ctx, a), g(ctx, b)).get(), np.linalg.solve(a, b), np.complex128)
    lu, piv = la.lu_factor(g(ctx, a))
    monkeypatch.setitem(factorizations.BLOCK, "cpu", 64)
    monkeypatch.setitem(factorizations.BLOCK, "gpu", 64)
    want_lu, want_piv = la.lu_factor(g(ctx, a))
    assert np.array_equal(piv.get(), want_piv.get())
    close(lu.get(), want_lu.get(), np.complex128)
    bad = a.copy()
    bad[1, :, 6] = 0
    with pytest.raises(np.linalg.LinAlgError, match=r"U\[6, 6\].*\(1,\)"):
        la.inv(g(ctx, bad))
    monkeypatch.setitem(factorizations.BLOCK, "cpu", 4)
    monkeypatch.setitem(factorizations.BLOCK, "gpu", 4)
    with pytest.raises(np.linalg.LinAlgError, match=r"U\[6, 6\].*\(1,\)"):
        la.inv(g(ctx, bad))
    q, r = la.qr(g(ctx, a[:, :, :7]), mode="complete")
    assert rel(norm2(q.get() @ r.get() - a[:, :, :7]), norm2(a)) < 1e-13


def lu_pivots(a):
    """LAPACK's partial pivoting (largest |re| + |im|, the first such row) in numpy."""
    a = np.array(a, dtype=np.complex128)
    piv = []
    for k in range(a.shape[0]):
        p = k + int(np.argmax(np.abs(a[k:, k].real) + np.abs(a[k:, k].imag)))
        piv.append(p)
        a[[k, p]] = a[[p, k]]
        if a[k, k] != 0:
            a[k + 1:, k] /= a[k, k]
            a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return piv


@pytest.fixture
def gpu_kernels(monkeypatch):
    """The GPU algorithms (work-group leaves, register-resident panels) on any device."""
    monkeypatch.setattr(factorizations, "device_class", lambda c: "gpu")


def check_gpu_algorithms(ctx, dt, n):
    a = rand((2, n, n), dt, n) + 2 * np.eye(n, dtype=dt)
    tol = 30 * n * eps(dt)
    s = spd((2, n, n), dt, 1)
    low = la.cholesky(g(ctx, s)).get()
    assert np.all(np.triu(low, 1) == 0)
    assert rel(norm2(low @ adj(low) - s), norm2(s)) < tol
    b = rand((2, n, 3), dt, 2)
    x = la.solve(g(ctx, a), g(ctx, b)).get()
    assert rel(norm2(a @ x - b), norm2(a) * norm2(x)) < tol
    ai = la.inv(g(ctx, a)).get()
    assert rel(norm2(a @ ai - np.eye(n)), norm2(a) * norm2(ai)) < tol
    assert la.lu_factor(g(ctx, a))[1].get()[1].tolist() == lu_pivots(a[1])
    for m, k in ((n + 9, n), (n - 9, n)):  # tall and wide
        aq = rand((2, m, k), dt, m)
        q, r = (y.get() for y in la.qr(g(ctx, aq)))
        assert rel(norm2(q @ r - aq), norm2(aq)) < tol
        assert rel(norm2(adj(q) @ q - np.eye(min(m, k))), 1) < tol
        assert np.all(np.tril(r, -1) == 0)


@pytest.mark.parametrize(("dt", "n"), [(np.float32, 150), (np.complex128, 130)])
def test_gpu_algorithms(ctx, gpu_kernels, dt, n):
    """Blocked Cholesky (potrf_leaf), LU (getrf_panel, trsm_tile, the pivots as one gather),
    QR (geqrf_panel, larft as a triangular solve) as GPUs run them."""
    need(ctx, dt)
    check_gpu_algorithms(ctx, dt, n)


def test_gpu_small_leaves_and_fallbacks(ctx, gpu_kernels, monkeypatch):
    """Leaves of 16 (larft of a wider panel by the recursive solve), blocks of 32 (LU's
    and Cholesky's outer panels and their trailing updates), Cholesky's panels by the
    diagonal blocks' inverses, then panels too tall for the registers (the recursive LU
    panel, the host's QR panels); failures found past the first block."""
    need(ctx, np.float64)
    sizes = factorizations._local_sizes
    monkeypatch.setattr(factorizations, "_local_sizes", lambda c, d: (16, 16, *sizes(c, d)[2:]))
    monkeypatch.setitem(factorizations.BLOCK, "gpu", 32)
    monkeypatch.setitem(factorizations.LU_OUTER, "gpu", 2)
    monkeypatch.setitem(factorizations.CHOL_OUTER, "gpu", 2)
    monkeypatch.setitem(factorizations.CHOL_TRSM, "gpu", False)  # L21 by the inverse
    check_gpu_algorithms(ctx, np.float64, 100)
    monkeypatch.setattr(factorizations, "PANEL_WORDS", 1)
    check_gpu_algorithms(ctx, np.float64, 100)
    a = rand((2, 100, 100), np.float64, 3)
    a[1, :, 70] = 0
    with pytest.raises(np.linalg.LinAlgError, match=r"U\[70, 70\].*\(1,\)"):
        la.inv(g(ctx, a))
    s = spd((100, 100), np.float64, 4)
    s[80, 80] = -1e3
    with pytest.raises(np.linalg.LinAlgError, match="order 81"):
        la.cholesky(g(ctx, s))


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_gpu_leaves_in_steps_of_several_columns(ctx, gpu_kernels, dt):
    """potrf_leaf and trsm_tile take LEAF_STEP columns (rows) a barrier: every size around
    a step, a last step part empty, a failure at each place of a step (and NaN), lower and
    upper, conjugated and unit triangles; potrf_panel (a blocked Cholesky's step) too."""
    need(ctx, dt)
    step = factorizations.LEAF_STEP
    for n in (1, 2, step - 1, step + 1, 2 * step + 2, 3 * step, 61):
        s = spd((2, n, n), dt, n)
        low = la.cholesky(g(ctx, s)).get()
        assert np.all(np.triu(low, 1) == 0)
        close(low, np.linalg.cholesky(s), dt, n)
        t = np.tril(rand((n, n), dt, n), -1) / n + np.diag(rand((n,), dt, 2) + 3)
        rhs = rand((2, n, 3), dt, 1)
        for lower, tri in ((True, t), (False, adj(t))):
            for trans in (0, 2):
                for unit in (False, True):
                    want = tri - np.diag(np.diagonal(tri)) + np.eye(n) if unit else tri
                    want = adj(want) if trans else want
                    got = la.solve_triangular(g(ctx, tri), g(ctx, rhs), lower=lower,
                                              trans=trans, unit_diagonal=unit).get()
                    close(got, np.linalg.solve(want, rhs), dt, n)
    for k in (2, step, step + 1, 2 * step - 1, 2 * step + 1):
        s = spd((3, 13, 13), dt, k)
        s[2, k, k] = -40
        with pytest.raises(np.linalg.LinAlgError, match=rf"order {k + 1}.*\(2,\)"):
            la.cholesky(g(ctx, s))
        s[2, k, k] = np.nan
        with pytest.raises(np.linalg.LinAlgError, match=rf"order {k + 1}.*\(2,\)"):
            la.cholesky(g(ctx, s))
    s = spd((2, 150, 150), dt, 7)  # blocked: potrf_panel, several work-groups a panel
    close(la.cholesky(g(ctx, s)).get(), np.linalg.cholesky(s), dt, 150)
    s[1, 101, 101] = -1e4
    with pytest.raises(np.linalg.LinAlgError, match=r"order 102.*\(1,\)"):
        la.cholesky(g(ctx, s))


@pytest.mark.parametrize("dt", DTYPES)
def test_small_systems_by_gauss_jordan(ctx, gpu_kernels, dt):
    """getri_gj and gesv_gj (GPUs' inverses and solves of matrices up to GJ_MAX): every row
    length of their builds, ragged batches (matrices sharing a work-group, a last group part
    empty), right-hand sides fewer and more than n, layouts, the singular matrix named, NaN
    propagated as numpy's LAPACK does."""
    need(ctx, dt)
    fits = factorizations.gauss_jordan_fits
    assert fits(ctx, 32, dt) and not fits(ctx, 33, dt) and not fits(ctx, 8, dt, 33)
    assert fits(ctx, 16, dt, 16) and fits(ctx, 32, dt, 2) == (np.dtype(dt).itemsize <= 8)
    for n, p, r in ((1, 3, 1), (2, 1, 5), (7, 17, 1), (8, 5, 3), (9, 2, 20), (17, 3, 17),
                    (32, 9, 2)):
        a = rand((p, n, n), dt, n) + 2 * np.eye(n, dtype=dt)
        ai = la.inv(g(ctx, a)).get()
        assert ai.dtype == dt and ai.shape == a.shape
        assert rel(norm2(a @ ai - np.eye(n)), norm2(a) * norm2(ai)) < 30 * n * eps(dt)
        close(ai, np.linalg.inv(a), dt, n)
        b = rand((p, n, r), dt, r)
        x = la.solve(g(ctx, a), g(ctx, b)).get()
        assert x.dtype == dt and x.shape == b.shape
        assert rel(norm2(a @ x - b), norm2(a) * norm2(x) + norm2(b)) < 30 * n * eps(dt)
    a = rand((2, 1, 6, 6), dt, 3) + 3 * np.eye(6, dtype=dt)
    for b in (rand((6,), dt, 4), rand((3, 6, 2), dt, 5)):  # a vector; broadcast batches
        close(la.solve(g(ctx, a), g(ctx, b)).get(), np.linalg.solve(a, b), dt, 10)
    base = rand((4, 20, 20), dt, 4) + 4 * np.eye(20, dtype=dt)
    big = g(ctx, base)
    for view, h in ((big[1:, 2:-1, 2:-1], base[1:, 2:-1, 2:-1]),
                    (big.swapaxes(1, 2), base.swapaxes(1, 2)), (big[::2, ::2, ::2],
                                                               base[::2, ::2, ::2])):
        close(la.inv(view).get(), np.linalg.inv(h), dt, 10)
    a = rand((2, 3, 12, 12), dt, 1)
    a[1, 2, :, 5] = 0
    a[0, 1, 4] = 0  # a zero row pivots last
    for f in (la.inv, lambda x: la.solve(x, g(ctx, np.ones(12, dt)))):
        with pytest.raises(np.linalg.LinAlgError, match=r"Singular matrix: U\[11, 11\].*"
                                                        r"\(0, 1\)\); 2 of 6"):
            f(g(ctx, a))
    assert np.isnan(la.inv(g(ctx, np.full((2, 3, 3), np.nan, dt))).get()).all()


def test_lu_panels_across_work_groups(ctx, gpu_kernels, monkeypatch):
    """getrf_grid, the LU panel whose rows several work-groups share: with one work-group
    (portable leaders) on any device, and on NVIDIA GPUs as getrf chooses it (three to
    eight work-groups meeting at a barrier per column): LAPACK's pivots, the factors of
    getrf_panel, singular matrices flagged; then a solve (getrs by trsm_grid)."""
    grid = factorizations._grid
    nvidia = grid(ga.zeros((1, 200, 200), np.float32, context=ctx)) is not None
    for dt in (np.float32, np.complex128):
        if np.dtype(dt) == np.complex128 and not ctx.fp64:
            continue
        a = rand((1, 150, 150), dt, 5)
        a[0, :, 90] = 0
        if not nvidia:
            monkeypatch.setattr(factorizations, "_grid",
                                lambda x: grid(x, warp=1, rows=x.shape[1]))
        lu, piv = la.lu_factor(g(ctx, a))
        monkeypatch.setattr(factorizations, "_grid", lambda x: None)
        want_lu, want_piv = la.lu_factor(g(ctx, a))
        monkeypatch.setattr(factorizations, "_grid", grid)
        assert piv.get()[0].tolist() == want_piv.get()[0].tolist() == lu_pivots(a[0])
        close(lu.get(), want_lu.get(), dt)
        with pytest.raises(np.linalg.LinAlgError, match=r"U\[90, 90\]"):
            la.solve(g(ctx, a[0]), g(ctx, a[0, :, 0]))
        a[0, :, 90] = 1  # one matrix, n > the leaves: trsm_grid (one work-group elsewhere)
        if not nvidia:
            monkeypatch.setattr(factorizations, "_trsm_groups", lambda c, nblk: 1)
            monkeypatch.setattr(factorizations, "_grid",
                                lambda x: grid(x, warp=1, rows=x.shape[1]))
        lu, piv, info = g(ctx, a), ga.empty((1, 150), np.int32, context=ctx), ga.zeros(
            (1,), np.int32, context=ctx)
        order = factorizations.getrf(lu, piv, info).get()  # the rows' order, kept by the panels
        perm = np.arange(150)
        for k, p in enumerate(piv.get()[0]):
            perm[[k, p]] = perm[[p, k]]
        assert order[0].tolist() == perm.tolist()
        assert order[1].tolist() == np.argsort(perm).tolist()
        b = rand((150, 3), dt, 6)
        x = la.solve(g(ctx, a[0]), g(ctx, b)).get()
        assert rel(norm2(a[0] @ x - b), norm2(a[0]) * norm2(x)) < 30 * 150 * eps(dt)
        ai = la.inv(g(ctx, a[0])).get()
        assert rel(norm2(a[0] @ ai - np.eye(150)), norm2(a[0]) * norm2(ai)) < 30 * 150 * eps(dt)


@pytest.mark.parametrize("groups", [1, 2])
def test_triangular_solves_by_flags(ctx, gpu_kernels, monkeypatch, groups):
    """trsm_grid: each block of rows waits for the blocks it needs by their flags; one
    work-group (all blocks in turn) and two (blocks dealt round-robin, waiting on each
    other: PoCL runs both at once on two cores), lower and upper, ragged last block, one
    and several right-hand sides."""
    if groups > 1 and "Intel" in ctx.device.platform:
        pytest.skip("Intel's CPU runtime crashes running work-groups that wait on each other")
    monkeypatch.setattr(factorizations, "_trsm_groups", lambda c, nblk: groups)
    for dt, n, r in ((np.float32, 150, 1), (np.float32, 200, 5), (np.complex128, 130, 16)):
        if dt == np.complex128 and not ctx.fp64:
            continue
        a = rand((n, n), dt, n) + 3 * np.eye(n, dtype=dt)
        b = rand((n, r), dt, 7)
        x = la.solve(g(ctx, a), g(ctx, b)).get()
        assert rel(norm2(a @ x - b), norm2(a) * norm2(x)) < 30 * n * eps(dt), (dt, n, r)


def test_grid_kernels_give_up_rather_than_hang(ctx, gpu_kernels, monkeypatch):
    """getrf_grid with more work-groups than a CPU runs at once (its threads): each barrier
    gives up after its polls and the call raises DeviceTimeout, or, where they all ran, the
    factors are right; never a hang or wrong data."""
    if "Intel" in ctx.device.platform:
        pytest.skip("Intel's CPU runtime crashes running work-groups that wait on each other")
    grid = factorizations._grid
    a = rand((70, 70), np.float32, 4)
    for rows in (4, 36):  # 18 work-groups; 2 (PoCL's threads on 2 cores: all at once)
        monkeypatch.setattr(factorizations, "_grid", lambda x, qr=False, r=rows: not qr and
                            grid(x, warp=1, rows=r))
        try:
            lu, piv = la.lu_factor(g(ctx, a))
        except errors.DeviceTimeout as e:
            assert "did not all run" in str(e) and "GRID = False" in str(e)
            continue
        assert piv.get().tolist() == lu_pivots(a)
        low = np.tril(lu.get(), -1) + np.eye(70)
        pa = a.copy()
        for k, p in enumerate(piv.get()):
            pa[[k, p]] = pa[[p, k]]
        assert rel(norm2(low @ np.triu(lu.get()) - pa), norm2(a)) < 1e-4


def test_handoffs_between_work_groups_fence_the_device(ctx):
    """NVIDIA only (its programs' binaries are PTX): the kernels whose work-groups hand data
    to each other order it at the device's scope: the one-launch reduction, where the last
    group reads the others' partials, by fences; the grid kernels by release and acquire
    operations (compute capability 7 on), else fences. mem_fence compiles there to
    membar.cta, which orders nothing for other multiprocessors."""
    if ctx.device.nv_capability is None:
        pytest.skip("PTX binaries: NVIDIA GPUs only")

    def ptx(key):
        return ctx.programs[key].get_info(cl.program_info.BINARIES)[0].decode()

    float(ga.asarray(np.ones(1 << 22, np.float32), context=ctx).sum())  # several parts
    keys = [k for k in list(ctx.programs) if k[0] == "reduce" and "atom." in ptx(k)]
    assert keys  # (more than one where earlier tests reduced other dtypes in one launch)
    for name, shape in (("getrf_grid", dict(pw=64, rw=64, warp=32)),
                        ("trsm_grid", dict(pw=64, rc=32, lc=16)),
                        ("geqrf_grid", dict(pw=64, rw=64, warp=1)),
                        ("sytrd_grid", dict(mc=1, rows=16, rch=16, rb=4))):
        factorizations._grid_kernel(ctx, name, np.dtype(np.float32), **shape)
        keys.append(("linalg-grid", name, "float32", *sorted(shape.items())))
    acqrel = ctx.device.nv_capability >= (7, 0)
    for key in keys:
        code = ptx(key)
        assert "membar.cta" not in code, key
        if acqrel and key[0] == "linalg-grid":
            assert "red.release.gpu" in code and "ld.acquire.gpu" in code, key
        else:
            assert ("fence.acq_rel.gpu" if acqrel else "membar.gl") in code, key


def test_qr_panels_across_work_groups(ctx, gpu_kernels, monkeypatch):
    """geqrf_grid, the QR panel whose rows several work-groups share (one work-group off
    NVIDIA GPUs): Q R = A, Q orthonormal, R as geqrf_panel's; tall and wide, a zero
    column."""
    grid = factorizations._grid
    nvidia = grid(ga.zeros((1, 200, 200), np.float32, context=ctx), qr=True) is not None
    if not nvidia:
        monkeypatch.setattr(factorizations, "_grid", lambda x, qr=False: qr and grid(
            x, warp=1, rows=200, qr=True))  # (one build serves the three shapes)
    for dt in (np.float32, np.complex128):
        if np.dtype(dt) == np.complex128 and not ctx.fp64:
            continue
        for m, n in ((150, 150), (200, 70), (70, 130)):
            a = rand((m, n), dt, m + n)
            a[:, 3] = 0
            q, r = (y.get() for y in la.qr(g(ctx, a)))
            tol = 30 * max(m, n) * eps(dt)
            assert rel(norm2(q @ r - a), norm2(a)) < tol
            assert rel(norm2(adj(q) @ q - np.eye(min(m, n))), 1) < tol
            with monkeypatch.context() as plain:
                plain.setattr(factorizations, "_grid", lambda x, qr=False: None)
                want = la.qr(g(ctx, a), mode="r").get()
            close(r, want, dt)


# ---------------------------------------------------------------- errors and dispatch

def test_errors(ctx):
    sq = g(ctx, np.eye(3, dtype=np.float32))
    with pytest.raises(np.linalg.LinAlgError, match=r"square.*\(3, 2\)"):
        la.inv(sq[:, :2])
    with pytest.raises(errors.LinAlgError, match="1-dimensional"):
        la.cholesky(sq[0])
    with pytest.raises(TypeError, match="float16"):
        la.solve(sq.astype(np.float16), sq)
    with pytest.raises(ValueError, match="UPLO"):
        la.eigh(sq, UPLO="X")
    with pytest.raises(ValueError, match="trans"):
        la.solve_triangular(sq, sq, trans=5)
    assert issubclass(errors.LinAlgError, errors.GpuArrayError)


def test_numpy_dispatch(ctx):
    a = g(ctx, spd((4, 4), np.float64, 1))
    got = np.linalg.inv(a)
    assert isinstance(got, ga.GpuArray)
    close(got.get(), np.linalg.inv(a.get()), np.float64)
    assert isinstance(np.linalg.cholesky(a), ga.GpuArray)
    assert la.NOT_YET == ()


def swapped(a, piv, base=0, reverse=False, skip=(0, 0)):
    """numpy: the row swaps k <-> piv[k] - base of a (r, c), in order (last first with
    `reverse`), the columns in [skip[0], skip[1]) left as they are."""
    out = a.copy()
    for k in range(len(piv))[::-1] if reverse else range(len(piv)):
        p = piv[k] - base
        out[[k, p], :] = out[[p, k], :]
    out[:, skip[0]:skip[1]] = a[:, skip[0]:skip[1]]
    return out


@pytest.mark.parametrize("cls", ["cpu", "gpu"])
def test_row_swaps(ctx, cls, monkeypatch):
    """laswp (CPUs: a swap at a time) and laswp_group (GPUs: a column's moves at once) against
    numpy: pivots inside and past the block, repeated ones, no-ops, last first, skipped
    columns, a batch with strides, npiv past laswp_group's SWAPS."""
    monkeypatch.setattr(factorizations, "device_class", lambda c: cls)
    rng = np.random.default_rng(17)
    sc = factorizations._local_sizes(ctx, np.dtype(np.float64))[4]
    for npiv, rows, cols, base, reverse, skip in (
            (1, 5, 3, 0, False, (0, 0)), (7, 40, 2 * sc + 3, 0, False, (0, 0)),
            (64, 200, sc + 1, 10, True, (0, 0)), (64, 130, 70, 0, False, (5, 9)),
            (65, 140, 9, 0, False, (0, 0)), (30, 31, 33, 3, True, (30, 33))):
        h = rng.standard_normal((2, rows, cols))
        piv = np.stack([base + k + rng.integers(0, rows - k, npiv) for k in range(2)])
        piv[:, :npiv] = np.maximum(piv[:, :npiv], base + np.arange(npiv))  # as getrf's
        piv[1, npiv // 2:] = piv[1, 0]  # repeats (a row swapped in several times)
        piv[0, ::3] = base + np.arange(npiv)[::3]  # no-ops
        piv = np.minimum(piv, base + rows - 1).astype(np.int32)
        a = ga.asarray(h, context=ctx)[:, ::1, :]
        factorizations.laswp(a, ga.asarray(piv, context=ctx), base, reverse, skip)
        for q in range(2):
            want = swapped(h[q], piv[q], base, reverse, skip)
            np.testing.assert_array_equal(a.get()[q], want, err_msg=f"{npiv} {q}")
    # complex128 (fewer columns a work-group) and a transposed view
    hc = (rng.standard_normal((1, 90, 50)) + 1j * rng.standard_normal((1, 90, 50)))
    piv = (np.arange(40) + rng.integers(0, 50, 40)).astype(np.int32)[None]
    a = ga.asarray(hc.transpose(0, 2, 1).copy(), context=ctx).swapaxes(1, 2)
    factorizations.laswp(a, ga.asarray(piv, context=ctx))
    np.testing.assert_array_equal(a.get()[0], swapped(hc[0], piv[0]))


@pytest.mark.parametrize("cls", ["cpu", "gpu"])
def test_both_kernel_families(ctx, cls, monkeypatch):
    """The work-group kernels (GPUs) and the work-item ones (CPUs) on any device."""
    monkeypatch.setattr(factorizations, "device_class", lambda c: cls)
    a = rand((40, 12, 12), np.float64, 3) + 2 * np.eye(12)
    s = spd((40, 12, 12), np.complex64, 4)
    close(la.inv(g(ctx, a)).get(), np.linalg.inv(a), np.float64, 10)
    close(la.cholesky(g(ctx, s)).get(), np.linalg.cholesky(s), np.complex64)
    big = rand((80, 80), np.float32, 5) + 9 * np.eye(80, dtype=np.float32)
    close(la.inv(g(ctx, big)).get(), np.linalg.inv(big), np.float32, 10)
    close(la.cholesky(g(ctx, spd((80, 80), np.float32, 6))).get(),
          np.linalg.cholesky(spd((80, 80), np.float32, 6)), np.float32, 10)
    bad = a.copy()
    bad[7, :, 3] = 0
    with pytest.raises(np.linalg.LinAlgError, match=r"U\[3, 3\].*\(7,\)"):
        la.inv(g(ctx, bad))
