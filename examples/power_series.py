"""Theano's scan tutorial, its power series, on gpuarr.symbolic:

- a polynomial from its coefficients: a scan over the coefficients and `arange` (the
  powers) with x as a non-sequence, summed; its derivatives by T.grad through the scan;
- A ** k elementwise by repeated multiplication (a fed-back output and n_steps);
- exp(x) from its Taylor series: the term x**k / k! as a fed-back output, t_k = t_{k-1} * x
  / k over k = 1, 2, ..., and the partial sum.

    python examples/power_series.py            # runs on the default device (flag device)
    python examples/power_series.py --check    # and compares every result with numpy
    GPUARR_FLAGS=device=cpu python examples/power_series.py --check
"""

import argparse

import numpy as np

import gpuarr.symbolic as T
from gpuarr.symbolic import config

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--check", action="store_true", help="compare the results with numpy")
parser.add_argument("--terms", type=int, default=20, help="Taylor terms of exp (default 20)")
args = parser.parse_args()

# ---- a polynomial from its coefficients (the tutorial's program)
coefficients = T.vector("coefficients")
x = T.scalar("x")
max_coefficients_supported = 10000

# Generate the components of the polynomial
components, updates = T.scan(
    fn=lambda coefficient, power, free_variable: coefficient * (free_variable ** power),
    outputs_info=None,
    sequences=[coefficients, T.arange(max_coefficients_supported)],
    non_sequences=x)
# Sum them up
polynomial = components.sum()
d_x, d_coefficients = T.grad(polynomial, [x, coefficients])

# Compile a function
calculate_polynomial = T.function(inputs=[coefficients, x],
                                  outputs=[polynomial, d_x, d_coefficients])
where = "gpu" if any(type(n.op).__name__ == "GpuScan"
                     for n in calculate_polynomial.maker.fgraph.toposort()) else "cpu"
print(f"scan runs on the {where}")

test_coefficients = np.asarray([1, 0, 2], dtype=config.floatX)
test_value = 3
value, slope, by_coefficient = calculate_polynomial(test_coefficients, test_value)
print("polynomial:", value, "expected", 1.0 * (3 ** 0) + 0.0 * (3 ** 1) + 2.0 * (3 ** 2))
print("d/dx:", slope, " d/dcoefficients:", by_coefficient)

# ---- A ** k by repeated multiplication
k = T.iscalar("k")
A = T.vector("A")
result, updates = T.scan(fn=lambda prior_result, A: prior_result * A,
                         outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
# only the last value is wanted
final_result = result[-1]
power = T.function(inputs=[A, k], outputs=final_result, updates=updates)
print("A ** 2:", power(range(10), 2))
print("A ** 4:", power(range(10), 4))

# ---- exp(x) from its Taylor series
xs = T.vector("xs")
terms, _ = T.scan(lambda n, term, x: term * x / n, sequences=T.arange(1, args.terms),
                  outputs_info=T.ones_like(xs), non_sequences=xs)
series = 1 + terms.sum(axis=0)
exp_series = T.function([xs], [series, T.grad(series.sum(), xs)])
points = np.linspace(-2, 2, 5).astype(config.floatX)
approx, slopes = exp_series(points)
print("exp by", args.terms, "terms:", approx)

if args.check:
    tol = dict(rtol=1e-10, atol=1e-12) if config.floatX == "float64" else dict(rtol=1e-5)
    c = test_coefficients.astype(np.float64)
    checks = {
        "polynomial": (value, np.polyval(c[::-1], test_value)),
        "d/dx": (slope, np.polyval(np.polyder(c[::-1]), test_value)),
        "d/dcoefficients": (by_coefficient, float(test_value) ** np.arange(3)),
        "A ** 2": (power(range(10), 2), np.arange(10.0) ** 2),
        "A ** 4": (power(range(10), 4), np.arange(10.0) ** 4),
    }
    # the series and its derivative, a series of one term fewer, summed in numpy
    p64, partial, deriv, term = points.astype(np.float64), 1.0, 0.0, np.ones(len(points))
    for n in range(1, args.terms):
        deriv = deriv + term  # the derivative of x**n / n! is x**(n-1) / (n-1)!
        term = term * p64 / n
        partial = partial + term
    checks["exp series"] = (approx, partial)
    checks["d/dx exp series"] = (slopes, deriv)
    checks["exp series vs np.exp"] = (approx, np.exp(p64))
    for name, (got, want) in checks.items():
        ok = np.allclose(got, want, **(tol if name != "exp series vs np.exp" else
                                       dict(rtol=1e-6)))
        print(f"{name}: {'ok' if ok else 'MISMATCH'} (max |diff| "
              f"{np.max(np.abs(np.asarray(got, np.float64) - want)):.3g})")
        assert ok, name
    print("check: all match numpy")
