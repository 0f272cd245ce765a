"""Structural ops: dimshuffle; symbolic shapes (`x.shape`, `x.shape[i]`) and reshape by
them; basic and advanced indexing (integer and boolean arrays) and their increments;
broadcasting to another value's shape; copies; the element count of axes; alloc, zeros,
ones and arange of symbolic sizes; concatenate and stack.

Each op computes with the same array methods on numpy arrays and GpuArrays, so one
implementation gives both classes (`op_pair`). Sizes are 0-d int64 values on the host
(Shape_i reads a shape, wherever the value lives); ops take them as host inputs.
"""

import math
import numbers

import numpy as np

from ..array import GpuArray
from ..dtypes import float_x
from ..errors import ArgumentError, ArgumentTypeError, AxisError, IndexOutOfRange, UnsupportedError
from .graph import Apply, Constant, HostOp, Op, TensorType, as_variable, op_pair

__all__ = [
    "ARange", "AdvancedIncSubtensor", "AdvancedSubtensor", "Alloc", "BroadcastLike",
    "DeepCopyOp", "DimShuffle", "GpuARange", "GpuAdvancedIncSubtensor", "GpuAdvancedSubtensor",
    "GpuAlloc", "GpuBroadcastLike", "GpuDeepCopyOp", "GpuDimShuffle", "GpuIncSubtensor",
    "GpuJoin", "GpuReshape", "GpuSubtensor", "IncSubtensor", "Join", "MakeVector", "Reshape",
    "Shape", "Shape_i", "Size", "Subtensor", "alloc", "arange", "concatenate", "describe_key",
    "describe_shape", "dimshuffle", "fill", "flatten", "inc_subtensor", "join", "ones",
    "ones_like", "parse_key", "parse_shape", "reshape", "set_subtensor", "shape",
    "shape_function", "shape_i", "shape_pattern", "shape_roles", "stack", "subtensor",
    "transpose", "vector_length", "zeros", "zeros_like",
]


def _out(op, dtype, broadcastable):
    return TensorType(dtype, broadcastable, op.context_name)


# ---------------------------------------------------------------- dimshuffle

class _DimShuffle(Op):
    """Permute dimensions, insert broadcastable ones ('x'), drop broadcastable ones: a view."""
    replayable = True

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


# ---------------------------------------------------------------- symbolic shapes

class Shape(HostOp):
    """x.shape as an int64 vector on the host; reads only x's shape (no transfer)."""
    replayable = True

    shape_only = (0,)

    def make_node(self, x):
        return Apply(self, [as_variable(x)], [TensorType(np.int64, (False,))])

    def make_fn(self, node, xp, ctx):
        return lambda x: np.asarray(x.shape, np.int64)

    def differentiable(self, node):
        return False


class Shape_i(HostOp):  # Theano's name
    """x.shape[i] as a 0-d int64 on the host; reads only x's shape."""
    replayable = True

    __props__ = ("i",)
    shape_only = (0,)

    def __init__(self, i):
        self.i = int(i)

    def make_node(self, x):
        x = as_variable(x)
        if not 0 <= self.i < x.ndim:
            raise IndexOutOfRange(f"index {self.i} is out of bounds for the shape of {x} "
                                  f"({x.ndim} dimensions)")
        return Apply(self, [x], [TensorType(np.int64, ())])

    def make_fn(self, node, xp, ctx):
        i = self.i
        return lambda x: np.asarray(x.shape[i], np.int64)

    def differentiable(self, node):
        return False


class MakeVector(HostOp):
    """A vector of 0-d values of one dtype, on the host (shapes built of sizes)."""
    replayable = True

    __props__ = ("dtype",)

    def __init__(self, dtype=np.int64):
        self.dtype = np.dtype(dtype)

    def make_node(self, *values):
        values = [as_variable(v) for v in values]
        for v in values:
            if v.ndim:
                raise ArgumentError(f"MakeVector takes 0-d values, got {v} ({v.type})")
        return Apply(self, values, [TensorType(self.dtype, (False,))])

    def make_fn(self, node, xp, ctx):
        dt = self.dtype
        return lambda *values: np.asarray(values, dt)

    def grad(self, node, grads):
        return [subtensor(grads[0], k) for k in range(len(node.inputs))]


def shape(x):
    """x.shape: the symbolic int64 vector of x's dimensions (`shape(x)[i]` is a scalar)."""
    return Shape()(as_variable(x))


