"""numpy's ufuncs on GpuArrays: type resolution by numpy itself, kernels by the engine.

Each `Ufunc` resolves loop dtypes with numpy's own `ufunc.resolve_dtypes` (NEP 50: Python
scalars are weak), so promotion matches numpy exactly; the OpenCL snippet comes from
`kernels/ufunc_ops.py`. Array operands broadcast; Python and numpy scalars travel as kernel
arguments, so `x + 1` and `x + 2` share one kernel.
"""

import functools
import numbers

import numpy as np
from numpy._core.umath import clip as _np_clip  # numpy 1.26 has this path too

from . import dtypes, elemwise
from .base import ArrayBase, check_same_context, empty, to_device
from .context import get_context
from .errors import ArgumentError, ArgumentTypeError, ShapeError, UnsupportedError
from .indexing import nonzero
from .kernels import render, ufunc_ops

__all__ = [
    "ALIASES", "UFUNCS", "Symbol", "Ufunc", "UfuncOperators", "around", "broadcast_shapes",
    "fix", "imag", "lookup", "nan_to_num", "real", "round", "scalar_converter", "weak_type",
    "where",
]


def broadcast_shapes(*shapes):
    """numpy's broadcast of `shapes`, or ShapeError naming them."""
    return elemwise.broadcast_shape(shapes) if shapes else ()


def weak_type(value):
    """The type numpy's resolution sees for a scalar operand: int, float or complex when it
    is a Python scalar (weak), else its dtype (numpy scalars, even np.float64, are strong)."""
    t = type(value)
    if t is int or t is float or t is complex:
        return t
    return dtypes.normalize(np.asarray(value).dtype)


# numpy's resolve_dtypes takes the weak types int, float and complex; a Python bool is a
# plain bool (it promotes like one).
_RESOLVABLE = {bool: np.dtype(np.bool_)}
# A representative value per weak type, for np.result_type (which treats types as strong).
_WEAK_VALUES = {int: 0, float: 0.0, complex: 0j, bool: False}


