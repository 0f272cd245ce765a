"""The classic logistic-regression SGD step (Theano's tutorial: sigmoid of x @ w + b,
cross-entropy plus an L2 penalty, T.grad, updates) compiled by gpuarr.symbolic, beside the
same step written by hand on numpy, gpuarr and cupy arrays (data from the host, outputs to
the host, as a compiled function does). Skips the symbolic row, saying why, while
gpuarr.symbolic cannot be imported.

    pytest benchmarks/bench_training.py [--bench-size=quick] [--bench-devices=cl0:0]
    python benchmarks/bench_training.py [--device cl:nvidia] [--samples 4000]
"""

import sys

from gpuarr import bench

FAMILIES = ("training",)


def test_bench(bench_case):
    bench_case()


if __name__ == "__main__":
    sys.exit(bench.script(FAMILIES, samples="samples={}"))
