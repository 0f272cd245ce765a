"""numpy's whole-array routines on GpuArrays: copy; editing along axes (delete, insert,
append, resize, rot90, rollaxis, block, diagflat); bits (packbits, unpackbits); choosing
elements by conditions (select, piecewise); applying a function along or over axes
(apply_along_axis, apply_over_axes).

Indices given on the host are worked out there (they are metadata, like a slice); indices
given as GpuArrays are used on the device. Results are new arrays (rot90: a view, as in
numpy). apply_along_axis calls the function once per 1-d slice, in Python as numpy does,
each slice a view of the device array.
"""

import itertools
import numbers
import operator

import numpy as np

from .base import (
    ArrayBase,
    _normalize_axis,
    array,
    asarray,
    broadcast_to,
    empty,
    expand_dims,
    ones,
    zeros,
)
from .errors import ArgumentError, ArgumentTypeError, AxisError, IndexOutOfRange, ShapeError
from .indexing import compress, flatnonzero
from .manipulation import concatenate, diag, flip, moveaxis, tile
from .numerical import _along, _array, _context
from .reduction import sum as sum_
from .sorting import argsort
from .ufuncs import UFUNCS, broadcast_shapes, where

__all__ = ["FUNCTIONS", "append", "apply_along_axis", "apply_over_axes", "block", "copy",
           "delete", "diagflat", "insert", "packbits", "piecewise", "resize", "rollaxis", "rot90",
           "select", "unpackbits"]


# ---------------------------------------------------------------- copies

def copy(a, order="K", subok=False):
    """A copy of `a` on its device (host data: a new GpuArray), laid out by `order`.

    Examples
    --------
    >>> x = ga.asarray([1.0, 2.0]); y = ga.copy(x); y[0] = 5.0
    >>> x.get(), y.get()
    (array([1., 2.]), array([5., 2.]))
    """
    if isinstance(a, ArrayBase):
        return a.copy(order)
    return array(a, order=order)


# ---------------------------------------------------------------- editing along an axis

def _flat_or_axis(arr, axis):
    """(arr, axis): the flattened array and 0 for axis=None, else the normalised axis."""
    arr = _array(arr)
    if axis is None:
        return (arr.ravel() if arr.ndim != 1 else arr), 0
    return arr, _normalize_axis(axis, arr.ndim)


def delete(arr, obj, axis=None):
    """A new array without the entries `obj` names along `axis` (None: of the flattened
    array): an index, a slice, indices or a boolean mask of the axis' length.

    Examples
    --------
    >>> ga.delete(ga.asarray([[1, 2, 3], [4, 5, 6]]), 1, axis=1).get()
    array([[1, 3],
           [4, 6]])
    """
    arr, axis = _flat_or_axis(arr, axis)
    n = arr.shape[axis]
    if isinstance(obj, slice):
        keep = np.ones(n, bool)
        keep[obj] = False
    elif isinstance(obj, ArrayBase) and obj.dtype == np.bool_:
        if obj.shape != (n,):
            raise ShapeError(f"boolean array argument obj to delete must be one dimensional "
                             f"and match the axis length of {n} (got shape {obj.shape})")
        keep = UFUNCS["logical_not"](obj)
    elif isinstance(obj, ArrayBase) and obj.ndim:
        keep = ones(n, np.bool_, context=arr.context)
        keep[obj] = False
    else:
        index = _host_index(obj)
        if index.dtype == np.bool_:
            if index.shape != (n,):
                raise ShapeError(f"boolean array argument obj to delete must be one "
                                 f"dimensional and match the axis length of {n} (got shape "
                                 f"{index.shape})")
            keep = ~index
        else:
            if index.dtype.kind not in "iu":
                raise IndexOutOfRange(f"arrays used as indices must be of integer (or boolean) "
                                      f"type, not {index.dtype}")
            bad = index[(index < -n) | (index >= n)]
            if bad.size:
                raise IndexOutOfRange(f"index {bad.flat[0]} is out of bounds for axis {axis} "
                                      f"with size {n}")
            keep = np.ones(n, bool)
            keep[index.reshape(-1)] = False
    return compress(keep, arr, axis=axis)


def _host_index(obj):
    """An index object as a numpy array (a GpuArray's few indices read back)."""
    index = obj.get() if isinstance(obj, ArrayBase) else np.asarray(obj)
    if index.size == 0 and not isinstance(obj, np.ndarray | ArrayBase):
        index = index.astype(np.intp)
    return index