def shape_i(x, i):
    """x.shape[i] as a symbolic int64 scalar (a constant 1 where x's type says so)."""
    x = as_variable(x)
    if not -x.ndim <= i < x.ndim:
        raise IndexOutOfRange(f"index {i} is out of bounds for the shape of {x} ({x.ndim} "
                              f"dimensions)")
    i %= x.ndim
    if x.broadcastable[i]:
        return as_variable(np.int64(1))
    return Shape_i(i)(x)


def vector_length(v):
    """The length of a vector the graph knows it of (x.shape, a MakeVector, a constant),
    else None."""
    node = v.owner
    if v.ndim != 1:
        return None
    if isinstance(v, Constant):
        return len(np.asarray(v.host_data))
    if node is not None and isinstance(node.op, Shape):
        return node.inputs[0].ndim
    if node is not None and isinstance(node.op, MakeVector):
        return len(node.inputs)
    return None


def _shape_parts(shape, ndim):
    """The elements of a shape given as an int, a tuple (ints, scalars), a scalar, or an
    int vector: x.shape, a MakeVector, a constant, or any vector when ndim is given."""
    if isinstance(shape, numbers.Integral):
        return [int(shape)]
    if isinstance(shape, list | tuple):
        return list(shape)
    v = as_variable(shape)
    if v.ndim == 0:
        return [v]
    if v.ndim != 1 or v.dtype.kind not in "iu":
        raise ArgumentTypeError(f"a shape must be ints, integer scalars or an integer vector, "
                                f"got {v} ({v.type})")
    if isinstance(v, Constant):
        return [int(e) for e in np.asarray(v.host_data)]
    node = v.owner
    if node is not None and isinstance(node.op, Shape):
        return [shape_i(node.inputs[0], d) for d in range(node.inputs[0].ndim)]
    if node is not None and isinstance(node.op, MakeVector):
        return list(node.inputs)
    if ndim is None:
        raise ArgumentError(f"the shape {v} is a symbolic vector of unknown length: pass ndim=")
    return [("e", v, j) for j in range(ndim)]


def parse_shape(shape, first, ndim=None):
    """(entries, inputs) of a symbolic shape, the op's inputs numbered from `first`.

    An entry is an int, ("d", k, d) dimension d of input k's shape (a shape-only input),
    ("v", k) the value of 0-d host input k, or ("e", k, j) element j of host vector input k.
    """
    entries, inputs, slots = [], [], {}

    def slot(var, role):
        if (var, role) not in slots:
            slots[var, role] = first + len(inputs)
            inputs.append(var)
        return slots[var, role]
    for e in _shape_parts(shape, ndim):
        if isinstance(e, tuple):
            entries.append(("e", slot(e[1], "e"), e[2]))
            continue
        if isinstance(e, numbers.Integral) and not isinstance(e, bool | np.bool_):
            entries.append(int(e))
            continue
        v = as_variable(e)
        if v.ndim or v.dtype.kind not in "iu":
            raise ArgumentTypeError(f"a shape's entries must be integer scalars, got {v} "
                                    f"({v.type})")
        node = v.owner
        if isinstance(v, Constant):
            entries.append(int(v.host_data))
        elif node is not None and isinstance(node.op, Shape_i):
            entries.append(("d", slot(node.inputs[0], "d"), node.op.i))
        else:
            entries.append(("v", slot(v, "v")))
    if ndim is not None and len(entries) != ndim:
        raise ArgumentError(f"ndim={ndim} but the shape {shape} has {len(entries)} entries")
    return tuple(entries), inputs


def shape_roles(entries):
    """(shape-only inputs, host inputs) of a shape's entries."""
    found = {"d": set(), "v": set(), "e": set()}
    for e in entries:
        if isinstance(e, tuple):
            found[e[0]].add(e[1])
    return tuple(sorted(found["d"])), tuple(sorted(found["v"] | found["e"]))


def shape_pattern(entries, inputs):
    """The broadcastable pattern of a shape: its 1s, and the dimensions it copies."""
    return [e == 1 if isinstance(e, int) else e[0] == "d" and inputs[e[1]].broadcastable[e[2]]
            for e in entries]


def shape_function(entries):
    """args (the node's input values) -> the shape tuple."""
    if all(isinstance(e, int) for e in entries):
        return lambda args: entries

    def value(e, args):
        if isinstance(e, int):
            return e
        if e[0] == "d":
            return args[e[1]].shape[e[2]]
        return int(args[e[1]]) if e[0] == "v" else int(args[e[1]][e[2]])
    return lambda args: tuple(value(e, args) for e in entries)


