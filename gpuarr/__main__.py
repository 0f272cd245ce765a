"""python -m gpuarr info | check [--device DEV] [--caches] | warmup [--device DEV] [--dtypes ...]
| tune gemm [--device DEV] [--dtype ...] ...
| bench [--quick] [--device DEV] [--json OUT] [--markdown OUT] [--plot OUT.png] ..."""

import argparse
import contextlib
import sys
import time

import numpy as np

from . import bench, config
from .context import auto_device, get_context, list_devices
from .errors import DeviceNotFound, GpuArrayError
from .warmup import DTYPES, warmup

__all__ = ["check", "info", "main", "print_caches", "tune", "warm"]

CHECK_SIZE = 10 * 30 * 768  # 230,400 values, as in Theano's classic check
CHECK_LOOPS = 1000


def info():
    rows = [("name", "platform", "device", "type", "CUs", "memory", "fp64", "OpenCL", "probe")]
    for d in list_devices():
        rows.append((d.name, d.platform, d.device_name, d.type, str(d.compute_units),
                     f"{d.global_mem / 2**30:.1f} GiB", "yes" if d.fp64 else "no",
                     d.opencl_version, d.probe))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if len(rows) == 1:
        print("(no OpenCL device found)")
    for d in list_devices():
        if not d.usable:
            print(f"note: {d.name} is unusable: {d.note}")
        elif d.advice:
            print(f"note: {d.name} is slow: {d.advice}")
    flags = config.flags
    auto = "auto: first GPU, else Intel's CPU runtime, else first usable device"
    if not flags.device:
        with contextlib.suppress(DeviceNotFound):
            auto = f"{auto_device().name} ({auto})"
    print(f"\ndefault device (flag device): {flags.device or auto}")
    for name, dev in flags.contexts.items():
        print(f"context {name} -> {dev}")
    print(f"floatX: {flags.floatX}")
    return 0


def print_caches(ctx):
    """One line per bounded cache of `ctx` (see Context.caches)."""
    for c in ctx.caches:
        st = c.stats()
        print(f"cache {st['name']:12s} {st['entries']:6d}/{st['maxsize']:<6d} entries  "
              f"{st['hits']:9d} hits  {st['misses']:7d} misses  {st['evictions']:7d} evicted")


def check(device, caches=False):
    """Theano's classic check: exp of 230,400 floatX values, 1000 times; with `caches`, the
    context's cache counters after it."""
    from .array import asarray
    from .ufuncs import UFUNCS

    device = device or config.flags.device
    dtype = np.dtype(config.float_x(device == "cpu" or get_context(device or None).fp64))
    rng = np.random.default_rng(22)
    host = rng.random(CHECK_SIZE, dtype=np.float64).astype(dtype)
    expected = np.exp(host)
    if device == "cpu":
        t0 = time.perf_counter()
        for _ in range(CHECK_LOOPS):
            result = np.exp(host)
        elapsed = time.perf_counter() - t0
        used = "Used the cpu"
    else:
        ctx = get_context(device or None)
        x = asarray(host, context=ctx)
        exp = UFUNCS["exp"]
        y = exp(x)  # builds the kernel outside the timed loop
        ctx.sync()
        t0 = time.perf_counter()
        for _ in range(CHECK_LOOPS):
            y = exp(x)
        y.sync()
        elapsed = time.perf_counter() - t0
        result = y.get()
        used = f"Used the device {ctx.devname} ({ctx.device.device_name})"
        if caches:
            print_caches(ctx)
    print(f"Looping {CHECK_LOOPS} times took {elapsed:.3f} seconds")
    print(f"Result is {result[:5]}")
    print(used)
    if not np.allclose(result, expected, rtol=1e-5, atol=0):
        worst = np.max(np.abs(result - expected) / np.abs(expected))
        print(f"FAILED: result differs from numpy (max relative error {worst:.3g})")
        return 1
    print("Result matches numpy")
    return 0


def warm(device, dtypes):
    """Build the kernels everyday code needs on `device` (gpuarr/warmup.py), timing each dtype."""
    ctx = get_context(device or None)
    t0 = time.perf_counter()
    for dtype, seconds in warmup(ctx, dtypes).items():
        print(f"{dtype:8s} {seconds:7.2f} s")
    print(f"warmed {ctx.devname} ({ctx.device.device_name}) in {time.perf_counter() - t0:.2f} s")
    return 0


