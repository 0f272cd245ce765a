"""Placement: choose where each op runs, swap host ops for their Gpu versions there, and
insert the transfers (`GpuFromHost`, `HostFromGpu`, `GpuToGpu`) the choice needs.

Rules, in order, for an op:
- it runs where its first input that lives on a device lives (shared variables on dev1
  keep their work on dev1);
- otherwise on the default device (flag device), when one is set: inputs arrive from
  the host and go there;
- elementwise work on 0-d host values only stays on the host (a transfer would cost more),
  and so does any op the device cannot run (its dtype, or no Gpu version).
A Gpu elementwise op takes 0-d host values as kernel arguments, without a transfer.
Each value moves at most once to each place; a move of a moved value starts from the
original (host -> dev0 -> host never happens), and moves nobody reads are dropped.
"""

import numpy as np

from ..array import GpuArray, to_device
from .elemwise import _Elemwise
from .fgraph import rebuild, remake
from .graph import Constant, HostOp
from .shared import SharedVariable
from .transfer import TRANSFERS, GpuFromHost, GpuToGpu, HostFromGpu, Transfer
from .types import HOST, location

__all__ = ["Placer", "place"]


class Placer:
    def __init__(self, default):
        self.default = default  # the default Context, or None (flag device=cpu)
        self.loc = {}
        self._moves = {}

    def home(self, v):
        """Where v lives: 'cpu', a Context, or None for host constants (anywhere)."""
        if isinstance(v, Constant):
            return v.data.context if isinstance(v.data, GpuArray) else None
        found = self.loc.get(v)
        if found is None:
            found = self.loc[v] = v.location if isinstance(v, SharedVariable) else HOST
        return found

    def at(self, v, where):
        """v's value on `where` ('cpu' or a Context), moving it if needed."""
        here = self.home(v)
        if here is None or here == where:
            return v if here is not None or where == HOST else self._constant(v, where)
        key = (v, where)
        found = self._moves.get(key)
        if found is None:
            node = v.owner
            if node is not None and isinstance(node.op, TRANSFERS):
                found = self.at(node.inputs[0], where)
            elif isinstance(v, Constant):
                found = self._constant(v, where)
            else:
                op = (HostFromGpu(here) if where == HOST else
                      GpuFromHost(where) if here == HOST else GpuToGpu(where))
                found = op(v)
                self.loc[found] = where
            self._moves[key] = found
        return found

    def _constant(self, c, where):
        key = (c, where)
        found = self._moves.get(key)
        if found is None:
            if where == HOST:
                found = Constant(c.type.clone(context=HOST), c.data.get())
            else:
                data = to_device(np.asarray(c.host_data, c.dtype), where)
                found = Constant(c.type.clone(context=where.name), data)
            self._moves[key] = found
        return found

    def choose(self, node, inputs):
        """Where `node` runs: 'cpu' or a Context."""
        op = node.op
        if not isinstance(op, HostOp) or op.gpu_class is None:
            return HOST
        data = [v for k, v in enumerate(inputs) if k not in op.shape_only
                and k not in op.host_inputs]
        shapes = [inputs[k] for k in op.shape_only if k < len(inputs)]
        devices = [h for h in map(self.home, data + shapes)
                   if h is not None and h != HOST and not isinstance(h, str)]
        if devices:
            target = devices[0]
        elif self.default is None or (isinstance(op, _Elemwise) and all(v.ndim == 0 for v in data)):
            return HOST
        else:
            target = self.default
        return target if op.gpu_supported(node, target) else HOST

    def transform(self, node, inputs):
        op = node.op
        if isinstance(op, Transfer):
            return [self.at(inputs[0], location(op.target))]
        target = self.choose(node, inputs)
        new = []
        for k, v in enumerate(inputs):
            if k in op.shape_only or (target != HOST and k not in op.host_inputs and v.ndim == 0
                                      and op.takes_host_scalar(k)
                                      and self.home(v) in (None, HOST)):
                new.append(v)
            elif target == HOST or k in op.host_inputs:
                new.append(self.at(v, HOST))
            else:
                new.append(self.at(v, target))
        outs = remake(node, new, op if target == HOST else op.on(target))
        for o in outs:
            self.loc[o] = HOST if o.type.on_host else target
        return outs


def place(outputs, wanted, default):
    """The placed graph of `outputs`, each output moved to its `wanted` location."""
    placer = Placer(default)
    placed, _ = rebuild(outputs, placer.transform)
    return [placer.at(v, w) for v, w in zip(placed, wanted)]
