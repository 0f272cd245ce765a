"""Hermitian eigenproblems of one large matrix through the tridiagonal form, LAPACK's
syevx way on the device: Householder tridiagonalization (factorizations.sytrd, one grid
kernel), the tridiagonal matrix's eigenvalues by multisection (Sturm counts) and its
eigenvectors by inverse iteration (kernels/tridiagonal.cl.mako, in float64 where the device
has it), made orthogonal to working precision by a Newton-Schulz step (GEMMs), then Q
applied by blocks of reflectors (GEMMs).

Inverse iteration keeps vectors orthogonal to about eps ||T|| / gap: eigenvalues that close
to each other (a cluster) would need the vectors reorthogonalized among themselves (LAPACK's
stein); here such a matrix is refused (None) and the caller takes another algorithm.
"""

import math

import numpy as np

from . import blas, factorizations, reduction
from .base import empty
from .kernels import get_program, kernel_from
from .launch import enqueue
from .ufuncs import UFUNCS

__all__ = ["eigh", "eigh_tridiagonal"]

# stebz: work-group size, points a round per eigenvalue (the bracket shrinks POINTS + 1 fold).
STEBZ_LOCAL = 256
STEBZ_POINTS = 32


# Reflectors a block of Q's application (three GEMMs and T a block).
Q_BLOCK = 64


def _working(ctx):
    return np.dtype(np.float64 if ctx.fp64 else np.float32)


def _kernels(ctx, wdt):
    """(bounds, stebz, stein) of the working dtype wdt: one program."""
    key = ("tridiagonal", wdt.name, STEBZ_LOCAL, STEBZ_POINTS)
    names = ("bounds", "stebz", "stein")
    if (*key, names[0]) not in ctx.kernels:
        program = get_program(ctx, key, "tridiagonal.cl.mako",
                              wtype="double" if wdt.itemsize == 8 else "float",
                              ls=STEBZ_LOCAL, pts=STEBZ_POINTS)
        types = ([np.int32, None, None, wdt, None], [np.int32, np.int32, None, None, None, wdt,
                 None], [np.int32, None, None, None, None, None, None])
        for name, scalars in zip(names, types):
            kernel_from(ctx, (*key, name), program, name, scalars)
    return tuple(ctx.kernels[(*key, name)] for name in names)


