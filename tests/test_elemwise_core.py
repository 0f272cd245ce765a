"""The elementwise engine's layout handling: collapsing, index width, strided and scalar paths."""

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import elemwise


@pytest.mark.parametrize(
    ("shape", "strides", "dims", "collapsed"),
    [
        ((2, 3, 4), [[12, 4, 1]], [24], [[1]]),                   # C-contiguous: one dim
        ((2, 3, 4), [[24, 4, 1]], [2, 12], [[24, 1]]),            # gap after axis 0
        ((2, 1, 4), [[4, 99, 1]], [8], [[1]]),                    # size-1 axis ignored
        ((3, 4), [[4, 1], [0, 1]], [3, 4], [[4, 1], [0, 1]]),     # broadcast row blocks merge
        ((3, 4), [[-4, -1]], [12], [[-1]]),                       # reversed but dense
        ((), [[]], [], [[]]),
    ],
)
def test_collapse(shape, strides, dims, collapsed):
    assert elemwise.collapse(shape, strides) == (dims, collapsed)


def test_collapse_keeps_c_order_flat_index():
    shape, strides = (2, 3, 4, 5), [[60, 20, 5, 1], [0, 5, 1, 0]]
    dims, new = elemwise.collapse(shape, strides)
    for flat in range(120):
        idx = np.unravel_index(flat, shape)
        cidx = np.unravel_index(flat, dims)
        for old_s, new_s in zip(strides, new):
            assert sum(i * s for i, s in zip(idx, old_s)) == sum(i * s for i, s in zip(cidx, new_s))


def test_contiguous_and_strided_paths_agree(ctx):
    host = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = ga.asarray(host, context=ctx)
    np.testing.assert_array_equal((x * 2).get(), host * 2)
    view = x[::-1, 1::2, ::2]
    np.testing.assert_array_equal((view * 2).get(), host[::-1, 1::2, ::2] * 2)


def test_64bit_index_variant(ctx, monkeypatch):
    """Arrays over 2^31 elements take the 'long' variant; force it on a small array."""
    monkeypatch.setattr(elemwise, "_INT32_MAX", 10)
    monkeypatch.setattr(ctx, "plans", {})
    host = np.arange(40, dtype=np.int32).reshape(5, 8)
    x = ga.asarray(host, context=ctx)
    np.testing.assert_array_equal(x.T.copy().get(), host.T)
    np.testing.assert_array_equal(ga.arange(40, dtype="int32", context=ctx).get(), np.arange(40))
    assert any(key[-1] == "long" for key in ctx.kernels if key[0] == "elemwise")


def test_large_offset_switches_to_64bit(ctx, monkeypatch):
    """A cached 32-bit plan must not serve a view whose offset overflows 32 bits."""
    monkeypatch.setattr(elemwise, "_INT32_MAX", 50)
    monkeypatch.setattr(ctx, "plans", {})
    host = np.arange(60, dtype=np.int32)
    x = ga.asarray(host, context=ctx)
    np.testing.assert_array_equal((x[5:20] * 2).get(), host[5:20] * 2)  # plan made here
    np.testing.assert_array_equal((x[45:] * 2).get(), host[45:] * 2)    # same plan, offset 45


def test_one_kernel_serves_many_shapes_and_scalars(ctx):
    before = len(ctx.kernels)
    for n in (1, 7, 100, 1000):
        ga.full(n, 3.5, dtype="float32", context=ctx)[::2].fill(n)
    ga.empty((5, 3), dtype="float32", context=ctx)[:, ::2].fill(1)
    keys = [k for k in list(ctx.kernels)[before:]]
    assert len(keys) <= 2, keys  # 1-d strided fill and 2-d strided fill at most


@pytest.mark.parametrize("n", [1, 5, 4096, 4096 * 4 + 3])
def test_several_elements_per_work_item(ctx, monkeypatch, n):
    """The GPU variant (4 elements per work-item) on this device: full and ragged tails."""
    monkeypatch.setattr(ctx, "per_item", 4)
    monkeypatch.setattr(ctx, "plans", {})
    host = np.arange(n, dtype=np.float32) - n / 2
    x = ga.asarray(host, context=ctx)
    np.testing.assert_array_equal((x * 3 + 1).get(), host * 3 + 1)
    np.testing.assert_array_equal(ga.arange(n, dtype="int32", context=ctx).get(), np.arange(n))
    np.testing.assert_array_equal(x.astype("float16").get(), host.astype(np.float16))
    y = ga.zeros(n, dtype="float32", context=ctx)
    ga.ElemwiseKernel("float *x, float *y", "y[i] = x[i] + i")(x, y)
    np.testing.assert_array_equal(y.get(), host + np.arange(n, dtype=np.float32))
    assert any(key[3] == 4 for key in ctx.kernels if key[0] == "elemwise")


@pytest.mark.parametrize("n", [63, 64, 64 * 3 + 5])
def test_cpu_bulk_and_tail_launches(ctx, monkeypatch, n):
    """On CPUs whole work-groups run unguarded (vectorisable) and the tail guarded."""
    if ctx.device.type != "CPU":
        pytest.skip("the bulk/tail split is the CPU variant")
    monkeypatch.setattr(ctx, "local_size", 64)
    monkeypatch.setattr(ctx, "plans", {})
    host = np.arange(n, dtype=np.float32)
    x = ga.asarray(host, context=ctx)
    np.testing.assert_array_equal((x * 2 + 1).get(), host * 2 + 1)
    np.testing.assert_array_equal(x[::-2].copy().get(), host[::-2])
    plan = next(p for key, p in ctx.plans.items() if key[1] == (n,))
    assert len(plan.launches) == (n >= 64) + (n % 64 != 0)


def test_launches_from_several_threads(ctx):
    """Kernel arguments are shared state: concurrent launches must not mix them up."""
    import threading

    hosts = [np.full(3000, k, dtype=np.float32) for k in range(4)]
    arrays = [ga.asarray(h, context=ctx) for h in hosts]
    results, errors = {}, []

    def work(k):
        try:
            out = arrays[k]
            for _ in range(50):
                out = out + 1
            results[k] = out.get()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(4):
        np.testing.assert_array_equal(results[k], hosts[k] + 50)
