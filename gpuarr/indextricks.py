"""numpy's index routines on GpuArrays: choosing and placing by index or mask (choose,
extract, place, putmask, copyto, put_along_axis, fill_diagonal) and the index builders
(ravel_multi_index, unravel_index, ix_, diag_indices_from, tril_indices_from,
triu_indices_from).

Writes go through gpuarr's indexing (scatters, masked assignment) on the device. Index
checks that numpy makes (an index out of range, a mask's count) read back one number.
"""

import math
import numbers

import numpy as np

from .base import ArrayBase, _normalize_axis, arange, asarray, broadcast_to, zeros
from .editing import resize
from .errors import ArgumentError, ArgumentTypeError, IndexOutOfRange, ShapeError
from .indexing import compress, nonzero, take
from .manipulation import stack, tri
from .numerical import _array, _context
from .reduction import any as any_
from .reduction import count_nonzero
from .reduction import max as max_
from .reduction import min as min_
from .ufuncs import UFUNCS, broadcast_shapes
from .ufuncs import where as _where

__all__ = ["FUNCTIONS", "choose", "copyto", "diag_indices_from", "extract", "fill_diagonal",
           "ix_", "place", "put_along_axis", "putmask", "ravel_multi_index",
           "tril_indices_from", "triu_indices_from", "unravel_index"]

_MODES = ("raise", "wrap", "clip")


def _target(a, name):
    if not isinstance(a, ArrayBase):
        raise ArgumentTypeError(f"{name}: argument 1 must be a GpuArray (written in place), "
                                f"not {type(a).__name__}")
    a._check_writeable()
    return a


def _cycled(values, count, dtype, ctx):
    """The first `count` values of `values` (flattened) repeated as needed, as `dtype`."""
    v = _array(values, ctx).ravel().astype(dtype, copy=False)
    if count and not v.size:
        raise ArgumentError("Cannot insert from an empty array!")
    return v if v.size == count else resize(v, count)


def _index_mode(index, n, mode):
    """index (int64) within [0, n) by numpy's `mode` ('raise' checks, one value read back)."""
    if mode not in _MODES:
        raise ArgumentError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if mode == "wrap":
        return UFUNCS["remainder"](index, n)
    if mode == "clip":
        return UFUNCS["minimum"](UFUNCS["maximum"](index, 0), n - 1)
    if index.size and bool(any_(UFUNCS["less"](index, 0) | UFUNCS["greater_equal"](index, n))):
        raise ArgumentError("invalid entry in choice array" if n else "invalid entry")
    return index


def choose(a, choices, out=None, mode="raise"):
    """An array from the index array `a` and the choices: out[i] = choices[a[i]][i] (all
    broadcast together); `mode` for indices out of range ('raise', 'wrap', 'clip').

    Examples
    --------
    >>> ga.choose(ga.asarray([2, 0, 1]), [[0, 1, 2], [10, 11, 12], [20, 21, 22]]).get()
    array([20,  1, 12])
    """
    ctx = _context(a, choices, out)
    a = _array(a, ctx)
    if a.dtype.kind not in "biu":
        raise ArgumentTypeError(f"Cannot cast array data from {a.dtype!r} to dtype('int64') "
                                f"according to the rule 'safe'")
    if isinstance(choices, ArrayBase):
        options = [choices[i] for i in range(choices.shape[0])]
    else:
        options = [_array(c, ctx or a.context) for c in choices]
    n = len(options)
    dt = np.result_type(*(c.dtype for c in options))
    shape = broadcast_shapes(a.shape, *(c.shape for c in options))
    index = _index_mode(broadcast_to(a.astype(np.int64), shape), n, mode)
    stacked = stack([broadcast_to(c.astype(dt, copy=False), shape) for c in options])
    size = math.prod(shape)
    cells = arange(size, dtype=np.int64, context=a.context).reshape(shape)
    result = take(stacked.reshape(n * size), UFUNCS["add"](UFUNCS["multiply"](index, size),
                                                           cells), mode="clip")
    if out is None:
        return result
    return out._assign(result)


