"""Reduction throughput: gpuarr beside numpy, pyopencl.array and cupy (GB/s of bytes read):
sum, sum over axis 0 and axis 1, argmax, max, cumsum.

    pytest benchmarks/bench_reduction.py [--bench-size=quick] [--bench-devices=cl0:0]
    python benchmarks/bench_reduction.py [--device cl:nvidia] [--log2n 24] [--side 4096]

The cases live in gpuarr/bench.py; the script takes `python -m gpuarr bench`'s flags too.
"""

import sys

from gpuarr import bench

FAMILIES = ("reduction",)


def test_bench(bench_case):
    bench_case()


if __name__ == "__main__":
    sys.exit(bench.script(FAMILIES, log2n="n=2^{}", side="side={}"))
