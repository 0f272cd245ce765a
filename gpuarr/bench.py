"""Benchmark cases: the one table that `python -m gpuarr bench` and benchmarks/ (pytest-benchmark)
both run, and the report (text, markdown, JSON, bar chart).

A case is one operation with its sizes (per size class `tiny`/`quick`/`full` and device class
`cpu`/`gpu`) and one implementation per library: numpy on the host, gpuarr on each context,
pyopencl.array on the same devices, cupy when importable, plus variants (`gpuarr:tf32`, ...).
Every implementation's result is checked against numpy's before it is timed; every timed call
ends with a sync of its output; latency cases make `calls` calls, sync once, and report per call.
GB/s counts bytes read plus bytes written (a transfer: the bytes moved).
"""

import argparse
import contextlib
import dataclasses
import datetime
import functools
import json
import math
import os
import platform
import re
import sys
import time

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clmath as clmath
import pyopencl.tools as cl_tools

import gpuarr as ga

from . import blas, clblast, collectives, config, fft, sorting
from .context import get_context, list_devices
from .errors import GpuArrayError

__all__ = [
    "ALL3", "ALL4", "CASES", "FAMILIES", "FLOOR_SOURCE", "LATENCY_CALLS", "LIBS", "LOOP",
    "LOOP_CALLS", "PEERS", "POLICY", "RATIOS_NOTE", "SIZES", "SIZE_ENV", "SQUARE", "VECTOR",
    "Backend", "Case", "Impl", "Instance", "Skip", "Timed", "add_arguments", "backends", "check",
    "command", "cpu_name", "cupy_usable", "derive", "devices", "flags", "instances",
    "latency_ratios", "main", "markdown", "measure", "op", "parse_override", "parse_value", "plot",
    "rank_backend", "run_all", "script", "text", "to_host", "vector_label", "write_markdown",
]

SIZES = ("tiny", "quick", "full")
LIBS = ("numpy", "gpuarr", "pyopencl", "cupy")
SIZE_ENV = "GPUARR_BENCH_SIZE"
# size class -> (min rounds, seconds per measurement, max rounds)
POLICY = {"tiny": (1, 0.0, 1), "quick": (3, 0.25, 10), "full": (5, 1.0, 50)}


class Skip(Exception):
    """An implementation that cannot run here; the message says why."""


# ---------------------------------------------------------------------------------- backends

class Backend:
    """One library on one device (gpuarr and pyopencl: a gpuarr Context; collectives: two)."""

    def __init__(self, lib, contexts=()):
        self.lib = lib
        self.contexts = tuple(contexts)
        self.ctx = self.contexts[0] if self.contexts else None
        if lib == "numpy":
            self.xp, self.device, self.cls = np, "host", "cpu"
        elif lib == "cupy":
            import cupy

            self.xp, self.device, self.cls = cupy, f"cuda:{cupy.cuda.Device().id}", "gpu"
        else:
            self.xp = ga if lib == "gpuarr" else None
            self.device = "+".join(c.devname for c in self.contexts)
            self.cls = "gpu" if self.ctx.device.is_gpu else "cpu"
        if lib == "pyopencl":
            self.queue = cl.CommandQueue(self.ctx.cl_context, self.ctx.device.cl_device)
            self.pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(self.queue))

    def describe(self):
        if self.lib == "numpy":
            return f"numpy {np.__version__} on the host ({cpu_name()}, {os.cpu_count()} cores)"
        if self.lib == "cupy":
            name = self.xp.cuda.runtime.getDeviceProperties(self.xp.cuda.Device().id)["name"]
            name = name.decode() if isinstance(name, bytes) else name
            return f"cupy {self.xp.__version__} on {self.device}: {name}"
        return f"{self.lib} on {self.device}: {self.ctx.device.describe()}"

    def asarray(self, host):
        """`host` (a numpy array) on this backend's device; numpy keeps it as it is."""
        if self.lib == "gpuarr":
            return self.xp.asarray(host, context=self.ctx)
        if self.lib == "pyopencl":
            return cla.to_device(self.queue, host, allocator=self.pool)
        return self.xp.asarray(host)

    def get(self, out):
        """`out` (an array, a scalar, or a tuple/list of them) as numpy."""
        if isinstance(out, tuple | list):
            return tuple(self.get(o) for o in out)
        if self.lib == "cupy":
            return self.xp.asnumpy(out)
        if isinstance(out, np.ndarray | np.generic) or not hasattr(out, "get"):
            return np.asarray(out)
        return out.get()

    def sync(self, out):
        """Wait for `out` (what one call returned) to be computed."""
        if self.lib == "numpy":
            return
        if self.lib == "cupy":
            self.xp.cuda.get_current_stream().synchronize()
        elif self.lib == "pyopencl":
            self.queue.finish()  # the backend's own queue: what it waits for is the output
        else:
            leaves = [o for o in (out if isinstance(out, tuple | list) else [out])
                      if hasattr(o, "sync")]
            for o in leaves:
                o.sync()
            if not leaves:
                self.ctx.queue.finish()


def cpu_name():
    """The host CPU's model name (Linux), else platform's guess."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def cupy_usable():
    """Whether cupy imports and sees a CUDA device."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # ImportError, or CUDA errors of every kind when no driver is there
        return False


def devices(spec=None):
    """The gpuarr contexts to benchmark: `spec` (comma separated device strings or context
    names; 'default' is gpuarr's default context), else every usable device."""
    if not spec:
        return [get_context(d.name) for d in list_devices() if d.usable]
    return [get_context() if s.strip() == "default" else get_context(s.strip())
            for s in spec.split(",") if s.strip()]


def backends(contexts, libs=None):
    """numpy, then gpuarr and pyopencl on each context, then cupy (if usable), as chosen by
    `libs` (comma separated; default all)."""
    chosen = [lib.strip() for lib in libs.split(",")] if libs else list(LIBS)
    unknown = set(chosen) - set(LIBS)
    if unknown:
        raise GpuArrayError(f"unknown libraries {sorted(unknown)}; choose from {', '.join(LIBS)}")
    out = [Backend("numpy")] if "numpy" in chosen else []
    for lib in ("gpuarr", "pyopencl"):
        if lib in chosen:
            out += [Backend(lib, [c]) for c in contexts]
    if "cupy" in chosen and cupy_usable():
        out.append(Backend("cupy"))
    return out


def rank_backend(contexts):
    """gpuarr over two contexts of one platform for the collectives: the first chosen device
    and the next usable device of its platform; None if there is none."""
    if not contexts:
        return None
    first = contexts[0]
    peers = [c for c in contexts[1:] if c.device.platform_index == first.device.platform_index]
    peers += [get_context(d.name) for d in list_devices()
              if d.usable and d.platform_index == first.device.platform_index
              and d.name != first.devname]
    return Backend("gpuarr", [first, peers[0]]) if peers else None


# ------------------------------------------------------------------------------------- cases

@dataclasses.dataclass(frozen=True)
class Impl:
    """How one library (or variant) runs a case: make(backend, *host_inputs) returns `run`
    (one call, returning its output) or (run, result), result(output) giving numpy values
    to check; `available(backend)` says whether to list it at all."""

    make: object
    available: object = None
    rtol: float | None = None


def op(fn):
    """An Impl from fn(xp, *device_inputs): the inputs are uploaded once, outside the timing."""
    def make(be, *host):
        dev = [be.asarray(h) for h in host]
        return lambda: fn(be.xp, *dev)
    return Impl(make)


def to_host(impl):
    """`impl` with each call's result brought back to the host."""
    def make(be, *host):
        run = impl.make(be, *host)
        return lambda: be.get(run())
    return Impl(make)


