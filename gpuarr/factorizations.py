"""Dense factorizations on the device: Cholesky, LU with partial pivoting, triangular solves,
inverse, Householder QR, on batches of matrices (p, m, n).

Small matrices (n <= the block size) take one kernel launch for the whole batch
(kernels/linalg.cl.mako): one work-group per matrix on GPUs, one work-item per matrix on CPUs.
Larger ones run blocked, LAPACK's right-looking way: the diagonal block or panel is factored
by the same kernels (LU: recursive halves down to leaves; QR: by the host's LAPACK through
numpy, the MAGMA way), the off-diagonal blocks as GEMMs with the diagonal block's inverse,
and the trailing updates, where the O(n^3) flops are, by blas.gemm_into. Failures (a
non-positive pivot, a zero pivot) are flagged on the device, one int per matrix, read back
once by the caller.
"""

import numpy as np

from . import blas
from .base import empty, to_device, zeros
from .kernels import get_program, kernel_from
from .launch import enqueue
from .reduction import device_class
from .ufuncs import UFUNCS

__all__ = ["apply_block", "block_size", "geqrf", "getrf", "getri", "getrs", "identity",
           "jacobi_max", "laswp", "orgqr", "potrf", "syevj", "syrk_lower", "trsm"]

# Block sizes (columns of a panel) by device class; matrices up to this size take one launch.
BLOCK = {"gpu": 64, "cpu": 64}
# Columns of the LU panel's leaves (the one-work-group kernel); wider panels split in halves.
PANEL_LEAF = 16
# Hermitian eigenproblems up to this size run cyclic Jacobi on the device (one work-item per
# matrix), larger ones numpy's LAPACK on the host. CPU: measured against numpy (0.5-2x at
# 8-32); GPU: unmeasured, kept small (a work-item's matrix should stay in cache).
JACOBI_MAX = {"gpu": 16, "cpu": 32}
# Work-group size of the one-matrix kernels.
LOCAL = {"gpu": 256, "cpu": 32}
# Whether a small matrix (and Cholesky's diagonal blocks) takes one work-item rather than a
# work-group: on CPUs the barriers cost more than the parallelism gains.
PER_ITEM = {"gpu": False, "cpu": True}
_I32 = np.int32
_I64 = np.int64


def block_size(ctx):
    return BLOCK[device_class(ctx)]


def jacobi_max(ctx):
    return JACOBI_MAX[device_class(ctx)]


def _kernel(ctx, name, dtype):
    ls = LOCAL[device_class(ctx)]
    mat = [None, _I64, _I64, _I64, _I64]
    types = {"potrf": [_I32, _I32, _I32, *mat, None],
             "getrf": [_I32, _I32, _I32, *mat, None, _I64, _I64, None],
             "laswp": [_I32, _I32, _I32, _I32, *mat, None, _I64, _I64],
             "potrf1": [_I32, _I32, _I32, _I32, *mat, None],
             "getrs1": [_I32, _I32, _I32, *mat, None, _I64, _I64, *mat],
             "getrf1": [_I32, _I32, _I32, _I32, *mat, None, _I64, _I64, None],
             "syevj1": [_I32, _I32, _I32, *mat, *mat, None, _I64, _I64],
             "trsm": [_I32] * 5 + mat + mat}[name]
    key = ("linalg", name, dtype.name, ls)
    kernel = ctx.kernels.get(key)
    if kernel is None:  # one program per dtype holds every kernel: one build
        program = get_program(ctx, ("linalg", dtype.name, ls), "linalg.cl.mako",
                              dtype=dtype.name, ls=ls)
        kernel = kernel_from(ctx, key, program, name, types)
    return kernel, ls