def describe_shape(entries):
    """A shape's entries as text, for op names: `2,i1.shape[0],-1`."""
    def show(e):
        if isinstance(e, int):
            return str(e)
        if e[0] == "d":
            return f"i{e[1]}.shape[{e[2]}]"
        return f"i{e[1]}" if e[0] == "v" else f"i{e[1]}[{e[2]}]"
    return ",".join(show(e) for e in entries)


def _check_sizes(entries, what):
    ints = [e for e in entries if isinstance(e, int)]
    if sum(e == -1 for e in ints) > 1:
        raise ArgumentError(f"{what}: can only specify one unknown dimension (-1)")
    if any(e < -1 for e in ints):
        raise ArgumentError(f"{what}: negative dimensions are not allowed")


# ---------------------------------------------------------------- reshape

class _Reshape(Op):
    """x with a new shape (parse_shape's entries from input 1, one -1 allowed; ("d", 0, d)
    is x's own dimension d; None: the shape of the second input): a view when the layout
    allows, else a copy, as numpy."""
    replayable = True

    __props__ = ("shape",)
    view = True

    def __init__(self, shape):
        if shape is None:
            self.shape_only = (1,)
        else:
            shape = tuple(e if isinstance(e, tuple) else int(e) for e in shape)
            _check_sizes(shape, f"reshape{shape}")
            self.shape_only, self.host_inputs = shape_roles(shape)
            self.shape_only = tuple(k for k in self.shape_only if k)
        self.shape = shape

    def _describe(self):
        return "like" if self.shape is None else describe_shape(self.shape)

    def make_node(self, x, *rest):
        x = as_variable(x)
        if self.shape is None:
            like = as_variable(rest[0])
            return Apply(self, [x, like], [_out(self, x.dtype, like.broadcastable)])
        inputs = [x, *map(as_variable, rest)]
        for e in self.shape:
            if isinstance(e, tuple) and e[0] == "d" and not 0 <= e[2] < inputs[e[1]].ndim:
                raise ArgumentError(f"reshape: dimension {e[2]} of the {inputs[e[1]].ndim}-d "
                                    f"{inputs[e[1]]}")
        return Apply(self, inputs, [_out(self, x.dtype, shape_pattern(self.shape, inputs))])

    def make_fn(self, node, xp, ctx):
        shape = self.shape
        if shape is None:
            return lambda x, like: x.reshape(like.shape)
        if all(isinstance(e, int) for e in shape):
            return lambda x: x.reshape(shape)
        get = shape_function(shape)
        return lambda x, *rest: x.reshape(get((x, *rest)))

    def grad(self, node, grads):
        return [Reshape(None)(grads[0], node.inputs[0])] + [None] * (len(node.inputs) - 1)


Reshape, GpuReshape = op_pair(_Reshape, "Reshape")


def reshape(x, shape, ndim=None):
    """`x` reshaped to `shape`: ints (at most one -1), symbolic integer scalars
    (`x.shape[0]`), a tuple of those, or a symbolic vector (`y.shape`; any other vector
    needs `ndim`, its length)."""
    x = as_variable(x)
    entries, inputs = parse_shape(shape, 1, ndim)
    if entries == tuple(("d", 1, d) for d in range(x.ndim)) and inputs == [x]:
        return x
    return Reshape(entries)(x, *inputs)


def flatten(x, ndim=1):
    """x with its trailing dimensions merged so that it has `ndim` dimensions."""
    x = as_variable(x)
    if not 1 <= ndim <= max(x.ndim, 1):
        raise ArgumentError(f"flatten: ndim={ndim} for a {x.ndim}-d input")
    return Reshape((*(("d", 0, d) for d in range(ndim - 1)), -1))(x)


# ---------------------------------------------------------------- indexing keys

def _slot(v, index_vars):
    if v not in index_vars:
        index_vars.append(v)
    return index_vars.index(v)


def _entry(v, index_vars, in_slice=False):
    """A key entry: an int, ("v", k) a symbolic integer scalar, ("a", k) an integer or
    boolean array (advanced indexing), None for an absent slice bound."""
    if v is None:
        return None
    if isinstance(v, bool | np.bool_):
        raise UnsupportedError("a Python bool as an index is not supported; index with a "
                               "boolean array or use T.switch")
    if isinstance(v, numbers.Integral):
        return int(v)
    v = as_variable(v)
    if v.ndim == 0 and v.dtype.kind in "iu":
        if isinstance(v, Constant):
            return int(v.host_data)
        return ("v", _slot(v, index_vars))
    if v.ndim and v.dtype.kind in "iub" and not in_slice:
        return ("a", _slot(v, index_vars))
    raise IndexOutOfRange(f"index {v} ({v.type}) is not valid: indices are integers, integer "
                          f"scalars, slices of them, None, Ellipsis, and integer or boolean "
                          f"arrays")


