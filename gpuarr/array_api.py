"""The Array API standard (2025.12; 2021.12 to 2024.12 selectable) on gpuarr: the module
`gpuarr` itself is the namespace.

numpy's names cover most of the standard and gpuarr keeps numpy's; this module adds what the
standard spells differently or numpy lacks (acos, pow, concat, permute_dims, unstack,
matrix_transpose, vecdot, cumulative_sum, cumulative_prod, broadcast_shapes, unique_*,
sort(descending=), clip(x, /, min, max)), the dtype objects and functions, `device=` for eye
and linspace, namespace inspection (`__array_namespace_info__`), the version the
version-dependent behaviour follows (flag `array_api_version`, `set_array_api_version`), and
the array attributes (`device`, `to_device`, `mT`, `__array_namespace__`, in-place operators
that never change the array's dtype: the mixin `ArrayApiMethods` in GpuArray's bases).
docs/array_api.md lists what conforms and what is not there yet.
"""

import collections
import importlib
import math

import numpy as np

from . import config, dtypes, manipulation, sorting
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
    ShapeError,
    UnsupportedError,
)
from .reduction import _sum_dtypes, cumprod, cumsum
from .reduction import sum as _sum
from .ufuncs import _BINARY_OPERATORS, UFUNCS, UfuncOperators
from .ufuncs import broadcast_shapes as _broadcast_shapes

__all__ = [
    "ALIASES", "API_VERSION", "DTYPES", "FUNCTIONS", "MAX_DIMENSIONS", "STANDARD_DTYPES",
    "VERSIONS", "ArrayApiMethods", "FloatInfo", "Info", "IntInfo", "UniqueAllResult",
    "UniqueCountsResult", "UniqueInverseResult", "__array_namespace_info__", "api_version",
    "argsort", "astype", "broadcast_arrays", "broadcast_shapes", "can_cast", "clip", "concat",
    "cumulative_prod", "cumulative_sum", "e", "eye", "finfo", "iinfo", "inf",
    "isdtype", "linspace", "matrix_transpose", "meshgrid", "nan", "newaxis", "permute_dims",
    "pi", "result_type", "set_array_api_version", "sort", "unique_all", "unique_counts",
    "unique_inverse", "unique_values", "unstack", "vecdot",
]

API_VERSION = "2025.12"  # the default (flag array_api_version): the current standard
VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")
MAX_DIMENSIONS = 64  # numpy's limit, which gpuarr's kernels follow (docs/array_api.md)

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


# ---------------------------------------------------------------- the version followed

_chosen = [None]  # set_array_api_version's choice; None: the flag array_api_version


def api_version():
    """The Array API version whose behaviour gpuarr follows where versions differ: the last
    `set_array_api_version`, else the flag `array_api_version` (2025.12 unless set)."""
    return _chosen[0] or config.array_api_version


def set_array_api_version(version):
    """Follow Array API `version` ('2021.12' ... '2025.12'; None: the flag
    `array_api_version` again) where versions differ, as array_api_strict's
    `set_array_api_strict_flags(api_version=)`: `gpuarr.__array_api_version__`, and
    `meshgrid`, `broadcast_arrays` and `__array_namespace_info__().devices()` returning
    lists before 2025.12 (tuples from 2025.12). Returns the version followed before.

    Examples
    --------
    >>> ga.set_array_api_version("2023.12")
    '2025.12'
    >>> type(ga.meshgrid(ga.arange(2), ga.arange(3))).__name__
    'list'
    >>> ga.set_array_api_version(None)  # the flag's again
    '2023.12'
    >>> ga.__array_api_version__
    '2025.12'
    """
    if version is not None and version not in VERSIONS:
        raise ArgumentError(f"Array API version {version!r} is not supported; gpuarr "
                            f"follows {', '.join(VERSIONS)}")
    previous = api_version()
    _chosen[0] = version
    # the namespace's attribute, found by name as __array_namespace__ finds the module
    importlib.import_module(__package__).__array_api_version__ = api_version()
    return previous


def _sequence_type():
    """What the standard's functions returning several arrays return: lists before
    2025.12, tuples from it."""
    return tuple if api_version() >= "2025.12" else list


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


class FloatInfo:
    """What `finfo` returns: the standard's fields as Python numbers (`bits` an int; `eps`,
    `max`, `min`, `smallest_normal` floats) and `dtype` (the real dtype of a complex one);
    numpy.finfo's other attributes (`tiny`, `resolution`, `precision`, ...) as numpy has
    them."""

    def __init__(self, dtype):
        self._np = np.finfo(dtype)
        self.bits = int(self._np.bits)
        self.eps = float(self._np.eps)
        self.max = float(self._np.max)
        self.min = float(self._np.min)
        self.smallest_normal = float(self._np.smallest_normal)
        self.dtype = dtypes.normalize(self._np.dtype)

    def __getattr__(self, name):
        if name == "_np" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._np, name)

    def __repr__(self):
        return (f"finfo(bits={self.bits}, eps={self.eps!r}, max={self.max!r}, min={self.min!r}, "
                f"smallest_normal={self.smallest_normal!r}, dtype={self.dtype})")


