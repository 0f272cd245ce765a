"""numpy's statistics on GpuArrays: average, median and the quantile family (quantile,
percentile and their NaN-ignoring versions, with every `method=` numpy has), the other
NaN-ignoring reductions (nanvar, nanstd, nanargmax, nanargmin, nancumsum, nancumprod), cov,
corrcoef, histogram (1-d, 2-d, d-d), histogram_bin_edges, digitize and bincount.

Order statistics sort each slice on the device (the reduced axes merged last) and gather
the positions the method asks for. Where every slice has the same length those positions
depend on the quantiles alone and are computed on the host with numpy's formulas; the
NaN-ignoring versions count each slice's numbers on the device and compute the positions
there, with the same formulas. Counting (bincount, histogram) sorts the values and searches
the sorted values for each bin's edges: counts are exact differences of positions, weighted
sums differences of a running sum (in float64), as numpy's histogram does for bins given as
edges. What comes back to the host is what sizes a result or decides an error: the largest
value bincount sees, a histogram's data range and bin width, the checks of weights and of
digitize's bins.
"""

import math
import operator
import types
import warnings

import numpy as np

from .base import ArrayBase, arange, asarray, broadcast_to, empty, zeros
from .blas import matmul
from .errors import (
    ArgumentError,
    ArgumentTypeError,
    IndexOutOfRange,
    ShapeError,
    UnsupportedError,
)
from .indexing import take
from .manipulation import _axis_tuple, concatenate, diag, moveaxis, stack
from .numerical import _array, _context
from .reduction import all as all_
from .reduction import any as any_
from .reduction import argmax, argmin, cumprod, cumsum, mean, reduce, std, var
from .reduction import max as max_
from .reduction import min as min_
from .reduction import sum as sum_
from .setops import _gather, _rows
from .sorting import argsort, searchsorted, sort
from .ufuncs import UFUNCS, real, where

__all__ = [
    "FUNCTIONS", "average", "bincount", "corrcoef", "cov", "digitize", "histogram",
    "histogram2d", "histogram_bin_edges", "histogramdd", "median", "nanargmax", "nanargmin",
    "nancumprod", "nancumsum", "nanmedian", "nanpercentile", "nanquantile", "nanstd", "nanvar",
    "percentile", "quantile",
]

_NoValue = np._NoValue
# numpy 2 keeps a Python float q weak: quantile(float32 data, 0.5) is float32 there
_NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
_add, _sub, _mul, _div = (UFUNCS[n] for n in ("add", "subtract", "multiply", "true_divide"))
_isnan = UFUNCS["isnan"]
_select = where  # (nanvar and nanstd take a parameter named where)


def _host(value):
    """A small parameter (quantiles, bins) as a numpy array: a GpuArray is read back."""
    return value.get() if isinstance(value, ArrayBase) else np.asarray(value)


def _read(*scalars):
    """Device scalars read back together (one transfer), as numpy scalars of one dtype."""
    return stack([s.reshape(()) for s in scalars]).get()


def _kept(r, shape, axes, keepdims, lead=()):
    """r (shape lead + the kept axes) with the reduced axes back as 1s where keepdims."""
    if keepdims is _NoValue or not keepdims:
        return r
    return r.reshape(lead + tuple(1 if d in axes else n for d, n in enumerate(shape)))


def _into(result, out):
    if out is None:
        return result
    if not isinstance(out, ArrayBase):
        raise ArgumentTypeError(f"out= must be a GpuArray, not {type(out).__name__}")
    if out.shape != result.shape:
        raise ShapeError(f"out has shape {out.shape}, the result has shape {result.shape}")
    return out._assign(result)


# ---------------------------------------------------------------- average

def _weights(weights, a, axes):
    """numpy's check of weights against `a` (reduced over `axes`, None: all): a GpuArray
    that broadcasts against `a`."""
    w = _array(weights, a.context)
    if w.shape == a.shape:
        return w
    if axes is None:
        raise ArgumentTypeError(f"Axis must be specified when shapes of a and weights differ "
                                f"({a.shape} and {w.shape}).")
    if w.shape != tuple(a.shape[ax] for ax in axes):
        raise ShapeError(f"Shape of weights must be consistent with shape of a along "
                         f"specified axis (weights {w.shape}, a {a.shape}, axis {axes}).")
    w = w.transpose(tuple(int(i) for i in np.argsort(axes)))
    return w.reshape(tuple(n if d in axes else 1 for d, n in enumerate(a.shape)))


def average(a, axis=None, weights=None, returned=False, *, keepdims=_NoValue):
    """The weighted average over `axis`: sum(a * weights) / sum(weights) (the mean without
    weights), in numpy's result dtype; with `returned`, also the sum of the weights.

    Examples
    --------
    >>> ga.average(ga.asarray([1.0, 2.0, 4.0]), weights=ga.asarray([3.0, 1.0, 0.0])).get()
    array(1.25)
    """
    a = _array(a)
    axes = None if axis is None else _axis_tuple(axis, a.ndim, "axis")
    keep = {} if keepdims is _NoValue else {"keepdims": keepdims}
    if weights is None:
        avg = mean(a, axes, **keep)
        scale = a.size / avg.size if avg.size else 0
        scale = np.asarray(scale).astype(avg.dtype)[()]
        total = zeros(avg.shape, avg.dtype, context=a.context) + scale if returned else None
    else:
        w = _weights(weights, a, axes)
        if a.dtype.kind in "biu":
            dt = np.result_type(a.dtype, w.dtype, np.float64)
        else:
            dt = np.result_type(a.dtype, w.dtype)
        total = sum_(w, axes, dtype=dt, **keep)
        if bool(any_(UFUNCS["equal"](total, 0.0))):
            raise ArgumentError("Weights sum to zero, can't be normalized")
        avg = _div(sum_(_mul(a, w, dtype=dt), axes, **keep), total)
    if not returned:
        return avg
    if total.shape != avg.shape:
        total = broadcast_to(total, avg.shape).copy()
    return avg, total


