"""FFT throughput: gpuarr beside numpy.fft (pocketfft, on the host) and CuPy (cuFFT):
complex64 and complex128 1-d powers of two (2^16 .. 2^26), the prime length 10007
(Bluestein), 4096 rows of 1024 (batched), and 4096 x 4096 fft2.

    pytest benchmarks/bench_fft.py [--bench-size=quick] [--bench-devices=cl0:0]
    python benchmarks/bench_fft.py [--device cl:nvidia] [--n 1048576] [--side 2048]
    python benchmarks/bench_fft.py --previous ...   # also gpuarr[previous]: the GPU
                                                    # choices before fft_block, same run

GFLOP/s counts 5 N log2 N per transform of N points (the customary figure for any
algorithm). The cases live in gpuarr/bench.py; docs/fft.md has the figures.
"""

import sys

from gpuarr import bench, fft

FAMILIES = ("fft",)


def test_bench(bench_case):
    bench_case()


def _previous(impl):
    """`impl` with gpuarr.fft's GPU choices before fft_block (fft.BLOCK off: fft_rows and
    the split of its passes): every case measured old beside new in one run."""
    def make(be, *host):
        run = impl.make(be, *host)

        def old():
            saved = dict(fft.BLOCK)
            fft.BLOCK.update(gpu=False)
            try:
                return run()
            finally:
                fft.BLOCK.update(saved)
        return old
    return bench.Impl(make, lambda be: be.lib == "gpuarr")


def add_previous():
    """A gpuarr[previous] variant in every FFT case."""
    for case in bench.CASES:
        if case.family == "fft" and "gpuarr" in case.impls:
            case.impls["gpuarr:previous"] = _previous(case.impls["gpuarr"])


if __name__ == "__main__":
    argv = sys.argv[1:]
    if "--previous" in argv:
        argv.remove("--previous")
        add_previous()
    sys.exit(bench.script(FAMILIES, argv, n="n={}", side="side={}", rows="rows={}"))