def insert(arr, obj, values, axis=None):
    """A new array with `values` inserted before the index or indices `obj` along `axis`
    (None: of the flattened array), as numpy.insert: one index inserts `values` as a
    block, a sequence one value (broadcast) before each index; a boolean `obj` is a mask
    of the indices (numpy 2.1.2's reading).

    Examples
    --------
    >>> ga.insert(ga.asarray([1, 2, 3]), [0, 2], [8, 9]).get()
    array([8, 1, 2, 9, 3])
    """
    arr, axis = _flat_or_axis(arr, axis)
    ctx, n = arr.context, arr.shape[axis]
    values = _array(values, ctx)
    if values.dtype != arr.dtype:
        values = values.astype(arr.dtype)
    if isinstance(obj, slice):
        indices = np.arange(*obj.indices(n), dtype=np.intp)
    elif isinstance(obj, ArrayBase) and obj.size > 1:
        if obj.dtype == np.bool_:
            if obj.ndim != 1:
                raise ShapeError("boolean array argument obj to insert must be one dimensional")
            obj = flatnonzero(obj)
        return _insert_many(arr, axis, obj, values)
    else:
        indices = _host_index(obj)
        if indices.dtype == np.bool_:
            if indices.ndim != 1:
                raise ShapeError("boolean array argument obj to insert must be one dimensional")
            indices = np.flatnonzero(indices)
        elif indices.ndim > 1:
            raise ShapeError(f"index array argument obj to insert must be one dimensional or "
                             f"scalar (got shape {indices.shape})")
    if indices.size != 1:
        return _insert_many(arr, axis, asarray(indices.astype(np.int64), context=ctx), values)
    index = int(indices.reshape(()) if indices.ndim == 0 else indices[0])
    if not -n <= index <= n:
        raise IndexOutOfRange(f"index {index} is out of bounds for axis {axis} with size {n}")
    if index < 0:
        index += n
    values = values.reshape((1,) * (arr.ndim - values.ndim) + values.shape)
    if indices.ndim == 0:
        values = moveaxis(values, 0, axis)
    block = broadcast_to(values, arr.shape[:axis] + values.shape[axis:axis + 1] +
                         arr.shape[axis + 1:])
    return concatenate([arr[_along(arr.ndim, axis, slice(None, index))], block,
                        arr[_along(arr.ndim, axis, slice(index, None))]], axis=axis)


def _insert_many(arr, axis, indices, values):
    """insert at several indices (a 1-d device array): each value goes before its index, in
    the order of the indices (stable), as numpy.insert."""
    n, count = arr.shape[axis], indices.shape[0]
    if indices.dtype.kind not in "iu":
        raise IndexOutOfRange(f"arrays used as indices must be of integer type, not "
                              f"{indices.dtype}")
    indices = indices.astype(np.int64, copy=False)
    indices = where(UFUNCS["less"](indices, 0), UFUNCS["add"](indices, n), indices)
    order = argsort(indices)
    moved = empty(count, np.int64, context=arr.context)
    moved[order] = UFUNCS["add"](indices[order],
                                 asarray(np.arange(count, dtype=np.int64), context=arr.context))
    shape = list(arr.shape)
    shape[axis] += count
    old = ones(shape[axis], np.bool_, context=arr.context)
    old[moved] = False
    new = empty(tuple(shape), arr.dtype, context=arr.context)
    new[_along(arr.ndim, axis, moved)] = values
    new[_along(arr.ndim, axis, old)] = arr
    return new


def append(arr, values, axis=None):
    """`values` joined to the end of `arr` along `axis` (None: both flattened).

    Examples
    --------
    >>> ga.append(ga.asarray([1, 2, 3]), [[4, 5, 6]]).get()
    array([1, 2, 3, 4, 5, 6])
    """
    ctx = _context(arr, values)
    arr, values = _array(arr, ctx), _array(values, ctx)
    if axis is None:
        arr, values, axis = arr.ravel(), values.ravel(), 0
    return concatenate([arr, values], axis=axis)


