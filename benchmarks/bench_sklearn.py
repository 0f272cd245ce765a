"""scikit-learn on gpuarr arrays (Array API dispatch on) beside numpy and cupy:
StandardScaler fit_transform and LogisticRegression fit, 2000x20 float64.

    pytest benchmarks/bench_sklearn.py [--bench-size=quick] [--bench-devices=cl0:0]
    python benchmarks/bench_sklearn.py [--device cl:nvidia] [--samples 20000]
"""

import sys

from gpuarr import bench

FAMILIES = ("sklearn",)


def test_bench(bench_case):
    bench_case()


if __name__ == "__main__":
    sys.exit(bench.script(FAMILIES, samples="samples={}"))