# ---------------------------------------------------------------- median

def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median over `axis` (None: all; a tuple of axes too): the mean of the middle one
    or two sorted values (NaN where a slice holds a NaN), in mean's dtype.

    Examples
    --------
    >>> ga.median(ga.asarray([[10, 7, 4], [3, 2, 1]]), axis=1).get()
    array([7., 2.])
    """
    a = _array(a)
    rows, _, axes = _rows(a, axis)
    s = sort(rows, axis=-1)
    n = s.shape[-1]
    k = n // 2
    result = mean(s[..., k:k + 1] if n % 2 else s[..., max(k - 1, 0):k + 1], axis=-1)
    if a.dtype.kind in "fc" and n:
        last = s[..., -1]
        result = where(_isnan(last), last.astype(result.dtype, copy=False), result)
    return _into(_kept(result, a.shape, axes, keepdims), out)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=_NoValue):
    """The median over `axis` of the values that are not NaN (NaN where all are).

    Examples
    --------
    >>> ga.nanmedian(ga.asarray([[10.0, np.nan, 4.0], [3.0, 2.0, 1.0]]), axis=1).get()
    array([7., 2.])
    """
    a = _array(a)
    if a.size == 0 or a.dtype.kind not in "f":
        if a.size == 0:
            return _empty_nan(a, axis, out, keepdims)
        return median(a, axis, out, overwrite_input, keepdims is not _NoValue and keepdims)
    rows, _, axes = _rows(a, axis)
    s = sort(rows, axis=-1)
    counts = reduce(rows, "count_notnan", -1, np.int64, np.int64, keepdims=True)
    lo = UFUNCS["maximum"](UFUNCS["floor_divide"](_sub(counts, 1), 2), 0)
    hi = UFUNCS["floor_divide"](counts, 2)
    low, high = _gather(s, lo)[..., 0], _gather(s, hi)[..., 0]
    dt = mean(zeros(1, a.dtype, context=a.context)).dtype
    work = np.float32 if dt == np.float16 else dt
    pair = _div(_add(low.astype(work), high.astype(work)), 2)
    result = where(UFUNCS["equal"](lo, hi)[..., 0], low, pair).astype(dt, copy=False)
    return _into(_kept(result, a.shape, axes, keepdims), out)


def _empty_nan(a, axis, out, keepdims):
    """The NaN-ignoring statistics of an empty array: numpy's nanmean (NaN, warned)."""
    dt = np.result_type(a.dtype, np.float16) if a.dtype.kind == "f" else np.float64
    axes = tuple(range(a.ndim)) if axis is None else _axis_tuple(axis, a.ndim, "axis")
    keep = keepdims is not _NoValue and keepdims
    shape = tuple(1 if d in axes else n for d, n in enumerate(a.shape) if keep or d not in axes)
    warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=3)
    return _into(zeros(shape, dt, context=a.context) + np.nan, out)


# ---------------------------------------------------------------- the quantile family

# numpy's positions per method, from the sample size n and the quantiles q, with xp the
# array namespace they are computed in (numpy on the host, _DEVICE for per-slice counts):
# ("index", positions) where the method picks a value, ("lerp", virtual index, fix) where it
# interpolates between floor(v) and floor(v) + 1 with weight fix(v - floor(v), v).

def _boundary(xp, index, pick_lower):
    lower = xp.floor(index)
    chosen = xp.where(pick_lower(index - lower, index), lower, lower + 1)
    chosen = chosen.astype(np.int64)
    return xp.where(chosen < 0, 0, chosen)


def _continuous(alpha, beta):
    return lambda xp, n, q: ("lerp", n * q + (alpha + q * (1 - alpha - beta)) - 1, None)


_METHODS = {
    "inverted_cdf": lambda xp, n, q: (
        "index", _boundary(xp, n * q - 1, lambda g, v: g == 0)),
    "averaged_inverted_cdf": lambda xp, n, q: (
        "lerp", n * q - 1, lambda xp, g, v: xp.where(g == 0, 0.5, 1.0)),
    "closest_observation": lambda xp, n, q: (
        "index", _boundary(xp, n * q - 1 - 0.5,
                           lambda g, v: (g == 0) & (xp.floor(v) % 2 == 1))),
    "interpolated_inverted_cdf": _continuous(0, 1),
    "hazen": _continuous(0.5, 0.5),
    "weibull": _continuous(0, 0),
    "linear": lambda xp, n, q: ("lerp", (n - 1) * q, None),
    "median_unbiased": _continuous(1 / 3.0, 1 / 3.0),
    "normal_unbiased": _continuous(3 / 8.0, 3 / 8.0),
    "lower": lambda xp, n, q: ("index", xp.floor((n - 1) * q).astype(np.int64)),
    "higher": lambda xp, n, q: ("index", xp.ceil((n - 1) * q).astype(np.int64)),
    "midpoint": lambda xp, n, q: (
        "lerp", 0.5 * (xp.floor((n - 1) * q) + xp.ceil((n - 1) * q)),
        lambda xp, g, v: xp.where(v % 1 == 0, 0.0, 0.5)),
    "nearest": lambda xp, n, q: ("index", xp.rint((n - 1) * q).astype(np.int64)),
}