class IntInfo:
    """What `iinfo` returns: `bits`, `max` and `min` as Python ints, and `dtype`."""

    def __init__(self, dtype):
        info = np.iinfo(dtype)
        self.bits, self.max, self.min = int(info.bits), int(info.max), int(info.min)
        self.dtype = dtypes.normalize(info.dtype)

    def __repr__(self):
        return f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, dtype={self.dtype})"


def finfo(type, /):
    """Limits of a floating dtype (or of an array's): bits, eps, max, min, smallest_normal
    as Python numbers, and dtype; a complex dtype gives its real part's.

    Examples
    --------
    >>> ga.finfo(ga.float32).eps
    1.1920928955078125e-07
    >>> ga.finfo(ga.complex128).dtype
    dtype('float64')
    """
    dt = _dtype_of(type)
    if dt.kind not in "fc":
        raise ArgumentTypeError(f"finfo needs a floating-point dtype, not {dt}; use iinfo for "
                                f"integers")
    return FloatInfo(dt)


def iinfo(type, /):
    """Limits of an integer dtype (or of an array's): bits, max, min as Python ints, and
    dtype.

    Examples
    --------
    >>> ga.iinfo(ga.int8).min
    -128
    """
    dt = _dtype_of(type)
    if dt.kind not in "iu":
        raise ArgumentTypeError(f"iinfo needs an integer dtype, not {dt}; use finfo for "
                                f"floating-point dtypes")
    return IntInfo(dt)


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
           [0., 0., 1.]])
    """
    return manipulation.eye(N, M, k, dtype, order, device_context(context, device))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             context=None, device=None):
    """`num` evenly spaced samples from start to stop (see gpuarr.manipulation.linspace).

    Examples
    --------
    >>> ga.linspace(0, 1, 5).get()                  # floatX from Python numbers
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    return manipulation.linspace(start, stop, num, endpoint, retstep, dtype, axis,
                                 context=device_context(context, device))


# ---------------------------------------------------------------- element-wise

def _no_bound(dt, low):
    """A weak Python scalar at or beyond the dtype's end: clip's missing bound."""
    if dt.kind == "b":
        return not low
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return int(info.min if low else info.max)
    return -math.inf if low else math.inf


def clip(x, /, min=None, max=None, out=None, *, a_min=None, a_max=None, **kwargs):
    """The standard's clip(x, /, min=None, max=None), and numpy.clip (whose bounds are
    called a_min and a_max): a None bound is no bound. One kernel per dtype serves both
    bounds, one of them or none.

    Examples
    --------
    >>> ga.clip(ga.asarray(np.arange(5)), 1, 3).get()
    array([1, 1, 2, 3, 3])
    >>> ga.clip(ga.asarray(np.arange(5.0)), max=2.0).get()
    array([0., 1., 2., 2., 2.])
    """
    if a_min is not None:
        if min is not None:
            raise ArgumentTypeError("clip: pass min or a_min, not both")
        min = a_min
    if a_max is not None:
        if max is not None:
            raise ArgumentTypeError("clip: pass max or a_max, not both")
        max = a_max
    if min is None or max is None:
        dt = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
        min = _no_bound(dt, True) if min is None else min
        max = _no_bound(dt, False) if max is None else max
    return UFUNCS["clip"](x, min, max, out=out, **kwargs)


# ---------------------------------------------------------------- manipulation

concat = manipulation.concatenate


def broadcast_arrays(*arrays):
    """Read-only views of the arrays broadcast to one shape: a tuple (a list before the
    standard's 2025.12, see set_array_api_version)."""
    return _sequence_type()(manipulation.broadcast_arrays(*arrays))


def meshgrid(*arrays, indexing="xy", copy=True, sparse=False):
    """Coordinate arrays from 1-d coordinate vectors, as numpy.meshgrid: a tuple (a list
    before the standard's 2025.12, see set_array_api_version).

    Examples
    --------
    >>> xx, yy = ga.meshgrid(ga.asarray(np.arange(3)), ga.asarray(np.arange(2)))
    >>> xx.shape, yy.get()
    ((2, 3), array([[0, 0, 0],
           [1, 1, 1]]))
    """
    out = manipulation.meshgrid(*arrays, copy=copy, sparse=sparse, indexing=indexing)
    return _sequence_type()(out)


