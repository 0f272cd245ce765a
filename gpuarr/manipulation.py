"""Joining, splitting, tiling, padding and rearranging arrays, and the creation functions
that build arrays from a few numbers (eye, tri, linspace, meshgrid, ...), as numpy has them.

Results are views where numpy's are (flip, diagonal, split, moveaxis, broadcast_arrays),
else new arrays filled by strided copies. Copies of one dtype move raw items (its bytes as
unsigned integers of its size), so one copy kernel serves every dtype of a size; a gather
along one axis (repeat with per-element counts, pad's edge/reflect/symmetric/wrap) is one
kernel of kernels/manipulation.cl.mako per item size. Only metadata meets the host: shapes,
widths, split points, repeats given there, and for repeats on the device their total, the
one number that sizes the result.
"""

import functools
import itertools
import math
import numbers
import operator

import numpy as np

from . import dtypes, elemwise, reduction
from .base import (
    ArrayBase,
    _host_scalar,
    _normalize_axis,
    asarray,
    broadcast_to,
    check_same_context,
    empty,
    expand_dims,
    to_device,
    zeros,
)
from .context import get_context
from .errors import (
    ArgumentError,
    ArgumentOverflow,
    ArgumentTypeError,
    AxisError,
    ShapeError,
    UnsupportedError,
)
from .kernels import get_kernel, render
from .launch import enqueue
from .ufuncs import UFUNCS

_RAW = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
        8: np.dtype(np.uint64)}
_BIG = 2**62  # an unbounded side of tril/triu's band
_INT32_MAX = 2**31 - 1


# ---------------------------------------------------------------- helpers


def _operands(values, out=None):
    """`values` as GpuArrays of one context (host data uploaded there), and that context."""
    gpu = [v for v in (*values, out) if isinstance(v, ArrayBase)]
    ctx = check_same_context(*gpu) if gpu else get_context()
    return [v if isinstance(v, ArrayBase) else asarray(v, context=ctx) for v in values], ctx


def _sequence(arrays):
    """The arrays of a stacking call: a list, a tuple, or the rows of one array, as numpy."""
    if isinstance(arrays, ArrayBase):
        return list(arrays)
    if not hasattr(arrays, "__getitem__"):
        raise ArgumentTypeError('arrays to stack must be passed as a "sequence" type such as '
                                f'list or tuple, not {type(arrays).__name__}')
    return list(arrays)


def _index(value, what):
    try:
        return operator.index(value)
    except TypeError:
        raise ArgumentTypeError(f"'{type(value).__name__}' object cannot be interpreted as an "
                                f"integer ({what} {value!r})") from None


def _has_len(x):
    try:
        len(x)
    except TypeError:
        return False
    return True


def _axis_tuple(axis, ndim, argname=None, allow_duplicate=False):
    """numpy's normalize_axis_tuple: AxisError (prefixed by `argname`), repeated axes."""
    axes = tuple(axis) if isinstance(axis, tuple | list) else (axis,)
    out = []
    for ax in axes:
        try:
            out.append(_normalize_axis(ax, ndim))
        except AxisError as e:
            raise AxisError(f"{argname}: {e}" if argname else str(e)) from None
    if not allow_duplicate and len(set(out)) != len(out):
        raise ArgumentError(f"repeated axis in `{argname}` argument: {axes}" if argname
                            else f"repeated axis: {axes}")
    return tuple(out)


def _sub(a, slices):
    """a[slices] for a tuple of slices, one per leading axis: a view."""
    shape, strides, offset = list(a.shape), list(a.strides), a.offset
    for d, sl in enumerate(slices):
        start, stop, step = sl.indices(a.shape[d])
        length = len(range(start, stop, step))
        if length:
            offset += start * a.strides[d]
        shape[d] = length
        strides[d] = a.strides[d] * step
    return a._view(tuple(shape), tuple(strides), offset=offset)


def _along(a, axis, start, stop):
    return _sub(a, (slice(None),) * axis + (slice(start, stop),))


def _raw(a):
    """`a`'s items as unsigned integers of their size (16-byte items: a last axis of two
    uint64), so that one copy kernel serves every dtype of a size."""
    if a.itemsize == 16:
        return a._view((*a.shape, 2), (*a.strides, 8), dtype=_RAW[8])
    return a._view(a.shape, a.strides, dtype=_RAW[a.itemsize])


def _copy_into(dst, src):
    """dst[...] = src (broadcast to dst's shape); numpy's unsafe cast between dtypes."""
    if src.dtype != dst.dtype:
        return dst._assign(src)
    if src.shape != dst.shape:
        src = broadcast_to(src, dst.shape)
    _raw(dst)._assign(_raw(src))
    return dst


def _copy(a):
    return _copy_into(empty(a.shape, a.dtype, context=a.context), a)


def _ravel(a):
    """a.ravel(), copying (raw items) only when `a` is not C-contiguous."""
    return (a if a._is_c() else _copy(a)).reshape(-1)


def _fill(a, value):
    """a[...] = value (numpy's setitem cast), through the raw items."""
    bits = _host_scalar(value, a.dtype).reshape(1).view(_RAW[min(a.itemsize, 8)])
    if a.itemsize == 16:
        for k in (0, 1):
            a._view(a.shape, a.strides, offset=a.offset + 8 * k, dtype=_RAW[8]).fill(bits[k])
    else:
        _raw(a).fill(bits[0])
    return a


