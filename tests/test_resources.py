"""Resource hygiene: create/compute/free cycles leave the pool where they started, kernels
are built once and reused, and a released context is freed and can be made again."""

import gc
import time
import weakref

import numpy as np
import pyopencl as cl
import pytest
from conftest import USABLE, using_flags

import gpuarr as ga
from gpuarr import context, reduction

CYCLES = 100_000


@pytest.fixture
def builds(monkeypatch):
    """The number of OpenCL programs built since the fixture started (a one-item list)."""
    count = [0]
    original = cl.Program.build

    def counted(self, *args, **kwargs):
        count[0] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cl.Program, "build", counted)
    return count


def test_create_compute_free_cycles_leave_the_pool_as_they_found_it(ctx, builds):
    """100,000 cycles of allocate (sizes 1..64: several pool bins), fill, one kernel, free:
    active bytes back to where they started, held bytes bounded, nothing rebuilt, no
    Python objects piling up, and the values right all along."""
    base = ga.arange(64, dtype=np.float32, context=ctx)
    ga.add(ga.empty(3, np.float32, context=ctx).fill(0), base[:3]).get()  # warm: the kernel
    ctx.sync()
    gc.collect()
    active, held, objects = ctx.active_bytes, ctx.held_bytes, len(gc.get_objects())
    built = builds[0]
    start = time.perf_counter()
    for k in range(CYCLES):
        n = 1 + k % 64
        a = ga.empty(n, np.float32, context=ctx).fill(k % 7)
        b = ga.add(a, base[64 - n:])
        if k % 10_000 == 9_999:
            np.testing.assert_array_equal(b.get(), np.arange(64 - n, 64) + k % 7)
            assert ctx.active_bytes <= active + 2 * 4 * 64 * 2  # a and b only (pool rounding)
        del a, b
    ctx.sync()
    elapsed = time.perf_counter() - start
    gc.collect()
    assert ctx.active_bytes == active
    assert ctx.held_bytes <= held + 64 * 2**10
    assert builds[0] == built
    assert len(gc.get_objects()) < objects + 1000
    print(f"{CYCLES} create/compute/free cycles: {elapsed:.2f} s "
          f"({elapsed / CYCLES * 1e6:.1f} us each)")


def _workload(ctx, n, offset, scalar):
    """One of each kernel family on arrays of n elements (n, offset and scalar vary)."""
    host = (np.arange(n + offset, dtype=np.float32) * 1.5 - 7)[offset:]
    x = ga.asarray(np.arange(n + offset, dtype=np.float32) * 1.5 - 7, context=ctx)[offset:]
    m = x[: n // 4 * 4].reshape(4, -1)
    hm = host[: n // 4 * 4].reshape(4, -1)
    pairs = [
        (x * scalar + 1, host * np.float32(scalar) + 1),
        (x[::-2] - x[: (n + 1) // 2], host[::-2] - host[: (n + 1) // 2]),
        (ga.exp(x * 0.01), np.exp(host * np.float32(0.01))),
        (m.T.copy(), hm.T.copy()),
        (ga.concatenate([x, x[::-1]]), np.concatenate([host, host[::-1]])),
        (x[[0, n - 1, n // 2]], host[[0, n - 1, n // 2]]),
        (x[x > 0], host[host > 0]),
        (ga.sort(x[::-1]), np.sort(host[::-1])),
        (m @ m.T, hm @ hm.T),
        (m.sum(axis=1), hm.sum(axis=1)),
        (x.max(), host.max()),
        (x.cumsum(), host.cumsum()),
    ]
    for got, want in pairs:
        np.testing.assert_allclose(got.get(), want, rtol=1e-5, atol=1e-3)


def test_kernels_are_built_once_and_reused(ctx, builds):
    """Every kernel family, called again on other sizes, offsets and scalars within one
    layout class, builds nothing new: sizes, offsets and scalars are kernel arguments."""
    _workload(ctx, 96, 0, 2.0)
    first = builds[0]
    kernels = len(ctx.kernels)
    for n, offset, scalar in ((96, 3, -1.5), (100, 1, 0.25), (120, 5, 3.0)):
        _workload(ctx, n, offset, scalar)
    assert builds[0] == first, f"{builds[0] - first} programs rebuilt"
    assert len(ctx.kernels) == kernels
    print(f"{first} programs for the workload, none rebuilt over 3 more rounds")


def test_released_context_is_freed_and_made_again():
    """Dropping every context (gpuarr.context._reset, what tests use to release them) and
    the arrays frees the Context, its cl.Context and device memory; a new context of the
    same device then works from scratch."""
    with using_flags("print_active_device=False"):
        ctx = ga.init(USABLE[0].name, name="released")
        _workload(ctx, 64, 1, 2.0)
        alive, cl_alive = weakref.ref(ctx), weakref.ref(ctx.cl_context)
        del ctx
        context._reset()
        gc.collect()
        assert alive() is None, [type(r) for r in gc.get_referrers(alive())]
        assert cl_alive() is None
        again = ga.init(USABLE[0].name, name="released")
        assert len(again.kernels) == 0 and again.active_bytes == 0
        _workload(again, 64, 1, 2.0)
        assert ga.get_context("released") is again


def test_released_context_is_freed_after_gpu_reductions(monkeypatch):
    monkeypatch.setattr(reduction, "device_class", lambda ctx: "gpu")
    with using_flags("print_active_device=False"):
        ctx = ga.init(USABLE[0].name)
        x = ga.asarray(np.arange(1 << 16, dtype=np.float32), context=ctx)
        assert float(x.sum().get()) == float(np.arange(1 << 16, dtype=np.float64).sum())
        alive = weakref.ref(ctx)
        del ctx, x
        context._reset()
        gc.collect()
        assert alive() is None
