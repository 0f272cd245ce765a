"""The compiled schedule of a function: its graph as one flat list of prepared steps over
numbered storage cells, worked out at compile time, so that a call is one loop over steps.

- Order: transfers to a device first and reads back to the host last (a blocking read then
  waits once, for device work the host has already queued); the readers of a shared value
  before the kernel that updates it in place; else the graph's topological order.
- Steps: a GpuElemwise node is a prepared launch: its kernel's `Loop` (traced by gpuarr.fuse
  at the first call: a function's dtypes are fixed), which inputs are arrays, how each scalar
  argument is computed; a call allocates the outputs (or takes the storage of the shared
  variable it updates in place) and enqueues through `elemwise.run`. Any other node calls its
  op's callable.
- In place: the kernel computing a shared variable's new value writes into the shared
  variable's storage when nothing read later needs the old value (decided here), and, at the
  call, when that storage has the kernel's shape and dtype, is writable and is no other input
  or shared value, and no other operand of the kernel overlaps it.
- DebugMode: each node also runs through numpy (the host version of its op; transfers must
  keep values) and DebugModeError names the first node whose outputs differ, or that changed
  a value it read.
"""

import heapq

import numpy as np

from .. import elemwise as engine
from ..base import ArrayBase
from ..errors import GpuArrayError
from ..fusion import Fused
from ..ufuncs import broadcast_shapes, scalar_converter
from .elemwise import GpuElemwise, _device_call, evaluate
from .graph import Constant, HostOp
from .mode import DebugModeError
from .profiling import ProfileStats
from .replay import Replays
from .transfer import TRANSFERS, GpuFromHost, HostFromGpu

__all__ = ["Schedule", "inplace_updates", "run_order"]


def _rank(node):
    op = node.op
    return 0 if isinstance(op, GpuFromHost) else 2 if isinstance(op, HostFromGpu) else 1


def run_order(fgraph, after=None):
    """The nodes of `fgraph` in the order a call runs them: each after its inputs' nodes and
    the nodes `after` lists for it; among those ready, uploads first, reads back last."""
    topo = fgraph.toposort()
    pos = {n: k for k, n in enumerate(topo)}
    after = after or {}
    users, waiting, ready = {}, {}, []
    for node in topo:
        deps = {v.owner for v in node.inputs if v.owner is not None} | set(after.get(node, ()))
        waiting[node] = len(deps)
        for d in deps:
            users.setdefault(d, []).append(node)
        if not deps:
            ready.append((_rank(node), pos[node]))
    heapq.heapify(ready)
    order = []
    while ready:
        node = topo[heapq.heappop(ready)[1]]
        order.append(node)
        for u in users.get(node, ()):
            waiting[u] -= 1
            if not waiting[u]:
                heapq.heappush(ready, (_rank(u), pos[u]))
    assert len(order) == len(topo), "run_order: the ordering constraints make a cycle"
    return order


# ---------------------------------------------------------------- in-place updates

def _readers(fgraph, var):
    """The nodes reading var's data (not only its shape), and var's views' readers."""
    found, stack, seen = [], [var], set()
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        for node in fgraph.clients(v):
            if any(x is v and k not in node.op.shape_only for k, x in enumerate(node.inputs)):
                found.append(node)
                if node.op.view:
                    stack += node.outputs
    return found


def _descendants(fgraph, node):
    found, stack = set(), [node]
    while stack:
        n = stack.pop()
        for o in n.outputs:
            for c in fgraph.clients(o):
                if c not in found:
                    found.add(c)
                    stack.append(c)
    return found


def inplace_updates(fgraph, updates):
    """({kernel node: (output index, shared variable)}, {kernel node: nodes to run before})
    for the updates `updates` ([(shared variable, new value)], the new values being
    fgraph outputs) whose new value a GpuElemwise kernel on the shared variable's device
    computes, where every other reader of the old value can run before that kernel and the
    kernel reads the old value at most as itself (not through a view)."""
    targets, after = {}, {}
    outputs = set(fgraph.outputs[:len(fgraph.outputs) - len(updates)])
    for shared, value in updates:
        node = value.owner
        if (node is None or not isinstance(node.op, GpuElemwise) or node in targets
                or value in outputs or shared.location is not node.op.ctx):
            continue
        readers = [r for r in _readers(fgraph, shared) if r is not node]
        views = {o for r in readers if r.op.view for o in r.outputs}
        if views & set(node.inputs) or set(readers) & _descendants(fgraph, node):
            continue
        targets[node] = (node.outputs.index(value), shared)
        after[node] = readers
    return targets, after


