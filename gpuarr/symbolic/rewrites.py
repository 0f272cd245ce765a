"""Graph rewrites before and after placement: constant folding and merging of equal
computations, products rewritten for the device, copies that keep outputs from aliasing
inputs, and the check of flag `assert_no_cpu_op`. (Placement and fusion have modules of
their own.)"""

import warnings

import numpy as np

from ..array import GpuArray
from ..errors import UnsupportedError
from .basic import DeepCopyOp, DimShuffle, GpuDimShuffle, _BroadcastLike, _DimShuffle
from .blas import Dot22, GpuGemv
from .elemwise import Elemwise, GpuElemwise
from .fgraph import rebuild, remake
from .graph import Constant, GpuOp, HostOp, clients, toposort
from .transfer import TRANSFERS
from .types import location

__all__ = ["check_no_cpu_op", "device_rewrites", "fold_and_merge", "host_ops", "protect"]


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


def _vector_matrix(node, inputs):
    """GpuGemv(M.T, v), which gpuarr runs as a product of one column and a column-major
    matrix (PoCL: 1.4 ms at 784x2000, float32), as the row v @ M (0.13 ms): the same
    numbers, the layout gpuarr's GEMM handles well."""
    op = node.op
    if isinstance(op, GpuGemv):
        t = inputs[0].owner
        if t is not None and isinstance(t.op, GpuDimShuffle) and t.op.new_order == (1, 0):
            v, m = inputs[1], t.inputs[0]
            row = DimShuffle(v.broadcastable, ("x", 0)).on(op.ctx)(v)
            product = Dot22().on(op.ctx)(row, m)
            out = DimShuffle(product.broadcastable, (1,)).on(op.ctx)(product)
            out.name = node.outputs[0].name
            return [out]
    return remake(node, inputs)


def _scalar_source(v):
    """The 0-d value that v is a broadcast of (through BroadcastLike and DimShuffle), or
    None."""
    while v.ndim:
        node = v.owner
        if node is None or not isinstance(node.op, (_BroadcastLike, _DimShuffle)):
            return None
        v = node.inputs[0]
    return v


def _broadcast_scalar(node, inputs):
    """BroadcastLike(x, like) of an x that broadcasts a 0-d s as BroadcastLike(s, like)
    (the gradients of mean and of sums over axes build such chains): one fill at most,
    which fusion then turns into a kernel argument."""
    if isinstance(node.op, _BroadcastLike) and inputs[0].ndim:
        s = _scalar_source(inputs[0])
        if s is not None:
            return remake(node, [s, inputs[1]])
    return None


def _lift_dimshuffle(node, inputs, readers):
    """GpuDimShuffle(E(a, b, ...)) of a GpuElemwise E read by nothing else as
    E(GpuDimShuffle(a), GpuDimShuffle(b), ...) (0-d inputs as they are): the same values,
    and the chains on either side of the dimshuffle fuse into one kernel that reads views."""
    op = node.op
    v = inputs[0] if inputs else None
    e = v.owner if v is not None else None
    if not (isinstance(op, GpuDimShuffle) and e is not None and isinstance(e.op, GpuElemwise)
            and len(e.outputs) == 1 and len(readers.get(v, ())) == 1
            and any(x.ndim for x in e.inputs)):
        return None
    n = v.ndim
    lifted = []
    for x in e.inputs:
        if not x.ndim:
            lifted.append(x)
            continue
        pad = n - x.ndim
        order = ["x" if d == "x" or d < pad else d - pad for d in op.new_order]
        lifted.append(x if order == list(range(x.ndim)) else
                      DimShuffle(x.broadcastable, order).on(op.ctx)(x))
    out = e.op.make_node(*lifted).outputs[0]
    out.name = node.outputs[0].name
    return [out]


def device_rewrites(outputs):
    """The placed graph of `outputs` with products in the form the device runs fastest,
    broadcasts of scalars made direct and dimshuffles moved above elementwise work."""
    def transform(node, inputs):
        return (_broadcast_scalar(node, inputs) or _lift_dimshuffle(node, inputs, readers)
                or _vector_matrix(node, inputs))
    for _ in range(_PASSES):  # a dimshuffle climbs one elementwise node per pass
        readers = clients(toposort(outputs))
        readers.update({v: [*readers.get(v, ()), None] for v in outputs})  # (read outside)
        new = rebuild(outputs, transform)[0]
        if all(a is b for a, b in zip(new, outputs)):
            break
        outputs = new
    return outputs


_PASSES = 16


def _aliases(var, roots, borrowed=()):
    """Whether var is, or may be a view of, a root (input, shared value, constant) or a
    broadcast (read-only) value; roots in `borrowed` may be aliased."""
    while True:
        if var in borrowed:
            return False
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


def protect(outputs, updates, roots, borrowed=()):
    """Outputs and update values with a copy where they would alias an input, a shared
    value, a read-only broadcast or one another (inputs in `borrowed` may be outputs)."""
    roots, borrowed = set(roots), set(borrowed)
    seen = set()

    def copy(v):
        op = DeepCopyOp() if v.type.on_host else DeepCopyOp().on(_ctx_of(v))
        return op(v)

    def owned(values, check):
        found = []
        for v in values:
            if _aliases(v, roots, borrowed if check else ()) or v in seen:
                v = copy(v)
            seen.add(v)
            found.append(v)
        return found
    return owned(outputs, True), owned(updates, False)


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

