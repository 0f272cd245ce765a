"""Where the time of a small op goes: bare enqueue, pyopencl's invoker, gpuarr's paths.

    python benchmarks/latency_probe.py [--device cl:nvidia]
"""

import argparse
import time

import pyopencl as cl
import pyopencl.array
import pyopencl.tools

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
    # A kernel object of our own from gpuarr's program: setting its arguments leaves
    # gpuarr's kernels alone.
    key = next(k for k in ctx.plans
               if k[1] == (16,) and k[0].operation == "out0 = ((in0) + (in1));")
    plan = ctx.plans.get(key)
    ours, size, _ = plan.launches[-1]
    kernel = cl.Kernel(ours.kernel.program, ours.kernel.function_name)
    q, local = ctx.queue, plan.local
    kernel.set_args(*[t(v) if t is not None else v.buffer for t, v in
                      zip(ours.types, [*plan.head, x.storage, 0, y.storage, 0, z.storage, 0])])
    out_slot = ours.buffer_slots[-1]
    pool = cl.tools.MemoryPool(cl.tools.ImmediateAllocator(q))
    xa = cl.array.to_device(q, x.get(), allocator=pool)
    ya = cl.array.to_device(q, y.get(), allocator=pool)

    def floor():
        kernel.set_arg(out_slot, pool.allocate(64))
        return cl.enqueue_nd_range_kernel(q, kernel, size, local)

    rows = {
        "enqueue_nd_range_kernel only": lambda: cl.enqueue_nd_range_kernel(q, kernel, size, local),
        "floor: pool output set per call + enqueue": floor,
        "pyopencl.array x + y": lambda: xa + ya,
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
