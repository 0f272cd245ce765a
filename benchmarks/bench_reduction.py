"""Reduction throughput: gpuarr beside numpy and pyopencl.array (bytes read per second).

    python -m pytest benchmarks/bench_reduction.py --benchmark-enable
    python benchmarks/bench_reduction.py [--device cl:nvidia] [--log2n 24] [--side 4096]
"""

import argparse
import time

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest

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
    }


def best_time(fn, repeats):
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


@pytest.fixture(scope="module")
def cases():
    return workloads(ga.get_context(), 1 << LOG2N, SIDE)


@pytest.mark.parametrize("name", ["sum", "sum(axis=0)", "sum(axis=1)", "max"])
@pytest.mark.parametrize("lib", ["gpuarr", "numpy", "pyopencl"])
def test_reduction(benchmark, cases, name, lib):
    fns = cases[name][1]
    if lib not in fns:
        pytest.skip(f"{lib} has no {name}")
    benchmark.group = name
    benchmark(fns[lib])


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
    rows = [(name, nbytes, {lib: best_time(fn, args.repeats) for lib, fn in fns.items()})
            for name, (nbytes, fns) in workloads(ctx, 1 << args.log2n, args.side).items()]
    copy = rows[0][1] / rows[0][2]["opencl"]
    print(f"{'operation':36s} {'library':9s} {'time':>11s} {'GB/s':>8s} {'x copy':>7s} "
          f"{'gpuarr faster by':>17s}")
    for name, nbytes, times in rows:
        for lib, t in times.items():
            gbs = nbytes / t
            ratio = t / times["gpuarr"] if "gpuarr" in times else float("nan")
            print(f"{name:36s} {lib:9s} {t * 1e3:9.3f}ms {gbs / 1e9:8.1f} {gbs / copy:7.2f} "
                  f"{ratio:17.2f}")


if __name__ == "__main__":
    main()
