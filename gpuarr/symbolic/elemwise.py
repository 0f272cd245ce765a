"""Elementwise ops, generated from gpuarr's ufunc table: `Elemwise` (numpy) and
`GpuElemwise` (one gpuarr kernel for a whole fused chain, built with `gpuarr.fuse`).

An op holds a `Program`: ufunc calls over the node's inputs and scalar constants. Users
build one-call programs (`T.exp(x)`, `x * 2`); the fusion rewrite merges chains of them.
Python scalars stay weak constants (`x * 2` keeps x's dtype, numpy 2's rule), so dtypes
follow numpy: int32 with float32 gives float64 unless you cast.
"""

import dataclasses
import math

import numpy as np

from .. import dtypes
from ..errors import ArgumentError, UnsupportedError
from ..kernels import ufunc_ops
from ..ufuncs import ALIASES, UFUNCS, _check_integer_power, _where3, broadcast_shapes, weak_type
from .graph import Apply, Constant, Op, TensorType, as_variable, op_pair

__all__ = [
    "FUNCTIONS", "GRADS", "NAMED", "NAMED_GRADS", "THEANO_NAMES", "Elemwise", "GpuElemwise",
    "Program", "apply_ufunc", "cast", "evaluate", "sigmoid", "softplus",
]

_UFUNCS = {**UFUNCS, "where": _where3}
_CAST = "astype:"


def _ufunc(name):
    uf = _UFUNCS.get(ALIASES.get(name, name))
    if uf is None:
        raise ArgumentError(f"unknown elementwise operation {name!r}")
    return uf


@dataclasses.dataclass(frozen=True)
class Program:
    """Ufunc calls over inputs and constants. A reference is ('i', k) the node's input k,
    ('c', k) constant k, or ('s', k) the result of step k; a step is (name, references),
    the name a ufunc's or 'astype:<dtype>'."""

    consts: tuple
    const_types: tuple  # so that 1, 1.0 and np.float32(1) differ
    steps: tuple
    outs: tuple
    name: str = ""  # a named composite (sigmoid, softplus) has a gradient rule of its own

    @classmethod
    def call(cls, name, refs, consts=()):
        return cls(tuple(consts), tuple(type(c) for c in consts), ((name, tuple(refs)),),
                   (("s", 0),))

    def resolve(self, in_types):
        """[(loop dtypes or None, result dtype)] of every step, for input dtypes `in_types`."""
        table = {"i": list(in_types), "c": [weak_type(c) for c in self.consts], "s": []}
        found = []
        for name, refs in self.steps:
            args = tuple(table[t][k] for t, k in refs)
            if name.startswith(_CAST):
                loops, out = None, np.dtype(name[len(_CAST):])
            else:
                loops, out = _ufunc(name).resolve(args)
                out = np.dtype(out)
            found.append((loops, out))
            table["s"].append(out)
        return found

    def describe(self):
        if self.name:
            return self.name
        if len(self.steps) == 1 and self.outs == (("s", 0),):
            return self.steps[0][0]

        def show(ref):
            t, k = ref
            if t == "i":
                return f"i{k}"
            if t == "c":
                return repr(self.consts[k])
            name, refs = self.steps[k]
            return f"{name}({', '.join(show(r) for r in refs)})"
        text = ", ".join(show(r) for r in self.outs)
        return "Composite{" + (text if len(text) <= 80 else text[:77] + "...") + "}"


def evaluate(program, call, args):
    """Run `program` on `args` with call(name, values) doing each step."""
    table = {"i": args, "c": program.consts, "s": []}
    results = table["s"]
    for name, refs in program.steps:
        results.append(call(name, [table[t][k] for t, k in refs]))
    outs = tuple(table[t][k] for t, k in program.outs)
    return outs[0] if len(outs) == 1 else outs


def _host_call(name, args):
    if name.startswith(_CAST):
        return np.asarray(args[0]).astype(name[len(_CAST):])
    uf = _ufunc(name)
    out = (uf.np_ufunc or np.where)(*args)
    return out if type(out) is np.ndarray else np.asarray(out)


def _device_call(name, args):
    # on GpuArrays, and on gpuarr.fuse's traced values
    if name.startswith(_CAST):
        return args[0].astype(name[len(_CAST):])
    return _ufunc(name)(*args)


