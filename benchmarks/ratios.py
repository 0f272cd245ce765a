"""Shared by the benchmarks: the pytest-benchmark case, best-of timing and the ratio table."""

import time

import pytest


def run_case(benchmark, cases, name, lib):
    """Benchmark library `lib` on workload `name` of `cases` ({name: (bytes, {lib: fn})})."""
    fns = cases[name][1]
    if lib not in fns:
        pytest.skip(f"{lib} has no {name}")
    benchmark.group = name
    benchmark(fns[lib])


def best_time(fn, repeats):
    """Best wall time of `fn` over `repeats` calls after one warm-up, per inner call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best / getattr(fn, "calls", 1)


def print_table(workloads, repeats):
    """Time every library of every workload ({name: (bytes or None, {lib: fn})}); the first
    workload is the buffer copy every GB/s figure is compared with."""
    rows = [(name, nbytes, {lib: best_time(fn, repeats) for lib, fn in fns.items()})
            for name, (nbytes, fns) in workloads.items()]
    copy = rows[0][1] / next(iter(rows[0][2].values()))
    print(f"{'operation':36s} {'library':9s} {'time':>11s} {'GB/s':>8s} {'x copy':>7s} "
          f"{'gpuarr faster by':>17s}")
    for name, nbytes, times in rows:
        for lib, t in times.items():
            shown = f"{t * 1e6:9.1f}us" if nbytes is None else f"{t * 1e3:9.3f}ms"
            gbs = nbytes / t if nbytes else float("nan")
            ratio = t / times["gpuarr"] if "gpuarr" in times else float("nan")
            print(f"{name:36s} {lib:9s} {shown:>11s} {gbs / 1e9:8.1f} {gbs / copy:7.2f} "
                  f"{ratio:17.2f}")