def eigh_tridiagonal(d, e, vectors=True):
    """(w, z) of the real symmetric tridiagonal matrix of diagonal d (n,) and off-diagonal e
    (n - 1,) (device arrays): the eigenvalues ascending, to ~eps relative (or eps ||T||),
    and the eigenvectors as z's columns (None without `vectors`), in float64 where the
    device has it, else float32 (eps that type's). The vectors are inverse iteration's: see
    the module's note on clusters. Nothing waits for the device."""
    ctx = d.context
    wdt = _working(ctx)
    n = d.shape[0]
    eps = float(np.finfo(wdt).eps)
    bounds, stebz, stein = _kernels(ctx, wdt)
    dw, ew = d.astype(wdt), e.astype(wdt) if n > 1 else empty((1,), wdt, context=ctx)
    lim = empty((5,), wdt, context=ctx)
    w = empty((n,), wdt, context=ctx)
    if n == 0:
        return w, empty((0, 0), wdt, context=ctx) if vectors else None
    enqueue(ctx, bounds, (STEBZ_LOCAL,), (STEBZ_LOCAL,),
            [n, dw.storage, ew.storage, eps, lim.storage], (dw.storage, ew.storage),
            (lim.storage,))
    # the bracket starts at most ~||T|| / (eps ||T||) times the tolerance
    rounds = 3 + math.ceil(math.log(1 / eps) / math.log(STEBZ_POINTS + 1))
    items = -(-n * STEBZ_POINTS // STEBZ_LOCAL) * STEBZ_LOCAL
    enqueue(ctx, stebz, (items,), (STEBZ_LOCAL,),
            [n, rounds, dw.storage, ew.storage, lim.storage, 2 * eps, w.storage],
            (dw.storage, ew.storage, lim.storage), (w.storage,))
    if not vectors:
        return w, None
    z = empty((n, n), wdt, context=ctx)
    work = empty((5 * n * n,), wdt, context=ctx)
    enqueue(ctx, stein, (n,), None,
            [n, dw.storage, ew.storage, w.storage, lim.storage, work.storage, z.storage],
            (dw.storage, ew.storage, w.storage, lim.storage), (work.storage, z.storage))
    return w, z


def _orthogonalized(z):
    """(z with orthonormal columns, max |Z^T Z - I| before, a 0-d device array): one
    Newton-Schulz step Z (3 I - Z^T Z) / 2, which leaves ~1.5 max^2."""
    n = z.shape[0]
    eye = factorizations.identity(1, n, z.dtype, z.context)[0]  # (filled on the device)
    dev = UFUNCS["subtract"](blas.matmul(z.T, z), eye)
    worst = reduction.max(UFUNCS["absolute"](dev), None, keepdims=False)
    return UFUNCS["subtract"](z, UFUNCS["multiply"](blas.matmul(z, dev), 0.5)), worst


def _apply_q(vt, tau, z):
    """Q z in place for Q = H0 H1 ... H(n-2) of sytrd (reflector k row k of vt), by blocks
    of Q_BLOCK reflectors, the last block first."""
    m = vt.shape[0]
    nb = Q_BLOCK
    item = vt.itemsize
    for k0 in reversed(range(0, m, nb)):
        k1 = min(k0 + nb, m)
        rows = vt[k0:k1, k0 + 1:]
        w, r = rows.shape
        vh = rows._view((1, w, r), (0, *rows.strides))
        v = vh._view((1, r, w), (0, item, vt.strides[0]))
        if vt.dtype.kind == "c":
            vh = UFUNCS["conjugate"](vh)
        t = factorizations.block_t(v, vh, tau[k0:k1]._view((1, w), (0, item)))
        sub = z[k0 + 1:, :]
        factorizations.apply_block(v, t, vh, sub._view((1, *sub.shape), (0, *sub.strides)))
    return z


def eigh(a, fit, vectors=True):
    """(w, v) of the Hermitian (n, n) array `a` (both triangles), `fit` from
    factorizations.sytrd_fits: eigenvalues ascending (real dtype of a) and the eigenvectors
    as v's columns (None without `vectors`); None where a holds a NaN or an infinity, or the
    vectors of clustered eigenvalues would not be orthogonal. The device is waited for
    once, at the end."""
    dt = a.dtype
    real = np.finfo(dt).dtype
    n = a.shape[0]
    # a power of two near max |a|, on the device: no wait
    top = reduction.max(UFUNCS["absolute"](a), None, keepdims=False)
    scale = UFUNCS["exp2"](UFUNCS["floor"](UFUNCS["log2"](UFUNCS["maximum"](
        top, float(np.finfo(real).tiny)))))
    d, e, tau, vt, check = factorizations.sytrd(UFUNCS["true_divide"](a, scale), fit)
    # (eigenvalues to the working type's eps for float32 too: the shifts of inverse
    # iteration must resolve eigenvalues ~1 / n^2 apart, as the smallest of a a^T / n + I)
    w, z = eigh_tridiagonal(d, e, vectors)
    v = worst = None
    if vectors:
        z, worst = _orthogonalized(z)
        v = z.astype(dt)
        if n > 1:
            _apply_q(vt, tau, v)
    w = UFUNCS["multiply"](w.astype(real), scale.astype(real))
    check()
    # the vectors are taken where max |Z^T Z - I| <= sqrt(the output's eps) (the step then
    # leaves ~1.5 eps); past it the eigenvalues form clusters inverse iteration does not
    # resolve
    if not np.isfinite(float(top.get())) or (worst is not None and not float(
            worst.get()) <= np.sqrt(np.finfo(real).eps)):
        return None
    return w, v
