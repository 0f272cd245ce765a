"""Reliability of the array layer (issue 26, items 1, 4 and 9), numpy as the oracle:
outputs (out=, overwrite_c=) that overlap the inputs, constructors given storage, strides
and offsets, and numpy's numeric edges (ddof >= n, bool bytes other than 0 and 1, bools
and oversized integers as sizes, axes and offsets)."""

import warnings

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import blas, errors
from gpuarr.array import GpuArray


@pytest.fixture(autouse=True)
def _default_context(ctx):
    """Every array here lives on the session's context."""
    return ctx


def _host(dtype=np.float64):
    return np.arange(16, dtype=dtype).reshape(4, 4)


# ---------------------------------------------------------------- item 1: out= overlapping

# (id, fn(xp, x)): run on numpy with a host x and on gpuarr with the same x on the device;
# afterwards x (written through the overlapping out) and the result must agree.
OVERLAP = [
    ("sum out=x[1]", lambda xp, x: xp.sum(x, axis=0, out=x[1])),
    ("prod out=x[::-1, 2]", lambda xp, x: xp.prod(x, axis=0, out=x[::-1, 2])),
    ("cumsum out=x.T", lambda xp, x: xp.cumsum(x, axis=0, out=x.T)),
    ("cumsum out=x", lambda xp, x: xp.cumsum(x, axis=1, out=x)),
    ("cumprod out=x", lambda xp, x: xp.cumprod(x[:, ::-1], axis=0, out=x)),
    ("max keepdims out=x[:1]", lambda xp, x: xp.max(x, axis=0, keepdims=True, out=x[:1])),
    ("sum initial out=x[0]", lambda xp, x: xp.sum(x, axis=1, initial=1.0, out=x[0])),
    ("mean out=x[2]", lambda xp, x: xp.mean(x, axis=0, out=x[2])),
    ("var out=x[:, 1]", lambda xp, x: xp.var(x, axis=1, out=x[:, 1])),
    ("std out=x[3]", lambda xp, x: xp.std(x, axis=0, ddof=1, out=x[3])),
    ("trace out=x[0]", lambda xp, x: xp.trace(x.reshape(2, 2, 4), axis1=0, axis2=1, out=x[0])),
    ("matmul out=x", lambda xp, x: xp.matmul(x, x, out=x)),
    ("matmul 1-d out=0-d", lambda xp, x: xp.matmul(x[0], x[1], out=x[0, :1].reshape(()))),
    ("dot out=x", lambda xp, x: xp.dot(x, x[::-1], out=x)),
    ("einsum product out=x", lambda xp, x: xp.einsum("ij,jk->ik", x, x, out=x)),
    ("einsum transpose out=x", lambda xp, x: xp.einsum("ij->ji", x, out=x)),
    ("take out=x[::-1]", lambda xp, x: xp.take(x, [0, 1, 2, 3], axis=0, out=x[::-1])),
    ("compress out=x", lambda xp, x: xp.compress([1, 1, 1, 1], x[:, ::-1], axis=1, out=x)),
    ("clip out=x", lambda xp, x: xp.clip(x[::-1], 2, 9, out=x)),
    ("round out=x[::-1]", lambda xp, x: xp.round(xp.multiply(x, 0.37, out=x), 1, out=x[::-1])),
]


@pytest.mark.parametrize("fn", [c[1] for c in OVERLAP], ids=[c[0] for c in OVERLAP])
def test_out_overlapping_the_input_gives_numpys_result(fn):
    h = _host()
    x = ga.asarray(h)
    expected = fn(np, h)
    got = fn(ga, x)
    np.testing.assert_allclose(x.get(), h, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12)


def test_ptp_out_overlapping_the_input_reads_the_input_first():
    """numpy's ptp writes the max into out before it reads the min (giving 8s here); gpuarr
    gives the peak-to-peak of the input, as for every other op with out=."""
    h = _host()
    x = ga.asarray(h)
    ga.ptp(x, axis=0, out=x[0])
    h[0] = 12.0
    np.testing.assert_array_equal(x.get(), h)


