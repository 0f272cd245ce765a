"""Products: `Dot22` (matrix by matrix), `Gemv` (matrix by vector) and `Dot` (vector by
vector), host and Gpu classes generated from one table; `TensorDot` (numpy.tensordot) and
`MatMul` (numpy.matmul: batched, broadcasting) above 2-d; and `dot`, `matmul`, `tensordot`
and `batched_dot`, which pick one."""

import functools
import numbers

import numpy as np

from ..errors import ArgumentError, AxisError, ShapeError
from .basic import dimshuffle, reshape, shape_i, transpose
from .graph import Apply, Op, TensorType, as_variable, op_pair

__all__ = [
    "CLASSES", "PRODUCTS", "Dot", "Dot22", "Gemv", "GpuDot", "GpuDot22", "GpuGemv",
    "GpuMatMul", "GpuTensorDot", "MatMul", "TensorDot", "batched_dot", "dot", "matmul",
    "tensordot",
]


@functools.lru_cache(maxsize=256)
def _dot_dtype(a, b):
    return np.dot(np.zeros((1, 1), a), np.zeros((1, 1), b)).dtype


class _Dot(Op):
    """numpy.dot of operands with `ndims` dimensions."""
    replayable = True

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


class _TensorDot(Op):
    """numpy.tensordot over the axes `axes_a` of a and `axes_b` of b (paired in order)."""
    replayable = True

    __props__ = ("axes_a", "axes_b")

    def __init__(self, axes_a, axes_b):
        self.axes_a, self.axes_b = tuple(map(int, axes_a)), tuple(map(int, axes_b))

    def make_node(self, a, b):
        a, b = as_variable(a), as_variable(b)
        free_a = [d for d in range(a.ndim) if d not in self.axes_a]
        free_b = [d for d in range(b.ndim) if d not in self.axes_b]
        bc = [a.broadcastable[d] for d in free_a] + [b.broadcastable[d] for d in free_b]
        return Apply(self, [a, b], [TensorType(_dot_dtype(a.dtype, b.dtype), bc,
                                               self.context_name)])

    def make_fn(self, node, xp, ctx):
        axes = (list(self.axes_a), list(self.axes_b))
        if ctx is None:
            return lambda a, b: np.asarray(np.tensordot(a, b, axes))
        return lambda a, b: xp.tensordot(a, b, axes)

    def grad(self, node, grads):
        (a, b), g = node.inputs, grads[0]
        axes_a, axes_b = self.axes_a, self.axes_b
        free_a = [d for d in range(a.ndim) if d not in axes_a]
        free_b = [d for d in range(b.ndim) if d not in axes_b]
        na = len(free_a)
        # g . b over b's free axes: a's free axes, then b's contracted ones in b's order
        ga = TensorDot(range(na, g.ndim), free_b)(g, b)
        held = free_a + [axes_a[axes_b.index(d)] for d in sorted(axes_b)]
        # a . g over a's free axes: a's contracted ones in a's order, then b's free axes
        gb = TensorDot(free_a, range(na))(a, g)
        gb_held = [axes_b[axes_a.index(d)] for d in sorted(axes_a)] + free_b
        return [dimshuffle(ga, *(held.index(d) for d in range(a.ndim))),
                dimshuffle(gb, *(gb_held.index(d) for d in range(b.ndim)))]


TensorDot, GpuTensorDot = op_pair(_TensorDot, "TensorDot")


class _MatMul(Op):
    """numpy.matmul of operands of 2 or more dimensions: a batch of matrix products,
    the leading (batch) dimensions broadcast."""
    replayable = True

    def make_node(self, a, b):
        a, b = as_variable(a), as_variable(b)
        if a.ndim < 2 or b.ndim < 2:
            raise ArgumentError(f"MatMul takes operands of 2 or more dimensions, got {a.type} "
                                f"and {b.type}")
        n = max(a.ndim, b.ndim) - 2
        pa = (True,) * (n + 2 - a.ndim) + a.broadcastable[:-2]
        pb = (True,) * (n + 2 - b.ndim) + b.broadcastable[:-2]
        bc = [x and y for x, y in zip(pa, pb)] + [a.broadcastable[-2], b.broadcastable[-1]]
        return Apply(self, [a, b], [TensorType(_dot_dtype(a.dtype, b.dtype), bc,
                                               self.context_name)])

    def make_fn(self, node, xp, ctx):
        if ctx is None:
            return lambda a, b: np.asarray(np.matmul(a, b))
        return xp.matmul

    def grad(self, node, grads):
        (a, b), g = node.inputs, grads[0]
        return [MatMul()(g, _swap(b)), MatMul()(_swap(a), g)]  # grad sums the batch


MatMul, GpuMatMul = op_pair(_MatMul, "MatMul")


