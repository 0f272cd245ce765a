"""numpy's set routines on GpuArrays, all by sorting on the device: isin (and numpy 1.x's
in1d), intersect1d, setdiff1d, union1d, setxor1d; lexsort and sort_complex; with the row
helpers the statistics share (a reduction's axes merged last, a gather of positions per
row).

Membership sorts the test values once and searches them for every element. The unique
values come from gpuarr's unique (sorted, NaNs as one value); what a boolean mask selects
is compacted on the device, its count the only number read back.
"""

import math

import numpy as np

from .base import ArrayBase, arange, broadcast_to, full, zeros
from .errors import ArgumentError
from .indexing import take
from .manipulation import _axis_tuple, concatenate, moveaxis, stack
from .numerical import _array, _context, _pair
from .reduction import max as max_
from .reduction import min as min_
from .sorting import argsort, searchsorted, sort, unique
from .ufuncs import UFUNCS, broadcast_shapes

__all__ = ["FUNCTIONS", "in1d", "intersect1d", "isin", "lexsort", "setdiff1d", "setxor1d",
           "sort_complex", "union1d"]

_equal, _not_equal = UFUNCS["equal"], UFUNCS["not_equal"]


def _rows(a, axis):
    """(r, kept, axes): `a` with the axes `axis` names (all for None) merged into r's last
    axis, and the other axes, in order, before it (their shape: `kept`)."""
    if axis is None:
        return a.reshape(a.size), (), tuple(range(a.ndim))
    axes = _axis_tuple(axis, a.ndim, "axis")
    keep = [d for d in range(a.ndim) if d not in axes]
    kept = tuple(a.shape[d] for d in keep)
    n = math.prod(a.shape[d] for d in axes)
    return a.transpose(keep + list(axes)).reshape((*kept, n)), kept, axes


def _gather(s, idx):
    """s[..., idx[..., j]] row by row: `s` of shape kept + (n,), `idx` int64 of shape
    kept + (k,) or (k,), every index in [0, n) (not checked: no read back)."""
    if idx.ndim == 1:
        return take(s, idx, axis=-1, mode="clip")
    n = s.shape[-1]
    count = math.prod(s.shape[:-1])
    base = arange(0, count * n, max(n, 1), dtype=np.int64, context=s.context)
    flat = (s if s._is_c() else s.copy()).reshape(count * n)
    return take(flat, UFUNCS["add"](idx, base.reshape((*s.shape[:-1], 1))), mode="clip")


def _members(a, b, invert, kind=None):
    """For each element of the 1-d `a`: is it in the 1-d `b` (== as numpy compares)? For
    integers whose range is small next to the sizes (numpy's rule), a lookup table of that
    range (its bounds read back), else a search of the sorted `b`."""
    if b.size == 0 or a.size == 0:
        return full(a.shape, bool(invert), np.bool_, context=a.context)
    if kind != "sort" and all(x.dtype.kind in "biu" and x.dtype != np.uint64 for x in (a, b)):
        found = _table_members(a, b, kind == "table")
        if found is not None:
            return UFUNCS["logical_not"](found) if invert else found
    dt = np.result_type(a.dtype, b.dtype)
    a, s = a.astype(dt, copy=False), sort(b.astype(dt, copy=False))
    found = take(s, searchsorted(s, a), mode="clip")
    return (_not_equal if invert else _equal)(found, a)


def _table_members(a, b, forced):
    """isin of integers by a boolean table over b's range, or None where that range is too
    large (more than 6 (len(a) + len(b)) entries, numpy's bound, unless `forced`)."""
    low, high = (int(v) for v in stack([min_(b).astype(np.int64),
                                        max_(b).astype(np.int64)]).get())
    span = high - low + 1
    if not forced and span > 6 * (a.size + b.size):
        return None
    table = zeros(span, np.bool_, context=a.context)
    table[UFUNCS["subtract"](b.astype(np.int64), low)] = True
    offset = UFUNCS["subtract"](a.astype(np.int64), low)
    inside = UFUNCS["greater_equal"](offset, 0) & UFUNCS["less"](offset, span)
    return inside & take(table, offset, mode="clip")


def _check_kind(kind, *arrays):
    if kind not in (None, "sort", "table"):
        raise ArgumentError(f"Invalid kind: {kind!r}. Please use None, 'sort' or 'table'.")
    if kind == "table" and any(x.dtype.kind not in "biu" for x in arrays):
        raise ArgumentError("The 'table' method is only supported for boolean or integer "
                            "arrays. Please select 'sort' or None for kind.")


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """A boolean array of element's shape: whether each element equals one of
    `test_elements` (negated with `invert`). `kind`: numpy's; 'table' (integers, the
    default where their range is small) looks elements up in a table of the test values'
    range, 'sort' searches the sorted test values.

    Examples
    --------
    >>> ga.isin(ga.asarray([[0, 2], [4, 6]]), [1, 2, 4, 8]).get()
    array([[False,  True],
           [ True, False]])
    """
    e, t = _pair(element, test_elements)
    _check_kind(kind, e, t)
    return _members(e.ravel(), t.ravel(), invert, kind).reshape(e.shape)


