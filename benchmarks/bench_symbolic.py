"""The function-call overhead of gpuarr.symbolic: Theano's exp loop (1000 calls on 230,400
float32 values, the result kept on the device) compiled with T.function, beside the same
loop written on gpuarr arrays directly. The bar: within 1.5x, both measured in one run.

    pytest benchmarks/bench_symbolic.py                     # pytest-benchmark, both loops
    python benchmarks/bench_symbolic.py [--device cl0:0] [--calls 1000] [--repeats 5]

The script prints the best time of each loop (interleaved rounds) and their ratio, then the
same for 16 values, where the call overhead is nearly all of the time (for information).
"""

import argparse
import os
import sys
import time

os.environ.setdefault("POCL_DEVICES", "pthread pthread")

import numpy as np
import pytest

import gpuarr as ga
import gpuarr.symbolic as T

SIZE = 10 * 30 * 768  # 230,400: Theano's check
CALLS = 1000
BAR = 1.5


def loops(ctx, calls=CALLS, size=SIZE):
    """{'symbolic': loop, 'gpuarr': loop}: `calls` exp calls and one sync each."""
    host = np.random.default_rng(22).random(size, dtype=np.float32)
    x = T.shared(ga.asarray(host, context=ctx), name="x")
    f = T.function([], T.exp(x).transfer(x.type.context))
    xa = x.get_value(borrow=True, return_internal_type=True)
    exp = ga.exp
    np.testing.assert_allclose(f().get(), np.exp(host), rtol=1e-6)
    np.testing.assert_array_equal(f().get(), exp(xa).get())

    def symbolic():
        for _ in range(calls):
            r = f()
        r.sync()

    def direct():
        for _ in range(calls):
            r = exp(xa)
        r.sync()
    return {"symbolic": symbolic, "gpuarr": direct}


def best_times(fns, repeats):
    """The best time of each loop over `repeats` interleaved rounds (after a warm-up)."""
    best = dict.fromkeys(fns, float("inf"))
    for fn in fns.values():
        fn()
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


@pytest.fixture(scope="module")
def exp_loops():
    return loops(ga.get_context())


@pytest.mark.parametrize("lib", ["symbolic", "gpuarr"])
def test_exp_loop(benchmark, exp_loops, lib):
    benchmark.group = f"exp loop, {CALLS} calls on {SIZE} float32, result on the device"
    benchmark.pedantic(exp_loops[lib], rounds=5, warmup_rounds=1)


def test_call_overhead_within_bar(exp_loops):
    best = best_times(exp_loops, repeats=3)
    assert best["symbolic"] <= BAR * best["gpuarr"], best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="device string (default: flag device)")
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    ctx = ga.get_context(args.device)
    print(f"on {ctx.devname} ({ctx.device.device_name}), best of {args.repeats}:")
    ratios = []
    for size in (SIZE, 16):
        best = best_times(loops(ctx, args.calls, size), args.repeats)
        for name, t in best.items():
            print(f"  {size:6d} values  {name:9s} {t * 1e3:9.2f} ms for {args.calls} calls "
                  f"({t / args.calls * 1e6:6.1f} us per call)")
        ratios.append(best["symbolic"] / best["gpuarr"])
        print(f"  {size:6d} values  ratio symbolic / gpuarr: {ratios[-1]:.3f}"
              + (f" (bar {BAR})" if size == SIZE else " (call overhead only)"))
    return 0 if ratios[0] <= BAR else 1


if __name__ == "__main__":
    sys.exit(main())