def _swap(x):
    return dimshuffle(x, *range(x.ndim - 2), x.ndim - 1, x.ndim - 2)


def _axes_list(axes, ndim, what):
    axes = [axes] if isinstance(axes, numbers.Integral) else list(axes)
    for d in axes:
        if not -ndim <= d < max(ndim, 1):
            raise AxisError(f"tensordot: axis {d} of {what} is out of bounds for its "
                            f"{ndim} dimensions")
    found = [int(d) % ndim for d in axes]
    if len(set(found)) != len(found):
        raise ArgumentError(f"tensordot: repeated axis in {axes} of {what}")
    return found


def tensordot(a, b, axes=2):
    """numpy.tensordot: the sum over `axes` (an int n: the last n of a with the first n
    of b; or a pair of axis lists), with gradients."""
    a, b = as_variable(a), as_variable(b)
    if isinstance(axes, numbers.Integral):
        if not 0 <= axes <= min(a.ndim, b.ndim):
            raise ArgumentError(f"tensordot: axes={axes} for operands of {a.ndim} and "
                                f"{b.ndim} dimensions")
        axes_a, axes_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        try:
            spec_a, spec_b = axes
        except (TypeError, ValueError):
            raise ArgumentError(f"tensordot: axes must be an int or a pair of axis lists, "
                                f"got {axes!r}") from None
        axes_a, axes_b = _axes_list(spec_a, a.ndim, "a"), _axes_list(spec_b, b.ndim, "b")
    if len(axes_a) != len(axes_b):
        raise ShapeError(f"tensordot: shape-mismatch for sum: {len(axes_a)} axes of a and "
                         f"{len(axes_b)} of b")
    if a.ndim <= 2 and b.ndim <= 2 and axes_a == [a.ndim - 1] and axes_b == [0]:
        return dot(a, b)
    return TensorDot(axes_a, axes_b)(a, b)


def dot(a, b):
    """numpy.dot: scalars multiply; vectors and matrices use Dot, Gemv (a vector by a
    matrix is a Gemv of the transposed matrix) or Dot22; above 2-d a TensorDot over the
    last axis of a and the second-to-last of b."""
    a, b = as_variable(a), as_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.ndim > 2 or b.ndim > 2:
        return TensorDot([a.ndim - 1], [max(b.ndim - 2, 0)])(a, b)
    if (a.ndim, b.ndim) == (1, 2):
        return Gemv()(transpose(b), a)
    return CLASSES[(a.ndim, b.ndim)][0]()(a, b)


def matmul(a, b):
    """numpy.matmul (a @ b): vectors and matrices as dot; above 2-d a batch of matrix
    products with broadcast batch dimensions (MatMul). 0-d operands are refused."""
    a, b = as_variable(a), as_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ArgumentError("matmul: input operand does not have enough dimensions (0-d "
                            "operands: use multiply)")
    if a.ndim <= 2 and b.ndim <= 2:
        return dot(a, b)
    if a.ndim == 1:
        return dimshuffle(MatMul()(dimshuffle(a, "x", 0), b), *range(b.ndim - 2), b.ndim - 1)
    if b.ndim == 1:
        return dimshuffle(MatMul()(a, dimshuffle(b, 0, "x")), *range(a.ndim - 1))
    return MatMul()(a, b)


def batched_dot(a, b):
    """Theano's batched_dot: dot(a[i], b[i]) for each i of the first (batch) dimension,
    by operands of 2 or more dimensions (a sum over a's last axis and b's second, or
    b's only one after the batch)."""
    a, b = as_variable(a), as_variable(b)
    if a.ndim < 2 or b.ndim < 2:
        raise ArgumentError(f"batched_dot takes operands of 2 or more dimensions (a batch "
                            f"of vectors or more), got {a.type} and {b.type}")
    if a.ndim == 2 and b.ndim == 2:
        return (a * b).sum(axis=1)
    # a as (batch, rows, k), b as (batch, k, cols); the result back to a's and b's sizes
    a3 = reshape(a, (shape_i(a, 0), -1, shape_i(a, -1))) if a.ndim > 3 else (
        dimshuffle(a, 0, "x", 1) if a.ndim == 2 else a)
    b3 = reshape(b, (shape_i(b, 0), shape_i(b, 1), -1)) if b.ndim > 3 else (
        dimshuffle(b, 0, 1, "x") if b.ndim == 2 else b)
    out = MatMul()(a3, b3)
    sizes = [shape_i(a, 0), *(shape_i(a, d) for d in range(1, a.ndim - 1)),
             *(shape_i(b, d) for d in range(2, b.ndim))]
    if a.ndim == 3 and b.ndim == 3:
        return out
    return reshape(out, sizes)
