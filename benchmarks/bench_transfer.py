"""Host <-> device transfers: gpuarr beside pyopencl.array and cupy (GB/s of the bytes moved).

    pytest benchmarks/bench_transfer.py [--bench-size=quick] [--bench-devices=cl0:0]
    python benchmarks/bench_transfer.py [--device cl:nvidia] [--mib 256] [--size quick]

The cases live in gpuarr/bench.py; the script takes `python -m gpuarr bench`'s flags too.
Both sides copy the same pageable numpy array; the ratio to the best peer is what the
transfer issue tracks (target >= 0.9 of pyopencl).
"""

import sys

from gpuarr import bench

FAMILIES = ("transfer",)


def test_bench(bench_case):
    bench_case()


if __name__ == "__main__":
    sys.exit(bench.script(FAMILIES, mib="nbytes={}M"))
