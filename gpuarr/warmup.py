"""python -m gpuarr warmup: build the kernels everyday numpy-style code needs, once, so that a
new process finds them in the driver's and gpuarr's caches (a cold PoCL cache costs about
1.4 s per kernel; a warm one about 0.03 s).

The workload is ordinary gpuarr calls (not a list of kernel keys): whatever kernels those
calls build today are the ones warmed, so the list cannot fall behind the code.
"""

import time

import numpy as np

import gpuarr as ga

__all__ = ["DTYPES", "SHAPES", "warmup"]

# the dtypes a StandardScaler-, regression- or indexing-style script meets
DTYPES = ("float32", "float64", "int64", "bool")
# Kernels differ by layout class, not by size: rows a multiple of the vector width or not,
# narrow products, reductions over short and long axes.
SHAPES = ((64, 8), (37, 7), (2000, 20))


def _floating(x):
    """Arithmetic, functions, reductions and products of a float array."""
    y = x * 2.0 + 1.0
    z = (x - x.mean(axis=0)) / ga.sqrt(x.var(axis=0) + 1e-12)
    _ = ga.exp(-abs(z)), ga.log1p(ga.abs(y)), ga.tanh(y), y ** 2, ga.maximum(x, y)
    _ = x.sum(), x.sum(axis=0), x.sum(axis=1), x.mean(), x.std(axis=0), x.max(axis=0)
    _ = x.min(), x.argmax(axis=1), ga.where(x > 0, x, 0.0), x < y, ga.isnan(x)
    _ = x @ x.T, x.T @ x, x @ x[0], x.astype("int64"), ga.cumsum(x, axis=0)
    return z


def _integral(x):
    """Arithmetic, comparisons, reductions and gathers of an integer or boolean array."""
    _ = x + x, x * x, x == x, x.sum(), x.sum(axis=0), x.max(), x.astype("float64")
    _ = ga.take(x, ga.asarray(np.array([0, 1]), context=x.context), axis=0)
    return x


def warmup(context=None, dtypes=DTYPES):
    """Run the workload on `context` (default: the default context) for each of `dtypes` the
    device has (float64 needs fp64); return {dtype: seconds}."""
    ctx = ga.get_context(context)
    seconds = {}
    rng = np.random.default_rng(0)
    for name in dtypes:
        if np.dtype(name) == np.float64 and not ctx.device.fp64:
            continue
        t0 = time.perf_counter()
        for shape in SHAPES:
            x = ga.asarray(rng.standard_normal(shape).astype(name), context=ctx)
            (_floating if np.dtype(name).kind == "f" else _integral)(x).get()
        seconds[name] = time.perf_counter() - t0
    return seconds
