"""`ifelse`: Theano's lazy conditional. One `IfElse` node holds both branches as inner
graphs (inner.py) and runs only the one its condition picks.

A branch's graph is what its outputs need beyond the condition's graph and the given
boundary: values the condition needs are computed before (they are the node's inputs),
the rest of each branch runs only when that branch is taken.
"""

from .. import dtypes
from ..errors import ArgumentError, ArgumentTypeError
from .basic import zeros_like
from .elemwise import cast
from .fgraph import rebuild, remake
from .grad import grad
from .graph import Apply, Constant, Op, TensorType, as_variable, op_pair, roots, toposort
from .inner import InnerFunction
from .types import HOST

__all__ = ["GpuIfElse", "IfElse", "IfElseInfo", "ifelse"]


class IfElseInfo:
    """Both branches' outputs and the variables they start from (the node's inputs after
    the condition). IfElse ops are equal only when they share one (identity)."""

    def __init__(self, then_outputs, else_outputs, inputs, name):
        self.then_outputs = tuple(then_outputs)
        self.else_outputs = tuple(else_outputs)
        self.inputs = tuple(inputs)
        self.name = name

    def __str__(self):
        return self.name


def _host_index(v):
    return v.ndim == 0 and v.dtype.kind in "biu"


class _IfElse(Op):
    """The outputs of the then branch when the condition is true, else the else branch's;
    only that branch computes."""

    __props__ = ("info",)

    def __init__(self, info):
        self.info = info
        # the condition and integer scalars (indices, counts) stay on the host
        self.host_inputs = (0, *(1 + k for k, v in enumerate(info.inputs) if _host_index(v)))

    def _describe(self):
        return self.info.name

    def make_node(self, condition, *args):
        info = self.info
        args = [as_variable(a) for a in args]
        if len(args) != len(info.inputs):
            raise ArgumentError(f"{info.name} takes {len(info.inputs)} inputs after the "
                                f"condition, got {len(args)}")
        for a, v in zip(args, info.inputs):
            if a.dtype != v.dtype or a.ndim != v.ndim:
                raise ArgumentTypeError(f"{info.name}: input {a} ({a.type}) does not fit "
                                        f"{v} ({v.type})")
        types = [TensorType(t.dtype, [a and b for a, b in zip(t.broadcastable, e.broadcastable)],
                            self.context_name)
                 for t, e in zip(info.then_outputs, info.else_outputs)]
        return Apply(self, [as_variable(condition), *args], types)

    def gpu_check(self, node, ctx):
        for n in toposort([*self.info.then_outputs, *self.info.else_outputs], self.info.inputs):
            for v in (*n.inputs, *n.outputs):
                dtypes.check_device(v.dtype, ctx)
        return True

    def make_fn(self, node, xp, ctx):
        info = self.info
        where = HOST if ctx is None else ctx
        host = {k - 1 for k in self.host_inputs}
        branches = [InnerFunction(info.inputs, outs, where, host, name=f"{info.name} ({part})")
                    for outs, part in ((info.else_outputs, "else"), (info.then_outputs, "then"))]
        single = len(node.outputs) == 1

        def run(condition, *args):
            branch = branches[bool(condition)]
            try:
                outs = branch(*args)
            finally:
                for c in branch.cells:
                    c.value = None
            return outs[0] if single else outs
        return run

    def grad(self, node, output_grads):
        info = self.info
        cond, args = node.inputs[0], node.inputs[1:]
        wrt = [k for k, v in enumerate(info.inputs) if v.dtype.kind == "f"]
        if not wrt:
            return [None] * len(node.inputs)

        def branch(outputs):
            known = {}
            for o, g in zip(outputs, output_grads):
                if o.dtype.kind == "f":
                    known[o] = known[o] + g if o in known else g
            targets = [info.inputs[k] for k in wrt]
            if not known:
                return [zeros_like(v) for v in targets]
            return grad(None, targets, known_grads=known, disconnected_inputs="ignore")
        grads = branch(info.then_outputs) + branch(info.else_outputs)
        moved = {info.inputs[k]: args[k] for k in range(len(args)) if args[k] is not info.inputs[k]}
        if moved:
            grads = rebuild(grads, remake, moved)[0]
        n = len(wrt)
        chosen = _ifelse(cond, grads[:n], grads[n:], [*args, *output_grads],
                         f"grad_of_{info.name}")
        found = [None] * len(node.inputs)
        for k, g in zip(wrt, chosen):
            found[1 + k] = g
        return found


IfElse, GpuIfElse = op_pair(_IfElse, "IfElse")


def ifelse(condition, then_branch, else_branch, name=None):
    """Theano's lazy if: `then_branch` where `condition` is true, else `else_branch`.

    Parameters
    ----------
    condition : scalar variable
        Read on the host (any dtype; nonzero is true).
    then_branch, else_branch : variable or list of variables
        Outputs of each branch, pairwise of one dtype and number of dimensions (Python
        scalars take the other branch's dtype).
    name : str, optional
        The op's name in debug prints.

    Returns
    -------
    variable or list
        As the branches were given. Only the chosen branch's graph computes: what it needs
        beyond the condition's graph runs inside the node (a value also used outside the
        branch is computed there as well). Differentiable in both branches.

    Examples
    --------
    >>> import gpuarr.symbolic as T
    >>> a, b = T.dscalar("a"), T.dscalar("b")
    >>> f = T.function([a, b], T.ifelse(T.lt(a, b), a * 2, b * 3))
    >>> float(f(1.0, 2.0)), float(f(3.0, 2.0))
    (2.0, 6.0)
    """
    condition = as_variable(condition)
    if condition.ndim != 0:
        raise ArgumentTypeError(f"ifelse: the condition must be a scalar (0-d), got "
                                f"{condition} of type {condition.type}")
    single = not isinstance(then_branch, list | tuple)
    thens = [then_branch] if single else list(then_branch)
    elses = [else_branch] if not isinstance(else_branch, list | tuple) else list(else_branch)
    if len(thens) != len(elses):
        raise ArgumentError(f"ifelse: the then branch has {len(thens)} output(s), the else "
                            f"branch {len(elses)}")
    pairs = [_matched(as_variable(t), as_variable(e), k)
             for k, (t, e) in enumerate(zip(thens, elses))]
    outs = _ifelse(condition, [t for t, _ in pairs], [e for _, e in pairs],
                   _graph_of(condition), name or "ifelse")
    return outs[0] if single else outs


def _graph_of(v):
    """v and every variable its graph computes from."""
    found = {v}
    for node in toposort([v]):
        found.update(node.inputs)
        found.update(node.outputs)
    return found


def _matched(t, e, k):
    """The pair with a weak Python scalar cast to the other's dtype; TypeError when the
    branches' types differ."""
    if isinstance(t, Constant) and t.weak and t.ndim == e.ndim:
        t = cast(t, e.dtype)
    elif isinstance(e, Constant) and e.weak and t.ndim == e.ndim:
        e = cast(e, t.dtype)
    if t.dtype != e.dtype or t.ndim != e.ndim:
        raise ArgumentTypeError(f"ifelse: output {k} is {t.type} in the then branch and "
                                f"{e.type} in the else branch; the branches must have one "
                                f"dtype and number of dimensions (cast one with T.cast)")
    return t, e


def _ifelse(condition, thens, elses, outside, name):
    """The outputs of an IfElse node whose branches start from `outside` (and roots)."""
    inputs = [v for v in roots([*thens, *elses], blockers=set(outside))
              if not isinstance(v, Constant)]
    info = IfElseInfo(thens, elses, inputs, name)
    return IfElse(info).make_node(condition, *inputs).outputs