def extract(condition, arr):
    """The elements of the flattened `arr` where the flattened `condition` is nonzero.

    Examples
    --------
    >>> x = ga.asarray(np.arange(6))
    >>> ga.extract(x % 3 == 0, x).get()
    array([0, 3])
    """
    ctx = _context(condition, arr)
    arr, condition = _array(arr, ctx), _array(condition, ctx)
    return compress(UFUNCS["not_equal"](condition.ravel(), 0), arr.ravel())


def place(arr, mask, vals):
    """In place: arr[mask] = the first N values of `vals` (N: mask's count), repeated as
    needed.

    Examples
    --------
    >>> x = ga.asarray(np.arange(6)); ga.place(x, x > 2, [44, 55]); x.get()
    array([ 0,  1,  2, 44, 55, 44])
    """
    arr = _target(arr, "place")
    mask = _array(mask, arr.context)
    if mask.size != arr.size:
        raise ShapeError(f"place: mask and data must be the same size ({mask.size} and "
                         f"{arr.size})")
    chosen = UFUNCS["not_equal"](mask.reshape(arr.shape), 0)
    count = int(count_nonzero(chosen))
    if count:
        arr[chosen] = _cycled(vals, count, arr.dtype, arr.context)


def putmask(a, mask, values):
    """In place: a.flat[n] = values[n % len(values)] wherever mask.flat[n] holds.

    Examples
    --------
    >>> x = ga.asarray(np.arange(5)); ga.putmask(x, x > 1, [-1, -2]); x.get()
    array([ 0,  1, -1, -2, -1])
    """
    a = _target(a, "putmask")
    mask = _array(mask, a.context)
    if mask.size != a.size:
        raise ShapeError(f"putmask: mask and data must be the same size ({mask.size} and "
                         f"{a.size})")
    filled = _cycled(values, a.size, a.dtype, a.context).reshape(a.shape)
    a._assign(_where(mask.reshape(a.shape), filled, a))


def _python_kind(value):
    """The dtype a Python scalar stands for in a cast check, and whether it is one."""
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    for kind, dt in ((numbers.Integral, np.int8), (numbers.Real, np.float16),
                     (numbers.Complex, np.complex64)):
        if isinstance(value, kind):
            return np.dtype(dt)
    return None


def copyto(dst, src, casting="same_kind", where=True):
    """In place: dst = src (broadcast), where `where` holds, if `casting` allows the cast
    (Python scalars count by kind, as numpy 2's weak scalars).

    Examples
    --------
    >>> x = ga.zeros(3); ga.copyto(x, [1.0, 2.0, 3.0], where=ga.asarray([True, False, True]))
    >>> x.get()
    array([1., 0., 3.])
    """
    dst = _target(dst, "copyto")
    kind = _python_kind(src) if not isinstance(src, ArrayBase | np.ndarray | np.generic) else None
    src = _array(src, dst.context)
    if not np.can_cast(kind or src.dtype, dst.dtype, casting):
        raise ArgumentTypeError(f"Cannot cast array data from {src.dtype!r} to {dst.dtype!r} "
                                f"according to the rule {casting!r}")
    value = broadcast_to(src, dst.shape)
    if where is not True:
        value = _where(_array(where, dst.context), value, dst)
    dst._assign(value)