def _fits(t, shape, dtype, ctx, arrays):
    """Whether the kernel may write its output of `shape` and `dtype` into `t`, of which
    `arrays` (the kernel's inputs) may read only t itself, elementwise."""
    if not (isinstance(t, ArrayBase) and t.shape == shape and t.dtype == dtype
            and t._writeable and t.storage.context is ctx):
        return False
    for a in arrays:
        if a is not t and a._may_share(t) and not (
                a.offset == t.offset and a.strides == t.strides and a.shape == t.shape):
            return False
    return True


# ---------------------------------------------------------------- steps

def thunk(fn, ins, outs, cells):
    """A callable running `fn` from the cells `ins` into the cells `outs`."""
    if len(outs) == 1:
        o = outs[0]
        if len(ins) == 1:
            i = ins[0]

            def run():
                cells[o] = fn(cells[i])
        elif len(ins) == 2:
            i, j = ins

            def run():
                cells[o] = fn(cells[i], cells[j])
        else:
            def run():
                cells[o] = fn(*[cells[k] for k in ins])
        return run

    def run_many():
        for k, v in zip(outs, fn(*[cells[k] for k in ins])):
            cells[k] = v
    return run_many


class ElemwiseStep:
    """A GpuElemwise node as a prepared launch (see the module's docstring). `target`:
    (output index, cell of the shared value it may overwrite, cells of the values that
    must not share its storage) or None."""

    __slots__ = ("cells", "checks", "ctx", "entry", "fallback", "ins", "node", "outs",
                 "scalars", "target")

    def __init__(self, node, ins, outs, cells, target=None):
        self.node, self.ins, self.outs, self.cells = node, ins, outs, cells
        self.ctx = node.op.ctx
        self.fallback = thunk(node.op.fn(node), ins, outs, cells)
        self.scalars = tuple(k for k, v in enumerate(node.inputs) if v.type.on_host)
        ndim = node.outputs[0].ndim
        # several outputs: each must have the kernel's shape (see symbolic.elemwise._checked)
        self.checks = () if len(node.outputs) == 1 else tuple(
            (k, ndim - v.ndim, tuple(ndim - v.ndim + d for d, b in enumerate(v.broadcastable)
                                     if not b))
            for k, v in enumerate(node.inputs) if k not in self.scalars and v.ndim)
        self.target = target
        self.entry = None

    def _prepare(self, args):
        """The kernel's entry, or False where gpuarr.fuse cannot trace the program (the op's
        own callable then runs it)."""
        prog = self.node.op.program
        fused = Fused(lambda *a: evaluate(prog, _device_call, a))
        try:
            loop, positions, sources, out_dtypes, _ = fused._trace(args, self.ctx)
        except GpuArrayError:
            self.entry = False
            return False
        sources = tuple((host, scalar_converter(dt)) for host, dt in sources)
        self.entry = (loop, tuple(positions), sources, tuple(np.dtype(d) for d in out_dtypes))
        return self.entry

    def __call__(self):
        cells = self.cells
        args = [cells[k] for k in self.ins]
        for k in self.scalars:
            args[k] = args[k][()]
        entry = self.entry
        if entry is None:
            entry = self._prepare(args)
        if entry is False:
            return self.fallback()
        loop, positions, sources, out_dtypes = entry
        arrays = [args[k] for k in positions]
        shape = broadcast_shapes(*[a.shape for a in arrays])
        for k, lead, dims in self.checks:
            a = args[k].shape
            if any(a[d - lead] == 1 != shape[d] for d in dims):
                return self.fallback()
        ctx, into = self.ctx, None
        target = self.target
        if target is not None:
            j, cell, others = target
            t = cells[cell]
            if _fits(t, shape, out_dtypes[j], ctx, arrays) and not any(
                    isinstance(v, ArrayBase) and v.storage is t.storage
                    for v in map(cells.__getitem__, others)):
                into = j
        outs = [t if k == into else ArrayBase._empty(ctx, shape, dt)
                for k, dt in enumerate(out_dtypes)]
        engine.run(loop, outs, arrays, [conv(host(args)) for host, conv in sources])
        for k, o in zip(self.outs, outs):
            cells[k] = o


# ---------------------------------------------------------------- DebugMode

def _host(v):
    return v.get() if isinstance(v, ArrayBase) else np.asarray(v)


def _reference(node):
    """numpy's callable for `node` (None where there is nothing to compare with)."""
    op = node.op
    if isinstance(op, TRANSFERS):
        return lambda v: v
    host_class = getattr(type(op), "host_class", None)
    if isinstance(op, HostOp) or host_class is None:
        return None
    host = object.__new__(host_class)
    host.__dict__.update(op.__dict__)
    return HostOp.fn(host, node)