@dataclasses.dataclass(eq=False)
class Case:
    """One operation at a list of sizes, implemented by several libraries."""

    family: str
    op: str
    param: str  # the size parameter's name (what --set changes)
    sizes: dict  # size class -> (values on CPUs, values on GPUs)
    data: object  # data(value, **fixed) -> tuple of host inputs
    impls: dict  # 'lib', 'lib:variant' or a tuple of libs -> Impl
    work: object  # work(value, **fixed) -> bytes or flops per call (unit), or None
    unit: str = "B"  # 'B', 'FLOP' or '' (time only)
    label: object = None  # label(value, **fixed) -> '2^24 float32'
    fixed: dict = dataclasses.field(default_factory=dict)
    calls: dict | None = None  # size class -> calls per sync (latency cases)
    ref: str = "copy"  # ratio column: 'copy' (the device's copy GB/s) or 'best' (best peer)
    curated: bool = False  # in `python -m gpuarr bench` without --all
    host_max: float = math.inf  # numpy runs sizes up to this value only
    want: object = None  # want(*inputs) -> the expected result; default numpy's
    view: object = None  # view(output) -> the part of every output that is checked
    rtol: float = 1e-5
    ranks: int = 0  # > 0: runs over that many contexts (collectives)
    also: dict = dataclasses.field(default_factory=dict)  # other family -> its sizes there

    def __post_init__(self):
        flat = {}
        for key, impl in self.impls.items():
            for k in key if isinstance(key, tuple) else (key,):
                flat[k] = impl
        self.impls = flat

    def values(self, size, cls, override=None, sizes=None):
        if override and self.param in override:
            return list(override[self.param])
        cpu, gpu = (sizes or self.sizes)[size]
        return list(cpu if cls == "cpu" else gpu)

    def params(self, value, override=None):
        fixed = {k: (override[k][0] if override and k in override else v)
                 for k, v in self.fixed.items()}
        return {self.param: value, **fixed}


def _floats(n, *shape, seed=0):
    return np.random.default_rng(seed).random(shape or (n,), dtype=np.float32)


def _pow2(n):
    return f"2^{n.bit_length() - 1}" if n > 1 and n & (n - 1) == 0 else f"{n:,}"


def _bytes(n):
    for unit, scale in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << scale:
            return f"{n / (1 << scale):.3g} {unit}"
    return f"{n} B"


def vector_label(n, **_):
    return f"{_pow2(n)} float32"


def _sizes(tiny, quick, full):
    """{size class: (cpu values, gpu values)}; a plain list serves both classes."""
    def pair(v):
        return v if isinstance(v, tuple) else (v, v)
    return {"tiny": pair(tiny), "quick": pair(quick), "full": pair(full)}


VECTOR = _sizes([1000], ([1 << 22], [1 << 24]), ([1 << 24], [1 << 28]))
SORT_SIZES = _sizes([1000], ([1 << 20], [1 << 22]), ([1 << 24], [1 << 24, 1 << 26]))
SQUARE = _sizes([65], ([2048], [8192]), ([4096], [16384]))


# -- helpers of single implementations

def _four_ops(xp):
    def four_ops(a, b):
        return a * b + xp.exp(a) - b
    return four_ops


@functools.cache
def _ga_fused():
    return ga.fuse(_four_ops(ga))


@functools.cache
def _cupy_fused():
    import cupy

    return cupy.fuse(kernel_name="four_ops")(_four_ops(cupy))


def _pyopencl_fused(be, a, b):
    from pyopencl.elementwise import ElementwiseKernel

    kernel = ElementwiseKernel(be.ctx.cl_context, "const float *a, const float *b, float *out",
                               "out[i] = a[i] * b[i] + exp(a[i]) - b[i]")
    da, db = be.asarray(a), be.asarray(b)

    def run():
        out = cla.empty_like(da)
        out.add_event(kernel(da, db, out, queue=be.queue))
        return out
    return run


FLOOR_SOURCE = """
__kernel void add(__global const float *a, __global const float *b, __global float *y,
                  const uint n) {
    size_t i = get_global_id(0);
    if (i < n) y[i] = a[i] + b[i];
}
"""


def _floor_add(be, a, b):
    """The floor of a small call on an OpenCL device: a kernel y = a + b built once, whose
    output is allocated per call from a pyopencl memory pool (as an array library's must be)
    and set as its one changed argument before the enqueue."""
    kernel = cl.Program(be.ctx.cl_context, FLOOR_SOURCE).build().add
    da, db = be.asarray(a), be.asarray(b)
    n = a.size
    kernel.set_arg(0, da.data)
    kernel.set_arg(1, db.data)
    kernel.set_arg(3, np.uint32(n))

    def run():
        out = be.pool.allocate(4 * n)
        kernel.set_arg(2, out)
        cl.enqueue_nd_range_kernel(be.queue, kernel, (n,), None)
        return out

    def result(out):
        host = np.empty(n, np.float32)
        cl.enqueue_copy(be.queue, host, out, is_blocking=True)
        return host
    return run, result


@contextlib.contextmanager
def flags(**values):
    """Run a block with some gpuarr flags changed."""
    saved = config.flags
    config.flags = dataclasses.replace(saved, **values)
    try:
        yield
    finally:
        config.flags = saved


def _with_flags(impl, available=None, rtol=None, **values):
    """`impl` run under flags `values`."""
    def make(be, *host):
        run = impl.make(be, *host)

        def flagged():
            with flags(**values):
                return run()
        return flagged
    return Impl(make, available, rtol)


def _mma(prec):
    def available(be):
        return be.lib == "gpuarr" and blas._mma_ok(be.ctx, prec)
    return available


def _clblast_available(be):
    return be.lib == "gpuarr" and clblast.available()


def _upload(be, h):
    return lambda: be.asarray(h)


def _download(be, h):
    x = be.asarray(h)
    be.sync(x)
    return lambda: be.get(x)


def _pyopencl_copy_if(be, h, mask):
    import pyopencl.algorithm as cl_algorithm

    x, m = be.asarray(h), be.asarray(mask.view(np.uint8))

    def run():
        out, count, _ = cl_algorithm.copy_if(x, "mask[i]", [("mask", m)], queue=be.queue)
        return out, count
    return run, lambda r: r[0].get()[:int(r[1].get())]


def _radix_only(impl):
    """`impl` with gpuarr's whole-row local-memory sort turned off (radix passes only)."""
    def make(be, *host):
        run = impl.make(be, *host)

        def radix():
            saved = sorting._rows_limit
            sorting._rows_limit = lambda ctx, rows: 0
            try:
                return run()
            finally:
                sorting._rows_limit = saved
        return radix
    return Impl(make, lambda be: be.lib == "gpuarr")


def _roundtrip(fn):
    """gpuarr by way of the host: download, numpy's fn, upload."""
    def make(be, *host):
        dev = [be.asarray(h) for h in host]
        return lambda: be.asarray(fn(*(d.get() for d in dev)))
    return Impl(make, lambda be: be.lib == "gpuarr")


def _all_reduce(ring):
    def make(be, h0, h1):
        xs = [ga.asarray(h, context=c) for h, c in zip((h0, h1), be.contexts)]
        outs = [ga.empty_like(x) for x in xs]

        def run():
            saved = collectives.RING_BYTES
            collectives.RING_BYTES = 0 if ring else 1 << 62
            try:
                return collectives.all_reduce(xs, "sum", dest=outs)
            finally:
                collectives.RING_BYTES = saved
        return run
    return Impl(make, lambda be: be.lib == "gpuarr" and len(be.contexts) > 1)


def _logreg_step(xp, state, x, y):
    """One SGD step of Theano's logistic regression (cross-entropy plus 0.01 |w|^2, rate 0.1)
    on `state` = [w, b]; returns (prediction, xent)."""
    w, b = state
    p = 1 / (1 + xp.exp(-(x @ w) - b))
    xent = -y * xp.log(p) - (1 - y) * xp.log(1 - p)
    g = (p - y) / x.shape[0]
    state[0] = w - 0.1 * (x.T @ g + 0.02 * w)
    state[1] = b - 0.1 * g.sum()
    return p > 0.5, xent


def _logreg_eager(be, x, y, w0):
    """The step written by hand on the library's arrays; like a compiled function, it takes
    the data from the host and returns its outputs to the host."""
    state = [be.asarray(w0), be.asarray(np.zeros((), np.float32))]

    def run():
        return be.get(_logreg_step(be.xp, state, be.asarray(x), be.asarray(y)))
    return run, lambda out: (*out, be.get(state[0]), be.get(state[1]))


def _logreg_symbolic(be, x, y, w0):
    """The step compiled by gpuarr.symbolic, as Theano's tutorial writes it."""
    try:
        import gpuarr.symbolic as T
    except ImportError as e:
        raise Skip(f"gpuarr.symbolic is not importable yet ({e})") from None
    missing = [n for n in ("fmatrix", "fvector", "shared", "exp", "log", "dot", "grad",
                           "function") if not hasattr(T, n)]
    if missing:
        raise Skip(f"gpuarr.symbolic has no {', '.join(missing)} yet")
    train, w, b = _logreg_function(be.ctx.name, w0)
    return (lambda: train(x, y),
            lambda out: (*(np.asarray(o) for o in out), w.get_value(), b.get_value()))