def _show_outcome(o, top=5):
    """The fastest candidates of one dtype and shape class, the built-in entry, the failures."""
    failed = [c for c in o.candidates if c.error]
    print(f"\n{o.dtype} {o.shape_class}: {len(o.candidates)} candidates, {len(failed)} "
          f"failed; GFLOP/s on (m, k, n) = " + " and ".join(str(s) for s in o.shapes))
    heads = [f"{m}x{k}x{n}" for m, k, n in o.shapes] + ["mean", "x built-in"]
    print("  " + "  ".join(f"{h:>13}" for h in heads) + f"  {'source':8}  parameters")
    timed = [c for c in o.candidates if not c.error]
    shown = timed[:top] + ([o.builtin] if o.builtin not in timed[:top] else [])
    for c in shown:
        rates = [2 * m * n * k / t / 1e9 for (m, k, n), t in zip(o.shapes, c.seconds)]
        cells = [*rates, c.rate, c.rate / o.builtin.rate]
        params = ", ".join(f"{key}={v}" for key, v in c.params.items()) or "(its own)"
        print("  " + "  ".join(f"{x:13.3f}" for x in cells) + f"  {c.source:8}  {params}")
    for c in failed:
        print(f"  failed: {c.source} {c.params}: {c.error}")
    if o.best is o.builtin:
        print("  the built-in entry is the fastest")
    else:
        verdict = "kept" if o.keep else "not kept (within the noise margin)"
        print(f"  re-measured side by side: best {o.best_figure:.3f}, built-in "
              f"{o.builtin_figure:.3f} GFLOP/s (x{o.best_figure / o.builtin_figure:.2f}): "
              f"{verdict}")


def tune(args):
    """Autotune GEMM on one device, print the best candidates and store the winners."""
    from . import autotune, tuning

    def split(text):
        return [t.strip() for t in text.split(",") if t.strip()] if text else None

    ctx = get_context(args.device or None)
    print(f"tuning GEMM on {ctx.devname}: {ctx.device.describe()}, driver "
          f"{ctx.device.cl_device.driver_version}")
    outcomes = autotune.tune_gemm(ctx, split(args.dtype), split(args.shape_class), args.budget,
                                  args.size, args.repeats, args.seed, args.min_gain)
    for o in outcomes:
        _show_outcome(o)
    changes = autotune.updates(ctx, outcomes)
    if args.dry_run:
        print(f"\ndry run: nothing stored (would store: {', '.join(changes) or 'nothing'})")
    elif changes:
        print(f"\nstored {', '.join(changes)} in {tuning.store(ctx, changes)}")
    else:
        print(f"\nnothing stored: no candidate beat the built-in entries by more than "
              f"{args.min_gain:.0%}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m gpuarr", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="list OpenCL devices and the context mapping")
    p_check = sub.add_parser("check", help="run exp 1000 times on a device, compare with numpy")
    p_check.add_argument("--device", help="device string (cl0:0, cl:nvidia), context name or cpu")
    p_check.add_argument("--caches", action="store_true",
                         help="print the context's cache sizes, bounds and hit counts after")
    p_warm = sub.add_parser("warmup", help="build the kernels everyday code needs, so that "
                            "new processes start fast")
    p_warm.add_argument("--device", help="device string (cl0:0, cl:nvidia) or context name")
    p_warm.add_argument("--dtypes", default=",".join(DTYPES),
                        help=f"comma separated (default: {','.join(DTYPES)})")
    p_tune = sub.add_parser("tune", help="autotune kernel parameters and store them")
    p_gemm = p_tune.add_subparsers(dest="op", required=True).add_parser(
        "gemm", help="sample GEMM tiles, check them against numpy, time them, store the best")
    p_gemm.add_argument("--device", help="device string (cl0:0, cl:nvidia) or context name")
    p_gemm.add_argument("--dtype", help="comma separated (default: float32,float64)")
    p_gemm.add_argument("--shape-class", help="comma separated: big, small, column, direct "
                        "(default: those gemm uses for the dtype on the device)")
    p_gemm.add_argument("--budget", type=int, default=40, help="candidates per shape class")
    p_gemm.add_argument("--size", type=int, help="problem size (default: 2048 on CPUs, 4096 "
                        "on GPUs)")
    p_gemm.add_argument("--repeats", type=int, default=3, help="timed runs per candidate")
    p_gemm.add_argument("--seed", type=int, default=0)
    p_gemm.add_argument("--min-gain", type=float, default=0.05,
                        help="store a winner only if this much faster than the built-in entry")
    p_gemm.add_argument("--dry-run", action="store_true", help="print, store nothing")
    p_bench = sub.add_parser("bench", help="time gpuarr beside numpy, pyopencl.array and cupy; "
                             "a table per operation")
    bench.add_arguments(p_bench)
    args = parser.parse_args(argv)
    try:
        if args.command == "tune":
            return tune(args)
        if args.command == "bench":
            return bench.command(args)
        if args.command == "warmup":
            return warm(args.device, [d.strip() for d in args.dtypes.split(",") if d.strip()])
        return info() if args.command == "info" else check(args.device, args.caches)
    except GpuArrayError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
