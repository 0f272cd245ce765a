"""Sorting throughput: gpuarr beside numpy, cupy (when it imports and sees a GPU) and a host
round trip (download, numpy, upload): sort and argsort of float32 and uint64 keys, rows of
256, unique, searchsorted, and the scan (cumsum) beside them.

    pytest benchmarks/bench_sort.py [--bench-size=quick] [--bench-devices=cl0:0]
    python benchmarks/bench_sort.py [--device cl:nvidia] [--log2n 24] [--row 256]

The full size class is issue 25's set on GPUs, against CuPy in the same run: sort and
argsort of float32 and uint64 keys at 2^24 and 2^26, unique, searchsorted, rows of 256 and
cumsum at 2^24. GB/s counts the keys (and indices) read plus written once (a radix sort
moves them once per pass). 'gpuarr[radix]' forces the radix passes where gpuarr would sort
short rows whole in local memory (sorting._rows_limit), to compare the two. The cases live
in gpuarr/bench.py (the reduction family's cumsum is listed under sort too).
"""

import sys

from gpuarr import bench

FAMILIES = ("sort",)


def test_bench(bench_case):
    bench_case()


if __name__ == "__main__":
    sys.exit(bench.script(FAMILIES, log2n="n=2^{}", row="row={}"))
