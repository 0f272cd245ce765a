"""Sorting throughput: gpuarr beside a host round trip (download, numpy, upload) and numpy.

    python -m pytest benchmarks/bench_sort.py --benchmark-enable
    BENCH_SORT_LOG2N=16 python -m pytest benchmarks/bench_sort.py     # a quick smoke run
    python benchmarks/bench_sort.py [--device cl:nvidia] [--log2n 24] [--row 256]   # table

GB/s counts the keys read plus written once (a radix sort moves them once per pass). Every
gpuarr result is checked against numpy before anything is timed; every timed gpuarr call
ends with a sync of its output. 'gpuarr-radix' forces the radix passes where gpuarr would
sort short rows whole in local memory (sorting._rows_limit), to compare the two.
"""

import argparse
import contextlib
import os

import numpy as np
import pyopencl as cl
import pytest
from ratios import print_table, run_case

import gpuarr as ga
from gpuarr import sorting

LOG2N = int(os.environ.get("BENCH_SORT_LOG2N", 24))
ROW = 256


@contextlib.contextmanager
def _radix_only():
    saved = sorting._rows_limit
    sorting._rows_limit = lambda ctx, rows: 0
    try:
        yield
    finally:
        sorting._rows_limit = saved


def _radix(fn):
    def run():
        with _radix_only():
            fn()
    return run


def workloads(ctx, n, row):
    """name -> (bytes moved, {library: callable}); each gpuarr result checked first."""
    rng = np.random.default_rng(0)
    h = rng.standard_normal(n).astype(np.float32)
    keys = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    rows = h.reshape(-1, row)
    ints = rng.integers(0, 1000, n, dtype=np.int32)
    queries = rng.standard_normal(n).astype(np.float32)
    hs = np.sort(h)
    x, xk, xr, xi = (ga.asarray(a, context=ctx) for a in (h, keys, rows, ints))
    xs, xq = ga.asarray(hs, context=ctx), ga.asarray(queries, context=ctx)
    q = ctx.queue
    dst = ga.empty(n, dtype="float32", context=ctx)

    np.testing.assert_array_equal(ga.sort(x).get(), hs)
    np.testing.assert_array_equal(ga.argsort(x).get(), np.argsort(h, kind="stable"))
    np.testing.assert_array_equal(ga.argsort(xk).get(), np.argsort(keys, kind="stable"))
    np.testing.assert_array_equal(ga.sort(xr).get(), np.sort(rows))
    with _radix_only():
        np.testing.assert_array_equal(ga.sort(xr).get(), np.sort(rows))
    np.testing.assert_array_equal(ga.unique(xi).get(), np.unique(ints))
    np.testing.assert_array_equal(ga.searchsorted(xs, xq).get(), np.searchsorted(hs, queries))

    def buffer_copy():
        cl.enqueue_copy(q, dst.data, x.data, byte_count=4 * n)
        q.finish()

    def upload(a):
        ga.asarray(a, context=ctx).sync()

    return {
        "copy (bandwidth limit)": (8 * n, {"opencl": buffer_copy}),
        "sort float32": (8 * n, {
            "gpuarr": lambda: ga.sort(x).sync(),
            "roundtrip": lambda: upload(np.sort(x.get())),
            "numpy": lambda: np.sort(h)}),
        "argsort float32": (16 * n, {
            "gpuarr": lambda: ga.argsort(x).sync(),
            "roundtrip": lambda: upload(np.argsort(x.get(), kind="stable")),
            "numpy": lambda: np.argsort(h, kind="stable")}),
        "argsort uint64 keys": (20 * n, {
            "gpuarr": lambda: ga.argsort(xk).sync(),
            "roundtrip": lambda: upload(np.argsort(xk.get(), kind="stable")),
            "numpy": lambda: np.argsort(keys, kind="stable")}),
        f"sort rows of {row} float32": (8 * n, {
            "gpuarr": lambda: ga.sort(xr).sync(),
            "gpuarr-radix": _radix(lambda: ga.sort(xr).sync()),
            "roundtrip": lambda: upload(np.sort(xr.get())),
            "numpy": lambda: np.sort(rows)}),
        "unique int32 (1000 values)": (4 * n, {
            "gpuarr": lambda: ga.unique(xi).sync(),
            "roundtrip": lambda: upload(np.unique(xi.get())),
            "numpy": lambda: np.unique(ints)}),
        "searchsorted float32 (n queries)": (8 * n, {
            "gpuarr": lambda: ga.searchsorted(xs, xq).sync(),
            "numpy": lambda: np.searchsorted(hs, queries)}),
    }


NAMES = ["sort float32", "argsort float32", "argsort uint64 keys", f"sort rows of {ROW} float32",
         "unique int32 (1000 values)", "searchsorted float32 (n queries)"]


@pytest.fixture(scope="module")
def cases():
    return workloads(ga.get_context(), 1 << LOG2N, ROW)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("lib", ["gpuarr", "gpuarr-radix", "roundtrip", "numpy"])
def test_sort(benchmark, cases, name, lib):
    run_case(benchmark, cases, name, lib)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--log2n", type=int, default=LOG2N)
    parser.add_argument("--row", type=int, default=ROW)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    ctx = ga.get_context(args.device)
    print(f"device {ctx.devname}: {ctx.device.describe()}; n = 2^{args.log2n}")
    print_table(workloads(ctx, 1 << args.log2n, args.row), args.repeats)


if __name__ == "__main__":
    main()
