"""Helpers of the symbolic layer's tests (test_symbolic*.py): `from symbolic_helpers import ...`."""

import contextlib

import numpy as np
from conftest import flags


def on(where):
    """A block compiling for the device (where='device', the default) or the host
    (where='host': flag device=cpu)."""
    return flags(device="cpu") if where == "host" else contextlib.nullcontext()


def ops(f):
    """The class names of a compiled function's ops, in the order they run."""
    return [type(n.op).__name__ for n in f.maker.fgraph.toposort()]


def central_differences(fn, a, h=1e-6):
    """d fn / d a by central differences with step h (fn: array -> float), in float64."""
    g = np.zeros(a.shape, np.float64)
    for i in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[i] += h
        lo[i] -= h
        g[i] = (fn(hi) - fn(lo)) / (2 * h)
    return g


def numeric_grad(f, values, k, h):
    """Central differences of the scalar f(*values)[0] (a compiled function's first output)
    with respect to values[k]."""
    values = list(values)

    def at(x):
        return float(f(*values[:k], x, *values[k + 1:])[0])
    return central_differences(at, np.array(values[k]), h)