@pytest.mark.parametrize("name", ["concatenate", "stack"])
def test_joining_into_an_overlapping_out_joins_the_inputs(name):
    """numpy's concatenate copies piece by piece, so a later piece reads what an earlier one
    wrote over it; gpuarr joins the inputs as they were (numpy's result on copies)."""
    h = _host()
    x = ga.asarray(h)
    if name == "concatenate":
        expected = np.concatenate([h[2:].copy(), h[:2].copy()], axis=0)
        ga.concatenate([x[2:], x[:2]], axis=0, out=x)
    else:
        expected = np.stack([h[:, 3 - k].copy() for k in range(4)], axis=1)
        ga.stack([x[:, 3 - k] for k in range(4)], axis=1, out=x)
    np.testing.assert_array_equal(x.get(), expected)


def test_arg_reduction_out_overlapping_the_input():
    h = _host(np.int64)[:, ::-1].copy()
    x = ga.asarray(h)
    np.argmax(h, axis=0, out=h[0])
    ga.argmax(x, axis=0, out=x[0])
    np.argmin(h, axis=1, out=h[::-1, 1])
    ga.argmin(x, axis=1, out=x[::-1, 1])
    np.testing.assert_array_equal(x.get(), h)


def test_where_mask_overlapping_out():
    h = np.array([True, False, False, True, True, False])
    x = ga.asarray(h)
    np.logical_not(h, out=h, where=h[::-1])
    ga.logical_not(x, out=x, where=x[::-1])
    np.testing.assert_array_equal(x.get(), h)


def test_reduction_kernel_out_overlapping_an_input():
    h = _host()
    x = ga.asarray(h)
    dot = blas._dot_kernel(np.dtype(np.float64))  # a ReductionKernel: sum of x[i] * y[i]
    expected = (h * h[::-1]).sum(axis=0)
    dot(x, x[::-1], axis=0, out=x[1])
    h[1] = expected
    np.testing.assert_allclose(x.get(), h)


@pytest.mark.parametrize("overlap", ["C is A", "C is B.T"])
def test_gemm_overwrite_c_overlapping_an_operand(overlap):
    h = _host() / 16
    x = ga.asarray(h)
    c = x if overlap == "C is A" else x.T
    expected = 2 * (h @ h.T) + 0.5 * (h if overlap == "C is A" else h.T)
    assert blas.gemm(2.0, x, x, 0.5, c, trans_b=True, overwrite_c=True) is c
    np.testing.assert_allclose(c.get(), expected, rtol=1e-12)


def test_reduction_out_must_be_a_writeable_gpuarray():
    x = ga.asarray(_host())
    with pytest.raises(errors.ArgumentTypeError, match="out= must be a GpuArray"):
        ga.sum(x, axis=0, out=np.zeros(4))
    with pytest.raises(errors.ReadOnlyError):
        ga.sum(x, axis=0, out=ga.broadcast_to(x[0, 0], (4,)))


# ---------------------------------------------------------------- item 4: checked layouts

def test_constructor_views_inside_the_storage():
    h = _host()
    x = ga.asarray(h)
    s = x.storage
    view = GpuArray((4,), np.float64, storage=s, strides=(40,), offset=0)  # the diagonal
    np.testing.assert_array_equal(view.get(), np.diagonal(h))
    back = GpuArray((2, 2), np.float64, storage=s, strides=(-64, -8), offset=15 * 8)
    np.testing.assert_array_equal(back.get(), h[::-2, ::-1][:2, :2])
    assert GpuArray((0, 3), np.float64, storage=s, offset=128).size == 0  # at the end


BAD_LAYOUTS = [  # shape, strides, offset, words of the message
    ((17,), None, 0, ["[0, 136)"]),
    ((4,), (40,), 8, ["[8, 136)", "strides (40,)", "offset 8"]),
    ((2,), (-8,), 0, ["[-8, 8)"]),
    ((2, 2), (64, 8), 96, ["[96, 176)"]),
    ((3,), (8,), -8, ["[-8, 16)"]),
    ((0,), (8,), 136, ["offset 136"]),
    ((4,), (12,), 0, ["multiples of the item size (8)"]),
    ((4,), (8,), 4, ["multiples of the item size (8)"]),
    ((4, 4), (8,), 0, ["one entry per dimension"]),
]


@pytest.mark.parametrize("shape, strides, offset, words", BAD_LAYOUTS,
                         ids=[f"{s}-{st}-{o}" for s, st, o, _ in BAD_LAYOUTS])
def test_constructor_rejects_layouts_outside_the_storage(shape, strides, offset, words):
    x = ga.asarray(_host())
    with pytest.raises(errors.ArgumentError) as info:
        GpuArray(shape, np.float64, storage=x.storage, strides=strides, offset=offset)
    message = str(info.value)
    for word in [*words, f"shape {shape}", "buffer of 128 bytes"]:
        assert word in message
    np.testing.assert_array_equal(x.get(), _host())  # nothing was written


