"""The Array API standard (2023.12) on gpuarr: the module `gpuarr` itself is the namespace.

numpy's names cover most of the standard and gpuarr keeps numpy's; this module adds what the
standard spells differently or numpy lacks (acos, pow, concat, permute_dims, unstack,
matrix_transpose, vecdot, cumulative_sum, unique_*, sort(descending=), clip(min=, max=)),
the dtype objects and functions, `device=` for eye and linspace, namespace inspection
(`__array_namespace_info__`) and the array attributes (`device`, `to_device`, `mT`,
`__array_namespace__`, in-place operators that never change the array's dtype: the mixin
`ArrayApiMethods` in GpuArray's bases). docs/array_api.md lists what conforms and what is not
there yet.
"""

import collections
import importlib
import math

import numpy as np

from . import dtypes, manipulation, sorting
from .base import (
    ArrayBase,
    _normalize_axis,
    asarray,
    check_same_context,
    device_context,
    empty,
    transpose,
)
from .blas import matmul
from .context import get_context, list_devices
from .errors import (
    ArgumentError,
    ArgumentTypeError,
    BufferExportError,
    ShapeError,
    UnsupportedError,
)
from .reduction import _sum_dtypes, cumsum
from .reduction import sum as _sum
from .ufuncs import _BINARY_OPERATORS, UFUNCS, UfuncOperators, broadcast_shapes

__all__ = [
    "ALIASES", "API_VERSION", "DTYPES", "FUNCTIONS", "STANDARD_DTYPES", "VERSIONS",
    "ArrayApiMethods", "Info", "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult",
    "__array_namespace_info__", "argsort", "astype", "can_cast", "clip", "concat",
    "cumulative_sum", "e", "eye", "finfo", "from_dlpack", "iinfo", "inf", "isdtype",
    "linspace", "matrix_transpose", "nan", "newaxis", "permute_dims", "pi", "result_type",
    "sort", "unique_all", "unique_counts", "unique_inverse", "unique_values", "unstack",
    "vecdot",
]

API_VERSION = "2023.12"
VERSIONS = ("2021.12", "2022.12", "2023.12")  # what __array_namespace__(api_version=) accepts

e, inf, nan, pi, newaxis = math.e, math.inf, math.nan, math.pi, None

# The standard's dtypes (plus float16, which gpuarr holds too) as numpy dtype instances:
# `x.dtype == gpuarr.int8` and `{gpuarr.int8: ...}[x.dtype]` both hold.
STANDARD_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                   "uint64", "float32", "float64", "complex64", "complex128")
DTYPES = {name: np.dtype(name) for name in (*STANDARD_DTYPES, "float16")}

# isdtype's kinds -> numpy dtype kind letters
_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
          "real floating": "f", "complex floating": "c", "numeric": "iufc"}

# standard name -> gpuarr (numpy) ufunc name
ALIASES = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
           "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh",
           "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
           "bitwise_right_shift": "right_shift", "pow": "power"}



def _dtype_of(value):
    """The dtype of a dtype-like or of an array (GpuArray or numpy)."""
    if isinstance(value, ArrayBase | np.ndarray):
        return value.dtype
    return dtypes.normalize(value)


# ---------------------------------------------------------------- data type functions

def isdtype(dtype, kind):
    """Whether `dtype` is of `kind`: a dtype, a kind name ('integral', 'real floating', ...)
    or a tuple of them."""
    if isinstance(dtype, ArrayBase | np.ndarray):
        raise ArgumentTypeError(f"isdtype takes a dtype, not an array ({type(dtype).__name__}); "
                                f"pass x.dtype")
    dt = dtypes.normalize(dtype)
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str):
            letters = _KINDS.get(k)
            if letters is None:
                raise ArgumentError(f"unknown dtype kind {k!r}; known: {', '.join(_KINDS)}")
            if dt.kind in letters:
                return True
        elif dt == dtypes.normalize(k):
            return True
    return False


