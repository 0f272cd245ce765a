"""Structural ops (views and copies): dimshuffle, reshape, basic indexing and its
increments, broadcasting to another value's shape, copies, and the element count of axes.

Each op computes with the same array methods on numpy arrays and GpuArrays, so one
implementation gives both classes (`op_pair`).
"""

import math
import numbers

import numpy as np

from ..array import GpuArray
from ..errors import ArgumentError, IndexOutOfRange, UnsupportedError
from .graph import Apply, Constant, HostOp, Op, TensorType, as_variable, op_pair

__all__ = [
    "BroadcastLike", "DeepCopyOp", "DimShuffle", "GpuBroadcastLike", "GpuDeepCopyOp",
    "GpuDimShuffle", "GpuIncSubtensor", "GpuReshape", "GpuSubtensor", "IncSubtensor", "Reshape",
    "Size", "Subtensor", "dimshuffle", "fill", "flatten", "inc_subtensor", "ones_like",
    "parse_key", "reshape", "set_subtensor", "subtensor", "transpose", "zeros_like",
]


def _out(op, dtype, broadcastable):
    return TensorType(dtype, broadcastable, op.context_name)


# ---------------------------------------------------------------- dimshuffle

class _DimShuffle(Op):
    """Permute dimensions, insert broadcastable ones ('x'), drop broadcastable ones: a view."""

    __props__ = ("input_broadcastable", "new_order")
    view = True

    def __init__(self, input_broadcastable, new_order):
        ib, order = tuple(input_broadcastable), tuple(new_order)
        ndim = len(ib)
        for e in order:
            if e != "x" and not (isinstance(e, numbers.Integral) and 0 <= e < ndim):
                raise ArgumentError(f"dimshuffle{order}: {e!r} is not a dimension of a "
                                    f"{ndim}-d input; use 0..{ndim - 1} or 'x'")
        kept = [int(e) for e in order if e != "x"]
        if len(set(kept)) != len(kept):
            raise ArgumentError(f"dimshuffle{order}: a dimension appears twice")
        dropped = [d for d in range(ndim) if d not in kept]
        for d in dropped:
            if not ib[d]:
                raise ArgumentError(f"dimshuffle{order}: cannot drop dimension {d}, which is "
                                    f"not broadcastable (input pattern {ib})")
        self.input_broadcastable = ib
        self.new_order = tuple(e if e == "x" else int(e) for e in order)
        self._perm = tuple(kept + dropped)
        self._key = tuple(None if e == "x" else slice(None) for e in order) + (0,) * len(dropped)

    def _describe(self):
        return ",".join(str(e) for e in self.new_order)

    def make_node(self, x):
        x = as_variable(x)
        if x.ndim != len(self.input_broadcastable):
            raise ArgumentError(f"dimshuffle{self.new_order} takes a "
                                f"{len(self.input_broadcastable)}-d input, got {x.type}")
        bc = [True if e == "x" else x.broadcastable[e] for e in self.new_order]
        return Apply(self, [x], [_out(self, x.dtype, bc)])

    def make_fn(self, node, xp, ctx):
        perm, key = self._perm, self._key
        if perm == tuple(range(len(perm))):
            if all(k == slice(None) for k in key):
                return lambda x: x
            return lambda x: x[key]
        if all(k == slice(None) for k in key):
            return lambda x: x.transpose(perm)
        return lambda x: x.transpose(perm)[key]

    def grad(self, node, grads):
        order = self.new_order
        back = [order.index(d) if d in order else "x" for d in range(node.inputs[0].ndim)]
        return [dimshuffle(grads[0], *back)]


DimShuffle, GpuDimShuffle = op_pair(_DimShuffle, "DimShuffle")


def dimshuffle(x, *pattern):
    """Theano's dimshuffle: x.dimshuffle(1, 0), x.dimshuffle('x', 0)."""
    x = as_variable(x)
    if len(pattern) == 1 and isinstance(pattern[0], list | tuple):
        pattern = tuple(pattern[0])
    if tuple(pattern) == tuple(range(x.ndim)):
        return x
    return DimShuffle(x.broadcastable, pattern)(x)


def transpose(x, axes=None):
    """`x` with its axes reversed, or permuted as `axes` says (a dimshuffle, no copy)."""
    x = as_variable(x)
    axes = tuple(range(x.ndim))[::-1] if axes is None else tuple(a % x.ndim for a in axes)
    return dimshuffle(x, *axes)