class _Elemwise(Op):
    """Elementwise ufunc calls: one per node on the host, a fused chain on a device."""
    replayable = True

    __props__ = ("program",)
    host_scalars = "all"

    def __init__(self, program):
        self.program = program

    def _describe(self):
        return self.program.describe()

    def make_node(self, *inputs):
        inputs = [as_variable(v) for v in inputs]
        results = self.program.resolve([v.dtype for v in inputs])
        shapes = {"i": [v.broadcastable for v in inputs], "c": [()] * len(self.program.consts),
                  "s": []}
        for _, refs in self.program.steps:
            shapes["s"].append(_broadcast([shapes[t][k] for t, k in refs]))
        steps = {("s", k): dt for k, (_, dt) in enumerate(results)}
        types = []
        for ref in self.program.outs:
            dt = steps[ref] if ref[0] == "s" else inputs[ref[1]].dtype
            types.append(TensorType(dt, shapes[ref[0]][ref[1]], self.context_name))
        return Apply(self, inputs, types)

    def gpu_check(self, node, ctx):
        resolved = self.program.resolve([v.dtype for v in node.inputs])
        for (name, _), (loops, out) in zip(self.program.steps, resolved):
            for dt in (*(loops or ()), out):
                dtypes.check_device(dt, ctx)
            if loops is not None:
                uf = _ufunc(name)
                if ufunc_ops.expression(uf.name, ["a"] * uf.nin, loops[uf.kind_input],
                                        loops) is None:
                    return False
        return True

    def make_fn(self, node, xp, ctx):
        prog = self.program
        single = len(prog.steps) == 1 and len(prog.outs) == 1 and prog.outs[0] == ("s", 0)
        if ctx is None:
            if single:
                return _single_call(prog, _host_call, node)
            return lambda *args: evaluate(prog, _host_call, args)
        # a 0-d value on the host reaches the kernel as a scalar argument
        scalars = [k for k, v in enumerate(node.inputs) if v.type.on_host]
        if single:
            return _single_call(prog, _device_call, node, scalars)
        fused = xp.fuse(lambda *args: evaluate(prog, _device_call, args))
        fused.__name__ = prog.describe()
        if len(prog.outs) > 1:
            return _checked(fused, prog, node, scalars)
        if not scalars:
            return fused
        return lambda *args: fused(*_as_scalars(args, scalars))

    def grad(self, node, output_grads):
        prog = self.program
        if prog.name:
            return NAMED_GRADS[prog.name](node.inputs[0], node.outputs[0], output_grads[0])
        if len(prog.steps) != 1:
            raise UnsupportedError(f"{self}: gradients of fused programs are not defined")
        name, refs = prog.steps[0]
        args = [node.inputs[k] if t == "i" else as_variable(prog.consts[k]) for t, k in refs]
        if name.startswith(_CAST):
            return [output_grads[0]]
        rule = GRADS.get(_ufunc(name).name)
        if rule is None:
            raise UnsupportedError(f"{name} is not differentiable (piecewise constant)")
        found = rule(*args, node.outputs[0], output_grads[0])
        grads = [None] * len(node.inputs)
        for (t, k), g in zip(refs, found):
            if t == "i" and g is not None:
                grads[k] = g if grads[k] is None else grads[k] + g
        return grads

    def differentiable(self, node):
        if self.program.name:
            return True
        name = self.program.steps[0][0]
        return len(self.program.steps) == 1 and (
            name.startswith(_CAST) or _ufunc(name).name in GRADS)


Elemwise, GpuElemwise = op_pair(_Elemwise, "Elemwise")


def _broadcast(patterns):
    ndim = max((len(p) for p in patterns), default=0)
    out = [True] * ndim
    for p in patterns:
        for d, b in enumerate(p, ndim - len(p)):
            out[d] = out[d] and b
    return tuple(out)


def _as_scalars(args, positions):
    args = list(args)
    for k in positions:
        args[k] = args[k][()]
    return args


