"""Elementwise throughput: gpuarr beside numpy, pyopencl.array and cupy: copy, exp, a + b,
a*b + exp(a) - b (fused and not). Per-call overhead (x + y on 16 elements, the tutorial's exp
loop) is benchmarks/bench_latency.py's.

    pytest benchmarks/bench_elemwise.py [--bench-size=quick] [--bench-devices=cl0:0]
    python benchmarks/bench_elemwise.py [--device cl:nvidia] [--log2n 28] [--size quick]

GB/s counts bytes read plus bytes written. Every timed call ends with a sync of its output.
The cases live in gpuarr/bench.py.
"""

import sys

from gpuarr import bench

FAMILIES = ("elementwise",)


def test_bench(bench_case):
    bench_case()


if __name__ == "__main__":
    sys.exit(bench.script(FAMILIES, log2n="n=2^{}"))
