"""numpy's functions on GpuArrays: `np.sum(x)`, `np.concatenate([x, h])`, `np.linalg.norm(x)`.

`__array_function__` looks the numpy function up in one table, generated from names: a
function of numpy's namespace maps to gpuarr's function of the same name, numpy.linalg's to
gpuarr.linalg's (numpy.fft's to gpuarr.fft's), except the names in EXCLUDED and gpuarr's
not-yet stubs. Calls pass through as numpy received them; where numpy's positional
parameters and gpuarr's part ways (np.zeros_like's 4th is subok, gpuarr's shape) the call is
bound by numpy's signature and passed by name. A numpy function gpuarr lacks, or an argument
its version lacks, raises UnsupportedError naming it: a GpuArray never takes a silent round
trip through the host (`np.asarray(x)` and `x.get()` are the explicit ones). `np.ones(3, like=x)`
creates on x's device.

numpy's ufuncs arrive through `__array_ufunc__` (gpuarr/ufuncs.py); this module wraps it so
that np.matmul and np.vecdot reach gpuarr.matmul and gpuarr.vecdot and a ufunc or method
gpuarr lacks (np.frexp, np.add.reduce) raises the same UnsupportedError instead of numpy's
generic TypeError. `ArrayFunctionProtocol` carries both protocols into GpuArray's bases.
"""

import functools
import importlib
import inspect
import numbers

import numpy as np

from . import ufuncs
from .array_api import vecdot
from .base import ArrayBase
from .blas import matmul
from .errors import UnsupportedError

__all__ = ["EXCLUDED", "NAMESPACES", "NOT_ON_DEVICE", "ArrayFunctionProtocol", "table"]

# numpy namespace -> the gpuarr namespace holding its names
NAMESPACES = {"numpy": "", "numpy.linalg": ".linalg", "numpy.fft": ".fft"}

# Names numpy and gpuarr share that must not dispatch, and why. Every shared function name
# means the same today; a gpuarr function that ever differs from numpy's goes here.
EXCLUDED = {
    "random": "a module, not a function",
    "linalg": "a module, not a function",
    "bool": "a type, not a function (numpy 1.26 warns on np.bool)",
}

# numpy's functions and ufuncs that take arrays but do not run on GpuArrays, and why (they
# raise UnsupportedError; docs/compatibility.md lists them; tests/test_numpy_functions.py
# walks numpy's namespace against this table and gpuarr's).
_DATETIME = "datetime64 values: GpuArrays hold no datetime64 or timedelta64 dtype"
_UFUNC = "a ufunc not yet in gpuarr's table (gpuarr/ufuncs.py)"
NOT_ON_DEVICE = {
    **dict.fromkeys(["busday_count", "busday_offset", "is_busday", "datetime_as_string",
                     "isnat"], _DATETIME),
    **dict.fromkeys(["bitwise_count", "divmod", "frexp", "gcd", "lcm", "modf", "spacing"],
                    _UFUNC),
    **dict.fromkeys(["matvec", "vecmat"], "numpy 2.2's gufuncs, not yet in gpuarr: "
                                          "matmul(a, v[..., None]) is matvec on the device"),
    # numpy 1.x's deprecated aliases, gone in numpy 2 (gpuarr has the names they stand for)
    **{old: f"numpy 1.x's deprecated alias of {new}" for old, new in [
        ("alltrue", "all"), ("sometrue", "any"), ("product", "prod"),
        ("cumproduct", "cumprod"), ("round_", "round"), ("msort", "sort(a, axis=0)"),
        ("asfarray", "asarray(a, dtype=float)")]},
}

# numpy's dispatched functions are instances of this type; the other numpy callables reach
# __array_function__ only through like= (np.ones(3, like=x)), which means "on x's device".
_DISPATCHER = type(np.concatenate)


def _qualname(func):
    return f"{getattr(func, '__module__', None) or 'numpy'}.{func.__name__}"


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _parameters(sig):
    """The keyword names a signature accepts, or None when it takes **kwargs (or is unknown)."""
    if sig is None or any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return frozenset(p.name for p in sig.parameters.values() if p.kind is not p.POSITIONAL_ONLY)