def in1d(ar1, ar2, assume_unique=False, invert=False, *, kind=None):
    """isin of the flattened `ar1` (numpy 1.x's name; removed in numpy 2.4).

    Examples
    --------
    >>> ga.in1d(ga.asarray([[0, 2], [4, 6]]), [2, 4]).get()
    array([False,  True,  True, False])
    """
    a, b = _pair(ar1, ar2)
    _check_kind(kind, a, b)
    return _members(a.ravel(), b.ravel(), invert, kind)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted values found in both arrays; with `return_indices`, also where each first
    occurs in the flattened inputs.

    Examples
    --------
    >>> ga.intersect1d(ga.asarray([1, 3, 4, 3]), [3, 1, 2, 1]).get()
    array([1, 3])
    """
    a, b = _pair(ar1, ar2)
    if assume_unique:
        a, b = a.ravel(), b.ravel()
        first_a = first_b = None
    elif return_indices:
        (a, first_a), (b, first_b) = unique(a, return_index=True), unique(b, return_index=True)
    else:
        a, b = unique(a), unique(b)
    both = concatenate([a, b])
    if return_indices:
        order = argsort(both)
        both = take(both, order, mode="clip")
    else:
        both = sort(both)
    same = _equal(both[1:], both[:-1])
    values = both[:-1][same]
    if not return_indices:
        return values
    in_a = order[:-1][same]
    in_b = UFUNCS["subtract"](order[1:][same], a.size)
    if first_a is not None:
        in_a, in_b = take(first_a, in_a, mode="clip"), take(first_b, in_b, mode="clip")
    return values, in_a, in_b


def setdiff1d(ar1, ar2, assume_unique=False):
    """The unique values of `ar1` that are not in `ar2` (with `assume_unique`: ar1's values
    in their order).

    Examples
    --------
    >>> ga.setdiff1d(ga.asarray([1, 2, 3, 2, 4, 1]), [3, 4, 5, 6]).get()
    array([1, 2])
    """
    a, b = _pair(ar1, ar2)
    if assume_unique:
        a = a.ravel()
    else:
        a, b = unique(a), unique(b)
    return a[_members(a, b.ravel(), True)]


def union1d(ar1, ar2):
    """The sorted unique values found in either array.

    Examples
    --------
    >>> ga.union1d(ga.asarray([-1, 0, 1]), [-2, 0, 2]).get()
    array([-2, -1,  0,  1,  2])
    """
    a, b = _pair(ar1, ar2)
    return unique(concatenate([a.ravel(), b.ravel()]))


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted values found in exactly one of the arrays.

    Examples
    --------
    >>> ga.setxor1d(ga.asarray([1, 2, 3, 2, 4]), [2, 3, 5, 7, 5]).get()
    array([1, 4, 5, 7])
    """
    a, b = _pair(ar1, ar2)
    if not assume_unique:
        a, b = unique(a), unique(b)
    both = sort(concatenate([a.ravel(), b.ravel()]))
    if both.size == 0:
        return both
    edge = full(1, True, np.bool_, context=both.context)
    alone = concatenate([edge, _not_equal(both[1:], both[:-1]), edge])
    return both[alone[1:] & alone[:-1]]


def sort_complex(a):
    """`a` sorted along its last axis, real part first, then imaginary, as a complex array
    (complex64 for small integers, else complex128, complex input kept).

    Examples
    --------
    >>> ga.sort_complex(ga.asarray([5, 3, 6, 2, 1])).get()
    array([1.+0.j, 2.+0.j, 3.+0.j, 5.+0.j, 6.+0.j])
    """
    b = sort(_array(a))
    if b.dtype.kind == "c":
        return b
    return b.astype(np.complex64 if b.dtype.char in "bhBH" else np.complex128)


def lexsort(keys, axis=-1):
    """Indices (int64) that sort by several keys: the last key first, ties broken by the
    one before, and so on; stable. `keys`: a sequence of arrays of one shape, or the rows
    of a 2-d array.

    Examples
    --------
    >>> surnames = ga.asarray([3, 1, 2, 1]); first = ga.asarray([1, 2, 0, 1])
    >>> ga.lexsort((first, surnames)).get()
    array([3, 1, 2, 0])
    """
    if isinstance(keys, ArrayBase):
        keys = [keys[i] for i in range(keys.shape[0])] if keys.ndim else [keys]
    elif isinstance(keys, np.ndarray) and keys.ndim == 1:
        keys = [keys]
    elif isinstance(keys, np.ndarray):
        keys = list(keys)
    keys = list(keys)
    if not keys:
        raise ArgumentError("need sequence of keys with len > 0 in lexsort")
    ctx = _context(*keys)
    keys = [_array(k, ctx) for k in keys]
    shape = broadcast_shapes(*(k.shape for k in keys))
    if not shape:
        return zeros((), np.int64, context=keys[0].context)
    keys = [broadcast_to(k, shape) for k in keys]
    axis = _axis_tuple(axis, len(shape), "axis")[0]
    keys = [moveaxis(k, axis, -1) for k in keys]
    order = argsort(keys[0], axis=-1)
    for key in keys[1:]:
        order = _gather(order, argsort(_gather(key, order), axis=-1))
    return moveaxis(order, -1, axis)


FUNCTIONS = {f.__name__: f for f in (
    isin, in1d, intersect1d, setdiff1d, union1d, setxor1d, sort_complex, lexsort)}
