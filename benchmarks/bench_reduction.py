"""Reduction throughput: gpuarr beside numpy and pyopencl.array (bytes read per second).

    python -m pytest benchmarks/bench_reduction.py --benchmark-enable
    python benchmarks/bench_reduction.py [--device cl:nvidia] [--log2n 24] [--side 4096]
"""

import argparse

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest
from ratios import print_table, run_case

import gpuarr as ga

LOG2N, SIDE = 24, 4096


def workloads(ctx, n, side):
    """name -> (bytes read, {library: callable})."""
    rng = np.random.default_rng(0)
    h = rng.random(n, dtype=np.float32)
    m = rng.random((side, side), dtype=np.float32)
    x, xm = ga.asarray(h, context=ctx), ga.asarray(m, context=ctx)
    q = ctx.queue
    px = cla.to_device(q, h)
    dst = ga.empty(n, dtype="float32", context=ctx)

    def buffer_copy():
        cl.enqueue_copy(q, dst.data, x.data, byte_count=4 * n)
        q.finish()

    return {
        "copy (bandwidth limit, read+write)": (8 * n, {"opencl": buffer_copy}),
        "sum": (4 * n, {"gpuarr": lambda: x.sum().sync(), "numpy": lambda: h.sum(),
                        "pyopencl": lambda: cla.sum(px).get()}),
        "sum(axis=0)": (4 * side * side, {"gpuarr": lambda: xm.sum(axis=0).sync(),
                                          "numpy": lambda: m.sum(axis=0)}),
        "sum(axis=1)": (4 * side * side, {"gpuarr": lambda: xm.sum(axis=1).sync(),
                                          "numpy": lambda: m.sum(axis=1)}),
        "max": (4 * n, {"gpuarr": lambda: x.max().sync(), "numpy": lambda: h.max()}),
        "argmax": (4 * n, {"gpuarr": lambda: x.argmax().sync(), "numpy": lambda: h.argmax()}),
        "cumsum (bytes read+written)": (8 * n, {"gpuarr": lambda: x.cumsum().sync(),
                                                "numpy": lambda: np.cumsum(h)}),
    }


@pytest.fixture(scope="module")
def cases():
    return workloads(ga.get_context(), 1 << LOG2N, SIDE)


@pytest.mark.parametrize("name", ["sum", "sum(axis=0)", "sum(axis=1)", "max", "argmax",
                                  "cumsum (bytes read+written)"])
@pytest.mark.parametrize("lib", ["gpuarr", "numpy", "pyopencl"])
def test_reduction(benchmark, cases, name, lib):
    run_case(benchmark, cases, name, lib)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--log2n", type=int, default=LOG2N)
    parser.add_argument("--side", type=int, default=SIDE)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    ctx = ga.get_context(args.device)
    print(f"device {ctx.devname}: {ctx.device.describe()}; n = 2^{args.log2n}, "
          f"matrix {args.side}^2 float32")
    print_table(workloads(ctx, 1 << args.log2n, args.side), args.repeats)


if __name__ == "__main__":
    main()
