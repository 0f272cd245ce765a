"""Arrays past 2^31 elements and 4 GiB: elementwise, reductions, scans and transfers (64-bit
indexing in the kernels and offsets past 4 GiB in the copies), checked against numpy on
sampled positions (and whole where a host copy is cheap).

They need tens of GiB on a GPU (minutes and all the memory on a CPU), so they run only where
asked, on a GPU:
    GPUARR_TEST_HUGE=1 GPUARR_TEST_DEVICE=cl:nvidia python -m pytest -rs tests/test_huge.py
"""

import os

import numpy as np
import pytest

import gpuarr as ga

N = 2**31 + 37  # past the int32 index range (5 * 429496737)

pytestmark = pytest.mark.skipif(not os.environ.get("GPUARR_TEST_HUGE"),
                                reason="set GPUARR_TEST_HUGE=1 to run on a GPU (needs ~40 GiB)")


def _need_gpu(ctx, gib):
    if not ctx.device.is_gpu:
        pytest.skip(f"{ctx.devname} ({ctx.device.device_name}) is not a GPU: these tests take "
                    f"minutes and {gib} GiB there; pick one with GPUARR_TEST_DEVICE=cl:nvidia")
    if ctx.total_gmem < gib * 2**30:
        pytest.skip(f"{ctx.devname} has {ctx.total_gmem / 2**30:.0f} GiB; {gib} needed")


@pytest.fixture(scope="module")
def huge(ctx):
    """N uint8 ones with a 3 near the end and a 2 just past 2^31."""
    _need_gpu(ctx, 24)
    x = ga.full(N, 1, dtype=np.uint8, context=ctx)
    x[N - 5] = 3
    x[2**31 + 1] = 2
    return x


def test_full_reductions_past_int32(huge):
    assert int(huge.sum().get()) == N + 2 + 1
    assert int(huge.max().get()) == 3
    assert int(huge.argmax().get()) == N - 5
    assert int(huge[: N - 10].argmax().get()) == 2**31 + 1
    assert int(ga.count_nonzero(huge).get()) == N


def test_strided_and_axis_reductions_past_int32(huge):
    view = huge[1::2]  # offset 1, stride 2: element 2^31 + 1 is view[2^30]
    assert int(view.sum().get()) == (N - 1) // 2 + 1 + (2 if (N - 5) % 2 else 0)
    rows = huge[: 2**31].reshape(2**16, 2**15)
    col = rows.sum(axis=0).get()
    assert col.shape == (2**15,) and col.min() == 2**16
    row = rows.sum(axis=1).get()
    assert row.shape == (2**16,) and int(row.sum()) == 2**31


def test_cumsum_past_int32(huge):
    out = huge.cumsum()  # 8 bytes per element: 16 GiB
    tail = out[N - 8:].get()
    assert tail.dtype == np.cumsum(np.ones(1, np.uint8)).dtype
    assert int(tail[-1]) == N + 2 + 1
    assert int(out[2**31 + 1].get()) == 2**31 + 2 + 1
    assert int(out[2**31].get()) == 2**31 + 1


# ---------------------------------------------------------------- past 4 GiB

B = 2**31  # the boundary under test (N is B + 37)
BYTES = N * 4  # uint32: 8 GiB and a bit


