"""numpy's numerical routines on GpuArrays: differences and integrals (diff, ediff1d,
gradient, trapezoid, unwrap, trim_zeros), products of vectors (cross, kron), 1-d convolution
and correlation, interpolation (interp), geomspace, special functions (sinc, i0), the
elementwise complex and infinity tests (angle, iscomplex, isreal, real_if_close, isposinf,
isneginf) and the tolerance comparisons (isclose, allclose, array_equal, array_equiv).

Everything is composed from the engines: slices are views, arithmetic is the ufuncs, sums
the reductions, i0 one fused kernel. convolve and correlate are one matrix-vector product
over an overlapping view of the zero-padded signal (row i starts at element i), so no
(n, m) matrix is ever stored. Only Python booleans come back to the host: the results of
allclose, array_equal and array_equiv, gradient's test for evenly spaced coordinates,
real_if_close's and geomspace's tests, trim_zeros' bounds. The small helpers the other
namespace modules share (_array, _pair, _context, _along) live here, the lowest of them.
"""

import functools
import operator
import warnings

import numpy as np

from .base import ArrayBase, _normalize_axis, asarray, broadcast_to, empty, zeros
from .blas import matmul
from .errors import ArgumentError, ArgumentTypeError, ShapeError
from .fusion import fuse
from .indexing import take
from .manipulation import _axis_tuple, concatenate, logspace, moveaxis, stack
from .reduction import all as all_
from .reduction import any as any_
from .reduction import argmax, cumsum
from .reduction import sum as sum_
from .sorting import argsort, searchsorted
from .ufuncs import UFUNCS, broadcast_shapes, imag, real, where

__all__ = [
    "FUNCTIONS", "allclose", "angle", "array_equal", "array_equiv", "convolve", "correlate",
    "cross", "diff", "ediff1d", "geomspace", "gradient", "i0", "interp", "isclose", "iscomplex",
    "isneginf", "isposinf", "isreal", "kron", "real_if_close", "sinc", "trapezoid", "trapz",
    "trim_zeros", "unwrap",
]

_NoValue = np._NoValue
_add, _sub, _mul, _div = (UFUNCS[n] for n in ("add", "subtract", "multiply", "true_divide"))


def _array(a, ctx=None):
    """`a` as a GpuArray (host data uploaded to `ctx`, or to the default context; a
    GpuArray stays where it is: mixing contexts fails where the engines meet)."""
    return a if isinstance(a, ArrayBase) else asarray(a, context=ctx)


def _context(*values):
    """The context of the first GpuArray among `values`, or None."""
    return next((v.context for v in values if isinstance(v, ArrayBase)), None)


def _pair(a, b):
    ctx = _context(a, b)
    return _array(a, ctx), _array(b, ctx)


def _along(ndim, axis, key):
    """The index taking `key` along `axis` and everything along the other axes."""
    return (slice(None),) * axis + (key,) + (slice(None),) * (ndim - axis - 1)


def _contiguous(a):
    return a if a._is_c() else a.copy()


# ---------------------------------------------------------------- differences and integrals

def diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    """The n-th discrete difference along `axis`: a[i+1] - a[i] (booleans: a[i+1] != a[i]),
    taken `n` times, after joining `prepend` and `append` to `a` along the axis.

    Parameters
    ----------
    a : GpuArray or array_like
    n : int, optional
        How many times to take differences (0 returns `a`).
    axis : int, optional
        The axis, by default the last.
    prepend, append : array_like or scalar, optional
        Values joined before and after `a` along `axis` first; a scalar becomes one slice.
        None means nothing, as in the Array API's diff.

    Returns
    -------
    GpuArray
        `n` shorter along `axis` (with what was joined); the dtype of a - a.

    Examples
    --------
    >>> ga.diff(ga.asarray([1, 4, 9, 16]), n=2).get()
    array([2, 2])
    """
    n = operator.index(n)
    if n < 0:
        raise ArgumentError(f"order must be non-negative but got {n!r}")
    a = _array(a)
    if n == 0:
        return a
    if a.ndim == 0:
        raise ArgumentError("diff requires input that is at least one dimensional")
    axis = _normalize_axis(axis, a.ndim)
    slab = (*a.shape[:axis], 1, *a.shape[axis + 1:])
    parts = [a]
    for where_, extra in ((0, prepend), (1, append)):
        if extra is _NoValue or extra is None:
            continue
        extra = _array(extra, a.context)
        if extra.ndim == 0:
            extra = broadcast_to(extra, slab)
        parts.insert(len(parts) * where_, extra)
    if len(parts) > 1:
        a = concatenate(parts, axis)
    op = UFUNCS["not_equal"] if a.dtype == np.bool_ else _sub
    upper, lower = _along(a.ndim, axis, slice(1, None)), _along(a.ndim, axis, slice(None, -1))
    for _ in range(n):
        a = op(a[upper], a[lower])
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened `ary`, with `to_begin` and
    `to_end` joined before and after (cast to ary's dtype, which they must reach by a
    same-kind cast).

    Examples
    --------
    >>> ga.ediff1d(ga.asarray([1, 2, 4, 7]), to_begin=-99).get()
    array([-99,   1,   2,   3])
    """
    a = _array(ary).ravel()
    parts = [_sub(a[1:], a[:-1])]
    for name, extra, first in (("to_begin", to_begin, True), ("to_end", to_end, False)):
        if extra is None:
            continue
        extra = _array(extra, a.context)
        if not np.can_cast(extra.dtype, a.dtype, casting="same_kind"):
            raise ArgumentTypeError(f"dtype of `{name}` must be compatible with input `ary` "
                                    f"under the `same_kind` rule ({extra.dtype} to {a.dtype})")
        extra = extra.ravel().astype(a.dtype, copy=False)
        parts.insert(0 if first else len(parts), extra)
    return parts[0] if len(parts) == 1 else concatenate(parts)


def _spacing(spacing, n, ctx):
    """One of gradient's spacings: a scalar, or the differences of 1-d coordinates (a scalar
    again when they are evenly spaced, as numpy tests)."""
    if np.ndim(spacing) == 0:
        return spacing
    x = _array(spacing, ctx)
    if x.ndim != 1:
        raise ShapeError(f"distances must be either scalars or 1d, got shape {x.shape}")
    if x.shape[0] != n:
        raise ShapeError(f"when 1d, distances must match the length of the corresponding "
                         f"dimension ({x.shape[0]} coordinates for an axis of {n})")
    if x.dtype.kind in "iu":
        x = x.astype(np.float64)
    dx = _sub(x[1:], x[:-1])
    if dx.size and bool(all_(UFUNCS["equal"](dx, dx[0]))):
        return dx[0]
    return dx


def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient of sampled values: second-order central differences inside, first or
    second order (`edge_order`) one-sided differences at the ends, along each axis.

    Parameters
    ----------
    f : GpuArray or array_like
    *varargs : scalars or 1-d arrays, optional
        The spacing: one scalar for every axis, or one per axis (a scalar step, or the
        coordinates along it). Default 1.
    axis : int or tuple of int, optional
        The axes (all by default).
    edge_order : {1, 2}, optional

    Returns
    -------
    GpuArray or tuple of GpuArray
        One derivative per axis, of f's shape (floats; integers give float64).

    Examples
    --------
    >>> ga.gradient(ga.asarray([1.0, 2.0, 4.0, 7.0, 11.0])).get()
    array([1. , 1.5, 2.5, 3.5, 4. ])
    """
    f = _array(f)
    nd = f.ndim
    axes = tuple(range(nd)) if axis is None else _axis_tuple(axis, nd)
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = [_spacing(s, f.shape[ax], f.context) for s, ax in zip(varargs, axes)]
    else:
        raise ArgumentTypeError(f"invalid number of arguments: {len(varargs)} spacings for "
                                f"{len(axes)} axes")
    if edge_order not in (1, 2):
        raise ArgumentError(f"'edge_order' must be 1 or 2, got {edge_order!r}")
    if f.dtype.kind not in "fc":
        f = f.astype(np.float64)
    results = []
    for ax, h in zip(axes, spacings):
        if f.shape[ax] < edge_order + 1:
            raise ArgumentError(
                f"Shape of array too small to calculate a numerical gradient, at least "
                f"(edge_order + 1) elements are required (axis {ax} has {f.shape[ax]})")
        results.append(_gradient_axis(f, ax, h, edge_order))
    return results[0] if len(axes) == 1 else tuple(results)