def _dims_used(e, index_vars):
    if isinstance(e, tuple) and e[0] == "a" and index_vars[e[1]].dtype.kind == "b":
        return index_vars[e[1]].ndim
    return 1


def parse_key(ndim, key):
    """(template, index variables) of an indexing key: ints and symbolic integer scalars,
    slices of them, None, one Ellipsis, and integer or boolean arrays ("a" entries)."""
    key = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexOutOfRange("an index can only have a single ellipsis ('...')")
    index_vars, items = [], []
    for k in key:
        if k is Ellipsis or k is None:
            items.append(k)
        elif isinstance(k, slice):
            items.append(("s", *(_entry(e, index_vars, True) for e in
                                 (k.start, k.stop, k.step))))
        else:
            items.append(_entry(k, index_vars))
    used = sum(_dims_used(e, index_vars) for e in items if e is not None and e is not Ellipsis)
    if used > ndim:
        raise IndexOutOfRange(f"too many indices for array: array is {ndim}-dimensional, "
                              f"but {used} were indexed")
    template = []
    for e in items:
        if e is Ellipsis:
            template += [("s", None, None, None)] * (ndim - used)
        else:
            template.append(("n",) if e is None else e)
    return tuple(template), index_vars


def _key_builder(template):
    """idx values -> the numpy key; the key itself when the template has no variables."""
    def value(e, idx):
        return int(idx[e[1]]) if isinstance(e, tuple) else e

    def build(idx):
        key = []
        for e in template:
            tag = e[0] if isinstance(e, tuple) else None
            if tag == "s":
                key.append(slice(*(value(p, idx) for p in e[1:])))
            elif tag == "n":
                key.append(None)
            elif tag == "a":
                key.append(idx[e[1]])
            else:
                key.append(value(e, idx))
        return (*key, Ellipsis)
    if not _index_count(template):
        fixed = build(())
        return lambda idx: fixed
    return build


def describe_key(template, names=None):
    """A key as text: `1:, i0, None` (`names`: the index inputs' text, default i<k>)."""
    def show(e):
        if e is None:
            return ""
        if isinstance(e, tuple):
            return f"i{e[1]}" if names is None else names[e[1]]
        return str(e)
    parts = []
    for e in template:
        if isinstance(e, tuple) and e[0] == "s":
            step = "" if e[3] is None else f":{show(e[3])}"
            parts.append(f"{show(e[1])}:{show(e[2])}{step}")
        elif isinstance(e, tuple) and e[0] == "n":
            parts.append("None")
        else:
            parts.append(show(e))
    return ", ".join(parts)


def _index_count(template):
    return 1 + max((e[1] for e in _walk(template) if isinstance(e, tuple) and e[0] in "va"),
                   default=-1)


def _scalar_positions(template, first):
    """The input positions of a template's symbolic scalars (host values)."""
    return tuple(sorted({first + e[1] for e in _walk(template)
                         if isinstance(e, tuple) and e[0] == "v"}))


def _walk(template):
    for e in template:
        if isinstance(e, tuple) and e[0] == "s":
            yield from e[1:]
        else:
            yield e


# ---------------------------------------------------------------- basic indexing

class _Get(Op):
    """The reads' common part: x[key], the index inputs after x; the gradient scatters
    into zeros through `_scatter(idx)`, the op of the matching increment."""

    def make_fn(self, node, xp, ctx):
        build = _key_builder(self.template)
        return lambda x, *idx: x[build(idx)]

    def grad(self, node, grads):
        x, idx = node.inputs[0], node.inputs[1:]
        zeros = zeros_like(x, grads[0].dtype)
        return [self._scatter(idx)(zeros, grads[0], *idx)] + [None] * len(idx)


class _Subtensor(_Get):
    """x[key] for a basic-indexing key (ints, symbolic int scalars, slices): a view."""
    replayable = True

    __props__ = ("template",)
    view = True

    def __init__(self, template):
        self.template = template
        self.host_inputs = tuple(range(1, 1 + _index_count(template)))

    def _describe(self):
        return describe_key(self.template)

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

    def _scatter(self, idx):
        return IncSubtensor(self.template, True)


Subtensor, GpuSubtensor = op_pair(_Subtensor, "Subtensor")