def _checked(fused, prog, node, scalars):
    """A multi-output kernel computes every output at the shape of all its inputs, right
    when dimensions broadcast only where their types say (fusion relies on it). A length-1
    value in a dimension typed non-broadcastable that does broadcast makes its outputs
    smaller than the kernel: then the program runs op by op, with numpy's broadcasting."""
    ndim = node.outputs[0].ndim
    checks = [(k, [ndim - v.ndim + d for d, b in enumerate(v.broadcastable) if not b])
              for k, v in enumerate(node.inputs) if k not in scalars and v.ndim]

    def run(*args):
        args = _as_scalars(args, scalars) if scalars else args
        shape = broadcast_shapes(*(args[k].shape for k, _ in checks))
        for k, dims in checks:
            a = args[k].shape
            lead = ndim - len(a)
            if any(a[d - lead] == 1 != shape[d] for d in dims):
                return evaluate(prog, _device_call, args)
        return fused(*args)
    return run


def _single_call(prog, call, node, scalars=()):
    """The callable of a one-step program: the ufunc itself when the step reads the
    node's inputs in order (the common case: no argument shuffling per call)."""
    name, refs = prog.steps[0]
    plain = refs == tuple(("i", k) for k in range(len(node.inputs))) and not scalars
    if call is _device_call:
        if name.startswith(_CAST):
            dt = np.dtype(name[len(_CAST):])
            return lambda x: x.astype(dt)
        uf = _ufunc(name)
        if plain:
            return uf
        call_with = uf
    else:
        def call_with(*args):
            return _host_call(name, args)
        if plain:
            return call_with
    consts = prog.consts

    def run(*args):
        if scalars:
            args = _as_scalars(args, scalars)
        return call_with(*[args[k] if t == "i" else consts[k] for t, k in refs])
    return run


# ---------------------------------------------------------------- building graphs

def apply_ufunc(name, args):
    """The variable of ufunc `name` applied to `args` (variables, arrays or scalars)."""
    uf = _ufunc(name)
    if len(args) != uf.nin:
        raise ArgumentError(f"{uf.name} takes {uf.nin} inputs, got {len(args)}")
    if uf.name == "power":
        _check_integer_power(args)
    args = [as_variable(a) for a in args]
    found = _canonical(uf.name, args)
    if found is not None:
        return found
    inputs, refs, consts = [], [], []
    for a in args:
        if isinstance(a, Constant) and a.ndim == 0 and a.type.on_host:
            refs.append(("c", len(consts)))
            consts.append(a.data if a.weak else a.data[()])
        else:
            if a not in inputs:
                inputs.append(a)
            refs.append(("i", inputs.index(a)))
    if not inputs:
        return _fold(uf.name, args)
    return Elemwise(Program.call(uf.name, refs, consts))(*inputs)


def _fold(name, constants):
    """A ufunc of constants only: computed now, weak when every operand is weak."""
    with np.errstate(all="ignore"):
        value = _host_call(name, [c.host_data for c in constants])
    if all(c.weak for c in constants):
        return as_variable(value.item())
    return as_variable(value)


def cast(x, dtype):
    """x converted to `dtype` (numpy's unsafe cast); x itself if it has that dtype."""
    x = as_variable(x)
    dt = dtypes.normalize(dtype)
    if x.dtype == dt:
        return x
    if isinstance(x, Constant) and x.type.on_host:
        return as_variable(np.asarray(x.host_data).astype(dt))
    return Elemwise(Program.call(_CAST + dt.name, [("i", 0)]))(x)


def _function(name):
    uf = _ufunc(name)

    def fn(*args):
        return apply_ufunc(name, args)
    fn.__name__ = name
    fn.__doc__ = f"Symbolic numpy.{uf.name} (elementwise; numpy's dtype rules)."
    return fn


# Theano's spellings of the same ufuncs
THEANO_NAMES = {
    "neg": "negative", "sqr": "square", "eq": "equal", "neq": "not_equal", "lt": "less",
    "gt": "greater", "le": "less_equal", "ge": "greater_equal", "abs_": "absolute",
    "true_div": "true_divide", "int_div": "floor_divide", "pow": "power", "sgn": "sign",
    "inv": "reciprocal", "mul": "multiply", "sub": "subtract", "and_": "bitwise_and",
    "or_": "bitwise_or", "xor": "bitwise_xor", "switch": "where",
}

FUNCTIONS = {name: _function(name) for name in _UFUNCS}
FUNCTIONS.update({alias: _function(name) for alias, name in ALIASES.items()})
FUNCTIONS.update({alias: _function(name) for alias, name in THEANO_NAMES.items()})