def _logreg_function(target, w0):
    """The step as Theano's tutorial writes it, compiled by gpuarr.symbolic with w and b
    shared on `target`: (train(x, y) -> [prediction, xent], w, b)."""
    import gpuarr.symbolic as T
    sx, sy = T.fmatrix("x"), T.fvector("y")
    w = T.shared(w0.copy(), name="w", target=target)
    b = T.shared(np.zeros((), np.float32), name="b", target=target)
    p_1 = 1 / (1 + T.exp(-T.dot(sx, w) - b))
    xent = -sy * T.log(p_1) - (1 - sy) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = T.grad(cost, [w, b])
    train = T.function(inputs=[sx, sy], outputs=[p_1 > 0.5, xent],
                       updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)])
    return train, w, b


def _logreg_data(samples, feats):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((samples, feats), dtype=np.float32)
    y = rng.integers(0, 2, samples).astype(np.float32)
    return x, y, (rng.standard_normal(feats, dtype=np.float32) * 0.01).astype(np.float32)


def _numpy_logreg(x, y, w0):
    state = [w0.copy(), np.zeros((), np.float32)]
    return (*_logreg_step(np, state, x, y), *state)


def _sklearn(be, name):
    """`make` of an estimator case: fit (and transform) on the library's arrays with
    scikit-learn's Array API dispatch on (numpy: off), results to the host."""
    os.environ.setdefault("SCIPY_ARRAY_API", "1")  # read when scipy is first imported
    try:
        import sklearn
        from sklearn import linear_model, preprocessing
    except ImportError as e:
        raise Skip(f"scikit-learn is not installed ({e})") from None
    if be.lib == "pyopencl":
        raise Skip("pyopencl.array is no Array API namespace")
    estimator = {"scaler": preprocessing.StandardScaler,
                 "logreg": lambda: linear_model.LogisticRegression(max_iter=50)}[name]

    def make(be, x, y):
        xd, yd = be.asarray(x), be.asarray(y)

        def run():
            with sklearn.config_context(array_api_dispatch=be.lib != "numpy"):
                est = estimator().fit(xd, yd)
                return be.get(est.transform(xd) if name == "scaler" else est.coef_)
        return run
    return Impl(make)


def _sklearn_want(name):
    def want(x, y):
        from sklearn import linear_model, preprocessing
        if name == "scaler":
            return preprocessing.StandardScaler().fit_transform(x)
        return linear_model.LogisticRegression(max_iter=50).fit(x, y).coef_
    return want


def _sklearn_data(samples, feats):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((samples, feats))
    return x, (x[:, 0] + 0.5 * rng.standard_normal(samples) > 0).astype(np.float64)


def _sort_data(n):
    rng = np.random.default_rng(0)
    return (rng.standard_normal(n, dtype=np.float32),)


def _uint64_keys(n):
    return (np.random.default_rng(0).integers(0, 2**64 - 1, n, np.uint64, endpoint=True),)


def _index_data(n, row):
    rng = np.random.default_rng(0)
    return _floats(n), rng.random(n) < 0.5


ALL3 = ("numpy", "gpuarr", "cupy")


_MATMUL = op(lambda xp, a: a @ a)


def _rank_n(k):
    """The side of the rank-k GEMM case's output: 4096 (256 at the tiny sizes, k < 64)."""
    return 4096 if k >= 64 else 256


def _square_matmul(dtype, full, host_max, rtol, extra=None):
    """GEMM case: a @ a for n x n matrices of dtype (full: the full size class's cpu and gpu
    sizes), beside CLBlast (and `extra` backends); the check compares the first 64 rows
    (numpy's full product is slow)."""
    name = np.dtype(dtype).name
    return Case("gemm", "matmul square", "n", _sizes([67], ([512], [1024, 4096]), full),
                lambda n: (_floats(0, n, n).astype(dtype),),
                {ALL3: _MATMUL,
                 "gpuarr:clblast": _with_flags(_MATMUL, _clblast_available,
                                               blas_backend="clblast"), **(extra or {})},
                lambda n: 2 * n**3, "FLOP", label=lambda n: f"{n}x{n} {name}", ref="best",
                curated=True, host_max=host_max, want=lambda a: a[:64] @ a,
                view=lambda c: c[:64], rtol=rtol)
ALL4 = ("numpy", "gpuarr", "pyopencl", "cupy")


def _four_step(impl):
    """`impl` with gpuarr.fft's four-step split of long rows on (fft.ROWS)."""
    def make(be, *host):
        run = impl.make(be, *host)

        def split():
            saved = dict(fft.ROWS)
            fft.ROWS.update(cpu=True, gpu=True)
            try:
                return run()
            finally:
                fft.ROWS.update(saved)
        return split
    return Impl(make, lambda be: be.lib == "gpuarr")


def _fft_case(title, fn, dtype, param, sizes, shape, label, curated=False, four_step=False):
    """An FFT case: fn(xp.fft, a) on complex `dtype` data of shape(value); GFLOP/s counts
    5 N log2 N per transform of N (the customary figure, whatever the algorithm)."""
    def work(**p):
        dims = shape(p[param])
        axes = dims[-2:] if title.startswith("fft2") else dims[-1:]
        return 5 * math.prod(dims) * sum(math.log2(d) for d in axes)

    def data(**p):
        return ((_floats(0, *shape(p[param])) + 1j * _floats(0, *shape(p[param]), seed=1))
                .astype(dtype),)
    impl = op(lambda xp, a: fn(xp.fft, a))
    impls = {ALL3: impl, **({"gpuarr:four-step": _four_step(impl)} if four_step else {})}
    return Case("fft", title, param, sizes, data, impls, work, "FLOP",
                label=lambda **p: label(p[param]), ref="best", curated=curated,
                rtol=1e-4 if np.dtype(dtype) == np.complex64 else 1e-10)


def _fft_cases(dtype, full_1d, curated):
    """1-d powers of two, a prime length, 4096 rows of 1024, a square 2-d transform."""
    name = np.dtype(dtype).name
    one, two = (lambda f, a: f.fft(a)), (lambda f, a: f.fft2(a))
    return [
        _fft_case(f"fft {name}", one, dtype, "n",
                  _sizes([1 << 10], ([1 << 16, 1 << 20], [1 << 20, 1 << 24]), full_1d),
                  lambda n: (n,), lambda n: f"{_pow2(n)} {name}", curated, four_step=True),
        _fft_case(f"fft prime length {name}", one, dtype, "n", _sizes([101], [10007], [10007]),
                  lambda n: (n,), lambda n: f"{n} {name}"),
        _fft_case(f"fft batched rows {name}", one, dtype, "rows", _sizes([8], [4096], [4096]),
                  lambda rows: (rows, 1024), lambda rows: f"{rows} x 1024 {name}"),
        _fft_case(f"fft2 {name}", two, dtype, "side", _sizes([64], ([1024], [4096]), [4096]),
                  lambda side: (side, side), lambda side: f"{side}x{side} {name}"),
    ]


_EXP = op(lambda xp, a: xp.exp(a))
_PYOPENCL_EXP = op(lambda xp, a: clmath.exp(a))
LOOP = 230_400  # Theano's classic check: exp of 10 * 30 * 768 values
LOOP_CALLS = {"tiny": 3, "quick": 1000, "full": 1000}
LATENCY_CALLS = {"tiny": 10, "quick": 300, "full": 2000}

