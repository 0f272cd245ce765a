"""Reductions and scans over more than 2^31 elements (64-bit indexing in the kernels).

They need several GiB on the device and minutes on a CPU, so they run only where asked:
    GPUARR_TEST_HUGE=1 python -m pytest tests/test_huge.py
"""

import os

import numpy as np
import pytest

import gpuarr as ga

N = 2**31 + 37  # past the int32 index range

pytestmark = pytest.mark.skipif(not os.environ.get("GPUARR_TEST_HUGE"),
                                reason="set GPUARR_TEST_HUGE=1 to run (needs ~20 GiB)")


@pytest.fixture(scope="module")
def huge(ctx):
    """N uint8 ones with a 3 near the end and a 2 just past 2^31."""
    if ctx.total_gmem < 24 * 2**30:
        pytest.skip(f"{ctx.devname} has {ctx.total_gmem / 2**30:.0f} GiB; 24 needed")
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
