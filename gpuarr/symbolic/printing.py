"""Printing graphs and values: `debugprint` (the graph of a variable, of several, or of a
compiled function, as Theano prints it: one line per node, inputs indented below, `[id X]`
naming repeated nodes), `pp` (an expression as one line of Python-like text) and `Print`
(an identity op that prints its value each time it is computed)."""

import string
import sys

import numpy as np

from ..array import GpuArray
from .basic import (
    AdvancedSubtensor,
    ARange,
    DimShuffle,
    Reshape,
    Shape,
    Shape_i,
    Size,
    Subtensor,
    describe_key,
)
from .blas import Dot, Dot22, Gemv, MatMul, TensorDot
from .elemwise import _CAST, Elemwise
from .function import Function
from .graph import Apply, Constant, Op, as_variable, op_pair
from .reductions import CAReduce
from .transfer import Transfer

__all__ = ["GpuPrint", "Print", "debugprint", "pp"]


def _ids():
    letters = string.ascii_uppercase
    k = 0
    while True:
        n, name = k, ""
        while True:
            name = letters[n % 26] + name
            n = n // 26 - 1
            if n < 0:
                break
        yield name
        k += 1


def debugprint(obj, file=None, print_type=False):
    """Print the graph of `obj` (a variable, a list of them, or a compiled function) and
    return the text. A function's nodes end with their position in its toposort."""
    order = None
    if isinstance(obj, Function):
        outputs = obj.maker.fgraph.outputs
        order = {node: k for k, node in enumerate(obj.maker.fgraph.toposort())}
    elif isinstance(obj, list | tuple):
        outputs = list(obj)
    else:
        outputs = [obj]
    ids, names, done, lines = _ids(), {}, set(), []

    def ident(v):
        key = v.owner if v.owner is not None else v
        if key not in names:
            names[key] = next(ids)
        return names[key]

    def label(v):
        kind = f" <{v.type}>" if print_type else ""
        if v.owner is None:
            return f"{v} [id {ident(v)}]{kind}"
        node = v.owner
        out = f".{v.index}" if len(node.outputs) > 1 else ""
        pos = f"   {order[node]}" if order is not None and node in order else ""
        return f"{node.op}{out} [id {ident(v)}] '{v.name or ''}'{kind}{pos}"

    def walk(v, first, rest):
        lines.append(first + label(v))
        node = v.owner
        if node is None or node in done:
            return
        done.add(node)
        for k, child in enumerate(node.inputs):
            last = k == len(node.inputs) - 1
            walk(child, rest + " |", rest + ("  " if last else " |"))
    for v in outputs:
        walk(v, "", "")
    text = "\n".join(lines)
    print(text, file=sys.stdout if file is None else file)
    return text


# ---------------------------------------------------------------- pp

_INFIX = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/",
          "floor_divide": "//", "remainder": "%", "power": "**", "less": "<",
          "less_equal": "<=", "greater": ">", "greater_equal": ">=", "equal": "==",
          "not_equal": "!=", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
          "left_shift": "<<", "right_shift": ">>", "matmul": "@"}
_PREFIX = {"negative": "-", "positive": "+", "invert": "~", "logical_not": "~"}
_PRODUCTS = {Dot22: "dot", Gemv: "dot", Dot: "dot", MatMul: "matmul"}


def pp(var):
    """`var`'s expression as one line: named variables by name, constants by value,
    operators infix (`((x * w) + b)`), other ops as calls (`sigmoid(x)`, `sum(x, axis=0)`,
    `x[i, :]`)."""
    return _pp(as_variable(var))


def _pp(v):
    if v.name is not None:
        return v.name
    if isinstance(v, Constant):
        data = np.asarray(v.host_data)
        return repr(v.host_data) if v.weak else str(data.item()) if data.ndim == 0 else str(v)
    node = v.owner
    if node is None:
        return str(v)
    text = _pp_node(node, [_pp(i) for i in node.inputs])
    return text if len(node.outputs) == 1 else f"{text}.{v.index}"


def _pp_node(node, args):
    op = node.op
    if isinstance(op, Elemwise) and not op.program.name and len(op.program.steps) == 1:
        name, refs = op.program.steps[0]
        vals = [args[k] if t == "i" else repr(op.program.consts[k]) for t, k in refs]
        if name.startswith(_CAST):
            return f"{vals[0]}.astype({name[len(_CAST):]})"
        if name in _INFIX and len(vals) == 2:
            return f"({vals[0]} {_INFIX[name]} {vals[1]})"
        if name in _PREFIX:
            return f"{_PREFIX[name]}{vals[0]}"
        return f"{name}({', '.join(vals)})"
    if isinstance(op, Elemwise) and op.program.name:
        return f"{op.program.name}({', '.join(args)})"
    if isinstance(op, DimShuffle):
        if op.new_order == (1, 0):
            return f"{args[0]}.T"
        return f"{args[0]}.dimshuffle({', '.join(repr(e) for e in op.new_order)})"
    if isinstance(op, Subtensor | AdvancedSubtensor):
        return f"{args[0]}[{describe_key(op.template, args[1:])}]"
    if isinstance(op, Shape):
        return f"{args[0]}.shape"
    if isinstance(op, Shape_i):
        return f"{args[0]}.shape[{op.i}]"
    if isinstance(op, Size) and op.axes is None:
        return f"{args[0]}.size"
    if isinstance(op, ARange):
        return f"arange({', '.join(args)})"
    if isinstance(op, CAReduce):
        axis = op.axis[0] if isinstance(op.axis, tuple) and len(op.axis) == 1 else op.axis
        axis = "" if axis is None else f", axis={axis}"
        return f"{op.name}({args[0]}{axis}{', keepdims=True' if op.keepdims else ''})"
    if isinstance(op, Reshape) and op.shape is not None:
        return f"{args[0]}.reshape(...)"
    if type(op) in _PRODUCTS:
        return f"{_PRODUCTS[type(op)]}({args[0]}, {args[1]})"
    if isinstance(op, TensorDot):
        return f"tensordot({args[0]}, {args[1]}, {(list(op.axes_a), list(op.axes_b))})"
    if isinstance(op, Transfer):
        return f"{args[0]}.transfer({op.target!r})"
    return f"{op}({', '.join(args)})"


# ---------------------------------------------------------------- Print

class _Print(Op):
    """Identity that prints "`message` attr = value" for each of `attrs` (attributes of
    the value, called when callable; default its text) each time it is computed. The
    gradient passes through."""

    __props__ = ("message", "attrs")
    view = True

    def __init__(self, message="", attrs=("__str__",)):
        self.message, self.attrs = str(message), tuple(attrs)

    def _describe(self):
        return self.message

    def make_node(self, x):
        x = as_variable(x)
        return Apply(self, [x], [x.type.clone(context=self.context_name)])

    def make_fn(self, node, xp, ctx):
        message, attrs = self.message, self.attrs

        def fn(x):
            value = x.get() if isinstance(x, GpuArray) else x
            for attr in attrs:
                found = getattr(value, attr)
                print(f"{message} {attr} = {found() if callable(found) else found}")
            return x
        return fn

    def grad(self, node, grads):
        return [grads[0]]


Print, GpuPrint = op_pair(_Print, "Print")
