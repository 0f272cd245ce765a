"""Reductions: `CAReduce` / `GpuCAReduce` over a table of numpy/gpuarr reductions, and
mean, var and std as graphs of them (so their gradients and fusion come for free)."""

import functools
import numbers

import numpy as np

from ..errors import ArgumentError, AxisError
from .basic import BroadcastLike, Size, dimshuffle
from .elemwise import FUNCTIONS, cast
from .graph import Apply, Op, TensorType, as_variable, op_pair

__all__ = [
    "FUNCTIONS_R", "REDUCTIONS", "CAReduce", "GpuCAReduce", "mean", "normalize_axis", "std", "var",
]

# name -> True when its output is piecewise constant (no gradient)
REDUCTIONS = {"sum": False, "prod": False, "max": False, "min": False, "any": True,
              "all": True, "argmax": True, "argmin": True}


@functools.lru_cache(maxsize=256)
def _result_dtype(name, dtype):
    return np.asarray(getattr(np, name)(np.zeros(1, dtype))).dtype


def normalize_axis(axis, ndim, single=False):
    """None or a sorted tuple of axes in range (numpy's AxisError otherwise)."""
    if axis is None:
        return None
    if single and not isinstance(axis, numbers.Integral):
        raise ArgumentError(f"expected a single axis or None, got {axis!r}")
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    found = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise AxisError(f"axis {a} is out of bounds for array of dimension {ndim}")
        found.append(int(a) % max(ndim, 1))
    if len(set(found)) != len(found):
        raise ArgumentError(f"duplicate value in 'axis': {axis!r}")
    return found[0] if single else tuple(sorted(found))


def _reduced(axis, ndim):
    return tuple(range(ndim)) if axis is None else (axis,) if isinstance(axis, int) else axis


class _CAReduce(Op):
    """numpy's reduction `name` over `axis` (None: all), numpy's result dtypes."""
    replayable = True

    __props__ = ("name", "axis", "keepdims")

    def __init__(self, name, axis=None, keepdims=False):
        self.name, self.axis, self.keepdims = name, axis, bool(keepdims)

    def _describe(self):
        axis = "" if self.axis is None else f", axis={self.axis}"
        return f"{self.name}{axis}{', keepdims' if self.keepdims else ''}"

    def make_node(self, x):
        x = as_variable(x)
        axes = _reduced(self.axis, x.ndim)
        bc = [True if d in axes else b for d, b in enumerate(x.broadcastable)
              if self.keepdims or d not in axes]
        dt = _result_dtype(self.name, x.dtype)
        return Apply(self, [x], [TensorType(dt, bc, self.context_name)])

    def make_fn(self, node, xp, ctx):
        f, axis, keepdims = getattr(xp, self.name), self.axis, self.keepdims
        if ctx is None:
            return lambda x: np.asarray(f(x, axis=axis, keepdims=keepdims))
        return lambda x: f(x, axis=axis, keepdims=keepdims)

    def differentiable(self, node):
        return not REDUCTIONS[self.name]

    def grad(self, node, grads):
        x, out, g = node.inputs[0], node.outputs[0], grads[0]
        if self.name == "sum" and g.ndim == 0:  # a scalar broadcasts as it is
            return [BroadcastLike()(g, x)]
        if not self.keepdims:
            axes = _reduced(self.axis, x.ndim)
            order, k = [], 0
            for d in range(x.ndim):
                order.append("x" if d in axes else k)
                k += d not in axes
            out, g = dimshuffle(out, *order), dimshuffle(g, *order)
        if self.name == "sum":
            return [BroadcastLike()(g, x)]
        if self.name == "prod":
            return [g * out / x]
        return [g * FUNCTIONS["equal"](x, out)]  # max, min: every tied element


CAReduce, GpuCAReduce = op_pair(_CAReduce, "CAReduce")


def _reduction(name):
    single = name.startswith("arg")

    def fn(x, axis=None, keepdims=False, dtype=None):
        x = as_variable(x)
        if dtype is not None:
            x = cast(x, dtype)
        return CAReduce(name, normalize_axis(axis, x.ndim, single), keepdims)(x)
    fn.__name__ = name
    fn.__doc__ = f"numpy.{name} over `axis` (None: all)."
    return fn


FUNCTIONS_R = {name: _reduction(name) for name in REDUCTIONS}


@functools.lru_cache(maxsize=256)
def _mean_dtypes(dtype, requested):
    res = np.mean(np.zeros(1, dtype), dtype=requested).dtype
    return (np.dtype(np.float32) if res == np.float16 else res), res


def _count(x, axes, dtype):
    """The number of elements reduced, as `dtype` (computed on the host from x's shape)."""
    return cast(Size(axes)(x), dtype)


def mean(x, axis=None, dtype=None, keepdims=False):
    """numpy.mean: sum / count in numpy's accumulator (ints in float64, float16 in float32)."""
    x = as_variable(x)
    acc, res = _mean_dtypes(x.dtype, None if dtype is None else np.dtype(dtype))
    axes = normalize_axis(axis, x.ndim)
    total = CAReduce("sum", axes, keepdims)(cast(x, acc))
    return cast(total / _count(x, axes, acc), res)


def var(x, axis=None, ddof=0, keepdims=False, dtype=None):
    """numpy.var: the mean of squared deviations over (count - ddof)."""
    x = as_variable(x)
    acc, res = _mean_dtypes(x.dtype, None if dtype is None else np.dtype(dtype))
    axes = normalize_axis(axis, x.ndim)
    xs = cast(x, acc)
    d = xs - mean(xs, axes, keepdims=True)
    total = CAReduce("sum", axes, keepdims)(d * d)
    return cast(total / (_count(x, axes, acc) - ddof), res)


def std(x, axis=None, ddof=0, keepdims=False, dtype=None):
    """numpy.std: sqrt(var)."""
    return FUNCTIONS["sqrt"](var(x, axis, ddof, keepdims, dtype))


FUNCTIONS_R.update(mean=mean, var=var, std=std)