_DEVICE = types.SimpleNamespace(floor=UFUNCS["floor"], ceil=UFUNCS["ceil"], rint=UFUNCS["rint"],
                                where=where, isnan=_isnan, issubdtype=np.issubdtype)
_HOST = types.SimpleNamespace(floor=np.floor, ceil=np.ceil, rint=np.rint, where=np.where,
                              isnan=np.isnan, issubdtype=np.issubdtype)


def _positions(xp, n, q, method):
    """("index", i) or ("lerp", previous, next, gamma) for sample size n (an int, or
    per-slice counts on the device) and quantiles q, as numpy.quantile computes them; -1
    stands for the last valid position."""
    try:
        rule = _METHODS[method]
    except KeyError:
        raise ArgumentError(f"{method!r} is not a valid method. Use one of: "
                            f"{list(_METHODS)}") from None
    kind, v, *fix = rule(xp, n, q)
    if kind == "index" or (method == "linear" and np.issubdtype(v.dtype, np.integer)):
        return "index", v.astype(np.int64) if kind == "lerp" else v
    fix = fix[0]
    lower = xp.floor(v)
    above, below = v >= n - 1, v < 0
    lower = xp.where(above | xp.isnan(v), -1, xp.where(below, 0, lower))
    upper = xp.where(above | below | xp.isnan(v), lower, lower + 1)
    gamma = v - lower
    if fix is not None:
        gamma = fix(xp, gamma, v)
    gamma = gamma.astype(v.dtype)
    return "lerp", lower.astype(np.int64), upper.astype(np.int64), gamma


def _lerp(low, high, t):
    """low + (high - low) t, computed from the nearer end as numpy does."""
    d = _sub(high, low)
    if isinstance(t, float):
        return _sub(high, _mul(d, 1 - t)) if t >= 0.5 else _add(low, _mul(d, t))
    near_low = _add(low, _mul(d, t))
    near_high = _sub(high, _mul(d, _sub(1, t))).astype(near_low.dtype, copy=False)
    return where(UFUNCS["greater_equal"](t, 0.5), near_high, near_low)


def _check_quantiles(q, what, scale):
    if q.size and not (q.min() >= 0 and q.max() <= scale):
        raise ArgumentError(f"{what} must be in the range [0, {scale}]")
    if q.ndim > 2:
        raise ArgumentError(f"q must be a scalar or 1d, got shape {q.shape}")


def _method(method, interpolation):
    if interpolation is None:
        return method
    if method != "linear":
        raise ArgumentTypeError("You shall not pass both `method` and `interpolation`!\n"
                                "(`interpolation` is Deprecated in favor of `method`)")
    warnings.warn("the `interpolation=` argument to quantile was renamed to `method=`, which "
                  "has additional options.", DeprecationWarning, stacklevel=4)
    return interpolation


def _quantile(a, q, percent, axis, out, method, interpolation, keepdims, weights, ignore_nan):
    """The quantile family's common part: q as given, in [0, 100] where `percent`."""
    weak_q = _NUMPY2 and type(q) in (int, float)
    if percent:
        q = np.true_divide(_host(q), 100)
        _check_quantiles(q * 100, "Percentiles", 100)
        q = np.asarray(q)
    else:
        q = _host(q)
        _check_quantiles(q, "Quantiles", 1)
    a, method = _array(a), _method(method, interpolation)
    if a.dtype.kind == "c":
        raise ArgumentTypeError(f"a must be an array of real numbers, not {a.dtype}")
    if weights is not None and method != "inverted_cdf":
        raise ArgumentError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")
    if ignore_nan and a.size == 0:
        return _empty_nan(a, axis, out, keepdims)
    rows, kept, axes = _rows(a, axis)
    n = rows.shape[-1]
    per_slice = ignore_nan and a.dtype.kind == "f"
    if weights is not None:
        w = _weights(weights, a, None if axis is None else axes)
        if bool(any_(UFUNCS["less"](w, 0))):
            raise ArgumentError("Weights must be non-negative.")
        result, s = _weighted_quantile(rows, _rows(broadcast_to(w, a.shape), axis)[0], q,
                                       per_slice)
    else:
        result, s = _interpolated(rows, q, method, weak_q, per_slice)
    if not per_slice and a.dtype.kind == "f" and n:
        last = s[..., -1:]
        result = where(_isnan(last), last.astype(result.dtype, copy=False), result)
    result = moveaxis(result, -1, 0).reshape(q.shape + kept)
    return _into(_kept(result, a.shape, axes, keepdims, q.shape), out)


