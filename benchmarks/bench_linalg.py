"""Dense linear algebra: gpuarr.linalg beside numpy (the host's LAPACK) and cupy (cuSOLVER)
where it runs: cholesky, solve (16 right-hand sides; solve_vec: one, solve_mat: n), inv, qr
at 4096, eigh and svd at 2048, batched inv and cholesky of 10,000 32x32 matrices, batched
eigh and svd of 64 128x128 matrices; float32 and float64. Each group is one operation at one
size and dtype across libraries (pytest-benchmark's table); the script prints the seconds
and the ratios (peer time / gpuarr time: above 1, gpuarr is faster).

    pytest benchmarks/bench_linalg.py [--bench-size=tiny|quick|full] [--bench-devices=cl:nvidia]
    python benchmarks/bench_linalg.py [--size quick] [--device cl:nvidia] [--only inv,qr]
"""

import argparse
import sys
import time

import numpy as np
import pytest

from gpuarr import bench

DTYPES = ("float32", "float64")
# size class -> (n of cholesky/solve/inv/qr, n of eigh/svd, (batch, n) of the batched cases,
# (batch, n) of the batched eigh/svd)
SIZES = {"tiny": (64, 32, (100, 8), (4, 24)), "quick": (1024, 512, (1000, 32), (16, 64)),
         "full": (4096, 2048, (10000, 32), (64, 128))}
OPS = ("cholesky", "solve", "solve_vec", "solve_mat", "inv", "qr", "eigh", "svd", "inv_batched",
       "cholesky_batched", "eigh_batched", "svd_batched")
# right-hand sides of the solves: columns, or None for a vector
RHS = {"solve": 16, "solve_vec": None, "solve_mat": "n"}
ROUNDS = {"tiny": 1, "quick": 3, "full": 3}


def shape_of(op, size):
    big, eig, (batch, small), (eig_batch, eig_small) = SIZES[size]
    if op in ("eigh_batched", "svd_batched"):
        return (eig_batch, eig_small, eig_small)
    if op.endswith("_batched"):
        return (batch, small, small)
    return (eig, eig) if op in ("eigh", "svd") else (big, big)


def host_inputs(op, size, dtype):
    """The operands of `op` as numpy arrays (well conditioned; SPD for cholesky)."""
    shape = shape_of(op, size)
    n = shape[-1]
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(dtype)
    if op.startswith(("cholesky", "eigh")):
        a = (a @ np.swapaxes(a, -1, -2) / n + np.eye(n, dtype=dtype)).astype(dtype)
    elif op in (*RHS, "inv", "inv_batched"):
        a = a + np.float32(np.sqrt(n)) * np.eye(n, dtype=dtype)
    if op in RHS:
        k = RHS[op]
        shape = (n,) if k is None else (n, n if k == "n" else k)
        return a, rng.standard_normal(shape).astype(dtype)
    return (a,)


def call(xp, op):
    """The function timing `op` with the library xp (numpy, gpuarr or cupy)."""
    la = xp.linalg
    name = op.removesuffix("_batched")
    if name == "svd":
        return lambda a: la.svd(a, full_matrices=False)
    if name == "qr":
        return lambda a: la.qr(a)
    if name in RHS:
        return la.solve
    return getattr(la, name)


def prepare(backend, op, size, dtype):
    """A no-argument function running op once on backend (inputs on its device), synced."""
    if backend.lib not in ("numpy", "gpuarr", "cupy"):
        raise bench.Skip(f"{backend.lib} has no linalg")
    args = [backend.asarray(h) for h in host_inputs(op, size, dtype)]
    fn = call(backend.xp, op)

    def run():
        out = fn(*args)
        backend.sync(list(out) if isinstance(out, tuple) else out)
        return out
    run()  # warm: builds, plans, cuSOLVER handles
    return run


def best(run, rounds):
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return min(times)


# ---------------------------------------------------------------- pytest-benchmark

def pytest_generate_tests(metafunc):
    if "linalg_case" in metafunc.fixturenames:
        config = metafunc.config
        size = config.getoption("bench_size")
        contexts = bench.devices(config.getoption("bench_devices"))
        libs = config.getoption("bench_libs") or "numpy,gpuarr,cupy"
        backends = bench.backends(contexts, libs)
        cases = [(b, op, size, dt) for op in OPS for dt in DTYPES for b in backends]
        metafunc.parametrize("linalg_case", cases,
                             ids=[f"{op}-{dt}-{b.lib}-{b.device}" for b, op, _, dt in cases])


def test_bench(linalg_case, benchmark):
    backend, op, size, dtype = linalg_case
    try:
        run = prepare(backend, op, size, dtype)
    except bench.Skip as e:
        pytest.skip(str(e))
    benchmark.group = f"linalg {op} {'x'.join(map(str, shape_of(op, size)))} {dtype}"
    benchmark.extra_info.update(lib=backend.lib, device=backend.device)
    if benchmark.disabled:
        benchmark(run)
    else:
        benchmark.pedantic(run, rounds=ROUNDS[size], warmup_rounds=0)


# ---------------------------------------------------------------- script

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=tuple(SIZES), default="full")
    parser.add_argument("--device", default=None, help="gpuarr device (default: gpuarr's)")
    parser.add_argument("--libs", default="numpy,gpuarr,cupy")
    parser.add_argument("--only", default=",".join(OPS))
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    args = parser.parse_args(argv)
    backends = bench.backends(bench.devices(args.device or "default"), args.libs)
    for b in backends:
        print("#", b.describe())
    libs = [b.lib for b in backends]
    print("| op | shape | dtype | " + " | ".join(f"{lib} s" for lib in libs) +
          " | " + " | ".join(f"{lib}/gpuarr" for lib in libs if lib != "gpuarr") + " |")
    print("|" + "---|" * (3 + 2 * len(libs) - 1))
    for op in args.only.split(","):
        for dt in args.dtypes.split(","):
            secs = {}
            for b in backends:
                try:
                    secs[b.lib] = best(prepare(b, op, args.size, dt), ROUNDS[args.size])
                except bench.Skip:
                    secs[b.lib] = float("nan")
            mine = secs.get("gpuarr", float("nan"))
            shape = "x".join(map(str, shape_of(op, args.size)))
            print(f"| {op} | {shape} | {dt} | " +
                  " | ".join(f"{secs[lib]:.4f}" for lib in libs) + " | " +
                  " | ".join(f"{secs[lib] / mine:.2f}" for lib in libs if lib != "gpuarr") +
                  " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