def _difference(got, want, rtol, atol):
    """Why `got` (a node's value) is not `want` (numpy's), or None."""
    got, want = _host(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return (f"shape {got.shape} and dtype {got.dtype} where numpy gives shape "
                f"{want.shape} and dtype {want.dtype}")
    if got.dtype.kind in "fc":
        close = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        close = got == want
    if np.all(close):
        return None
    bad = np.argwhere(~np.asarray(close))
    first = tuple(int(i) for i in bad[0]) if got.ndim else ()
    return (f"{len(bad) if got.ndim else 1} of {got.size} element(s) differ (rtol={rtol}, "
            f"atol={atol}); at index {first}: {got[first]!r}, numpy gives {want[first]!r}")


def checked(node, step, ins, outs, cells, mode, position, fname):
    """`step`, then the comparison of its outputs with numpy's (DebugMode)."""
    reference = _reference(node)
    what = f"DebugMode: function {fname or '<unnamed>'}, node {position} ({node})"

    def run():
        before = [_host(cells[k]).copy() for k in ins] if mode.check_inputs else ()
        step()
        if reference is not None:
            want = reference(*[v.copy() for v in before] if before else
                             [_host(cells[k]) for k in ins])
            want = want if len(outs) > 1 else (want,)
            for j, (k, w) in enumerate(zip(outs, want)):
                why = _difference(cells[k], w, *mode.tolerances(node.outputs[j].dtype))
                if why is not None:
                    raise DebugModeError(f"{what}: output {j} has {why}")
        for j, (k, old) in enumerate(zip(ins, before)):
            why = _difference(cells[k], old, 0, 0)
            if why is not None:
                raise DebugModeError(f"{what} changed its input {j} ({node.inputs[j]}): {why}")
    return run


# ---------------------------------------------------------------- the schedule

class Schedule:
    """A FunctionGraph compiled for calls: `shared` lists the shared variables that the last
    outputs of `fgraph` are the new values of, in order.

    `cells`: one per variable, constants filled once (from `first` on, cleared after each
    call); `steps`: one callable per node of `order`; `in_cells`, `shared_cells`,
    `out_cells`, `update_cells`: the cells of the inputs, the shared values read, the
    outputs and the new values. `inplace`: the nodes updating a shared variable in place.
    """

    def __init__(self, fgraph, n_inputs, shared, mode, profile=False, name=None):
        n_out = len(fgraph.outputs) - len(shared)
        updates = list(zip(shared, fgraph.outputs[n_out:]))
        targets, after = (inplace_updates(fgraph, updates) if mode.inplace else ({}, {}))
        self.order = order = run_order(fgraph, after)
        self.mode = mode
        self.profile = ProfileStats(name, order) if profile else None
        variables = [*fgraph.inputs, *(x for n in order for x in (*n.inputs, *n.outputs)),
                     *fgraph.outputs]
        consts = list(dict.fromkeys(v for v in variables if isinstance(v, Constant)))
        others = list(dict.fromkeys(v for v in variables if not isinstance(v, Constant)))
        index = {v: k for k, v in enumerate(consts + others)}
        self.cells = cells = [c.data for c in consts] + [None] * len(others)
        self.first = len(consts)
        self.blank = [None] * len(others)
        self.inputs, self.shared_inputs = fgraph.inputs[:n_inputs], fgraph.inputs[n_inputs:]
        self.in_cells = [index[v] for v in fgraph.inputs[:n_inputs]]
        self.shared_cells = [(index[v], v.container) for v in fgraph.inputs[n_inputs:]]
        self.out_cells = [index[v] for v in fgraph.outputs[:n_out]]
        self.update_cells = [(s.container, index[v]) for s, v in updates]
        self.inplace = {node: shared for node, (_, shared) in targets.items()}
        roots = [index[v] for v in fgraph.inputs]
        self.steps, self.step_cells = [], []
        for k, node in enumerate(order):
            ins = [index[v] for v in node.inputs]
            outs = [index[v] for v in node.outputs]
            self.step_cells.append((ins, outs))
            if isinstance(node.op, GpuElemwise):
                target = targets.get(node)
                if target is not None:
                    j, shared = target
                    target = (j, index[shared], [c for c in roots if c != index[shared]])
                step = ElemwiseStep(node, ins, outs, cells, target).__call__
            else:
                step = thunk(node.op.fn(node), ins, outs, cells)
            if mode.check:
                step = checked(node, step, ins, outs, cells, mode, k, name)
            if self.profile is not None:
                step = self.profile.timed(node, step, outs, cells)
            self.steps.append(step)
        self.replays = Replays(self)