def _interpolated(rows, q, method, weak_q, per_slice):
    """(values at the quantiles, kept + (len(q),), and the sorted rows)."""
    n = rows.shape[-1]
    s = sort(rows, axis=-1)
    flat_q = q.reshape(-1)
    if per_slice:
        counts = reduce(rows, "count_notnan", -1, np.int64, np.int64, keepdims=True)
        kind, *found = _positions(_DEVICE, counts.astype(flat_q.dtype) if flat_q.dtype.kind
                                  == "f" else counts, asarray(flat_q, context=rows.context),
                                  method)
        last = UFUNCS["maximum"](_sub(counts, 1), 0)
        found[:2] = [UFUNCS["minimum"](UFUNCS["maximum"](where(UFUNCS["less"](p, 0), last, p),
                                                         0), last) for p in found[:2]]
        if kind == "lerp" and weak_q:
            found[2] = found[2].astype(np.result_type(rows.dtype, 1.0))
    else:
        if n == 0:
            raise IndexOutOfRange("index -1 is out of bounds for axis 0 with size 0 (the "
                                  "quantiles of an empty slice)")
        kind, *found = _positions(_HOST, n, flat_q, method)
        found[:2] = [asarray(np.where(p < 0, n - 1, p), context=rows.context)
                     for p in found[:2]]
        if kind == "lerp":
            found[2] = (float(found[2][0]) if weak_q
                        else asarray(found[2], context=rows.context))
    if kind == "index":
        return _gather(s, found[0]), s
    low, high, gamma = found
    return _lerp(_gather(s, low), _gather(s, high), gamma), s


def _weighted_quantile(rows, weights, q, per_slice):
    """method='inverted_cdf' with weights: the first sorted value whose share of the total
    weight reaches each quantile (NaNs, last after the sort, weigh in unless per_slice)."""
    n = rows.shape[-1]
    order = argsort(rows, axis=-1)
    s, w = _gather(rows, order), _gather(weights, order)
    if per_slice:
        w = where(_isnan(s), 0, w)
    cdf = cumsum(w, axis=-1, dtype=np.float64)
    cdf = _div(cdf, cdf[..., -1:])
    if bool(any_(_isnan(cdf[..., -1]))):
        raise ArgumentError("Weights included NaN, inf or were all zero.")
    flat_q = q.reshape(-1)
    if flat_q.dtype.kind == "f":
        cdf = cdf.astype(flat_q.dtype)
    cdf = where(UFUNCS["equal"](cdf, 0), -1, cdf)
    qd = asarray(flat_q, context=rows.context)
    below = UFUNCS["less"](cdf[..., None, :], qd[:, None])
    index = UFUNCS["minimum"](sum_(below, axis=-1), n - 1)
    return _gather(s, index), s


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
             *, weights=None, interpolation=None):
    """The q-th quantiles over `axis` (None: all; a tuple of axes too), as numpy.quantile:
    every numpy `method` ('linear' by default), `weights` with 'inverted_cdf'. The result's
    leading axes are q's. A `q` given as a GpuArray is read back (it is a parameter).

    Examples
    --------
    >>> a = ga.asarray([[10, 7, 4], [3, 2, 1]])
    >>> ga.quantile(a, 0.5).get(), ga.quantile(a, [0.25, 0.75], axis=1).get()
    (array(3.5), array([[5.5, 1.5],
           [8.5, 2.5]]))
    """
    return _quantile(a, q, False, axis, out, method, interpolation, keepdims, weights, False)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """The q-th percentiles (q in [0, 100]) over `axis`: quantile(a, q / 100).

    Examples
    --------
    >>> ga.percentile(ga.asarray([1.0, 2.0, 3.0, 4.0]), 50).get()
    array(2.5)
    """
    return _quantile(a, q, True, axis, out, method, interpolation, keepdims, weights, False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=_NoValue, *, weights=None, interpolation=None):
    """quantile over the values that are not NaN (NaN where a slice has none).

    Examples
    --------
    >>> ga.nanquantile(ga.asarray([1.0, np.nan, 3.0]), 0.5).get()
    array(2.)
    """
    return _quantile(a, q, False, axis, out, method, interpolation, keepdims, weights, True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=_NoValue, *, weights=None, interpolation=None):
    """percentile over the values that are not NaN (NaN where a slice has none).

    Examples
    --------
    >>> ga.nanpercentile(ga.asarray([1.0, np.nan, 3.0]), [0, 100]).get()
    array([1., 3.])
    """
    return _quantile(a, q, True, axis, out, method, interpolation, keepdims, weights, True)


# ---------------------------------------------------------------- NaN-ignoring reductions

def _nan_arg_extremum(a, axis, out, keepdims, fill, pick):
    a = _array(a)
    keep = keepdims is not _NoValue and keepdims
    if a.dtype.kind == "f" and a.size:
        missing = _isnan(a)
        if bool(any_(all_(missing, axis=axis))):
            raise ArgumentError("All-NaN slice encountered")
        a = where(missing, fill, a)
    return pick(a, axis=axis, out=out, keepdims=keep)


def nanargmax(a, axis=None, out=None, *, keepdims=_NoValue):
    """The index of the largest value that is not NaN along `axis` (ValueError for a slice
    of NaNs only).

    Examples
    --------
    >>> ga.nanargmax(ga.asarray([[np.nan, 4.0], [2.0, 3.0]]), axis=1).get()
    array([1, 1])
    """
    return _nan_arg_extremum(a, axis, out, keepdims, -np.inf, argmax)


def nanargmin(a, axis=None, out=None, *, keepdims=_NoValue):
    """The index of the smallest value that is not NaN along `axis` (ValueError for a slice
    of NaNs only).

    Examples
    --------
    >>> ga.nanargmin(ga.asarray([[np.nan, 4.0], [2.0, 3.0]]), axis=1).get()
    array([1, 0])
    """
    return _nan_arg_extremum(a, axis, out, keepdims, np.inf, argmin)


