"""Transfers. Users write `x.transfer(target)` (a `Transfer` node: the value wanted on
`target`); placement turns each into `GpuFromHost`, `HostFromGpu`, `GpuToGpu` or nothing,
and inserts the same ops wherever an op reads a value that lives elsewhere."""

import numpy as np

from ..array import to_device
from ..errors import ArgumentTypeError
from .graph import Apply, Op, as_variable
from .types import HOST, location

__all__ = [
    "TRANSFERS", "GpuFromHost", "GpuToGpu", "HostFromGpu", "Transfer", "gpu_from_host",
    "host_from_gpu", "transfer",
]


class Transfer(Op):
    """x on `target`: 'cpu', None (the default device) or a context name."""

    __props__ = ("target",)

    def __init__(self, target):
        if target is not None and not isinstance(target, str):
            raise ArgumentTypeError(f"transfer target must be 'cpu', None or a context name, "
                                    f"not {target!r}")
        location(target)  # unknown names raise here, where the user wrote them
        self.target = target

    def make_node(self, x):
        x = as_variable(x)
        return Apply(self, [x], [x.type.clone(context=self.target)])

    def grad(self, node, grads):
        return [grads[0]]


class _Move(Op):
    """A copy between the host and a device, or between devices."""

    __props__ = ("ctx",)

    def __init__(self, ctx):
        self.ctx = ctx

    def make_node(self, x):
        x = as_variable(x)
        return Apply(self, [x], [x.type.clone(context=self.context_name)])

    def _describe(self):
        return ""

    def __str__(self):
        return f"{type(self).__name__}<{self.ctx.name}>"


class GpuFromHost(_Move):
    """Host to device `ctx`."""
    replayable = True

    @property
    def context_name(self):
        return self.ctx.name

    def fn(self, node):
        ctx = self.ctx
        return lambda v: to_device(np.asarray(v), ctx)


class HostFromGpu(_Move):
    """Device `ctx` to the host (a blocking copy)."""
    replayable = True

    def fn(self, node):
        return lambda v: v.get()

    def __str__(self):
        return "HostFromGpu(gpuarray)"


class GpuToGpu(_Move):
    """Another device to `ctx` (a device copy within a cl.Context, else staged in chunks
    through pinned host memory: gpuarr.staging)."""

    @property
    def context_name(self):
        return self.ctx.name

    def fn(self, node):
        ctx = self.ctx
        return lambda v: v.transfer(ctx)


TRANSFERS = (GpuFromHost, HostFromGpu, GpuToGpu)


def transfer(x, target):
    """x wanted on `target` ('cpu', None for the default device, or a context name)."""
    x = as_variable(x)
    return Transfer(target)(x)


def gpu_from_host(x, context=None):
    """x on the device `context` (default: the default device), as Theano's gpu_from_host."""
    return transfer(x, context)


def host_from_gpu(x):
    """`x` moved to the host (Theano's host_from_gpu): `transfer(x, "cpu")`."""
    return transfer(x, HOST)

