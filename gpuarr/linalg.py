"""The Array API's linalg extension (and numpy.linalg's names) over gpuarr's kernels.

Products come from blas, norms from the reductions, diagonals from views: matmul,
matrix_transpose, vecdot, tensordot, outer, cross, diagonal, trace, matrix_power (n >= 0),
vector_norm, matrix_norm (fro, 1, -1, inf, -inf) and numpy's norm. Matrix factorizations
(inv, solve, svd, cholesky, qr, eigh, det, ...) are not there yet: their names raise
UnsupportedError (NOT_YET; docs/array_api.md keeps the same list).
"""

import math
import numbers
import operator

import numpy as np

from . import blas, manipulation, reduction
from .array_api import _pair, matrix_transpose, vecdot
from .base import asarray, broadcast_to
from .errors import ArgumentError, ArgumentTypeError, ShapeError, UnsupportedError
from .ufuncs import UFUNCS, broadcast_shapes

NOT_YET = ("cholesky", "det", "eigh", "eigvalsh", "inv", "matrix_rank", "pinv", "qr",
           "slogdet", "solve", "svd", "svdvals")



def matmul(x1, x2, /):
    return blas.matmul(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    return blas.tensordot(x1, x2, axes)


def outer(x1, x2, /):
    """The outer product of two 1-d arrays."""
    a, b = _pair(x1, x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"outer needs two 1-d arrays, got shapes {a.shape} and {b.shape}")
    return blas.outer(a, b)


def diagonal(x, /, *, offset=0):
    """A read-only view of the `offset` diagonal of each matrix (the last two axes)."""
    return manipulation.diagonal(_matrices(x, "diagonal"), offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    """The sum of the `offset` diagonal of each matrix (the last two axes)."""
    return manipulation.trace(_matrices(x, "trace"), offset, -2, -1, dtype)


def _matrices(x, name):
    x = asarray(x)
    if x.ndim < 2:
        raise ShapeError(f"{name} needs an array of at least 2 dimensions, got shape {x.shape}")
    return x


def cross(x1, x2, /, *, axis=-1):
    """Cross products of 3-vectors along `axis` (other axes broadcast)."""
    a, b = _pair(x1, x2)
    ndim = len(broadcast_shapes(a.shape, b.shape))
    for x in (a, b):
        if x.ndim == 0 or not -x.ndim <= axis < x.ndim or x.shape[axis] != 3:
            raise ShapeError(f"cross needs vectors of 3 elements along axis {axis}; got shapes "
                             f"{a.shape} and {b.shape}")
    a = manipulation.moveaxis(a, axis, -1)
    b = manipulation.moveaxis(b, axis, -1)
    mul, sub = UFUNCS["multiply"], UFUNCS["subtract"]
    parts = [sub(mul(a[..., i], b[..., j]), mul(a[..., j], b[..., i]))
             for i, j in ((1, 2), (2, 0), (0, 1))]
    return manipulation.moveaxis(manipulation.stack(parts, axis=-1), -1, axis % ndim)


def matrix_power(a, n):
    """a @ a @ ... (n times; n = 0 gives identities) by repeated squaring. Negative n needs
    an inverse, which gpuarr does not compute yet."""
    x = _matrices(a, "matrix_power")
    try:
        n = operator.index(n)
    except TypeError:
        raise ArgumentTypeError(f"matrix_power: exponent must be an integer, not {n!r}") from None
    if x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"matrix_power needs square matrices, got shape {x.shape}")
    if n < 0:
        raise UnsupportedError(f"matrix_power(a, {n}) needs an inverse, which gpuarr does not "
                               f"compute yet; use n >= 0 or numpy.linalg on the host")
    if n == 0:
        eye = manipulation.eye(x.shape[-1], dtype=x.dtype, context=x.context)
        return broadcast_to(eye, x.shape).copy()
    result, square = None, x
    while True:
        if n & 1:
            result = square if result is None else blas.matmul(result, square)
        n >>= 1
        if not n:
            return result.copy() if result is x else result
        square = blas.matmul(square, square)


def _inexact(x):
    """Norms compute in floating point: integers and bools as float64 (as numpy), float32 on a
    device without float64."""
    if x.dtype.kind in "fc":
        return x
    return x.astype(np.float64 if x.context.fp64 else np.float32)


def _squares(x):
    """|x|^2, real."""
    if x.dtype.kind == "c":
        x = UFUNCS["absolute"](x)
    return UFUNCS["multiply"](x, x)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The `ord`-norm of the vectors along `axis` (all axes when None): inf (max |x|), -inf
    (min), 0 (count of nonzeros), 1, 2 and any other p (sum |x|^p)^(1/p)."""
    x = _inexact(asarray(x))
    if ord == 2:
        return UFUNCS["sqrt"](reduction.sum(_squares(x), axis, keepdims=keepdims))
    if ord == 0:
        count = reduction.count_nonzero(x, axis, keepdims)
        return count.astype(_real(x.dtype))
    if not isinstance(ord, numbers.Real):
        raise ArgumentError(f"vector_norm: invalid order {ord!r}; use a number, inf or -inf")
    a = UFUNCS["absolute"](x)
    if ord == math.inf:
        return reduction.max(a, axis, keepdims=keepdims)
    if ord == -math.inf:
        return reduction.min(a, axis, keepdims=keepdims)
    if ord == 1:
        return reduction.sum(a, axis, keepdims=keepdims)
    total = reduction.sum(UFUNCS["power"](a, float(ord)), axis, keepdims=keepdims)
    return UFUNCS["power"](total, 1.0 / ord)


def _real(dt):
    return np.dtype(np.float32 if dt == np.complex64 else np.float64 if dt.kind == "c" else dt)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The `ord`-norm of each matrix (the last two axes): 'fro', 1 / -1 (max / min column
    sum of |x|), inf / -inf (max / min row sum). 'nuc', 2 and -2 need singular values, which
    gpuarr does not compute yet."""
    x = _inexact(_matrices(x, "matrix_norm"))
    if isinstance(ord, str) and ord == "fro":
        return UFUNCS["sqrt"](reduction.sum(_squares(x), (-2, -1), keepdims=keepdims))
    if (isinstance(ord, str) and ord == "nuc") or ord in (2, -2):
        raise UnsupportedError(f"matrix_norm(ord={ord!r}) needs singular values, which gpuarr "
                               f"does not compute yet; use 'fro', 1, -1, inf or -inf, or "
                               f"numpy.linalg.matrix_norm on the host")
    if isinstance(ord, str) or ord not in (1, -1, math.inf, -math.inf):
        raise ArgumentError(f"matrix_norm: invalid order {ord!r}; use 'fro', 'nuc', 1, -1, 2, "
                            f"-2, inf or -inf")
    # 1: max over columns of the column sums; inf: max over rows of the row sums
    summed, other = (-2, -1) if abs(ord) == 1 else (-1, -2)
    sums = reduction.sum(UFUNCS["absolute"](x), summed, keepdims=True)
    pick = reduction.max if ord > 0 else reduction.min
    result = pick(sums, other, keepdims=True)
    return result if keepdims else result.reshape(result.shape[:-2])


def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: vector norms along one axis, matrix norms over two, the 2-norm of
    the flattened array when neither `ord` nor `axis` is given."""
    x = asarray(x)
    if axis is None:
        if ord is None:
            return vector_norm(x, keepdims=keepdims)
        if x.ndim not in (1, 2):
            raise ArgumentError(f"Improper number of dimensions to norm: {x.ndim} (with ord="
                                f"{ord!r} and no axis)")
        axis = tuple(range(x.ndim))
    axes = axis if isinstance(axis, tuple | list) else (axis,)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ArgumentError(f"Invalid norm order {ord!r} for vectors")
        return vector_norm(x, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) != 2:
        raise ArgumentError(f"Improper number of dimensions to norm: axis={axis!r}")
    moved = manipulation.moveaxis(x, tuple(axes), (-2, -1))
    result = matrix_norm(moved, keepdims=True, ord="fro" if ord is None else ord)
    if keepdims:
        return manipulation.moveaxis(result, (-2, -1), tuple(axes))
    return result.reshape(result.shape[:-2])


def _not_yet(name):
    def fn(*args, **kwargs):
        raise UnsupportedError(f"gpuarr.linalg.{name} is not implemented yet (gpuarr has no "
                               f"matrix factorizations); compute it on the host: "
                               f"numpy.linalg.{name}(x.get())")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = "Not implemented yet: raises UnsupportedError (docs/array_api.md)."
    fn.not_implemented = True
    return fn


cholesky = _not_yet("cholesky")
det = _not_yet("det")
eigh = _not_yet("eigh")
eigvalsh = _not_yet("eigvalsh")
inv = _not_yet("inv")
matrix_rank = _not_yet("matrix_rank")
pinv = _not_yet("pinv")
qr = _not_yet("qr")
slogdet = _not_yet("slogdet")
solve = _not_yet("solve")
svd = _not_yet("svd")
svdvals = _not_yet("svdvals")

__all__ = ["cross", "diagonal", "matmul", "matrix_norm", "matrix_power", "matrix_transpose",
           "norm", "outer", "tensordot", "trace", "vecdot", "vector_norm", *NOT_YET]
