"""Graph rewrites before and after placement: constant folding and merging of equal
computations, copies that keep outputs from aliasing inputs, and the check of flag
`assert_no_cpu_op`. (Placement and fusion have modules of their own.)"""

import warnings

import numpy as np

from ..array import GpuArray
from ..errors import UnsupportedError
from .basic import DeepCopyOp, _BroadcastLike
from .elemwise import Elemwise
from .fgraph import rebuild, remake
from .graph import Constant, GpuOp, HostOp
from .transfer import TRANSFERS
from .types import location

__all__ = ["check_no_cpu_op", "fold_and_merge", "host_ops", "protect"]


def _folds(node, inputs):
    return (isinstance(node.op, HostOp) and inputs
            and all(isinstance(v, Constant) and not isinstance(v.data, GpuArray)
                    for v in inputs))


def fold_and_merge(outputs):
    """Compute now what depends on constants only; compute equal things once."""
    seen = {}

    def key_of(v):
        return v.signature() if isinstance(v, Constant) else id(v)

    def transform(node, inputs):
        for k in node.op.shape_only:
            if k < len(inputs):
                inputs[k] = _shape_source(inputs[k])
        if _folds(node, inputs):
            new = node.op.make_node(*inputs)
            with np.errstate(all="ignore"):
                values = node.op.fn(new)(*[v.data for v in inputs])
            values = values if len(new.outputs) > 1 else (values,)
            return [Constant(o.type, np.asarray(v, o.dtype)) for o, v in zip(new.outputs, values)]
        key = (node.op, tuple(key_of(v) for v in inputs))
        found = seen.get(key)
        if found is None:
            found = seen[key] = remake(node, inputs)
        return found
    return rebuild(outputs, transform)[0]


def _shape_source(v):
    """A variable with v's shape that costs less: an input of the elementwise op computing
    v with v's broadcastable pattern (the same shape), repeatedly."""
    while v.owner is not None and isinstance(v.owner.op, Elemwise):
        same = [i for i in v.owner.inputs
                if i.broadcastable == v.broadcastable and not isinstance(i, Constant)]
        if not same:
            break
        v = same[0]
    return v


def _aliases(var, roots):
    """Whether var is, or may be a view of, a root (input, shared value, constant) or a
    broadcast (read-only) value."""
    while True:
        if var in roots or isinstance(var, Constant):
            return True
        node = var.owner
        if node is None:
            return True
        if not node.op.view:
            return False
        if isinstance(node.op, _BroadcastLike):
            return True
        var = node.inputs[0]


def protect(outputs, updates, roots):
    """Outputs and update values with a copy where they would alias an input, a shared
    value, a read-only broadcast or one another."""
    roots = set(roots)
    seen = set()

    def copy(v):
        op = DeepCopyOp() if v.type.on_host else DeepCopyOp().on(_ctx_of(v))
        return op(v)
    new_outputs = []
    for v in outputs:
        if _aliases(v, roots) or v in seen:
            v = copy(v)
        seen.add(v)
        new_outputs.append(v)
    new_updates = [copy(v) if _aliases(v, roots) or v in seen else v for v in updates]
    return new_outputs, new_updates


def _ctx_of(v):
    if isinstance(v, Constant) and isinstance(v.data, GpuArray):
        return v.data.context
    node = v.owner
    if node is not None and hasattr(node.op, "ctx"):
        return node.op.ctx
    return location(v.type.context)


def host_ops(order):
    """The nodes left on the host, transfers and copies aside."""
    return [n for n in order if not isinstance(n.op, (GpuOp, DeepCopyOp, *TRANSFERS))]


def check_no_cpu_op(order, mode, name):
    """Flag assert_no_cpu_op: 'warn' or 'raise' when ops are left on the host."""
    if mode == "ignore":
        return
    left = host_ops(order)
    if not left:
        return
    msg = (f"function {name or '<unnamed>'}: {len(left)} op(s) left on the host "
           f"(assert_no_cpu_op={mode}): {', '.join(str(n) for n in left)}")
    if mode == "raise":
        raise UnsupportedError(msg)
    warnings.warn(msg, stacklevel=4)

