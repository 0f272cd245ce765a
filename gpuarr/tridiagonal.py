"""Hermitian eigenproblems of one large matrix through the tridiagonal form, LAPACK's
syevx way on the device: Householder tridiagonalization (factorizations.sytrd, one grid
kernel), the tridiagonal matrix's eigenvalues by multisection (Sturm counts) and its
eigenvectors by inverse iteration (kernels/tridiagonal.cl.mako, in float64 where the device
has it), made orthogonal to working precision by Newton-Schulz steps (GEMMs), then Q applied
by blocks of reflectors (GEMMs).

Inverse iteration keeps vectors orthogonal to about eps ||T|| / gap: eigenvalues that close
to each other (a cluster) would need the vectors reorthogonalized among themselves (LAPACK's
stein); here such a matrix is refused (None) and the caller takes another algorithm.
"""

import math

import numpy as np

from . import blas, factorizations, reduction
from .base import empty, to_device
from .kernels import get_program, kernel_from
from .launch import enqueue
from .ufuncs import UFUNCS

__all__ = ["eigh", "eigh_tridiagonal", "fits"]

# stebz: work-group size, points a round per eigenvalue (the bracket shrinks POINTS + 1 fold).
STEBZ_LOCAL = 256
STEBZ_POINTS = 32
# Newton-Schulz steps at most; their start needs max |Z^T Z - I| below ORTH_START (past it
# the eigenvalues form clusters the vectors do not resolve).
ORTH_STEPS = 4
ORTH_START = 0.05


def fits(ctx, n, dtype):
    """The sytrd_fits of an n x n matrix of dtype on ctx, or None (this route does not
    apply)."""
    return factorizations.sytrd_fits(ctx, n, np.dtype(dtype))


def _working(ctx):
    return np.dtype(np.float64 if ctx.fp64 else np.float32)


def _kernels(ctx, wdt):
    key = ("tridiagonal", wdt.name, STEBZ_LOCAL, STEBZ_POINTS)
    stebz = ctx.kernels.get((*key, "stebz"))
    if stebz is None:
        program = get_program(ctx, key, "tridiagonal.cl.mako",
                              wtype="double" if wdt.itemsize == 8 else "float",
                              ls=STEBZ_LOCAL, pts=STEBZ_POINTS)
        stebz = kernel_from(ctx, (*key, "stebz"), program, "stebz",
                            [np.int32, np.int32, None, None] + [wdt] * 5 + [None])
        kernel_from(ctx, (*key, "stein"), program, "stein",
                    [np.int32, None, None, None, wdt, None, None])
    return stebz, ctx.kernels[(*key, "stein")]


def eigh_tridiagonal(d, e, vectors=True, eps=None):
    """(w, z) of the real symmetric tridiagonal matrix of diagonal d (n,) and off-diagonal e
    (n - 1,) (device arrays): the eigenvalues ascending, to ~eps relative (or eps ||T||;
    default: the working type's), and the eigenvectors as z's columns (None without
    `vectors`), in float64 where the device has it, else float32. The vectors are inverse
    iteration's: see the module's note on clusters."""
    ctx = d.context
    wdt = _working(ctx)
    n = d.shape[0]
    dh, eh = d.get().astype(np.float64), e.get().astype(np.float64)
    radius = np.abs(np.concatenate([eh, [0]])) + np.abs(np.concatenate([[0], eh]))
    tnorm = float(np.max(np.abs(dh) + radius)) if n else 0.0
    eps = max(float(np.finfo(wdt).eps), eps or 0)
    tiny = float(np.finfo(wdt).tiny)
    pivmin = tiny * max(1.0, float(np.max(eh * eh)) if n > 1 else 1.0)
    pad = 2 * eps * tnorm + 4 * pivmin
    lo, hi = float(np.min(dh - radius)) - pad, float(np.max(dh + radius)) + pad
    abstol = 2 * eps * max(tnorm, tiny)
    rounds = 2 + max(0, math.ceil(math.log((hi - lo) / abstol) / math.log(STEBZ_POINTS + 1)))
    stebz, stein = _kernels(ctx, wdt)
    dw, ew2 = to_device(dh.astype(wdt), ctx), to_device((eh * eh).astype(wdt), ctx)
    w = empty((n,), wdt, context=ctx)
    items = -(-n * STEBZ_POINTS // STEBZ_LOCAL) * STEBZ_LOCAL
    enqueue(ctx, stebz, (items,), (STEBZ_LOCAL,),
            [n, rounds, dw.storage, ew2.storage, lo, hi, pivmin, abstol, 2 * eps, w.storage],
            (dw.storage, ew2.storage), (w.storage,))
    if not vectors:
        return w, None
    ew = to_device(eh.astype(wdt), ctx)
    z = empty((n, n), wdt, context=ctx)
    work = empty((5 * n * n,), wdt, context=ctx)
    enqueue(ctx, stein, (n,), None,
            [n, dw.storage, ew.storage, w.storage, np.finfo(wdt).eps * max(tnorm, tiny),
             work.storage,
             z.storage], (dw.storage, ew.storage, w.storage), (work.storage, z.storage))
    return w, z


def _orthogonalized(z, target):
    """z (n, n) with orthonormal columns by Newton-Schulz steps Z (3 I - Z^T Z) / 2 until
    max |Z^T Z - I| <= target; None where it starts past ORTH_START or does not get there."""
    n = z.shape[0]
    eye = to_device(np.eye(n, dtype=z.dtype), z.context)
    for _ in range(ORTH_STEPS + 1):
        gram = blas.matmul(z.T, z)
        dev = UFUNCS["subtract"](gram, eye)
        worst = float(reduction.max(UFUNCS["absolute"](dev), None, keepdims=False).get())
        if worst <= target:
            return z
        if not worst < ORTH_START:
            return None
        z = blas.matmul(z, UFUNCS["subtract"](eye, UFUNCS["multiply"](dev, 0.5)))
    return None


def _apply_q(vt, tau, z):
    """Q z in place for Q = H0 H1 ... H(n-2) of sytrd (reflector k row k of vt), by blocks
    of block_size reflectors, the last block first."""
    m = vt.shape[0]
    nb = factorizations.block_size(z.context)
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
    """(w, v) of the Hermitian (n, n) contiguous array `a` (both triangles; overwritten;
    max |a| near 1: the caller scales), `fit` from fits(): eigenvalues ascending (real
    dtype of a) and the eigenvectors as v's columns (None without `vectors`); None where
    the vectors of clustered eigenvalues would not be orthogonal."""
    dt = a.dtype
    real = np.finfo(dt).dtype
    d, e, tau, vt = factorizations.sytrd(a, fit)
    w, z = eigh_tridiagonal(d, e, vectors, float(np.finfo(real).eps))
    if not vectors:
        return w.astype(real), None
    n = a.shape[0]
    z = _orthogonalized(z, 4 * n * float(np.finfo(z.dtype).eps))
    if z is None:
        return None
    v = z.astype(dt)
    if n > 1:
        _apply_q(vt, tau, v)
    return w.astype(real), v