def subtensor(x, key):
    """x[key]: basic indexing (a view: Subtensor) or, with integer or boolean arrays in the
    key, advanced indexing (a copy: AdvancedSubtensor), numpy's rules. Indexing x.shape
    with ints gives the sizes themselves (Shape_i)."""
    x = as_variable(x)
    node = x.owner
    if node is not None and isinstance(node.op, Shape):
        sizes = _shape_index(node.inputs[0], key)
        if sizes is not None:
            return sizes
    template, index_vars = parse_key(x.ndim, key)
    if any(isinstance(e, tuple) and e[0] == "a" for e in template):
        return AdvancedSubtensor(template)(x, *index_vars)
    if all(e == ("s", None, None, None) for e in template):
        return x
    return Subtensor(template)(x, *index_vars)


def _shape_index(x, key):
    """x.shape[key] for an int or a slice of ints, else None."""
    if isinstance(key, numbers.Integral) and not isinstance(key, bool | np.bool_):
        return shape_i(x, int(key))
    if isinstance(key, slice) and all(e is None or isinstance(e, numbers.Integral)
                                      for e in (key.start, key.stop, key.step)):
        dims = range(x.ndim)[key]
        if not dims:
            return as_variable(np.zeros(0, np.int64))
        return MakeVector(np.int64)(*(shape_i(x, d) for d in dims))
    return None


class _Inc(Op):
    """The increments' common part: x (a copy) with x[key] changed by y, the index inputs
    after y; y stays on the host where it is a scalar."""

    host_scalars = (1,)

    def make_node(self, x, y, *idx):
        x, y = as_variable(x), as_variable(y)
        return Apply(self, [x, y, *map(as_variable, idx)],
                     [_out(self, x.dtype, x.broadcastable)])


class _IncSubtensor(_Inc):
    """A copy of x with x[key] incremented by y (or set to y)."""

    __props__ = ("template", "set_instead_of_inc")

    def __init__(self, template, set_instead_of_inc=False):
        self.template = template
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.host_inputs = tuple(range(2, 2 + _index_count(template)))

    def _describe(self):
        return f"{'set' if self.set_instead_of_inc else 'inc'} {describe_key(self.template)}"

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


# ---------------------------------------------------------------- advanced indexing

def _advanced_pattern(x, template, index_vars):
    """The broadcastable pattern of x[key] with index arrays, by numpy's own rules applied
    to a small stand-in (length 1 where x's type says so, else 3; index arrays of their
    broadcastable pattern, boolean ones all True)."""
    shape, key, dim = [], [], 0
    for e in template:
        tag = e[0] if isinstance(e, tuple) else None
        if tag == "n":
            key.append(None)
            continue
        if tag == "a" and index_vars[e[1]].dtype.kind == "b":
            n = index_vars[e[1]].ndim
            shape += [3] * n
            key.append(np.ones((3,) * n, bool))
            dim += n
            continue
        shape.append(1 if x.broadcastable[dim] else 3)
        dim += 1
        if tag == "s":
            key.append(slice(None))
        elif tag == "a":
            key.append(np.zeros([1 if b else 2 for b in index_vars[e[1]].broadcastable],
                                np.intp))
        else:
            key.append(0)
    shape += [1 if b else 3 for b in x.broadcastable[dim:]]
    out = np.empty(shape, np.int8)[tuple(key)]
    return [n == 1 for n in out.shape]


def _unique(template, index_vars):
    """Why the index arrays select every element at most once, as far as the graph shows:
    -1 for a boolean mask alone; k for vectors of which index_vars[k] is an arange or a
    constant of distinct values (the negative log-likelihood's `p[T.arange(n), y]`), true
    when at run time it is as long as the others; None when nothing says so."""
    arrays = [e[1] for e in template if isinstance(e, tuple) and e[0] == "a"]
    if len(arrays) == 1 and index_vars[arrays[0]].dtype.kind == "b":
        return -1
    if any(index_vars[k].ndim > 1 or index_vars[k].dtype.kind == "b" for k in arrays):
        return None
    for k in arrays:
        a = index_vars[k]
        if a.owner is not None and isinstance(a.owner.op, ARange):
            return k
        if isinstance(a, Constant):
            values = np.asarray(a.host_data)
            if np.unique(values).size == values.size:
                return k
    return None


