"""Inner graphs of control-flow ops (scan, ifelse): a graph compiled once with `function`,
its inputs set before each call.

The inputs become shared variables living where the op runs (the host or its context), so
placement puts the inner work there and the values an op hands in, GpuArrays included,
reach the inner function as they are; the outputs are kept at the same place.
"""

from .fgraph import rebuild, remake
from .function import function
from .shared import SharedVariable
from .transfer import transfer
from .types import HOST

__all__ = ["InnerFunction", "placeholder"]


def placeholder(type, name=None):
    """A free host variable of `type`'s dtype and pattern: an inner graph's input."""
    return type.clone(context=HOST)(name)


class InnerFunction:
    """`inputs` -> `outputs` compiled (in `mode`, function's) for `where` ('cpu' or a
    Context); inputs at the positions of `host_inputs` stay on the host. Set
    `cells[k].value`, then call."""

    def __init__(self, inputs, outputs, where, host_inputs=(), name=None, mode=None):
        memo = {}
        for k, v in enumerate(inputs):
            loc = HOST if where == HOST or k in host_inputs else where
            context = HOST if loc == HOST else loc.name
            memo[v] = SharedVariable(v.type.clone(context=context), None, loc, name=v.name)
        outs = rebuild(list(outputs), remake, memo)[0]
        target = HOST if where == HOST else where.name
        self.fn = function([], [transfer(o, target) for o in outs], mode=mode, name=name,
                           on_unused_input="ignore")
        self.cells = [memo[v].container for v in inputs]

    def __call__(self, *values):
        for c, v in zip(self.cells, values):
            c.value = v
        return self.fn()
