"""gpuarr.symbolic's compiled functions against the same work written eagerly.

1. The call overhead: Theano's exp loop (1000 calls on 230,400 float32 values, the result
   kept on the device) compiled with T.function, beside the same loop on gpuarr arrays.
   The bar: within 1.5x, both measured in one run.
2. Training steps at 2000 x 784 float32, data from the host and outputs to the host: the
   logistic-regression SGD step of Theano's tutorial (sigmoid, cross-entropy plus an L2
   penalty, T.grad, updates) and an MLP step (784-500-10, tanh, softmax written with
   exp/sum/log, negative log-likelihood of one-hot labels, T.grad, SGD updates), compiled,
   beside the same steps by hand on numpy and, where cupy sees a device, on cupy. The
   issue's bars: compiled >= 1x numpy eager on PoCL, >= 1.5x CuPy eager on a GPU.

    pytest benchmarks/bench_symbolic.py                     # pytest-benchmark, every loop
    python benchmarks/bench_symbolic.py [--device cl0:0] [--calls 1000] [--repeats 5]
    python benchmarks/bench_symbolic.py --steps [--samples 2000] [--repeats 5]

The script prints the best time of each loop (interleaved rounds) and their ratio, then the
same for 16 values, where the call overhead is nearly all of the time (for information);
with --steps, the best time per training step of each library and the speedups of the
compiled step over the eager ones.
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
from gpuarr.bench import _logreg_function, _logreg_step, cupy_usable

SIZE = 10 * 30 * 768  # 230,400: Theano's check
CALLS = 1000
BAR = 1.5
SAMPLES, FEATS, HIDDEN, CLASSES = 2000, 784, 500, 10
STEP_BARS = {"numpy": 1.0, "cupy": 1.5}  # the compiled step: at least this much faster


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


# ------------------------------------------------------------------ training steps

def _data(samples, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((samples, FEATS), dtype=np.float32)
    y = rng.integers(0, 2, samples).astype(np.float32)
    onehot = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, samples)]
    w0 = (rng.standard_normal(FEATS, dtype=np.float32) * 0.01).astype(np.float32)
    w1 = (rng.standard_normal((FEATS, HIDDEN), dtype=np.float32) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((HIDDEN, CLASSES), dtype=np.float32) * 0.05).astype(np.float32)
    return x, y, onehot, w0, [w1, np.zeros(HIDDEN, np.float32), w2,
                              np.zeros(CLASSES, np.float32)]


def _mlp_step(xp, state, x, y):
    """One SGD step (rate 0.1) of the 784-500-10 MLP on `state` = [W1, b1, W2, b2];
    returns the mean negative log-likelihood of the one-hot labels `y`."""
    w1, b1, w2, b2 = state
    h = xp.tanh(x @ w1 + b1)
    o = h @ w2 + b2
    z = o - o.max(axis=1, keepdims=True)
    e = xp.exp(z)
    s = e.sum(axis=1, keepdims=True)
    cost = -(y * (z - xp.log(s))).sum(axis=1).mean()
    do = (e / s - y) / x.shape[0]
    dh = (do @ w2.T) * (1 - h * h)
    state[:] = [w1 - 0.1 * (x.T @ dh), b1 - 0.1 * dh.sum(axis=0),
                w2 - 0.1 * (h.T @ do), b2 - 0.1 * do.sum(axis=0)]
    return cost


def _compiled(model, ctx, w0, mlp0):
    """(step(x, y) -> host outputs, [shared variables]) compiled by gpuarr.symbolic."""
    target = ctx.name
    if model == "logreg":
        f, w, b = _logreg_function(target, w0)
        return f, [w, b]
    x, y = T.fmatrix("x"), T.fmatrix("y")
    params = [T.shared(v.copy(), name=n, target=target)
              for v, n in zip(mlp0, ("W1", "b1", "W2", "b2"))]
    w1, b1, w2, b2 = params
    h = T.tanh(T.dot(x, w1) + b1)
    o = T.dot(h, w2) + b2
    z = o - o.max(axis=1, keepdims=True)
    cost = -(y * (z - T.log(T.exp(z).sum(axis=1, keepdims=True)))).sum(axis=1).mean()
    grads = T.grad(cost, params)
    f = T.function([x, y], cost, updates=[(p, p - 0.1 * g) for p, g in zip(params, grads)])
    return f, params


def training_steps(ctx, model, samples=SAMPLES):
    """{library: step}: one SGD step of `model` ('logreg' or 'mlp') taking the data from the
    host and returning its outputs to the host: 'numpy' and 'cupy' (when cupy sees a device)
    eager, 'symbolic' compiled on ctx. Each is checked against numpy first."""
    x, y, onehot, w0, mlp0 = _data(samples)
    labels = y if model == "logreg" else onehot
    eager = _logreg_step if model == "logreg" else _mlp_step
    init = [w0, np.zeros((), np.float32)] if model == "logreg" else mlp0

    def by_hand(xp, asarray, get):
        state = [asarray(v.copy()) for v in init]

        def step():
            out = eager(xp, state, asarray(x), asarray(labels))
            return [get(o) for o in out] if isinstance(out, tuple) else get(out)
        return step, state
    steps = {"numpy": by_hand(np, np.asarray, np.asarray)}
    if cupy_usable():
        import cupy
        steps["cupy"] = by_hand(cupy, cupy.asarray, cupy.asnumpy)
    f, shared = _compiled(model, ctx, w0, mlp0)
    steps["symbolic"] = (lambda: f(x, labels), shared)
    want = steps["numpy"][0]()
    for name, (step, state) in steps.items():
        got = want if name == "numpy" else step()
        for g, r in zip(got if isinstance(got, list) else [got],
                        want if isinstance(want, list) else [want]):
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(r, np.float64),
                                       rtol=2e-3, atol=1e-4, err_msg=f"{model} {name}")
        params = [s.get_value() for s in state] if name == "symbolic" else [
            np.asarray(v.get() if hasattr(v, "get") else v) for v in state]
        for g, r in zip(params, steps["numpy"][1]):
            np.testing.assert_allclose(g, r, rtol=2e-3, atol=1e-4, err_msg=f"{model} {name}")
    return {name: step for name, (step, _) in steps.items()}


@pytest.fixture(scope="module", params=["logreg", "mlp"])
def step_fns(request):
    return request.param, training_steps(ga.get_context(), request.param)


@pytest.mark.parametrize("lib", ["symbolic", "numpy", "cupy"])
def test_training_step(benchmark, step_fns, lib):
    model, fns = step_fns
    if lib not in fns:
        pytest.skip("cupy sees no CUDA device")
    benchmark.group = f"{model} SGD step, {SAMPLES}x{FEATS} float32, host data"
    benchmark.pedantic(fns[lib], rounds=5, warmup_rounds=1)


def _main_steps(ctx, args):
    met = True
    for model in ("logreg", "mlp"):
        fns = training_steps(ctx, model, args.samples)
        calls = 20 if model == "logreg" else 2
        best = best_times({k: (lambda f=f, n=calls: [f() for _ in range(n)])
                           for k, f in fns.items()},
                          args.repeats)
        for name, t in best.items():
            print(f"  {model:6s} {args.samples}x{FEATS}  {name:8s} {t / calls * 1e3:9.3f} ms "
                  f"per step")
        for name, bar in STEP_BARS.items():
            if name in best:
                ratio = best[name] / best["symbolic"]
                met = met and ratio >= bar
                print(f"  {model:6s} compiled speedup over {name} eager: {ratio:.2f}x "
                      f"(bar {bar}x)")
    return 0 if met else 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="device string (default: flag device)")
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", action="store_true",
                        help="time the training steps instead of the exp loop")
    parser.add_argument("--samples", type=int, default=SAMPLES)
    args = parser.parse_args(argv)
    ctx = ga.get_context(args.device)
    print(f"on {ctx.devname} ({ctx.device.device_name}), best of {args.repeats}:")
    if args.steps:
        return _main_steps(ctx, args)
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

