"""Products: `Dot22` (matrix by matrix), `Gemv` (matrix by vector) and `Dot` (vector by
vector), host and Gpu classes generated from one table, and `dot`, which picks one."""

import functools

import numpy as np

from ..errors import ArgumentError, UnsupportedError
from .basic import dimshuffle, transpose
from .graph import Apply, Op, TensorType, as_variable, op_pair

__all__ = [
    "CLASSES", "PRODUCTS", "Dot", "Dot22", "Gemv", "GpuDot", "GpuDot22", "GpuGemv", "dot",
    "matmul",
]


@functools.lru_cache(maxsize=256)
def _dot_dtype(a, b):
    return np.dot(np.zeros((1, 1), a), np.zeros((1, 1), b)).dtype


class _Dot(Op):
    """numpy.dot of operands with `ndims` dimensions."""

    ndims = None

    def make_node(self, a, b):
        a, b = as_variable(a), as_variable(b)
        if (a.ndim, b.ndim) != self.ndims:
            raise ArgumentError(f"{type(self).__name__} takes operands of "
                                f"{self.ndims[0]} and {self.ndims[1]} dimensions, got "
                                f"{a.type} and {b.type}")
        bc = a.broadcastable[:-1] + b.broadcastable[1:]
        return Apply(self, [a, b], [TensorType(_dot_dtype(a.dtype, b.dtype), bc,
                                               self.context_name)])

    def make_fn(self, node, xp, ctx):
        if ctx is None:
            return lambda a, b: np.asarray(np.dot(a, b))
        return xp.dot

    def grad(self, node, grads):
        (a, b), g = node.inputs, grads[0]
        if self.ndims == (2, 2):
            return [dot(g, transpose(b)), dot(transpose(a), g)]
        if self.ndims == (2, 1):
            return [dimshuffle(g, 0, "x") * dimshuffle(b, "x", 0), dot(transpose(a), g)]
        return [g * b, g * a]


PRODUCTS = {"Dot22": (2, 2), "Gemv": (2, 1), "Dot": (1, 1)}
CLASSES = {}
for _name, _ndims in PRODUCTS.items():
    _impl = type(f"_{_name}", (_Dot,), {"ndims": _ndims, "__module__": __name__,
                                        "__doc__": _Dot.__doc__})
    CLASSES[_ndims] = op_pair(_impl, _name)
Dot22, GpuDot22 = CLASSES[(2, 2)]
Gemv, GpuGemv = CLASSES[(2, 1)]
Dot, GpuDot = CLASSES[(1, 1)]


def dot(a, b):
    """numpy.dot of scalars, vectors and matrices (a vector by a matrix is a Gemv of the
    transposed matrix)."""
    a, b = as_variable(a), as_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.ndim > 2 or b.ndim > 2:
        raise UnsupportedError(f"dot of {a.type} and {b.type}: operands of more than 2 "
                               f"dimensions are not supported; reshape them to matrices")
    if (a.ndim, b.ndim) == (1, 2):
        return Gemv()(transpose(b), a)
    return CLASSES[(a.ndim, b.ndim)][0]()(a, b)


def matmul(a, b):
    """a @ b for vectors and matrices (numpy.matmul; 0-d operands are refused)."""
    a, b = as_variable(a), as_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ArgumentError("matmul: input operand does not have enough dimensions (0-d "
                            "operands: use multiply)")
    return dot(a, b)
