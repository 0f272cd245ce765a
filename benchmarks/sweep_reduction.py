"""Sweep reduction.TUNING on one device: each setting's speed beside the buffer copy.

    python benchmarks/sweep_reduction.py [--device cl:nvidia] [--log2n 28] [--side 16384]
        [--set gpu.group_unroll=4,8 --set gpu.groups_per_cu=8,16,32 ...]

Prints one line per combination of the --set values (the workloads each setting can affect),
as read GB/s and ratio to the copy's (read + write) GB/s measured in the same run.
"""

import argparse
import itertools

import numpy as np
import pyopencl as cl

import gpuarr as ga
from gpuarr import bench, reduction


def best_time(fn, repeats, calls=1):
    """Seconds per call of `fn` (`calls` calls, then one sync of the last output)."""
    return bench.measure(bench.Timed(fn, lambda out: out.sync(), calls), "quick", repeats)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--log2n", type=int, default=24)
    parser.add_argument("--side", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--set", action="append", default=[], metavar="CLASS.KEY=V1,V2")
    parser.add_argument("--ops", default="sum,sum0,sum1,argmax,cumsum")
    args = parser.parse_args()
    ctx = ga.get_context(args.device)
    n = 1 << args.log2n
    rng = np.random.default_rng(0)
    x = ga.asarray(rng.random(n, dtype=np.float32), context=ctx)
    xm = ga.asarray(rng.random((args.side, args.side), dtype=np.float32), context=ctx)
    dst = ga.empty(n, dtype="float32", context=ctx)

    def copy():
        cl.enqueue_copy(ctx.queue, dst.data, x.data, byte_count=4 * n)
        return dst

    # name -> (bytes per call, one call, calls per sync)
    ops = {"sum": (4 * n, lambda: x.sum(), 1),
           "sum_x10": (4 * n, lambda: x.sum(), 10),  # no wait for the device between calls
           "sum0": (xm.nbytes, lambda: xm.sum(axis=0), 1),
           "sum1": (xm.nbytes, lambda: xm.sum(axis=1), 1),
           "argmax": (4 * n, lambda: x.argmax(), 1),
           "cumsum": (8 * n, lambda: x.cumsum(), 1)}
    chosen = [ops[o] for o in args.ops.split(",")]
    copy_rate = 8 * n / bench.measure(bench.Timed(copy, lambda out: ctx.sync(), 1), "quick",
                                      args.repeats)
    print(f"device {ctx.devname}: {ctx.device.describe()}; copy {copy_rate / 1e9:.0f} GB/s")
    keys, values = [], []
    for item in args.set:
        key, _, vals = item.partition("=")
        keys.append(key.split("."))
        values.append([int(v) for v in vals.split(",")])
    for combo in itertools.product(*values):
        for (cls, key), v in zip(keys, combo):
            reduction.TUNING[cls][key] = v
        ctx.kernels.clear()
        reduction._decompose.cache_clear()
        cells = []
        for (nbytes, fn, calls), name in zip(chosen, args.ops.split(",")):
            rate = nbytes / best_time(fn, args.repeats, calls)
            cells.append(f"{name} {rate / copy_rate:5.2f}")
        setting = " ".join(f"{c}.{k}={v}" for (c, k), v in zip(keys, combo))
        print(f"{setting:60s} " + "  ".join(cells))


if __name__ == "__main__":
    main()