def _sample(size=N, count=4096, seed=0):
    """Sorted positions in [0, size): random ones and those around B and the ends."""
    rng = np.random.default_rng(seed)
    edges = [0, 1, B - 2, B - 1, B, B + 1, size // 4 * 3, size - 2, size - 1]
    return np.unique(np.concatenate([[e for e in edges if e < size],
                                     rng.integers(0, size, count)]))


@pytest.fixture(scope="module")
def big(ctx):
    """arange(N) as uint32 (element i is i): 8 GiB in one buffer."""
    _need_gpu(ctx, 40)
    if ctx.device.max_alloc < BYTES:
        pytest.skip(f"{ctx.devname} allocates at most {ctx.device.max_alloc / 2**30:.1f} GiB "
                    f"at once; {BYTES / 2**30:.1f} needed")
    return ga.arange(N, dtype=np.uint32, context=ctx)


def _check_at(got, want_of, positions, what):
    """got[positions] (gathered on the device) and two slices across 2^31 and at the end."""
    idx = np.asarray(positions, np.int64)
    np.testing.assert_array_equal(got[ga.asarray(idx, context=got.context)].get(), want_of(idx),
                                  err_msg=what)
    for lo, hi in ((min(B, got.size) - 3, min(B + 3, got.size)), (got.size - 5, got.size)):
        np.testing.assert_array_equal(got[lo:hi].get(), want_of(np.arange(lo, hi)), err_msg=what)


def test_elementwise_past_4gib(big):
    i = np.uint64
    y = big * 3 + 7  # uint32 wraps as numpy's does
    _check_at(y, lambda k: ((k.astype(i) * 3 + 7) % 2**32).astype(np.uint32), _sample(), "3x+7")
    del y
    odd = big[1::2] - big[: N - 1:2]  # strided and offset operands: all ones
    assert odd.size == N // 2 and int(odd.min().get()) == int(odd.max().get()) == 1
    del odd
    f = big.astype(np.float32) * 0.5
    _check_at(f, lambda k: k.astype(np.uint32).astype(np.float32) * np.float32(0.5),
              _sample(seed=1), "float32(x) * 0.5")
    del f
    ends = ga.where(big >= B, big, 0)  # a comparison and a select: bool and uint32
    _check_at(ends, lambda k: np.where(k >= B, k, 0).astype(np.uint32), _sample(seed=2),
              "where")


def test_reductions_past_4gib(big):
    assert int(big.sum().get()) == N * (N - 1) // 2  # uint64 accumulator: exact
    assert int(big.max().get()) == N - 1 and int(big.min().get()) == 0
    assert int(big.argmax().get()) == N - 1
    assert int(big[::-1].argmin().get()) == N - 1
    assert int(ga.count_nonzero(big).get()) == N - 1
    assert float(big.mean().get()) == pytest.approx((N - 1) / 2, rel=1e-9)
    u = np.uint64
    cols = N // 5  # N = 5 * cols: the whole array as 5 long rows, and as cols rows of 5
    wide, tall = big.reshape(5, cols), big.reshape(cols, 5)
    r = np.arange(5, dtype=u)
    np.testing.assert_array_equal(wide.sum(axis=1).get(), r * cols * cols + cols * (cols - 1) // 2)
    _check_at(wide.sum(axis=0), lambda c: c.astype(u) * 5 + cols * 10, _sample(cols, seed=4),
              "sum over 5 rows")
    _check_at(wide.max(axis=0), lambda c: (c + 4 * cols).astype(np.uint32),
              _sample(cols, seed=5), "max over 5 rows")
    _check_at(tall.sum(axis=1), lambda k: k.astype(u) * 25 + 10, _sample(cols, seed=6),
              "sums of rows of 5")


def test_transfers_past_4gib(ctx, ctx_gpus):
    """Host -> device -> host of 8 GiB whole, reads and writes at offsets past 4 GiB, a strided
    read, a device copy, a device-to-device transfer (two GPUs of one platform), and a fill
    past 2^31 bytes."""
    _need_gpu(ctx, 40)
    host = np.arange(N, dtype=np.uint32)
    d = ga.asarray(host, context=ctx)
    np.testing.assert_array_equal(d.get(), host)
    np.testing.assert_array_equal(d[1::3].get(), host[1::3])
    d[N - 3:] = np.array([1, 2, 3], np.uint32)
    d[B + 1: B + 4] = 9
    host[N - 3:] = [1, 2, 3]
    host[B + 1: B + 4] = 9
    sample = _sample(seed=3)
    for target in [None, *ctx_gpus]:  # a copy on ctx, then one on each other GPU
        copy = d.copy() if target is None else d.transfer(target)
        _check_at(copy, lambda k: host[k], sample, f"copy on {copy.context.devname}")
        del copy
    del d
    full = ga.full(N, 7, dtype=np.uint32, context=ctx)
    assert int(full.sum().get()) == 7 * N
    _check_at(full, lambda k: np.full(k.shape, 7, np.uint32), sample, "full")


@pytest.fixture
def ctx_gpus(ctx):
    """The other GPUs of ctx's platform with room for a copy (none on a one-GPU host)."""
    from conftest import USABLE
    return [ga.init(d.name) for d in USABLE if d.name != ctx.devname and d.is_gpu and
            d.platform_index == ctx.device.platform_index and d.global_mem > 2 * BYTES]
