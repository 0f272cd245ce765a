"""The array record below the engines: layout helpers, `ArrayBase`, creation primitives.

An array is (storage, shape, byte strides, byte offset, dtype). Views share the storage;
the storage remembers the event of its last write, so operations on the context's
in-order queue order themselves and a command on another device's queue waits for it.
Nothing blocks until data is read back to the host or `sync()` is called.

`ArrayBase` is that record with what needs no engine: views and basic indexing,
reshape/transpose, host transfers, copies, casts, fill, the Python protocol. The engines
(ufuncs, reductions, GEMM, indexing, ...) import this module, never gpuarr/array.py; they
test `isinstance(x, ArrayBase)` and make new arrays through the factory here (`empty`,
`ArrayBase._empty`, `to_device`, `asarray`, ...), which builds the one concrete class:
`gpuarr.array.GpuArray`, declared above the engines with their methods as mixins
(`class GpuArray(..., ArrayBase, concrete=True)`). docs/architecture.md shows the layers.
"""

import math
import numbers
import operator

import numpy as np
import pyopencl as cl

from . import dtypes, elemwise, staging
from .context import Context, get_context
from .errors import (
    ArgumentError,
    ArgumentTypeError,
    AxisError,
    ContextMismatch,
    ContextNotDefined,
    DeviceNotFound,
    IndexOutOfRange,
    ReadOnlyError,
    ShapeError,
    UnsupportedError,
)
from .launch import copy_buffer, fill_buffer, read_host, record, waits
from .memory import Storage

__all__ = [
    "ArrayBase", "Flags", "arange", "array", "asarray", "ascontiguousarray", "broadcast_to",
    "check_same_context", "device_context", "empty", "empty_like", "expand_dims", "full",
    "full_like", "ones", "ones_like", "ravel", "reshape", "squeeze", "swapaxes", "to_device",
    "transpose", "zeros", "zeros_like",
]

_ORDERS = ("C", "F", "A", "K")


# ---------------------------------------------------------------- layout helpers

def _shape_tuple(shape):
    if shape.__class__ is tuple and all(n.__class__ is int and n >= 0 for n in shape):
        return shape  # the common case: non-negative Python ints (not bools)
    if isinstance(shape, bool | np.bool_) or (isinstance(shape, tuple | list) and any(
            isinstance(n, bool | np.bool_) for n in shape)):  # numpy refuses bools as sizes
        raise ArgumentTypeError(f"expected a sequence of integers or a single integer, got "
                                f"{shape!r}")
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    try:
        dims = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise ShapeError(f"shape must be a tuple of integers, not {shape!r}") from None
    if any(n < 0 for n in dims):
        raise ShapeError(f"negative dimensions are not allowed: shape {dims}")
    return dims


# numpy's largest array: its byte size must fit a signed 64-bit intp
_MAX_BYTES = 2**63 - 1


def _check_size(shape, itemsize):
    """numpy's 'array is too big': the non-zero dimensions times the item size past intp
    (numpy checks this for empty arrays too)."""
    nbytes = itemsize or 1
    for n in shape:
        if n:
            nbytes *= n
    if nbytes > _MAX_BYTES:
        raise ShapeError(f"array is too big: shape {shape} of {itemsize}-byte items is larger "
                         f"than the maximum possible size (2**63 - 1 bytes)")


def _contiguous_strides(shape, itemsize, order="C"):
    strides = []
    step = itemsize
    for n in (reversed(shape) if order == "C" else shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides)) if order == "C" else tuple(strides)


def _is_contiguous(shape, strides, itemsize, order):
    """numpy's flag rule: size-1 dims do not matter, 0-size arrays are contiguous."""
    if 0 in shape:
        return True
    step = itemsize
    pairs = zip(reversed(shape), reversed(strides)) if order == "C" else zip(shape, strides)
    for n, s in pairs:
        if n != 1:
            if s != step:
                return False
            step *= n
    return True


def _normalize_axis(axis, ndim):
    try:
        if isinstance(axis, bool | np.bool_):  # numpy: "an integer is required"
            raise TypeError
        ax = operator.index(axis)
    except TypeError:
        raise ArgumentTypeError(f"axis must be an integer, not {axis!r}") from None
    if not -ndim <= ax < ndim:
        raise AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return ax % ndim


