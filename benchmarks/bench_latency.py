"""Per-call host time of small calls, where launch overhead decides: x + y on 16 floats, the
tutorial's exp loop (on 16 and on 230,400 floats), sum to a scalar (16 and 1,000 floats), a
16x16 matmul, x[idx] of 16 indices, and the logistic-regression SGD step (400x784, by hand and
through gpuarr.symbolic), in gpuarr beside numpy, pyopencl.array and CuPy. On OpenCL devices
pyopencl[floor] is the least such a call can cost: a kernel y = a + b on 16 floats built once,
its output from a pyopencl memory pool and set as an argument per call, then enqueued. After
the run a table gives gpuarr's time over the floor's, pyopencl.array's and CuPy's.

    pytest benchmarks/bench_latency.py [--bench-size=quick] [--bench-devices=cl0:0]
    python benchmarks/bench_latency.py [--device cl:nvidia] [--size quick]

Each row makes many calls and syncs once (the SGD step: every call returns to the host) and
reports the time per call. The cases live in gpuarr/bench.py.
"""

import sys

from gpuarr import bench

FAMILIES = ("latency",)


def test_bench(bench_case):
    bench_case()


if __name__ == "__main__":
    sys.exit(bench.script(FAMILIES))
