"""Copies between contexts that share no cl.Context (gpuarr.staging): flag
context_sharing=never gives each PoCL device a cl.Context of its own, so transfers and the
collectives take the path they take between GPUs; numpy is the oracle."""

import gc
import types

import numpy as np
import pytest
from conftest import host_data, same_platform_pair, using_flags

import gpuarr as ga
from gpuarr import collectives, config, context, staging
from gpuarr import symbolic as T
from gpuarr.errors import ConfigError

NEVER = "context_sharing=never,print_active_device=False"
DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64",
          "complex64", "complex128"]
VIEWS = {
    "whole": lambda a: a,
    "reversed": lambda a: a[::-1],
    "strided": lambda a: a[1::3],
    "T": lambda a: a.reshape(-1, 5).T if a.size % 5 == 0 else a,
}


@pytest.fixture(scope="module")
def pair():
    """Two PoCL devices, each with a cl.Context of its own."""
    devices = same_platform_pair()
    if devices is None:
        pytest.skip("needs two devices of one platform (POCL_DEVICES='pthread pthread')")
    with using_flags(NEVER):
        a, b = (ga.init(d.name) for d in devices)
        assert a.cl_context is not b.cl_context
        yield a, b


@pytest.fixture
def chunks(monkeypatch):
    """Chunks of 24 bytes (a partial item for 16-byte dtypes) and two slots per context."""
    monkeypatch.setattr(staging, "CHUNK_BYTES", 24)
    monkeypatch.setattr(staging, "SLOTS", 2)


def _skip_fp64(dtype, *ctxs):
    if np.dtype(dtype) in (np.float64, np.complex128) and not all(c.fp64 for c in ctxs):
        pytest.skip("no fp64 on this device")


# ---------------------------------------------------------------- contexts

def test_context_sharing_flag(pair):
    with using_flags("print_active_device=False"):
        x, y = (ga.init(c.devname) for c in pair)
        # auto: devices of host memory (CPUs) share, discrete GPUs do not
        assert (x.cl_context is y.cl_context) == context._host_memory(x.device)
    assert config.FLAGS["context_sharing"].default == "auto"
    with pytest.raises(ConfigError, match=r"'sometimes' for flag context_sharing.*auto or never"):
        config.parse_flags("context_sharing=sometimes")
    assert config.parse_flags("context_sharing=never") == {"context_sharing": "never"}
    a, _ = pair
    assert a.copy_queue is a.copy_queue and a.copy_queue is not a.queue
    assert a.copy_queue.device == a.device.cl_device


def test_what_shares():
    def info(kind, unified):
        return types.SimpleNamespace(type=kind, cl_device=types.SimpleNamespace(
            host_unified_memory=unified))
    assert context._host_memory(info("CPU", 0))
    assert context._host_memory(info("GPU", 1))  # an integrated GPU
    assert not context._host_memory(info("GPU", 0))  # a discrete GPU: a context of its own
    with using_flags(NEVER):
        assert not context._shares_context(info("CPU", 1))
    with using_flags("print_active_device=False"):
        assert context._shares_context(info("CPU", 1))
        assert not context._shares_context(info("GPU", 0))


# ---------------------------------------------------------------- transfers

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("view", list(VIEWS))
def test_transfer(pair, chunks, dtype, view):
    a, b = pair
    _skip_fp64(dtype, a, b)
    for n in (0, 1, 7, 45):  # 45: a partial last chunk for every dtype
        host = VIEWS[view](host_data(dtype, (n,)))
        for src, dst in ((a, b), (b, a)):
            x = VIEWS[view](ga.asarray(host_data(dtype, (n,)), context=src))
            y = x.transfer(dst)
            assert y.context is dst and y.dtype == host.dtype and y.shape == host.shape
            np.testing.assert_array_equal(y.get(), host)
            np.testing.assert_array_equal(x.get(), host)


def test_transfer_shapes(pair, chunks):
    a, b = pair
    for host in (np.float32(2.5) * np.ones(()), np.zeros((0, 3), np.int32),
                 np.asfortranarray(host_data(np.int64, (5, 7)))):
        y = ga.asarray(host, context=a).transfer(b)
        assert y.context is b and y.shape == host.shape
        np.testing.assert_array_equal(y.get(), host)