def _check_cast(srcs, dst, casting):
    for src in srcs:
        try:
            ok = np.can_cast(src, dst, casting)
        except ValueError as e:
            raise ArgumentError(str(e)) from None
        if not ok:
            raise ArgumentTypeError(f"Cannot cast array data from {src!r} to {dst!r} according "
                                    f"to the rule {casting!r}")


# ---------------------------------------------------------------- joining

def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays along an existing axis (axis=None: of the flattened arrays).

    Parameters
    ----------
    arrays : sequence of GpuArray or array_like
        Same shape but along `axis`; host arrays are copied to the first GpuArray's context.
    axis : int or None
    out : GpuArray, optional
        The result's destination, of the result's shape.
    dtype, casting
        As numpy's: the result dtype (default: numpy's promotion of the inputs) and the
        casting rule to it. Only one of `out` and `dtype`.

    Returns
    -------
    GpuArray

    Examples
    --------
    >>> a = ga.asarray(np.ones((2, 2)))
    >>> ga.concatenate([a, np.zeros((1, 2))]).get()
    array([[1., 1.],
           [1., 1.],
           [0., 0.]])
    """
    if out is not None and dtype is not None:
        raise ArgumentTypeError("concatenate() only takes `out` or `dtype` as an argument, "
                                "but both were provided.")
    if out is not None and not isinstance(out, ArrayBase):
        raise ArgumentTypeError(f"out= must be a GpuArray, not {type(out).__name__}")
    arrays, ctx = _operands(_sequence(arrays), out)
    if not arrays:
        raise ArgumentError("need at least one array to concatenate")
    if axis is None:
        arrays = [_ravel(a) for a in arrays]
        axis = 0
    first = arrays[0]
    if first.ndim == 0:
        raise ShapeError("zero-dimensional arrays cannot be concatenated")
    ax = _normalize_axis(axis, first.ndim)
    for k, a in enumerate(arrays[1:], 1):
        if a.ndim != first.ndim:
            raise ShapeError(f"all the input arrays must have same number of dimensions, but the "
                             f"array at index 0 has {first.ndim} dimension(s) and the array at "
                             f"index {k} has {a.ndim} dimension(s)")
        for d, (n0, n) in enumerate(zip(first.shape, a.shape)):
            if d != ax and n != n0:
                raise ShapeError(f"all the input array dimensions except for the concatenation "
                                 f"axis must match exactly, but along dimension {d}, the array "
                                 f"at index 0 has size {n0} and the array at index {k} has "
                                 f"size {n}")
    shape = (*first.shape[:ax], sum(a.shape[ax] for a in arrays), *first.shape[ax + 1:])
    if out is not None:
        result_dtype = out.dtype
    elif dtype is not None:
        result_dtype = dtypes.normalize(dtype)
    else:
        result_dtype = np.result_type(*(a.dtype for a in arrays))
    _check_cast([a.dtype for a in arrays], result_dtype, casting)
    if out is None:
        out = empty(shape, result_dtype, context=ctx)
    else:
        if out.shape != shape:
            raise ShapeError(f"Output array is the wrong shape: {out.shape}; the concatenation "
                             f"has shape {shape}")
        out._check_writeable()
        # an input that overlaps out is read from a copy: earlier pieces may overwrite it
        arrays = [_copy(a) if a._may_share(out) else a for a in arrays]
    pos = 0
    for a in arrays:
        n = a.shape[ax]
        _copy_into(_along(out, ax, pos, pos + n), a)
        pos += n
    return out


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays of one shape along a new axis (`out`, `dtype`, `casting` as
    `concatenate`).

    Examples
    --------
    >>> a = ga.asarray(np.arange(3.0))
    >>> ga.stack([a, a], axis=1).shape
    (3, 2)
    """
    arrays, _ = _operands(_sequence(arrays), out)
    if not arrays:
        raise ArgumentError("need at least one array to stack")
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise ShapeError(f"all input arrays must have the same shape, got "
                         f"{', '.join(map(str, sorted(shapes)))}")
    ax = _normalize_axis(axis, arrays[0].ndim + 1)
    return concatenate([expand_dims(a, ax) for a in arrays], ax, out, dtype=dtype,
                       casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Stack along the first axis (1-d arrays become rows)."""
    arrays, _ = _operands(_sequence(tup))
    return concatenate([_atleast_2d(a) for a in arrays], 0, dtype=dtype, casting=casting)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Stack along the second axis (the first for 1-d arrays)."""
    arrays, _ = _operands(_sequence(tup))
    arrays = [_atleast_1d(a) for a in arrays]
    axis = 0 if arrays and arrays[0].ndim == 1 else 1
    return concatenate(arrays, axis, dtype=dtype, casting=casting)


def dstack(tup):
    """Stack along the third axis (arrays made at least 3-d as atleast_3d does)."""
    arrays, _ = _operands(_sequence(tup))
    return concatenate([_atleast_3d(a) for a in arrays], 2)


def column_stack(tup):
    """Stack 1-d arrays as columns (and 2-d arrays as they are) along the second axis."""
    arrays, _ = _operands(_sequence(tup))
    arrays = [a.reshape(-1, 1) if a.ndim < 2 else a for a in arrays]
    return concatenate(arrays, 1)


def _atleast_1d(a):
    return a.reshape(1) if a.ndim == 0 else a


def _atleast_2d(a):
    return a.reshape(1, 1) if a.ndim == 0 else expand_dims(a, 0) if a.ndim == 1 else a


def _atleast_3d(a):
    if a.ndim == 0:
        return a.reshape(1, 1, 1)
    if a.ndim == 1:
        return expand_dims(a, (0, 2))
    return expand_dims(a, 2) if a.ndim == 2 else a


def _atleast(fn, arys):
    out = tuple(fn(asarray(a)) for a in arys)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """Views with at least one dimension (one array, or a tuple for several)."""
    return _atleast(_atleast_1d, arys)


def atleast_2d(*arys):
    """Views with at least two dimensions; 1-d arrays become one row."""
    return _atleast(_atleast_2d, arys)


def atleast_3d(*arys):
    """Views with at least three dimensions: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    return _atleast(_atleast_3d, arys)


# ---------------------------------------------------------------- splitting

def array_split(ary, indices_or_sections, axis=0):
    """Views of `ary` split along `axis` at the given indices, or into that many sections
    (the first ones one longer when they do not divide the axis)."""
    a = asarray(ary)
    ax = _normalize_axis(axis, a.ndim)
    total = a.shape[ax]
    if isinstance(indices_or_sections, ArrayBase):
        indices_or_sections = indices_or_sections.get().tolist()
    if _has_len(indices_or_sections):
        points = [_index(p, "split index") for p in indices_or_sections]
    else:
        sections = _index(indices_or_sections, "number of sections")
        if sections <= 0:
            raise ArgumentError(f"number sections must be larger than 0. (got {sections})")
        each, extras = divmod(total, sections)
        sizes = [each + 1] * extras + [each] * (sections - extras)
        points = list(np.cumsum(sizes[:-1]))
    bounds = [0, *points, total]
    return [_sub(a, (slice(None),) * ax + (slice(int(lo), int(hi)),))
            for lo, hi in itertools.pairwise(bounds)]


def split(ary, indices_or_sections, axis=0):
    """array_split, requiring sections to divide the axis evenly.

    Parameters
    ----------
    ary : GpuArray or array_like
    indices_or_sections : int or sequence of int
        A number of equal sections, or the indices where the axis is cut.
    axis : int

    Returns
    -------
    list of GpuArray
        Views of `ary`.

    Raises
    ------
    ValueError
        A number of sections that does not divide the axis.

    Examples
    --------
    >>> [p.get() for p in ga.split(ga.asarray(np.arange(6.0)), 3)]
    [array([0., 1.]), array([2., 3.]), array([4., 5.])]
    >>> [p.shape for p in ga.split(ga.asarray(np.arange(6.0)), [1, 4])]
    [(1,), (3,), (2,)]
    """
    a = asarray(ary)
    if not _has_len(indices_or_sections):
        sections = _index(indices_or_sections, "number of sections")
        n = a.shape[_normalize_axis(axis, a.ndim)]
        if sections > 0 and n % sections:
            raise ArgumentError(f"array split does not result in an equal division: {n} "
                                f"elements along axis {axis} into {sections} sections")
    return array_split(a, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """split along the second axis (the first for 1-d arrays)."""
    a = asarray(ary)
    if a.ndim == 0:
        raise ShapeError("hsplit only works on arrays of 1 or more dimensions")
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """split along the first axis of an array of 2 or more dimensions."""
    a = asarray(ary)
    if a.ndim < 2:
        raise ShapeError(f"vsplit only works on arrays of 2 or more dimensions, not {a.ndim}")
    return split(a, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """split along the third axis of an array of 3 or more dimensions."""
    a = asarray(ary)
    if a.ndim < 3:
        raise ShapeError(f"dsplit only works on arrays of 3 or more dimensions, not {a.ndim}")
    return split(a, indices_or_sections, 2)


# ---------------------------------------------------------------- repeating

def tile(A, reps):
    """`A` repeated `reps` times along each axis (one broadcast copy).

    Examples
    --------
    >>> ga.tile(ga.asarray(np.array([1, 2])), (2, 2)).get()
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]])
    """
    a = asarray(A)
    try:
        tup = tuple(reps)
    except TypeError:
        tup = (reps,)
    tup = tuple(_index(r, "reps") for r in tup)
    if any(r < 0 for r in tup):
        raise ShapeError(f"negative dimensions are not allowed: reps {tup}")
    if a.ndim < len(tup):
        a = a.reshape((1,) * (len(tup) - a.ndim) + a.shape)
    tup = (1,) * (a.ndim - len(tup)) + tup
    shape, strides = [], []
    for r, n, s in zip(tup, a.shape, a.strides):
        shape += [r, n]
        strides += [0, s]
    out = empty(tuple(shape), a.dtype, context=a.context)
    _copy_into(out, a._view(tuple(shape), tuple(strides)))
    return out.reshape(tuple(r * n for r, n in zip(tup, a.shape)))


def repeat(a, repeats, axis=None):
    """Each element repeated `repeats` times (a count, or one per element along `axis`);
    axis=None repeats the flattened array.

    Examples
    --------
    >>> a = ga.asarray(np.array([1, 2]))
    >>> ga.repeat(a, 2).get(), ga.repeat(a, [1, 3]).get()
    (array([1, 1, 2, 2]), array([1, 2, 2, 2]))
    """
    a = asarray(a)
    if axis is None:
        a = _ravel(a)
        ax = 0
    else:
        ax = _normalize_axis(axis, a.ndim)
    n = a.shape[ax]
    if isinstance(repeats, ArrayBase):
        check_same_context(a, repeats)
        _check_repeat_dtype(repeats.dtype, "array data")
        if repeats.ndim > 1:
            raise ShapeError(f"repeats must be a number or 1-d, not of shape {repeats.shape}")
        if repeats.size != 1:
            _check_repeat_count(repeats.size, n)
            return _repeat_each_device(a, ax, repeats)
        repeats = int(repeats)
    else:
        if isinstance(repeats, np.ndarray | np.generic):
            _check_repeat_dtype(repeats.dtype, "array data" if repeats.ndim else "scalar")
        try:
            counts = np.array(repeats, dtype=np.intp)
        except OverflowError as e:
            raise ArgumentError(f"repeats {repeats!r}: {e}") from None
        except (TypeError, ValueError) as e:
            raise ArgumentTypeError(f"repeats {repeats!r}: {e}") from None
        if counts.ndim > 1:
            raise ShapeError(f"repeats must be a number or 1-d, not of shape {counts.shape}")
        if counts.size != 1:
            _check_repeat_count(counts.size, n)
            if (counts < 0).any():
                raise ArgumentError("repeats may not contain negative values.")
            cum = np.cumsum(counts, dtype=np.int64)
            table = to_device(cum, a.context)
            return _take_axis(a, ax, int(cum[-1]) if n else 0, "repeat", table)
        repeats = int(counts.reshape(()))
    if repeats < 0:
        raise ShapeError(f"negative dimensions are not allowed: repeats {repeats}")
    view = a._view((*a.shape[:ax + 1], repeats, *a.shape[ax + 1:]),
                   (*a.strides[:ax + 1], 0, *a.strides[ax + 1:]))
    out = _copy_into(empty(view.shape, a.dtype, context=a.context), view)
    return out.reshape((*a.shape[:ax], n * repeats, *a.shape[ax + 1:]))


def _check_repeat_dtype(dt, what):
    if not np.can_cast(dt, np.intp, "safe"):
        raise ArgumentTypeError(f"Cannot cast {what} from {dt!r} to {np.dtype(np.intp)!r} "
                                f"according to the rule 'safe'")


def _check_repeat_count(count, n):
    if count != n:
        raise ShapeError(f"operands could not be broadcast together with shape ({n},) "
                         f"({count},)")


def _repeat_each_device(a, ax, repeats):
    """repeat with per-element counts on the device: their running sum sizes the result
    (one read, with the least count to refuse negative ones) and maps it to the input."""
    counts = repeats if repeats.dtype == np.int64 else repeats.astype(np.int64)
    cum = reduction.cumsum(counts)
    n = counts.shape[0]
    if n == 0:
        return _take_axis(a, ax, 0, "repeat", cum)
    head = empty(2, np.int64, context=a.context)
    _copy_into(_along(head, 0, 0, 1), _along(cum, 0, n - 1, n))
    if repeats.dtype.kind == "i":
        _copy_into(_along(head, 0, 1, 2), reduction.min(counts).reshape(1))
    else:
        _along(head, 0, 1, 2).fill(0)
    total, least = (int(v) for v in head.get())
    if least < 0:
        raise ArgumentError("repeats may not contain negative values.")
    return _take_axis(a, ax, total, "repeat", cum)


_TAKE_MODES = {"repeat": 0, "edge": 1, "reflect": 2, "symmetric": 3, "wrap": 4}


def _outer_axis_inner(a, axis):
    """(outer, axis, inner) element strides viewing `a` as 3-d around `axis`, or None."""
    item = a.itemsize
    if a.offset % item or any(s % item for s in a.strides):
        return None
    es = [s // item for s in a.strides]
    parts = []
    for dims, strides in ((a.shape[:axis], es[:axis]), (a.shape[axis + 1:], es[axis + 1:])):
        kept, (collapsed,) = elemwise.collapse(list(dims), [list(strides)])
        if len(kept) > 1:
            return None
        parts.append(collapsed[0] if kept else 0)
    return parts[0], es[axis], parts[1]


def _take_axis(a, axis, m, mode, table=None, before=0):
    """A new array: `a` with axis `axis` replaced by `m` positions, each a copy of one index
    along it (the mode's map; see kernels/manipulation.cl.mako)."""
    ctx = a.context
    out = empty((*a.shape[:axis], m, *a.shape[axis + 1:]), a.dtype, context=ctx)
    total = out.size
    if total == 0:
        return out
    layout = _outer_axis_inner(a, axis)
    if layout is None:
        a = _copy(a)
        layout = _outer_axis_inner(a, axis)
    outer, n, inner = math.prod(a.shape[:axis]), a.shape[axis], math.prod(a.shape[axis + 1:])
    item = a.itemsize
    offset = a.offset // item
    reach = abs(offset) + sum(abs(s) * (d - 1) for s, d in zip(layout, (outer, n, inner)))
    index_t = "int" if max(total, reach, 2 * (n + m)) <= _INT32_MAX else "long"
    itype = np.int32 if index_t == "int" else np.int64
    kernel = get_kernel(ctx, ("take_axis", item, index_t), "manipulation.cl.mako",
                        [itype] * 3 + [None, None] + [itype] * 4 + [np.int32, itype, itype, None],
                        name="take_axis", part="take", itemsize=item, index_t=index_t)
    local = ctx.local_size
    table = None if table is None else table.storage
    enqueue(ctx, kernel, (-(-total // local) * local,), (local,),
            [total, m, inner, out.storage, a.storage, offset, *layout, _TAKE_MODES[mode], n,
             before, table], [a.storage] if table is None else [a.storage, table],
            [out.storage])
    return out


# ---------------------------------------------------------------- rearranging

def flip(m, axis=None):
    """A view with the order of elements reversed along `axis` (all axes when None)."""
    a = asarray(m)
    axes = range(a.ndim) if axis is None else _axis_tuple(axis, a.ndim)
    strides, offset = list(a.strides), a.offset
    for d in axes:
        if a.shape[d]:
            offset += (a.shape[d] - 1) * a.strides[d]
        strides[d] = -strides[d]
    return a._view(a.shape, tuple(strides), offset=offset)


def fliplr(m):
    """flip along the second axis."""
    a = asarray(m)
    if a.ndim < 2:
        raise ShapeError(f"Input must be >= 2-d, not {a.ndim}-d.")
    return flip(a, 1)


def flipud(m):
    """flip along the first axis."""
    a = asarray(m)
    if a.ndim < 1:
        raise ShapeError("Input must be >= 1-d, not 0-d.")
    return flip(a, 0)


def roll(a, shift, axis=None):
    """Elements shifted along `axis` (the flattened array when None), wrapping around.

    Examples
    --------
    >>> ga.roll(ga.asarray(np.arange(5)), 2).get()
    array([3, 4, 0, 1, 2])
    """
    a = asarray(a)
    if axis is None:
        return roll(_ravel(a), shift, 0).reshape(a.shape)
    axes = _axis_tuple(axis, a.ndim, allow_duplicate=True)
    if isinstance(shift, ArrayBase):
        shift = shift.get()
    try:
        pairs = np.broadcast(shift, axes)
    except ValueError as e:
        raise ShapeError(f"roll: shift {shift!r} and axis {axis!r}: {e}") from None
    shifts = [0] * a.ndim
    for sh, ax in pairs:
        shifts[ax] += _index(sh, "shift")
    pieces = [[(slice(None), slice(None))] for _ in range(a.ndim)]
    for ax, sh in enumerate(shifts):
        sh %= a.shape[ax] or 1
        if sh:
            pieces[ax] = [(slice(None, -sh), slice(sh, None)), (slice(-sh, None), slice(None, sh))]
    out = empty(a.shape, a.dtype, context=a.context)
    for choice in _product(pieces):
        _copy_into(_sub(out, tuple(dst for _, dst in choice)),
                   _sub(a, tuple(src for src, _ in choice)))
    return out


def _product(lists):
    combos = [()]
    for options in lists:
        combos = [(*c, o) for c in combos for o in options]
    return combos


def moveaxis(a, source, destination):
    """A view with axes `source` moved to positions `destination`, the others in order."""
    a = asarray(a)
    src = _axis_tuple(source, a.ndim, "source")
    dst = _axis_tuple(destination, a.ndim, "destination")
    if len(src) != len(dst):
        raise ArgumentError(f"`source` and `destination` arguments must have the same number of "
                            f"elements, not {len(src)} and {len(dst)}")
    order = [d for d in range(a.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return a.transpose(order)


def broadcast_arrays(*args):
    """Read-only views of the arrays broadcast to one shape (a tuple)."""
    arrays, _ = _operands(args)
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError as e:
        raise ShapeError(str(e)) from None
    if all(a.shape == shape for a in arrays):
        return tuple(arrays)
    return tuple(broadcast_to(a, shape) for a in arrays)


# ---------------------------------------------------------------- padding

_PAD_KEYWORDS = {"constant": ("constant_values",), "edge": (), "reflect": ("reflect_type",),
                 "symmetric": ("reflect_type",), "wrap": (), "empty": ()}
_PAD_NUMPY_ONLY = ("linear_ramp", "maximum", "mean", "median", "minimum")


def _as_pairs(x, ndim, as_index=False):
    """numpy.pad's reading of pad_width and constant_values: ndim (before, after) pairs."""
    x = np.array(x)
    if as_index:
        x = np.round(x).astype(np.intp, copy=False)
    if x.ndim < 3:
        if x.size == 1:
            x = x.ravel()
            if as_index and x[0] < 0:
                raise ArgumentError(f"index can't contain negative values (pad width {x[0]})")
            return ((x[0], x[0]),) * ndim
        if x.size == 2 and x.shape != (2, 1):
            x = x.ravel()
            if as_index and (x[0] < 0 or x[1] < 0):
                raise ArgumentError(f"index can't contain negative values (pad widths "
                                    f"{x.tolist()})")
            return ((x[0], x[1]),) * ndim
    if as_index and x.size and x.min() < 0:
        raise ArgumentError("index can't contain negative values")
    try:
        return np.broadcast_to(x, (ndim, 2)).tolist()
    except ValueError as e:
        raise ShapeError(f"{e} (pad argument of shape {x.shape} for {ndim} dimensions)") \
            from None


def pad(array, pad_width, mode="constant", **kwargs):
    """numpy.pad for modes constant (constant_values=), edge, reflect, symmetric, wrap and
    empty; pad_width as an int, a pair, one pair per axis, or a dict {axis: width}.

    Examples
    --------
    >>> a = ga.asarray(np.array([1, 2]))
    >>> ga.pad(a, (1, 2)).get(), ga.pad(a, 1, mode="edge").get()
    (array([0, 1, 2, 0, 0]), array([1, 1, 2, 2]))
    """
    a = asarray(array)
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * a.ndim
        for ax, width in pad_width.items():
            seq[_normalize_axis(ax, a.ndim)] = (width, width) if isinstance(
                width, numbers.Integral) else tuple(width)
        pad_width = seq
    if isinstance(pad_width, ArrayBase):
        pad_width = pad_width.get()
    widths = np.asarray(pad_width)
    if widths.dtype.kind != "i":
        raise ArgumentTypeError(f"`pad_width` must be of integral type, not {widths.dtype}.")
    widths = [(int(b), int(e)) for b, e in _as_pairs(widths, a.ndim, as_index=True)]
    if callable(mode) or mode in _PAD_NUMPY_ONLY:
        raise UnsupportedError(f"pad mode {mode!r} is not supported by gpuarr; supported: "
                               f"{', '.join(_PAD_KEYWORDS)}")
    if mode not in _PAD_KEYWORDS:
        raise ArgumentError(f"mode '{mode}' is not supported")
    unsupported = set(kwargs) - set(_PAD_KEYWORDS[mode])
    if unsupported:
        raise ArgumentError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if kwargs.get("reflect_type", "even") == "odd":
        raise UnsupportedError("pad with reflect_type='odd' is not supported by gpuarr")
    shape = tuple(n + b + e for n, (b, e) in zip(a.shape, widths))
    if mode in ("constant", "empty"):
        out = empty(shape, a.dtype, context=a.context)
        inside = [slice(b, b + n) for n, (b, _) in zip(a.shape, widths)]
        _copy_into(_sub(out, tuple(inside)), a)
        if mode == "constant":
            values = _as_pairs(kwargs.get("constant_values", 0), a.ndim)
            # numpy's order: axis d's pads span axes < d whole (their pads included) and
            # axes > d inside only, so later axes win the corners.
            for d, ((b, e), (vb, ve)) in enumerate(zip(widths, values)):
                region = [slice(None)] * (d + 1) + inside[d + 1:]
                for sl, value in ((slice(0, b), vb), (slice(shape[d] - e, shape[d]), ve)):
                    if sl.start != sl.stop:
                        _fill(_sub(out, (*region[:d], sl, *region[d + 1:])), value)
        return out
    if a.size == 0:
        for d, (n, (b, e)) in enumerate(zip(a.shape, widths)):
            if n == 0 and (b or e):
                raise ArgumentError(f"can't extend empty axis {d} using modes other than "
                                    f"'constant' or 'empty'")
        return empty(shape, a.dtype, context=a.context)
    out = a
    for d, (b, e) in enumerate(widths):
        if b or e:
            out = _take_axis(out, d, shape[d], mode, before=b)
    return _copy(a) if out is a else out


# ---------------------------------------------------------------- diagonals and triangles

def diagonal(a, offset=0, axis1=0, axis2=1):
    """A read-only view of the diagonal of the (axis1, axis2) planes, as the last axis."""
    a = asarray(a)
    if a.ndim < 2:
        raise ShapeError(f"diag requires an array of at least two dimensions, not {a.ndim}")
    d1 = _axis_tuple(axis1, a.ndim, "axis1")[0]
    d2 = _axis_tuple(axis2, a.ndim, "axis2")[0]
    if d1 == d2:
        raise ArgumentError(f"axis1 and axis2 cannot be the same (both {d1})")
    offset = _index(offset, "offset")
    if not -2**63 <= offset < 2**63:
        raise ArgumentOverflow(f"diagonal offset {offset} is too large to convert to a C "
                               f"long (numpy: OverflowError)")
    n1, n2 = a.shape[d1], a.shape[d2]
    s1, s2 = a.strides[d1], a.strides[d2]
    if offset >= 0:
        length, start = max(0, min(n1, n2 - offset)), offset * s2
    else:
        length, start = max(0, min(n1 + offset, n2)), -offset * s1
    keep = [d for d in range(a.ndim) if d not in (d1, d2)]
    view = a._view((*(a.shape[d] for d in keep), length), (*(a.strides[d] for d in keep), s1 + s2),
                   offset=a.offset + (start if length else 0))
    view._writeable = False
    return view


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum of the diagonal (numpy's sum dtypes); a 0-d array for a 2-d input."""
    return reduction.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)


def diag(v, k=0):
    """The k-th diagonal of a 2-d array (a read-only view), or a 2-d array with the 1-d `v`
    on its k-th diagonal."""
    a = asarray(v)
    k = _index(k, "k")
    if a.ndim == 2:
        return diagonal(a, k)
    if a.ndim != 1:
        raise ShapeError(f"Input must be 1- or 2-d, not {a.ndim}-d.")
    n = a.shape[0] + abs(k)
    out = zeros((n, n), a.dtype, context=a.context)
    start = k if k >= 0 else -k * n
    _copy_into(out._view(a.shape, ((n + 1) * a.itemsize,), offset=start * a.itemsize), a)
    return out


@functools.cache
def _band_loop(raw):
    """out = in where lo <= column - row <= hi, else 0, on raw items (tril, triu, tri, eye):
    one kernel per item size. `band_inner` is 2 for 16-byte items (two uint64 each)."""
    return elemwise.Loop(
        ((raw, raw, False),), ((raw, raw),),
        "const long band_q = (long)i / band_inner;\n"
        "const long band_d = band_q % band_cols - (band_q / band_cols) % band_rows;\n"
        f"out0 = (band_d >= band_lo && band_d <= band_hi) ? in0 : ({dtypes.cl_type(raw)})0;",
        scalar_args=tuple(("int64", f"band_{k}") for k in ("inner", "cols", "rows", "lo", "hi")),
    )


def _band(src, lo, hi):
    """A new array: `src` (shape (..., rows, cols)) where lo <= col - row <= hi, else 0.
    Bounds beyond +-_BIG (eye(1, k=2**63)) mean the same as +-_BIG: the kernel's are int64."""
    lo, hi = (min(max(b, -_BIG), _BIG) for b in (lo, hi))
    out = empty(src.shape, src.dtype, context=src.context)
    if out.size:
        raw_out = _raw(out)
        rows, cols = src.shape[-2:]
        elemwise.run(_band_loop(raw_out.dtype.name), [raw_out], [_raw(src)],
                     (2 if out.itemsize == 16 else 1, cols, rows, lo, hi))
    return out


def _triangle_input(m, name):
    a = asarray(m)
    if a.ndim == 0:
        raise ArgumentTypeError(f"{name} needs an array of at least 1 dimension, not 0-d")
    return broadcast_to(a, (a.shape[0], a.shape[0])) if a.ndim == 1 else a


def tril(m, k=0):
    """A copy with the elements above the k-th diagonal zeroed (1-d input: as rows)."""
    return _band(_triangle_input(m, "tril"), -_BIG, _index(k, "k"))


def triu(m, k=0):
    """A copy with the elements below the k-th diagonal zeroed (1-d input: as rows)."""
    return _band(_triangle_input(m, "triu"), _index(k, "k"), _BIG)


def _ones_band(N, M, lo, hi, dtype, context):
    N = _index(N, "N")
    M = N if M is None else _index(M, "M")
    one = empty((), dtype, context=context).fill(1)
    return _band(broadcast_to(one, (N, M)), lo, hi)


def tri(N, M=None, k=0, dtype=None, context=None):
    """Ones at and below the k-th diagonal (dtype defaults to floatX)."""
    return _ones_band(N, M, -_BIG, _index(k, "k"), dtype, context)


def eye(N, M=None, k=0, dtype=None, order="C", context=None):
    """Ones on the k-th diagonal, zeros elsewhere (dtype defaults to floatX)."""
    k = _index(k, "k")
    if order not in ("C", "F"):
        raise ArgumentError(f"order must be 'C' or 'F', not {order!r}")
    if order == "F":
        return eye(N if M is None else M, N, -k, dtype, "C", context).T
    return _ones_band(N, M, k, k, dtype, context)


def identity(n, dtype=None, context=None):
    """The n x n identity (dtype defaults to floatX)."""
    return eye(n, dtype=dtype, context=context)


# ---------------------------------------------------------------- grids and ranges

def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-d coordinate vectors (a tuple), as numpy.meshgrid;
    gpuarr.meshgrid (array_api.meshgrid, with an example) wraps it."""
    if indexing not in ("xy", "ij"):
        raise ArgumentError(f"Valid values for `indexing` are 'xy' and 'ij', not {indexing!r}.")
    arrays, _ = _operands(xi)
    ndim = len(arrays)
    ones = (1,) * ndim
    out = [_ravel(x).reshape((*ones[:i], -1, *ones[i + 1:])) for i, x in enumerate(arrays)]
    if indexing == "xy" and ndim > 1:
        out[0] = out[0].reshape((1, -1, *ones[2:]))
        out[1] = out[1].reshape((-1, 1, *ones[2:]))
    if not sparse:
        out = list(broadcast_arrays(*out))
    if copy:
        out = [_copy(x) for x in out]
    return tuple(out)


def _python_values(*values):
    """True when no value carries a dtype (Python numbers and lists): floatX applies."""
    return not any(isinstance(v, np.ndarray | np.generic | ArrayBase) for v in values)


def _is_host_scalar(v):
    return isinstance(v, numbers.Number | np.generic) or (isinstance(v, np.ndarray)
                                                          and v.ndim == 0)


def _real_name(dt):
    return {"complex64": "float32", "complex128": "float64", "float16": "float32"}.get(
        dt.name, dt.name)


@functools.cache
def _linspace_loop(ins, out_dtype, dt, floor):
    """y = i * step + start in numpy's order of operations (step = delta / div, or
    (i / div) * delta when a step is 0), the last row `stop`; float16 rounds each step."""
    ctype, real = dtypes.compute_type(dt), dtypes.compute_type(_real_name(np.dtype(dt)))
    r = "ga_round_half" if dt == "float16" else ""
    return elemwise.Loop(
        ins, ((out_dtype, dt),),
        "const long lin_row = (long)i / lin_inner;\n"
        f"const {real} lin_t = ({real})lin_row;\n"
        f"{ctype} lin_y = lin_zero ? {r}({r}(lin_t / lin_div) * in1) : {r}(lin_t * in1);\n"
        f"lin_y = {r}(lin_y + in0);\n"
        "if (lin_row == lin_last) lin_y = in2;\n"
        f"out0 = {'floor' if floor else ''}(lin_y);",
        scalar_args=(("int64", "lin_inner"), ("int64", "lin_last"),
                     (_real_name(np.dtype(dt)), "lin_div"), ("int32", "lin_zero")),
        preamble=render("manipulation.cl.mako", part="round_half") if dt == "float16" else "",
    )


def _linspace(start, stop, num, endpoint, dtype, axis, context):
    """(samples, step) as numpy.linspace computes them; dtype None: numpy's dtype."""
    num = _index(num, "num")
    if num < 0:
        raise ArgumentError(f"Number of samples, {num}, must be non-negative.")
    div = num - 1 if endpoint else num
    gpu = [v for v in (start, stop) if isinstance(v, ArrayBase)]
    ctx = check_same_context(*gpu) if gpu else get_context(context)
    dt = np.result_type(*(v.dtype if isinstance(v, ArrayBase) else
                          v if _is_host_scalar(v) else np.asarray(v) for v in (start, stop)), 0.0)
    out_dtype = dt if dtype is None else dtypes.normalize(dtype)
    if dtypes.needs_fp64(dt) and not ctx.fp64 and not dtypes.needs_fp64(out_dtype):
        dt = np.dtype(np.complex64 if dt.kind == "c" else np.float32)
    dtypes.check_device(dt, ctx)
    floor = out_dtype.kind in "iu"
    if floor and dt.kind == "c":
        raise UnsupportedError(f"linspace: complex samples cannot be floored into {out_dtype}")
    zero = False
    if not gpu and _is_host_scalar(start) and _is_host_scalar(stop):
        delta = np.subtract(stop, start, dtype=dt)
        step = delta / div if div > 0 else np.nan
        zero = div > 0 and step == 0
        bshape = ()
        values = [_host_scalar(v, dt) for v in (start, step if div > 0 and not zero else delta,
                                                stop)]
        inputs = [v.astype(np.float32)[()] if dt == np.float16 else v[()] for v in values]
        ins = ((dt.name, dt.name, True),) * 3
    else:
        if gpu:
            lo, hi = (v if isinstance(v, ArrayBase) else to_device(np.asarray(v, dt), ctx)
                      for v in (start, stop))
            delta = UFUNCS["subtract"](hi, lo, dtype=dt)
            step = UFUNCS["true_divide"](delta, div) if div > 0 else np.nan
            zero = div > 0 and not bool(reduction.all(step))
        else:
            lo, hi = (np.asarray(v).astype(dt) for v in (start, stop))
            delta = np.subtract(hi, lo, dtype=dt)
            step = delta / div if div > 0 else np.nan
            zero = div > 0 and bool((step == 0).any())
            lo, hi, delta = (to_device(v, ctx) for v in (lo, hi, delta))
            step = to_device(step, ctx) if div > 0 else step
        bshape = np.broadcast_shapes(lo.shape, hi.shape)
        inputs = [lo, step if div > 0 and not zero else delta, hi]
        ins = tuple((v.dtype.name, dt.name, False) for v in inputs)
    y = empty((num, *bshape), out_dtype, context=ctx)
    last = num - 1 if endpoint and num > 1 else -1
    elemwise.run(_linspace_loop(ins, out_dtype.name, dt.name, floor), [y], inputs,
                 (math.prod(bshape), last, div if div > 0 else 1, int(zero)))
    return moveaxis(y, 0, axis) if axis != 0 else y, step


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             context=None):
    """`num` evenly spaced samples from start to stop (arrays too: along a new `axis`), with
    numpy's arithmetic; from Python numbers the dtype defaults to floatX."""
    if dtype is None and _python_values(start, stop) and not any(
            isinstance(v, complex) for v in (start, stop)):
        dtype = dtypes.float_x(get_context(context))
    y, step = _linspace(start, stop, num, endpoint, dtype, axis, context)
    return (y, step) if retstep else y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, *,
             context=None):
    """base ** linspace(start, stop, ...); from Python numbers the dtype defaults to floatX."""
    if dtype is None and _python_values(start, stop, base) and not any(
            isinstance(v, complex) for v in (start, stop, base)):
        dtype = dtypes.float_x(get_context(context))
    gpu = [v for v in (start, stop, base) if isinstance(v, ArrayBase)]
    ctx = check_same_context(*gpu) if gpu else get_context(context)
    if np.ndim(base) if not isinstance(base, ArrayBase) else base.ndim:
        # numpy: an array base broadcasts with start and stop, its samples along `axis`
        ndmax = max(v.ndim if isinstance(v, ArrayBase) else np.ndim(v) for v in (start, stop, base))
        start, stop, base = (v.reshape((1,) * (ndmax - v.ndim) + v.shape)
                             if isinstance(v, ArrayBase) else np.array(v, ndmin=ndmax)
                             for v in (start, stop, base))
        base = expand_dims(base if isinstance(base, ArrayBase) else to_device(base, ctx), axis)
    # numpy's exponents are float64 for Python numbers; a device without fp64 computes
    # them in float32 when the result is not float64 anyway
    exact = ctx.fp64 or dtype is None or dtypes.needs_fp64(dtype) or dtypes.normalize(
        dtype).kind == "c"
    y, _ = _linspace(start, stop, num, endpoint, None if exact else np.float32, axis, ctx)
    out = UFUNCS["power"](base, y)
    return out if dtype is None or out.dtype == dtypes.normalize(dtype) else out.astype(dtype)


FUNCTIONS = {f.__name__: f for f in (
    concatenate, stack, vstack, hstack, dstack, column_stack, split, array_split, hsplit,
    vsplit, dsplit, tile, repeat, flip, fliplr, flipud, roll, pad, broadcast_arrays, moveaxis,
    atleast_1d, atleast_2d, atleast_3d, tril, triu, diag, diagonal, trace, eye, identity,
    meshgrid, linspace, logspace, tri)}

__all__ = ["FUNCTIONS", "ManipulationMethods", *FUNCTIONS]


class ManipulationMethods:
    """x.repeat(), x.diagonal(), x.trace(). A mixin of GpuArray (gpuarr/array.py)."""

    def repeat(self, repeats, axis=None):
        """Elements repeated (see gpuarr.repeat)."""
        return repeat(self, repeats, axis)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        """A read-only view of a diagonal (see gpuarr.diagonal)."""
        return diagonal(self, offset, axis1, axis2)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        """Sum along a diagonal (see gpuarr.trace)."""
        return trace(self, offset, axis1, axis2, dtype, out)