class Ufunc:
    """A numpy ufunc on GpuArrays: `ga.add(x, y, out=None, dtype=None, casting=..., where=True)`.

    Calling one runs one elementwise kernel on the operands' context. Operands are
    GpuArrays, numpy arrays (copied to the device) or scalars; they broadcast and promote
    as numpy 2 does (NEP 50: Python scalars are weak, so `int8_array + 1` stays int8).
    Scalars are kernel arguments: `x + 1` and `x + 2` share one kernel.

    Parameters
    ----------
    *args : GpuArray, numpy array or scalar
        `nin` operands.
    out : GpuArray, optional
        Where to write the result (it may overlap the inputs).
    dtype : dtype, optional
        The output dtype numpy's loop resolution is asked for.
    casting : str
        numpy's casting rule for the inputs and `out` (default 'same_kind').
    where : GpuArray of bool or True
        Elements where False keep `out`'s value (uninitialised without `out`).

    Returns
    -------
    GpuArray
        A new array, or `out`.

    Raises
    ------
    UnsupportedError
        A dtype the ufunc has no loop for (numpy's resolution fails, or gpuarr lacks it).
    ShapeError
        Operands that do not broadcast.

    Examples
    --------
    >>> x = ga.asarray(np.array([1, 2, 3], dtype=np.int8))
    >>> (x + 1).dtype                             # a Python scalar is weak
    dtype('int8')
    >>> ga.add(x, x, dtype=np.float32).get()
    array([2., 4., 6.], dtype=float32)
    >>> ga.maximum(x, 2).get()
    array([2, 2, 3], dtype=int8)
    """

    def __init__(self, name, np_ufunc, kind_input=0, nin=None):
        self.__name__ = self.name = name
        self.np_ufunc = np_ufunc  # None for where(), which numpy has as a plain function
        self.nin = nin or np_ufunc.nin
        self.kind_input = kind_input
        self._resolved = {}
        self.__doc__ = (f"numpy.{name} on GpuArrays, {self.nin} operand(s): numpy's "
                        "arguments (out=, dtype=, casting=, where=), promotion and "
                        f"broadcasting; returns a new GpuArray, or out. numpy.{name}'s "
                        "documentation describes the function.")

    def __repr__(self):
        return f"<gpuarr ufunc {self.name!r}>"

    def resolve(self, in_types, out_dtype=None, dtype=None, casting="same_kind"):
        """Loop dtypes (inputs, output) numpy would use, cached per operand types."""
        key = (in_types, out_dtype, dtype, casting)
        found = self._resolved.get(key)
        if found is None:
            extra = {} if dtype is None else {"signature": (None,) * self.nin + (dtype,)}
            try:
                loops = self.np_ufunc.resolve_dtypes(
                    (*(_RESOLVABLE.get(t, t) for t in in_types), out_dtype), casting=casting,
                    **extra)
            except TypeError as e:
                raise UnsupportedError(f"{self.name}: {e}") from None
            found = self._resolved[key] = (tuple(d.name for d in loops[:self.nin]),
                                           loops[self.nin].name)
        return found

    def _loop(self, storages, loops, out_dtype, out_loop, masked):
        """The elemwise.Loop of one call pattern (cached by the caller's key)."""
        kind = loops[self.kind_input]
        op = ufunc_ops.operation(self.name, loops, kind)
        if op is None:
            raise UnsupportedError(f"{self.name} is not supported for dtype {kind} on gpuarr")
        statement, helpers = op
        ins = tuple((s or ldt, ldt, s is None) for s, ldt in zip(storages, loops))
        if masked:
            # out0 keeps its old value where the mask is False: read it as an extra input.
            k = len(ins)
            ins += (("bool", "bool", False), (out_dtype, out_loop, False))
            statement = (f"if (in{k}) {{ {statement} }} else {{ out0 = in{k + 1}; }}")
        preamble = render("ufunc_helpers.cl.mako", helpers=helpers) if helpers else ""
        return ins, statement, preamble

    def __call__(self, *args, out=None, dtype=None, casting="same_kind", where=True):
        if self.name == "power":
            _check_integer_power(args)
            if type(args[1]) in (int, float) and isinstance(args[0], ArrayBase) and \
                    args[0].dtype.kind in "fc" and args[1] in _SCALAR_POWERS:
                return UFUNCS[_SCALAR_POWERS[args[1]]](args[0], out=out, dtype=dtype,
                                                       casting=casting, where=where)
        try:
            if out is None and dtype is None and where is True and casting == "same_kind":
                result = self._fast_call(args)
                if result is not None:
                    return result
            return self._call(args, out, dtype, casting, where)
        except OverflowError:
            if self.name not in _FLIPPED:
                raise
            return self._out_of_range_comparison(args, out)

    def _out_of_range_comparison(self, args, out):
        """array OP python_int with the int outside the array's range: numpy 2 answers
        exactly, the same for every element."""
        arr, v = (args[0], args[1]) if isinstance(args[0], ArrayBase) else (args[1], args[0])
        name = self.name if arr is args[0] else _FLIPPED[self.name]
        above = v > np.iinfo(arr.dtype).max
        value = name in (("less", "less_equal", "not_equal") if above
                         else ("greater", "greater_equal", "not_equal"))
        if out is None:
            return empty(arr.shape, np.bool_, context=arr.context).fill(value)
        out[...] = value
        return out

    def _fast_call(self, args):
        """The common call (one or two operands: arrays of one context and Python scalars):
        one lookup replaces dtype resolution, scalars go to the kernel as they are, and the
        launch is elemwise's unrolled one. None for any other call."""
        if len(args) != self.nin or self.nin > 2:
            return None
        a = args[0]
        if len(args) == 1:
            if not isinstance(a, ArrayBase):
                return None
            ctx, shape, sig = a.storage.context, a.shape, (self, a.dtype)
            array, scalar = a, None
        else:
            b = args[1]
            if isinstance(a, ArrayBase):
                ctx = a.storage.context
                if isinstance(b, ArrayBase):
                    if b.storage.context is not ctx:
                        return None
                    shape = a.shape if a.shape == b.shape else broadcast_shapes(a.shape, b.shape)
                    sig, array, scalar = (self, a.dtype, b.dtype), None, None
                else:
                    t = type(b)
                    if t is not float and t is not int and t is not bool:
                        return None
                    shape, sig, array, scalar = a.shape, (self, a.dtype, t), a, b
            elif isinstance(b, ArrayBase):
                t = type(a)
                if t is not float and t is not int and t is not bool:
                    return None
                ctx = b.storage.context
                shape, sig, array, scalar = b.shape, (self, t, b.dtype), b, a
            else:
                return None
        entry = ctx.ufunc_calls.get(sig)
        if entry is None:
            entry = ctx.ufunc_calls[sig] = self._prepare_fast(ctx, sig[1:])
        loop, out_dtype, convert = entry
        out = ArrayBase._empty(ctx, shape, out_dtype)
        if array is None:
            elemwise.run2(loop, out, a, b)
        elif scalar is None:
            elemwise.run1(loop, out, array)
        else:
            elemwise.run1(loop, out, array, (convert(scalar),))
        return out

    def _prepare_fast(self, ctx, sig):
        """(loop, output dtype, the converter of the scalar operand or None) for operand
        types `sig` (a dtype per array, the Python type of a scalar)."""
        loops, out_loop = self.resolve(sig)  # Python scalars appear as their type
        for name in (*loops, out_loop):
            dtypes.check_device(name, ctx)
        storages = tuple(None if isinstance(t, type) else t.name for t in sig)
        loop = self._cached_loop(storages, loops, out_loop, out_loop, False)
        converters = [scalar_converter(ldt) for st, ldt in zip(storages, loops) if st is None]
        return loop, np.dtype(out_loop), (converters[0] if converters else None)

    def _cached_loop(self, storages, loops, out_dtype, out_loop, masked):
        key = (self.name, storages, loops, out_dtype, masked)
        loop = _LOOPS.get(key)
        if loop is None:
            ins, statement, preamble = self._loop(storages, loops, out_dtype, out_loop, masked)
            siblings = None if masked else _siblings(self.nin, loops, out_loop)
            if siblings is not None and statement not in siblings.operations:
                siblings = None
            loop = _LOOPS[key] = elemwise.Loop(ins, ((out_dtype, out_loop),), statement,
                                               preamble=preamble, siblings=siblings)
        return loop

    def _call(self, args, out, dtype, casting, where):
        for a in args:
            if isinstance(a, Symbol):
                return a.record(self, args)
        if len(args) != self.nin:
            raise ArgumentError(f"{self.name} takes {self.nin} inputs, got {len(args)}")
        if isinstance(out, tuple):
            if len(out) != 1:
                raise ArgumentError(f"{self.name} has one output; out= got {len(out)}")
            out = out[0]
        arrays = [a for a in args if isinstance(a, ArrayBase)]
        if out is not None:
            if not isinstance(out, ArrayBase):
                raise ArgumentTypeError(f"out= must be a GpuArray, not {type(out).__name__}")
            arrays.append(out)
        ctx = check_same_context(*arrays) if arrays else get_context()
        operands = []
        for a in args:
            if isinstance(a, ArrayBase):
                operands.append(a)
            elif isinstance(a, np.ndarray) and a.ndim:
                operands.append(to_device(a, ctx))
            elif isinstance(a, numbers.Number | np.generic | np.ndarray):
                operands.append(a)
            else:
                raise ArgumentError(f"{self.name}: unsupported operand {a!r} "
                                    f"({type(a).__name__}); pass arrays or numbers")
        in_types = tuple(a.dtype if isinstance(a, ArrayBase) else weak_type(a) for a in operands)
        loops, out_loop = self.resolve(in_types, None if out is None else out.dtype,
                                       None if dtype is None else dtypes.normalize(dtype), casting)
        for name in (*loops, out_loop):
            dtypes.check_device(name, ctx)
        shape = broadcast_shapes(*(a.shape for a in operands if isinstance(a, ArrayBase)))
        masked = where is not True
        if out is None:
            if masked:
                raise ArgumentError(f"{self.name}: where= needs out= (numpy leaves the other "
                                    "elements uninitialised)")
            out = empty(shape, out_loop, context=ctx)
        else:
            out._check_writeable()
            if broadcast_shapes(shape, out.shape) != out.shape:
                raise ShapeError(f"{self.name}: non-broadcastable output operand with shape "
                                 f"{out.shape} doesn't match the broadcast shape {shape}")
        inputs = []
        storages = []
        for a, ldt in zip(operands, loops):
            if isinstance(a, ArrayBase):
                if a._may_share(out) and not _same_view(a, out):
                    a = a.copy()
                inputs.append(a)
                storages.append(a.dtype.name)
            else:
                inputs.append(_scalar_arg(a, ldt))
                storages.append(None)
        if masked:
            mask = (where if isinstance(where, ArrayBase)
                    else to_device(np.asarray(where, bool), ctx))
            if mask.dtype != np.bool_ or (mask._may_share(out) and not _same_view(mask, out)):
                mask = mask.astype(bool)  # (a copy)
            inputs += [mask, out]
        loop = self._cached_loop(tuple(storages), loops, out.dtype.name, out_loop, masked)
        elemwise.run(loop, [out], inputs)
        return out