def resize(a, new_shape):
    """A new array of `new_shape` filled with `a`'s elements (flattened) repeated in order.

    Examples
    --------
    >>> ga.resize(ga.asarray([[0, 1], [2, 3]]), (2, 3)).get()
    array([[0, 1, 2],
           [3, 0, 1]])
    """
    if isinstance(new_shape, numbers.Integral):
        new_shape = (new_shape,)
    new_shape = tuple(operator.index(n) for n in new_shape)
    if any(n < 0 for n in new_shape):
        raise ArgumentError(f"all elements of `new_shape` must be non-negative (got "
                            f"{new_shape})")
    a = _array(a).ravel()
    total = int(np.prod(new_shape))
    if a.size == 0 or total == 0:
        return zeros(new_shape, a.dtype, context=a.context)
    return tile(a, -(-total // a.size))[:total].reshape(new_shape)


def rot90(m, k=1, axes=(0, 1)):
    """`m` rotated by 90 degrees `k` times in the plane of `axes`, from the first axis
    towards the second (a view).

    Examples
    --------
    >>> ga.rot90(ga.asarray([[1, 2], [3, 4]])).get()
    array([[2, 4],
           [1, 3]])
    """
    axes = tuple(axes)
    if len(axes) != 2:
        raise ArgumentError(f"len(axes) must be 2 (got {axes!r}).")
    m = _array(m)
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ArgumentError(f"Axes must be different (got {axes!r}).")
    if any(not -m.ndim <= ax < m.ndim for ax in axes):
        raise ArgumentError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k %= 4
    if k == 0:
        return m[...]
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    perm = list(range(m.ndim))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return flip(m, axes[1]).transpose(perm)
    return flip(m.transpose(perm), axes[1])


def rollaxis(a, axis, start=0):
    """A view with `axis` moved to position `start` (numpy's older moveaxis).

    Examples
    --------
    >>> ga.rollaxis(ga.zeros((3, 4, 5, 6)), 3, 1).shape
    (3, 6, 4, 5)
    """
    a = _array(a)
    n = a.ndim
    axis = _normalize_axis(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed "
                        f"in")
    if axis < start:
        start -= 1
    if axis == start:
        return a[...]
    axes = [d for d in range(n) if d != axis]
    axes.insert(start, axis)
    return a.transpose(axes)


def _block_depth(arrays, index=()):
    """(depth of the nested lists, the largest ndim among the arrays), checked as numpy."""
    if type(arrays) is tuple:
        raise ArgumentTypeError(f"{index} is a tuple. Only lists can be used to arrange blocks, "
                                f"and np.block does not allow implicit conversion from tuple "
                                f"to ndarray.")
    if type(arrays) is not list:
        return 0, np.ndim(arrays) if not isinstance(arrays, ArrayBase) else arrays.ndim
    if not arrays:
        raise ArgumentError(f"List at arrays{list(index)} cannot be empty")
    found = [_block_depth(x, (*index, i)) for i, x in enumerate(arrays)]
    if any(d != found[0][0] for d, _ in found):
        raise ArgumentError(f"List depths are mismatched at arrays{list(index)}: "
                            f"{[d + 1 for d, _ in found]}")
    return found[0][0] + 1, max(n for _, n in found)


def block(arrays):
    """One array assembled from nested lists of blocks: the innermost lists join along the
    last axis, the next along the one before, ... (arrays raised to a common ndim).

    Examples
    --------
    >>> a = ga.ones((2, 2), dtype=np.int64)
    >>> ga.block([[a, 2 * a], [3 * a, 4 * a]]).get()
    array([[1, 1, 2, 2],
           [1, 1, 2, 2],
           [3, 3, 4, 4],
           [3, 3, 4, 4]])
    """
    depth, most = _block_depth(arrays)
    ndim = max(depth, most)
    ctx = _context(*_leaves(arrays))

    def build(x, level):
        if type(x) is not list:
            x = _array(x, ctx)
            return x.reshape((1,) * (ndim - x.ndim) + x.shape)
        return concatenate([build(y, level + 1) for y in x], axis=-(depth - level))

    return build(arrays, 0)


def _leaves(arrays):
    if type(arrays) is not list:
        return [arrays]
    return [leaf for x in arrays for leaf in _leaves(x)]


def diagflat(v, k=0):
    """A 2-d array with the flattened `v` on its k-th diagonal.

    Examples
    --------
    >>> ga.diagflat(ga.asarray([[1, 2], [3, 4]])).get()
    array([[1, 0, 0, 0],
           [0, 2, 0, 0],
           [0, 0, 3, 0],
           [0, 0, 0, 4]])
    """
    return diag(_array(v).ravel(), k)


def _bit_axis(a, axis):
    """(a moved so that the bits' axis is last, the axis) for packbits and unpackbits."""
    if axis is None:
        return a.ravel(), None
    axis = _normalize_axis(axis, a.ndim)
    return moveaxis(a, axis, -1), axis


def _bit_weights(bitorder, ctx):
    if bitorder not in ("big", "little"):
        raise ArgumentError(f"'order' must be either 'little' or 'big', not {bitorder!r}")
    shifts = np.arange(7, -1, -1) if bitorder == "big" else np.arange(8)
    return asarray(shifts.astype(np.uint8), context=ctx)


def packbits(a, /, axis=None, bitorder="big"):
    """The elements of a boolean or integer array (nonzero: 1) packed into bits of uint8,
    eight per byte along `axis` (None: flattened), padded with zeros.

    Examples
    --------
    >>> ga.packbits(ga.asarray([1, 0, 1, 1, 0, 0, 0, 0, 1])).get()
    array([176, 128], dtype=uint8)
    """
    a = _array(a)
    if a.dtype.kind not in "biu":
        raise ArgumentTypeError(f"Expected an input array of integer or boolean data type, "
                                f"not {a.dtype}")
    shifts = _bit_weights(bitorder, a.context)
    bits, axis = _bit_axis(UFUNCS["not_equal"](a, 0).astype(np.uint8), axis)
    n = bits.shape[-1]
    if n % 8:
        bits = concatenate([bits, zeros((*bits.shape[:-1], 8 - n % 8), np.uint8,
                                        context=a.context)], axis=-1)
    groups = bits.reshape((*bits.shape[:-1], -(-n // 8), 8))
    packed = sum_(UFUNCS["left_shift"](groups, shifts), axis=-1, dtype=np.uint8)
    return packed if axis is None else moveaxis(packed, -1, axis)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array as uint8 zeros and ones, eight per element along `axis`
    (None: flattened); `count` keeps that many (negative: drops that many at the end).

    Examples
    --------
    >>> ga.unpackbits(ga.asarray(np.array([2, 7], dtype=np.uint8))).get()
    array([0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1], dtype=uint8)
    """
    a = _array(a)
    if a.dtype != np.uint8:
        raise ArgumentTypeError(f"Expected an input array of unsigned byte data type, not "
                                f"{a.dtype}")
    shifts = _bit_weights(bitorder, a.context)
    moved, axis = _bit_axis(a, axis)
    bits = UFUNCS["bitwise_and"](UFUNCS["right_shift"](moved[..., None], shifts), 1)
    bits = bits.reshape((*moved.shape[:-1], moved.shape[-1] * 8))
    if count is not None:
        count = operator.index(count)
        total = bits.shape[-1]
        keep = count if count >= 0 else max(total + count, 0)
        if keep > total:
            bits = concatenate([bits, zeros((*bits.shape[:-1], keep - total), np.uint8,
                                            context=a.context)], axis=-1)
        else:
            bits = bits[..., :keep]
    return bits if axis is None else moveaxis(bits, -1, axis)


# ---------------------------------------------------------------- choosing by conditions

def select(condlist, choicelist, default=0):
    """Elements of the first choice whose condition holds, `default` where none does.

    Examples
    --------
    >>> x = ga.asarray(np.arange(6))
    >>> ga.select([x < 3, x > 3], [x, x ** 2], 42).get()
    array([ 0,  1,  2, 42, 16, 25])
    """
    if len(condlist) != len(choicelist):
        raise ArgumentError(f"list of cases must be same length as list of conditions "
                            f"({len(choicelist)} and {len(condlist)})")
    if len(condlist) == 0:
        raise ArgumentError("select with an empty condition list is not possible")
    ctx = _context(*condlist, *choicelist, default)
    choices = [c if type(c) in (int, float, complex) else _array(c, ctx)
               for c in [*choicelist, default]]
    try:
        dt = np.result_type(*(c.dtype if isinstance(c, ArrayBase) else c for c in choices))
    except TypeError as e:
        raise ArgumentTypeError(f"Choicelist and default value do not have a common dtype: "
                                f"{e}") from None
    conds = [_array(c, ctx) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise ArgumentTypeError(f"invalid entry {i} in condlist: should be boolean ndarray "
                                    f"(got {c.dtype})")
    shape0 = broadcast_shapes(*(c.shape for c in conds))
    choice_shape = broadcast_shapes(*(np.shape(c) if not isinstance(c, ArrayBase) else c.shape
                                      for c in choices))
    result_shape = broadcast_shapes(shape0, choice_shape) if choice_shape else shape0
    result = empty(result_shape, dt, context=ctx or conds[0].context)
    result[...] = choices[-1]
    for cond, choice in zip(conds[::-1], choices[-2::-1]):
        result = where(cond, choice, result).astype(dt, copy=False)
    return result


def piecewise(x, condlist, funclist, *args, **kw):
    """Values of `x` mapped by the function (or constant) of the condition each element
    meets, 0 where none does; one extra function is the 'otherwise' case.

    Examples
    --------
    >>> x = ga.asarray([-2.0, -1.0, 0.5, 3.0])
    >>> ga.piecewise(x, [x < 0, x >= 0], [-1.0, lambda v: v * 2]).get()
    array([-1., -1.,  1.,  6.])
    """
    x = _array(x)
    if np.isscalar(condlist) or (isinstance(condlist, ArrayBase) and condlist.ndim == 0):
        condlist = [condlist]
    else:
        first = condlist[0]
        arrayish = isinstance(first, list | np.ndarray) or (isinstance(first, ArrayBase)
                                                            and first.ndim > 0)
        if not arrayish and x.ndim != 0:
            condlist = [condlist]
    conds = [_array(c, x.context).astype(np.bool_, copy=False) for c in condlist]
    count = len(conds)
    if count == len(funclist) - 1:
        anything = conds[0]
        for c in conds[1:]:
            anything = anything | c
        conds.append(UFUNCS["logical_not"](anything))
    elif count != len(funclist):
        raise ArgumentError(f"with {count} condition(s), either {count} or {count + 1} "
                            f"functions are expected")
    y = zeros(x.shape, x.dtype, context=x.context)
    for cond, func in zip(conds, funclist):
        cond = broadcast_to(cond, x.shape)
        if not callable(func):
            y[cond] = func
            continue
        chosen = x[cond]
        if chosen.size:
            y[cond] = func(chosen, *args, **kw)
    return y


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to every 1-d slice of `arr` along `axis` (slices are device views;
    results are gathered on the device; a Python loop, as in numpy).

    Examples
    --------
    >>> ga.apply_along_axis(lambda v: v[0] + v[-1], 1, ga.asarray([[1, 2, 3], [4, 5, 6]])).get()
    array([ 4, 10])
    """
    arr = _array(arr)
    axis = _normalize_axis(axis, arr.ndim)
    view = moveaxis(arr, axis, -1)
    outer = view.shape[:-1]
    points = itertools.product(*(range(n) for n in outer))
    first = next(points, None)
    if first is None:
        raise ArgumentError("Cannot apply_along_axis when any iteration dimensions are 0")
    res = _array(func1d(view[(*first, Ellipsis)], *args, **kwargs), arr.context)
    buff = empty(outer + res.shape, res.dtype, context=arr.context)
    buff[(*first, Ellipsis)] = res
    for point in points:
        buff[(*point, Ellipsis)] = _array(func1d(view[(*point, Ellipsis)], *args, **kwargs),
                                          arr.context)
    dims = list(range(buff.ndim))
    return buff.transpose(dims[:axis] + dims[buff.ndim - res.ndim:] +
                          dims[axis:buff.ndim - res.ndim])


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each of `axes` in turn, each result kept with the reduced
    axis (numpy's keepdims), as numpy.apply_over_axes.

    Examples
    --------
    >>> ga.apply_over_axes(ga.sum, ga.asarray(np.arange(24).reshape(2, 3, 4)), [0, 2]).get()
    array([[[ 60],
            [ 92],
            [124]]])
    """
    value = _array(a)
    n = value.ndim
    for axis in (axes,) if np.ndim(axes) == 0 else axes:
        if axis < 0:
            axis += n
        result = func(value, axis)
        if result.ndim != value.ndim:
            result = expand_dims(result, axis)
            if result.ndim != value.ndim:
                raise ArgumentError("function is not returning an array of the correct shape")
        value = result
    return value



FUNCTIONS = {f.__name__: f for f in (
    copy, delete, insert, append, resize, rot90, rollaxis, block, diagflat, packbits, unpackbits,
    select, piecewise, apply_along_axis, apply_over_axes)}
