"""numpy's polynomial routines (coefficients highest power first) on GpuArrays: polyval,
polyadd, polysub, polymul, polydiv, polyder, polyint, polyfit, poly (from roots), roots and
vander.

Coefficient arrays are short: the routines loop over them in Python and do each step as an
array operation on the device. polyfit solves its least-squares problem by a Householder
QR on the device (gpuarr.linalg.qr, solve_triangular); only with full=True does it call
gpuarr.linalg.lstsq, for numpy's singular values.
"""

import operator
import warnings

import numpy as np

from .base import ArrayBase, arange, asarray, broadcast_to, zeros
from .blas import matmul
from .errors import ArgumentError, ArgumentTypeError, ShapeError
from .linalg import eigvals, inv, lstsq, qr, solve_triangular
from .manipulation import concatenate
from .numerical import _array, _context, allclose, convolve
from .reduction import cumprod
from .reduction import sum as sum_
from .sorting import sort
from .ufuncs import UFUNCS, real

__all__ = ["FUNCTIONS", "poly", "polyadd", "polyder", "polydiv", "polyfit", "polyint",
           "polymul", "polysub", "polyval", "roots", "vander"]

_add, _sub, _mul, _div = (UFUNCS[n] for n in ("add", "subtract", "multiply", "true_divide"))


def _coefficients(*polys):
    """Coefficient sequences as 1-d GpuArrays of one context (scalars become length 1)."""
    ctx = _context(*polys)
    out = []
    for p in polys:
        p = _array(p, ctx)
        out.append(p.reshape(1) if p.ndim == 0 else p)
    return out


def polyval(p, x):
    """The polynomial with coefficients `p` (highest power first) at `x`, by Horner's rule.

    Examples
    --------
    >>> ga.polyval([3, 0, 1], ga.asarray([1.0, 2.0])).get()
    array([ 4., 13.])
    """
    if isinstance(p, ArrayBase):
        terms = [p[i] for i in range(p.shape[0])] if p.ndim else [p]
        ctx = p.context
    else:
        terms, ctx = list(np.asarray(p).reshape(-1)), None
    x = _array(x, ctx)
    y = zeros(x.shape, x.dtype, context=x.context)
    for c in terms:
        y = _add(_mul(y, x), c)
    return y


def _padded(a, n):
    """1-d `a` with zeros in front up to length n."""
    if a.shape[0] == n:
        return a
    return concatenate([zeros(n - a.shape[0], a.dtype, context=a.context), a])


def polyadd(a1, a2):
    """The sum of two polynomials (the shorter padded with leading zeros).

    Examples
    --------
    >>> ga.polyadd(ga.asarray([1, 2]), [9, 5, 4]).get()
    array([9, 6, 6])
    """
    a, b = _coefficients(a1, a2)
    n = max(a.shape[0], b.shape[0])
    return _add(_padded(a, n), _padded(b, n))


def polysub(a1, a2):
    """The difference of two polynomials, a1 - a2.

    Examples
    --------
    >>> ga.polysub(ga.asarray([2, 10, -2]), [3, 10, -4]).get()
    array([-1,  0,  2])
    """
    a, b = _coefficients(a1, a2)
    n = max(a.shape[0], b.shape[0])
    return _sub(_padded(a, n), _padded(b, n))


def polymul(a1, a2):
    """The product of two polynomials (the convolution of their coefficients).

    Examples
    --------
    >>> ga.polymul(ga.asarray([1, 2, 3]), [9, 5, 1]).get()
    array([ 9, 23, 38, 17,  3])
    """
    a, b = _coefficients(a1, a2)
    return convolve(a, b)


def polyder(p, m=1):
    """The m-th derivative of a polynomial.

    Examples
    --------
    >>> ga.polyder(ga.asarray([1, 1, 1, 1])).get()
    array([3, 2, 1])
    """
    m = operator.index(m)
    if m < 0:
        raise ArgumentError(f"Order of derivative must be positive (see polyint), got {m}")
    (p,) = _coefficients(p)
    for _ in range(m):
        n = p.shape[0] - 1
        p = _mul(p[:-1], arange(n, 0, -1, context=p.context))
    return p


