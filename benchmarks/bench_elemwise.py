"""Elementwise throughput and per-call overhead: gpuarr beside numpy and pyopencl.array.

    python -m pytest benchmarks/bench_elemwise.py --benchmark-enable
    python benchmarks/bench_elemwise.py [--device cl:nvidia] [--log2n 28]   # ratio table

GB/s counts bytes read plus bytes written. Every timed gpuarr call ends with a sync of its
output; the latency rows time many calls and one sync, per call.
"""

import argparse

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clmath as clmath
import pytest
from ratios import print_table, run_case

import gpuarr as ga

LOG2N = 24
SMALL = 16


@ga.fuse
def fused(a, b):
    return a * b + ga.exp(a) - b


def workloads(ctx, n):
    """name -> (bytes moved, {library: callable}) for the same operation in each library."""
    rng = np.random.default_rng(0)
    ha, hb = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    a, b = ga.asarray(ha, context=ctx), ga.asarray(hb, context=ctx)
    q = ctx.queue
    pa, pb = cla.to_device(q, ha), cla.to_device(q, hb)
    small = ga.ones(SMALL, dtype="float32", context=ctx)
    psmall = cla.to_device(q, np.ones(SMALL, np.float32))
    copy_dst = ga.empty(n, dtype="float32", context=ctx)

    def buffer_copy():
        cl.enqueue_copy(q, copy_dst.data, a.data, byte_count=4 * n)
        q.finish()

    return {
        "copy (bandwidth limit)": (8 * n, {"opencl": buffer_copy}),
        "exp(a)": (8 * n, {"gpuarr": lambda: ga.exp(a).sync(),
                           "pyopencl": lambda: clmath.exp(pa).finish(),
                           "numpy": lambda: np.exp(ha)}),
        "a + b": (12 * n, {"gpuarr": lambda: (a + b).sync(),
                           "pyopencl": lambda: (pa + pb).finish(),
                           "numpy": lambda: ha + hb}),
        "a*b + exp(a) - b fused": (12 * n, {"gpuarr": lambda: fused(a, b).sync(),
                                            "numpy": lambda: ha * hb + np.exp(ha) - hb}),
        "a*b + exp(a) - b unfused": (12 * n, {
            "gpuarr": lambda: (a * b + ga.exp(a) - b).sync(),
            "pyopencl": lambda: (pa * pb + clmath.exp(pa) - pb).finish()}),
        "small a + b latency": (None, {"gpuarr": _many(lambda: small + small, ctx.sync),
                                       "pyopencl": _many(lambda: psmall + psmall, q.finish)}),
    }


def _many(fn, sync, calls=1000):
    def run():
        for _ in range(calls):
            fn()
        sync()
    run.calls = calls
    return run


@pytest.fixture(scope="module")
def cases():
    return workloads(ga.get_context(), 1 << LOG2N)


@pytest.mark.parametrize("name", ["exp(a)", "a + b", "a*b + exp(a) - b fused",
                                  "a*b + exp(a) - b unfused", "small a + b latency"])
@pytest.mark.parametrize("lib", ["gpuarr", "pyopencl", "numpy"])
def test_elemwise(benchmark, cases, name, lib):
    run_case(benchmark, cases, name, lib)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--log2n", type=int, default=LOG2N)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    ctx = ga.get_context(args.device)
    print(f"device {ctx.devname}: {ctx.device.describe()}; n = 2^{args.log2n} float32")
    print_table(workloads(ctx, 1 << args.log2n), args.repeats)


if __name__ == "__main__":
    main()