def _gradient_axis(f, ax, h, edge_order):
    """gradient along one axis with spacing h (a scalar, or a GpuArray of differences)."""
    nd = f.ndim
    out = empty(f.shape, f.dtype, context=f.context)

    def at(key):
        return f[_along(nd, ax, key)]

    def combine(weights, keys, key):
        a, b, c = weights
        out[_along(nd, ax, key)] = _add(_add(_mul(a, at(keys[0])), _mul(b, at(keys[1]))),
                                        _mul(c, at(keys[2])))

    uniform = not isinstance(h, ArrayBase) or h.ndim == 0
    if uniform:
        out[_along(nd, ax, slice(1, -1))] = _div(_sub(at(slice(2, None)), at(slice(None, -2))),
                                                 2.0 * h)
    else:
        shape = [1] * nd
        shape[ax] = -1
        d1, d2 = h[:-1], h[1:]
        weights = (-d2 / (d1 * (d1 + d2)), (d2 - d1) / (d1 * d2), d1 / (d2 * (d1 + d2)))
        combine([w.reshape(shape) for w in weights],
                (slice(None, -2), slice(1, -1), slice(2, None)), slice(1, -1))
    if edge_order == 1:
        first, last = (h, h) if uniform else (h[0], h[-1])
        out[_along(nd, ax, 0)] = _div(_sub(at(1), at(0)), first)
        out[_along(nd, ax, -1)] = _div(_sub(at(-1), at(-2)), last)
        return out
    if uniform:
        head = (-1.5 / h, 2.0 / h, -0.5 / h)
        tail = (0.5 / h, -2.0 / h, 1.5 / h)
    else:
        d1, d2 = h[0], h[1]
        head = (-(2.0 * d1 + d2) / (d1 * (d1 + d2)), (d1 + d2) / (d1 * d2),
                -d1 / (d2 * (d1 + d2)))
        d1, d2 = h[-2], h[-1]
        tail = (d2 / (d1 * (d1 + d2)), -(d2 + d1) / (d1 * d2),
                (2.0 * d2 + d1) / (d2 * (d1 + d2)))
    combine(head, (0, 1, 2), 0)
    combine(tail, (-3, -2, -1), -1)
    return out


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of `y` along `axis` by the trapezoidal rule, at coordinates `x` (1-d
    along the axis, or y's shape) or evenly spaced by `dx`.

    Examples
    --------
    >>> float(ga.trapezoid(ga.asarray([1.0, 2.0, 3.0]), dx=0.5))
    2.0
    """
    y = _array(y)
    axis = _normalize_axis(axis, y.ndim)
    if x is None:
        d = dx
    else:
        x = _array(x, y.context)
        if x.ndim == 1:
            d = diff(x)
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = d.reshape(shape)
        else:
            d = diff(x, axis=axis)
    upper, lower = y[_along(y.ndim, axis, slice(1, None))], y[_along(y.ndim, axis,
                                                                      slice(None, -1))]
    return sum_(_div(_mul(d, _add(upper, lower)), 2.0), axis=axis)


def trapz(y, x=None, dx=1.0, axis=-1):
    """numpy 1.x's name of `trapezoid` (removed in numpy 2.4)."""
    return trapezoid(y, x, dx, axis)


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """`p` with jumps between neighbours along `axis` larger than `discont` (default
    period / 2) undone by adding multiples of `period`.

    Examples
    --------
    >>> ga.unwrap(ga.asarray([0.0, 3.0, 6.5, 2.0])).get().round(3)
    array([0.   , 3.   , 0.217, 2.   ])
    """
    p = _array(p)
    axis = _normalize_axis(axis, p.ndim)
    dd = diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    dt = np.result_type(dd.dtype, period)
    if dt.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    ddmod = _add(UFUNCS["remainder"](_sub(dd, low), period), low)
    if ambiguous:
        ddmod = where(UFUNCS["equal"](ddmod, low) & UFUNCS["greater"](dd, 0), high, ddmod)
    correct = where(UFUNCS["less"](UFUNCS["absolute"](dd), discont), 0, _sub(ddmod, dd))
    out = p.astype(dt)
    tail = _along(p.ndim, axis, slice(1, None))
    out[tail] = _add(p[tail], cumsum(correct, axis=axis))
    return out


def trim_zeros(filt, trim="fb", axis=None):
    """`filt` without its leading ('f') and/or trailing ('b') zeros along `axis` (None:
    every axis, the smallest box holding the nonzero values); a view.

    Examples
    --------
    >>> ga.trim_zeros(ga.asarray([0, 0, 1, 2, 0, 3, 0])).get()
    array([1, 2, 0, 3])
    """
    f = _array(filt)
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ArgumentError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = tuple(range(f.ndim)) if axis is None else _axis_tuple(axis, f.ndim, "axis")
    if not axes:
        return f
    nonzero = UFUNCS["not_equal"](f, 0)
    marks = []
    for ax in axes:
        others = tuple(d for d in range(f.ndim) if d != ax)
        line = any_(nonzero, axis=others) if others else nonzero
        marks += [argmax(line), argmax(line[::-1])]
    found = stack([m.astype(np.int64) for m in marks] + [any_(nonzero).astype(np.int64)]).get()
    key = [slice(None)] * f.ndim
    for i, ax in enumerate(axes):
        first, last = int(found[2 * i]), f.shape[ax] - int(found[2 * i + 1])
        if not found[-1]:
            first = last = 0
        key[ax] = slice(first if "f" in trim or not found[-1] else None,
                        last if "b" in trim or not found[-1] else None)
    return f[tuple(key)]


# ---------------------------------------------------------------- products of vectors

def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross products of 3-vectors (or 2-vectors, numpy's deprecated form) along `axisa` of
    `a` and `axisb` of `b`, the result's vectors along `axisc`; `axis` sets all three.

    Examples
    --------
    >>> ga.cross(ga.asarray([1.0, 0.0, 0.0]), ga.asarray([0.0, 1.0, 0.0])).get()
    array([0., 0., 1.])
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _pair(a, b)
    if a.ndim < 1 or b.ndim < 1:
        raise ArgumentError("At least one array has zero dimension")
    a = moveaxis(a, _normalize_axis(axisa, a.ndim), -1)
    b = moveaxis(b, _normalize_axis(axisb, b.ndim), -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ShapeError(f"incompatible dimensions for cross product\n(dimension must be 2 or "
                         f"3, got {na} and {nb})")
    if 2 in (na, nb) and np.lib.NumpyVersion(np.__version__) >= "2.0.0":
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=2)
    dt = np.promote_types(a.dtype, b.dtype)
    a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
    p = [a[..., i] for i in range(na)]
    q = [b[..., i] for i in range(nb)]
    third = _sub(_mul(p[0], q[1]), _mul(p[1], q[0]))
    if na == nb == 2:
        return third
    if na == 2:
        parts = [_mul(p[1], q[2]), -_mul(p[0], q[2]), third]
    elif nb == 2:
        parts = [-_mul(p[2], q[1]), _mul(p[2], q[0]), third]
    else:
        parts = [_sub(_mul(p[1], q[2]), _mul(p[2], q[1])),
                 _sub(_mul(p[2], q[0]), _mul(p[0], q[2])), third]
    shape = broadcast_shapes(*(x.shape for x in parts))
    result = stack([broadcast_to(x, shape) for x in parts], axis=-1)
    return moveaxis(result, -1, _normalize_axis(axisc, result.ndim))


def kron(a, b):
    """The Kronecker product: blocks a[i, j] * b, as one broadcast multiplication.

    Examples
    --------
    >>> ga.kron(ga.asarray([1, 10]), ga.asarray([1, 2, 3])).get()
    array([ 1,  2,  3, 10, 20, 30])
    """
    b = _array(b)
    a = _array(a, b.context)
    if a.ndim == 0 or b.ndim == 0:
        return _mul(a, b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    wide_a = a.reshape([n for s in sa for n in (s, 1)])
    wide_b = b.reshape([n for s in sb for n in (1, s)])
    return _mul(wide_a, wide_b).reshape([x * y for x, y in zip(sa, sb)])


# ---------------------------------------------------------------- convolution

_MODES = {"v": 0, "s": 1, "f": 2}
_MODE_NAMES = ("valid", "same", "full")


def _mode(mode):
    if isinstance(mode, str) and mode and mode[0].lower() in _MODES:
        return _MODES[mode[0].lower()]
    if isinstance(mode, int) and not isinstance(mode, bool) and mode in (0, 1, 2):
        return mode
    raise ArgumentError(f"mode must be one of 'valid', 'same' or 'full', not {mode!r}")


def _full_correlation(a, v):
    """c[i] = sum_k a[i + k - (m - 1)] * v[k], i in [0, n + m - 1), for 1-d a (n) and v (m)
    of one dtype: rows of the zero-padded `a` overlapping by all but one element, times v.
    The shorter operand is the one that slides."""
    n, m = a.shape[0], v.shape[0]
    if m > n:
        return _full_correlation(v, a)[::-1]
    padded = zeros(n + 2 * (m - 1), a.dtype, context=a.context)
    padded[m - 1:m - 1 + n] = a
    rows = padded._view((n + m - 1, m), (a.itemsize, a.itemsize), offset=padded.offset)
    return matmul(rows, _contiguous(v))


def _correlate(a, v, mode, conjugate):
    """numpy's correlate of 1-d `a` and `v` in `mode` (0 valid, 1 same, 2 full)."""
    v = _array(v)
    a = _array(a, v.context)
    for name, x in (("a", a), ("v", v)):
        if x.ndim != 1:
            raise ShapeError(f"object too deep for desired array: {name} has shape {x.shape}, "
                             f"correlate and convolve take 1-d arrays")
        if x.size == 0:
            raise ArgumentError(f"{name} cannot be empty")
    dt = np.result_type(a.dtype, v.dtype)
    work = np.dtype(np.int64) if dt == np.bool_ else dt
    a, v = a.astype(work, copy=False), v.astype(work, copy=False)
    if conjugate and dt.kind == "c":
        v = UFUNCS["conjugate"](v)
    full = _full_correlation(a, v)
    n, m = a.shape[0], v.shape[0]
    if mode == 1:
        start = (m - 1) // 2 if n >= m else n // 2
        full = full[start:start + max(n, m)]
    elif mode == 0:
        full = full[min(n, m) - 1:max(n, m)]
    if dt == np.bool_:
        return UFUNCS["not_equal"](full, 0)
    return _contiguous(full)


def correlate(a, v, mode="valid"):
    """Cross-correlation of two 1-d sequences: c[k] = sum_n a[n + k] * conj(v[n]), over the
    lags `mode` keeps ('valid', 'same' or 'full'), as numpy.correlate.

    Examples
    --------
    >>> ga.correlate(ga.asarray([1.0, 2.0, 3.0]), ga.asarray([0.0, 1.0, 0.5])).get()
    array([3.5])
    """
    return _correlate(a, v, _mode(mode), True)


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-d sequences ('full', 'same' or 'valid' part).

    Examples
    --------
    >>> ga.convolve(ga.asarray([1.0, 2.0, 3.0]), ga.asarray([0.0, 1.0, 0.5])).get()
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    v = _array(v)
    a = _array(a, v.context)
    if a.ndim == 1 and v.ndim == 1 and v.shape[0] > a.shape[0]:
        a, v = v, a
    if v.ndim == 1:
        v = v[::-1]
    return _correlate(a, v, _mode(mode), False)


# ---------------------------------------------------------------- interpolation

def _interp_real(x, xp, fp, left, right):
    """interp on float64 data: numpy's choices at the ends, at equal coordinates, and for
    NaN (a slope that gives NaN is tried from the right end of the interval)."""
    n = xp.shape[0]
    if n == 1:
        inside = where(x > xp[0], fp[0] if right is None else right, fp[0])
        return where(x < xp[0], fp[0] if left is None else left, inside)
    j = _sub(searchsorted(xp, x, side="right"), 1)
    k = UFUNCS["minimum"](UFUNCS["maximum"](j, 0), n - 2)
    k1 = _add(k, 1)
    x0, x1 = take(xp, k, mode="clip"), take(xp, k1, mode="clip")
    y0, y1 = take(fp, k, mode="clip"), take(fp, k1, mode="clip")
    slope = _div(_sub(y1, y0), _sub(x1, x0))
    value = _add(_mul(slope, _sub(x, x0)), y0)
    again = _add(_mul(slope, _sub(x, x1)), y1)
    again = where(UFUNCS["isnan"](again) & UFUNCS["equal"](y0, y1), y0, again)
    value = where(UFUNCS["isnan"](value), again, value)
    value = where(UFUNCS["equal"](x, x0), y0, value)
    beyond = where(UFUNCS["equal"](x, x1), y1, y1 if right is None else right)
    value = where(UFUNCS["greater_equal"](j, n - 1), beyond, value)
    value = where(UFUNCS["less"](j, 0), y0 if left is None else left, value)
    return where(UFUNCS["isnan"](x), x, value)


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional piecewise-linear interpolation of the points (xp, fp) at `x`, as
    numpy.interp: `xp` increasing; `left`/`right` (default fp[0], fp[-1]) beyond the ends;
    `period` for periodic coordinates. float64 (complex128 for complex `fp`).

    Examples
    --------
    >>> xp = ga.asarray([1.0, 2.0, 3.0]); fp = ga.asarray([3.0, 2.0, 0.0])
    >>> ga.interp(ga.asarray([0.0, 1.5, 2.72, 3.14]), xp, fp).get()
    array([3.  , 2.5 , 0.56, 0.  ])
    """
    x = _array(x)
    xp, fp = _array(xp, x.context), _array(fp, x.context)
    for name, v in (("xp", xp), ("fp", fp)):
        if v.ndim != 1:
            raise ShapeError(f"{name} must be 1-d, got shape {v.shape}")
    if xp.shape[0] == 0:
        raise ArgumentError("array of sample points is empty")
    if xp.shape[0] != fp.shape[0]:
        raise ArgumentError(f"fp and xp are not of the same length ({fp.shape[0]} and "
                            f"{xp.shape[0]})")
    complex_ = fp.dtype.kind == "c"
    x, xp = x.astype(np.float64, copy=False), xp.astype(np.float64, copy=False)
    fp = fp.astype(np.complex128 if complex_ else np.float64, copy=False)
    if period is not None:
        if period == 0:
            raise ArgumentError("period must be a non-zero value")
        period = abs(period)
        left = right = None
        x, xp = UFUNCS["remainder"](x, period), UFUNCS["remainder"](xp, period)
        order = argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = concatenate([_sub(xp[-1:], period), xp, _add(xp[:1], period)])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    if not complex_:
        return _interp_real(x, xp, fp, left, right)
    flat = x.reshape(-1)
    out = empty(flat.shape, np.complex128, context=x.context)
    pairs = out.view(np.float64).reshape(-1, 2)
    for i, part in enumerate(("real", "imag")):
        ends = [None if e is None else getattr(np.complex128(e), part) for e in (left, right)]
        pairs[:, i] = _interp_real(flat, xp, (real if i == 0 else imag)(fp), *ends)
    return out.reshape(x.shape)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """`num` samples from start to stop evenly spaced on a log scale (negative and complex
    ends too), the ends exact, as numpy.geomspace.

    Examples
    --------
    >>> ga.geomspace(1, 1000, num=4).get()
    array([   1.,   10.,  100., 1000.])
    """
    ctx = _context(start, stop)
    start, stop = _array(start, ctx), _array(stop, ctx)
    zero = UFUNCS["equal"]
    if bool(any_(zero(start, 0))) or bool(any_(zero(stop, 0))):
        raise ArgumentError("Geometric sequence cannot include zero")
    dt = np.result_type(start.dtype, stop.dtype, float(num), np.zeros((), dtype).dtype)
    start, stop = start.astype(dt), stop.astype(dt)
    sign = _div(start, UFUNCS["absolute"](start)) if dt.kind == "c" else UFUNCS["sign"](start)
    start, stop = _div(start, sign), _div(stop, sign)
    log10 = UFUNCS["log10"]
    result = logspace(log10(start), log10(stop), num=num, endpoint=endpoint, base=10.0,
                      dtype=dt)
    if num > 0:
        result[0] = start
        if num > 1 and endpoint:
            result[-1] = stop
    result = _mul(result, sign)
    if axis != 0:
        result = moveaxis(result, 0, axis)
    return result if dtype is None else result.astype(dtype, copy=False)


# ---------------------------------------------------------------- special functions

def sinc(x):
    """sin(pi x) / (pi x), 1 at 0.

    Examples
    --------
    >>> ga.sinc(ga.asarray([0.0, 0.5, 1.0])).get().round(4)
    array([1.    , 0.6366, 0.    ])
    """
    x = _array(x)
    y = _mul(np.pi, where(UFUNCS["equal"](x, 0), 1.0e-20, x))
    return _div(UFUNCS["sin"](y), y)


@functools.cache
def _i0_series():
    """Chebyshev coefficients of exp(-x) I0(x) on [0, 8] (in t = x/4 - 1) and of
    exp(-x) sqrt(x) I0(x) on [8, inf) (in t = 16/x - 1), interpolated once at Chebyshev
    points: from numpy's i0 up to x = 700, beyond from I0's asymptotic series (where
    exp(x) overflows), each to double precision."""
    cheb = np.polynomial.chebyshev
    # I0(x) ~ exp(x) / sqrt(2 pi x) * sum_k ((2k - 1)!!)^2 / (k! (8x)^k)
    terms = [1.0]
    for k in range(1, 16):
        terms.append(terms[-1] * (2 * k - 1) ** 2 / (8 * k))

    def near(t):
        x = 4.0 * (t + 1.0)
        return np.exp(-x) * np.i0(x)

    def far(t):
        x = 16.0 / (t + 1.0)
        low = np.minimum(x, 700.0)
        series = sum(c / x**k for k, c in enumerate(terms)) / np.sqrt(2.0 * np.pi)
        return np.where(x < 700.0, np.exp(-low) * np.sqrt(low) * np.i0(low), series)

    return (tuple(float(c) for c in cheb.chebinterpolate(near, 32)),
            tuple(float(c) for c in cheb.chebinterpolate(far, 26)))


def _clenshaw(t, coefficients):
    b1 = b2 = 0.0
    for c in coefficients[:0:-1]:
        b1, b2 = 2.0 * t * b1 - b2 + c, b1
    return t * b1 - b2 + coefficients[0]


@fuse
def _i0_kernel(x):
    near, far = _i0_series()
    inside = x <= 8.0
    small = _clenshaw(x * 0.25 - 1.0, near)
    large = _clenshaw(16.0 / x - 1.0, far) / UFUNCS["sqrt"](x)
    return UFUNCS["exp"](x) * where(inside, small, large)


def i0(x):
    """The modified Bessel function of the first kind, order 0 (real input; integers
    computed in float64), from two Chebyshev expansions in one kernel.

    Examples
    --------
    >>> ga.i0(ga.asarray([0.0, 1.0, 2.0])).get().round(4)
    array([1.    , 1.2661, 2.2796])
    """
    x = _array(x)
    if x.dtype.kind == "c":
        raise ArgumentTypeError(f"i0 not supported for complex values ({x.dtype})")
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    return _i0_kernel(UFUNCS["absolute"](x))


# ---------------------------------------------------------------- complex parts, infinities

def angle(z, deg=False):
    """The counterclockwise angle of each complex `z` from the positive real axis (real
    input: 0 or pi), in radians or degrees.

    Examples
    --------
    >>> ga.angle(ga.asarray([1.0, 1j, 1 + 1j]), deg=True).get()
    array([ 0., 90., 45.])
    """
    z = _array(z)
    y, x = (imag(z), real(z)) if z.dtype.kind == "c" else (0, z)
    a = UFUNCS["arctan2"](y, x)
    return _mul(a, 180 / np.pi) if deg else a


def iscomplex(x):
    """Whether each element has a nonzero imaginary part (False for real dtypes).

    Examples
    --------
    >>> ga.iscomplex(ga.asarray([1 + 1j, 1 + 0j, 4.5 + 0j])).get()
    array([ True, False, False])
    """
    x = _array(x)
    if x.dtype.kind == "c":
        return UFUNCS["not_equal"](imag(x), 0)
    return zeros(x.shape, np.bool_, context=x.context)


def isreal(x):
    """Whether each element has a zero imaginary part (True for real dtypes).

    Examples
    --------
    >>> ga.isreal(ga.asarray([1 + 1j, 1 + 0j, 4.5 + 0j])).get()
    array([False,  True,  True])
    """
    x = _array(x)
    if x.dtype.kind == "c":
        return UFUNCS["equal"](imag(x), 0)
    return UFUNCS["logical_not"](zeros(x.shape, np.bool_, context=x.context))


def real_if_close(a, tol=100):
    """The real part of a complex `a` whose imaginary parts are all within `tol` machine
    epsilons of zero (one Python bool read back), else `a`.

    Examples
    --------
    >>> ga.real_if_close(ga.asarray([2.1 + 4e-14j, 5.2 + 3e-15j]), tol=1000).get()
    array([2.1, 5.2])
    """
    a = _array(a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = np.finfo(a.dtype).eps * tol
    if bool(all_(UFUNCS["less"](UFUNCS["absolute"](imag(a)), tol))):
        return real(a)
    return a


def _infinite(x, out, negative):
    x = _array(x)
    if x.dtype.kind == "c":
        raise ArgumentTypeError(f"This operation is not supported for {x.dtype} values "
                                f"because it would be ambiguous.")
    sign = UFUNCS["signbit"](x)
    if not negative:
        sign = UFUNCS["logical_not"](sign)
    return UFUNCS["logical_and"](UFUNCS["isinf"](x), sign, out=out)


def isposinf(x, out=None):
    """Whether each element is positive infinity.

    Examples
    --------
    >>> ga.isposinf(ga.asarray([-np.inf, 0.0, np.inf])).get()
    array([False, False,  True])
    """
    return _infinite(x, out, False)


def isneginf(x, out=None):
    """Whether each element is negative infinity.

    Examples
    --------
    >>> ga.isneginf(ga.asarray([-np.inf, 0.0, np.inf])).get()
    array([ True, False, False])
    """
    return _infinite(x, out, True)


# ---------------------------------------------------------------- comparisons

def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise |a - b| <= atol + rtol * |b| (b is the reference), exact for infinities;
    NaNs equal only with `equal_nan`.

    Examples
    --------
    >>> ga.isclose(ga.asarray([1e10, 1e-7]), ga.asarray([1.00001e10, 1e-8])).get()
    array([ True, False])
    """
    ctx = _context(a, b)
    x, y, atol, rtol = (v if isinstance(v, int | float | complex) else _array(v, ctx)
                        for v in (a, b, atol, rtol))
    if not isinstance(x, ArrayBase) and not isinstance(y, ArrayBase):
        x = _array(x, ctx)
    if isinstance(y, ArrayBase):
        dt = np.result_type(y.dtype, 1.0)
        y = y.astype(dt, copy=False)
    elif isinstance(y, int):
        y = float(y)
    absolute = UFUNCS["absolute"]
    near = UFUNCS["less_equal"](absolute(_sub(x, y)), _add(atol, _mul(rtol, absolute(y))))
    result = (near & UFUNCS["isfinite"](y)) | UFUNCS["equal"](x, y)
    if equal_nan:
        result = result | (UFUNCS["isnan"](x) & UFUNCS["isnan"](y))
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of `a` is close to `b` (isclose), as a Python bool (one
    value read back).

    Examples
    --------
    >>> ga.allclose(ga.asarray([1e10, 1e-8]), ga.asarray([1.00001e10, 1e-9]))
    True
    """
    return bool(all_(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """True when `a1` and `a2` have one shape and equal elements (NaNs equal with
    `equal_nan`), as a Python bool.

    Examples
    --------
    >>> ga.array_equal(ga.asarray([1, 2]), ga.asarray([1, 2])), ga.array_equal([1, 2], [1])
    (True, False)
    """
    x, y = _pair(a1, a2)
    if x.shape != y.shape:
        return False
    same = UFUNCS["equal"](x, y)
    if equal_nan and not (x.dtype.kind in "biu" and y.dtype.kind in "biu"):
        same = same | (UFUNCS["isnan"](x) & UFUNCS["isnan"](y))
    return bool(all_(same))


def array_equiv(a1, a2):
    """True when `a1` and `a2` broadcast to one shape and are equal there, as a Python
    bool.

    Examples
    --------
    >>> ga.array_equiv(ga.asarray([[1, 2], [1, 2]]), [1, 2])
    True
    """
    x, y = _pair(a1, a2)
    try:
        broadcast_shapes(x.shape, y.shape)
    except ShapeError:
        return False
    return bool(all_(UFUNCS["equal"](x, y)))


FUNCTIONS = {f.__name__: f for f in (
    diff, ediff1d, gradient, trapezoid, trapz, unwrap, trim_zeros, cross, kron, correlate,
    convolve, interp, geomspace, sinc, i0, angle, iscomplex, isreal, real_if_close, isposinf,
    isneginf, isclose, allclose, array_equal, array_equiv)}
