"""Concurrency: Python threads issuing operations on one context and on two (the two PoCL
devices of one platform) get numpy's results, and no event is lost: chains of in-place
updates without a sync, and data handed between threads and devices, arrive complete."""

import threading

import numpy as np
import pytest

import gpuarr as ga

THREADS = 6
ROUNDS = 40


def _run_threads(target, count):
    """Start `count` threads on target(k) together; re-raise the first error of any."""
    errors = []
    start = threading.Barrier(count)

    def body(k):
        try:
            start.wait()
            target(k)
        except BaseException as e:  # reported below, with the thread's number
            errors.append((k, e))

    threads = [threading.Thread(target=body, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
        assert not t.is_alive(), "a thread hangs"
    if errors:
        k, e = errors[0]
        raise AssertionError(f"thread {k} of {count} failed: {e!r}") from e


def _mixed_round(ctx, k, r):
    """One round of every kernel family on thread k's own data; returns the ops checked."""
    n = 50 + 13 * k + r % 7
    host = (np.arange(n, dtype=np.float32) - 20) * (k + 1) * 0.5 + r
    x = ga.asarray(host, context=ctx)
    m, hm = x[:48].reshape(6, 8), host[:48].reshape(6, 8)
    checks = [
        (x * 2.0 + 1.0, host * 2 + 1),
        (x[::-3] - x[: len(host[::-3])], host[::-3] - host[: len(host[::-3])]),
        (m.sum(axis=1), hm.sum(axis=1)),
        (x.max(), host.max()),
        (x.cumsum(), host.cumsum()),
        (m @ m.T, hm @ hm.T),
        (x[[k, n - 1, 3]], host[[k, n - 1, 3]]),
        (x[x > r], host[host > r]),
        (ga.sort(x[::-1]), np.sort(host[::-1])),
        (ga.concatenate([x[:5], x[-5:]]), np.concatenate([host[:5], host[-5:]])),
    ]
    for got, want in checks:
        np.testing.assert_allclose(got.get(), want, rtol=1e-5, atol=1e-3)
    return len(checks)


def test_threads_share_one_context(ctx):
    """THREADS threads, each ROUNDS rounds of ten kernel families on one queue."""
    done = [0] * THREADS

    def work(k):
        for r in range(ROUNDS):
            done[k] += _mixed_round(ctx, k, r)

    _run_threads(work, THREADS)
    assert done == [10 * ROUNDS] * THREADS
    print(f"{THREADS} threads x {10 * ROUNDS} operations on one context")


def test_threads_upload_and_reduce_megabytes(ctx):
    """Blocking copies of MiBs from several threads between other threads' launches (dask's
    threaded scheduler's pattern: NVIDIA's driver crashed on it until launch.py held the
    context's launch lock around every enqueue)."""
    host = np.random.default_rng(5).random(1 << 20, dtype=np.float32)
    want = host.sum(dtype=np.float64)

    def work(k):
        for r in range(12):
            x = ga.asarray(host, context=ctx)
            assert abs(float(x.sum().get()) - want) <= 1e-4 * want, (k, r)

    _run_threads(work, THREADS)


def test_threads_on_two_contexts(ctx_pair):
    """Threads split over the two devices run the same kernels at once."""
    done = [0] * THREADS

    def work(k):
        ctx = ctx_pair[k % 2]
        for r in range(ROUNDS // 2):
            done[k] += _mixed_round(ctx, k, r)

    _run_threads(work, THREADS)
    assert done == [5 * ROUNDS] * THREADS


def test_no_event_is_lost_in_unsynced_chains(ctx_pair):
    """Each thread chains 300 in-place updates on one array (of its own, on alternating
    devices) and reads it once at the end: every update is there, in order."""
    steps = 300
    results = {}

    def work(k):
        ctx = ctx_pair[k % 2]
        x = ga.zeros(1000 + k, np.int64, context=ctx)
        view = x[k % 3::2]
        for s in range(steps):
            view += s  # strided, in place: each waits for the previous one
            if s % 50 == 0:
                x *= 1  # a contiguous update of the same storage in between
        results[k] = x.get()

    _run_threads(work, THREADS)
    for k, host in results.items():
        want = np.zeros(1000 + k, np.int64)
        want[k % 3::2] = steps * (steps - 1) // 2
        np.testing.assert_array_equal(host, want)


def test_handoff_between_threads_and_devices(ctx_pair):
    """A producer thread writes arrays on one device and passes them on without a sync; a
    consumer thread moves them to the other device and reduces them there. The consumer's
    reads must wait for the producer's writes, and the device copy for both."""
    first, second = ctx_pair
    count, n = 60, 4096
    queue = []
    ready = threading.Condition()
    sums = {}

    def producer():
        for j in range(count):
            x = ga.arange(n, dtype=np.float32, context=first)
            x *= float(j + 1)
            x[::2] = float(-j)  # last write before the hand-off
            with ready:
                queue.append((j, x))
                ready.notify()

    def consumer():
        for _ in range(count):
            with ready:
                ready.wait_for(lambda: queue)
                j, x = queue.pop(0)
            y = x.transfer(second)
            sums[j] = (float(y.sum().get()), float(y[1::2].max().get()))

    def body(k):
        (producer if k == 0 else consumer)()

    _run_threads(body, 2)
    odd = np.arange(1, n, 2, dtype=np.float64)
    for j in range(count):
        total = -j * (n // 2) + (j + 1) * odd.sum()
        assert sums[j][0] == pytest.approx(total, rel=1e-6), j
        assert sums[j][1] == (j + 1) * (n - 1), j


def test_contexts_opened_from_many_threads_at_once(ctx_pair):
    """get_context and init from several threads at once give the one Context per device."""
    names = [c.devname for c in ctx_pair]
    seen = [[] for _ in range(THREADS)]

    def work(k):
        for _ in range(20):
            seen[k].append(ga.get_context(names[k % 2]))
            seen[k].append(ga.init(names[(k + 1) % 2]))

    _run_threads(work, THREADS)
    for name in names:  # one Context per device, whichever thread asked first
        found = {id(c) for k in range(THREADS) for c in seen[k] if c.devname == name}
        assert len(found) == 1, name