def polyint(p, m=1, k=None):
    """The m-th antiderivative of a polynomial, with integration constants `k` (a scalar,
    or one per integration; zeros by default).

    Examples
    --------
    >>> ga.polyint(ga.asarray([3.0, 2.0, 1.0])).get()
    array([1., 1., 1., 0.])
    """
    m = operator.index(m)
    if m < 0:
        raise ArgumentError(f"Order of integral must be positive (see polyder), got {m}")
    constants = np.zeros(m, float) if k is None else np.atleast_1d(
        k.get() if isinstance(k, ArrayBase) else k)
    if len(constants) == 1 and m > 1:
        constants = constants[0] * np.ones(m, float)
    if len(constants) < m:
        raise ArgumentError("k must be a scalar or a rank-1 array of length 1 or >m.")
    (p,) = _coefficients(p)
    for i in range(m):
        scaled = _div(p, arange(p.shape[0], 0, -1, context=p.context))
        p = concatenate([scaled, asarray(constants[i:i + 1], context=p.context)])
    return p


def polydiv(u, v):
    """(quotient, remainder) of dividing polynomial u by v (floats); the remainder's
    leading zeros (by numpy's allclose test) dropped.

    Examples
    --------
    >>> q, r = ga.polydiv(ga.asarray([3.0, 5.0, 2.0]), [2.0, 1.0])
    >>> q.get(), r.get()
    (array([1.5 , 1.75]), array([0.25]))
    """
    u, v = _coefficients(u, v)
    dt = np.result_type(u.dtype, v.dtype, 0.0)
    u, v = u.astype(dt), v.astype(dt, copy=False)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = _div(1.0, v[0])
    q = zeros(max(m - n + 1, 1), dt, context=u.context)
    r = u
    for k in range(m - n + 1):
        d = _mul(scale, r[k])
        q[k] = d
        r[k:k + n + 1] = _sub(r[k:k + n + 1], _mul(d, v))
    while r.shape[0] > 1 and allclose(r[0], 0, rtol=1e-14):
        r = r[1:]
    return q, r


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (a 1-d sequence, or a
    square matrix's eigenvalues: its characteristic polynomial), by repeated convolution;
    real when the roots come in conjugate pairs.

    Examples
    --------
    >>> ga.poly(ga.asarray([1.0, 2.0])).get()
    array([ 1., -3.,  2.])
    """
    (zeros_,) = _coefficients(seq_of_zeros)
    if zeros_.ndim == 2 and zeros_.shape[0] == zeros_.shape[1] and zeros_.shape[0]:
        zeros_ = eigvals(zeros_)
    if zeros_.ndim != 1:
        raise ShapeError(f"input must be 1d or non-empty square 2d array (got shape "
                         f"{zeros_.shape}).")
    if zeros_.shape[0] == 0:
        return 1.0
    dt = np.dtype(np.mintypecode(zeros_.dtype.char))
    zeros_ = zeros_.astype(dt, copy=False)
    a = asarray(np.ones(1, dt), context=zeros_.context)
    for i in range(zeros_.shape[0]):
        factor = concatenate([asarray(np.ones(1, dt), context=a.context),
                              UFUNCS["negative"](zeros_[i:i + 1])])
        a = convolve(a, factor)
    if dt.kind == "c":
        roots = sort(zeros_)
        if bool(UFUNCS["equal"](roots, sort(UFUNCS["conjugate"](zeros_))).all()):
            a = real(a).copy()
    return a


def roots(p):
    """The roots of the polynomial with coefficients `p` (highest power first), as numpy's
    roots gives them: the eigenvalues of the companion matrix (LAPACK on the host; the
    coefficients are few), on p's device; real where every root is real, else complex.

    Examples
    --------
    >>> ga.roots(ga.asarray([1.0, -3.0, 2.0])).get()
    array([2., 1.])
    """
    (c,) = _coefficients(p)
    if c.ndim != 1:
        raise ShapeError(f"Input must be a rank-1 array (got shape {c.shape}).")
    r = np.roots(c.get())
    if not c.context.fp64:  # (float32 coefficients give float32 roots already)
        r = r.astype(np.complex64 if r.dtype.kind == "c" else np.float32, copy=False)
    return asarray(r, context=c.context)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-d `x`: columns x**(N-1), ..., x**0 (increasing
    powers with `increasing`), by a running product along the rows.

    Examples
    --------
    >>> ga.vander(ga.asarray([1, 2, 3]), 3).get()
    array([[1, 1, 1],
           [4, 2, 1],
           [9, 3, 1]])
    """
    x = _array(x)
    if x.ndim != 1:
        raise ShapeError(f"x must be a one-dimensional array or sequence (got shape "
                         f"{x.shape}).")
    n = x.shape[0] if N is None else operator.index(N)
    dt = np.promote_types(x.dtype, int)
    out = zeros((x.shape[0], n), dt, context=x.context)
    powers = out if increasing else out[:, ::-1]
    if n > 0:
        powers[:, 0] = 1
    if n > 1:
        powers[:, 1:] = cumprod(broadcast_to(x.astype(dt, copy=False)[:, None],
                                             (x.shape[0], n - 1)), axis=1)
    return out


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial fit of degree `deg` to points (x, y) (y: one column per
    data set), as numpy.polyfit: `w` weights, `rcond`, `full` diagnostics, `cov`.

    Examples
    --------
    >>> x = ga.asarray([0.0, 1.0, 2.0, 3.0]); y = ga.asarray([1.0, 3.0, 5.0, 7.0])
    >>> ga.polyfit(x, y, 1).get().round(6)
    array([2., 1.])
    """
    order = operator.index(deg) + 1
    x = _array(x)
    y = _array(y, x.context)
    x = x.astype(np.result_type(x.dtype, 0.0), copy=False)
    y = y.astype(np.result_type(y.dtype, 0.0), copy=False)
    if order < 1:
        raise ArgumentError("expected deg >= 0")
    if x.ndim != 1:
        raise ArgumentTypeError(f"expected 1D vector for x (got shape {x.shape})")
    if x.size == 0:
        raise ArgumentTypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise ArgumentTypeError(f"expected 1D or 2D array for y (got shape {y.shape})")
    if x.shape[0] != y.shape[0]:
        raise ArgumentTypeError(f"expected x and y to have same length ({x.shape[0]} and "
                                f"{y.shape[0]})")
    if rcond is None:
        rcond = x.shape[0] * np.finfo(x.dtype).eps
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = _array(w, x.context)
        w = w.astype(np.result_type(w.dtype, 0.0), copy=False)
        if w.ndim != 1:
            raise ArgumentTypeError(f"expected a 1-d array for weights (got shape {w.shape})")
        if w.shape[0] != y.shape[0]:
            raise ArgumentTypeError("expected w and y to have the same length")
        lhs = _mul(lhs, w[:, None])
        rhs = _mul(rhs, w[:, None] if rhs.ndim == 2 else w)
    scale = UFUNCS["sqrt"](sum_(_mul(lhs, lhs), axis=0))
    lhs = _div(lhs, scale)
    if full:
        c, resids, rank, s = lstsq(lhs, rhs, rcond)
        return _div(c.T, scale).T, resids, rank, s, rcond
    q, r = qr(lhs)
    column = rhs if rhs.ndim == 2 else rhs[:, None]
    c = solve_triangular(r, matmul(q.T, column), lower=False)
    diagonal = UFUNCS["absolute"](r.diagonal())
    rank = int(sum_(UFUNCS["greater"](diagonal, _mul(rcond, diagonal.max()))))
    if rank != order:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=2)
    result = _div(c.T, scale).T
    if rhs.ndim == 1:
        result = result[:, 0]
    if not cov:
        return result
    base = _div(inv(matmul(lhs.T, lhs)), _mul(scale[:, None], scale[None, :]))
    if cov == "unscaled":
        return result, base
    if x.shape[0] <= order:
        raise ArgumentError("the number of data points must exceed order to scale the "
                            "covariance matrix")
    resids = sum_(UFUNCS["square"](_sub(column, matmul(lhs, c))), axis=0)
    fac = _div(resids, x.shape[0] - order)
    if rhs.ndim == 1:
        return result, _mul(base, fac[0])
    return result, _mul(base[:, :, None], fac)


FUNCTIONS = {f.__name__: f for f in (
    polyval, polyadd, polysub, polymul, polydiv, polyder, polyint, polyfit, poly, roots, vander)}