def put_along_axis(arr, indices, values, axis):
    """In place: the values at `indices` along `axis` (matching 1-d slices, as
    take_along_axis reads them) set to `values` (broadcast).

    Examples
    --------
    >>> x = ga.asarray(np.array([[10, 30, 20], [60, 40, 50]]))
    >>> ga.put_along_axis(x, ga.asarray([[1], [0]]), 99, axis=1); x.get()
    array([[10, 99, 20],
           [99, 40, 50]])
    """
    arr = _target(arr, "put_along_axis")
    idx = _array(indices, arr.context)
    if idx.dtype.kind not in "iu":
        raise IndexOutOfRange("`indices` must be an integer array")
    if axis is None:
        if idx.ndim != 1:
            raise ArgumentError("when axis=None, `indices` must have a single dimension.")
        if not arr._is_c():
            raise ArgumentError("put_along_axis(axis=None) needs a C-contiguous array (it "
                                "writes arr.flat)")
        arr.reshape(arr.size)[idx] = values
        return
    if idx.ndim != arr.ndim:
        raise ArgumentError("`indices` and `arr` must have the same number of dimensions")
    axis = _normalize_axis(axis, arr.ndim)
    key = []
    for d, n in enumerate(arr.shape):
        if d == axis:
            key.append(idx)
        else:
            shape = [1] * arr.ndim
            shape[d] = n
            key.append(arange(n, dtype=np.int64, context=arr.context).reshape(shape))
    arr[tuple(key)] = values