class _AdvancedSubtensor(_Get):
    """x[key] with integer or boolean arrays in the key (numpy's advanced indexing): a
    copy. Index arrays are data (they go where x is); symbolic scalars stay on the host."""

    __props__ = ("template",)

    def __init__(self, template):
        self.template = template
        self.host_inputs = _scalar_positions(template, 1)

    def _describe(self):
        return describe_key(self.template)

    def make_node(self, x, *idx):
        x, idx = as_variable(x), [as_variable(v) for v in idx]
        bc = _advanced_pattern(x, self.template, idx)
        return Apply(self, [x, *idx], [_out(self, x.dtype, bc)])

    def _scatter(self, idx):
        return AdvancedIncSubtensor(self.template, False, _unique(self.template, idx))


AdvancedSubtensor, GpuAdvancedSubtensor = op_pair(_AdvancedSubtensor, "AdvancedSubtensor")


class _AdvancedIncSubtensor(_Inc):
    """A copy of x with x[key] (integer or boolean arrays in the key) incremented by y, or
    set to y. Repeated positions accumulate (numpy.add.at) unless `unique` says that
    there are none, which makes the increment one gather and one scatter."""

    __props__ = ("template", "set_instead_of_inc", "unique")

    def __init__(self, template, set_instead_of_inc=False, unique=None):
        self.template = template
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.unique = unique  # _unique's answer
        self.host_inputs = _scalar_positions(template, 2)

    def _describe(self):
        what = "set" if self.set_instead_of_inc else "add.at" if self.unique is None else "inc"
        return f"{what} {describe_key(self.template)}"

    def make_fn(self, node, xp, ctx):
        build, src = _key_builder(self.template), self.unique
        arrays = [e[1] for e in self.template if isinstance(e, tuple) and e[0] == "a"]
        assign = self.set_instead_of_inc
        rows = _rows_key(self.template, node.inputs[2:])

        def fn(x, y, *idx):
            out = x.copy()
            key = build(idx)
            if ctx is not None and not isinstance(y, GpuArray):
                y = np.asarray(y)[()]
            if assign:
                out[key] = y
            elif src == -1 or (src is not None and idx[src].size == max(
                    idx[k].size for k in arrays)):
                out[key] = out[key] + y
            elif ctx is None:
                np.add.at(out, key, y)
            else:
                _device_add_at(xp, out, key, y, rows)
            return out
        return fn

    def grad(self, node, grads):
        g, idx = grads[0], node.inputs[2:]
        gx = g
        if self.set_instead_of_inc:
            gx = AdvancedIncSubtensor(self.template, True, self.unique)(g, 0, *idx)
        return [gx, AdvancedSubtensor(self.template)(g, *idx)] + [None] * len(idx)


AdvancedIncSubtensor, GpuAdvancedIncSubtensor = op_pair(_AdvancedIncSubtensor,
                                                        "AdvancedIncSubtensor")


def _device_add_at(xp, out, key, y, rows=False):
    """out[key] += y on the device with repeated positions summed (numpy.add.at): the
    positions the key selects are sorted, each run of equal positions summed as the
    difference of a running sum (float64 where the device has it), and the sums added
    with one gather and one scatter. With `rows`, the key is an index array on axis 0
    only and the positions are rows (sorted as rows, summed row by row), else elements."""
    ctx = out.context
    if rows:
        idx = key[0]
        pos = xp.arange(out.shape[0], dtype=np.int64, context=ctx)[idx.reshape(idx.size)]
        shape = (*idx.shape, *out.shape[1:])
    else:
        pos = xp.arange(out.size, dtype=np.int64, context=ctx).reshape(out.shape)[key]
        shape = pos.shape
        pos = pos.reshape(pos.size)
    n = pos.size
    if n == 0:
        return
    flat_shape = (n, *out.shape[1:]) if rows else (n,)
    if isinstance(y, GpuArray):
        vals = xp.broadcast_to(y, shape).copy().reshape(flat_shape)
    else:
        vals = xp.full(flat_shape, y, out.dtype, context=ctx)
    order = xp.argsort(pos)
    lin = pos[order]
    acc = out.dtype
    if acc.kind in "fc" and ctx.fp64:
        acc = np.dtype(np.complex128 if acc.kind == "c" else np.float64)
    elif acc.kind in "biu":
        acc = np.dtype(np.int64)
    running = xp.cumsum(vals[order].astype(acc), axis=0)
    last = xp.empty((n,), bool, context=ctx)
    last[-1:] = True
    if n > 1:
        last[:-1] = lin[1:] != lin[:-1]
    ends = xp.flatnonzero(last)
    sums = running[ends]
    if ends.size > 1:
        sums[1:] = sums[1:] - running[ends[:-1]]
    target = out if rows else out.reshape(out.size)
    at = lin[ends]
    target[at] = target[at] + sums.astype(out.dtype)