def _nocopy_reshape(shape, strides, newshape):
    """New strides viewing (shape, strides) as newshape in C order, or None if impossible."""
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    new_strides = [0] * len(newshape)
    oi = ni = 0
    while ni < len(newshape) and oi < len(old):
        nj, oj = ni + 1, oi + 1
        np_, op_ = newshape[ni], old[oi][0]
        while np_ != op_:
            if np_ < op_:
                np_ *= newshape[nj]
                nj += 1
            else:
                op_ *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        new_strides[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            new_strides[k - 1] = new_strides[k] * newshape[k]
        ni, oi = nj, oj
    last = new_strides[ni - 1] if ni else 0
    for k in range(ni, len(newshape)):
        new_strides[k] = last
    return tuple(new_strides)


def _host_scalar(value, dtype):
    """`value` converted to `dtype` exactly as numpy's `a[...] = value` would."""
    box = np.empty((), dtype)
    box[()] = value
    return box


def _is_scalar(value):
    return isinstance(value, numbers.Number | np.generic) or (
        isinstance(value, np.ndarray) and value.ndim == 0
    )


def _kernel_scalar(box):
    """A 0-d host value as a kernel argument (float16 travels as float32, bool as uchar)."""
    if box.dtype == np.float16:
        return box.astype(np.float32)[()]
    return box.astype(np.uint8)[()] if box.dtype == np.bool_ else box[()]


class Flags:
    """numpy-style flags: attributes and `flags['C_CONTIGUOUS']`."""

    _KEYS = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
             "F": "f_contiguous", "WRITEABLE": "writeable", "W": "writeable",
             "OWNDATA": "owndata", "O": "owndata", "CONTIGUOUS": "c_contiguous"}

    def __init__(self, array):
        self._a = array

    c_contiguous = property(lambda self: self._a._is_c())
    contiguous = c_contiguous
    f_contiguous = property(lambda self: self._a._is_f())
    owndata = property(lambda self: self._a.base is None)

    @property
    def writeable(self):
        return self._a._writeable

    @writeable.setter
    def writeable(self, value):
        a = self._a
        if value and a._readonly_base():
            raise ReadOnlyError("cannot make a view of a read-only array writeable")
        if value and any(s == 0 and n > 1 for n, s in zip(a.shape, a.strides)):
            raise ReadOnlyError("cannot make a broadcast view writeable: its elements alias "
                                "each other; copy it first")
        self._a._writeable = bool(value)

    def __getitem__(self, key):
        try:
            return getattr(self, self._KEYS[key.upper()])
        except (KeyError, AttributeError):
            raise KeyError(f"unknown flag {key!r}; known: {', '.join(self._KEYS)}") from None

    def __setitem__(self, key, value):
        if self._KEYS.get(key.upper()) != "writeable":
            raise KeyError(f"only WRITEABLE can be set, not {key!r}")
        self.writeable = value

    def __repr__(self):
        return "\n".join(f"  {k} : {self[k]}" for k in
                         ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE"))


# ---------------------------------------------------------------- the array record

# The concrete array class every factory here builds: GpuArray (gpuarr/array.py), which
# registers itself by declaring `concrete=True`. Subclasses made later (by users or tests)
# do not replace it: engines and views keep making GpuArrays, as numpy makes ndarrays.
_concrete = None


class ArrayBase:
    """The record of an n-d array on an OpenCL device, and what needs no engine.

    Not instantiated itself: arrays are `gpuarr.GpuArray`, made by `empty`, `asarray`,
    `zeros`, ... (or `GpuArray(shape, dtype, context=...)`).
    """

    __array_priority__ = 100
    __hash__ = None

    def __init_subclass__(cls, concrete=False, **kwargs):
        super().__init_subclass__(**kwargs)
        if concrete:
            global _concrete
            if _concrete is not None and (_concrete.__module__, _concrete.__qualname__) != (
                    cls.__module__, cls.__qualname__):  # (a module reload declares it anew)
                raise TypeError(f"{cls.__qualname__}: the concrete array class is already "
                                f"{_concrete.__module__}.{_concrete.__qualname__}")
            _concrete = cls

    def __init__(self, shape, dtype=None, order="C", context=None, *, storage=None,
                 strides=None, offset=0, base=None, writeable=True):
        if storage is not None and not isinstance(storage, Storage):
            raise ArgumentTypeError(f"storage= must be a gpuarr Storage (an array's .storage), "
                                    f"not {type(storage).__name__}")
        ctx = storage.context if storage is not None else get_context(context)
        dt = dtypes.check_device(dtypes.float_x(ctx) if dtype is None else dtype, ctx)
        shape = _shape_tuple(shape)
        _check_size(shape, dt.itemsize)
        given = strides is not None or storage is not None or offset != 0
        if strides is None:
            if order not in ("C", "F"):
                raise ArgumentError(f"order must be 'C' or 'F', not {order!r}")
            strides = _contiguous_strides(shape, dt.itemsize, order)
        if storage is None:
            storage = ctx.allocate(math.prod(shape) * dt.itemsize)
        self.storage = storage
        self.shape = shape
        self.strides = tuple(strides)
        self.offset = offset
        self.dtype = dt
        self.base = base
        self._writeable = writeable
        if given:
            self._check_layout()

    def _check_layout(self):
        """The caller's strides and offset (byte counts, multiples of the item size: kernels
        index in elements) keep every element inside the storage; else ArgumentError."""
        shape, isz, nbytes = self.shape, self.itemsize, self.storage.nbytes
        try:
            strides = tuple(operator.index(s) for s in self.strides)
            offset = operator.index(self.offset)
        except TypeError:
            raise ArgumentTypeError(f"strides and offset must be integers, got strides "
                                    f"{self.strides!r}, offset {self.offset!r}") from None
        where = (f"shape {shape}, strides {strides}, offset {offset}, {self.dtype} items, "
                 f"in a buffer of {nbytes} bytes")
        if len(strides) != len(shape):
            raise ArgumentError(f"strides need one entry per dimension: {where}")
        if offset % isz or any(s % isz for s in strides):
            raise ArgumentError(f"strides and offset must be multiples of the item size "
                                f"({isz}): {where}")
        self.strides, self.offset = strides, offset
        if self.size == 0:
            lo, hi = offset, offset
        else:
            lo, hi = self._extent()
        if lo < 0 or hi > nbytes:
            raise ArgumentError(f"the elements span bytes [{lo}, {hi}), outside the storage: "
                                f"{where}")

    @staticmethod
    def _empty(ctx, shape, dtype):
        """A new C-contiguous GpuArray; the caller vouches for shape and dtype (hot path)."""
        self = object.__new__(_concrete)
        size = dtype.itemsize
        if len(shape) == 1:
            self.storage = ctx.allocate(shape[0] * size)
            self.strides = (size,)
        else:
            self.storage = ctx.allocate(math.prod(shape) * size)
            self.strides = _contiguous_strides(shape, size)
        self.shape = shape
        self.offset = 0
        self.dtype = dtype
        self.base = None
        self._writeable = True
        return self

    # -- attributes
    context = property(lambda self: self.storage.context, doc="the Context holding the data")
    ndim = property(lambda self: len(self.shape), doc="the number of dimensions")
    size = property(lambda self: math.prod(self.shape), doc="the number of elements")
    itemsize = property(lambda self: self.dtype.itemsize, doc="bytes per element")
    nbytes = property(lambda self: self.size * self.dtype.itemsize,
                      doc="bytes of the elements (not of the buffer behind a view)")
    data = property(lambda self: self.storage.buffer, doc="the cl.Buffer (None when empty)")
    event = property(lambda self: self.storage.event, doc="event of the last write, or None")
    flags = property(Flags)
    T = property(lambda self: self.transpose(), doc="the view with the axes reversed")

    def _is_c(self):
        return _is_contiguous(self.shape, self.strides, self.itemsize, "C")

    def _is_f(self):
        return _is_contiguous(self.shape, self.strides, self.itemsize, "F")

    def _readonly_base(self):
        b = self.base
        return b is not None and not b._writeable

    def _view(self, shape, strides, offset=None, dtype=None):
        """A view of this array's storage; the caller vouches for the layout (ints) and
        the dtype (a numpy dtype the device holds)."""
        view = object.__new__(_concrete)
        view.storage = self.storage
        view.shape = tuple(shape)
        view.strides = tuple(strides)
        view.offset = self.offset if offset is None else offset
        view.dtype = self.dtype if dtype is None else dtype
        view.base = self if self.base is None else self.base
        view._writeable = self._writeable
        return view

    def _check_writeable(self):
        if not self._writeable:
            raise ReadOnlyError(f"assignment destination is read-only (array of shape "
                                f"{self.shape}, dtype {self.dtype})")

    def _extent(self):
        """[lo, hi) byte range of the storage this array can touch."""
        lo = hi = self.offset
        for n, s in zip(self.shape, self.strides):
            if s < 0:
                lo += s * (n - 1)
            else:
                hi += s * (n - 1)
        return lo, hi + self.itemsize

    def _may_share(self, other):
        if self.storage is not other.storage or self.size == 0 or other.size == 0:
            return False
        (a0, a1), (b0, b1) = self._extent(), other._extent()
        return a0 < b1 and b0 < a1

    # -- sync and host transfers
    def sync(self):
        """Wait until the last write of this array's data has finished."""
        if self.storage.event is not None:
            self.storage.event.wait()

    def get(self, out=None):
        """A numpy copy of the data (C or F order as the array is laid out); waits for it."""
        if out is None:
            src = self if self._is_c() or self._is_f() else self.copy("C")
            out = np.empty(self.shape, self.dtype, order="C" if src._is_c() else "F")
        else:
            if out.shape != self.shape or out.dtype != self.dtype:
                raise ShapeError(f"get(out=...) needs shape {self.shape} and dtype "
                                 f"{self.dtype}, got {out.shape} and {out.dtype}")
            if not (out.flags.c_contiguous or out.flags.f_contiguous):
                out[...] = self.get()
                return out
            order = "C" if out.flags.c_contiguous else "F"
            src = self if (self._is_c() if order == "C" else self._is_f()) else self.copy(order)
        if self.size:
            read_host(self.context, out, src.storage, src.offset)
        return out

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ArgumentError("a GpuArray cannot be viewed as a numpy array without a copy; "
                             "use np.asarray(x) or x.get()")
        host = self.get()
        return host if dtype is None else host.astype(dtype, copy=False)

    def set(self, ary):
        """Overwrite this array with a host array of the same shape (cast to its dtype)."""
        self._check_writeable()
        ary = np.asarray(ary)
        if ary.shape != self.shape:
            raise ShapeError(f"set() needs an array of shape {self.shape}, got {ary.shape}")
        host = ary.astype(self.dtype, copy=False)
        if self.size == 0:
            return self
        if self._is_c() or self._is_f():
            host = np.ascontiguousarray(host) if self._is_c() else np.asfortranarray(host)
            staging.upload(self.context, self.storage, host, self.offset)
        else:
            self._assign(to_device(host, self.context))
        return self

    def transfer(self, context):
        """This array on another context: a device copy within a cl.Context, else a copy in
        chunks through pinned host memory (gpuarr.staging)."""
        target = get_context(context)
        if target is self.context:
            return self
        src = self if self._is_c() else self.copy("C")
        out = _concrete(self.shape, self.dtype, context=target)
        if not self.size:
            return out
        if target.cl_context is not self.context.cl_context:
            staging.copy(staging.Region.of(out), staging.Region.of(src))
            return out
        # The copy runs on the source queue once the target queue has reached this point,
        # and the target queue waits for it: neither side's in-order reuse of pooled memory
        # can overtake it.
        # (each context's launch lock in turn, never both: no order to deadlock on)
        q = src.context.queue
        with target.launch_lock:
            ready = cl.enqueue_marker(target.queue)
        with src.context.launch_lock:
            copied = cl.enqueue_copy(q, out.storage.buffer, src.storage.buffer,
                                     byte_count=self.nbytes, src_offset=src.offset,
                                     wait_for=[ready, *(waits(q, (src.storage,)) or ())])
            record(copied, q, (src.storage,))
        with target.launch_lock:
            record(cl.enqueue_marker(target.queue, wait_for=[copied]), target.queue, (),
                   (out.storage,))
        return out

    # -- copies
    def _assign(self, src):
        """self[...] = src (a GpuArray broadcastable to self.shape), numpy's unsafe cast."""
        self._check_writeable()
        if src.context is not self.context:
            src = src.transfer(self.context)
        shape = _broadcast_assign_shape(src.shape, self.shape)
        if shape != src.shape:
            src = src.reshape(shape)
        if self._may_share(src):
            src = src.copy()
        if (src.shape == self.shape and src.dtype == self.dtype and self._is_c() and src._is_c()
                and self.size):
            copy_buffer(self.context, self.storage, src.storage, self.nbytes, self.offset,
                        src.offset)
        else:
            elemwise.run(elemwise.copy_loop(src.dtype, self.dtype), [self], [src])
        return self

    def fill(self, value):
        """Set every element to `value` (cast as numpy's `a[...] = value`)."""
        self._check_writeable()
        box = _host_scalar(value, self.dtype)
        if self.size == 0:
            return self
        # (NVIDIA's clEnqueueFillBuffer breaks the queue past byte 2^31: our kernel there)
        if (self._is_c() or self._is_f()) and self.offset + self.nbytes < 2**31:
            fill_buffer(self.context, self.storage, box, self.offset, self.nbytes)
        else:
            loop = elemwise.copy_loop(self.dtype, self.dtype, scalar=True)
            elemwise.run(loop, [self], [_kernel_scalar(box)])
        return self

    def copy(self, order="C"):
        """A new array with the same data, laid out in `order` ('C', 'F', 'A' or 'K')."""
        return self._empty_in_order(self.dtype, order)._assign(self)

    def _empty_in_order(self, dtype, order, shape=None, context=None):
        """A new array shaped like this one; 'K' follows this one's memory order of axes."""
        ctx = self.context if context is None else context
        if order == "K" and self.ndim > 1 and not (self._is_c() or self._is_f()) and (
                shape is None or tuple(shape) == self.shape):
            # numpy's K: axes ordered by decreasing |stride|, ties in axis order.
            perm = sorted(range(self.ndim), key=lambda d: -abs(self.strides[d]))
            dense = _contiguous_strides([self.shape[d] for d in perm], dtype.itemsize)
            strides = [0] * self.ndim
            for k, d in enumerate(perm):
                strides[d] = dense[k]
            return _concrete(self.shape, dtype, strides=strides,
                             storage=ctx.allocate(self.size * dtype.itemsize))
        return _concrete(self.shape if shape is None else shape, dtype,
                         order=self._resolve_order(order), context=ctx)

    def _resolve_order(self, order):
        if order not in _ORDERS:
            raise ArgumentError(f"order must be one of {', '.join(_ORDERS)}, not {order!r}")
        if order in ("A", "K"):
            return "F" if self._is_f() and not self._is_c() else "C"
        return order

    def astype(self, dtype, order="K", copy=True):
        """This array cast to `dtype` (numpy's unsafe casting)."""
        dt = dtypes.normalize(dtype)
        if dt == self.dtype and not copy:
            return self
        return self._empty_in_order(dt, order)._assign(self)

    # -- views
    def __getitem__(self, key):
        """Basic indexing (ints, slices, ..., None): a view. GpuArray adds numpy's advanced
        indexing (gpuarr/indexing.py)."""
        view = _basic_index(self, key)
        if view is None:
            raise UnsupportedError(f"advanced indexing ({key!r}) is gpuarr.indexing's; this "
                                   f"{type(self).__name__} has basic indexing only")
        return view

    def __setitem__(self, key, value):
        view = _basic_index(self, key)
        if view is None:
            raise UnsupportedError(f"advanced indexing ({key!r}) is gpuarr.indexing's; this "
                                   f"{type(self).__name__} has basic indexing only")
        view._assign_value(value)

    def _assign_value(self, value):
        """self[...] = value: a scalar, an array of this module, or host data."""
        if _is_scalar(value):
            self.fill(value)
        elif isinstance(value, ArrayBase):
            self._assign(value)
        else:
            self._assign(to_device(np.asarray(value), self.context))

    def reshape(self, *shape, order="C"):
        """A view with a new shape when the strides allow, else a copy; -1 infers one dim."""
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = shape[0]
        newshape = _infer_shape(shape, self.size)
        if order not in ("C", "F", "A"):
            raise ArgumentError(f"reshape order must be 'C', 'F' or 'A', not {order!r}")
        if order == "A":
            order = "F" if self._is_f() and not self._is_c() else "C"
        if self.size == 0:
            return self._view(newshape, _contiguous_strides(newshape, self.itemsize, order))
        if order == "C":
            strides = _nocopy_reshape(self.shape, self.strides, newshape)
        else:
            strides = _nocopy_reshape(self.shape[::-1], self.strides[::-1], newshape[::-1])
            strides = strides[::-1] if strides is not None else None
        if strides is None:
            return self.copy(order).reshape(newshape, order=order)
        return self._view(newshape, strides)

    def transpose(self, *axes):
        """A view with axes permuted (reversed when none are given)."""
        if len(axes) == 1 and not isinstance(axes[0], numbers.Integral):
            axes = axes[0]  # one sequence (a tuple, list or numpy array), or None
        axes = range(self.ndim)[::-1] if axes is None or len(axes) == 0 else axes
        axes = tuple(_normalize_axis(a, self.ndim) for a in axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ArgumentError(f"axes {axes} don't match array of dimension {self.ndim}")
        return self._view(tuple(self.shape[a] for a in axes), tuple(self.strides[a] for a in axes))

    def swapaxes(self, axis1, axis2):
        """The view with axes `axis1` and `axis2` exchanged."""
        axes = list(range(self.ndim))
        a, b = _normalize_axis(axis1, self.ndim), _normalize_axis(axis2, self.ndim)
        axes[a], axes[b] = axes[b], axes[a]
        return self.transpose(axes)

    def squeeze(self, axis=None):
        """A view without the given (or all) size-1 axes."""
        if axis is None:
            drop = {d for d, n in enumerate(self.shape) if n == 1}
        else:
            axis = axis if isinstance(axis, tuple | list) else (axis,)
            drop = {_normalize_axis(a, self.ndim) for a in axis}
            if any(self.shape[d] != 1 for d in drop):
                raise ShapeError(f"cannot squeeze axis {tuple(sorted(drop))} of shape "
                                 f"{self.shape}: only axes of size 1 can be removed")
        keep = [d for d in range(self.ndim) if d not in drop]
        return self._view(tuple(self.shape[d] for d in keep), tuple(self.strides[d] for d in keep))

    def ravel(self, order="C"):
        """A 1-d view when the data is contiguous in `order`, else a copy."""
        if order == "K" and not (self._is_c() or self._is_f()):
            return self.flatten("K")
        order = self._resolve_order(order)
        if self._is_c() if order == "C" else self._is_f():
            return self.reshape(self.size, order=order)
        return self.copy(order).reshape(self.size, order=order)

    def flatten(self, order="C"):
        """A new 1-d array of the elements read in `order` ('C', 'F', 'A' or 'K'): always a
        copy, as numpy's (ravel gives a view where it can)."""
        if order == "K" and not (self._is_c() or self._is_f()):
            # numpy's K: axes by decreasing |stride| (copy('K')'s layout), read in memory order
            return self.copy("K")._view((self.size,), (self.itemsize,))
        order = self._resolve_order(order)
        return self.copy(order).reshape(self.size, order=order)

    def view(self, dtype=None):
        """The same bytes seen as `dtype`; the last axis rescales when itemsizes differ."""
        if dtype is None:
            return self._view(self.shape, self.strides)
        dt = dtypes.check_device(dtype, self.context)
        if dt.itemsize == self.itemsize:
            return self._view(self.shape, self.strides, dtype=dt)
        if self.ndim == 0:
            raise ShapeError(f"cannot view a 0-d {self.dtype} array as {dt}: itemsizes differ")
        last_bytes = self.shape[-1] * self.itemsize
        if self.size == 0 and last_bytes % dt.itemsize == 0:
            shape = (*self.shape[:-1], last_bytes // dt.itemsize)
            return self._view(shape, _contiguous_strides(shape, dt.itemsize), dtype=dt)
        if self.shape[-1] != 1 and self.strides[-1] != self.itemsize:
            raise ShapeError(f"to view {self.dtype} as {dt} the last axis must be contiguous "
                             f"(its stride is {self.strides[-1]})")
        if last_bytes % dt.itemsize:
            raise ShapeError(f"cannot view shape {self.shape} of {self.dtype} as {dt}: the last "
                             f"axis ({last_bytes} bytes) is not a multiple of {dt.itemsize}")
        if self.offset % dt.itemsize or any(s % dt.itemsize for s in self.strides[:-1]):
            raise ShapeError(f"cannot view this {self.dtype} array as {dt}: its offset "
                             f"{self.offset} or strides {self.strides} are not multiples of "
                             f"{dt.itemsize}")
        return self._view((*self.shape[:-1], last_bytes // dt.itemsize),
                          (*self.strides[:-1], dt.itemsize), dtype=dt)

    # -- Python protocol
    def __len__(self):
        if not self.shape:
            raise ArgumentTypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise ArgumentTypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def _item(self, what):
        if self.size != 1:
            raise ArgumentTypeError(f"only arrays of size 1 can be converted to {what}; "
                            f"this one has shape {self.shape}")
        return self.get().reshape(())[()]

    def __bool__(self):
        if self.size != 1:
            raise ArgumentError(f"the truth value of an array of shape {self.shape} is ambiguous; "
                             f"use a.any() or a.all()" if self.size else
                             "the truth value of an empty array is ambiguous")
        return bool(self._item("bool"))

    def __float__(self):
        return float(self._item("float"))

    def __int__(self):
        return int(self._item("int"))

    def __complex__(self):
        return complex(self._item("complex"))

    def __index__(self):
        if self.dtype.kind not in "iub" or self.ndim:
            raise ArgumentTypeError("only 0-d integer arrays can be used as an index")
        return operator.index(self._item("index"))

    def __repr__(self):
        body = np.array2string(self.get(), separator=", ", prefix="gpuarray.array(")
        return f"gpuarray.array({body}, dtype={self.dtype}, context={self.context.name!r})"

    def __str__(self):
        return str(self.get())

    def __format__(self, spec):
        """format(x, spec): a 0-d array as its element (`f"{x.sum():.3f}"`); other arrays
        take only the empty spec (their str), as numpy's."""
        if self.ndim == 0:
            return format(self.get()[()], spec)
        if spec:
            raise ArgumentTypeError(f"unsupported format string {spec!r} passed to "
                                    f"{type(self).__name__}.__format__ (an array of shape "
                                    f"{self.shape}); format a 0-d array or its elements")
        return str(self)

    # -- host values, pickling and copies
    def item(self, *args):
        """One element as a Python scalar: no argument for an array of size 1, else a flat
        index (C order) or one index per axis, as numpy's `item`. Reads only that element.

        Examples
        --------
        >>> x = ga.asarray(np.arange(6).reshape(2, 3))
        >>> x.item(4), x.item(1, 0), x.sum().item()
        (4, 3, 15)
        """
        return self._element(args[0] if len(args) == 1 and isinstance(args[0], tuple)
                             else args).get()[()].item()

    def _element(self, args):
        """The 0-d view of the element `item(*args)` names."""
        if not args:
            if self.size != 1:
                raise ArgumentError(f"can only convert an array of size 1 to a Python scalar; "
                                    f"this one has shape {self.shape}")
            key = (0,) * self.ndim
        elif len(args) == 1:
            i = operator.index(args[0])
            if not -self.size <= i < self.size:
                raise IndexOutOfRange(f"index {i} is out of bounds for size {self.size}")
            key = np.unravel_index(i % self.size, self.shape)
        elif len(args) == self.ndim:
            key = tuple(operator.index(i) for i in args)
        else:
            raise ArgumentError(f"incorrect number of indices for array: item() of a "
                                f"{self.ndim}-d array got {len(args)}")
        return _basic_index(self, tuple(int(i) for i in key))

    def tolist(self):
        """The data as nested Python lists of Python scalars (a scalar for a 0-d array)."""
        return self.get().tolist()

    @property
    def flat(self):
        """A flat iterator over the elements in C order, as numpy's `x.flat`: `len`,
        iteration (one host copy), and `x.flat[key]` to read (a scalar for an integer, a new
        array for a slice) or write."""
        return FlatIter(self)

    def __reduce__(self):
        # pickle: the data through the host (numpy's pickle: C or F order kept), and the
        # context's names, for the unpickling process to find it (gpuarr/base.py _reconstruct)
        return _reconstruct, (self.get(), tuple(self.context.names))

    def __copy__(self):
        """copy.copy(x): a new device copy (numpy's: x.copy(order='K'))."""
        return self.copy("K")

    def __deepcopy__(self, memo):
        """copy.deepcopy(x): a new device copy, with no trip through the host."""
        return self.copy("K")


class FlatIter:
    """`x.flat`: numpy's flatiter over a GpuArray, the elements in C order.

    `len`; iteration (numpy scalars, from one host copy made when it starts); `flat[key]`
    with an integer (a numpy scalar), a slice or index array (a new array, as numpy's); and
    `flat[key] = value`, which writes into `base`.
    """

    __slots__ = ("base",)

    def __init__(self, base):
        self.base = base

    def __len__(self):
        return self.base.size

    def __iter__(self):
        return iter(self.base.get().ravel())

    def __getitem__(self, key):
        if isinstance(key, numbers.Integral) and not isinstance(key, bool):
            return self.base._element((key,)).get()[()]
        out = self.base.reshape(-1)[key]  # (reshape: a view of a C-contiguous base)
        return out.copy() if out.storage is self.base.storage else out

    def __setitem__(self, key, value):
        base = self.base
        base._check_writeable()
        flat = base.reshape(-1) if base._is_c() else base.flatten()  # a view, else a copy
        flat[key] = value
        if flat.storage is not base.storage:
            base[...] = flat.reshape(base.shape)

    def copy(self):
        """A new 1-d array of the elements (x.flatten())."""
        return self.base.flatten()

    def __array__(self, dtype=None, copy=None):
        return self.base.__array__(dtype, copy).ravel()


def _reconstruct(host, names=()):
    """A GpuArray of the numpy array `host` on the first context of `names` that this
    process defines (by gpuarr.init or flag contexts), else on the default context: how a
    pickled GpuArray comes back."""
    for name in names:
        try:
            return to_device(host, get_context(name))
        except (ContextNotDefined, DeviceNotFound):  # (from get_context: not defined here)
            continue
    return to_device(host, get_context())


# ---------------------------------------------------------------- indexing

def _basic_index(a, key):
    """numpy basic indexing (ints, slices, ..., None) as a view; None for any other key
    (advanced indexing: gpuarr/indexing.py)."""
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:
        if isinstance(k, bool) or not (
                k is None or k is Ellipsis or isinstance(k, slice | numbers.Integral)
                or (isinstance(k, np.ndarray | ArrayBase) and k.ndim == 0
                    and k.dtype.kind in "iu")):
            return None
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexOutOfRange("an index can only have a single ellipsis ('...')")
    used = sum(k is not None and k is not Ellipsis for k in key)
    if used > a.ndim:
        raise IndexOutOfRange(f"too many indices for array: array is {a.ndim}-dimensional, "
                              f"but {used} were indexed")
    if Ellipsis in key:
        i = next(n for n, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (a.ndim - used) + key[i + 1:]
    else:
        key = key + (slice(None),) * (a.ndim - used)
    shape, strides, offset, dim = [], [], a.offset, 0
    for k in key:
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        n, s = a.shape[dim], a.strides[dim]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            shape.append(length)
            strides.append(s * step)
            if length:
                offset += start * s
        else:
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexOutOfRange(f"index {i} is out of bounds for axis {dim} with size {n}")
            offset += (i % n) * s
        dim += 1
    return a._view(tuple(shape), tuple(strides), offset=offset)


def _infer_shape(shape, size):
    shape = tuple(operator.index(n) for n in shape) if not isinstance(shape, numbers.Integral) \
        else (operator.index(shape),)
    unknown = [d for d, n in enumerate(shape) if n == -1]
    if len(unknown) > 1 or any(n < -1 for n in shape):
        raise ShapeError(f"invalid shape {shape}: at most one -1 and no other negative sizes")
    known = math.prod(n for n in shape if n != -1)
    if unknown:
        if known == 0 or size % known:
            raise ShapeError(f"cannot reshape array of size {size} into shape {shape}")
        shape = (*shape[:unknown[0]], size // known, *shape[unknown[0] + 1:])
    if math.prod(shape) != size:
        raise ShapeError(f"cannot reshape array of size {size} into shape {shape}")
    return shape


def _broadcast_assign_shape(src, dst):
    """src's shape made ready to broadcast into dst (leading 1s dropped), or ShapeError."""
    while len(src) > len(dst) and src[0] == 1:
        src = src[1:]
    ok = len(src) <= len(dst) and all(s in (1, d) for s, d in zip(src[::-1], dst[::-1]))
    if not ok:
        raise ShapeError(f"could not broadcast input array from shape {src} into shape {dst}")
    return src


def broadcast_to(a, shape):
    """A read-only view of `a` with the given shape (numpy's broadcasting rules)."""
    shape = _shape_tuple(shape)
    src = a.shape
    if len(src) > len(shape) or elemwise.broadcast_shape([src, shape]) != shape:
        raise ShapeError(f"cannot broadcast shape {src} to {shape}")
    lead = len(shape) - len(src)
    strides = (0,) * lead + tuple(0 if s == 1 and d != 1 else st
                                  for s, d, st in zip(src, shape[lead:], a.strides))
    view = a._view(shape, strides)
    view._writeable = False
    return view


# ---------------------------------------------------------------- creation

def to_device(host, context):
    out = _concrete(host.shape, host.dtype, context=context,
                   order="F" if host.flags.f_contiguous and not host.flags.c_contiguous else "C")
    return out.set(host)


def device_context(context, device):
    """The context named by `context=` or the Array API's `device=` (a Context or a name)."""
    if device is None:
        return context
    if context is not None and get_context(context) is not get_context(device):
        raise ArgumentError(f"context={context!r} and device={device!r} name different "
                            f"devices; pass only one")
    return device


def empty(shape, dtype=None, order="C", context=None, *, device=None):
    """An uninitialised array (dtype defaults to floatX)."""
    return _concrete(shape, dtype, order=order, context=device_context(context, device))


def zeros(shape, dtype=None, order="C", context=None, *, device=None):
    """A new array of `shape` filled with zeros (dtype: flag floatX when None), on `context`
    (or the Array API's `device`; the default context when both are None)."""
    return empty(shape, dtype, order, device_context(context, device)).fill(0)


def ones(shape, dtype=None, order="C", context=None, *, device=None):
    """A new array of `shape` filled with ones; arguments as `zeros`."""
    return empty(shape, dtype, order, device_context(context, device)).fill(1)


def full(shape, fill_value, dtype=None, order="C", context=None, *, device=None):
    """An array filled with `fill_value`; its dtype by numpy's rule, floatX for Python floats."""
    ctx = get_context(device_context(context, device))
    return empty(shape, dtypes.default_for(fill_value, dtype, ctx), order, ctx).fill(fill_value)


def _like(a, dtype, order, shape, context):
    if isinstance(a, ArrayBase):
        dt = a.dtype if dtype is None else dtypes.normalize(dtype)
        return a._empty_in_order(dt, order, shape, get_context(context) if context else None)
    else:
        a = np.asarray(a)
        ctx = context
        base_order = "F" if order in ("F",) or (
            order in ("A", "K") and a.flags.f_contiguous and not a.flags.c_contiguous) else "C"
    dt = dtypes.normalize(a.dtype if dtype is None else dtype)
    return empty(a.shape if shape is None else shape, dt, base_order, ctx)


def empty_like(a, dtype=None, order="K", shape=None, context=None, *, device=None):
    """A new uninitialized array with `a`'s shape, dtype and layout (`order` 'K' keeps its
    axis order), each overridable, on `a`'s context unless `context`/`device` names one."""
    return _like(a, dtype, order, shape, device_context(context, device))


def zeros_like(a, dtype=None, order="K", shape=None, context=None, *, device=None):
    """`empty_like(a, ...)` filled with zeros."""
    return _like(a, dtype, order, shape, device_context(context, device)).fill(0)


def ones_like(a, dtype=None, order="K", shape=None, context=None, *, device=None):
    """`empty_like(a, ...)` filled with ones."""
    return _like(a, dtype, order, shape, device_context(context, device)).fill(1)


def full_like(a, fill_value, dtype=None, order="K", shape=None, context=None, *, device=None):
    """`empty_like(a, ...)` filled with `fill_value` (cast as numpy's `a[...] = value`)."""
    return _like(a, dtype, order, shape, device_context(context, device)).fill(fill_value)


def asarray(obj, dtype=None, order=None, context=None, *, device=None, copy=None):
    """`obj` as a GpuArray on `context` (or `device`), copying only when needed.

    numpy arrays keep their dtype; Python floats take floatX when no dtype is given.
    A GpuArray of another context is transferred there. copy=True always copies;
    copy=False never does (ArgumentError where a copy would be needed: host data, another
    device, another dtype or order).
    """
    context = device_context(context, device)
    if copy:
        return array(obj, dtype, True, order or "K", context=context)
    if copy is False:
        _check_no_copy(obj, dtype, order, context)
    if isinstance(obj, ArrayBase):
        out = obj if context is None else obj.transfer(context)
        if dtype is not None and dtypes.normalize(dtype) != out.dtype:
            out = out.astype(dtype, order=order or "K")
        if (order == "C" and not out._is_c()) or (order == "F" and not out._is_f()):
            out = out.copy(order)
        return out
    if isinstance(obj, Context):
        raise ArgumentTypeError("asarray() takes data first; pass the context as context=...")
    ctx = get_context(context)
    dt = dtypes.default_for(obj, dtype, ctx)
    host = np.asarray(obj, dtype=dt, order=order if order in ("C", "F") else None)
    return to_device(host, ctx)


def _check_no_copy(obj, dtype, order, context):
    why = None
    if not isinstance(obj, ArrayBase):
        why = f"host data ({type(obj).__name__}) has to be copied to the device"
    elif context is not None and get_context(context) is not obj.context:
        why = f"the array is on {obj.context.name!r}, not {get_context(context).name!r}"
    elif dtype is not None and dtypes.normalize(dtype) != obj.dtype:
        why = f"its dtype is {obj.dtype}, not {dtypes.normalize(dtype)}"
    elif (order == "C" and not obj._is_c()) or (order == "F" and not obj._is_f()):
        why = f"it is not {order}-contiguous"
    if why:
        raise ArgumentError(f"asarray(copy=False) cannot avoid a copy: {why}; pass copy=None")


def array(obj, dtype=None, copy=True, order="K", ndmin=0, context=None):
    """Like numpy.array: a copy unless copy=False allows reuse; ndmin prepends axes."""
    out = asarray(obj, dtype, None, context)
    if copy and out is obj:
        out = obj.copy(order)
    elif order in ("C", "F") and not (out._is_c() if order == "C" else out._is_f()):
        out = out.copy(order)
    if out.ndim < ndmin:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    return out


def ascontiguousarray(a, dtype=None, context=None):
    """A C-contiguous array (at least 1-d, as numpy) with `a`'s data."""
    out = asarray(a, dtype, "C", context)
    return out.reshape(1) if out.ndim == 0 else out


def arange(start, stop=None, step=1, dtype=None, context=None, *, device=None):
    """Evenly spaced values in [start, stop), computed as numpy does (same bits)."""
    context = get_context(device_context(context, device))
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ArgumentError("arange: step must not be zero")
    if dtype is None:
        dt = np.result_type(*(np.asarray(v) for v in (start, stop, step)))
        if dt == np.float64 and not any(isinstance(v, np.floating | np.ndarray)
                                        for v in (start, stop, step)):
            dt = dtypes.float_x(context)
    dt = dtypes.normalize(dt if dtype is None else dtype)
    if dt.kind == "c":
        raise UnsupportedError("arange of a complex dtype is not supported; build it from two "
                               "real aranges")
    length = max(0, math.ceil((stop - start) / step))
    if dt == np.bool_ and length > 2:
        raise ArgumentError(f"no fill-function for data-type bool with length {length} (> 2)")
    out = empty(length, dt, context=context)
    first = _host_scalar(start, dt)
    second = _host_scalar(start + step, dt) if length > 1 else first
    loop_dt = np.dtype(np.float32) if dt == np.float16 else dt
    b0, b1 = first.astype(loop_dt), second.astype(loop_dt)
    delta = b0 if dt == np.bool_ else b1 - b0  # bool: at most two elements, no delta
    elemwise.run(_arange_loop(dt.name, loop_dt.name), [out], [],
                 tuple(_kernel_scalar(v) for v in (b0, b1, delta)))
    return out


def _arange_loop(dtype, loop):
    # numpy's fill: element i = first + i * (second - first), in the dtype's arithmetic,
    # with the first two elements exactly as given (the template turns off fma contraction).
    return elemwise.Loop(
        (), ((dtype, loop),),
        f"out0 = i == 0 ? b0 : i == 1 ? b1 : b0 + ({dtypes.compute_type(loop)})i * delta;",
        scalar_args=((loop, "b0"), (loop, "b1"), (loop, "delta")),
    )


# ---------------------------------------------------------------- numpy-style functions

def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    """numpy.reshape; copy=True always copies, copy=False raises where a view cannot do."""
    if newshape is not None:
        if shape is not None:
            raise ArgumentTypeError("reshape() takes shape or newshape (deprecated), not both")
        shape = newshape
    if shape is None:
        raise ArgumentTypeError("reshape() missing required argument 'shape'")
    src, a = a, asarray(a)
    out = a.reshape(shape, order=order)
    if copy and out.storage is a.storage:
        return out.copy()
    if copy is False and (out.storage is not a.storage or src is not a):
        raise ArgumentError(f"cannot reshape an array of shape {a.shape} and strides "
                            f"{a.strides} to {out.shape} without a copy (copy=False)")
    return out


def transpose(a, axes=None):
    """The view of `a` with its axes permuted by `axes` (reversed when None)."""
    return asarray(a).transpose(*(() if axes is None else (axes,)))


def swapaxes(a, axis1, axis2):
    """The view of `a` with axes `axis1` and `axis2` exchanged."""
    return asarray(a).swapaxes(axis1, axis2)


def squeeze(a, axis=None):
    """The view of `a` without its axes of length one (only `axis`, if given: ShapeError when
    one of those is not of length one)."""
    return asarray(a).squeeze(axis)


def ravel(a, order="C"):
    """`a`'s elements as a 1-d array read in `order`: a view where the layout allows, else a
    copy."""
    return asarray(a).ravel(order)


def expand_dims(a, axis=0):
    """A view with size-1 axes inserted at the positions `axis` names in the result."""
    a = asarray(a)
    axis = axis if isinstance(axis, tuple | list) else (axis,)
    ndim = a.ndim + len(axis)
    new = {_normalize_axis(ax, ndim) for ax in axis}
    if len(new) != len(axis):
        raise ArgumentError(f"repeated axis in expand_dims: {tuple(axis)}")
    shape, strides, it = [], [], iter(zip(a.shape, a.strides))
    for d in range(ndim):
        n, s = (1, 0) if d in new else next(it)
        shape.append(n)
        strides.append(s)
    return a._view(tuple(shape), tuple(strides))


def check_same_context(*arrays):
    """The one context of `arrays`, or ContextMismatch naming both."""
    ctx = arrays[0].context
    for a in arrays[1:]:
        if a.context is not ctx:
            raise ContextMismatch(f"arrays on contexts {ctx.name!r} ({ctx.devname}) and "
                                  f"{a.context.name!r} ({a.context.devname}) in one operation; "
                                  f"transfer one with x.transfer(ctx)")
    return ctx