def result_type(*arrays_and_dtypes):
    """The dtype of an operation on these arrays, dtypes and Python scalars (numpy 2's
    promotion, which holds the standard's table; Python scalars are weak)."""
    if not arrays_and_dtypes:
        raise ArgumentError("result_type() needs at least one array or dtype")
    args = [a.dtype if isinstance(a, ArrayBase) else a for a in arrays_and_dtypes]
    try:
        return dtypes.normalize(np.result_type(*args))
    except TypeError as e:
        raise UnsupportedError(f"result_type{tuple(args)!r}: {e}") from None


def can_cast(from_, to, /, casting="safe"):
    """Whether `from_` (a dtype or an array) casts to `to` under `casting`."""
    return bool(np.can_cast(_dtype_of(from_), dtypes.normalize(to), casting))


def finfo(type, /):
    """numpy.finfo of a floating dtype or array (bits, eps, max, min, smallest_normal, dtype)."""
    return np.finfo(_dtype_of(type))


def iinfo(type, /):
    """numpy.iinfo of an integer dtype or array (bits, max, min, dtype)."""
    return np.iinfo(_dtype_of(type))


def astype(x, dtype, /, *, copy=True, device=None):
    """`x` cast to `dtype` (numpy's unsafe cast), on `device` when given."""
    out = asarray(x).astype(dtype, copy=copy)
    return out if device is None else out.transfer(device)


# ---------------------------------------------------------------- creation

def eye(N, M=None, k=0, dtype=None, order="C", context=None, *, device=None):
    """Ones on the k-th diagonal, zeros elsewhere (dtype defaults to floatX).

    Examples
    --------
    >>> ga.eye(2, 3, k=1).get()
    array([[0., 1., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    return manipulation.eye(N, M, k, dtype, order, device_context(context, device))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             context=None, device=None):
    """`num` evenly spaced samples from start to stop (see gpuarr.manipulation.linspace).

    Examples
    --------
    >>> ga.linspace(0, 1, 5).get()                  # floatX from Python numbers
    array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    return manipulation.linspace(start, stop, num, endpoint, retstep, dtype, axis,
                                 context=device_context(context, device))


def from_dlpack(x, /, *, device=None, copy=None):
    """Not supported: gpuarr neither imports nor exports DLPack (BufferError, as asked)."""
    raise BufferExportError(f"from_dlpack: gpuarr has no DLPack support, so a "
                            f"{type(x).__name__} cannot be imported through it; convert it to "
                            f"a numpy array and call gpuarr.asarray")


# ---------------------------------------------------------------- element-wise

def _no_bound(dt, low):
    """A weak Python scalar at or beyond the dtype's end: clip's missing bound."""
    if dt.kind == "b":
        return not low
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return int(info.min if low else info.max)
    return -math.inf if low else math.inf


def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, **kwargs):
    """numpy.clip, and the standard's clip(x, /, min=None, max=None): a None bound is no
    bound. One kernel per dtype serves both bounds, one of them or none.

    Examples
    --------
    >>> ga.clip(ga.asarray(np.arange(5)), 1, 3).get()
    array([1, 1, 2, 3, 3])
    >>> ga.clip(ga.asarray(np.arange(5.0)), max=2.0).get()
    array([0., 1., 2., 2., 2.])
    """
    if min is not None:
        if a_min is not None:
            raise ArgumentTypeError("clip: pass a_min or min, not both")
        a_min = min
    if max is not None:
        if a_max is not None:
            raise ArgumentTypeError("clip: pass a_max or max, not both")
        a_max = max
    if a_min is None or a_max is None:
        dt = a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype
        a_min = _no_bound(dt, True) if a_min is None else a_min
        a_max = _no_bound(dt, False) if a_max is None else a_max
    return UFUNCS["clip"](a, a_min, a_max, out=out, **kwargs)


# ---------------------------------------------------------------- manipulation

concat = manipulation.concatenate


def permute_dims(a, /, axes=None):
    """A view with the axes permuted (numpy.transpose)."""
    return transpose(a, axes)