def _positional(sig):
    return [p.name for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _agreeing(func_sig, ours_sig):
    """How many leading positional arguments numpy's function and ours take alike (the first
    always), or None when all of numpy's do (np.zeros_like's 4th is subok, ours shape)."""
    if func_sig is None or ours_sig is None:
        return None
    theirs, mine = _positional(func_sig), _positional(ours_sig)
    n = 1
    while n < len(theirs) and n < len(mine) and theirs[n] == mine[n]:
        n += 1
    return n if n < len(theirs) else None


class _Entry:
    """A gpuarr function as numpy's counterpart: which keywords it takes, and how many of
    numpy's positional arguments it takes alike (beyond them a call is bound by name)."""

    __slots__ = ("accepted", "agreeing", "fn", "numpy_sig")

    def __init__(self, func, fn):
        self.fn, ours_sig, self.numpy_sig = fn, _signature(fn), _signature(func)
        self.accepted = _parameters(ours_sig)
        self.agreeing = _agreeing(self.numpy_sig, ours_sig)

    def by_name(self, args, kwargs):
        """numpy's positional arguments past the agreeing ones, passed by name; numpy-only
        arguments at numpy's default (subok=True) dropped."""
        bound = self.numpy_sig.bind(*args, **kwargs).arguments
        params = self.numpy_sig.parameters
        first, *rest = bound
        named = {}
        for name in rest:
            p, value = params[name], bound[name]
            if p.kind is p.VAR_KEYWORD:
                named.update(value)
            elif p.kind is p.VAR_POSITIONAL:
                return args, kwargs  # not expressible by name: leave the call as it was
            elif (self.accepted is None or name in self.accepted
                  or not _same(value, p.default)):
                named[name] = value
        return (bound[first],), named


def _same(value, default):
    try:
        return value is default or bool(value == default)
    except (TypeError, ValueError):  # arrays compare elementwise
        return False


@functools.cache
def table():
    """{numpy function: _Entry of its gpuarr counterpart}."""
    entries = {}
    for np_name, suffix in NAMESPACES.items():
        np_ns = importlib.import_module(np_name)
        ga_ns = importlib.import_module(__package__ + suffix)
        public = getattr(ga_ns, "__all__", None) or [n for n in dir(ga_ns) if n[0] != "_"]
        for name in public:
            if name in EXCLUDED or name.startswith("_"):
                continue
            func, ours = getattr(np_ns, name, None), getattr(ga_ns, name, None)
            if (not callable(func) or not callable(ours) or isinstance(func, type | np.ufunc)
                    or isinstance(ours, type) or getattr(ours, "not_implemented", False)):
                continue
            if func.__name__ != name and callable(getattr(ga_ns, func.__name__, None)):
                continue  # an alias (np.permute_dims is np.transpose): its own name maps it
            entries[func] = _Entry(func, ours)
    return entries


def _array_function(self, func, types, args, kwargs):
    """numpy hands its functions called with GpuArrays to gpuarr (NEP 18)."""
    for t in types:
        if not issubclass(t, ArrayBase | np.ndarray):
            return NotImplemented
    entry = table().get(func)
    if entry is None:
        raise UnsupportedError(f"{_qualname(func)} is not implemented for GpuArray; call .get() "
                               f"to compute on the host")
    if not isinstance(func, _DISPATCHER) and kwargs.get("device") is None:
        # like=self: create on self's device (numpy passes device=None at most)
        where = "device" if entry.accepted is None or "device" in entry.accepted else "context"
        kwargs = {**{k: v for k, v in kwargs.items() if k != "device"}, where: self.context}
    if entry.agreeing is not None and len(args) > entry.agreeing:
        args, kwargs = entry.by_name(args, kwargs)
    accepted = entry.accepted
    if accepted is not None and not kwargs.keys() <= accepted:
        bad = ", ".join(sorted(kwargs.keys() - accepted))
        raise UnsupportedError(f"{_qualname(func)}(..., {bad}=...) is not supported for "
                               f"GpuArray: gpuarr's {func.__name__} has no such argument")
    return entry.fn(*args, **kwargs)


def _vecdot(*inputs, axis=-1, **kwargs):
    if kwargs:
        raise UnsupportedError(f"numpy.vecdot(..., {', '.join(sorted(kwargs))}=...) is not "
                               f"supported for GpuArray; gpuarr.vecdot takes axis= only")
    return vecdot(*inputs, axis=axis)


# numpy ufuncs (not elementwise) that map onto gpuarr functions
_GUFUNCS = {np.matmul: matmul, getattr(np, "vecdot", None): _vecdot}
_GUFUNCS.pop(None, None)
_OPERANDS = (ArrayBase, np.ndarray, np.generic, numbers.Number)


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """gpuarr's ufuncs (gpuarr/ufuncs.py), numpy's vecdot, else UnsupportedError."""
    out = kwargs.get("out") or ()
    if not all(isinstance(v, _OPERANDS) for v in (*inputs, *out)):
        return NotImplemented  # another library's array may handle it
    if method == "__call__" and ufunc in _GUFUNCS:
        return _GUFUNCS[ufunc](*inputs, **kwargs)
    result = ufuncs._array_ufunc(self, ufunc, method, *inputs, **kwargs)
    if result is not NotImplemented:
        return result
    what = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    raise UnsupportedError(f"{what} is not implemented for GpuArray; call .get() to compute on "
                           f"the host")


class ArrayFunctionProtocol:
    """numpy's protocols (NEP 13, NEP 18): numpy's ufuncs and functions called with
    GpuArrays run on the device. A mixin of GpuArray (gpuarr/array.py)."""

    __array_function__ = _array_function
    __array_ufunc__ = _array_ufunc
