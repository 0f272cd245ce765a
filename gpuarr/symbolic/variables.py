"""The variables users hold: their methods and operators, and the constructors (T.vector,
T.fmatrix, ...).

The methods need the ops and `function`, so the classes carrying them are declared here, at
the top of gpuarr.symbolic: TensorVariable, TensorConstant and TensorSharedVariable, each
VariableMethods over a record class of graph.py or shared.py, which they register with
(`concrete_for=`): constructing a Variable, Constant or SharedVariable builds them.
"""

from ..dtypes import float_x
from ..ufuncs import _BINARY_OPERATORS, _COMPARISONS, _UNARY_OPERATORS
from .basic import Size, dimshuffle, flatten, ones_like, subtensor, vector_length, zeros_like
from .basic import reshape as _reshape
from .basic import shape as _shape
from .basic import transpose as _transpose
from .blas import dot, matmul
from .elemwise import FUNCTIONS, apply_ufunc, cast
from .function import function
from .graph import Constant, TensorType, Variable
from .reductions import FUNCTIONS_R
from .shared import SharedVariable
from .transfer import transfer

__all__ = ["CONSTRUCTORS", "TensorConstant", "TensorSharedVariable", "TensorVariable",
           "VariableMethods", "tensor"]

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

_OPERATORS = {**dict(_BINARY_OPERATORS), **dict(_UNARY_OPERATORS), **dict(_COMPARISONS)}


def _binary(dunder):
    """x op y and y op x as the op of gpuarr's operator table; x op= y too (a new variable,
    never in place)."""
    fn = FUNCTIONS[_OPERATORS[dunder]]

    def op(self, other):
        return fn(self, other)

    def rop(self, other):
        return fn(other, self)
    return op, rop, op


class VariableMethods:
    """Operators (gpuarr's operator table: `x + y` is T.add(x, y); == and != stay identity,
    variables being dict keys; T.eq compares values), reductions, shape methods, eval.
    `x.shape` is a symbolic int64 vector (`x.shape[0]` a scalar), `x.size` a scalar."""

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

    __neg__ = FUNCTIONS[_OPERATORS["neg"]]
    __pos__ = FUNCTIONS[_OPERATORS["pos"]]
    __abs__ = FUNCTIONS[_OPERATORS["abs"]]
    __invert__ = FUNCTIONS[_OPERATORS["invert"]]

    __lt__ = _binary("lt")[0]
    __le__ = _binary("le")[0]
    __gt__ = _binary("gt")[0]
    __ge__ = _binary("ge")[0]

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def record(self, ufunc, args):
        """gpuarr's ufuncs (ga.exp(x), np.exp(x)) hand symbolic operands to us."""
        return apply_ufunc(ufunc.name, args)

    sum = FUNCTIONS_R["sum"]
    prod = FUNCTIONS_R["prod"]
    max = FUNCTIONS_R["max"]
    min = FUNCTIONS_R["min"]
    any = FUNCTIONS_R["any"]
    all = FUNCTIONS_R["all"]
    argmax = FUNCTIONS_R["argmax"]
    argmin = FUNCTIONS_R["argmin"]
    mean = FUNCTIONS_R["mean"]
    var = FUNCTIONS_R["var"]
    std = FUNCTIONS_R["std"]

    dot = dot
    T = property(_transpose)
    shape = property(_shape, doc="the symbolic shape: an int64 vector; x.shape[i] a scalar")

    def __iter__(self):
        """The entries of a vector of known length: `rows, cols = x.shape`."""
        n = vector_length(self)
        if n is None:
            return Variable.__iter__(self)
        return (self[k] for k in range(n))
    size = property(lambda self: Size()(self), doc="the number of elements: an int64 scalar")

    def transpose(self, *axes):
        return _transpose(self, axes[0] if len(axes) == 1 and isinstance(axes[0], list | tuple)
                          else axes or None)

    dimshuffle = dimshuffle

    def reshape(self, *shape, ndim=None):
        return _reshape(self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int)
                        else shape, ndim)

    flatten = flatten
    __getitem__ = subtensor
    astype = cast

    def clip(self, lo, hi):
        return FUNCTIONS["clip"](self, lo, hi)

    transfer = transfer

    def eval(self, inputs_to_values=None):
        """The value of this variable given {input: value} (the function is compiled once
        per set of inputs and kept)."""
        given = dict(inputs_to_values or {})
        key = tuple(given)
        cache = self.tag.__dict__.setdefault("eval_cache", {})
        fn = cache.get(key)
        if fn is None:
            fn = cache[key] = function(list(key), self, on_unused_input="ignore")
        return fn(*given.values())

    zeros_like = zeros_like
    ones_like = ones_like


class TensorVariable(VariableMethods, Variable, concrete_for=Variable):
    """A variable (what `Variable(...)`, TensorType(...)(name) and ops' outputs build)."""


class TensorConstant(VariableMethods, Constant, concrete_for=Constant):
    """A constant (what `Constant(...)` and as_variable build)."""


class TensorSharedVariable(VariableMethods, SharedVariable, concrete_for=SharedVariable):
    """A shared variable (what `SharedVariable(...)` and T.shared build)."""
