"""The Array API's linalg extension and numpy.linalg's names over gpuarr's kernels.

Products come from blas, norms from the reductions, diagonals from views; cholesky, solve,
inv, det, slogdet, qr and the building blocks (lu_factor, lu_solve, solve_triangular,
cho_solve) from gpuarr.factorizations, on the device; eigh and eigvalsh too for small
matrices (Jacobi). Larger eigh and every svd run numpy's LAPACK on the host (docs/linalg.md);
what builds on them (pinv, lstsq, matrix_rank, the 2 and nuclear norms, cond) does its
products on the device.
"""

import math
import numbers
import operator
from typing import NamedTuple

import numpy as np

from . import blas, factorizations, manipulation, reduction, tridiagonal
from .array_api import _pair, matrix_transpose, vecdot
from .base import ArrayBase, asarray, broadcast_to, empty, to_device, zeros
from .errors import ArgumentError, ArgumentTypeError, LinAlgError, ShapeError, UnsupportedError
from .ufuncs import UFUNCS, broadcast_shapes, real

NOT_YET = ()


def matmul(x1, x2, /):
    """The Array API's matmul: gpuarr.matmul (the @ operator)."""
    return blas.matmul(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    """The Array API's tensordot: the sum of products over `axes` (a count of trailing and
    leading axes, or two sequences of axes)."""
    return blas.tensordot(x1, x2, axes)


def outer(x1, x2, /):
    """The outer product of two 1-d arrays."""
    a, b = _pair(x1, x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"outer needs two 1-d arrays, got shapes {a.shape} and {b.shape}")
    return blas.outer(a, b)


def diagonal(x, /, *, offset=0):
    """A read-only view of the `offset` diagonal of each matrix (the last two axes)."""
    return manipulation.diagonal(_matrices(x, "diagonal"), offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    """The sum of the `offset` diagonal of each matrix (the last two axes)."""
    return manipulation.trace(_matrices(x, "trace"), offset, -2, -1, dtype)


def _matrices(x, name):
    x = asarray(x)
    if x.ndim < 2:
        raise ShapeError(f"{name} needs an array of at least 2 dimensions, got shape {x.shape}")
    return x


def cross(x1, x2, /, *, axis=-1):
    """Cross products of 3-vectors along `axis` (other axes broadcast)."""
    a, b = _pair(x1, x2)
    ndim = len(broadcast_shapes(a.shape, b.shape))
    for x in (a, b):
        if x.ndim == 0 or not -x.ndim <= axis < x.ndim or x.shape[axis] != 3:
            raise ShapeError(f"cross needs vectors of 3 elements along axis {axis}; got shapes "
                             f"{a.shape} and {b.shape}")
    a = manipulation.moveaxis(a, axis, -1)
    b = manipulation.moveaxis(b, axis, -1)
    mul, sub = UFUNCS["multiply"], UFUNCS["subtract"]
    parts = [sub(mul(a[..., i], b[..., j]), mul(a[..., j], b[..., i]))
             for i, j in ((1, 2), (2, 0), (0, 1))]
    return manipulation.moveaxis(manipulation.stack(parts, axis=-1), -1, axis % ndim)


def matrix_power(a, n):
    """a @ a @ ... (n times; n = 0 gives identities; n < 0: of the inverse) by repeated
    squaring."""
    x = _matrices(a, "matrix_power")
    try:
        n = operator.index(n)
    except TypeError:
        raise ArgumentTypeError(f"matrix_power: exponent must be an integer, not {n!r}") from None
    if x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"matrix_power needs square matrices, got shape {x.shape}")
    if n < 0:
        x, n = inv(x), -n
    if n == 0:
        eye = manipulation.eye(x.shape[-1], dtype=x.dtype, context=x.context)
        return broadcast_to(eye, x.shape).copy()
    result, square = None, x
    while True:
        if n & 1:
            result = square if result is None else blas.matmul(result, square)
        n >>= 1
        if not n:
            return result.copy() if result is x else result
        square = blas.matmul(square, square)


def _inexact(x):
    """Norms compute in floating point: integers and bools as float64 (as numpy), float32 on a
    device without float64."""
    if x.dtype.kind in "fc":
        return x
    return x.astype(np.float64 if x.context.fp64 else np.float32)


def _squares(x):
    """|x|^2, real."""
    if x.dtype.kind == "c":
        x = UFUNCS["absolute"](x)
    return UFUNCS["multiply"](x, x)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The `ord`-norm of the vectors along `axis` (all axes when None): inf (max |x|), -inf
    (min), 0 (count of nonzeros), 1, 2 and any other p (sum |x|^p)^(1/p)."""
    x = _inexact(asarray(x))
    if ord == 2:
        return UFUNCS["sqrt"](reduction.sum(_squares(x), axis, keepdims=keepdims))
    if ord == 0:
        count = reduction.count_nonzero(x, axis, keepdims)
        return count.astype(_real(x.dtype))
    if not isinstance(ord, numbers.Real):
        raise ArgumentError(f"vector_norm: invalid order {ord!r}; use a number, inf or -inf")
    a = UFUNCS["absolute"](x)
    if ord == math.inf:
        return reduction.max(a, axis, keepdims=keepdims)
    if ord == -math.inf:
        return reduction.min(a, axis, keepdims=keepdims)
    if ord == 1:
        return reduction.sum(a, axis, keepdims=keepdims)
    total = reduction.sum(UFUNCS["power"](a, float(ord)), axis, keepdims=keepdims)
    return UFUNCS["power"](total, 1.0 / ord)


def _real(dt):
    return np.dtype(np.float32 if dt == np.complex64 else np.float64 if dt.kind == "c" else dt)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The `ord`-norm of each matrix (the last two axes): 'fro', 1 / -1 (max / min column
    sum of |x|), inf / -inf (max / min row sum), 2 / -2 (largest / smallest singular value),
    'nuc' (their sum)."""
    x = _inexact(_matrices(x, "matrix_norm"))
    if isinstance(ord, str) and ord == "fro":
        return UFUNCS["sqrt"](reduction.sum(_squares(x), (-2, -1), keepdims=keepdims))
    if (isinstance(ord, str) and ord == "nuc") or (not isinstance(ord, str) and ord in (2, -2)):
        s = svdvals(x)
        pick = reduction.sum if isinstance(ord, str) else (
            reduction.max if ord == 2 else reduction.min)
        result = pick(s, -1, keepdims=False)
        return result.reshape((*result.shape, 1, 1)) if keepdims else result
    if isinstance(ord, str) or ord not in (1, -1, math.inf, -math.inf):
        raise ArgumentError(f"matrix_norm: invalid order {ord!r}; use 'fro', 'nuc', 1, -1, 2, "
                            f"-2, inf or -inf")
    # 1: max over columns of the column sums; inf: max over rows of the row sums
    summed, other = (-2, -1) if abs(ord) == 1 else (-1, -2)
    sums = reduction.sum(UFUNCS["absolute"](x), summed, keepdims=True)
    pick = reduction.max if ord > 0 else reduction.min
    result = pick(sums, other, keepdims=True)
    return result if keepdims else result.reshape(result.shape[:-2])


def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: vector norms along one axis, matrix norms over two, the 2-norm of
    the flattened array when neither `ord` nor `axis` is given."""
    x = asarray(x)
    if axis is None:
        if ord is None:
            return vector_norm(x, keepdims=keepdims)
        if x.ndim not in (1, 2):
            raise ArgumentError(f"Improper number of dimensions to norm: {x.ndim} (with ord="
                                f"{ord!r} and no axis)")
        axis = tuple(range(x.ndim))
    axes = axis if isinstance(axis, tuple | list) else (axis,)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ArgumentError(f"Invalid norm order {ord!r} for vectors")
        return vector_norm(x, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) != 2:
        raise ArgumentError(f"Improper number of dimensions to norm: axis={axis!r}")
    moved = manipulation.moveaxis(x, tuple(axes), (-2, -1))
    result = matrix_norm(moved, keepdims=True, ord="fro" if ord is None else ord)
    if keepdims:
        return manipulation.moveaxis(result, (-2, -1), tuple(axes))
    return result.reshape(result.shape[:-2])



# ---------------------------------------------------------------- factorizations


class SlogdetResult(NamedTuple):
    sign: ArrayBase
    logabsdet: ArrayBase


class QRResult(NamedTuple):
    Q: ArrayBase
    R: ArrayBase


class EighResult(NamedTuple):
    eigenvalues: ArrayBase
    eigenvectors: ArrayBase


class EigResult(NamedTuple):
    eigenvalues: ArrayBase
    eigenvectors: ArrayBase


class SVDResult(NamedTuple):
    U: ArrayBase
    S: ArrayBase
    Vh: ArrayBase


def _dtype(x, name):
    """The dtype `name` computes in: x's for float32/64 and complex64/128; integers and bools
    as float64 (float32 on a device without float64), as numpy."""
    dt = x.dtype
    if dt.kind in "fc" and dt.itemsize >= 4:
        return dt
    if dt.kind in "biu":
        return np.dtype(np.float64 if x.context.fp64 else np.float32)
    raise UnsupportedError(f"{name}: array type {dt} is unsupported in linalg; cast to "
                           f"float32 or float64")


def _stack(x, name, square=True):
    """x as an array of matrices (LinAlgError, as numpy, when it is not) and its dtype."""
    x = asarray(x)
    if x.ndim < 2:
        raise LinAlgError(f"{name}: {x.ndim}-dimensional array given (shape {x.shape}); the "
                          f"array must be at least two-dimensional")
    if square and x.shape[-1] != x.shape[-2]:
        raise LinAlgError(f"{name}: last 2 dimensions of the array must be square, got shape "
                          f"{x.shape}")
    return x, _dtype(x, name)


def _work(x, dt, batch=None, copy=True):
    """A C-contiguous copy of x (broadcast to `batch` + its matrix shape) as (p, m, n); with
    copy=False, a view where one serves (kernels that only read it, through its strides)."""
    m, n = x.shape[-2:]
    batch = x.shape[:-2] if batch is None else batch
    if x.shape[:-2] != tuple(batch):
        x = broadcast_to(x, (*batch, m, n))
    w = x.astype(dt, order="C") if copy else x.astype(dt, copy=False)
    return w.reshape(math.prod(batch), m, n)


def _info(x, p):
    return zeros((p,), np.int32, context=x.context)


def _raise_info(info, batch, name, what):
    """LinAlgError naming the first failing matrix, from the flags (one read back)."""
    host = info.get()
    bad = np.flatnonzero(host)
    if bad.size:
        i = int(bad[0])
        index = tuple(map(int, np.unravel_index(i, batch)))
        where = f" (batch index {index})" if batch else ""
        raise LinAlgError(f"{name}: {what(int(host[i]))}{where}; {bad.size} of "
                          f"{host.size} matrices failed")


def _singular(k):
    return f"Singular matrix: U[{k - 1}, {k - 1}] is exactly zero"


def _lu(x, name):
    """(lu (p, n, n), piv, info, batch shape, dtype, getrf's order) of the square stack x."""
    x, dt = _stack(x, name)
    batch = x.shape[:-2]
    a = _work(x, dt)
    p, n = a.shape[0], a.shape[-1]
    piv = empty((p, n), np.int32, context=a.context)
    info = _info(a, p)
    order = factorizations.getrf(a, piv, info)
    return a, piv, info, batch, dt, order


def cholesky(x, /, *, upper=False):
    """The Cholesky factor L (lower, L L^H = x) or, with upper=True, U = L^H (U^H U = x) of
    each Hermitian positive-definite matrix (only the lower triangle is read)."""
    x, dt = _stack(x, "cholesky")
    a = _work(x, dt)
    info = _info(a, a.shape[0])
    low = factorizations.potrf(a, info)
    _raise_info(info, x.shape[:-2], "cholesky",
                lambda k: f"Matrix is not positive definite: the leading minor of order {k} "
                          f"is not positive")
    if upper:
        low = _adjoint(low).copy()
    return low.reshape(x.shape)


def _adjoint(x):
    t = matrix_transpose(x)
    return UFUNCS["conjugate"](t) if x.dtype.kind == "c" else t


def _rhs(a_shape, b, name):
    """The Array API's solve broadcasting: b is a vector only when 1-d; returns (b as a
    stack (..., n, k), batch shape, whether b was a vector)."""
    n = a_shape[-1]
    vector = b.ndim == 1
    bm = b.reshape(n, 1) if vector and b.shape[0] == n else b
    if bm.ndim < 2 or bm.shape[-2] != n:
        raise ShapeError(f"{name}: a has shape {a_shape}, b has shape {b.shape}: b needs {n} "
                         f"rows (shape ({n},) or (..., {n}, k))")
    batch = broadcast_shapes(a_shape[:-2], bm.shape[:-2])
    return bm, batch, vector


def _system(x1, x2, name, views=None):
    """Working copies of a (batches of n x n) and b for a solve, of their common dtype, the
    batch dimensions broadcast (b is a vector only when 1-d); the batch shape and the
    solution's shape. Views instead where views(context, n, dtype, k) says so (kernels
    that only read them)."""
    a, b = _pair(x1, x2)
    a, dt = _stack(a, name)
    dt = np.result_type(dt, _dtype(b, name))
    bm, batch, vector = _rhs(a.shape, b, name)
    n, k = a.shape[-1], bm.shape[-1]
    shape = (*batch, n) if vector else (*batch, n, k)
    copy = not (views and views(a.context, n, dt, k))
    return _work(a, dt, batch, copy), _work(bm, dt, batch, copy), batch, shape


def solve(x1, x2, /):
    """x with x1 @ x = x2 for square x1 (LU with partial pivoting; small systems on GPUs by
    Gauss-Jordan, factorizations.GJ_MAX); x2 is a vector only when 1-d, else a stack of
    matrices; batch dimensions broadcast (the Array API's rules)."""
    fits = factorizations.gauss_jordan_fits
    a, b, batch, shape = _system(x1, x2, "solve", views=fits)
    info = _info(a, a.shape[0])
    if fits(a.context, a.shape[-1], a.dtype, b.shape[-1]):
        x = factorizations.solve_small(a, b, info)
        _raise_info(info, batch, "solve", _singular)
        return x.reshape(shape)
    # a and b are working copies here: a becomes its LU factors, b the solution
    piv = empty(a.shape[:2], np.int32, context=a.context)
    order = factorizations.getrf(a, piv, info)
    _raise_info(info, batch, "solve", _singular)
    return factorizations.getrs(a, piv, b, order).reshape(shape)


def inv(x, /):
    """The inverse of each square matrix: small ones (factorizations.GJ_MAX) by Gauss-Jordan
    with partial pivoting in one launch, larger ones by LU, then LAPACK's getri."""
    x, dt = _stack(x, "inv")
    batch, n = x.shape[:-2], x.shape[-1]
    if factorizations.gauss_jordan_fits(x.context, n, dt):
        a = x.astype(dt, copy=False).reshape((-1, n, n))
        info = _info(a, a.shape[0])
        inverse = factorizations.inverse(a, info)
    else:
        lu, piv, info, _, _, order = _lu(x, "inv")
        inverse = factorizations.getri(lu, piv, order)
    _raise_info(info, batch, "inv", _singular)
    return inverse.reshape((*batch, n, n))


def _lu_diagonal(x, name):
    """(diagonal of U, permutation parity, batch shape, dtype) on the host: det and slogdet
    are O(n) per matrix once the LU factors are known."""
    lu, piv, _, batch, dt, _ = _lu(x, name)
    n = lu.shape[-1]
    diag = manipulation.diagonal(lu, 0, 1, 2).get()
    swaps = np.count_nonzero(piv.get() != np.arange(n, dtype=np.int32), axis=-1)
    return diag, np.where(swaps % 2, -1, 1), batch, dt, lu.context


def det(x, /):
    """The determinant of each square matrix, sign * exp(log|det|) from its LU factors (as
    numpy: an overflow gives inf, not nan)."""
    sign, logabs, batch, dt, ctx = _slogdet(x, "det")
    with np.errstate(over="ignore", invalid="ignore"):
        value = (sign * np.exp(logabs)).astype(dt)
    return to_device(np.asarray(value.reshape(batch)), ctx)


def _slogdet(x, name):
    """(sign, log|det|) on the host from the diagonal of U and the pivots' parity."""
    diag, parity, batch, dt, ctx = _lu_diagonal(x, name)
    mag = np.abs(diag)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit = np.where(mag == 0, 0, diag / np.where(mag == 0, 1, mag))
        logabs = np.sum(np.log(mag.astype(np.float64)), axis=-1)
    return parity * np.prod(unit, axis=-1), logabs, batch, dt, ctx


def slogdet(x, /):
    """(sign, log|det|) of each square matrix: sign 0 and -inf for a singular one."""
    sign, logabs, batch, dt, ctx = _slogdet(x, "slogdet")
    return SlogdetResult(to_device(np.asarray(sign.astype(dt).reshape(batch)), ctx),
                         to_device(np.asarray(logabs.astype(_real(dt)).reshape(batch)), ctx))


def qr(x, /, *, mode="reduced"):
    """Householder QR of each matrix (blocked: panels by the host's LAPACK, the trailing
    updates and Q as GEMMs on the device). mode 'reduced' (Q m x k, R k x n, k = min(m, n)),
    'complete' (Q m x m, R m x n) or 'r' (R alone, k x n)."""
    if mode not in ("reduced", "complete", "r"):
        raise ArgumentError(f"qr: unrecognized mode {mode!r}; use 'reduced', 'complete' or "
                            f"'r' ('raw' and the deprecated modes: numpy.linalg.qr on the host)")
    x, dt = _stack(x, "qr", square=False)
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    a = _work(x, dt)
    p, k = a.shape[0], min(m, n)
    blocks = factorizations.geqrf(a)
    rows = m if mode == "complete" else k
    r = manipulation.triu(a[:, :rows]).reshape((*batch, rows, n))
    if mode == "r":
        return r
    q = factorizations.orgqr(blocks, p, m, rows, dt, a.context)
    return QRResult(q.reshape((*batch, m, rows)), r)


# ---------------------------------------------------------------- eigen and singular values
# Small Hermitian eigenproblems by Jacobi on the device (one work-item a matrix); SVDs and
# batched eigenproblems by one-sided block Jacobi on GPUs (factorizations.gesvj_fits); the
# rest LAPACK on the host (numpy).

def _host(x, name, square=True):
    x, dt = _stack(x, name, square)
    return x, dt, x.get().astype(dt, copy=False)


def _eigh(x, UPLO, name, vectors=True):
    """(w, v) of the Hermitian stack x: Jacobi on the device up to factorizations'
    JACOBI_MAX, one matrix from EIGH_TRIDIAGONAL through the tridiagonal form where the
    device takes it (and it does not decline), one-sided block Jacobi on the device where
    gesvj_fits, else LAPACK on the host (v None without `vectors`)."""
    if UPLO not in ("L", "U"):
        raise ArgumentError(f"{name}: UPLO must be 'L' or 'U', not {UPLO!r}")
    x, dt = _stack(x, name)
    batch, n = x.shape[:-2], x.shape[-1]
    if n <= factorizations.jacobi_max(x.context):
        w, v = factorizations.syevj(_work(x, dt), upper=UPLO == "U")
        return w.reshape((*batch, n)), v.reshape(x.shape)
    p = math.prod(batch)
    fit = p == 1 and n >= EIGH_TRIDIAGONAL and factorizations.sytrd_fits(x.context, n,
                                                                         np.dtype(dt))
    if fit:
        found = _eigh_tridiagonal(_work(x, dt), UPLO == "U", vectors, fit)
        if found is not None:
            w, v = found
            return w.reshape((*batch, n)), None if v is None else v.reshape(x.shape)
    if factorizations.gesvj_fits(x.context, p, n, n, hermitian=True):
        found = _eigh_jacobi(_work(x, dt), UPLO == "U", vectors)
        if found is not None:
            w, v = found
            return w.reshape((*batch, n)), None if v is None else v.reshape(x.shape)
    h = x.get().astype(dt, copy=False)
    if not vectors:
        return to_device(np.linalg.eigvalsh(h, UPLO=UPLO), x.context), None
    w, v = np.linalg.eigh(h, UPLO=UPLO)
    return to_device(w, x.context), to_device(v, x.context)


# One Hermitian eigenproblem from this size goes through the tridiagonal form (tridiagonal.py)
# where the device takes it (NVIDIA GPUs).
EIGH_TRIDIAGONAL = 512
# Hermitian eigenproblems from this size take a second Jacobi pass on V^H A V (eigh): the
# first pass's shift grows like n^(1/2) ||A||, and with it the vectors' error.
EIGH_REFINE = 512


def _scaled(a):
    """(the powers of two near max |a| of each matrix of the (p, m, n) stack a, on the
    host), or None where a matrix holds a NaN or an infinity (those go to LAPACK)."""
    top = reduction.max(UFUNCS["absolute"](a), (1, 2), keepdims=False).get()
    if not np.all(np.isfinite(top)):
        return None
    return np.exp2(np.floor(np.log2(np.where(top > 0, top, 1)))).astype(_real(a.dtype))


def _jacobi_start(a, scale, rows, vectors):
    """The rows for factorizations.gesvj: a's columns over `scale`, zeros past them to
    `rows`, and V's rows (the identity) where `vectors`."""
    p, m, n = a.shape
    ctx = a.context
    x = zeros((p, rows, m), a.dtype, context=ctx)
    inv = to_device((1 / scale).reshape(p, 1, 1), ctx)
    UFUNCS["multiply"](factorizations._transposed(a), inv, out=x[:, :n])
    if not vectors:
        return x, None
    vt = zeros((p, rows, n), a.dtype, context=ctx)
    _diagonal_view(vt).fill(1)
    return x, vt


def _rows_ordered(x, order, shape, transpose=False):
    """x's rows (p, r, c) in the host's `order` (p, k) as a new (p, k, c) array, or its
    transpose (p, c, k) with `transpose`."""
    perm = to_device(np.ascontiguousarray(order, dtype=np.int32), x.context)
    out = empty(shape, x.dtype, context=x.context)
    factorizations.gather_rows(x, perm, factorizations._transposed(out) if transpose else out)
    return out


def _diagonal_view(x):
    """The diagonals (p, k) of the (p, r, c) array x, a view."""
    sb, sr, sc = x.strides
    return x._view((x.shape[0], min(x.shape[1:])), (sb, sr + sc))


def _psd_shifted(h):
    """h + shift I for the Hermitian stack h, shift = max(0, -min_i(h_ii - sum_j!=i
    |h_ij|)) (Gershgorin: the result is positive semidefinite)."""
    p = h.shape[0]
    diag = real(_diagonal_view(h)).copy()
    radius = UFUNCS["subtract"](reduction.sum(UFUNCS["absolute"](h), 2, keepdims=False),
                                UFUNCS["absolute"](diag))
    shift = UFUNCS["maximum"](UFUNCS["negative"](
        reduction.min(UFUNCS["subtract"](diag, radius), 1, keepdims=False)), 0)
    b = h.copy()
    _diagonal_view(b)[...] = UFUNCS["add"](diag, shift.reshape(p, 1))
    return b


def _psd_vectors(h):
    """The eigenvectors (columns) of the Hermitian stack h: the right singular vectors of h
    shifted positive semidefinite (no mixing of +-lambda), by _svd_jacobi; None where h has
    a NaN or an infinity."""
    found = _svd_jacobi(_psd_shifted(h), False, True, want_u=False)
    return None if found is None else _adjoint(found[2])


def _hermitian(a, upper):
    """The Hermitian matrices (p, n, n) whose upper (`upper`) or lower triangle a holds."""
    tri = manipulation.triu(a, 1) if upper else manipulation.tril(a, -1)
    full = UFUNCS["add"](tri, _adjoint(tri))
    _diagonal_view(full)[...] = real(_diagonal_view(a))
    return full


def _eigh_tridiagonal(a, upper, vectors, fit):
    """eigh of the (1, n, n) array a (its upper triangle with `upper`, else the lower) by
    tridiagonal.eigh; None where that declines."""
    n = a.shape[1]
    found = tridiagonal.eigh(_hermitian(a, upper)[0], fit, vectors)
    if found is None:
        return None
    w, v = found
    return w.reshape((1, n)), None if v is None else v.reshape((1, n, n))


def _eigh_jacobi(a, upper, vectors):
    """eigh of the (p, n, n) stack a (its upper triangle with `upper`, else the lower) by
    one-sided Jacobi on A shifted positive semidefinite (Gershgorin, up to ~n^(1/2) ||A||:
    the vectors' error grows with it), then, from EIGH_REFINE, again on V^H A V (nearly
    diagonal: its shift ~ ||A||) for V V2; the eigenvalues the Rayleigh quotients v^H A v.
    None where a has a NaN or an infinity."""
    p, n, _ = a.shape
    full = _hermitian(a, upper)
    v = _psd_vectors(full)
    if v is None:
        return None
    if n >= EIGH_REFINE:
        m = blas.matmul(_adjoint(v), blas.matmul(full, v))
        v2 = _psd_vectors(UFUNCS["multiply"](UFUNCS["add"](m, _adjoint(m)), 0.5))
        if v2 is None:
            return None
        v = blas.matmul(v, v2)
    av = blas.matmul(full, v)
    w = real(reduction.sum(UFUNCS["multiply"](UFUNCS["conjugate"](v), av), 1,
                           keepdims=False)).get()
    order = np.argsort(w, axis=-1, kind="stable")
    w = to_device(np.take_along_axis(w, order, -1), a.context)
    if not vectors:
        return w, None
    return w, _rows_ordered(factorizations._transposed(v), order, (p, n, n), transpose=True)


def eigh(x, /, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of each Hermitian matrix (the UPLO
    triangle is read)."""
    return EighResult(*_eigh(x, UPLO, "eigh"))


def eigvalsh(x, /, UPLO="L"):
    """The eigenvalues (ascending) of each Hermitian matrix."""
    return _eigh(x, UPLO, "eigvalsh", vectors=False)[0]


def _eig(x, name, vectors):
    """LAPACK's general eigensolver (numpy's, on the host) over the stack x, the results
    complex (the Array API's rule: numpy's eig returns real arrays where every eigenvalue of
    the stack is real, a dtype that would depend on the values)."""
    x, dt, h = _host(x, name)
    ct = np.result_type(dt, np.complex64)
    if not vectors:
        return to_device(np.linalg.eigvals(h).astype(ct, copy=False), x.context)
    w, v = np.linalg.eig(h)
    return EigResult(to_device(w.astype(ct, copy=False), x.context),
                     to_device(v.astype(ct, copy=False), x.context))


def eig(x, /):
    """Eigenvalues and right eigenvectors (the columns, of unit length) of each square
    matrix, complex whatever x's dtype (complex64 for float32, complex128 for float64)."""
    return _eig(x, "eig", True)


def eigvals(x, /):
    """The eigenvalues of each square matrix, complex (as eig's), in LAPACK's order."""
    return _eig(x, "eigvals", False)


def _completed(u):
    """The (p, n, n) u with orthonormal columns but zero ones, made orthonormal: a QR's Q,
    its columns kept up to sign, the zero ones completing the basis."""
    q, r = qr(u)
    d = _diagonal_view(r).get()
    keep = np.abs(d) > 0.5
    phase = np.where(keep, d / np.where(keep, np.abs(d), 1), 1).astype(d.dtype)
    return UFUNCS["multiply"](q, to_device(phase[:, None, :], u.context))


def _svd_jacobi(a, full_matrices, compute_uv, want_u=True):
    """(u, s, vh) (u, vh None without compute_uv, u None without want_u: neither Q nor V'
    then) of the (p, m, n) stack a, m >= n: A = Q R
    (Householder, the device's), one-sided Jacobi on the columns of R^H (Drmac and
    Veselic's preconditioning: a third fewer sweeps, and vectors of n, not m): R^H V' =
    U' S, so A = (Q V') S U'^H. V's columns of zero singular values (below max(s) m eps)
    complete an orthonormal basis through a QR; with full_matrices, U's last m - n columns
    are the complete Q's. None where a has a NaN or an infinity."""
    p, m, n = a.shape
    ctx = a.context
    scale = _scaled(a)
    if scale is None:
        return None
    want_u = compute_uv and want_u
    complete = want_u and full_matrices and m > n
    if want_u:
        q, r = qr(a, mode="complete" if complete else "reduced")
        r = r[:, :n]
    else:
        r = qr(a, mode="r")
    done, x, vt = factorizations.gesvj(*_jacobi_start(_adjoint(r), scale,
                                                      factorizations.gesvj_rows(n), want_u))
    if not done.all():
        raise LinAlgError("SVD did not converge")
    sigma = vector_norm(x[:, :n], axis=2).get() * scale[:, None]
    order = np.argsort(-sigma, axis=-1, kind="stable")
    s = np.take_along_axis(sigma, order, -1)
    s_dev = to_device(s, ctx)
    if not compute_uv:
        return None, s_dev, None
    vh = _rows_ordered(x, order, (p, n, n))  # U'^H's rows, conjugated, times s / scale
    null = s <= np.max(s, axis=-1, keepdims=True, initial=0) * m * np.finfo(a.dtype).eps
    unit = np.where(null, 0, scale[:, None] / np.where(null, 1, s)).astype(_real(a.dtype))
    UFUNCS["multiply"](vh, to_device(unit.reshape(p, n, 1), ctx), out=vh)
    vh = _adjoint(_completed(factorizations._transposed(vh))) if null.any() else \
        UFUNCS["conjugate"](vh, out=vh)
    if not want_u:
        return None, s_dev, vh
    rotation = _rows_ordered(vt, order, (p, n, n), transpose=True)  # V'
    u = blas.matmul(q[:, :, :n], rotation)
    if complete:
        u = manipulation.concatenate([u, q[:, :, n:]], axis=2)
    return u, s_dev, vh


def _svd(x, name, full_matrices=True, compute_uv=True):
    """(u, s, vh) of the stack x: one-sided Jacobi on the device where gesvj_fits (of x^H
    where x is wide), else LAPACK on the host."""
    x, dt = _stack(x, name, square=False)
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    ctx = x.context
    found = None
    if factorizations.gesvj_fits(ctx, math.prod(batch), m, n):
        wide = m < n
        found = _svd_jacobi(_work(_adjoint(x) if wide else x, dt), full_matrices, compute_uv)
        if found is not None:
            u, s, vh = found
            if wide and compute_uv:
                u, vh = _adjoint(vh), _adjoint(u)
    if found is None:
        h = x.get().astype(dt, copy=False)
        if not compute_uv:
            return None, to_device(np.linalg.svd(h, compute_uv=False), ctx), None
        u, s, vh = (to_device(r, ctx) for r in np.linalg.svd(h, full_matrices=full_matrices))
        return u, s, vh
    k = min(m, n)
    s = s.reshape((*batch, k))
    if not compute_uv:
        return None, s, None
    return (u.reshape((*batch, *u.shape[-2:])), s, vh.reshape((*batch, *vh.shape[-2:])))


def svd(x, /, full_matrices=True, compute_uv=True, hermitian=False):
    """U, S, Vh with x = U diag(S) Vh (S descending); S alone with compute_uv=False.
    `hermitian` is accepted (the general SVD serves)."""
    u, s, vh = _svd(x, "svd", full_matrices, compute_uv)
    return SVDResult(u, s, vh) if compute_uv else s


def svdvals(x, /):
    """The singular values of each matrix, descending."""
    return _svd(x, "svdvals", compute_uv=False)[1]


_NO_VALUE = object()


def pinv(x, /, rcond=None, hermitian=False, *, rtol=_NO_VALUE):
    """The Moore-Penrose pseudo-inverse: V diag(1/s) U^H over the singular values above
    rtol * max(s) (numpy's rcond/rtol defaults: 1e-15 with neither, max(m, n) * eps with
    rtol=None). The SVD's (svd's: the device's or the host's) products on the device;
    `hermitian` is accepted (the general SVD serves)."""
    x, dt = _stack(x, "pinv", square=False)
    if rcond is None:
        rcond = 1e-15 if rtol is _NO_VALUE else (
            max(x.shape[-2:]) * np.finfo(dt).eps if rtol is None else rtol)
    elif rtol is not _NO_VALUE:
        raise ArgumentError("pinv: `rtol` and `rcond` can't be both set")
    m, n = x.shape[-2:]
    ctx = x.context
    if m == 0 or n == 0:
        return zeros((*x.shape[:-2], n, m), dt, context=ctx)
    u, s, vh = _svd(x, "pinv", full_matrices=False)
    s = s.get()
    cutoff = np.asarray(rcond)[..., None] * np.max(s, axis=-1, keepdims=True)
    large = s > cutoff
    inv_s = np.divide(1, s, where=large, out=np.zeros_like(s))
    left = UFUNCS["multiply"](_adjoint(vh), to_device(inv_s[..., None, :].astype(s.dtype),
                                                      ctx))
    return blas.matmul(left, _adjoint(u))


def matrix_rank(x, /, tol=None, hermitian=False, *, rtol=None):
    """The number of singular values above tol (default max(s) * max(m, n) * eps, or
    rtol * max(s)); for 1-d input, 1 unless all zero."""
    x = asarray(x)
    if x.ndim < 2:
        nz = reduction.count_nonzero(x, None, False)
        return UFUNCS["not_equal"](nz, 0).astype(np.int64)
    if tol is not None and rtol is not None:
        raise ArgumentError("matrix_rank: `tol` and `rtol` can't be both set")
    x, dt = _stack(x, "matrix_rank", square=False)
    s = _svd(x, "matrix_rank", compute_uv=False)[1].get()
    top = np.max(s, axis=-1, keepdims=True) if s.shape[-1] else np.zeros((*s.shape[:-1], 1))
    if tol is None:
        rt = max(x.shape[-2:]) * np.finfo(dt).eps if rtol is None else np.asarray(rtol)[..., None]
        tol = top * rt
    else:
        tol = np.asarray(tol)[..., None]
    return to_device(np.asarray(np.count_nonzero(s > tol, axis=-1)), x.context)


def lstsq(a, b, rcond=None):
    """numpy.linalg.lstsq: (x, residuals, rank, s) for 2-d a, by the SVD (svd's: the
    device's or the host's) and its products (device)."""
    a, b = _pair(a, b)
    a, dt = _stack(a, "lstsq", square=False)
    if a.ndim != 2:
        raise LinAlgError(f"lstsq: a must be 2-dimensional, got shape {a.shape}")
    vector = b.ndim == 1
    bm = b.reshape(-1, 1) if vector else b
    if bm.ndim != 2 or bm.shape[0] != a.shape[0]:
        raise LinAlgError(f"lstsq: incompatible dimensions: a {a.shape}, b {b.shape}")
    dt = np.result_type(dt, _dtype(b, "lstsq"))
    m, n = a.shape
    ctx = a.context
    k = bm.shape[1]
    if rcond is None:
        rcond = np.finfo(dt).eps * max(m, n)
    u, s, vh = _svd(a.astype(dt, copy=False), "lstsq", full_matrices=False)
    s = s.get()
    rank = int(np.count_nonzero(s > rcond * s[0])) if s.size else 0
    inv_s = np.zeros_like(s)
    inv_s[:rank] = 1 / s[:rank]
    left = UFUNCS["multiply"](_adjoint(vh), to_device(inv_s, ctx))
    uh = _adjoint(u)
    bd = bm.astype(dt)
    x = blas.matmul(left, blas.matmul(uh, bd)) if m and n else zeros((n, k), dt, context=ctx)
    real = _real(dt)
    if rank == n and m > n:
        r = UFUNCS["subtract"](bd, blas.matmul(a.astype(dt), x))
        resid = reduction.sum(_squares(r), 0, keepdims=False).astype(real)
    else:
        resid = zeros((0,), real, context=ctx)
    return (x.reshape(n) if vector else x), resid, rank, to_device(s, ctx)


def cond(x, p=None):
    """The condition number of each matrix in the `p` norm (None, 2, -2: from the singular
    values; 'fro', 'nuc', 1, -1, inf, -inf: norm(x) * norm(inv(x)))."""
    x = asarray(x)
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = svdvals(x)
        big, small = reduction.max(s, -1), reduction.min(s, -1)
        return UFUNCS["true_divide"](small, big) if p == -2 else UFUNCS["true_divide"](big,
                                                                                      small)
    x, _ = _stack(x, "cond")
    return UFUNCS["multiply"](matrix_norm(x, ord=p), matrix_norm(inv(x), ord=p))


def multi_dot(arrays, *, out=None):
    """The product of a chain of matrices in the cheapest order (first and last may be
    1-d), numpy.linalg.multi_dot."""
    arrays = [asarray(x) for x in arrays]
    if len(arrays) < 2:
        raise ArgumentError(f"multi_dot: expecting at least two arrays, got {len(arrays)}")
    first, last = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first:
        arrays[0] = arrays[0].reshape(1, -1)
    if last:
        arrays[-1] = arrays[-1].reshape(-1, 1)
    for x in arrays:
        if x.ndim != 2:
            raise ShapeError(f"multi_dot: {x.ndim}-dimensional array given (shape {x.shape}); "
                             f"the arrays must be two-dimensional (the first and last may be "
                             f"1-d)")
    dims = [arrays[0].shape[0], *(x.shape[1] for x in arrays)]
    order = _chain_order(dims)

    def product(i, j):
        if i == j:
            return arrays[i]
        return blas.matmul(product(i, order[i][j]), product(order[i][j] + 1, j))

    result = product(0, len(arrays) - 1)
    if first and last:
        result = result.reshape(())
    elif first or last:
        result = result.reshape(-1)
    if out is not None:
        return out._assign(result)
    return result


def _chain_order(dims):
    """The matrix-chain split table (Cormen's dynamic program)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def tensorinv(a, ind=2):
    """The inverse of `a` seen as a square matrix of its first `ind` axes against the rest."""
    a = asarray(a)
    if ind <= 0:
        raise ArgumentError(f"tensorinv: ind must be a positive integer, got {ind!r}")
    old = a.shape
    rows = math.prod(old[:ind])
    if rows != math.prod(old[ind:]):
        raise LinAlgError(f"tensorinv: the first {ind} axes of shape {old} hold {rows} "
                          f"elements, the rest {math.prod(old[ind:])}: not a square matrix")
    return inv(a.reshape(rows, rows)).reshape(*old[ind:], *old[:ind])


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) == b (numpy.linalg.tensorsolve)."""
    a, b = _pair(a, b)
    if axes is not None:
        order = [i for i in range(a.ndim) if i not in [x % a.ndim for x in axes]]
        order += [x % a.ndim for x in axes]
        a = a.transpose(order)
    old = a.shape[-(a.ndim - b.ndim):]
    prod = math.prod(old)
    if a.size != prod * prod:
        raise LinAlgError(f"tensorsolve: a of shape {a.shape} and b of shape {b.shape} do not "
                          f"make a square system ({a.size} != {prod}^2)")
    return solve(a.reshape(prod, prod), b.reshape(prod)).reshape(old)


# ---------------------------------------------------------------- building blocks

def lu_factor(a, /):
    """(lu, piv) of each square matrix: L (unit, below the diagonal) and U in one array,
    LAPACK's 0-based row interchanges (scipy.linalg.lu_factor's layout). A zero pivot is no
    error here (solve and inv raise)."""
    lu, piv, _, batch, _, _ = _lu(a, "lu_factor")
    n = lu.shape[-1]
    return lu.reshape((*batch, n, n)), piv.reshape((*batch, n))


def lu_solve(lu_and_piv, b, /, trans=0):
    """x with A x = b from lu_factor's (lu, piv); b a vector when 1-d. trans: 0 only."""
    lu, piv = lu_and_piv
    if trans != 0:
        raise UnsupportedError(f"lu_solve: trans={trans!r} is not supported; use trans=0 "
                               f"(or solve with the transposed matrix)")
    lu, dt = _stack(lu, "lu_solve")
    b = asarray(b)
    bm, batch, vector = _rhs(lu.shape, b, "lu_solve")
    n, k = lu.shape[-1], bm.shape[-1]
    dt = np.result_type(dt, _dtype(b, "lu_solve"))
    lw, rhs = _work(lu, dt, batch), _work(bm, dt, batch)
    pw = broadcast_to(asarray(piv), (*batch, n)).astype(np.int32, order="C").reshape(-1, n)
    x = factorizations.getrs(lw, pw, rhs)
    return x.reshape((*batch, n) if vector else (*batch, n, k))


def solve_triangular(a, b, /, *, lower=False, trans=0, unit_diagonal=False):
    """x with op(a) x = b for triangular a (only its `lower` or upper triangle is read);
    op: trans 0 / 'N' (a), 1 / 'T' (a^T), 2 / 'C' (a^H). b is a vector when 1-d."""
    modes = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}
    if trans not in modes:
        raise ArgumentError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', not "
                            f"{trans!r}")
    t, rhs, _, shape = _system(a, b, "solve_triangular")
    mode = modes[trans]
    if mode:
        t, lower = t.swapaxes(1, 2), not lower
    factorizations.trsm(t, rhs, lower, unit_diagonal, conj_t=mode == 2)
    return rhs.reshape(shape)


def cho_solve(c_and_lower, b, /):
    """x with A x = b from A's Cholesky factor (c, lower): c = cholesky(A) (lower=True) or
    cholesky(A, upper=True) (lower=False)."""
    c, lower = c_and_lower
    y = solve_triangular(c, b, lower=lower, trans=0 if lower else 2)
    return solve_triangular(c, y, lower=lower, trans=2 if lower else 0)


__all__ = ["EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult", "cho_solve",
           "cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
           "inv", "lstsq", "lu_factor",
           "lu_solve", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
           "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve",
           "solve_triangular", "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve",
           "trace", "vecdot", "vector_norm"]
