"""Host <-> device transfer of a 256 MiB float32 array: gpuarr beside pyopencl.array.

    python -m pytest benchmarks/bench_transfer.py --benchmark-enable
    python benchmarks/bench_transfer.py [--device cl:nvidia] [--mib 256]   # ratio table

Both sides copy the same pageable numpy array with a blocking enqueue_copy; the ratio
gpuarr / pyopencl is what the issue tracks (target >= 0.9).
"""

import argparse
import statistics
import time

import numpy as np
import pyopencl.array as cla
import pytest

import gpuarr as ga

MIB = 256


def _host(mib):
    return np.random.default_rng(0).random(mib * 2**20 // 4, dtype=np.float32)


def cases(ctx, host):
    """name -> (gpuarr callable, pyopencl callable) doing the same transfer."""
    q = ctx.queue
    dev = ga.asarray(host, context=ctx)
    ref = cla.to_device(q, host)
    ctx.sync()
    return {
        "host->device": (lambda: ga.asarray(host, context=ctx).sync(),
                         lambda: cla.to_device(q, host).finish()),
        "device->host": (dev.get, ref.get),
    }


@pytest.fixture(scope="module")
def transfer_cases():
    ctx = ga.get_context()
    return cases(ctx, _host(MIB))


@pytest.mark.parametrize("direction", ["host->device", "device->host"])
@pytest.mark.parametrize("lib", ["gpuarr", "pyopencl"])
def test_transfer(benchmark, transfer_cases, direction, lib):
    fn = transfer_cases[direction][0 if lib == "gpuarr" else 1]
    benchmark.group = f"transfer {direction} {MIB} MiB"
    benchmark.extra_info["GB/s"] = None
    benchmark.pedantic(fn, rounds=10, warmup_rounds=2)


def _median_time(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--mib", type=int, default=MIB)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    ctx = ga.get_context(args.device)
    host = _host(args.mib)
    print(f"device {ctx.devname}: {ctx.device.describe()}, {args.mib} MiB float32")
    print(f"{'direction':14s} {'gpuarr GB/s':>12s} {'pyopencl GB/s':>14s} {'ratio':>7s}")
    for name, (ours, theirs) in cases(ctx, host).items():
        # Interleave the two so that drift on a shared machine hits both alike.
        t_ours, t_theirs = [], []
        for _ in range(3):
            t_ours.append(_median_time(ours, args.repeats // 3 or 1))
            t_theirs.append(_median_time(theirs, args.repeats // 3 or 1))
        a, b = host.nbytes / min(t_ours) / 1e9, host.nbytes / min(t_theirs) / 1e9
        print(f"{name:14s} {a:12.2f} {b:14.2f} {a / b:7.3f}")


if __name__ == "__main__":
    main()