def _composite(name, consts, steps):
    return Program(consts, tuple(type(c) for c in consts), steps,
                   (("s", len(steps) - 1),), name)


# Named composites: a few ufunc calls with a gradient rule of their own, so that the
# gradients stay finite where the plain chain rule would meet inf * 0.
NAMED = {
    # 1 / (1 + e) for x >= 0, else e / (1 + e), with e = exp(-|x|): no overflow
    "sigmoid": _composite("sigmoid", (1, 1, 0), (
        ("absolute", (("i", 0),)), ("negative", (("s", 0),)), ("exp", (("s", 1),)),
        ("add", (("s", 2), ("c", 0))), ("true_divide", (("c", 1), ("s", 3))),
        ("multiply", (("s", 2), ("s", 4))), ("greater_equal", (("i", 0), ("c", 2))),
        ("where", (("s", 6), ("s", 4), ("s", 5))))),
    # log(1 + exp(x)) computed as max(x, 0) + log1p(exp(-|x|)): no overflow
    "softplus": _composite("softplus", (0,), (
        ("absolute", (("i", 0),)), ("negative", (("s", 0),)), ("exp", (("s", 1),)),
        ("log1p", (("s", 2),)), ("maximum", (("i", 0), ("c", 0))),
        ("add", (("s", 4), ("s", 3))))),
}


def sigmoid(x):
    """1 / (1 + exp(-x)), computed without overflow; also what `1 / (1 + T.exp(-x))`
    builds."""
    return Elemwise(NAMED["sigmoid"])(as_variable(x))


def softplus(x):
    """log(1 + exp(x)) without overflow; `T.log(sigmoid(x))` builds -softplus(-x)."""
    return Elemwise(NAMED["softplus"])(as_variable(x))


def _call_of(v):
    """(ufunc or composite name, arguments) of the one-call Elemwise computing v, or None."""
    node = v.owner
    if node is None or not isinstance(node.op, Elemwise):
        return None, None
    prog = node.op.program
    if prog.name:
        return prog.name, list(node.inputs)
    if len(prog.steps) != 1 or prog.outs != (("s", 0),):
        return None, None
    name, refs = prog.steps[0]
    return name, [node.inputs[k] if t == "i" else as_variable(prog.consts[k]) for t, k in refs]


def _is_one(v):
    return isinstance(v, Constant) and v.weak and v.data == 1


def _canonical(name, args):
    """A numerically stable or simpler form of what is being built, or None. As Theano's
    stabilization rewrites: 1 / (1 + exp(-x)) is sigmoid(x), 1 - sigmoid(x) is
    sigmoid(-x), log(sigmoid(x)) is -softplus(-x), log of an op with a `log_form` (softmax)
    is that form; and -(-x) and x ** 1 are x."""
    if name == "negative":
        inner, a = _call_of(args[0])
        if inner == "negative":
            return a[0]
    elif name == "true_divide" and _is_one(args[0]):
        inner, a = _call_of(args[1])
        if inner == "add" and (_is_one(a[0]) or _is_one(a[1])):
            other = a[1] if _is_one(a[0]) else a[0]
            inner, b = _call_of(other)
            if inner == "exp":
                return sigmoid(-b[0])
    elif name == "subtract" and _is_one(args[0]):
        inner, a = _call_of(args[1])
        if inner == "sigmoid":
            return sigmoid(-a[0])
    elif name == "log":
        node = args[0].owner
        if node is not None and hasattr(node.op, "log_form"):  # softmax: log_softmax
            return node.op.log_form(node)
        inner, a = _call_of(args[0])
        if inner == "sigmoid":
            return -softplus(-a[0])
    elif name == "power" and _is_one(args[1]) and args[0].dtype.kind in "fc":
        return args[0]
    return None


# ---------------------------------------------------------------- gradients

_F = FUNCTIONS
_LN2, _LN10 = math.log(2.0), math.log(10.0)


NAMED_GRADS = {
    "sigmoid": lambda x, o, g: [g * o * (1 - o)],
    "softplus": lambda x, o, g: [g * sigmoid(x)],
}


def _zero_unless(cond, g):
    return _F["where"](cond, g, 0)