_LOOPS = {}


@functools.cache
def _siblings(nin, loops, out_loop):
    """The operations of every table ufunc whose loop for dtypes `loops` is theirs, giving
    out_loop: where kernels compile lazily they share one program (a ufunc call then mostly
    finds its kernels built; see elemwise.lazy_kernels)."""
    operations, helpers = [], []
    for uf in UFUNCS.values():
        if uf.nin != nin or type(uf) is not Ufunc:
            continue
        try:
            if uf.resolve(tuple(np.dtype(d) for d in loops)) != (loops, out_loop):
                continue
        except UnsupportedError:
            continue
        op = ufunc_ops.operation(uf.name, loops, loops[uf.kind_input])
        if op is not None and op[0] not in operations:
            operations.append(op[0])
            helpers += [h for h in op[1] if h not in helpers]
    preamble = render("ufunc_helpers.cl.mako", helpers=tuple(helpers)) if helpers else ""
    return elemwise.Siblings(tuple(operations), preamble)


# Comparisons and their mirror images (a < b is b > a).
_FLIPPED = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
            "greater_equal": "less_equal", "equal": "equal", "not_equal": "not_equal"}


# numpy 2's power of an inexact array to a Python scalar 2, 0.5, -1 or 1 is square, sqrt,
# reciprocal or positive (its fast path: sqrt's -0.0 and NaN at -inf included; numpy 1.x
# took it for the ** operator only). On PoCL pow costs 50-70x numpy's time in float64.
_SCALAR_POWERS = {2: "square", 0.5: "sqrt", -1: "reciprocal", 1: "positive"}


