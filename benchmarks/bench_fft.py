"""FFT throughput: gpuarr beside numpy.fft (pocketfft, on the host) and CuPy (cuFFT):
complex64 and complex128 1-d powers of two (2^16 .. 2^26), the prime length 10007
(Bluestein), 4096 rows of 1024 (batched), and 4096 x 4096 fft2.

    pytest benchmarks/bench_fft.py [--bench-size=quick] [--bench-devices=cl0:0]
    python benchmarks/bench_fft.py [--device cl:nvidia] [--n 1048576] [--side 2048]

GFLOP/s counts 5 N log2 N per transform of N points (the customary figure for any
algorithm). The cases live in gpuarr/bench.py; docs/fft.md has the figures.
"""

import sys

from gpuarr import bench

FAMILIES = ("fft",)


def test_bench(bench_case):
    bench_case()


if __name__ == "__main__":
    sys.exit(bench.script(FAMILIES, n="n={}", side="side={}", rows="rows={}"))
