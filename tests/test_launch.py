"""The launch path (gpuarr/launch.py): held arguments, ordering, threads, bounded caches."""

import gc
import resource
import threading

import numpy as np
import pytest
from conftest import USABLE, using_flags

import gpuarr as ga
from gpuarr import launch
from gpuarr.caches import Cache

QUIET = "print_active_device=False"


def test_reused_arena_blocks_are_set_again():
    """With the arena (preallocate > 0) a released sub-buffer's driver handle may come back
    for other memory: every launch must still read and write the new arrays."""
    with using_flags(f"preallocate=8,{QUIET}"):
        c = ga.init(USABLE[0].name)
        rng = np.random.default_rng(3)
        live = []
        for step in range(3000):
            n = int(rng.integers(1, 40))
            hx = rng.standard_normal(n).astype(np.float32)
            x = ga.asarray(hx, context=c)
            op = step % 4
            if op == 0:
                y, hy = x * 2 + 1, hx * 2 + 1
            elif op == 1:
                y, hy = ga.exp(x) - x, np.exp(hx) - hx
            elif op == 2:
                y, hy = x.cumsum(), np.cumsum(hx)
            else:
                y, hy = ga.maximum(x, 0.5), np.maximum(hx, 0.5)
            live.append((y, hy))
            if len(live) > 3:  # release blocks in a different order than they were taken
                y_old, h_old = live.pop(int(rng.integers(0, len(live))))
                np.testing.assert_allclose(y_old.get(), h_old, rtol=1e-5, atol=1e-5)
        for y, hy in live:
            np.testing.assert_allclose(y.get(), hy, rtol=1e-5, atol=1e-5)


def test_launcher_sets_only_changed_arguments(ctx, monkeypatch):
    x = ga.arange(16, dtype="float32", context=ctx)
    y = ga.arange(16, dtype="float32", context=ctx)
    z = x + y
    np.testing.assert_array_equal(z.get(), np.arange(16) * 2)
    key = next(k for k in ctx.plans
               if k[1] == (16,) and k[0].operation == "out0 = ((in0) + (in1));")
    plan = ctx.plans.get(key)
    launcher = plan.launches[-1][0]
    if launcher.owner != threading.get_ident():  # another test's thread owns this copy
        launcher = launcher.for_thread(threading.get_ident())
    set_calls = []
    real_kernel = launcher.kernel

    class Counting:
        def __getattr__(self, name):
            return getattr(real_kernel, name)

        def set_arg(self, i, v):
            set_calls.append(i)
            real_kernel.set_arg(i, v)

        def _set_arg_buf(self, i, v):
            set_calls.append(i)
            real_kernel._set_arg_buf(i, v)

    monkeypatch.setattr(launcher, "kernel", Counting())
    launcher.set_args([*plan.head, x.storage, 0, y.storage, 0, z.storage, 0])
    assert set_calls == []  # what the last launch set is still there
    other = ga.empty(16, dtype="float32", context=ctx)
    launcher.set_args([*plan.head, x.storage, 0, y.storage, 0, other.storage, 0])
    assert set_calls == [launcher.buffer_slots[2]]  # only the new output buffer
    set_calls.clear()
    launcher.set_args([*plan.head, x.storage, 3, y.storage, 0, other.storage, 0])
    assert set_calls == [2]  # then only the changed offset


def test_writes_wait_for_reads_pending_on_other_queues(ctx):
    st = ctx.allocate(64)
    other_queue = object()
    marker = launch.cl.enqueue_marker(ctx.queue)
    st.read(marker, other_queue)
    assert launch.waits(ctx.queue, (), (st,)) == [marker]
    assert launch.waits(ctx.queue, (st,), ()) is None  # reads need not wait for reads
    launch.record(marker, ctx.queue, (), (st,))
    assert st.readers is None and launch.waits(ctx.queue, (), (st,)) is None


def test_cache_is_bounded_and_keeps_recent_entries():
    c = Cache("t", 8)
    for k in range(100):
        c[k] = k
        assert len(c) <= 8
        c.get(0)  # used all along: never dropped
    assert 0 in c and 99 in c and 50 not in c
    assert c.misses == 0 and c.hits == 100 and c.evictions > 0
    assert c.setdefault(99, -1) == 99 and c.setdefault(1000, -1) == -1
    assert c.stats()["entries"] == len(c)


def test_cache_snapshot_counts_no_use():
    """items() copies every entry even at a turnover, which lookups one by one would cause."""
    c = Cache("t", 8)
    for k in range(7):  # 4 old, 3 young: the next use of an old entry turns them over
        c[k] = k
    hits = c.hits
    assert dict(c.items()) == {k: k for k in range(7)} and c.hits == hits
    assert sorted(c.keys()) == list(range(7))


def test_many_lengths_keep_memory_bounded(ctx):
    """Every length is a new launch plan: the plan cache stays within its bound and the
    process does not grow with the number of lengths."""
    x = ga.ones(20000, dtype="float32", context=ctx)
    for n in range(1, 2000):
        x[:n] + 1.0
    ctx.sync()
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for n in range(2000, 20000):
        x[:n] + 1.0
    ctx.sync()
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert len(ctx.plans) <= ctx.plans.maxsize
    assert ctx.plans.evictions > 0
    assert grown < 50, f"grew {grown:.0f} MiB"


@pytest.mark.parametrize("name", ["programs", "kernels", "plans", "ufunc_calls"])
def test_context_caches_report(ctx, name):
    (ga.ones(4, context=ctx) + 1).sync()
    stats = {c.name: c.stats() for c in ctx.caches}
    assert stats[name]["maxsize"] > 0
    assert stats[name]["hits"] + stats[name]["misses"] > 0 or name == "programs"