# ---------------------------------------------------------------- reshape

class _Reshape(Op):
    """x with a new shape (ints, one -1, or ('dim', d) for x's dimension d; None: the
    shape of the second input): a view when the layout allows, else a copy, as numpy."""

    __props__ = ("shape",)
    view = True
    shape_only = (1,)

    def __init__(self, shape):
        if shape is not None:
            shape = tuple(e if isinstance(e, tuple) else int(e) for e in shape)
            if sum(e == -1 for e in shape) > 1:
                raise ArgumentError(f"reshape{shape}: can only specify one unknown dimension")
            if any(not isinstance(e, tuple) and e < -1 for e in shape):
                raise ArgumentError(f"reshape{shape}: negative dimensions are not allowed")
        self.shape = shape

    def _describe(self):
        return "like" if self.shape is None else ",".join(
            f"x.shape[{e[1]}]" if isinstance(e, tuple) else str(e) for e in self.shape)

    def make_node(self, x, like=None):
        x = as_variable(x)
        if self.shape is None:
            like = as_variable(like)
            return Apply(self, [x, like], [_out(self, x.dtype, like.broadcastable)])
        bc = []
        for e in self.shape:
            if isinstance(e, tuple):
                if not 0 <= e[1] < x.ndim:
                    raise ArgumentError(f"reshape: x.shape[{e[1]}] of a {x.ndim}-d input")
                bc.append(x.broadcastable[e[1]])
            else:
                bc.append(e == 1)
        return Apply(self, [x], [_out(self, x.dtype, bc)])

    def make_fn(self, node, xp, ctx):
        shape = self.shape
        if shape is None:
            return lambda x, like: x.reshape(like.shape)
        if not any(isinstance(e, tuple) for e in shape):
            return lambda x: x.reshape(shape)
        return lambda x: x.reshape(tuple(x.shape[e[1]] if isinstance(e, tuple) else e
                                         for e in shape))

    def grad(self, node, grads):
        return [Reshape(None)(grads[0], node.inputs[0])] + [None] * (len(node.inputs) - 1)


Reshape, GpuReshape = op_pair(_Reshape, "Reshape")


def reshape(x, shape, ndim=None):
    """`x` reshaped to `shape`: ints and at most one -1 (symbolic sizes are not
    supported); `ndim`, as in Theano, must equal len(shape) when given."""
    x = as_variable(x)
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    shape = tuple(shape)
    for e in shape:
        if not isinstance(e, numbers.Integral | tuple):
            raise UnsupportedError(f"reshape to {shape}: symbolic sizes are not supported; "
                                   f"give ints, -1, or x.flatten(ndim)")
    if ndim is not None and ndim != len(shape):
        raise ArgumentError(f"reshape: ndim={ndim} but the shape {shape} has {len(shape)}")
    return Reshape(shape)(x)


def flatten(x, ndim=1):
    """x with its trailing dimensions merged so that it has `ndim` dimensions."""
    x = as_variable(x)
    if not 1 <= ndim <= max(x.ndim, 1):
        raise ArgumentError(f"flatten: ndim={ndim} for a {x.ndim}-d input")
    return Reshape((*(("dim", d) for d in range(ndim - 1)), -1))(x)


# ---------------------------------------------------------------- basic indexing

def _entry(v, index_vars):
    if v is None:
        return None
    if isinstance(v, bool | np.bool_):
        raise UnsupportedError("boolean indices are advanced indexing, which gpuarr.symbolic "
                               "leaves out; use T.switch")
    if isinstance(v, numbers.Integral):
        return int(v)
    v = as_variable(v)
    if v.ndim == 0 and v.dtype.kind in "iu":
        if isinstance(v, Constant):
            return int(v.host_data)
        if v not in index_vars:
            index_vars.append(v)
        return ("v", index_vars.index(v))
    raise UnsupportedError(f"index {v} ({v.type}) is not supported: gpuarr.symbolic takes "
                           f"integers, integer scalars and slices (advanced indexing is left out)")


