"""Out of core with dask.array: the sum of an array 4x the device memory limit, in GB/s of the
array's bytes, with gpuarr chunks beside numpy chunks (and CuPy chunks where cupy
finds a CUDA device), in one process on dask's threaded scheduler (docs/dask.md).

    pytest benchmarks/bench_dask.py [--bench-size=tiny|quick|full] [--bench-devices=cl0:0]
    python benchmarks/bench_dask.py [--limit-mib 256] [--device cl0:0] [--libs numpy,gpuarr]

Two sources of the array:
  host    float32 in host memory (a numpy array), streamed through the device chunk by chunk
          (`to_backend`): the out-of-core case; numpy chunks sum it where it is
  device  int32 chunks made where they are summed (da.arange with a meta of the library),
          summed exactly in int64
The limit (per size class: tiny 2 MiB, quick 64 MiB, full 1 GiB; --limit-mib) is what the run
may hold on the device: chunks are limit / (4 x threads), and after the run the gpuarr
context's pool must hold no more than the limit beyond what it held before (checked).

Measured on PoCL (2-core VM shared with other jobs, 2 threads, 64 MiB limit; GB/s, median and
range of 7 runs of the script; docs/dask.md):
  source    numpy               gpuarr (cl0:0)
  host      14.4 (5.6-21.0)     11.2 (6.5-14.0)
  device     8.5 (8.2-13.7)      5.2 (2.3-9.7)
On an NVIDIA H100 beside CuPy chunks (8 threads, 1 GiB limit, `--limit-mib 1024`; one run):
  source    numpy    gpuarr    cupy
  host      47.0     12.7      27.1   (5.8 with uploads one at a time, before staging.upload)
  device    16.5     50.4      62.8   (62.6 / 50.3 in another run: dask's scheduling)
"""

import argparse
import os
import sys
import time

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import bench

dask = pytest.importorskip("dask", reason="dask (the extra gpuarr[dask]) is not installed")
da = pytest.importorskip("dask.array")
from gpuarr import dask_backend  # noqa: E402  (after the skip: it imports dask)

dask_backend.register()  # the "gpuarr" backend also where gpuarr runs uninstalled

LIMIT_MIB = {"tiny": 2, "quick": 64, "full": 1024}
SOURCES = ("host", "device")
ROUNDS = {"tiny": 1, "quick": 3, "full": 5}
THREADS = min(os.cpu_count() or 1, 8)
ITEM = 4  # bytes per element: float32 (host source), int32 (device source)
_host = {}


def layout(limit_mib):
    """(elements of the array, elements per chunk) for a device limit of `limit_mib`."""
    limit = limit_mib * 2**20
    return 4 * limit // ITEM, max(1, limit // (4 * THREADS) // ITEM)


def host_array(n):
    """The host source: n float32 values, made once per size."""
    if n not in _host:
        _host.clear()
        _host[n] = np.random.default_rng(0).random(n, dtype=np.float32)
    return _host[n]


def _meta(backend):
    if backend.lib == "gpuarr":
        return ga.empty((0,), np.int32, context=backend.ctx)
    return backend.xp.empty((0,), np.int32)


def prepare(backend, source, limit_mib):
    """run(): the sum of the source with the backend's chunks, as a float; run once here
    (kernel builds) and checked."""
    if backend.lib not in ("numpy", "gpuarr", "cupy"):
        raise bench.Skip(f"{backend.lib} has no dask backend")
    n, chunk = layout(limit_mib)
    if source == "host":
        h = host_array(n)
        x = da.from_array(h, chunks=chunk)
        if backend.lib == "gpuarr":
            x = x.to_backend("gpuarr", context=backend.ctx)
        elif backend.lib == "cupy":
            x = x.to_backend("cupy")
        expected = float(h.sum(dtype=np.float64))
    else:
        x = da.arange(n, chunks=chunk, dtype=np.int32, like=_meta(backend))
        expected = n * (n - 1) / 2
    total = x.sum()

    def run():
        with dask.config.set(scheduler="threads", num_workers=THREADS):
            return float(backend.get(total.compute()))
    got = run()
    if not np.isclose(got, expected, rtol=1e-3):
        raise AssertionError(f"{backend.lib}, {source} source: sum {got}, expected {expected}")
    return run


def past_limit(backend, limit_mib):
    """A function giving the bytes the gpuarr context has held past the limit since this
    call (its pool keeps freed blocks: about the peak); 0 for the other libraries."""
    ctx = backend.ctx if backend.lib == "gpuarr" else None
    if ctx is None:
        return lambda: 0
    ctx.free_held()
    base = ctx.held_bytes
    return lambda: max(0, ctx.held_bytes - base - limit_mib * 2**20)


def _seconds(run):
    t = time.perf_counter()
    run()
    return time.perf_counter() - t


# ---------------------------------------------------------------- pytest-benchmark

def pytest_generate_tests(metafunc):
    if "dask_case" in metafunc.fixturenames:
        config = metafunc.config
        size = config.getoption("bench_size")
        contexts = bench.devices(config.getoption("bench_devices"))
        libs = config.getoption("bench_libs") or "numpy,gpuarr,cupy"
        cases = [(b, src, size) for src in SOURCES for b in bench.backends(contexts, libs)]
        metafunc.parametrize("dask_case", cases,
                             ids=[f"{src}-{b.lib}-{b.device}" for b, src, _ in cases])


def test_bench(dask_case, benchmark):
    backend, source, size = dask_case
    limit = LIMIT_MIB[size]
    try:
        run = prepare(backend, source, limit)
    except bench.Skip as e:
        pytest.skip(str(e))
    n, chunk = layout(limit)
    benchmark.group = f"dask sum, {source} source, {ITEM * n >> 20} MiB (4x a {limit} MiB limit)"
    benchmark.extra_info.update(lib=backend.lib, device=backend.device, bytes=ITEM * n,
                                chunk_bytes=ITEM * chunk)
    over = past_limit(backend, limit)
    if benchmark.disabled:
        benchmark(run)
    else:
        benchmark.pedantic(run, rounds=ROUNDS[size], warmup_rounds=0)
        benchmark.extra_info["GB/s"] = ITEM * n / benchmark.stats.stats.min / 1e9
    assert over() == 0, f"held {over()} bytes past the {limit} MiB limit"


# ---------------------------------------------------------------- script

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit-mib", type=int, default=LIMIT_MIB["quick"])
    parser.add_argument("--device", default=None, help="gpuarr device (default: gpuarr's)")
    parser.add_argument("--libs", default="numpy,gpuarr,cupy")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    backends = bench.backends(bench.devices(args.device or "default"), args.libs)
    n, chunk = layout(args.limit_mib)
    print(f"# sum of {ITEM * n >> 20} MiB (4x a {args.limit_mib} MiB device limit), "
          f"chunks of {ITEM * chunk >> 10} KiB, {THREADS} threads")
    for b in backends:
        print("#", b.describe())
    print("| source | " + " | ".join(f"{b.lib} GB/s" for b in backends) + " |")
    print("|---|" + "---|" * len(backends))
    for source in SOURCES:
        cells = []
        for b in backends:
            try:
                run = prepare(b, source, args.limit_mib)
            except bench.Skip:
                cells.append("-")
                continue
            over = past_limit(b, args.limit_mib)
            seconds = min(_seconds(run) for _ in range(args.rounds))
            note = f" (held {over() >> 20} MiB past the limit)" if over() else ""
            cells.append(f"{ITEM * n / seconds / 1e9:.2f}{note}")
        print(f"| {source} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