def _without_nan(a, fill):
    a = _array(a)
    return where(_isnan(a), fill, a) if a.dtype.kind in "fc" else a


def nancumsum(a, axis=None, dtype=None, out=None):
    """The running sum along `axis` (None: flattened) with NaNs counted as 0.

    Examples
    --------
    >>> ga.nancumsum(ga.asarray([1.0, np.nan, 2.0])).get()
    array([1., 1., 3.])
    """
    return cumsum(_without_nan(a, 0), axis=axis, dtype=dtype, out=out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """The running product along `axis` (None: flattened) with NaNs counted as 1.

    Examples
    --------
    >>> ga.nancumprod(ga.asarray([2.0, np.nan, 3.0])).get()
    array([2., 2., 6.])
    """
    return cumprod(_without_nan(a, 1), axis=axis, dtype=dtype, out=out)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NoValue, *, where=_NoValue,
           correction=_NoValue):
    """The variance over `axis` of the values that are not NaN (and that `where` selects),
    with `ddof` (or the Array API's `correction`); NaN where fewer than ddof + 1 remain.

    Examples
    --------
    >>> ga.nanvar(ga.asarray([1.0, np.nan, 3.0])).get()
    array(1.)
    """
    a = _array(a)
    keep = keepdims is not _NoValue and keepdims
    if correction is not _NoValue:
        if ddof != 0:
            raise ArgumentError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    chosen = True if where is _NoValue else where
    if a.dtype.kind not in "fc":
        return var(a, axis, dtype, out, ddof, keep, where=chosen)
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise ArgumentTypeError(f"If a is inexact, then dtype must be inexact (got {dtype})")
    valid = UFUNCS["logical_not"](_isnan(a))
    if chosen is not True:
        valid = valid & broadcast_to(_array(chosen, a.context), a.shape)
    data = _select(valid, a, 0)
    count = sum_(valid, axis, dtype=np.int64, keepdims=True)
    total = sum_(data, axis, dtype=dtype, keepdims=True)
    avg = _div(total, count).astype(total.dtype, copy=False)
    dev = _select(valid, _sub(data, avg), 0)
    square = real(_mul(dev, UFUNCS["conjugate"](dev))) if dev.dtype.kind == "c" else \
        _mul(dev, dev)
    result = sum_(square, axis, dtype=dtype, keepdims=keep)
    dof = _sub(count if keep else count.reshape(result.shape), ddof)
    result = _div(result, dof).astype(result.dtype, copy=False)
    return _into(_select(UFUNCS["less_equal"](dof, 0), np.nan, result).astype(
        result.dtype, copy=False), out)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NoValue, *, where=_NoValue,
           correction=_NoValue):
    """The standard deviation over `axis` of the values that are not NaN: sqrt(nanvar).

    Examples
    --------
    >>> ga.nanstd(ga.asarray([1.0, np.nan, 3.0])).get()
    array(1.)
    """
    v = nanvar(a, axis, dtype, None, ddof, keepdims, where=where, correction=correction)
    return _into(UFUNCS["sqrt"](v), out)


# ---------------------------------------------------------------- covariance

def _variables(x, dtype, rowvar, name):
    """cov's m or y as rows of variables (numpy's ndmin=2 and transposition)."""
    if x.ndim > 2:
        raise ShapeError(f"{name} has more than 2 dimensions (shape {x.shape})")
    transpose = not rowvar and (x.ndim == 2 if name == "m" else x.ndim < 2 or x.shape[0] != 1)
    x = x.astype(dtype, copy=False).reshape((1,) * (2 - x.ndim) + x.shape)
    return x.T if transpose else x


def _real_value(value):
    """A Python or 0-d device number as a Python float (its real part)."""
    if isinstance(value, ArrayBase):
        return float(real(value))
    return float(np.real(value))