def parse_key(ndim, key):
    """(template, index variables) of a basic-indexing key: ints and symbolic integer
    scalars, slices of them, None and one Ellipsis."""
    key = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexOutOfRange("an index can only have a single ellipsis ('...')")
    used = sum(k is not None and k is not Ellipsis for k in key)
    if used > ndim:
        raise IndexOutOfRange(f"too many indices for array: array is {ndim}-dimensional, "
                              f"but {used} were indexed")
    index_vars, template = [], []
    for k in key:
        if k is Ellipsis:
            template += [("s", None, None, None)] * (ndim - used)
        elif k is None:
            template.append(("n",))
        elif isinstance(k, slice):
            template.append(("s", *(_entry(e, index_vars) for e in (k.start, k.stop, k.step))))
        else:
            template.append(_entry(k, index_vars))
    return tuple(template), index_vars


def _key_builder(template):
    """idx values -> the numpy key; the key itself when the template has no variables."""
    def value(e, idx):
        return int(idx[e[1]]) if isinstance(e, tuple) else e

    def build(idx):
        key = []
        for e in template:
            if isinstance(e, tuple) and e[0] == "s":
                key.append(slice(*(value(p, idx) for p in e[1:])))
            elif isinstance(e, tuple) and e[0] == "n":
                key.append(None)
            else:
                key.append(value(e, idx))
        return (*key, Ellipsis)
    if not _index_count(template):
        fixed = build(())
        return lambda idx: fixed
    return build


def _describe_key(template):
    def show(e):
        return "" if e is None else f"i{e[1]}" if isinstance(e, tuple) else str(e)
    parts = []
    for e in template:
        if isinstance(e, tuple) and e[0] == "s":
            parts.append(":".join(show(p) for p in e[1:]).rstrip(":") or ":")
        elif isinstance(e, tuple) and e[0] == "n":
            parts.append("None")
        else:
            parts.append(show(e))
    return ", ".join(parts)


def _index_count(template):
    return 1 + max((e[1] for e in _walk(template) if isinstance(e, tuple) and e[0] == "v"),
                   default=-1)


def _walk(template):
    for e in template:
        if isinstance(e, tuple) and e[0] == "s":
            yield from e[1:]
        else:
            yield e


class _Subtensor(Op):
    """x[key] for a basic-indexing key (ints, symbolic int scalars, slices): a view."""

    __props__ = ("template",)
    view = True

    def __init__(self, template):
        self.template = template
        self.host_inputs = tuple(range(1, 1 + _index_count(template)))

    def _describe(self):
        return _describe_key(self.template)

    def make_node(self, x, *idx):
        x = as_variable(x)
        bc, dim = [], 0
        for e in self.template:
            if isinstance(e, tuple) and e[0] == "n":
                bc.append(True)
                continue
            if isinstance(e, tuple) and e[0] == "s":
                bc.append(x.broadcastable[dim] and e[1:] == (None, None, None))
            dim += 1
        bc += x.broadcastable[dim:]
        return Apply(self, [x, *map(as_variable, idx)], [_out(self, x.dtype, bc)])

    def make_fn(self, node, xp, ctx):
        build = _key_builder(self.template)
        return lambda x, *idx: x[build(idx)]

    def grad(self, node, grads):
        x, idx = node.inputs[0], node.inputs[1:]
        zeros = zeros_like(x, grads[0].dtype)
        return [IncSubtensor(self.template, True)(zeros, grads[0], *idx)] + [None] * len(idx)


Subtensor, GpuSubtensor = op_pair(_Subtensor, "Subtensor")


def subtensor(x, key):
    x = as_variable(x)
    template, index_vars = parse_key(x.ndim, key)
    if all(e == ("s", None, None, None) for e in template):
        return x
    return Subtensor(template)(x, *index_vars)


class _IncSubtensor(Op):
    """A copy of x with x[key] incremented by y (or set to y)."""

    __props__ = ("template", "set_instead_of_inc")
    host_scalars = (1,)

    def __init__(self, template, set_instead_of_inc=False):
        self.template = template
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.host_inputs = tuple(range(2, 2 + _index_count(template)))

    def _describe(self):
        return f"{'set' if self.set_instead_of_inc else 'inc'} {_describe_key(self.template)}"

    def make_node(self, x, y, *idx):
        x, y = as_variable(x), as_variable(y)
        return Apply(self, [x, y, *map(as_variable, idx)],
                     [_out(self, x.dtype, x.broadcastable)])

    def make_fn(self, node, xp, ctx):
        build, assign = _key_builder(self.template), self.set_instead_of_inc

        def fn(x, y, *idx):
            out = x.copy()
            key = build(idx)
            if assign:
                out[key] = y
            else:
                view = out[key]
                view += y
            return out
        return fn

    def grad(self, node, grads):
        g, idx = grads[0], node.inputs[2:]
        gx = IncSubtensor(self.template, True)(g, 0, *idx) if self.set_instead_of_inc else g
        return [gx, Subtensor(self.template)(g, *idx)] + [None] * len(idx)