def _rows_key(template, index_vars):
    """Whether a key is one integer array on axis 0 and full slices: an increment of rows."""
    return (bool(template) and isinstance(template[0], tuple) and template[0][0] == "a"
            and index_vars[template[0][1]].dtype.kind in "iu"
            and all(e == ("s", None, None, None) for e in template[1:]))


def inc_subtensor(x, y, set_instead_of_inc=False):
    """Theano's inc_subtensor(x[key], y): a copy of the indexed variable's base with the
    indexed part incremented by y (or set to y); with index arrays in the key, repeated
    positions accumulate as numpy.add.at."""
    node = getattr(x, "owner", None)
    if node is not None and isinstance(node.op, AdvancedSubtensor):
        idx = node.inputs[1:]
        op = AdvancedIncSubtensor(node.op.template, set_instead_of_inc,
                                  _unique(node.op.template, idx))
        return op(node.inputs[0], y, *idx)
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
    replayable = True

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
    replayable = True

    def make_node(self, x):
        x = as_variable(x)
        return Apply(self, [x], [_out(self, x.dtype, x.broadcastable)])

    def make_fn(self, node, xp, ctx):
        return (lambda x: np.array(x)) if ctx is None else (lambda x: x.copy())


DeepCopyOp, GpuDeepCopyOp = op_pair(_DeepCopy, "DeepCopyOp")


class Size(HostOp):
    """The number of elements along `axes` (None: all) of x, an int64 on the host; reads
    only x's shape."""
    replayable = True

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


# ---------------------------------------------------------------- creation

class _Alloc(Op):
    """`value` broadcast to a shape of ints and symbolic sizes (parse_shape's entries,
    from input 1), as a new array (Theano's alloc)."""
    replayable = True

    __props__ = ("shape",)
    host_scalars = (0,)

    def __init__(self, shape):
        if any(isinstance(e, int) and e < 0 for e in shape):
            raise ArgumentError(f"alloc{shape}: negative dimensions are not allowed")
        self.shape = shape
        self.shape_only, self.host_inputs = shape_roles(shape)

    def _describe(self):
        return describe_shape(self.shape)

    def make_node(self, value, *rest):
        inputs = [as_variable(value), *map(as_variable, rest)]
        if inputs[0].ndim > len(self.shape):
            raise ArgumentError(f"alloc: a {inputs[0].ndim}-d value does not fit the shape "
                                f"of {len(self.shape)} dimensions")
        return Apply(self, inputs, [_out(self, inputs[0].dtype,
                                         shape_pattern(self.shape, inputs))])

    def make_fn(self, node, xp, ctx):
        get, dt = shape_function(self.shape), node.outputs[0].dtype
        if ctx is None:
            return lambda v, *rest: np.array(np.broadcast_to(v, get((v, *rest))), dt)

        def fn(v, *rest):
            shape = get((v, *rest))
            if isinstance(v, GpuArray):
                return xp.broadcast_to(v, shape).copy()
            return xp.full(shape, np.asarray(v)[()], dt, context=ctx)
        return fn

    def grad(self, node, grads):
        return [grads[0]] + [None] * (len(node.inputs) - 1)


Alloc, GpuAlloc = op_pair(_Alloc, "Alloc")


def alloc(value, *shape):
    """A new array of `shape` (ints and symbolic sizes, e.g. `x.shape[0]`) filled with
    `value` (a scalar, or an array that broadcasts to the shape)."""
    if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
        shape = shape[0]
    entries, inputs = parse_shape(shape, 1)
    return Alloc(entries)(value, *inputs)


def zeros(shape, dtype=None):
    """A new array of zeros of `shape` (ints, symbolic sizes or x.shape); dtype floatX
    unless given."""
    return alloc(np.zeros((), dtype or float_x()), shape)


def ones(shape, dtype=None):
    """A new array of ones of `shape` (ints, symbolic sizes or x.shape); dtype floatX
    unless given."""
    return alloc(np.ones((), dtype or float_x()), shape)