def unstack(x, /, *, axis=0):
    """The views x[..., i, ...] along `axis`, as a tuple."""
    x = asarray(x)
    if x.ndim == 0:
        raise ShapeError("unstack needs an array of at least one dimension, got a 0-d array")
    ax = _normalize_axis(axis, x.ndim)
    lead = (slice(None),) * ax
    return tuple(x[(*lead, i)] for i in range(x.shape[ax]))


# ---------------------------------------------------------------- linear algebra

def matrix_transpose(x, /):
    """A view with the last two axes swapped."""
    x = asarray(x)
    if x.ndim < 2:
        raise ShapeError(f"matrix_transpose needs an array of at least 2 dimensions, got shape "
                         f"{x.shape}")
    return x.swapaxes(-1, -2)


def _pair(x1, x2):
    """Two operands as GpuArrays of one context (numpy arrays are uploaded there)."""
    if isinstance(x1, ArrayBase) and isinstance(x2, ArrayBase):
        check_same_context(x1, x2)
        return x1, x2
    ctx = x1.context if isinstance(x1, ArrayBase) else x2.context if isinstance(
        x2, ArrayBase) else get_context()
    return tuple(x if isinstance(x, ArrayBase) else asarray(x, context=ctx) for x in (x1, x2))


def vecdot(x1, x2, /, *, axis=-1):
    """sum(conj(x1) * x2) along `axis` of the broadcast operands (numpy.vecdot's dtype)."""
    a, b = _pair(x1, x2)
    ndim = max(a.ndim, b.ndim)
    if not ndim:
        raise ShapeError("vecdot needs arrays of at least one dimension, got 0-d arrays")
    ax = _normalize_axis(axis, ndim)
    na, nb = (((1,) * (ndim - x.ndim) + x.shape)[ax] for x in (a, b))
    if na != nb:
        raise ShapeError(f"vecdot: x1 (shape {a.shape}) has {na} elements along axis {axis}, "
                         f"x2 (shape {b.shape}) has {nb}")
    broadcast_shapes(a.shape, b.shape)  # ShapeError naming both
    if a.dtype.kind == "c":
        a = UFUNCS["conjugate"](a)
    product = UFUNCS["multiply"](a, b)
    return _sum(product, axis=ax, dtype=product.dtype)


# ---------------------------------------------------------------- statistics