def _mat(x):
    """A 3-d array's kernel arguments: storage, element offset, batch/row/column strides."""
    item = x.itemsize
    return [x.storage, x.offset // item, *(s // item for s in x.strides)]


def _columns(n, ls):
    return -(-max(n, 1) // ls) * ls


def potrf(a, info, base=0):
    """In-place lower Cholesky of the (p, n, n) view `a` (the lower triangle is read and
    written; the upper is zeroed when n <= the block size, else keeps what it held);
    info[b] set at the first failure."""
    p, n = a.shape[0], a.shape[-1]
    if p == 0 or n == 0:
        return a
    ctx = a.context
    nb = block_size(ctx)
    one = PER_ITEM[device_class(ctx)]
    kernel, ls = _kernel(ctx, "potrf1" if one else "potrf", a.dtype)
    for k in range(0, n, nb):
        e = min(k + nb, n)
        diag = a[:, k:e, k:e]
        clean = int(n <= nb)
        if one:
            enqueue(ctx, kernel, (_columns(p, ls),), (ls,),
                    [p, e - k, base + k, clean, *_mat(diag), info.storage], (),
                    (a.storage, info.storage))
        else:
            enqueue(ctx, kernel, (ls * p,), (ls,),
                    [e - k, base + k, clean, *_mat(diag), info.storage], (),
                    (a.storage, info.storage))
        if e < n:
            # L21 = A21 L11^-H as a GEMM with the inverse of the diagonal block (MAGMA's
            # way: a substitution along A21's rows would read it across, uncoalesced)
            below = a[:, e:, k:e]
            inverse = trsm(diag, identity(p, e - k, a.dtype, ctx), lower=True)
            l21 = empty(below.shape, a.dtype, context=ctx)
            blas.gemm_into(1, below, _adjoint(inverse), 0, l21)
            below._assign(l21)
            syrk_lower(-1, l21, a[:, e:, e:])
    return a


def identity(p, n, dtype, ctx):
    """p identity matrices (p, n, n)."""
    eye = zeros((p, n, n), dtype, context=ctx)
    st = eye.strides
    eye._view((p, n), (st[0], st[1] + st[2])).fill(1)
    return eye


def _adjoint(x):
    """x^H as a GEMM operand: a transposed view (real), a conjugated copy (complex)."""
    t = x.swapaxes(-1, -2)
    return UFUNCS["conjugate"](t) if x.dtype.kind == "c" else t


def syrk_lower(alpha, x, c, depth=3):
    """c += alpha x x^H on the lower triangle of c (its upper triangle gets some of it too):
    split in halves `depth` times, the off-diagonal blocks as GEMMs."""
    m = c.shape[-1]
    if depth == 0 or m <= 128:
        blas.gemm_into(alpha, x, _adjoint(x), 1, c)
        return
    h = m // 2
    syrk_lower(alpha, x[:, :h], c[:, :h, :h], depth - 1)
    blas.gemm_into(alpha, x[:, h:], _adjoint(x[:, :h]), 1, c[:, h:, :h])
    syrk_lower(alpha, x[:, h:], c[:, h:, h:], depth - 1)


def getrf(a, piv, info):
    """In-place LU with partial pivoting of the (p, m, n) view `a`; piv (p, min(m, n)) int32
    gets LAPACK's pivots (0-based): row k was swapped with row piv[k], in order."""
    p, m, n = a.shape
    kmin = min(m, n)
    if p == 0 or kmin == 0:
        return a
    ctx = a.context
    nb = block_size(ctx)
    if n <= nb and m <= nb:  # one launch for the batch
        _panel(a, piv, info, 0, leaf=n)
        return a
    for k in range(0, kmin, nb):
        e = min(k + nb, kmin)
        pk = piv[:, k:e]
        _panel(a[:, k:, k:e], pk, info, k)
        if k:
            laswp(a[:, k:, :k], pk, k)
        if e < n:
            laswp(a[:, k:, e:], pk, k)
            # U12 = L11^-1 A12 as a GEMM with L11's inverse (unit lower, |l| <= 1 by the
            # pivoting: MAGMA's way; the substitution kernel runs one column per work-item)
            inverse = trsm(a[:, k:e, k:e], identity(p, e - k, a.dtype, ctx), lower=True,
                           unit=True)
            u12 = a[:, k:e, e:]
            product = empty(u12.shape, a.dtype, context=ctx)
            u12._assign(blas.gemm_into(1, inverse, u12, 0, product))
            if e < m:
                blas.gemm_into(-1, a[:, e:, k:e], a[:, k:e, e:], 1, a[:, e:, e:])
    return a


def _panel(a, piv, info, base, leaf=None):
    """LU of the panel `a` (p, rows, w), rows >= w, whose first row and column are row and
    column `base` of the matrix: recursive halves (LAPACK's getrf2), the leaves (PANEL_LEAF
    columns, or `leaf`) by the one-matrix kernel, the rest triangular solves and GEMMs."""
    p, m, w = a.shape
    if w <= (leaf or PANEL_LEAF):
        ctx = a.context
        item = piv.itemsize
        tail = [*_mat(a), piv.storage, piv.offset // item, piv.strides[0] // item, info.storage]
        if PER_ITEM[device_class(ctx)]:
            kernel, ls = _kernel(ctx, "getrf1", a.dtype)
            enqueue(ctx, kernel, (_columns(p, ls),), (ls,), [p, m, w, base, *tail], (),
                    (a.storage, piv.storage, info.storage))
        else:
            kernel, ls = _kernel(ctx, "getrf", a.dtype)
            enqueue(ctx, kernel, (ls * p,), (ls,), [m, w, base, *tail], (),
                    (a.storage, piv.storage, info.storage))
        return
    h = w // 2
    _panel(a[:, :, :h], piv[:, :h], info, base)
    right = a[:, :, h:]
    laswp(right, piv[:, :h], base)
    trsm(a[:, :h, :h], right[:, :h], lower=True, unit=True)
    blas.gemm_into(-1, a[:, h:, :h], right[:, :h], 1, right[:, h:])
    _panel(right[:, h:], piv[:, h:], info, base + h)
    laswp(a[:, h:, :h], piv[:, h:], base + h)


def laswp(b, piv, rows_base=0, reverse=False):
    """The row swaps of piv (p, k) (rows numbered from rows_base) applied to b (p, r, c), in
    order or, with `reverse`, last first."""
    p, _, c = b.shape
    if p == 0 or c == 0 or piv.shape[1] == 0:
        return b
    ctx = b.context
    kernel, ls = _kernel(ctx, "laswp", b.dtype)
    ls = min(ls, -(-c // 32) * 32)
    item = piv.itemsize
    enqueue(ctx, kernel, (_columns(c, ls), p), (ls, 1),
            [rows_base, piv.shape[1], c, int(reverse), *_mat(b), piv.storage, piv.offset // item,
             piv.strides[0] // item], (piv.storage,), (b.storage,))
    return b


def trsm(t, b, lower, unit=False, conj_t=False):
    """b = t^-1 b in place (t: (p or 1, n, n) lower or upper triangular, b: (p, n, r));
    conj_t: conj(t). Blocked for n above the block size: the diagonal blocks by the kernel,
    the rest as GEMMs."""
    p, n, r = b.shape
    if p == 0 or n == 0 or r == 0:
        return b
    ctx = b.context
    nb = block_size(ctx)
    if t.shape[0] != p:
        t = t._view((p, n, n), (0, *t.strides[1:]))
    if n > nb:
        order = range(0, n, nb) if lower else reversed(range(0, n, nb))
        for k in order:
            e = min(k + nb, n)
            trsm(t[:, k:e, k:e], b[:, k:e], lower, unit, conj_t)
            rest = slice(e, n) if lower else slice(0, k)
            if rest.start < rest.stop:
                tk = t[:, rest, k:e]
                if conj_t and t.dtype.kind == "c":
                    tk = UFUNCS["conjugate"](tk)
                blas.gemm_into(-1, tk, b[:, k:e], 1, b[:, rest])
        return b
    kernel, ls = _kernel(ctx, "trsm", b.dtype)
    ls = min(ls, -(-r // 32) * 32)  # few right-hand sides: narrow work-groups, more of them
    enqueue(ctx, kernel, (_columns(r, ls), p), (ls, 1),
            [n, r, int(lower), int(unit), int(conj_t), *_mat(t), *_mat(b)],
            (t.storage,), (b.storage,))
    return b


def getrs(lu, piv, b):
    """b = A^-1 b in place from A's LU factors (getrf's lu and piv); b: (p, n, r)."""
    p, n, r = b.shape
    ctx = b.context
    if PER_ITEM[device_class(ctx)] and n <= block_size(ctx) and p * r:
        kernel, ls = _kernel(ctx, "getrs1", b.dtype)
        item = piv.itemsize
        enqueue(ctx, kernel, (_columns(p, ls),), (ls,),
                [p, n, r, *_mat(lu), piv.storage, piv.offset // item, piv.strides[0] // item,
                 *_mat(b)], (lu.storage, piv.storage), (b.storage,))
        return b
    laswp(b, piv)
    trsm(lu, b, lower=True, unit=True)
    trsm(lu, b, lower=False)
    return b


def getri(lu, piv):
    """A^-1 from A's LU factors, LAPACK's way (~2 n^3 flops with the factorization, where
    solving with the identity takes ~2.7): inv(U) inv(L) P, the zeros of inv(L) skipped."""
    p, n, _ = lu.shape
    ctx = lu.context
    x = identity(p, n, lu.dtype, ctx)
    nb = block_size(ctx)
    if n <= nb or p == 0:
        return getrs(lu, piv, x)
    for k in range(0, n, nb):  # inv(L), lower triangular: block row k has columns < e
        e = min(k + nb, n)
        trsm(lu[:, k:e, k:e], x[:, k:e, :e], lower=True, unit=True)
        if e < n:
            blas.gemm_into(-1, lu[:, e:, k:e], x[:, k:e, :e], 1, x[:, e:, :e])
    trsm(lu, x, lower=False)
    return laswp(x.swapaxes(1, 2), piv, reverse=True).swapaxes(1, 2)


def syevj(a, upper=False):
    """(eigenvalues ascending (p, n), eigenvectors (p, n, n)) of the Hermitian matrices of
    the (p, n, n) array `a` (its lower triangle, or upper; `a` is overwritten): cyclic
    Jacobi until the off-diagonal mass is below eps^2 ||A||^2, one work-item per matrix."""
    p, n, _ = a.shape
    ctx = a.context
    real = np.dtype(a.dtype.char.lower()) if a.dtype.kind == "c" else a.dtype
    w = empty((p, n), real, context=ctx)
    v = empty((p, n, n), a.dtype, context=ctx)
    if p and n:
        kernel, ls = _kernel(ctx, "syevj1", a.dtype)
        ls = min(ls, 32)
        enqueue(ctx, kernel, (_columns(p, ls),), (ls,),
                [p, n, int(upper), *_mat(a), *_mat(v), w.storage, 0, n], (),
                (a.storage, v.storage, w.storage))
    return w, v


# ---------------------------------------------------------------- Householder QR

def _larft(v, tau):
    """LAPACK's larft (forward, columnwise) on the host: T (p, k, k) upper triangular with
    H1 H2 ... Hk = I - V T V^H, from the reflectors V (p, m, k) and their taus (p, k)."""
    p, _, k = v.shape
    t = np.zeros((p, k, k), v.dtype)
    gram = np.conj(v.swapaxes(1, 2)) @ v
    for i in range(k):
        t[:, i, i] = tau[:, i]
        if i:
            w = np.einsum("pij,pj->pi", t[:, :i, :i], gram[:, :i, i])
            t[:, :i, i] = -tau[:, i, None] * w
    return t


def _reflectors(h, rows):
    """V (p, rows, k) from numpy's raw QR output h (p, k, rows): unit lower trapezoidal."""
    v = np.tril(h.swapaxes(1, 2), -1)
    k = v.shape[2]
    v[:, np.arange(k), np.arange(k)] = 1
    return v


def geqrf(a):
    """In-place Householder QR of the (p, m, n) contiguous array `a`: R on and above the
    diagonal; returns the blocks [(k, V, T)] of reflectors (device arrays) whose product
    is Q. Panels are factored on the host (numpy's LAPACK), trailing updates are GEMMs."""
    p, m, n = a.shape
    kmin = min(m, n)
    ctx = a.context
    nb = block_size(ctx)
    blocks = []
    if p == 0:
        return blocks
    for k in range(0, kmin, nb):
        e = min(k + nb, kmin)
        panel = a[:, k:, k:e].get()
        h, tau = np.linalg.qr(panel, mode="raw")
        r = np.triu(h.swapaxes(1, 2))
        v = _reflectors(h, m - k)
        t = _larft(v, tau)
        # R of the panel into a, zeros below it (V is kept aside)
        a[:, k:, k:e] = r
        vd, td = to_device(v, ctx), to_device(t, ctx)
        blocks.append((k, vd, td))
        if e < n:
            c = a[:, k:, e:]
            vh = to_device(np.ascontiguousarray(np.conj(v.swapaxes(1, 2))), ctx)
            th = to_device(np.ascontiguousarray(np.conj(t.swapaxes(1, 2))), ctx)
            apply_block(vd, th, vh, c)
    return blocks


def apply_block(v, t, vh, c):
    """c = (I - V T V^H) c, three GEMMs (pass T^H for the adjoint reflector)."""
    p, _, k = v.shape
    w = empty((p, k, c.shape[2]), c.dtype, context=c.context)
    blas.gemm_into(1, vh, c, 0, w)
    w2 = empty(w.shape, c.dtype, context=c.context)
    blas.gemm_into(1, t, w, 0, w2)
    blas.gemm_into(-1, v, w2, 1, c)
    return c


def orgqr(blocks, p, m, cols, dtype, ctx):
    """Q[:, :, :cols] = H1 H2 ... Hk applied to the identity's first `cols` columns."""
    q = zeros((p, m, cols), dtype, context=ctx)
    if p == 0 or m == 0 or cols == 0:
        return q
    eye = np.zeros((m, cols), dtype)
    np.fill_diagonal(eye, 1)
    q.set(np.ascontiguousarray(np.broadcast_to(eye, (p, m, cols))))
    for k, v, t in reversed(blocks):
        vh = _adjoint(v).copy() if dtype.kind == "c" else v.swapaxes(1, 2)
        apply_block(v, t, vh, q[:, k:, k:])
    return q
