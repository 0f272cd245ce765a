"""Sorting throughput: gpuarr beside numpy, cupy and a host round trip (download, numpy,
upload): sort, argsort (float32, uint64 keys), rows of 256, unique, searchsorted.

    pytest benchmarks/bench_sort.py [--bench-size=quick] [--bench-devices=cl0:0]
    python benchmarks/bench_sort.py [--device cl:nvidia] [--log2n 24] [--row 256]

GB/s counts the keys read plus written once (a radix sort moves them once per pass).
'gpuarr[radix]' forces the radix passes where gpuarr would sort short rows whole in local
memory (sorting._rows_limit), to compare the two. The cases live in gpuarr/bench.py.
"""

import sys

from gpuarr import bench

FAMILIES = ("sort",)


def test_bench(bench_case):
    bench_case()


if __name__ == "__main__":
    sys.exit(bench.script(FAMILIES, log2n="n=2^{}", row="row={}"))
