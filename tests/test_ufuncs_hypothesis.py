"""Property tests: ufuncs on random shapes, broadcasting and strided views equal numpy's."""

import numpy as np
import pytest
from conftest import view_index
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gpuarr as ga

DTYPES = ["bool", "int8", "uint8", "int32", "float32", "float64"]
BINARY = ["add", "subtract", "multiply", "maximum", "fmin", "less", "not_equal",
          "bitwise_xor", "floor_divide"]
UNARY = ["negative", "absolute", "sign", "logical_not", "isnan", "square"]

SETTINGS = settings(derandomize=True, deadline=None, max_examples=50, database=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


def _elements(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return st.floats(width=dt.itemsize * 8)
    return None  # hypothesis' default: the whole range of the dtype


@st.composite
def broadcast_shapes(draw, n):
    """An output shape (mostly 1 to 3 dims of 1 to 5, now and then 0-d or empty) and n
    shapes broadcasting to it (leading dims dropped, some dims 1)."""
    out = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
    if draw(st.integers(0, 9)) == 5:
        out = []
    elif draw(st.integers(0, 9)) == 5:
        out[draw(st.integers(0, len(out) - 1))] = 0
    shapes = []
    for _ in range(n):
        drop = min(draw(st.sampled_from([0, 0, 0, 1, 2])), len(out))
        shape = [1 if draw(st.integers(0, 3)) == 2 else s for s in out[drop:]]
        shapes.append(tuple(shape))
    return tuple(out), shapes


@st.composite
def views(draw, shape, dtype):
    """(host view, parent host array, the index making the view, F order?) of `shape`."""
    steps = [draw(st.sampled_from([1, 2, -1, -2])) for _ in shape]
    starts = [draw(st.integers(0, 2)) for _ in shape]
    parent_shape = tuple(st_ + n * abs(sp) + 1 for n, sp, st_ in zip(shape, steps, starts))
    parent = draw(hnp.arrays(dtype, parent_shape, elements=_elements(dtype)))
    if len(shape) > 1 and draw(st.booleans()):
        parent = np.asfortranarray(parent)
    index = view_index(shape, steps, starts)
    view = parent[index]
    assert view.shape == tuple(shape)
    return view, parent, index


def _operand(draw, shape, dtype, ctx):
    """A (host, device) pair: a strided view, or now and then a Python scalar."""
    if draw(st.integers(0, 7)) == 5:
        dt = np.dtype(dtype)
        value = draw({"b": st.booleans(), "i": st.integers(-100, 100),
                      "u": st.integers(0, 200), "f": st.floats(-1e3, 1e3)}[dt.kind])
        return value, value
    view, parent, index = draw(views(shape, dtype))
    return view, ga.asarray(parent, context=ctx)[index]


def _assert_equal(got, expected):
    expected = np.asarray(expected)
    assert isinstance(got, ga.GpuArray)
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.get(), expected)


def _builtin(error):
    """The builtin class of numpy's exception, which gpuarr's must derive from too."""
    return next(c for c in (OverflowError, TypeError, ValueError) if isinstance(error, c))


def _numpy(fn):
    with np.errstate(all="ignore"):
        try:
            return fn(), None
        except (TypeError, ValueError, OverflowError) as e:
            return None, e


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@SETTINGS
@given(data=st.data())
def test_binary_ufuncs_random_layouts(ctx, data):
    name = data.draw(st.sampled_from(BINARY))
    dts = [data.draw(st.sampled_from(DTYPES)) for _ in range(2)]
    _, shapes = data.draw(broadcast_shapes(2))
    ops = [_operand(data.draw, s, d, ctx) for s, d in zip(shapes, dts)]
    hosts, devs = [h for h, _ in ops], [d for _, d in ops]
    expected, error = _numpy(lambda: getattr(np, name)(*hosts))
    event("numpy refuses" if error is not None else
          f"compared: ndim {np.ndim(expected)}, empty {np.size(expected) == 0}")
    if error is not None:
        with pytest.raises(_builtin(error)):
            getattr(ga, name)(*devs)
        return
    if not any(isinstance(d, ga.GpuArray) for d in devs):
        return  # two Python scalars: nothing on the device to compare
    _assert_equal(getattr(ga, name)(*devs), expected)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@SETTINGS
@given(data=st.data())
def test_unary_ufuncs_random_layouts(ctx, data):
    name = data.draw(st.sampled_from(UNARY))
    dt = data.draw(st.sampled_from(DTYPES))
    out_shape, (shape,) = data.draw(broadcast_shapes(1))
    view, parent, index = data.draw(views(shape, dt))
    dev = ga.asarray(parent, context=ctx)[index]
    if data.draw(st.booleans()):  # a broadcast (stride 0) input
        view = np.broadcast_to(view, out_shape)
        dev = ga.broadcast_to(dev, out_shape)
    expected, error = _numpy(lambda: getattr(np, name)(view))
    if error is not None:
        with pytest.raises(TypeError):
            getattr(ga, name)(dev)
        return
    _assert_equal(getattr(ga, name)(dev), expected)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@SETTINGS
@given(data=st.data())
def test_out_into_strided_views(ctx, data):
    """ga.add(a, b, out=view): the view gets numpy's values, the rest of its parent stays."""
    dts = [data.draw(st.sampled_from(["int32", "float32", "float64"])) for _ in range(3)]
    out_shape, shapes = data.draw(broadcast_shapes(2))
    ops = [_operand(data.draw, s, d, ctx) for s, d in zip(shapes, dts[:2])]
    _, out_parent, index = data.draw(views(out_shape, dts[2]))
    out_parent = out_parent.copy(order="K")
    dev_parent = ga.asarray(out_parent, context=ctx)
    _, error = _numpy(lambda: np.add(*(h for h, _ in ops), out=out_parent[index]))
    if error is not None:
        with pytest.raises(TypeError):
            ga.add(*(d for _, d in ops), out=dev_parent[index])
        return
    res = ga.add(*(d for _, d in ops), out=dev_parent[index])
    assert res.shape == out_shape
    np.testing.assert_array_equal(dev_parent.get(), out_parent)