def test_constructor_checks_strides_of_a_new_allocation():
    with pytest.raises(errors.ArgumentError, match=r"\[0, 36\).*buffer of 12 bytes"):
        GpuArray((3,), np.float32, strides=(16,))
    with pytest.raises(errors.ArgumentTypeError, match="storage= must be a gpuarr Storage"):
        GpuArray((3,), np.float32, storage=np.zeros(3, np.float32))


# ---------------------------------------------------------------- item 9: numeric edges

@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("axis, ddof", [(1, 3), (1, 4), (None, 6), (0, 2)])
def test_var_std_with_ddof_at_least_n_match_numpy(name, axis, ddof):
    h = np.array([[1.0, 2.0, 4.0], [5.0, 5.0, 4.0]])  # inf where values differ, nan else
    x = ga.asarray(h)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(np, name)(h, axis=axis, ddof=ddof)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom <= 0 for slice"):
        got = getattr(ga, name)(x, axis=axis, ddof=ddof)
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_mean_of_an_empty_slice_warns_as_numpy():
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        got = ga.mean(ga.zeros((0, 3), np.float64), axis=0)
    np.testing.assert_array_equal(got.get(), np.full(3, np.nan))


def test_var_with_ddof_below_n_does_not_warn():
    h = np.array([1.0, 2.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(ga.var(ga.asarray(h), ddof=2).get(), np.var(h, ddof=2))


def test_bool_view_of_bytes_other_than_one_is_true():
    raw = np.array([[2, 255, 0], [0, 1, 128]], np.uint8)
    h, x = raw.view(np.bool_), ga.asarray(raw).view(np.bool_)
    assert int(ga.sum(x)) == h.sum() == 4
    np.testing.assert_array_equal(ga.sum(x, axis=0).get(), h.sum(axis=0))
    np.testing.assert_array_equal(ga.cumsum(x, axis=1).get(), h.cumsum(axis=1))
    np.testing.assert_array_equal(x.astype(np.int32).get(), h.astype(np.int32))
    np.testing.assert_array_equal(ga.argmax(x, axis=1).get(), h.argmax(axis=1))
    np.testing.assert_array_equal(ga.max(x, axis=1).get(), h.max(axis=1))
    np.testing.assert_allclose(ga.mean(x).get(), h.mean())
    assert int(ga.count_nonzero(x)) == np.count_nonzero(h)


# (id, fn(xp), the builtin numpy raises, the gpuarr class)
REFUSED = [
    ("zeros(True)", lambda xp: xp.zeros(True), TypeError, errors.ArgumentTypeError),
    ("zeros((2, True))", lambda xp: xp.zeros((2, True)), TypeError, errors.ArgumentTypeError),
    ("zeros(np.True_)", lambda xp: xp.zeros(np.True_), TypeError, errors.ArgumentTypeError),
    ("sum axis=True", lambda xp: xp.sum(xp.ones((2, 2)), axis=True), TypeError,
     errors.ArgumentTypeError),
    ("diag 2-d k=2**70", lambda xp: xp.diag(xp.ones((3, 3)), k=2**70), OverflowError,
     errors.ArgumentOverflow),
    ("diag 1-d k=2**70", lambda xp: xp.diag(xp.ones(3), k=2**70), ValueError,
     errors.ShapeError),
    ("zeros((0, 2**62))", lambda xp: xp.zeros((0, 2**62)), ValueError, errors.ShapeError),
    ("empty((2**62, 0, 4))", lambda xp: xp.empty((2**62, 0, 4)), ValueError, errors.ShapeError),
    ("zeros(2**62)", lambda xp: xp.zeros(2**62), ValueError, errors.ShapeError),
]


@pytest.mark.parametrize("fn, builtin, cls", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refused_where_numpy_refuses(fn, builtin, cls):
    with pytest.raises(builtin):
        fn(np)
    with pytest.raises(cls) as info:
        fn(ga)
    assert isinstance(info.value, builtin)


def test_sizes_numpy_accepts_still_work():
    assert ga.zeros((0, 2**40)).shape == (0, 2**40)
    assert ga.sum(ga.ones((2, 3)), axis=np.int64(1)).shape == (2,)
    assert ga.diag(ga.ones((3, 3)), k=2**62).shape == (0,)