IncSubtensor, GpuIncSubtensor = op_pair(_IncSubtensor, "IncSubtensor")


def inc_subtensor(x, y, set_instead_of_inc=False):
    """Theano's inc_subtensor(x[key], y): a copy of the indexed variable's base with the
    indexed part incremented by y (or set to y)."""
    node = getattr(x, "owner", None)
    if node is None or not isinstance(node.op, Subtensor):
        raise ArgumentError("inc_subtensor/set_subtensor take an indexed variable, x[...]")
    return IncSubtensor(node.op.template, set_instead_of_inc)(node.inputs[0], y,
                                                               *node.inputs[1:])


def set_subtensor(x, y):
    """Theano's set_subtensor(x[key], y): a copy of the indexed variable's base with the
    indexed part set to y."""
    return inc_subtensor(x, y, True)


# ---------------------------------------------------------------- broadcasting, copies

class _BroadcastLike(Op):
    """`value` broadcast to the shape of `like`: a read-only view, or on a device a
    filled array when value is a host scalar."""

    view = True
    shape_only = (1,)
    host_scalars = (0,)

    def make_node(self, value, like):
        value, like = as_variable(value), as_variable(like)
        if value.ndim > like.ndim:
            raise ArgumentError(f"cannot broadcast a {value.ndim}-d value to a {like.ndim}-d "
                                f"shape")
        return Apply(self, [value, like], [_out(self, value.dtype, like.broadcastable)])

    def make_fn(self, node, xp, ctx):
        dt = node.outputs[0].dtype
        if ctx is None:
            return lambda v, like: np.broadcast_to(np.asarray(v, dt), like.shape)

        def fn(v, like):
            if isinstance(v, GpuArray):
                return xp.broadcast_to(v, like.shape)
            return xp.full(like.shape, v, dt, context=ctx)
        return fn

    def grad(self, node, grads):
        return [grads[0], None]


BroadcastLike, GpuBroadcastLike = op_pair(_BroadcastLike, "BroadcastLike")


def fill(like, value):
    """`value` broadcast to the shape of `like`."""
    return BroadcastLike()(value, like)


def zeros_like(x, dtype=None):
    """Zeros of `x`'s shape, of `dtype` (default: x's dtype)."""
    x = as_variable(x)
    return BroadcastLike()(np.zeros((), dtype or x.dtype), x)


def ones_like(x, dtype=None):
    """Ones of `x`'s shape, of `dtype` (default: x's dtype)."""
    x = as_variable(x)
    return BroadcastLike()(np.ones((), dtype or x.dtype), x)


class _DeepCopy(Op):
    """A copy, so that an output never aliases an input, a shared value or another output."""

    def make_node(self, x):
        x = as_variable(x)
        return Apply(self, [x], [_out(self, x.dtype, x.broadcastable)])

    def make_fn(self, node, xp, ctx):
        return (lambda x: np.array(x)) if ctx is None else (lambda x: x.copy())


DeepCopyOp, GpuDeepCopyOp = op_pair(_DeepCopy, "DeepCopyOp")


class Size(HostOp):
    """The number of elements along `axes` (None: all) of x, an int64 on the host; reads
    only x's shape."""

    __props__ = ("axes",)
    shape_only = (0,)

    def __init__(self, axes=None):
        self.axes = axes

    def make_node(self, x):
        return Apply(self, [as_variable(x)], [TensorType(np.int64, ())])

    def make_fn(self, node, xp, ctx):
        axes = self.axes
        if axes is None:
            return lambda x: np.asarray(math.prod(x.shape), np.int64)
        return lambda x: np.asarray(math.prod(x.shape[d] for d in axes), np.int64)

    def differentiable(self, node):
        return False