def _sample_weights(values, n, name, ctx):
    w = _array(values, ctx).astype(np.float64)
    if w.ndim > 1:
        raise ShapeError(f"cannot handle multidimensional {name} (shape {w.shape})")
    if w.shape[0] != n:
        raise ShapeError(f"incompatible numbers of samples and {name} ({n} and {w.shape[0]})")
    return w


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """The covariance matrix of the variables in the rows of `m` (columns: rowvar=False),
    and of `y`'s, with numpy's normalisation (ddof, bias) and frequency (`fweights`) and
    reliability (`aweights`) weights. One matrix product.

    Examples
    --------
    >>> ga.cov(ga.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).get()
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    if ddof is not None and ddof != int(ddof):
        raise ArgumentError(f"ddof must be integer, got {ddof!r}")
    m = _array(m)
    y = None if y is None else _array(y, m.context)
    if dtype is None:
        dtype = np.result_type(m.dtype, np.float64) if y is None else \
            np.result_type(m.dtype, y.dtype, np.float64)
    x = _variables(m, dtype, rowvar, "m")
    if x.shape[0] == 0:
        return empty((0, 0), np.float64, context=m.context)
    if y is not None:
        x = concatenate([x, _variables(y, dtype, rowvar, "y")], axis=0)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    n = x.shape[1]
    w = f = a = None
    if fweights is not None:
        f = _sample_weights(fweights, n, "fweights", m.context)
        whole, negative = _read(all_(UFUNCS["equal"](f, UFUNCS["rint"](f))),
                                any_(UFUNCS["less"](f, 0)))
        if not whole:
            raise ArgumentTypeError("fweights must be integer")
        if negative:
            raise ArgumentError("fweights cannot be negative")
        w = f
    if aweights is not None:
        a = _sample_weights(aweights, n, "aweights", m.context)
        if bool(any_(UFUNCS["less"](a, 0))):
            raise ArgumentError("aweights cannot be negative")
        w = a if w is None else _mul(w, a)
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        fact = n - ddof
    elif ddof == 0:
        fact = w_sum
    elif a is None:
        fact = _sub(w_sum, ddof)
    else:
        fact = _sub(w_sum, _div(_mul(ddof, sum_(_mul(w, a))), w_sum))
    if _real_value(fact) <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    x = _sub(x, avg[:, None])
    xt = (x if w is None else _mul(x, w)).T
    c = matmul(x, UFUNCS["conjugate"](xt) if xt.dtype.kind == "c" else xt)
    return _mul(c, _div(1, fact)).astype(c.dtype, copy=False).squeeze()


def corrcoef(x, y=None, rowvar=True, bias=_NoValue, ddof=_NoValue, *, dtype=None):
    """Pearson correlation coefficients: cov normalised by the standard deviations, clipped
    to [-1, 1] (`bias` and `ddof` are numpy's deprecated no-ops).

    Examples
    --------
    >>> ga.corrcoef(ga.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.5]])).get().round(3)
    array([[ 1.   , -0.982],
           [-0.982,  1.   ]])
    """
    if bias is not _NoValue or ddof is not _NoValue:
        warnings.warn("bias and ddof have no effect and are deprecated", DeprecationWarning,
                      stacklevel=2)
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return _div(c, c)
    d = UFUNCS["sqrt"](real(diag(c)))
    c = _div(_div(c, d[:, None]), d[None, :])
    if c.dtype.kind != "c":
        return UFUNCS["minimum"](UFUNCS["maximum"](c, -1), 1).astype(c.dtype, copy=False)
    out = c.copy()
    parts = out.view(np.empty(0, c.dtype).real.dtype)
    parts[...] = UFUNCS["minimum"](UFUNCS["maximum"](parts, -1), 1)
    return out


# ---------------------------------------------------------------- counting

def bincount(x, weights=None, minlength=0):
    """How many times each value 0, 1, ..., max(x) occurs in the 1-d non-negative integer
    array `x` (at least `minlength` bins), or the sum of the `weights` (float64) of each.

    Examples
    --------
    >>> ga.bincount(ga.asarray([0, 1, 1, 3, 1])).get()
    array([1, 3, 0, 1])
    """
    x = _array(x)
    if x.ndim != 1:
        raise ShapeError("object too deep for desired array" if x.ndim else
                         "object of too small depth for desired array")
    if x.dtype.kind not in "biu":
        raise ArgumentTypeError(f"Cannot cast array data from {x.dtype!r} to "
                                f"dtype('int64') according to the rule 'safe'")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ArgumentError(f"'minlength' must not be negative (got {minlength})")
    w = None
    if weights is not None:
        w = _array(weights, x.context)
        if w.dtype.kind == "c":
            raise ArgumentTypeError(f"Cannot cast array data from {w.dtype!r} to "
                                    f"dtype('float64') according to the rule 'safe'")
        if w.shape != x.shape:
            raise ShapeError(f"The weights and list don't have the same length ({w.shape} "
                             f"and {x.shape}).")
        w = w.astype(np.float64, copy=False)
    dt = np.int64 if w is None else np.float64
    if x.size == 0:
        return zeros(minlength, dt, context=x.context)
    lo, hi = (int(v) for v in _read(min_(x).astype(np.int64), max_(x).astype(np.int64)))
    if lo < 0:
        raise ArgumentError(f"'list' argument must have no negative elements (found {lo})")
    edges = arange(max(hi + 1, minlength) + 1, dtype=np.int64, context=x.context)
    return _counts(x.astype(np.int64, copy=False), edges, w, "left", "left")


def _counts(values, edges, weights, inner, outer):
    """The count (or weights' sum) of the 1-d `values` between consecutive `edges`: the
    sorted values' positions at the edges (`inner` side for all but the last, `outer` for
    it), differenced."""
    if weights is None:
        s = sort(values)
    else:
        order = argsort(values)
        s, weights = take(values, order, mode="clip"), take(weights, order, mode="clip")
    pos = concatenate([searchsorted(s, edges[:-1], side=inner),
                       searchsorted(s, edges[-1:], side=outer)])
    if weights is not None:
        run = concatenate([zeros(1, weights.dtype, context=values.context), cumsum(weights)])
        pos = take(run, pos, mode="clip")
    return _sub(pos[1:], pos[:-1])


def _finite_range(a, range):
    """The histogram's outer edges: `range`, or the data's (read back), widened by 0.5 on
    each side when empty."""
    if range is not None:
        first, last = range
        if first > last:
            raise ArgumentError(f"max must be larger than min in range parameter ({range!r}).")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ArgumentError(f"supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = _read(min_(a), max_(a))
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ArgumentError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def _width(a, name):
    """The bin width numpy's estimator `name` gives for the data `a` (a few statistics
    read back)."""
    n = a.size
    ptp = float(_read(max_(a).astype(np.float64) - min_(a).astype(np.float64))[0])
    if name == "sqrt":
        return ptp / np.sqrt(n)
    if name == "sturges":
        return ptp / (np.log2(n) + 1.0)
    if name == "rice":
        return ptp / (2.0 * n ** (1.0 / 3))
    if name == "scott":
        return (24.0 * np.pi**0.5 / n) ** (1.0 / 3.0) * float(std(a))
    if name == "fd":
        high, low = percentile(a, [75, 25]).get()
        return 2.0 * (high - low) * n ** (-1.0 / 3.0)
    if name == "doane":
        if n <= 2:
            return 0.0
        sg1 = np.sqrt(6.0 * (n - 2) / ((n + 1.0) * (n + 3)))
        sigma = float(std(a))
        if sigma <= 0.0:
            return 0.0
        g1 = float(mean(UFUNCS["power"](_div(_sub(a, mean(a)), sigma), 3)))
        return ptp / (1.0 + np.log2(n) + np.log2(1.0 + np.absolute(g1) / sg1))
    if name == "auto":
        return min(max(_width(a, "fd"), _width(a, "sqrt") / 2), _width(a, "sturges"))
    raise UnsupportedError(f"bins={name!r} is not supported on the device (the estimators: "
                           f"auto, fd, doane, scott, rice, sturges, sqrt)")


_ESTIMATORS = ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt")


def _bin_edges(a, bins, range, weights):
    """(the bin edges as a GpuArray, a with values outside a string estimator's range
    dropped)."""
    count = None
    if isinstance(bins, str):
        if bins not in _ESTIMATORS:
            raise ArgumentError(f"{bins!r} is not a valid estimator for `bins`")
        if weights is not None:
            raise ArgumentTypeError("Automated estimation of the number of bins is not "
                                    "supported for weighted data")
        first, last = _finite_range(a, range)
        data = a
        if range is not None:
            data = a[UFUNCS["greater_equal"](a, first) & UFUNCS["less_equal"](a, last)]
        count = 1
        if data.size:
            width = _width(data, bins)
            if width:
                if a.dtype.kind in "iu" and width < 1:
                    width = 1
                count = int(np.ceil((last - first) / width))
    elif np.ndim(bins) == 0:
        try:
            count = operator.index(bins)
        except TypeError:
            raise ArgumentTypeError(f"`bins` must be an integer, a string, or an array, not "
                                    f"{type(bins).__name__}") from None
        if count < 1:
            raise ArgumentError(f"`bins` must be positive, when an integer (got {count})")
        first, last = _finite_range(a, range)
    elif np.ndim(bins) == 1:
        edges = _array(bins, a.context)
        if edges.size > 1 and bool(any_(UFUNCS["greater"](edges[:-1], edges[1:]))):
            raise ArgumentError("`bins` must increase monotonically, when an array")
        return edges
    else:
        raise ShapeError(f"`bins` must be 1d, when an array (got {np.ndim(bins)} dimensions)")
    dt = np.result_type(first, last, a.dtype)
    if dt.kind in "biu":
        dt = np.result_type(dt, float)
    host = np.linspace(first, last, count + 1, endpoint=True, dtype=dt)
    if np.any(host[:-1] >= host[1:]):
        raise ArgumentError(f"Too many bins for data range. Cannot create {count} finite-sized "
                            f"bins.")
    return asarray(host, context=a.context)


def _histogram_input(a, weights):
    a = _array(a)
    if a.dtype == np.bool_:
        warnings.warn(f"Converting input from {a.dtype} to {np.uint8} for compatibility.",
                      RuntimeWarning, stacklevel=3)
        a = a.astype(np.uint8)
    if weights is not None:
        weights = _array(weights, a.context)
        if weights.shape != a.shape:
            raise ShapeError(f"weights should have the same shape as a ({weights.shape} and "
                             f"{a.shape}).")
        weights = weights.ravel()
    return a.ravel(), weights


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges histogram would use: `bins` equal bins over `range` (or the data's), the
    edges given, or a numpy estimator's name ('auto', 'fd', 'sturges', ...).

    Examples
    --------
    >>> ga.histogram_bin_edges(ga.asarray([0.0, 1.0, 3.0]), bins=3).get()
    array([0., 1., 2., 3.])
    """
    a, weights = _histogram_input(a, weights)
    return _bin_edges(a, bins, range, weights)


