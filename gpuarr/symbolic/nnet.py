"""T.nnet: the neural-network functions of Theano's `theano.tensor.nnet`, numerically
stable in value and gradient.

`Softmax` and `LogSoftmax` are ops (one node each, host and Gpu classes): both subtract
the maximum along the axis first, so exp never overflows; log_softmax's gradient,
g - exp(out) * sum(g), reads exp of values <= 0. Building `T.log(softmax(x))` gives
`log_softmax(x)` (the elementwise `log` asks the op for its `log_form`), so the
cross-entropy of a softmax stays finite where a probability underflows to 0. The rest are
graphs of elementwise ops, reductions and indexing, so fusion and gradients come with them:
`binary_crossentropy(sigmoid(z), t)` turns into softplus terms through the elementwise
layer's own rewrites.
"""

from ..errors import ArgumentError
from .basic import arange, shape_i
from .elemwise import FUNCTIONS, sigmoid, softplus
from .graph import Apply, Op, TensorType, as_variable, op_pair
from .reductions import CAReduce, normalize_axis

__all__ = [
    "GpuLogSoftmax", "GpuSoftmax", "LogSoftmax", "Softmax", "binary_crossentropy",
    "categorical_crossentropy", "hard_sigmoid", "log_softmax", "relu",
    "sigmoid", "sigmoid_binary_crossentropy", "softmax", "softplus",
]

_exp, _log = FUNCTIONS["exp"], FUNCTIONS["log"]


def _sum(x, axis):
    return CAReduce("sum", (axis,), True)(x)


class _SoftmaxBase(Op):
    replayable = True
    __props__ = ("axis",)

    def __init__(self, axis):
        self.axis = int(axis)

    def make_node(self, x):
        x = as_variable(x)
        if x.dtype.kind != "f":
            raise ArgumentError(f"{type(self).__name__} takes floats, got {x} ({x.type})")
        if not 0 <= self.axis < x.ndim:
            raise ArgumentError(f"{type(self).__name__}: axis {self.axis} of a {x.ndim}-d "
                                f"input")
        return Apply(self, [x], [TensorType(x.dtype, x.broadcastable, self.context_name)])


class _Softmax(_SoftmaxBase):
    """exp(x - max) / sum(exp(x - max)) along `axis`."""

    def make_fn(self, node, xp, ctx):
        axis = self.axis

        def fn(x):
            e = xp.exp(x - x.max(axis=axis, keepdims=True))
            return e / e.sum(axis=axis, keepdims=True)
        return fn

    def grad(self, node, grads):
        sm, g = node.outputs[0], grads[0]
        return [(g - _sum(g * sm, self.axis)) * sm]

    def log_form(self, node):
        """log of this node's output: log_softmax of its input."""
        return LogSoftmax(self.axis)(node.inputs[0])


Softmax, GpuSoftmax = op_pair(_Softmax, "Softmax")


class _LogSoftmax(_SoftmaxBase):
    """(x - max) - log(sum(exp(x - max))) along `axis`."""

    def make_fn(self, node, xp, ctx):
        axis = self.axis

        def fn(x):
            s = x - x.max(axis=axis, keepdims=True)
            return s - xp.log(xp.exp(s).sum(axis=axis, keepdims=True))
        return fn

    def grad(self, node, grads):
        out, g = node.outputs[0], grads[0]
        return [g - _exp(out) * _sum(g, self.axis)]


LogSoftmax, GpuLogSoftmax = op_pair(_LogSoftmax, "LogSoftmax")


def softmax(x, axis=-1):
    """The softmax along `axis` (default the last, Theano's rows of a matrix)."""
    x = as_variable(x)
    return Softmax(normalize_axis(axis, x.ndim, single=True))(x)


def log_softmax(x, axis=-1):
    """log(softmax(x)) computed without exp overflow or log(0), gradient included."""
    x = as_variable(x)
    return LogSoftmax(normalize_axis(axis, x.ndim, single=True))(x)


def relu(x, alpha=0):
    """max(x, 0), or x for x > 0 and alpha * x otherwise (a leaky relu)."""
    x = as_variable(x)
    if alpha == 0:
        return FUNCTIONS["maximum"](x, 0)
    return FUNCTIONS["where"](x > 0, x, alpha * x)


def hard_sigmoid(x):
    """clip(0.2 * x + 0.5, 0, 1): a piecewise-linear sigmoid."""
    return FUNCTIONS["clip"](0.2 * as_variable(x) + 0.5, 0, 1)


def categorical_crossentropy(coding_dist, true_dist):
    """-log(coding_dist[i, true_dist[i]]) for integer labels, or -sum(true_dist *
    log(coding_dist), axis=-1) for a one-hot (or probability) matrix: one value per row.

    With coding_dist a softmax, the log is log_softmax (finite for any input).
    """
    p, t = as_variable(coding_dist), as_variable(true_dist)
    if t.dtype.kind in "iu":
        if p.ndim != 2 or t.ndim != 1:
            raise ArgumentError(f"categorical_crossentropy with integer labels takes a matrix "
                                f"of probabilities and a vector of labels, got {p.type} and "
                                f"{t.type}")
        rows = arange(shape_i(t, 0))
        if p.owner is not None and hasattr(p.owner.op, "log_form"):
            return -_log(p)[rows, t]
        return -_log(p[rows, t])
    if t.ndim != p.ndim:
        raise ArgumentError(f"categorical_crossentropy: true_dist {t.type} must be integer "
                            f"labels or have the dimensions of coding_dist {p.type}")
    return -(t * _log(p)).sum(axis=-1)


def binary_crossentropy(output, target):
    """-(target * log(output) + (1 - target) * log(1 - output)), elementwise. With output
    a sigmoid(z), the logs become softplus terms of z (finite for any z)."""
    output, target = as_variable(output), as_variable(target)
    return -(target * _log(output) + (1 - target) * _log(1 - output))


def sigmoid_binary_crossentropy(logits, target):
    """binary_crossentropy(sigmoid(logits), target) from the logits: target *
    softplus(-logits) + (1 - target) * softplus(logits)."""
    z, t = as_variable(logits), as_variable(target)
    return t * softplus(-z) + (1 - t) * softplus(z)