def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running sum along `axis` (required beyond 1-d), with numpy's sum dtypes;
    include_initial puts the zero before the first element."""
    x = asarray(x)
    if axis is None:
        if x.ndim != 1:
            raise ArgumentError(f"cumulative_sum needs axis= for an array of {x.ndim} "
                                f"dimensions")
        axis = 0
    ax = _normalize_axis(axis, x.ndim)
    if not include_initial:
        return cumsum(x, ax, dtype)
    shape = list(x.shape)
    shape[ax] += 1
    out = empty(tuple(shape), _sum_dtypes(x, dtype)[1], context=x.context)
    lead = (slice(None),) * ax
    out[(*lead, slice(0, 1))].fill(0)
    cumsum(x, ax, dtype, out=out[(*lead, slice(1, None))])
    return out


# ---------------------------------------------------------------- sets

UniqueAllResult = collections.namedtuple("UniqueAllResult",
                                         "values indices inverse_indices counts")
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", "values counts")
UniqueInverseResult = collections.namedtuple("UniqueInverseResult", "values inverse_indices")


def _unique(x, **returns):
    return sorting.unique(x, equal_nan=False, **returns)  # NaNs distinct, as the standard asks


def unique_all(x, /):
    """Sorted unique values, first-occurrence indices, inverse (x's shape) and counts."""
    return UniqueAllResult(*_unique(x, return_index=True, return_inverse=True,
                                    return_counts=True))


def unique_counts(x, /):
    """The Array API's unique_counts: (values, counts), values sorted, NaNs distinct.

    >>> import gpuarr as ga
    >>> r = ga.unique_counts(ga.asarray([3, 1, 3, 3]))
    >>> r.values.get(), r.counts.get()
    (array([1, 3]), array([1, 3]))
    """
    return UniqueCountsResult(*_unique(x, return_counts=True))


def unique_inverse(x, /):
    """The Array API's unique_inverse: (values, inverse_indices); values sorted, NaNs
    distinct, and `values[inverse_indices]` rebuilds `x` (inverse_indices has x's shape)."""
    return UniqueInverseResult(*_unique(x, return_inverse=True))


def unique_values(x, /):
    """The Array API's unique_values: the sorted unique values of `x` (flattened); NaNs
    are distinct, as the standard asks."""
    return _unique(x)


# ---------------------------------------------------------------- sorting

def sort(a, axis=-1, kind=None, order=None, *, descending=False, stable=None):
    """numpy.sort (always stable), and the standard's descending=: equal elements keep their
    order, NaNs come first.

    Examples
    --------
    >>> x = ga.asarray(np.array([[3, 1, 2], [0, 5, 4]]))
    >>> ga.sort(x).get()
    array([[1, 2, 3],
           [0, 4, 5]])
    >>> ga.sort(x, axis=0, descending=True).get()
    array([[3, 5, 4],
           [0, 1, 2]])
    """
    if not descending:
        return sorting.sort(a, axis, kind, order, stable=stable)
    a = asarray(a)
    if axis is None:
        a, axis = a.ravel(), 0
    # reversed input, stable ascending sort, reversed back: descending and stable
    flip = manipulation.flip
    return flip(sorting.sort(flip(a, axis), axis, kind, order, stable=stable), axis)


def argsort(a, axis=-1, kind=None, order=None, *, descending=False, stable=None):
    """numpy.argsort (always stable), and the standard's descending= (stable too)."""
    if not descending:
        return sorting.argsort(a, axis, kind, order, stable=stable)
    a = asarray(a)
    if axis is None:
        a, axis = a.ravel(), 0
    flip = manipulation.flip
    n = a.shape[_normalize_axis(axis, a.ndim)] if a.ndim else 1
    rev = flip(sorting.argsort(flip(a, axis), axis, kind, order, stable=stable), axis)
    return UFUNCS["subtract"](n - 1, rev)  # positions in the reversed input, mapped back


# ---------------------------------------------------------------- inspection

class Info:
    """What `gpuarr.__array_namespace_info__()` returns: the standard's inspection API.
    Devices are gpuarr Contexts."""

    def capabilities(self):
        """Boolean indexing and data-dependent shapes: both supported."""
        return {"boolean indexing": True, "data-dependent shapes": True}

    def default_device(self):
        """The default context (flag `device`; else the first GPU, else the first usable
        device)."""
        return get_context()

    def default_dtypes(self, *, device=None):
        """floatX for real floats (float32 on a device without float64), int64 for
        integers and indices."""
        ctx = get_context(device)
        real = dtypes.float_x()
        if real == np.float64 and not ctx.fp64:
            real = DTYPES["float32"]
        cplx = DTYPES["complex64" if real == np.float32 else "complex128"]
        return {"real floating": real, "complex floating": cplx,
                "integral": DTYPES["int64"], "indexing": DTYPES["int64"]}

    def devices(self):
        """The contexts of every usable device, in platform/device order."""
        return [get_context(d.name) for d in list_devices() if d.usable]

    def dtypes(self, *, device=None, kind=None):
        """The standard's dtypes `device` holds (no float64/complex128 without fp64)."""
        ctx = get_context(device)
        return {name: DTYPES[name] for name in STANDARD_DTYPES
                if (ctx.fp64 or not dtypes.needs_fp64(name))
                and (kind is None or isdtype(DTYPES[name], kind))}

    def __repr__(self):
        return "<gpuarr Array API namespace info>"


def __array_namespace_info__():
    """The Array API's inspection object (`Info`): capabilities, default device and
    dtypes, the usable devices (as Contexts) and the dtypes each holds."""
    return Info()


# ---------------------------------------------------------------- the array object

def _namespace(self, /, *, api_version=None):
    """The Array API namespace of this array: the gpuarr module."""
    if api_version is not None and api_version not in VERSIONS:
        raise ArgumentError(f"Array API version {api_version!r} is not supported; gpuarr "
                            f"implements {API_VERSION} (accepted: {', '.join(VERSIONS)})")
    return importlib.import_module(__package__)


def _to_device(self, device, /, *, stream=None):
    """This array on `device` (a Context or a context name); itself when already there."""
    if stream is not None:
        raise UnsupportedError(f"to_device(stream={stream!r}): gpuarr orders copies by events "
                               f"on each context's queue; pass no stream")
    return self.transfer(device)


def _matrix_transpose(self):
    return matrix_transpose(self)


def _dlpack_device(self, /):
    raise BufferExportError("GpuArray does not support DLPack (no __dlpack__); use x.get() or "
                            "numpy.asarray(x) for a host copy")


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
            "pow": "**", "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>"}