# name -> rule(*arguments, output, output gradient): one gradient per ufunc argument
# (None: no gradient). Ufuncs not listed (comparisons, floor, sign, bit operations...)
# are piecewise constant: not differentiable.
GRADS = {
    "negative": lambda x, o, g: [-g],
    "positive": lambda x, o, g: [g],
    "absolute": lambda x, o, g: [g * _F["sign"](x)],
    "fabs": lambda x, o, g: [g * _F["sign"](x)],
    "square": lambda x, o, g: [g * 2 * x],
    "sqrt": lambda x, o, g: [g * 0.5 / o],
    "cbrt": lambda x, o, g: [g / (3 * o * o)],
    "reciprocal": lambda x, o, g: [-g * o * o],
    "exp": lambda x, o, g: [g * o],
    "exp2": lambda x, o, g: [g * o * _LN2],
    "expm1": lambda x, o, g: [g * (o + 1)],
    "log": lambda x, o, g: [g / x],
    "log2": lambda x, o, g: [g / (x * _LN2)],
    "log10": lambda x, o, g: [g / (x * _LN10)],
    "log1p": lambda x, o, g: [g / (x + 1)],
    "sin": lambda x, o, g: [g * _F["cos"](x)],
    "cos": lambda x, o, g: [-g * _F["sin"](x)],
    "tan": lambda x, o, g: [g * (1 + o * o)],
    "arcsin": lambda x, o, g: [g / _F["sqrt"](1 - x * x)],
    "arccos": lambda x, o, g: [-g / _F["sqrt"](1 - x * x)],
    "arctan": lambda x, o, g: [g / (1 + x * x)],
    "sinh": lambda x, o, g: [g * _F["cosh"](x)],
    "cosh": lambda x, o, g: [g * _F["sinh"](x)],
    "tanh": lambda x, o, g: [g * (1 - o * o)],
    "arcsinh": lambda x, o, g: [g / _F["sqrt"](x * x + 1)],
    "arccosh": lambda x, o, g: [g / _F["sqrt"](x * x - 1)],
    "arctanh": lambda x, o, g: [g / (1 - x * x)],
    "deg2rad": lambda x, o, g: [g * (math.pi / 180)],
    "rad2deg": lambda x, o, g: [g * (180 / math.pi)],
    "conjugate": lambda x, o, g: [g],
    "add": lambda x, y, o, g: [g, g],
    "subtract": lambda x, y, o, g: [g, -g],
    "multiply": lambda x, y, o, g: [g * y, g * x],
    "true_divide": lambda x, y, o, g: [g / y, -g * o / y],
    "power": lambda x, y, o, g: [g * y * x ** (y - 1), g * o * _F["log"](x)],
    "float_power": lambda x, y, o, g: [g * y * _F["float_power"](x, y - 1),
                                       g * o * _F["log"](x)],
    "maximum": lambda x, y, o, g: [_zero_unless(x >= y, g), _zero_unless(x < y, g)],
    "minimum": lambda x, y, o, g: [_zero_unless(x <= y, g), _zero_unless(x > y, g)],
    "fmax": lambda x, y, o, g: [_zero_unless(x >= y, g), _zero_unless(x < y, g)],
    "fmin": lambda x, y, o, g: [_zero_unless(x <= y, g), _zero_unless(x > y, g)],
    "hypot": lambda x, y, o, g: [g * x / o, g * y / o],
    "arctan2": lambda y, x, o, g: [g * x / (x * x + y * y), -g * y / (x * x + y * y)],
    "logaddexp": lambda x, y, o, g: [g * _F["exp"](x - o), g * _F["exp"](y - o)],
    "logaddexp2": lambda x, y, o, g: [g * _F["exp2"](x - o), g * _F["exp2"](y - o)],
    "copysign": lambda x, y, o, g: [
        _F["where"](_F["logical_xor"](_F["signbit"](x), _F["signbit"](y)), -g, g), None],
    "remainder": lambda x, y, o, g: [g, -g * _F["floor_divide"](x, y)],
    "fmod": lambda x, y, o, g: [g, -g * _F["trunc"](x / y)],
    "ldexp": lambda x, y, o, g: [_F["ldexp"](g, y), None],
    "clip": lambda x, lo, hi, o, g: [
        _zero_unless(_F["logical_and"](x >= lo, x <= hi), g), _zero_unless(x < lo, g),
        _zero_unless(x > hi, g)],
    "where": lambda c, x, y, o, g: [None, _zero_unless(c, g), _F["where"](c, 0, g)],
}