CASES = [
    # -- transfers: GB/s of the bytes moved
    Case("transfer", "host->device", "nbytes", _sizes([1 << 16], [1 << 26], [1 << 28]),
         lambda nbytes: (_floats(nbytes // 4),), {("gpuarr", "pyopencl", "cupy"): Impl(_upload)},
         lambda nbytes: nbytes, label=lambda nbytes: f"{_bytes(nbytes)} float32", ref="best",
         curated=True, want=lambda h: h),
    Case("transfer", "device->host", "nbytes", _sizes([1 << 16], [1 << 26], [1 << 28]),
         lambda nbytes: (_floats(nbytes // 4),),
         {("gpuarr", "pyopencl", "cupy"): Impl(_download)},
         lambda nbytes: nbytes, label=lambda nbytes: f"{_bytes(nbytes)} float32", ref="best",
         curated=True, want=lambda h: h),
    # -- elementwise: copy first, the bandwidth every GB/s figure is compared with
    Case("elementwise", "copy", "n", VECTOR, lambda n: (_floats(n),),
         {ALL4: op(lambda xp, a: a.copy())}, lambda n: 8 * n, label=vector_label, curated=True),
    Case("elementwise", "exp", "n", VECTOR, lambda n: (_floats(n),),
         {ALL3: _EXP, "pyopencl": _PYOPENCL_EXP}, lambda n: 8 * n, label=vector_label,
         curated=True),
    Case("elementwise", "a + b", "n", VECTOR, lambda n: (_floats(n), _floats(n, seed=1)),
         {ALL4: op(lambda xp, a, b: a + b)}, lambda n: 12 * n, label=vector_label,
         curated=True),
    Case("elementwise", "a*b + exp(a) - b fused", "n", VECTOR,
         lambda n: (_floats(n), _floats(n, seed=1)),
         {"numpy": op(lambda xp, a, b: _four_ops(xp)(a, b)),
          "gpuarr": op(lambda xp, a, b: _ga_fused()(a, b)),
          "pyopencl": Impl(_pyopencl_fused),
          "cupy": op(lambda xp, a, b: _cupy_fused()(a, b))},
         lambda n: 12 * n, label=vector_label, curated=True),
    Case("elementwise", "a*b + exp(a) - b unfused", "n", VECTOR,
         lambda n: (_floats(n), _floats(n, seed=1)),
         {ALL3: op(lambda xp, a, b: _four_ops(xp)(a, b)),
          "pyopencl": op(lambda xp, a, b: a * b + clmath.exp(a) - b)},
         lambda n: 12 * n, label=vector_label),
    # -- reductions: GB/s of the bytes read
    Case("reduction", "sum", "n", VECTOR, lambda n: (_floats(n),),
         {ALL3: op(lambda xp, a: a.sum()), "pyopencl": op(lambda xp, a: cla.sum(a))},
         lambda n: 4 * n, label=vector_label, curated=True, rtol=1e-4),
    Case("reduction", "sum(axis=0)", "side", SQUARE, lambda side: (_floats(0, side, side),),
         {ALL3: op(lambda xp, a: a.sum(axis=0))}, lambda side: 4 * side * side,
         label=lambda side: f"{side}x{side} float32", curated=True, rtol=1e-4),
    Case("reduction", "sum(axis=1)", "side", SQUARE, lambda side: (_floats(0, side, side),),
         {ALL3: op(lambda xp, a: a.sum(axis=1))}, lambda side: 4 * side * side,
         label=lambda side: f"{side}x{side} float32", curated=True, rtol=1e-4),
    Case("reduction", "argmax", "n", VECTOR, lambda n: (_floats(n),),
         {ALL3: op(lambda xp, a: a.argmax())}, lambda n: 4 * n, label=vector_label,
         curated=True),
    Case("reduction", "max", "n", VECTOR, lambda n: (_floats(n),),
         {ALL3: op(lambda xp, a: a.max()), "pyopencl": op(lambda xp, a: cla.max(a))},
         lambda n: 4 * n, label=vector_label),
    # checked against a float64 cumsum: numpy's float32 one drifts past 1e-3 at 2^28 terms
    Case("reduction", "cumsum", "n", VECTOR, lambda n: (_floats(n),),
         {ALL3: op(lambda xp, a: xp.cumsum(a))}, lambda n: 8 * n, label=vector_label,
         rtol=1e-3, want=lambda a: np.cumsum(a, dtype=np.float64),
         also={"sort": _sizes([1000], ([1 << 20], [1 << 22]), [1 << 24])}),
    # -- GEMM: TFLOP/s
    _square_matmul(np.float32, ([256, 512, 1024, 2048], [256, 512, 1024, 2048, 4096, 8192]),
                   4096, 1e-4,
                   {"gpuarr:fp32": _with_flags(_MATMUL, _mma("tf32"), gemm_precision="fp32"),
                    "gpuarr:tf32": _with_flags(_MATMUL, _mma("tf32"), 1e-2,
                                               gemm_precision="tf32")}),
    _square_matmul(np.float64, ([256, 1024], [1024, 2048, 4096, 8192]), 2048, 1e-10),
    # sides that are not multiples of the tiles (the edge tiles' loads), and the rank-k
    # updates of a blocked factorization (short k, large outputs)
    *(Case("gemm", "matmul ragged square", "n", _sizes([67], ([1000], [1000, 3000]),
                                                     ([1000], [1000, 3000])),
           lambda n, dt=dt: (_floats(0, n, n).astype(dt),), {ALL3: _MATMUL},
           lambda n: 2 * n**3, "FLOP", label=lambda n, dt=dt: f"{n}x{n} {dt}", ref="best",
           host_max=1000, want=lambda a: a[:64] @ a, view=lambda c: c[:64],
           rtol=1e-4 if dt == "float32" else 1e-10) for dt in ("float32", "float64")),
    *(Case("gemm", "matmul rank-k (n x k) @ (k x n)", "k", _sizes([16], [64, 256], [64, 256]),
           lambda k, dt=dt: (_floats(0, _rank_n(k), k).astype(dt),
                             _floats(0, k, _rank_n(k), seed=1).astype(dt)),
           {ALL3: op(lambda xp, a, b: a @ b)}, lambda k: 2 * _rank_n(k) ** 2 * k, "FLOP",
           label=lambda k, dt=dt: f"n={_rank_n(k)} k={k} {dt}", ref="best",
           want=lambda a, b: a[:64] @ b, view=lambda c: c[:64],
           rtol=1e-4 if dt == "float32" else 1e-10) for dt in ("float32", "float64")),
    Case("gemm", "matmul tall-skinny (m x 64) @ (64 x 64)", "m",
         _sizes([1000], ([1 << 16], [1 << 20]), ([1 << 18], [1 << 22])),
         lambda m: (_floats(0, m, 64), _floats(0, 64, 64, seed=1)),
         {ALL3: op(lambda xp, a, b: a @ b)}, lambda m: 2 * m * 64 * 64, "FLOP",
         label=lambda m: f"m={_pow2(m)} float32", ref="best", curated=True, rtol=1e-4),
    Case("gemm", "matmul x.T @ x, x (m x 64)", "m",
         _sizes([1000], ([1 << 16], [1 << 20]), ([1 << 18], [1 << 22])),
         lambda m: (_floats(0, m, 64),),
         {ALL3: op(lambda xp, a: a.T @ a)}, lambda m: 2 * m * 64 * 64, "FLOP",
         label=lambda m: f"m={_pow2(m)} float32", ref="best", rtol=1e-3),
    Case("gemm", "gemv A @ x (bytes of A read)", "side", SQUARE,
         lambda side: (_floats(0, side, side), _floats(side, seed=1)),
         {ALL3: op(lambda xp, a, v: a @ v)}, lambda side: 4 * side * side,
         label=lambda side: f"{side}x{side} float32", rtol=1e-4),
    # A's columns (a column-major operand): GPUs split k to fill the device
    Case("gemm", "gemv A.T @ x (bytes of A read)", "side", _sizes([65], [4096], [4096]),
         lambda side: (_floats(0, side, side), _floats(side, seed=1)),
         {ALL3: op(lambda xp, a, v: a.T @ v)}, lambda side: 4 * side * side,
         label=lambda side: f"{side}x{side} float32", rtol=1e-4),
    # a training step's products: the bias-free gradients of a 784-500-10 MLP's layers
    Case("gemm", "matmul narrow x.T @ d, x (2000 x m), d (2000 x 10)", "m",
         _sizes([50], [500], [500]),
         lambda m: (_floats(0, 2000, m), _floats(0, 2000, 10, seed=1)),
         {ALL3: op(lambda xp, a, b: a.T @ b)}, lambda m: 2 * 2000 * m * 10, "FLOP",
         label=lambda m: f"m={m} float32", rtol=1e-4),
    Case("gemm", "matmul x.T @ h, x (2000 x 784), h (2000 x n)", "n",
         _sizes([20], [500], [500]),
         lambda n: (_floats(0, 2000, 784), _floats(0, 2000, n, seed=1)),
         {ALL3: op(lambda xp, a, b: a.T @ b)}, lambda n: 2 * 2000 * 784 * n, "FLOP",
         label=lambda n: f"n={n} float32", rtol=1e-4),
    Case("gemm", "batched matmul 64x64", "batch", _sizes([3], ([256], [4096]), ([1024], [16384])),
         lambda batch: (_floats(0, batch, 64, 64),),
         {ALL3: op(lambda xp, a: a @ a)}, lambda batch: 2 * batch * 64**3, "FLOP",
         label=lambda batch: f"{batch} x 64^3 float32", ref="best", rtol=1e-4),
    Case("gemm", "batched matmul broadcast (b, 1, 64, 64) @ (1, b, 64, 64)", "batch",
         _sizes([2], ([8], [32]), ([16], [128])),
         lambda batch: (_floats(0, batch, 1, 64, 64), _floats(0, 1, batch, 64, 64, seed=1)),
         {ALL3: op(lambda xp, a, b: a @ b)}, lambda batch: 2 * batch * batch * 64**3, "FLOP",
         label=lambda batch: f"{batch} x {batch} x 64^3 float32", ref="best", rtol=1e-4),
    # small products, many calls and one sync: where the per-call host cost decides
    Case("gemm", "matmul small square, time per call", "n",
         _sizes([16], ([16, 64, 256], [16, 64, 256, 1024]),
                ([16, 64, 256], [16, 64, 256, 1024])),
         lambda n: (_floats(0, n, n), _floats(0, n, n, seed=1)),
         {ALL3: op(lambda xp, a, b: a @ b)}, lambda n: 2 * n**3, "FLOP",
         label=lambda n: f"{n}x{n} float32", calls={"tiny": 3, "quick": 100, "full": 300},
         ref="best", curated=True, rtol=1e-4),
    # -- latency: per-call host time of small calls (many calls, one sync, time per call);
    # pyopencl[floor] is the least an array library's call can cost on an OpenCL device
    Case("latency", "x + y", "small", _sizes([16], [16], [16]),
         lambda small: (_floats(small), _floats(small, seed=1)),
         {ALL4: op(lambda xp, a, b: a + b), "pyopencl:floor": Impl(_floor_add)},
         lambda small: None, "", label=lambda small: f"{small} float32",
         calls=LATENCY_CALLS, ref="best", curated=True),
    Case("latency", "exp loop, kept on device", "length",
         _sizes([16, LOOP], [16, LOOP], [16, LOOP]),
         lambda length: (_floats(length),), {ALL3: _EXP, "pyopencl": _PYOPENCL_EXP},
         lambda length: 8 * length, label=lambda length: f"{length:,} float32",
         calls=LOOP_CALLS, ref="best", curated=True),
    Case("latency", "exp loop, result to host", "length", _sizes([LOOP], [LOOP], [LOOP]),
         lambda length: (_floats(length),),
         {ALL3: to_host(_EXP), "pyopencl": to_host(_PYOPENCL_EXP)},
         lambda length: 8 * length, label=lambda length: f"{length:,} float32",
         calls=LOOP_CALLS, ref="best", curated=True),
    Case("latency", "x.sum()", "small", _sizes([16, 1000], [16, 1000], [16, 1000]),
         lambda small: (_floats(small),),
         {ALL3: op(lambda xp, a: a.sum()), "pyopencl": op(lambda xp, a: cla.sum(a))},
         lambda small: None, "", label=lambda small: f"{small:,} float32",
         calls=LATENCY_CALLS, ref="best", curated=True, rtol=1e-4),
    Case("latency", "x @ y", "side", _sizes([16], [16], [16]),
         lambda side: (_floats(0, side, side), _floats(0, side, side, seed=1)),
         {ALL3: op(lambda xp, a, b: a @ b)}, lambda side: None, "",
         label=lambda side: f"{side}x{side} float32", calls=LATENCY_CALLS, ref="best",
         curated=True, rtol=1e-4),
    Case("latency", "x[idx]", "small", _sizes([16], [16], [16]),
         lambda small, length: (_floats(length), np.random.default_rng(0).integers(
             0, length, small, dtype=np.int64)),
         {ALL3: op(lambda xp, a, i: a[i]), "pyopencl": op(lambda xp, a, i: cla.take(a, i))},
         lambda small, length: None, "",
         label=lambda small, length: f"{small} of {length:,} float32", fixed={"length": 1000},
         calls=LATENCY_CALLS, ref="best", curated=True),
    # -- sorting: GB/s of the keys (and indices) read plus written once
    Case("sort", "sort float32", "n", SORT_SIZES,
         _sort_data,
         {ALL3: op(lambda xp, a: xp.sort(a)), "gpuarr:roundtrip": _roundtrip(np.sort)},
         lambda n: 8 * n, label=vector_label, curated=True),
    Case("sort", "argsort float32", "n", SORT_SIZES,
         _sort_data,
         {"numpy": op(lambda xp, a: np.argsort(a, kind="stable")),
          ("gpuarr", "cupy"): op(lambda xp, a: xp.argsort(a)),
          "gpuarr:roundtrip": _roundtrip(lambda a: np.argsort(a, kind="stable"))},
         lambda n: 16 * n, label=vector_label),
    Case("sort", "sort uint64 keys", "n", SORT_SIZES, _uint64_keys,
         {ALL3: op(lambda xp, a: xp.sort(a))}, lambda n: 16 * n,
         label=lambda n: f"{_pow2(n)} uint64"),
    Case("sort", "argsort uint64 keys", "n", SORT_SIZES, _uint64_keys,
         {"numpy": op(lambda xp, a: np.argsort(a, kind="stable")),
          ("gpuarr", "cupy"): op(lambda xp, a: xp.argsort(a))},
         lambda n: 20 * n, label=lambda n: f"{_pow2(n)} uint64"),
    Case("sort", "sort rows", "n", _sizes([1 << 12], ([1 << 20], [1 << 22]), [1 << 24]),
         lambda n, row: (_sort_data(n)[0].reshape(-1, row),),
         {ALL3: op(lambda xp, a: xp.sort(a)),
          "gpuarr:radix": _radix_only(op(lambda xp, a: xp.sort(a)))},
         lambda n, row: 8 * n, label=lambda n, row: f"{_pow2(n)} float32, rows of {row}",
         fixed={"row": 256}),
    Case("sort", "unique int32 (1000 values)", "n",
         _sizes([1000], ([1 << 20], [1 << 22]), [1 << 24]),
         lambda n: (np.random.default_rng(0).integers(0, 1000, n, dtype=np.int32),),
         {ALL3: op(lambda xp, a: xp.unique(a))}, lambda n: 4 * n,
         label=lambda n: f"{_pow2(n)} int32"),
    Case("sort", "searchsorted (n queries)", "n",
         _sizes([1000], ([1 << 20], [1 << 22]), [1 << 24]),
         lambda n: (np.sort(_sort_data(n)[0]), _floats(n, seed=1)),
         {ALL3: op(lambda xp, s, q: xp.searchsorted(s, q))}, lambda n: 16 * n,
         label=vector_label),
    # -- advanced indexing: GB/s of the bytes the operation must move
    Case("indexing", "x[mask] compaction", "n",
         _sizes([1 << 12], ([1 << 22], [1 << 24]), ([1 << 24], [1 << 26])), _index_data,
         {ALL3: op(lambda xp, a, m: a[m]), "pyopencl": Impl(_pyopencl_copy_if)},
         lambda n, row: 7 * n, label=vector_label, fixed={"row": 256}),
    Case("indexing", "x[idx] random gather", "n",
         _sizes([1 << 12], ([1 << 22], [1 << 24]), ([1 << 24], [1 << 26])),
         lambda n: (_floats(n), np.random.default_rng(0).integers(0, n, n, dtype=np.int64)),
         {ALL3: op(lambda xp, a, i: a[i]), "pyopencl": op(lambda xp, a, i: cla.take(a, i))},
         lambda n: 16 * n, label=vector_label),
    Case("indexing", "x[rows] gather of rows", "n",
         _sizes([1 << 12], ([1 << 22], [1 << 24]), ([1 << 24], [1 << 26])),
         lambda n, row: (_floats(n).reshape(-1, row),
                         np.random.default_rng(0).integers(0, n // row, n // row)),
         {ALL3: op(lambda xp, a, r: a[r])}, lambda n, row: 8 * n + 8 * (n // row),
         label=lambda n, row: f"{_pow2(n)} float32, rows of {row}", fixed={"row": 256}),
    Case("indexing", "x[idx] gather of 64-float rows", "rows",
         _sizes([64], ([1 << 16], [1 << 18]), ([1 << 18], [1 << 20])),
         lambda rows: (_floats(rows * 64).reshape(rows, 64),
                       np.random.default_rng(1).integers(0, rows, rows)),
         {ALL3: op(lambda xp, a, i: a[i]),
          "gpuarr:take": op(lambda xp, a, i: xp.take(a, i, axis=0))},
         lambda rows: 8 * 64 * rows + 8 * rows, label=lambda rows: f"{rows:,} x 64 float32"),
    Case("indexing", "nonzero(mask)", "n",
         _sizes([1 << 12], ([1 << 22], [1 << 24]), ([1 << 24], [1 << 26])),
         lambda n, row: (_index_data(n, row)[1],),
         {ALL3: op(lambda xp, m: xp.nonzero(m)[0])}, lambda n, row: 5 * n,
         label=lambda n, row: f"{_pow2(n)} bool", fixed={"row": 256}),
    # -- FFT: GFLOP/s as 5 N log2 N
    *_fft_cases(np.complex64, ([1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24],
                               [1 << 20, 1 << 22, 1 << 24, 1 << 26]), True),
    *_fft_cases(np.complex128, ([1 << 16, 1 << 20, 1 << 22], [1 << 20, 1 << 24]), False),
    # -- collectives in one process: bus GB/s, 2 (ranks - 1) / ranks x bytes
    Case("collectives", "all_reduce sum, 2 contexts", "nbytes",
         _sizes([1 << 12], [1 << 22], [1 << 20, 1 << 24, 1 << 26]),
         lambda nbytes: (_floats(nbytes // 4), _floats(nbytes // 4, seed=1)),
         {"numpy": op(lambda xp, a, b: (a + b, a + b)),
          "gpuarr:tree": _all_reduce(False), "gpuarr:ring": _all_reduce(True)},
         lambda nbytes: nbytes, label=lambda nbytes: f"{_bytes(nbytes)} float32", ref="best",
         curated=True, ranks=2),
    # -- the symbolic layer's compiled training step beside the same step by hand
    Case("training", "logistic regression SGD step", "samples",
         _sizes([40], [400], ([400, 4000], [400, 40000])),
         _logreg_data,
         {("numpy", "gpuarr", "cupy"): Impl(_logreg_eager),
          "gpuarr:symbolic": Impl(_logreg_symbolic, lambda be: be.lib == "gpuarr")},
         lambda samples, feats: None, "", label=lambda samples, feats: f"{samples}x{feats}",
         fixed={"feats": 784}, ref="best", curated=True, want=_numpy_logreg, rtol=1e-4,
         also={"latency": _sizes([40], [400], [400])}),
    # -- scikit-learn with gpuarr (cupy) arrays and Array API dispatch, beside numpy
    *(Case("sklearn", title, "samples", _sizes([200], [2000], [2000, 20000]), _sklearn_data,
           {("numpy", "gpuarr", "cupy"): Impl(lambda be, *h, n=name: _sklearn(be, n).make(be, *h))},
           lambda samples, feats: None, "", label=lambda samples, feats: f"{samples}x{feats}",
           fixed={"feats": 20}, ref="best", want=_sklearn_want(name), rtol=rtol)
      for name, title, rtol in (("scaler", "StandardScaler fit_transform", 1e-9),
                                ("logreg", "LogisticRegression fit", 1e-4))),
]
FAMILIES = tuple(dict.fromkeys(c.family for c in CASES))


# --------------------------------------------------------------------------------- instances

@functools.lru_cache(maxsize=1)
def _host(case, key):
    """The host inputs of one case at one size and numpy's answer (one kept at a time)."""
    params = dict(key)
    inputs = case.data(**params)
    if case.want is not None:
        want = case.want(*inputs)
    else:
        be = Backend("numpy")
        made = case.impls["numpy"].make(be, *inputs)
        run, result = made if isinstance(made, tuple) else (made, be.get)
        out = run()
        want = result(case.view(out) if case.view else out)
    return inputs, want


class Timed:
    """What gets timed: `calls` calls of `run`, then a sync of the last one's output."""

    def __init__(self, run, sync, calls):
        self.run, self.sync, self.calls = run, sync, calls

    def round(self):
        for _ in range(self.calls - 1):
            self.run()
        self.sync(self.run())

    def stepper(self):
        """One call per invocation, syncing after every `calls`-th (pytest-benchmark's
        pedantic mode with iterations=calls then reports the time per call)."""
        count = [0]

        def step():
            out = self.run()
            count[0] += 1
            if count[0] % self.calls == 0:
                self.sync(out)
        return step


@dataclasses.dataclass(eq=False)
class Instance:
    """One case at one size on one backend (and variant)."""

    case: Case
    params: dict
    backend: Backend
    variant: str  # '' or 'tf32', ...
    size: str
    reason: str = ""  # a reason to skip, known before setup
    family: str = ""  # the family it runs under (a case's own, or one of its `also`)

    @property
    def key(self):
        return self.backend.lib + (f":{self.variant}" if self.variant else "")

    @property
    def backend_name(self):
        be = self.backend
        lib = be.lib + (f"[{self.variant}]" if self.variant else "")
        return lib if be.lib == "numpy" else f"{lib} {be.device}"

    @property
    def label(self):
        return (self.case.label or vector_label)(**self.params)

    @property
    def group(self):
        return f"{self.case.op}, {self.label}"

    @property
    def id(self):
        """The pytest id: 'exp-2^22_float32-gpuarr_cl0:0'."""
        return re.sub(r"\s+", "_", f"{self.group}-{self.backend_name}".replace(", ", "-"))

    @property
    def calls(self):
        return self.case.calls[self.size] if self.case.calls else 1

    def prepare(self):
        """Set up, run once, check against numpy; the Timed to measure. Raises Skip or
        AssertionError (naming the backend and the case)."""
        if self.reason:
            raise Skip(self.reason)
        case, be = self.case, self.backend
        inputs, want = _host(case, tuple(sorted(self.params.items())))
        impl = case.impls[self.key]
        made = impl.make(be, *inputs)
        run, result = made if isinstance(made, tuple) else (made, be.get)
        out = run()
        got = result(case.view(out) if case.view else out)
        rtol = impl.rtol or case.rtol
        check(got, want, rtol, f"{self.backend_name} on {self.group}")
        return Timed(run, be.sync, self.calls)

    def result(self, seconds=None, status="ok", note=""):
        case = self.case
        return {
            "family": self.family or case.family, "op": case.op, "label": self.label,
            "group": self.group, "params": self.params, "backend": self.backend_name,
            "lib": self.backend.lib, "variant": self.variant, "device": self.backend.device,
            "calls": self.calls, "work": case.work(**self.params), "unit": case.unit,
            "ref": case.ref, "seconds": seconds, "status": status, "note": note,
        }


def check(got, want, rtol, what):
    """AssertionError unless `got` matches numpy's `want` (arrays or tuples of them)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), f"{what}: {len(want)} outputs"
        for i, (g, w) in enumerate(zip(got, want)):
            check(g, w, rtol, f"{what}, output {i}")
        return
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype.kind in "fc":  # absolute error scaled to the data: cancellation is fine
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale,
                                   err_msg=f"{what} differs from numpy")
    else:
        np.testing.assert_array_equal(got, want, err_msg=f"{what} differs from numpy")


def instances(size, backend_list, contexts, families=None, curated=False, only=None,
              override=None, reference=False):
    """Every (case, size, backend, variant) to run, in table order; with `reference`, the copy
    too where a chosen case's ratio needs it."""
    classes = list(dict.fromkeys(b.cls for b in backend_list if b.lib != "numpy")) or ["cpu"]
    ranked = rank_backend(contexts) if any(b.lib == "gpuarr" for b in backend_list) else None

    def chosen(case):
        """(family, sizes): the family `case` runs under, its own or one of `also` that was
        asked for, and its sizes there (None: the case's own); None if not chosen."""
        if curated and not case.curated:
            return None
        for family in (case.family, *case.also):
            name = f"{family} {case.op}".lower()
            if (not families or family in families) and not (
                    only and not any(o.lower() in name for o in only)):
                return family, case.also.get(family)
        return None

    copy = next(c for c in CASES if c.family == "elementwise" and c.op == "copy")
    reference = reference and any(chosen(c) and c.ref == "copy" for c in CASES)
    out = []
    for case in CASES:
        picked = chosen(case) or (reference and case is copy and (case.family, None))
        if not picked:
            continue
        family, sizes = picked
        pool = backend_list
        if case.ranks:
            pool = [b for b in backend_list if b.lib == "numpy"] + ([ranked] if ranked else [])
        values = list(dict.fromkeys(v for cls in classes
                                    for v in case.values(size, cls, override, sizes)))
        for value in values:
            params = case.params(value, override)
            for be in pool:
                if be.lib == "numpy":
                    if value > case.host_max and not (override and case.param in override):
                        continue
                elif value not in case.values(size, be.cls, override, sizes):
                    continue
                for key, impl in case.impls.items():
                    lib, _, variant = key.partition(":")
                    if lib == be.lib and (impl.available is None or impl.available(be)):
                        out.append(Instance(case, params, be, variant, size, family=family))
            if case.ranks and contexts and not ranked and any(
                    b.lib == "gpuarr" for b in backend_list):
                out.append(Instance(
                    case, params, Backend("gpuarr", contexts[:1]), f"{case.ranks} contexts", size,
                    reason=f"needs a second usable device on the platform of "
                           f"{contexts[0].devname} (PoCL: POCL_DEVICES='pthread pthread')",
                    family=family))
    return out


# ------------------------------------------------------------------------------- measurement

def measure(timed, size, repeats=None):
    """Seconds per call: best round after one warm-up, rounds as POLICY[size] says."""
    least, budget, most = POLICY[size]
    least = repeats or least
    timed.round()
    times = []
    start = time.perf_counter()
    while len(times) < least or (time.perf_counter() - start < budget and len(times) < most):
        t0 = time.perf_counter()
        timed.round()
        times.append(time.perf_counter() - t0)
    return min(times) / timed.calls


def run_all(insts, size, repeats=None, progress=None, after=None):
    """Measure every instance; a list of result dicts (failures and skips included)."""
    results = []
    for inst in insts:
        try:
            timed = inst.prepare()
            res = inst.result(measure(timed, size, repeats))
        except Skip as e:
            res = inst.result(status="skipped", note=str(e))
        except AssertionError as e:
            res = inst.result(status="failed", note=str(e).strip().splitlines()[0])
        except Exception as e:  # a broken case is reported and the run goes on
            res = inst.result(status="failed", note=f"{type(e).__name__}: {e}".splitlines()[0])
        timed = None  # the case's device arrays go before the next case allocates its own
        results.append(res)
        if progress:
            progress(res)
        if after:
            after(results)
    return results


# ------------------------------------------------------------------------------------ report

def derive(results):
    """Each ok result with rate (GB/s or TFLOP/s), x numpy (speedup) and ratio (to the
    device's copy GB/s or to the best peer), as `ratio_to` says."""
    ok = [r for r in results if r["status"] == "ok"]
    copy = {}
    for r in ok:
        if r["family"] == "elementwise" and r["op"] == "copy":
            copy[r["device"]] = max(copy.get(r["device"], 0), r["work"] / r["seconds"])
    groups = {}
    for r in ok:
        groups.setdefault(r["group"], []).append(r)
    out = []
    for r in results:
        r = dict(r, rate=None, x_numpy=None, ratio=None, ratio_to=None)
        if r["status"] == "ok":
            peers = groups[r["group"]]
            numpy = [p["seconds"] for p in peers if p["lib"] == "numpy"]
            if r["work"]:
                r["rate"] = r["work"] / r["seconds"] / (1e12 if r["unit"] == "FLOP" else 1e9)
            if numpy:
                r["x_numpy"] = numpy[0] / r["seconds"]
            if r["ref"] == "copy" and r["work"] and r["device"] in copy:
                r["ratio"], r["ratio_to"] = r["work"] / r["seconds"] / copy[r["device"]], "copy"
            elif r["ref"] == "best" or r["work"]:
                r["ratio"] = min(p["seconds"] for p in peers) / r["seconds"]
                r["ratio_to"] = "best"
        out.append(r)
    return out


PEERS = (("floor", "pyopencl", "floor"), ("pyopencl", "pyopencl", ""), ("cupy", "cupy", ""))
RATIOS_NOTE = ("time per call of each gpuarr row over its peer's (below 1: gpuarr is faster). "
               "floor: pyopencl[floor] on the same device, a y = a + b kernel on 16 floats built "
               "once, output from a memory pool, its argument set per call, enqueue; pyopencl "
               "and cupy: pyopencl.array and CuPy in the same group (CuPy's own GPU).")


def latency_ratios(results):
    """The latency family's gpuarr rows beside the floor, pyopencl.array and CuPy: dicts
    with group, backend, seconds and one ratio (gpuarr's time over the peer's) per PEERS."""
    ok = [r for r in results if r["status"] == "ok" and r["family"] == "latency"]
    floor = {r["device"]: r["seconds"] for r in ok
             if r["lib"] == "pyopencl" and r["variant"] == "floor"}
    rows = []
    for r in ok:
        if r["lib"] != "gpuarr":
            continue
        row = {"group": r["group"], "backend": r["backend"], "seconds": r["seconds"]}
        for name, lib, variant in PEERS:
            if name == "floor":
                peer = floor.get(r["device"])
            else:  # pyopencl on the same device; cupy on its own
                peer = next((p["seconds"] for p in ok if p["group"] == r["group"]
                             and p["lib"] == lib and p["variant"] == variant
                             and (lib == "cupy" or p["device"] == r["device"])), None)
            row[name] = r["seconds"] / peer if peer else None
        rows.append(row)
    return rows


def _ratio_cells(row):
    return [row["group"], row["backend"], _time(row["seconds"]),
            *("-" if row[name] is None else f"{row[name]:.2f}x" for name, _, _ in PEERS)]


def _time(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def _num(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}" if x < 100 else f"{x:.0f}"


def _rate(r):
    if r["rate"] is None:
        return "-"
    unit = "TFLOP/s" if r["unit"] == "FLOP" else "GB/s"
    return f"{_num(r['rate'], 3 if r['unit'] == 'FLOP' else 2)} {unit}"


def _rows(rs):
    """Table cells of one group's results."""
    for r in rs:
        if r["status"] != "ok":
            yield [r["backend"], r["status"], "", "", r["note"]]
        else:
            ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f} of {r['ratio_to']}"
            yield [r["backend"], _time(r["seconds"]), _rate(r), _num(r["x_numpy"]), ratio]


def text(results):
    """The report as plain text: a table per operation."""
    lines = []
    head = ["backend", "time", "throughput", "x numpy", "ratio"]
    for group, rs in _grouped(derive(results)):
        r0 = rs[0]
        work = ""
        if r0["work"]:
            work = (f"; {r0['work'] / 1e9:.3g} GFLOP" if r0["unit"] == "FLOP"
                    else f"; {_bytes(r0['work'])} moved") + " per call"
        calls = f"; {r0['calls']} calls, one sync, time per call" if r0["calls"] > 1 else ""
        lines.append(f"\n{r0['family']}: {group}{work}{calls}")
        rows = [head, *_rows(rs)]
        widths = [max(len(row[i]) for row in rows if len(row) > i) for i in range(4)]
        for row in rows:
            if row[1] in ("skipped", "failed"):
                lines.append(f"  {row[0]:{widths[0]}}  {row[1]}: {row[4]}")
                continue
            lines.append("  " + "  ".join([row[0].ljust(widths[0]), row[1].rjust(widths[1]),
                                           row[2].rjust(widths[2]), row[3].rjust(7),
                                           row[4]]).rstrip())
    ratios = latency_ratios(results)
    if ratios:
        rows = [["operation", "backend", "time", *(f"/ {name}" for name, _, _ in PEERS)],
                *map(_ratio_cells, ratios)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines += ["", "latency ratios: " + RATIOS_NOTE]
        for row in rows:
            lines.append("  " + "  ".join([row[0].ljust(widths[0]), row[1].ljust(widths[1]),
                                           *(c.rjust(w) for c, w in zip(row[2:], widths[2:]))]))
    return "\n".join(lines)


def _grouped(results):
    groups = {}
    for r in results:
        groups.setdefault(r["group"], []).append(r)
    return list(groups.items())


def markdown(results, meta):
    """The report as markdown: what ran where, then a table per family."""
    out = [f"Measured {meta['date']} with `{meta['command']}` (size class {meta['size']}).",
           "", *[f"- {d}" for d in meta["backends"]], ""]
    if meta.get("note"):
        out += [meta["note"], ""]
    by_family = {}
    for group, rs in _grouped(derive(results)):
        by_family.setdefault(rs[0]["family"], []).append((group, rs))
    for family, groups in by_family.items():
        out += [f"#### {family}", "",
                "| operation | backend | time | throughput | x numpy | ratio |",
                "| --- | --- | ---: | ---: | ---: | --- |"]
        for group, rs in groups:
            calls = f" ({rs[0]['calls']} calls, per call)" if rs[0]["calls"] > 1 else ""
            for i, row in enumerate(_rows(rs)):
                name = f"{group}{calls}" if i == 0 else ""
                if row[1] in ("skipped", "failed"):
                    out.append(f"| {name} | {row[0]} | {row[1]}: {row[4]} | | | |")
                else:
                    out.append(f"| {name} | {' | '.join(row)} |")
        out.append("")
        ratios = latency_ratios(results) if family == "latency" else []
        if ratios:
            out += [f"Ratios: {RATIOS_NOTE}", "",
                    "| operation | backend | time | " + " | ".join(
                        f"/ {name}" for name, _, _ in PEERS) + " |",
                    "| --- | --- | ---: | " + " | ".join("---:" for _ in PEERS) + " |",
                    *(f"| {' | '.join(_ratio_cells(row))} |" for row in ratios), ""]
    return "\n".join(out)


def write_markdown(path, body, section=None):
    """Write `body` to `path`, or with `section` replace what lies between that section's
    markers in `path` (`<!-- gpuarr bench NAME -->` ... `<!-- /gpuarr bench NAME -->`)."""
    if not section:
        with open(path, "w") as f:
            f.write(body + "\n")
        return
    start, end = f"<!-- gpuarr bench {section} -->", f"<!-- /gpuarr bench {section} -->"
    with open(path) as f:
        doc = f.read()
    a, b = doc.find(start), doc.find(end)
    if a < 0 or b < a:
        raise GpuArrayError(f"{path} has no section {section!r}: expected the lines {start} "
                            f"and {end}")
    with open(path, "w") as f:
        f.write(doc[:a + len(start)] + "\n" + body + "\n" + doc[b:])


def plot(results, path):
    """A bar chart of each backend's speedup over numpy, per operation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [(g, [r for r in rs if r["x_numpy"] is not None and r["lib"] != "numpy"])
              for g, rs in _grouped(derive(results))]
    groups = [(g, rs) for g, rs in groups if rs]
    names = list(dict.fromkeys(r["backend"] for _, rs in groups for r in rs))
    colors = {n: f"C{i % 10}" for i, n in enumerate(names)}
    fig, ax = plt.subplots(figsize=(10, 1 + 0.22 * sum(len(rs) + 1 for _, rs in groups)))
    y, ticks, seen = 0, [], set()
    for _, rs in groups:  # one bar per backend of the group, colours kept per backend
        ticks.append(y + (len(rs) - 1) / 2)
        for r in rs:
            label = None if r["backend"] in seen else r["backend"]
            seen.add(r["backend"])
            ax.barh(y, r["x_numpy"], color=colors[r["backend"]], label=label)
            y += 1
        y += 1
    ax.set_yticks(ticks, [g for g, _ in groups], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("speedup over numpy (time of numpy / time)")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------------------------- command

def parse_value(text):
    """'2^24', '64M', '4096' -> an int (K, M, G: binary multiples)."""
    text = text.strip()
    if "^" in text:
        base, exp = text.split("^")
        return int(base) ** int(exp)
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.upper().rstrip("B").rstrip("I")
    return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)


def parse_override(items):
    """['n=2^24,2^26', 'row=128'] -> {'n': [2**24, 2**26], 'row': [128]}."""
    out = {}
    for item in items or ():
        name, sep, values = item.partition("=")
        if not sep:
            raise GpuArrayError(f"--set takes NAME=VALUE[,VALUE...], not {item!r}")
        out[name.strip()] = [parse_value(v) for v in values.split(",")]
    return out


def add_arguments(p):
    p.add_argument("--quick", action="store_true", help="the quick sizes (same as --size quick)")
    p.add_argument("--size", choices=SIZES, help=f"size class (default: ${SIZE_ENV}, else full)")
    p.add_argument("--device", action="append", help="device string or context name, "
                   "repeatable or comma separated (default: every usable device)")
    p.add_argument("--libs", help=f"comma separated, of {','.join(LIBS)} (default: all there)")
    p.add_argument("--all", action="store_true", help="every case, not only the curated ones")
    p.add_argument("--family", action="append", help=f"only these families ({', '.join(FAMILIES)})")
    p.add_argument("--only", action="append", help="only cases whose 'family op' contains this")
    p.add_argument("--set", action="append", metavar="PARAM=V[,V...]",
                   help="replace a size parameter (n, side, m, nbytes, ...): e.g. n=2^26")
    p.add_argument("--repeats", type=int, help="least timed rounds per measurement")
    p.add_argument("--json", metavar="OUT.json", help="write the results as JSON")
    p.add_argument("--markdown", metavar="OUT.md", help="write the tables as markdown")
    p.add_argument("--section", help="with --markdown: replace this marked section of the file")
    p.add_argument("--plot", metavar="OUT.png", help="bar chart of speedups (needs matplotlib)")
    p.add_argument("--from-json", metavar="IN.json", help="report a saved run, measure nothing")
    p.add_argument("--note", help="a line to print under the markdown heading")


def _meta(args, size, backend_list):
    env = [f"{k}={os.environ[k]!r}" for k in ("POCL_DEVICES", "GPUARR_FLAGS", SIZE_ENV)
           if os.environ.get(k)]
    cmd = getattr(args, "cmdline", None) or " ".join(["python -m gpuarr bench", *sys.argv[2:]])
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join([*env, cmd]),
        "size": size, "backends": [b.describe() for b in backend_list],
        "host": f"{cpu_name()}, {os.cpu_count()} cores", "python": platform.python_version(),
        "note": args.note or "",
    }


def command(args):
    """`python -m gpuarr bench`: measure, print a table per operation, write what was asked."""
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("error: --plot needs matplotlib: pip install 'gpuarr[plot]' (or matplotlib)",
                  file=sys.stderr)
            return 2
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        meta, results = saved["meta"], saved["results"]
        if args.note:
            meta["note"] = args.note
    else:
        size = "quick" if args.quick else args.size or os.environ.get(SIZE_ENV) or "full"
        if size not in SIZES:
            raise GpuArrayError(f"size class {size!r}: expected one of {', '.join(SIZES)}")
        contexts = devices(",".join(args.device) if args.device else None)
        backend_list = backends(contexts, args.libs)
        insts = instances(size, backend_list, contexts, args.family, not args.all, args.only,
                          parse_override(args.set), reference=True)
        meta = _meta(args, size, backend_list)
        print(f"{len(insts)} measurements, size class {size}:", file=sys.stderr)
        for d in meta["backends"]:
            print(f"  {d}", file=sys.stderr)

        def progress(r):
            shown = _time(r["seconds"]) if r["status"] == "ok" else f"{r['status']}: {r['note']}"
            print(f"  {r['group']} | {r['backend']}: {shown}", file=sys.stderr, flush=True)

        def save(results):  # after every measurement: a run cut short keeps what it measured
            if args.json:
                with open(args.json, "w") as f:
                    json.dump({"meta": meta, "results": results}, f, indent=1)

        results = run_all(insts, size, args.repeats, progress, save)
    print(f"gpuarr bench, {meta['date']}, size class {meta['size']}; host {meta['host']}")
    for d in meta["backends"]:
        print(f"  {d}")
    print(text(results))
    if args.markdown:
        write_markdown(args.markdown, markdown(results, meta), args.section)
    if args.plot:
        plot(results, args.plot)
    failed = [r for r in results if r["status"] == "failed"]
    for r in failed:
        print(f"FAILED: {r['group']} | {r['backend']}: {r['note']}", file=sys.stderr)
    return 1 if failed else 0


def main(argv=None, prog="python -m gpuarr bench", cmdline=None):
    """The command with its own parser (for scripts)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    args.cmdline = cmdline
    try:
        return command(args)
    except GpuArrayError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def script(families, argv=None, **aliases):
    """main() of a benchmarks/bench_*.py script: every case of `families` with the command's
    flags; `aliases` keep a script's own flags, each a --set template (log2n='n=2^{}')."""
    argv = sys.argv[1:] if argv is None else list(argv)
    pre = argparse.ArgumentParser(add_help=False)
    for name in aliases:
        pre.add_argument(f"--{name}")
    known, rest = pre.parse_known_args(argv)
    sets = [f"--set={aliases[k].format(v)}" for k, v in vars(known).items() if v is not None]
    prog = os.path.basename(sys.argv[0])
    return main(["--all", *(f"--family={f}" for f in families), *sets, *rest], prog=prog,
                cmdline=" ".join(["python", f"benchmarks/{prog}", *argv]))