def fill_diagonal(a, val, wrap=False):
    """In place: the main diagonal of `a` (all axes equal beyond 2-d) set to `val`
    (repeated if shorter); `wrap` continues down a tall matrix after N columns.

    Examples
    --------
    >>> x = ga.zeros((3, 3), dtype=np.int64); ga.fill_diagonal(x, 5); x.get()
    array([[5, 0, 0],
           [0, 5, 0],
           [0, 0, 5]])
    """
    a = _target(a, "fill_diagonal")
    if a.ndim < 2:
        raise ArgumentError("array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = None if wrap else a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise ArgumentError(f"All dimensions of input must be of equal length (got "
                                f"{a.shape})")
        step = 1 + int(np.cumprod(a.shape[:-1]).sum())
        end = None
    positions = np.arange(a.size)[:end:step]
    if not positions.size:
        return
    key = tuple(asarray(i.astype(np.int64), context=a.context)
                for i in np.unravel_index(positions, a.shape))
    a[key] = _cycled(val, positions.size, a.dtype, a.context)


# ---------------------------------------------------------------- index builders

def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices (int64) into an array of shape `dims` from a tuple of index arrays;
    `mode` ('raise', 'wrap', 'clip', or one per dimension) for indices out of range.

    Examples
    --------
    >>> ga.ravel_multi_index((ga.asarray([3, 6, 6]), ga.asarray([4, 5, 1])), (7, 6)).get()
    array([22, 41, 37])
    """
    dims = tuple(int(n) for n in dims)
    ctx = _context(*multi_index)
    coords = [_array(i, ctx) for i in multi_index]
    if len(coords) != len(dims):
        raise ArgumentError(f"parameter multi_index must be a sequence of length {len(dims)}")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if order not in ("C", "F"):
        raise ArgumentError(f"only 'C' or 'F' order is permitted, not {order!r}")
    strides = [math.prod(dims[d + 1:]) if order == "C" else math.prod(dims[:d])
               for d in range(len(dims))]
    shape = broadcast_shapes(*(c.shape for c in coords))
    flat = zeros(shape, np.int64, context=ctx or coords[0].context)
    for c, n, m, stride in zip(coords, dims, modes, strides):
        if c.dtype.kind not in "iu":
            raise ArgumentTypeError(f"only int indices permitted, not {c.dtype}")
        c = c.astype(np.int64, copy=False)
        if m == "raise" and c.size and bool(any_(UFUNCS["less"](c, 0) |
                                                 UFUNCS["greater_equal"](c, n))):
            raise ArgumentError("invalid entry in coordinates array")
        c = _index_mode(c, n, m) if m != "raise" else c
        flat = UFUNCS["add"](flat, UFUNCS["multiply"](c, stride))
    return flat


def unravel_index(indices, shape, order="C"):
    """The coordinate arrays (int64) of flat `indices` into an array of `shape`.

    Examples
    --------
    >>> [c.get() for c in ga.unravel_index(ga.asarray([22, 41, 37]), (7, 6))]
    [array([3, 6, 6]), array([4, 5, 1])]
    """
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)
    idx = _array(indices)
    if idx.dtype.kind not in "iu":
        raise ArgumentTypeError(f"only int indices permitted, not {idx.dtype}")
    if order not in ("C", "F"):
        raise ArgumentError(f"only 'C' or 'F' order is permitted, not {order!r}")
    size = math.prod(shape)
    idx = idx.astype(np.int64, copy=False)
    if idx.size:
        low, high = (int(v) for v in stack([min_(idx), max_(idx)]).get())
        bad = low if low < 0 else high if high >= size else None
        if bad is not None:
            raise ArgumentError(f"index {bad} is out of bounds for array with size {size}")
    coords = []
    for n in (reversed(shape) if order == "C" else shape):
        coords.append(UFUNCS["remainder"](idx, n) if n else idx)
        idx = UFUNCS["floor_divide"](idx, n) if n else idx
    return tuple(reversed(coords)) if order == "C" else tuple(coords)


def ix_(*args):
    """Open-mesh index arrays from 1-d sequences (booleans: their nonzero positions): the
    k-th has its values along axis k, for a[ix_(rows, cols)] cross indexing.

    Examples
    --------
    >>> rows, cols = ga.ix_([0, 1], [2, 4])
    >>> rows.shape, cols.shape
    ((2, 1), (1, 2))
    """
    ctx = _context(*args)
    out = []
    for k, seq in enumerate(args):
        v = _array(seq, ctx)
        if v.ndim != 1:
            raise ShapeError(f"Cross index must be 1 dimensional (argument {k} has shape "
                             f"{v.shape})")
        if v.size == 0 and not isinstance(seq, ArrayBase | np.ndarray):
            v = v.astype(np.int64)
        if v.dtype == np.bool_:
            v = nonzero(v)[0]
        out.append(v.reshape((1,) * k + (v.size,) + (1,) * (len(args) - k - 1)))
    return tuple(out)


def diag_indices_from(arr):
    """The indices of the main diagonal of `arr` (all axes of one length, 2 or more).

    Examples
    --------
    >>> [i.get() for i in ga.diag_indices_from(ga.zeros((3, 3)))]
    [array([0, 1, 2]), array([0, 1, 2])]
    """
    arr = _array(arr)
    if arr.ndim < 2:
        raise ArgumentError("input array must be at least 2-d")
    if len(set(arr.shape)) != 1:
        raise ArgumentError(f"All dimensions of input must be of equal length (got "
                            f"{arr.shape})")
    return (arange(arr.shape[0], dtype=np.int64, context=arr.context),) * arr.ndim


def _triangle_from(arr, k, lower):
    arr = _array(arr)
    if arr.ndim != 2:
        raise ArgumentError(f"input array must be 2-d (got shape {arr.shape})")
    n, m = arr.shape
    below = tri(n, m, k if lower else k - 1, dtype=np.bool_, context=arr.context)
    return nonzero(below if lower else UFUNCS["logical_not"](below))


def tril_indices_from(arr, k=0):
    """The indices of the lower triangle (at and below the k-th diagonal) of a 2-d array.

    Examples
    --------
    >>> [i.get() for i in ga.tril_indices_from(ga.zeros((2, 2)))]
    [array([0, 1, 1]), array([0, 0, 1])]
    """
    return _triangle_from(arr, k, True)


def triu_indices_from(arr, k=0):
    """The indices of the upper triangle (at and above the k-th diagonal) of a 2-d array.

    Examples
    --------
    >>> [i.get() for i in ga.triu_indices_from(ga.zeros((2, 2)))]
    [array([0, 0, 1]), array([0, 1, 1])]
    """
    return _triangle_from(arr, k, False)


FUNCTIONS = {f.__name__: f for f in (
    choose, extract, place, putmask, copyto, put_along_axis, fill_diagonal, ravel_multi_index,
    unravel_index, ix_, diag_indices_from, tril_indices_from, triu_indices_from)}
