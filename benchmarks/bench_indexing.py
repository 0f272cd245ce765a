"""Advanced indexing throughput: boolean-mask compaction and fancy-index gathers, gpuarr
beside numpy and pyopencl (pyopencl.algorithm.copy_if, pyopencl.array.take).

    python -m pytest benchmarks/bench_indexing.py --benchmark-enable
    python benchmarks/bench_indexing.py [--device cl:nvidia] [--log2n 26]   # ratio table
    GPUARR_BENCH_LOG2N=16 python -m pytest benchmarks/bench_indexing.py   # a smoke run

n = 2^log2n float32 elements. GB/s counts the bytes an operation must move: the compaction
reads the mask (1 byte per element) and the data and writes the selected half; a gather
reads the indices (8 bytes each) and the picked elements and writes them. "x copy" compares
that rate with a plain device copy of the data (read + write) in the same run; the target
for the compaction on a GPU is 0.5x. Every library's result is checked against numpy before
anything is timed; every timed call ends with its result on the device, synced.
"""

import argparse
import os

import numpy as np
import pyopencl as cl
import pyopencl.algorithm as cl_algorithm
import pyopencl.array as cla
import pytest
from ratios import print_table, run_case

import gpuarr as ga

LOG2N = int(os.environ.get("GPUARR_BENCH_LOG2N", 26))
ROW = 256  # elements per row in the row gather


def _checked(fns, want):
    """`fns` ({library: callable returning a host array}) checked against numpy's `want`;
    returns the callables the timing runs."""
    for lib, (run, result) in fns.items():
        got = result(run())
        np.testing.assert_array_equal(got, want, err_msg=f"{lib} differs from numpy")
    return {lib: run for lib, (run, _) in fns.items()}


def workloads(ctx, n):
    """name -> (bytes moved, {library: callable}) for the same operation in each library."""
    rng = np.random.default_rng(0)
    h = rng.random(n, dtype=np.float32)
    hmask = rng.random(n) < 0.5
    hidx = rng.integers(0, n, n, dtype=np.int64)
    hrows = rng.integers(0, n // ROW, n // ROW, dtype=np.int64)
    h2 = h.reshape(n // ROW, ROW)
    q = ctx.queue
    x, mask, idx = (ga.asarray(a, context=ctx) for a in (h, hmask, hidx))
    rows, x2 = ga.asarray(hrows, context=ctx), x.reshape(n // ROW, ROW)
    px, pmask, pidx = (cla.to_device(q, a) for a in (h, hmask.view(np.uint8), hidx))
    copy_dst = ga.empty(n, dtype="float32", context=ctx)
    selected = int(hmask.sum())

    def buffer_copy():
        cl.enqueue_copy(q, copy_dst.data, x.data, byte_count=4 * n)
        q.finish()
        return copy_dst

    def synced(fn):
        def run():
            out = fn()
            out.sync()
            return out
        return run

    def pyopencl_copy_if():
        out, count, _ = cl_algorithm.copy_if(px, "mask[i]", [("mask", pmask)])
        q.finish()
        return out, count

    def pyopencl_take():
        out = cla.take(px, pidx)
        q.finish()
        return out

    return {
        "copy (bandwidth limit)": (8 * n, _checked(
            {"opencl": (buffer_copy, lambda r: r.get())}, h)),
        "x[mask] compaction": (5 * n + 4 * selected, _checked({
            "gpuarr": (synced(lambda: x[mask]), lambda r: r.get()),
            "pyopencl": (pyopencl_copy_if, lambda r: r[0].get()[:int(r[1].get())]),
            "numpy": (lambda: h[hmask], lambda r: r),
        }, h[hmask])),
        "x[idx] random gather": (16 * n, _checked({
            "gpuarr": (synced(lambda: x[idx]), lambda r: r.get()),
            "pyopencl": (pyopencl_take, lambda r: r.get()),
            "numpy": (lambda: h[hidx], lambda r: r),
        }, h[hidx])),
        f"x[rows] gather of {ROW}-element rows": (8 * n + 8 * (n // ROW), _checked({
            "gpuarr": (synced(lambda: x2[rows]), lambda r: r.get()),
            "numpy": (lambda: h2[hrows], lambda r: r),
        }, h2[hrows])),
        "nonzero(mask)": (n + 8 * selected, _checked({
            "gpuarr": (synced(lambda: ga.nonzero(mask)[0]), lambda r: r.get()),
            "numpy": (lambda: np.nonzero(hmask)[0], lambda r: r),
        }, np.nonzero(hmask)[0])),
    }


@pytest.fixture(scope="module")
def cases():
    return workloads(ga.get_context(), 1 << LOG2N)


@pytest.mark.parametrize("name", ["x[mask] compaction", "x[idx] random gather",
                                  f"x[rows] gather of {ROW}-element rows", "nonzero(mask)"])
@pytest.mark.parametrize("lib", ["gpuarr", "pyopencl", "numpy"])
def test_indexing(benchmark, cases, name, lib):
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