def _strict_inplace(dunder, uf, plain):
    """x op= y that refuses a GpuArray y whose promotion with x changes x's dtype (the
    standard: x op= y must equal x = x op y). Scalars and numpy operands cast back into x as
    numpy does (same_kind)."""
    def iop(self, other):
        if isinstance(other, ArrayBase):
            result = np.dtype(uf.resolve((self.dtype, other.dtype))[1])
            if result != self.dtype:
                sym = _SYMBOLS[dunder]
                raise UnsupportedError(
                    f"x {sym}= y would change x's dtype: {self.dtype} {sym} {other.dtype} gives "
                    f"{result}; write x = x {sym} y, or cast y (y.astype(x.dtype))")
        return plain(self, other)
    iop.__name__ = f"__i{dunder}__"
    iop.__doc__ = plain.__doc__
    return iop


def _imatmul(self, other):
    """x @= y: x's shape and dtype must hold the product."""
    product = matmul(self, other)
    if product.shape != self.shape or (product.dtype != self.dtype and (
            isinstance(other, ArrayBase) or not np.can_cast(product.dtype, self.dtype,
                                                          "same_kind"))):
        raise ShapeError(f"x @= y: the product has shape {product.shape} and dtype "
                         f"{product.dtype}; x has {self.shape} and {self.dtype}")
    return self._assign(product)


def _inplace(dunder):
    """The Array API's x op= y over UfuncOperators' (which casts back as numpy does)."""
    name = dict(_BINARY_OPERATORS)[dunder]
    return _strict_inplace(dunder, UFUNCS[name], getattr(UfuncOperators, f"__i{dunder}__"))


class ArrayApiMethods:
    """The standard's array attributes; its in-place operators come before UfuncOperators'
    in GpuArray's bases. A mixin of GpuArray (gpuarr/array.py)."""

    __array_namespace__ = _namespace
    device = property(lambda self: self.storage.context,
                      doc="the Context holding the data (the Array API's device)")
    to_device = _to_device
    mT = property(_matrix_transpose, doc="a view with the last two axes swapped")
    __dlpack_device__ = _dlpack_device

    __iadd__ = _inplace("add")
    __isub__ = _inplace("sub")
    __imul__ = _inplace("mul")
    __itruediv__ = _inplace("truediv")
    __ifloordiv__ = _inplace("floordiv")
    __imod__ = _inplace("mod")
    __ipow__ = _inplace("pow")
    __iand__ = _inplace("and")
    __ior__ = _inplace("or")
    __ixor__ = _inplace("xor")
    __ilshift__ = _inplace("lshift")
    __irshift__ = _inplace("rshift")
    __imatmul__ = _imatmul


FUNCTIONS = {f.__name__: f for f in (
    isdtype, result_type, can_cast, finfo, iinfo, astype, eye, linspace, from_dlpack, clip,
    permute_dims, unstack, matrix_transpose, vecdot, cumulative_sum, unique_all, unique_counts,
    unique_inverse, unique_values, sort, argsort)}
FUNCTIONS.update(concat=concat, e=e, inf=inf, nan=nan, pi=pi, newaxis=newaxis, **DTYPES)
FUNCTIONS.update({alias: UFUNCS[name] for alias, name in ALIASES.items()})