@pytest.mark.parametrize("pinned_on", ["source", "target"])
def test_transfer_large(pair, monkeypatch, pinned_on):
    """Many chunks of a realistic size through few slots, both ways and back."""
    a, b = pair
    monkeypatch.setattr(staging, "CHUNK_BYTES", 64 << 10)
    monkeypatch.setattr(staging, "SLOTS", 2)
    monkeypatch.setattr(staging, "PINNED_ON", pinned_on)
    host = np.random.default_rng(0).random(3 << 17)  # 3 MiB: 48 chunks
    x = ga.asarray(host, context=a)
    y = x.transfer(b)
    z = y.transfer(a)
    np.testing.assert_array_equal(z.get(), host)
    np.testing.assert_array_equal(y.get(), host)


def test_transfer_orders_writes(pair, chunks):
    """Writes before a transfer reach it; writes after it on either side do not."""
    a, b = pair
    n = 1000
    x = ga.empty(n, dtype="int32", context=a)
    for v in range(10):
        x.fill(v)
    x[1::3] = 100  # a kernel
    want = np.full(n, 9, np.int32)
    want[1::3] = 100
    y = x.transfer(b)
    x.fill(-1)  # must not reach y
    y[::2] = 5  # must land after the copy into y
    want2 = want.copy()
    want2[::2] = 5
    np.testing.assert_array_equal(y.get(), want2)
    np.testing.assert_array_equal(x.get(), np.full(n, -1, np.int32))
    z = y.transfer(a).transfer(b).transfer(a)
    np.testing.assert_array_equal(z.get(), want2)


def test_freed_target_is_not_overwritten_late(pair):
    a, b = pair
    n = 4 << 20
    x = ga.empty(n, dtype="uint8", context=a)
    for v in range(20):
        x.fill(v % 7)
    y = x.transfer(b)
    del y
    gc.collect()
    z = ga.empty(n, dtype="uint8", context=b)
    z.fill(200)
    a.sync()
    b.sync()
    np.testing.assert_array_equal(np.unique(z.get()), [200])


def test_assignment_and_asarray_across(pair, chunks):
    a, b = pair
    host = host_data(np.complex64, (4, 5))
    x = ga.zeros((4, 5), dtype="complex64", context=a)
    x[...] = ga.asarray(host, context=b)
    np.testing.assert_array_equal(x.get(), host)
    y = ga.asarray(x[:, ::2], context=b, dtype="complex128")
    assert y.context is b
    np.testing.assert_array_equal(y.get(), host[:, ::2].astype(np.complex128))


def test_slots_survive_a_failing_step(pair, chunks):
    """A step that raises mid-run leaves the slots usable for the next run."""
    a, b = pair
    src = ga.asarray(np.arange(30, dtype=np.int32), context=a)
    dst = ga.zeros(30, dtype="int32", context=b)

    def boom():
        raise RuntimeError("injected")

    moves = [staging.Move(s, [d], [boom] if i == 1 else ())
             for i, (s, d) in enumerate(zip(staging.Region.of(src).chunks(4),
                                            staging.Region.of(dst).chunks(4)))]
    with pytest.raises(RuntimeError, match="injected"):
        staging.run(moves)
    assert not any(s.reading for s in a.state["staging_slots"])
    staging.copy(staging.Region.of(dst), staging.Region.of(src))
    np.testing.assert_array_equal(dst.get(), np.arange(30))


def test_move_after_and_then(pair, chunks):
    """A move waits for the moves it comes after: their `then` ran before its read."""
    a, b = pair
    x = ga.asarray(np.arange(12, dtype=np.float32), context=a)
    y = ga.zeros(12, dtype="float32", context=b)
    back = ga.zeros(12, dtype="float32", context=a)
    log = []
    first = staging.Move(staging.Region.of(x), [staging.Region.of(y)],
                         [lambda: (log.append("then"), y.__imul__(2))])
    second = staging.Move(staging.Region.of(y), [staging.Region.of(back)],
                          [lambda: log.append("second")], after=(first,))
    staging.run([first, second])
    assert log == ["then", "second"] and first.done and second.done
    np.testing.assert_array_equal(back.get(), np.arange(12) * 2)


# ---------------------------------------------------------------- collectives, bigger

