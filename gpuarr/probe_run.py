"""The device probe's child: python -m gpuarr.probe_run P D PLATFORM DEVICE.

Builds and runs on device cl<P>:<D> one kernel of each construct gpuarr's kernels use
(kernels/probe.cl.mako: vector fma in float32/float64, float16 loads and stores, atomics,
local memory and barriers), then gpuarr's own exp, sum and GEMM (float32 at 1024, where the
CPU GEMM packs B and where pip's PoCL crashed on an AVX2 EPYC; float64 at 256), checking each
against numpy. It prints `step <name>` before each step and `probe ok` at the end; a failure
prints its first error line on stderr and exits 1, and a crash leaves the driver's message
on stderr: `gpuarr.probe` reads both.
"""

import sys

import numpy as np
import pyopencl as cl

import gpuarr as ga

from . import context, kernels
from .probe import first_error_line

__all__ = ["main", "run"]

N = 256  # work-items of the probe kernels


def _step(name):
    print(f"step {name}", flush=True)


def _check(name, got, want, rtol):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    err = np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30)
    if not np.isfinite(err) or err > rtol:
        raise AssertionError(f"wrong result in {name}: max relative error {err:.3g}")


def _buffer(ctx, host):
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    return cl.Buffer(ctx.cl_context, flags, hostbuf=np.ascontiguousarray(host))


def _get(ctx, buf, like):
    out = np.empty_like(like)
    cl.enqueue_copy(ctx.queue, out, buf)
    return out


def run(ctx):
    """Every step on `ctx`; raises on a wrong result or an error."""
    rng = np.random.default_rng(20)
    local = 1
    while local * 2 <= min(64, ctx.max_work_group_size):
        local *= 2
    _step("build kernels/probe.cl.mako")
    program = kernels.build(ctx, kernels.render("probe.cl.mako", fp64=ctx.fp64,
                                                local_size=local))
    q = ctx.queue

    _step("float32 vector fma")
    x = rng.standard_normal(17 * N).astype(np.float32)
    bx, by = _buffer(ctx, x), _buffer(ctx, np.zeros_like(x))
    program.probe_fma(q, (N,), None, bx, by)
    want = np.concatenate([x[:16 * N] * x[:16 * N] + x[:16 * N], x[16 * N:] * 2 + 1])
    _check("float32 vector fma", _get(ctx, by, x), want, 1e-6)

    if ctx.fp64:
        _step("float64 vector fma")
        x = rng.standard_normal(8 * N)
        bx, by = _buffer(ctx, x), _buffer(ctx, np.zeros_like(x))
        program.probe_fma64(q, (N,), None, bx, by)
        _check("float64 vector fma", _get(ctx, by, x), x * x + x, 1e-14)

    _step("float16 loads and stores")
    h = rng.standard_normal(N).astype(np.float16)
    bh, by, bo = _buffer(ctx, h), _buffer(ctx, np.zeros(N, np.float32)), _buffer(ctx, h * 0)
    program.probe_half(q, (N,), None, bh, by, bo)
    hf = h.astype(np.float32)
    _check("vload_half", _get(ctx, by, hf), hf + hf.reshape(-1, 4).sum(1).repeat(4), 1e-6)
    _check("vstore_half_rte", _get(ctx, bo, h), (2 * hf).astype(np.float16), 0)

    _step("atomics")
    counters, words = np.zeros(3, np.uint32), np.zeros(2, np.uint32)
    bc, bw = _buffer(ctx, counters), _buffer(ctx, words)
    program.probe_atomics(q, (N,), (local,), bc, bw)
    got = _get(ctx, bc, counters)
    if list(got) != [N, 7, N * (N - 1) // 2] or list(_get(ctx, bw, words)) != [2**32 - 1] * 2:
        raise AssertionError(f"wrong result in atomics: counters {list(got)}")

    _step("local memory and barriers")
    x = rng.standard_normal(N).astype(np.float32)
    bx, by = _buffer(ctx, x), _buffer(ctx, np.zeros(N // local, np.float32))
    program.probe_local(q, (N,), (local,), bx, by)
    _check("local memory", _get(ctx, by, np.zeros(N // local, np.float32)),
           x.astype(np.float64).reshape(-1, local).sum(1), 1e-5)

    _step("exp and sum float32")
    x = rng.random(1 << 16, dtype=np.float32)
    y = ga.exp(ga.asarray(x, context=ctx))
    _check("exp", y.get(), np.exp(x.astype(np.float64)), 1e-6)
    _check("sum", y.sum().get(), np.exp(x.astype(np.float64)).sum(), 1e-5)

    for dtype, n in ((np.float32, 1024), (np.float64, 256)):
        if dtype == np.float64 and not ctx.fp64:
            continue
        name = f"gemm {np.dtype(dtype).name} {n}x{n}"
        _step(name)
        a = rng.standard_normal((n, n)).astype(dtype)
        d = ga.asarray(a, context=ctx)
        _check(name, (d @ d).get(), a.astype(np.float64) @ a, 1e-5)
    ctx.sync()


def main(argv=None):
    p, d, platform, device = (sys.argv[1:] if argv is None else argv)[:4]
    info = context.find_device(f"cl{p}:{d}")
    if (info.platform, info.device_name) != (platform, device):
        print(f"error: cl{p}:{d} is {info.device_name} ({info.platform}) in the probe, "
              f"not {device} ({platform})", file=sys.stderr)
        return 1
    try:
        _step("open a context")
        run(context.init(info.name))
    except Exception as e:  # any failure is the verdict
        line = first_error_line(str(e)) or type(e).__name__
        print(line if line.lower().startswith("error") else f"error: {line}", file=sys.stderr)
        return 1
    print("probe ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