def broadcast_shapes(*shapes):
    """The shape `shapes` broadcast to (a tuple of ints); ShapeError (a ValueError) when
    they do not broadcast. An int stands for a 1-d shape, as in numpy.

    Examples
    --------
    >>> ga.broadcast_shapes((3, 1), (4,), ())
    (3, 4)
    """
    return tuple(_broadcast_shapes(*((s,) if isinstance(s, int) else tuple(s)
                                     for s in shapes)))


def permute_dims(a, /, axes=None):
    """A view with the axes permuted (numpy.transpose; negative axes count from the end)."""
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

def _cumulative(name, scan, initial, x, axis, dtype, include_initial):
    """The standard's cumulative_sum/_prod: `scan` along `axis` (required beyond 1-d), with
    numpy's dtypes; include_initial puts `initial` before the first element."""
    x = asarray(x)
    if axis is None:
        if x.ndim != 1:
            raise ArgumentError(f"{name} needs axis= for an array of {x.ndim} dimensions")
        axis = 0
    ax = _normalize_axis(axis, x.ndim)
    if not include_initial:
        return scan(x, ax, dtype)
    shape = list(x.shape)
    shape[ax] += 1
    out = empty(tuple(shape), _sum_dtypes(x, dtype)[1], context=x.context)
    lead = (slice(None),) * ax
    out[(*lead, slice(0, 1))].fill(initial)
    scan(x, ax, dtype, out=out[(*lead, slice(1, None))])
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running sum along `axis` (required beyond 1-d), with numpy's sum dtypes;
    include_initial puts the zero before the first element.

    Examples
    --------
    >>> ga.cumulative_sum(ga.asarray([1, 2, 3]), include_initial=True).get()
    array([0, 1, 3, 6])
    """
    return _cumulative("cumulative_sum", cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running product along `axis` (required beyond 1-d), with numpy's prod dtypes;
    include_initial puts the one before the first element.

    Examples
    --------
    >>> ga.cumulative_prod(ga.asarray([1, 2, 3]), include_initial=True).get()
    array([1, 1, 2, 6])
    """
    return _cumulative("cumulative_prod", cumprod, 1, x, axis, dtype, include_initial)


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
        """Boolean indexing and data-dependent shapes: both supported; from 2024.12, the
        maximum number of dimensions (numpy's, 64)."""
        caps = {"boolean indexing": True, "data-dependent shapes": True}
        if api_version() >= "2024.12":
            caps["max dimensions"] = MAX_DIMENSIONS
        return caps

    def default_device(self):
        """The default context (flag `device`; else the first GPU, else Intel's CPU
        runtime, else the first usable device)."""
        return get_context()

    def default_dtypes(self, *, device=None):
        """floatX for real floats (float32 on a device without float64), int64 for
        integers and indices."""
        ctx = get_context(device)
        real = dtypes.float_x(ctx)
        if real == np.float64 and not ctx.fp64:
            real = DTYPES["float32"]
        cplx = DTYPES["complex64" if real == np.float32 else "complex128"]
        return {"real floating": real, "complex floating": cplx,
                "integral": DTYPES["int64"], "indexing": DTYPES["int64"]}

    def devices(self):
        """The contexts of every usable device, in platform/device order: a tuple (a list
        before 2025.12)."""
        return _sequence_type()(get_context(d.name) for d in list_devices() if d.usable)

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
    """The Array API namespace of this array: the gpuarr module. An `api_version` makes
    gpuarr follow that version from then on, as array_api_strict does
    (see set_array_api_version)."""
    if api_version is not None:
        set_array_api_version(api_version)
    return importlib.import_module(__package__)


def _to_device(self, device, /, *, stream=None):
    """This array on `device` (a Context or a context name); itself when already there."""
    if stream is not None:
        raise UnsupportedError(f"to_device(stream={stream!r}): gpuarr orders copies by events "
                               f"on each context's queue; pass no stream")
    return self.transfer(device)


def _matrix_transpose(self):
    return matrix_transpose(self)


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
    isdtype, result_type, can_cast, finfo, iinfo, astype, eye, linspace, clip,
    broadcast_arrays, broadcast_shapes, meshgrid, permute_dims, unstack, matrix_transpose,
    vecdot, cumulative_sum, cumulative_prod, unique_all, unique_counts, unique_inverse,
    unique_values, sort, argsort, set_array_api_version)}
FUNCTIONS.update(concat=concat, e=e, inf=inf, nan=nan, pi=pi, newaxis=newaxis, **DTYPES)
FUNCTIONS.update({alias: UFUNCS[name] for alias, name in ALIASES.items()})
