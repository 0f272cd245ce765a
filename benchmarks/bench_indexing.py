"""Advanced indexing throughput: boolean-mask compaction, fancy-index gathers and gathers of
rows, gpuarr beside numpy, cupy (when it imports and sees a GPU) and pyopencl
(pyopencl.algorithm.copy_if, pyopencl.array.take).

    pytest benchmarks/bench_indexing.py [--bench-size=quick] [--bench-devices=cl0:0]
    python benchmarks/bench_indexing.py [--device cl:nvidia] [--log2n 26] [--rows 20]

GB/s counts the bytes an operation must move: the compaction reads the mask (1 byte per
element) and the data and writes the selected half; a gather reads the indices (8 bytes
each) and the picked elements and writes them. The ratio compares that rate with a plain
device copy of the data (read + write) in the same run; the target for the compaction on a
GPU is 0.5x, for the gather of rows (issue 25: 2^20 random rows of 64 float32, x[idx] and
take(axis=0)) the copy's rate. The cases live in gpuarr/bench.py.
"""

import sys

from gpuarr import bench

FAMILIES = ("indexing",)


def test_bench(bench_case):
    bench_case()


if __name__ == "__main__":
    sys.exit(bench.script(FAMILIES, log2n="n=2^{}", rows="rows=2^{}"))
