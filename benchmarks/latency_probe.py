"""Where the time of a small op goes: bare enqueue, pyopencl's invoker, gpuarr's paths.

    python benchmarks/latency_probe.py [--device cl:nvidia]
"""

import argparse
import time

import pyopencl as cl

import gpuarr as ga


def per_call(fn, calls=3000):
    fn()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(calls):
            ev = fn()
        if isinstance(ev, cl.Event):
            ev.wait()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    ctx = ga.get_context(args.device)
    x = ga.ones(16, dtype="float32", context=ctx)
    y = ga.ones(16, dtype="float32", context=ctx)
    z = x + y
    big = ga.ones(1 << 22, dtype="float32", context=ctx)
    ctx.sync()
    # A kernel object of our own: setting its arguments leaves gpuarr's kernels alone.
    ours = next(k for key, k in ctx.kernels.items() if key[0] == "elemwise")
    kernel = cl.Kernel(ours.program, ours.function_name)
    kernel.set_scalar_arg_dtypes(next(iter(ctx.plans.values())).arg_types)
    plan = next(iter(ctx.plans.values()))
    q, size, local = ctx.queue, plan.launches[-1][2], (ctx.local_size,)
    argv = [*plan.head, x.data, 0, y.data, 0, z.data, 0]
    kernel.set_args(*argv)
    rows = {
        "enqueue_nd_range_kernel only": lambda: cl.enqueue_nd_range_kernel(q, kernel, size, local),
        "pyopencl invoker (set args + enqueue)": lambda: kernel(q, size, local, *argv),
        "allocate 64 bytes from the pool": lambda: ctx.allocate(64),
        "gpuarr x + y": lambda: x + y,
        "gpuarr x + 1.0": lambda: x + 1.0,
        "gpuarr exp(x)": lambda: ga.exp(x),
        "gpuarr x.sum() (one stage)": lambda: x.sum(),
        "gpuarr x.sum().sync()": lambda: x.sum().sync(),
        "gpuarr big.sum() (two stages, 2^22)": lambda: big.sum(),
    }
    print(f"device {ctx.devname}: {ctx.device.describe()}")
    for name, fn in rows.items():
        print(f"{name:40s} {per_call(fn):7.2f} us")
        ctx.sync()


if __name__ == "__main__":
    main()
