"""Variable constructors (T.vector, T.fmatrix, ...) and the methods and operators of
variables, generated from gpuarr's operator tables and the op modules."""

from ..dtypes import float_x
from ..ufuncs import _BINARY_OPERATORS, _COMPARISONS, _UNARY_OPERATORS
from . import basic, blas, reductions
from .elemwise import FUNCTIONS, cast
from .graph import Variable
from .transfer import transfer
from .types import TensorType

_PATTERNS = {"scalar": (), "vector": (False,), "row": (True, False), "col": (False, True),
             "matrix": (False, False), "tensor3": (False,) * 3, "tensor4": (False,) * 4}
_PREFIXES = {"f": "float32", "d": "float64", "i": "int32", "l": "int64", "b": "int8",
             "w": "int16", "c": "complex64", "z": "complex128"}


def tensor(dtype=None, broadcastable=(), name=None):
    """A host variable of `dtype` (default floatX) and broadcastable pattern."""
    return TensorType(float_x() if dtype is None else dtype, broadcastable)(name)


def _constructor(name, kind, fixed=None):
    pattern = _PATTERNS[kind]

    def make(name=None, dtype=None):
        return tensor(fixed or dtype, pattern, name)
    make.__name__ = name
    make.__doc__ = (f"A {kind} variable of dtype {fixed}." if fixed else
                    f"A {kind} variable (dtype floatX unless given).")
    return make


CONSTRUCTORS = {kind: _constructor(kind, kind) for kind in _PATTERNS}
CONSTRUCTORS.update({p + kind: _constructor(p + kind, kind, dt)
                     for p, dt in _PREFIXES.items() for kind in _PATTERNS})


# ---------------------------------------------------------------- operators and methods

def _binary(name):
    fn = FUNCTIONS[name]
    return (lambda self, other: fn(self, other)), (lambda self, other: fn(other, self))


def _install(cls):
    for dunder, name in _BINARY_OPERATORS:
        op, rop = _binary(name)
        setattr(cls, f"__{dunder}__", op)
        setattr(cls, f"__r{dunder}__", rop)
        setattr(cls, f"__i{dunder}__", op)  # symbolic: a new variable, never in place
    for dunder, name in _UNARY_OPERATORS:
        setattr(cls, f"__{dunder}__", FUNCTIONS[name])
    for dunder, name in _COMPARISONS:
        if dunder not in ("eq", "ne"):  # == stays identity: variables are dict keys (T.eq)
            setattr(cls, f"__{dunder}__", _binary(name)[0])
    cls.__matmul__ = lambda self, other: blas.matmul(self, other)
    cls.__rmatmul__ = lambda self, other: blas.matmul(other, self)
    for name, fn in reductions.FUNCTIONS_R.items():
        setattr(cls, name, fn)
    cls.dot = blas.dot
    cls.T = property(basic.transpose)
    cls.transpose = lambda self, *axes: basic.transpose(
        self, axes[0] if len(axes) == 1 and isinstance(axes[0], list | tuple) else axes or None)
    cls.dimshuffle = basic.dimshuffle
    cls.reshape = lambda self, *shape, ndim=None: basic.reshape(
        self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape, ndim)
    cls.flatten = basic.flatten
    cls.__getitem__ = basic.subtensor
    cls.astype = cast
    cls.clip = lambda self, lo, hi: FUNCTIONS["clip"](self, lo, hi)
    cls.transfer = transfer
    cls.eval = _eval
    cls.zeros_like = basic.zeros_like
    cls.ones_like = basic.ones_like


def _eval(self, inputs_to_values=None):
    """The value of this variable given {input: value} (the function is compiled once per
    set of inputs and kept)."""
    from .function import function
    given = dict(inputs_to_values or {})
    key = tuple(given)
    cache = self.tag.__dict__.setdefault("eval_cache", {})
    fn = cache.get(key)
    if fn is None:
        fn = cache[key] = function(list(key), self, on_unused_input="ignore")
    return fn(*given.values())


_install(Variable)