def histogram(a, bins=10, range=None, density=None, weights=None):
    """The histogram of the flattened `a`: counts (or sums of `weights`) per bin, bins
    half-open [e_i, e_i+1) but the last closed, values outside the edges ignored; `density`
    normalises to a probability density. Returns (hist, bin_edges).

    Examples
    --------
    >>> hist, edges = ga.histogram(ga.asarray([1.0, 2.0, 1.0]), bins=[0, 1, 2, 3])
    >>> hist.get(), edges.get()
    (array([0, 2, 1]), array([0, 1, 2, 3]))
    """
    a, weights = _histogram_input(a, weights)
    edges = _bin_edges(a, bins, range, weights)
    if weights is None:
        n = _counts(a, edges, None, "left", "right")
    else:
        kind = weights.dtype.kind
        work = {"f": np.float64, "c": np.complex128}.get(kind, np.int64)
        n = _counts(a, edges, weights.astype(work, copy=False), "left", "right")
        n = n.astype(weights.dtype, copy=False)
    if density:
        widths = _sub(edges[1:], edges[:-1]).astype(np.float64)
        return _div(_div(n, widths), sum_(n)), edges
    return n, edges


def _sample_columns(sample):
    """histogramdd's sample as D 1-d GpuArrays: an (N, D) array, or D sequences."""
    if isinstance(sample, ArrayBase | np.ndarray):
        s = _array(sample)
        if s.ndim < 2:
            s = s.reshape(-1, 1)
        if s.ndim != 2:
            raise ShapeError(f"sample must be an (N, D) array, got shape {s.shape}")
        return [s[:, i] for i in range(s.shape[1])]
    ctx = _context(*sample)
    return [_array(c, ctx).ravel() for c in sample]


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """The D-dimensional histogram of N points (an (N, D) array, or D coordinate arrays):
    counts per cell of the per-dimension `bins` (counts or edges), float64, and the list of
    edges.

    Examples
    --------
    >>> hist, edges = ga.histogramdd(ga.asarray([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=2)
    >>> hist.get()
    array([[1., 0.],
           [1., 1.]])
    """
    columns = _sample_columns(sample)
    d = len(columns)
    try:
        if len(bins) != d:
            raise ArgumentError(f"The dimension of bins must be equal to the dimension of the "
                                f"sample x ({len(bins)} and {d}).")
    except TypeError:
        bins = d * [bins]
    if range is None:
        range = (None,) * d
    elif len(range) != d:
        raise ArgumentError(f"range argument must have one entry per dimension ({d})")
    ctx = columns[0].context
    edges, cells, flat = [], [], None
    for i, (col, b) in enumerate(zip(columns, bins)):
        if np.ndim(b) == 0:
            if b < 1:
                raise ArgumentError(f"`bins[{i}]` must be positive, when an integer")
            first, last = _finite_range(col, range[i])
            try:
                count = operator.index(b)
            except TypeError:
                raise ArgumentTypeError(f"`bins[{i}]` must be an integer, when a "
                                        f"scalar") from None
            e = asarray(np.linspace(first, last, count + 1), context=ctx)
        elif np.ndim(b) == 1:
            e = _array(b, ctx)
            if e.size > 1 and bool(any_(UFUNCS["greater"](e[:-1], e[1:]))):
                raise ArgumentError(f"`bins[{i}]` must be monotonically increasing, when an "
                                    f"array")
        else:
            raise ShapeError(f"`bins[{i}]` must be a scalar or 1d array")
        index = searchsorted(e, col, side="right")
        index = _sub(index, UFUNCS["equal"](col, e[-1]).astype(np.int64))
        n = e.shape[0] + 1
        flat = index if flat is None else _add(_mul(flat, n), index)
        edges.append(e)
        cells.append(n)
    total = math.prod(cells)
    if columns[0].size:
        hist = bincount(flat, weights, minlength=total)
    else:
        hist = zeros(total, np.float64, context=ctx)
    hist = hist.astype(np.float64, copy=False).reshape(cells)[(slice(1, -1),) * d]
    if density:
        whole = sum_(hist)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = cells[i] - 2
            hist = _div(hist, _sub(e[1:], e[:-1]).reshape(shape))
        hist = _div(hist, whole)
    return hist, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """The 2-d histogram of the points (x, y): (hist, xedges, yedges), as histogramdd.

    Examples
    --------
    >>> hist, xe, ye = ga.histogram2d(ga.asarray([0.0, 1.0, 1.0]), ga.asarray([0.0, 1.0, 0.0]), 2)
    >>> hist.get()
    array([[1., 0.],
           [1., 1.]])
    """
    try:
        count = len(bins)
    except TypeError:
        count = 1
    if count not in (1, 2):
        bins = [bins, bins]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]