class _ARange(Op):
    """numpy.arange(start, stop, step) of 0-d host values (symbolic sizes)."""
    replayable = True

    __props__ = ("dtype",)
    host_inputs = (0, 1, 2)

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)

    def make_node(self, start, stop, step):
        inputs = [as_variable(v) for v in (start, stop, step)]
        for v in inputs:
            if v.ndim or v.dtype.kind not in "iuf":
                raise ArgumentTypeError(f"arange takes real scalars, got {v} ({v.type})")
        return Apply(self, inputs, [_out(self, self.dtype, (False,))])

    def make_fn(self, node, xp, ctx):
        dt = self.dtype
        if ctx is None:
            return lambda a, b, c: np.arange(_item(a), _item(b), _item(c), dtype=dt)
        return lambda a, b, c: xp.arange(_item(a), _item(b), _item(c), dtype=dt, context=ctx)

    def differentiable(self, node):
        return False


ARange, GpuARange = op_pair(_ARange, "ARange")


def _item(v):
    return v.item() if isinstance(v, np.ndarray | np.generic) else v


def arange(start, stop=None, step=1, dtype=None):
    """numpy.arange with symbolic bounds (`T.arange(x.shape[0])`); the dtype is numpy's
    for the bounds' dtypes (int64 for integers) unless given."""
    if stop is None:
        start, stop = 0, start
    inputs = [as_variable(v) for v in (start, stop, step)]
    if dtype is None:
        dtype = np.result_type(*(v.dtype for v in inputs))
    return ARange(dtype)(*inputs)


# ---------------------------------------------------------------- joining

class _Join(Op):
    """numpy.concatenate of the inputs along `axis` (numpy's result dtype)."""
    replayable = True

    __props__ = ("axis",)

    def __init__(self, axis):
        self.axis = int(axis)

    def make_node(self, *tensors):
        tensors = [as_variable(v) for v in tensors]
        ndim, axis = tensors[0].ndim, self.axis
        for v in tensors:
            if v.ndim != ndim:
                raise ArgumentError(f"concatenate: all inputs must have the same number of "
                                    f"dimensions, got {', '.join(str(t.type) for t in tensors)}")
        if not 0 <= axis < ndim:
            raise AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
        bc = [d != axis and all(v.broadcastable[d] for v in tensors) for d in range(ndim)]
        dt = np.result_type(*(v.dtype for v in tensors))
        return Apply(self, tensors, [_out(self, dt, bc)])

    def make_fn(self, node, xp, ctx):
        axis, dt = self.axis, node.outputs[0].dtype
        if ctx is None:
            return lambda *arrays: np.concatenate(arrays, axis=axis, dtype=dt)
        return lambda *arrays: xp.concatenate(arrays, axis=axis, dtype=dt)

    def grad(self, node, grads):
        g, axis, found, start = grads[0], self.axis, [], 0
        for v in node.inputs:
            stop = shape_i(v, axis) if isinstance(start, int) and not start else \
                start + shape_i(v, axis)
            found.append(subtensor(g, (slice(None),) * axis + (slice(start, stop),)))
            start = stop
        return found


Join, GpuJoin = op_pair(_Join, "Join")


def _axis(axis, ndim):
    if not -ndim <= axis < ndim:
        raise AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def concatenate(tensor_list, axis=0):
    """numpy.concatenate of variables (and data) along `axis`, with gradients."""
    tensors = [as_variable(v) for v in tensor_list]
    if not tensors:
        raise ArgumentError("need at least one array to concatenate")
    if tensors[0].ndim == 0:
        raise ArgumentError("zero-dimensional arrays cannot be concatenated")
    if len(tensors) == 1:
        return tensors[0]
    return Join(_axis(axis, tensors[0].ndim))(*tensors)


def join(axis, *tensors):
    """Theano's join(axis, *tensors): concatenate(tensors, axis)."""
    return concatenate(tensors, axis)


def stack(*tensors, axis=0):
    """numpy.stack of variables (and data) along a new axis: `stack([a, b])`, or Theano's
    `stack(a, b)`; scalars give a vector (integer scalars a host MakeVector, as sizes)."""
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tensors[0]
    tensors = [as_variable(v) for v in tensors]
    if not tensors:
        raise ArgumentError("need at least one array to stack")
    ndim = tensors[0].ndim
    if any(v.ndim != ndim for v in tensors):
        raise ArgumentError(f"stack: all inputs must have the same number of dimensions, got "
                            f"{', '.join(str(v.type) for v in tensors)}")
    if ndim == 0 and all(v.dtype.kind in "iu" for v in tensors):  # sizes: a host vector
        return MakeVector(np.result_type(*(v.dtype for v in tensors)))(*tensors)
    axis = _axis(axis, ndim + 1)
    order = [*range(axis), "x", *range(axis, ndim)]
    return Join(axis)(*(dimshuffle(v, *order) for v in tensors))