@pytest.mark.parametrize("pinned_on", ["source", "target"])
@pytest.mark.parametrize("split", [False, True], ids=["whole", "split"])
def test_all_reduce_many_chunks(pair, monkeypatch, split, pinned_on):
    monkeypatch.setattr(staging, "PINNED_ON", pinned_on)
    monkeypatch.setattr(staging, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(staging, "SLOTS", 2)
    monkeypatch.setattr(collectives, "RING_BYTES", 0 if split else 1 << 62)
    rng = np.random.default_rng(1)
    hosts = [rng.random(10001).astype(np.float32) for _ in range(2)]  # odd, ~20 chunks
    xs = [ga.asarray(h, context=c) for h, c in zip(hosts, pair)]
    got = collectives.all_reduce(xs, "sum")
    for g in got:
        np.testing.assert_array_equal(g.get(), got[0].get())
        np.testing.assert_allclose(g.get(), hosts[0] + hosts[1], rtol=1e-6)
    cplx = [(h + 1j * h[::-1]).astype(np.complex64) for h in hosts]
    zs = [ga.asarray(h, context=c) for h, c in zip(cplx, pair)]
    collectives.all_reduce(zs, "prod", dest=zs)  # in place
    for z in zs:
        np.testing.assert_allclose(z.get(), cplx[0] * cplx[1], rtol=1e-5)
    ints = [ga.asarray(np.arange(10001, dtype=np.int64) * (r + 1), context=c)
            for r, c in enumerate(pair)]
    s = collectives.reduce_scatter([i[:10000] for i in ints], "max")
    np.testing.assert_array_equal(s[1].get(), np.arange(5000, 10000) * 2)
    r = collectives.reduce(ints, "min", root=1)
    np.testing.assert_array_equal(r[1].get(), np.arange(10001))
    collectives.broadcast(ints, root=1)
    np.testing.assert_array_equal(ints[0].get(), np.arange(10001) * 2)
    g = collectives.all_gather(xs, nd_up=0)
    np.testing.assert_array_equal(g[0].get(), np.concatenate([x.get() for x in xs]))


# ---------------------------------------------------------------- the symbolic layer

def test_symbolic_across_contexts(pair, chunks):
    a, b = pair
    xv = np.arange(12, dtype=np.float64).reshape(3, 4)
    s0 = T.shared(xv, target=a.devname)
    s1 = T.shared(xv * 2, target=b.devname)
    f = T.function([], [s0 + s1, (s1 * 3).transfer(a.devname), s0.transfer("cpu")],
                   updates=[(s1, s1 + s0)])
    total, moved, host = f()
    np.testing.assert_allclose(np.asarray(total), xv * 3)
    assert moved.context is a
    np.testing.assert_allclose(moved.get(), xv * 6)
    np.testing.assert_allclose(host, xv)
    assert s1.location is b
    np.testing.assert_allclose(np.asarray(s1.get_value()), xv * 3)
    total, _, _ = f()
    np.testing.assert_allclose(np.asarray(total), xv * 4)


@pytest.mark.parametrize("order", ["C", "F"])
def test_upload_while_another_thread_enqueues(ctx, monkeypatch, order):
    """A large write made while another thread holds the launch lock goes through the
    writing thread's pinned buffer in chunks (on a device whose memory is not the host's;
    made to look so here) and arrives whole; without contention it is the driver's copy."""
    import threading

    monkeypatch.setattr(ctx, "host_memory", False)
    monkeypatch.setattr(staging, "UPLOAD_BYTES", 1000)
    monkeypatch.setattr(staging, "UPLOAD_CHUNK", 768)  # chunks end inside elements' rows
    chunks = []
    write = staging.write_host
    monkeypatch.setattr(staging, "write_host",
                        lambda c, d, h, o: (chunks.append(o), write(c, d, h, o)))
    host = np.asarray(host_data(np.float32, (37, 29)), order=order)
    x = ga.empty(host.shape, np.float32, context=ctx, order=order)  # (allocating takes the lock)
    held, release = threading.Event(), threading.Event()

    def holder():
        with ctx.launch_lock:
            held.set()
            release.wait(30)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(30)
    threading.Timer(0.2, release.set).start()
    x.set(host)
    t.join()
    np.testing.assert_array_equal(x.get(), host)
    assert chunks == list(range(0, host.nbytes, 768))  # offsets of the chunks, in order
    chunks.clear()
    y = ga.asarray(host, context=ctx)  # nobody else holds the lock: one write
    np.testing.assert_array_equal(y.get(), host)
    assert chunks == [0]