def digitize(x, bins, right=False):
    """The index of the bin of each value of `x` (int64): i with bins[i-1] <= x < bins[i]
    for increasing bins (bins[i-1] < x <= bins[i] with `right`), mirrored for decreasing.

    Examples
    --------
    >>> ga.digitize(ga.asarray([0.2, 6.4, 3.0, 1.6]), ga.asarray([0.0, 1.0, 2.5, 4.0])).get()
    array([1, 4, 3, 2])
    """
    x = _array(x)
    bins = _array(bins, x.context)
    if x.dtype.kind == "c":
        raise ArgumentTypeError("x may not be complex")
    if bins.ndim != 1:
        raise ShapeError(f"object too deep for desired array: bins has shape {bins.shape}")
    step = _sub(bins[1:], bins[:-1]) if bins.dtype != np.bool_ else \
        _sub(bins[1:].astype(np.int8), bins[:-1].astype(np.int8))
    rising, falling = _read(all_(UFUNCS["greater_equal"](step, 0)),
                            all_(UFUNCS["less_equal"](step, 0)))
    side = "left" if right else "right"
    if rising:
        return searchsorted(bins, x, side=side)
    if falling:
        return _sub(bins.shape[0], searchsorted(bins[::-1], x, side=side))
    raise ArgumentError("bins must be monotonically increasing or decreasing")


FUNCTIONS = {f.__name__: f for f in (
    average, median, nanmedian, quantile, percentile, nanquantile, nanpercentile, nanargmax,
    nanargmin, nancumsum, nancumprod, nanvar, nanstd, cov, corrcoef, bincount, histogram,
    histogram_bin_edges, histogram2d, histogramdd, digitize)}