def _check_integer_power(args):
    """numpy refuses integers to negative integer powers; checkable here for scalar exponents
    (an array of exponents would need a device reduction: its negative entries give 0)."""
    base, exponent = args
    if (isinstance(exponent, int | np.integer) and not isinstance(exponent, bool | np.bool_)
            and exponent < 0 and getattr(base, "dtype", np.dtype(type(base))).kind in "iu"):
        raise ArgumentError(f"integers to negative integer powers are not allowed "
                            f"(exponent {exponent})")


def _same_view(a, b):
    return a.offset == b.offset and a.strides == b.strides and a.shape == b.shape


def scalar_converter(loop_dtype):
    """How a Python scalar reaches a kernel argument of `loop_dtype` (numpy's conversion)."""
    dt = np.dtype(loop_dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = int(info.min), int(info.max)

        def to_int(v):
            if not lo <= v <= hi:
                raise OverflowError(f"Python integer {v} out of bounds for {dt}")
            return int(v)
        return to_int
    if dt.kind == "f" and dt.itemsize >= 4:
        return float
    return functools.partial(_scalar_arg, loop_dtype=loop_dtype)


def _scalar_arg(value, loop_dtype):
    """A scalar converted to the loop dtype (OverflowError for out-of-range Python ints)."""
    dt = np.dtype(loop_dtype)
    if isinstance(value, np.ndarray):
        value = value[()]
    if isinstance(value, int) and not isinstance(value, bool) and dt.kind in "iu":
        info = np.iinfo(dt)
        if not info.min <= value <= info.max:
            raise OverflowError(f"Python integer {value} out of bounds for {dt}")
    box = np.asarray(value).astype(dt)
    if dt == np.float16:
        return box.astype(np.float32)[()]
    return box.astype(np.uint8)[()] if dt == np.bool_ else box[()]


class _Where(Ufunc):
    """where(cond, x, y): x where cond is true, else y; dtype numpy's result_type(x, y)."""

    def resolve(self, in_types, out_dtype=None, dtype=None, casting="same_kind"):
        key = (in_types, out_dtype)
        found = self._resolved.get(key)
        if found is None:
            dt = np.result_type(*(_WEAK_VALUES.get(t, t) for t in in_types[1:])).name
            found = self._resolved[key] = (("bool", dt, dt), out_dtype.name if out_dtype else dt)
        return found


_NAMES = [
    "add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "fmod", "power",
    "float_power", "negative", "positive", "absolute", "fabs", "sign", "reciprocal", "square",
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp",
    "logaddexp2", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot", "sinh",
    "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "floor", "ceil",
    "trunc", "rint", "maximum", "minimum", "fmax", "fmin", "isnan", "isinf", "isfinite",
    "signbit", "copysign", "nextafter", "ldexp", "greater", "greater_equal", "less",
    "less_equal", "equal", "not_equal", "logical_and", "logical_or", "logical_xor",
    "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift",
    "right_shift", "conjugate", "heaviside",
]

UFUNCS = {name: Ufunc(name, getattr(np, name)) for name in _NAMES}
UFUNCS["clip"] = Ufunc("clip", _np_clip)  # the ufunc; np.clip is a function
_where3 = _Where("where", None, kind_input=1, nin=3)

ALIASES = {"divide": "true_divide", "mod": "remainder", "abs": "absolute", "conj": "conjugate",
           "bitwise_not": "invert", "degrees": "rad2deg", "radians": "deg2rad"}


# ---------------------------------------------------------------- operators

# Python's operators and the ufuncs they call: __add__, __radd__ and __iadd__ call add.
# UfuncOperators below spells them out; gpuarr.symbolic and the Array API's in-place rule
# read these tables (tests/test_architecture.py checks that they agree).
_BINARY_OPERATORS = [
    ("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "true_divide"),
    ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "power"),
    ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
    ("lshift", "left_shift"), ("rshift", "right_shift"),
]
_UNARY_OPERATORS = [("neg", "negative"), ("pos", "positive"), ("abs", "absolute"),
                    ("invert", "invert")]
_COMPARISONS = [("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"),
                ("gt", "greater"), ("ge", "greater_equal")]


def _binary(dunder):
    """__dunder__, __rdunder__ and __idunder__: the binary ufunc of the table."""
    name = dict(_BINARY_OPERATORS)[dunder]
    uf = UFUNCS[name]

    def op(self, other):
        return uf(self, other) if isinstance(other, _OPERANDS) else NotImplemented

    def rop(self, other):
        return uf(other, self) if isinstance(other, _OPERANDS) else NotImplemented

    def iop(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return uf(self, other, out=self)

    for prefix, fn in (("", op), ("r", rop), ("i", iop)):
        fn.__name__ = f"__{prefix}{dunder}__"
        fn.__doc__ = f"{name} (see gpuarr.{name})"
    return op, rop, iop


def _unary(dunder):
    name = dict(_UNARY_OPERATORS)[dunder]
    uf = UFUNCS[name]

    def op(self):
        return uf(self)
    op.__name__, op.__doc__ = f"__{dunder}__", f"{name} (see gpuarr.{name})"
    return op


def _comparison(dunder):
    name = dict(_COMPARISONS)[dunder]
    uf = UFUNCS[name]

    def op(self, other):
        return uf(self, other) if isinstance(other, _OPERANDS) else NotImplemented
    op.__name__, op.__doc__ = f"__{dunder}__", f"{name} (see gpuarr.{name})"
    return op


def _array_ufunc(self, np_ufunc, method, *inputs, **kwargs):
    """numpy hands its ufunc calls on gpuarr's values to gpuarr (`np.exp(x)`, `ndarray + x`);
    GpuArray's own (gpuarr/protocols.py) adds np.matmul and np.vecdot."""
    uf = lookup(np_ufunc.__name__)
    if method != "__call__" or uf is None:
        return NotImplemented
    return uf(*inputs, **kwargs)


def lookup(name):
    """The gpuarr ufunc of a numpy ufunc name (aliases too), or None."""
    return UFUNCS.get(ALIASES.get(name, name))


class UfuncOperators:
    """Python's operators as the table's ufuncs: `x + y` is `gpuarr.add(x, y)`, `x += y` is
    `gpuarr.add(x, y, out=x)`. A mixin of GpuArray (gpuarr/array.py) and of Symbol."""

    __add__, __radd__, __iadd__ = _binary("add")
    __sub__, __rsub__, __isub__ = _binary("sub")
    __mul__, __rmul__, __imul__ = _binary("mul")
    __truediv__, __rtruediv__, __itruediv__ = _binary("truediv")
    __floordiv__, __rfloordiv__, __ifloordiv__ = _binary("floordiv")
    __mod__, __rmod__, __imod__ = _binary("mod")
    __pow__, __rpow__, __ipow__ = _binary("pow")
    __and__, __rand__, __iand__ = _binary("and")
    __or__, __ror__, __ior__ = _binary("or")
    __xor__, __rxor__, __ixor__ = _binary("xor")
    __lshift__, __rlshift__, __ilshift__ = _binary("lshift")
    __rshift__, __rrshift__, __irshift__ = _binary("rshift")

    __neg__ = _unary("neg")
    __pos__ = _unary("pos")
    __abs__ = _unary("abs")
    __invert__ = _unary("invert")

    __eq__ = _comparison("eq")
    __ne__ = _comparison("ne")
    __lt__ = _comparison("lt")
    __le__ = _comparison("le")
    __gt__ = _comparison("gt")
    __ge__ = _comparison("ge")

    __array_ufunc__ = _array_ufunc


class Symbol(UfuncOperators):
    """A traced value (see gpuarr.fusion, gpuarr.symbolic): ufuncs on it record themselves
    instead of running."""

    __hash__ = object.__hash__  # (defining __eq__ above would make it unhashable)

    def record(self, ufunc, args):
        raise NotImplementedError


_OPERANDS = (ArrayBase, Symbol, numbers.Number, np.generic, np.ndarray)


# ---------------------------------------------------------------- ufunc-like functions

def where(condition, x=None, y=None):
    """x where condition holds, else y (numpy's dtype rule); where(cond) alone is nonzero.

    Parameters
    ----------
    condition : GpuArray or array_like of bool
    x, y : GpuArray, array_like or scalar
        Values taken where `condition` is True, and False; all three broadcast.

    Returns
    -------
    GpuArray or tuple of GpuArray
        The selection, of numpy's result dtype for x and y; with `condition` alone, the
        tuple of int64 index arrays `nonzero(condition)` gives.

    Examples
    --------
    >>> x = ga.asarray(np.arange(5.0))
    >>> ga.where(x > 2, x, -1.0).get()
    array([-1., -1., -1.,  3.,  4.])
    >>> ga.where(x > 2)[0].get()
    array([3, 4])
    """
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ArgumentError("where takes either one or three arguments")
    return _where3(condition, x, y)


def fix(x, out=None):
    """Round toward zero, as numpy.fix."""
    return UFUNCS["trunc"](x, out=out)


def real(x):
    """The real part: a view for complex arrays, the array itself otherwise."""
    x = _as_array(x)
    if x.dtype.kind != "c":
        return x
    return x._view(x.shape, x.strides, dtype=_real_dtype(x.dtype))


def imag(x):
    """The imaginary part: a view for complex arrays, a read-only zero array otherwise."""
    x = _as_array(x)
    if x.dtype.kind != "c":
        out = empty(x.shape, x.dtype, context=x.context).fill(0)
        out._writeable = False
        return out
    dt = _real_dtype(x.dtype)
    return x._view(x.shape, x.strides, offset=x.offset + dt.itemsize, dtype=dt)


def _real_dtype(dt):
    return np.dtype(np.float32 if dt == np.complex64 else np.float64)


def _as_array(x):
    return x if isinstance(x, ArrayBase) else to_device(np.asarray(x), get_context())


def round(a, decimals=0, out=None):
    """Round half to even to `decimals` places, as numpy.round.

    Examples
    --------
    >>> ga.around(ga.asarray(np.array([0.5, 1.5, 2.5]))).get()
    array([0., 2., 2.])
    """
    a = _as_array(a)
    if a.dtype.kind in "biu":
        if decimals >= 0:
            return a.copy() if out is None else out._assign(a)
        raise UnsupportedError("round of integers to negative decimals is not supported yet")
    if decimals == 0:
        return UFUNCS["rint"](a, out=out)
    if a.dtype.kind == "c":  # each part on its own, as numpy does
        out = a.copy() if out is None else out._assign(a)
        for part in (real(out), imag(out)):
            round(part, decimals, out=part)
        return out
    return _scaled_unary(a, "_round_scale", out, scale=float(10.0 ** abs(decimals)) *
                         (1 if decimals > 0 else -1))


around = round


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN to `nan`, infinities to `posinf`/`neginf` (the dtype's extremes by default)."""
    x = _as_array(x)
    out = x.copy() if copy else x
    if x.dtype.kind == "c":
        for part in (real(out), imag(out)):
            nan_to_num(part, copy=False, nan=nan, posinf=posinf, neginf=neginf)
        return out
    if x.dtype.kind != "f":
        return out
    info = np.finfo(x.dtype)
    return _scaled_unary(out, "_nan_to_num", out, nan_value=nan,
                         posinf=info.max if posinf is None else posinf,
                         neginf=info.min if neginf is None else neginf)


def _scaled_unary(a, name, out, **scalars):
    """A float unary op of the table that reads named scalar arguments."""
    dt = a.dtype.name
    loop_dt = "float32" if dt == "float16" else dt
    statement, _ = ufunc_ops.operation(name, (loop_dt,), loop_dt)
    loop = elemwise.Loop(((dt, loop_dt, False),), ((dt, loop_dt),), statement,
                         scalar_args=tuple((loop_dt, k) for k in scalars))
    if out is None:
        out = empty(a.shape, a.dtype, context=a.context)
    elif a._may_share(out) and not _same_view(a, out):
        a = a.copy()
    elemwise.run(loop, [out], [a], tuple(scalars.values()))
    return out
