"""The bad-input catalogue: wrong uses across the API raise gpuarr's exceptions (which also
derive from the builtin numpy raises) with messages naming the values involved, and the
library keeps working afterwards. NaN and infinity, which numpy accepts, give numpy's
results rather than errors.

Each CASES entry is (id, call on the shared arrays, exception type, words the message
must contain; {ctx} and {other} stand for the two contexts' device names).
"""

import dataclasses
import os
import warnings

import numpy as np
import pytest
from conftest import using_flags

import gpuarr as ga
from gpuarr import config, errors
from gpuarr.reduction import ReductionKernel


@pytest.fixture(scope="module")
def env(ctx_pair):
    """Small arrays on the first context and one on the second (two PoCL devices)."""
    ctx, other = ctx_pair
    return dict(
        ctx=ctx, other=other,
        x=ga.asarray(np.arange(12, dtype=np.float32).reshape(3, 4), context=ctx),
        v=ga.asarray(np.arange(5, dtype=np.float32), context=ctx),
        i=ga.asarray(np.arange(5, dtype=np.int32), context=ctx),
        u8=ga.asarray(np.arange(5, dtype=np.uint8), context=ctx),
        b=ga.asarray(np.array([True, False]), context=ctx),
        y=ga.asarray(np.ones((3, 4), np.float32), context=other),
    )


def _setitem(a, key, value):
    a[key] = value


def _make_writeable(a):
    a.flags.writeable = True


def _readonly(e):
    a = e["x"].copy()
    a.flags.writeable = False
    return a


def _flags(text):
    return config.load({"GPUARR_FLAGS": text, "GPUARRRC": os.devnull})


E = errors
CASES = [
    # flags and configuration
    ("unknown flag", lambda e: _flags("devcie=cl0:0"), E.FlagError,
     ["unknown flag 'devcie'", "valid flags", "device"]),
    ("flag without value", lambda e: _flags("force_device"), E.FlagError,
     ["malformed flag 'force_device'", "key=value"]),
    ("bad boolean flag", lambda e: _flags("force_device=maybe"), E.FlagError,
     ["'maybe'", "force_device"]),
    ("bad floatX", lambda e: _flags("floatX=float16"), E.FlagError,
     ["'float16'", "floatX", "float32 or float64"]),
    ("bad preallocate", lambda e: _flags("preallocate=lots"), E.FlagError,
     ["'lots'", "preallocate"]),
    ("bad blas_backend", lambda e: _flags("blas_backend=cuda"), E.FlagError,
     ["'cuda'", "blas_backend", "clblast"]),
    ("malformed contexts flag", lambda e: _flags("contexts=dev0=cl0:0"), E.FlagError,
     ["dev0=cl0:0", "name->device"]),
    ("context mapped twice", lambda e: _flags("contexts=dev0->cl0:0;dev0->cl0:1"), E.FlagError,
     ["'dev0'", "mapped twice"]),
    ("malformed device flag", lambda e: _flags("device=gpu0"), E.FlagError,
     ["malformed device 'gpu0'", "cl<platform>:<device>"]),
    # devices and contexts
    ("absent device", lambda e: ga.init("cl9:0"), E.DeviceNotFound,
     ["no device 'cl9:0'", "devices: cl0:0"]),
    ("no device matches text", lambda e: ga.init("cl:nosuchvendor"), E.DeviceNotFound,
     ["'cl:nosuchvendor'"]),
    ("device string not a device", lambda e: ga.init("gpu"), E.DeviceNotFound,
     ["'gpu'", "cl<platform>:<device>"]),
    ("unknown context name", lambda e: ga.get_context("nosuch"), E.ContextNotDefined,
     ["unknown context name 'nosuch'", "defined:", "contexts=name->cl0:0"]),
    ("context of wrong type", lambda e: ga.get_context(42), E.ArgumentTypeError,
     ["not 42"]),
    ("reserved context name", lambda e: ga.init("cl0:0", name="cl_x"), E.FlagError,
     ["reserved context name 'cl_x'"]),
    ("invalid context name", lambda e: ga.init("cl0:0", name="0dev"), E.FlagError,
     ["invalid context name '0dev'"]),
    ("transfer to unknown context", lambda e: e["x"].transfer("nosuch"), E.ContextNotDefined,
     ["'nosuch'"]),
    # two contexts in one operation
    ("ufunc across contexts", lambda e: ga.add(e["x"], e["y"]), E.ContextMismatch,
     ["'{ctx}'", "'{other}'", "transfer"]),
    ("matmul across contexts", lambda e: e["x"] @ e["y"].T, E.ContextMismatch,
     ["{ctx}", "{other}"]),
    ("concatenate across contexts", lambda e: ga.concatenate([e["x"], e["y"]]),
     E.ContextMismatch, ["{ctx}", "{other}"]),
    ("reduction out= on another context",
     lambda e: ga.sum(e["x"], axis=0, out=ga.empty(4, np.float32, context=e["other"])),
     E.ContextMismatch, ["{ctx}", "{other}"]),
    ("user kernel across contexts",
     lambda e: ga.ElemwiseKernel("float *a, float *b", "a[i] = b[i]")(e["x"], e["y"]),
     E.ContextMismatch, ["{ctx}", "{other}"]),
    # shapes
    ("broadcast mismatch", lambda e: e["x"] + e["v"], E.ShapeError,
     ["could not be broadcast", "(3, 4)", "(5,)"]),
    ("reshape to another size", lambda e: e["x"].reshape(7), E.ShapeError,
     ["size 12", "(7,)"]),
    ("reshape with two -1", lambda e: e["x"].reshape(-1, -1), E.ShapeError, ["(-1, -1)"]),
    ("negative dimension", lambda e: ga.empty((-1, 2), context=e["ctx"]), E.ShapeError,
     ["negative dimensions", "(-1, 2)"]),
    ("shape of a string", lambda e: ga.zeros("ab", context=e["ctx"]), E.ShapeError,
     ["'ab'"]),
    ("matmul core dims", lambda e: e["x"] @ e["x"], E.ShapeError,
     ["mismatch in its core dimension", "(3, 4)"]),
    ("concatenate ndims", lambda e: ga.concatenate([e["x"], e["v"]]), E.ShapeError,
     ["same number of dimensions", "2 dimension(s)", "1 dimension(s)"]),
    ("set() of another shape", lambda e: e["x"].set(np.zeros(3)), E.ShapeError,
     ["(3, 4)", "(3,)"]),
    ("squeeze a long axis", lambda e: e["x"].squeeze(axis=0), E.ShapeError,
     ["axis (0,)", "(3, 4)", "size 1"]),
    ("split into unequal parts", lambda e: ga.split(e["v"], 2), E.ArgumentError,
     ["equal division", "5 elements", "2 sections"]),
    # axes
    ("axis out of range", lambda e: e["x"].sum(axis=3), E.AxisError,
     ["axis 3", "dimension 2"]),
    ("negative axis out of range", lambda e: e["x"].cumsum(axis=-3), E.AxisError,
     ["axis -3", "dimension 2"]),
    ("repeated axis", lambda e: e["x"].sum(axis=(0, 0)), E.ArgumentError,
     ["duplicate", "(0, 0)"]),
    ("axis of wrong type", lambda e: e["x"].sum(axis="0"), E.ArgumentTypeError,
     ["axis", "'0'"]),
    ("tuple axis for argmax", lambda e: e["x"].argmax(axis=(0, 1)), E.ArgumentError,
     ["argmax", "(0, 1)"]),
    ("bad transpose axes", lambda e: e["x"].transpose(0, 0), E.ArgumentError,
     ["(0, 0)", "dimension 2"]),
    ("sort axis out of range", lambda e: ga.sort(e["x"], axis=2), E.AxisError, ["axis 2"]),
    # indices
    ("integer index out of range", lambda e: e["x"][10], E.IndexOutOfRange,
     ["index 10", "axis 0", "size 3"]),
    ("too many indices", lambda e: e["x"][0, 0, 0], E.IndexOutOfRange,
     ["too many indices", "2-dimensional", "3 were indexed"]),
    ("float index", lambda e: e["x"][1.5], E.IndexOutOfRange, ["only integers, slices"]),
    ("string index", lambda e: e["x"]["a"], E.IndexOutOfRange, ["only integers, slices"]),
    ("float index array", lambda e: e["x"][np.array([1.0])], E.IndexOutOfRange,
     ["integer (or boolean) type"]),
    ("host index array out of range", lambda e: e["x"][[0, 7]], E.IndexOutOfRange,
     ["index 7", "size 3"]),
    ("device index array out of range",
     lambda e: e["x"][ga.asarray(np.array([0, -4]), context=e["ctx"])], E.IndexOutOfRange,
     ["index -4", "size 3"]),
    ("boolean mask of wrong length", lambda e: e["x"][np.array([True, False])],
     E.IndexOutOfRange, ["boolean index did not match", "size of axis is 3", "is 2"]),
    ("take out of range", lambda e: ga.take(e["x"], [100]), E.IndexOutOfRange,
     ["index 100", "size 12"]),
    ("put out of range", lambda e: ga.put(e["v"].copy(), [10], 1.0), E.IndexOutOfRange,
     ["index 10", "size 5"]),
    ("fancy setitem value shape", lambda e: _setitem(e["x"].copy(), np.array([0, 1]),
                                                      np.zeros(3)), E.ShapeError,
     ["shape mismatch", "(3,)", "(2,4)"]),
    # dtypes
    ("string dtype", lambda e: ga.zeros(3, dtype="U4", context=e["ctx"]), E.UnsupportedError,
     ["<U4", "supported:"]),
    ("host strings", lambda e: ga.asarray(["a", "b"], context=e["ctx"]), E.UnsupportedError,
     ["<U1", "not supported"]),
    ("bitwise op on floats", lambda e: ga.bitwise_and(e["x"], e["x"]), E.UnsupportedError,
     ["bitwise_and", "not supported for the input types"]),
    ("boolean subtract", lambda e: ga.subtract(e["b"], e["b"]), E.UnsupportedError,
     ["boolean subtract", "logical_xor"]),
    ("boolean negative", lambda e: -e["b"], E.UnsupportedError, ["boolean negative"]),
    ("negative integer power", lambda e: e["i"] ** -1, E.ArgumentError,
     ["negative integer powers", "-1"]),
    ("Python int out of the dtype's range", lambda e: e["u8"] + 300, OverflowError,
     ["300", "uint8"]),
    ("out= dtype under same_kind",
     lambda e: ga.add(e["x"], e["x"], out=ga.empty((3, 4), np.int32, context=e["ctx"])),
     E.UnsupportedError, ["Cannot cast", "float32", "int32", "same_kind"]),
    ("view as another itemsize, 0-d", lambda e: ga.asarray(np.float32(1)).view(np.float64),
     E.ShapeError, ["0-d", "float32", "float64"]),
    # read-only and broadcast views
    ("write into a broadcast view", lambda e: _setitem(ga.broadcast_to(e["v"], (3, 5)), 0, 1),
     E.ReadOnlyError, ["read-only"]),
    ("make a broadcast view writeable",
     lambda e: _make_writeable(ga.broadcast_to(e["v"], (3, 5))), E.ReadOnlyError,
     ["broadcast", "writeable"]),
    ("write into a diagonal view", lambda e: _setitem(ga.diagonal(e["x"]), 0, 1),
     E.ReadOnlyError, ["read-only"]),
    ("ufunc out= a read-only array", lambda e: ga.add(e["x"], 1, out=_readonly(e)),
     E.ReadOnlyError, ["read-only", "(3, 4)"]),
    ("make a view of a read-only array writeable",
     lambda e: _make_writeable(_readonly(e)[1:]), E.ReadOnlyError, ["read-only"]),
    # out=
    ("ufunc out= of the wrong shape",
     lambda e: ga.add(e["x"], e["x"], out=ga.empty((4, 3), np.float32, context=e["ctx"])),
     E.ShapeError, ["(3, 4)", "(4, 3)"]),
    ("reduction out= of the wrong shape",
     lambda e: ga.sum(e["x"], axis=0, out=ga.empty(3, np.float32, context=e["ctx"])),
     E.ArgumentError, ["shape (3,)", "expected (4,)"]),
    ("out= a numpy array", lambda e: ga.add(e["x"], e["x"], out=np.empty((3, 4), np.float32)),
     E.ArgumentTypeError, ["out=", "ndarray"]),
    ("where= without out=", lambda e: ga.add(e["x"], e["x"], where=e["x"] > 2),
     E.ArgumentError, ["where=", "out="]),
    ("get(out=) of the wrong shape", lambda e: e["x"].get(out=np.empty(3, np.float32)),
     E.ShapeError, ["(3, 4)", "(3,)"]),
    # other arguments
    ("arange with step 0", lambda e: ga.arange(0, 10, 0, context=e["ctx"]), E.ArgumentError,
     ["step", "zero"]),
    ("unknown order", lambda e: ga.empty(3, order="X", context=e["ctx"]), E.ArgumentError,
     ["'X'"]),
    ("asarray(copy=False) of host data", lambda e: ga.asarray(np.zeros(3), copy=False),
     E.ArgumentError, ["copy=False", "host data"]),
    ("truth value of an array", lambda e: bool(e["x"]), E.ArgumentError,
     ["truth value", "(3, 4)", "any()"]),
    ("len() of a 0-d array", lambda e: len(e["x"][0, 0]), E.ArgumentTypeError, ["unsized"]),
    ("float() of a large array", lambda e: float(e["x"]), E.ArgumentTypeError,
     ["size 1", "(3, 4)"]),
    ("ufunc with one input too few", lambda e: ga.add(e["x"]), E.ArgumentError,
     ["add takes 2 inputs, got 1"]),
    ("max of an empty array", lambda e: ga.max(ga.empty((0,), np.float32, context=e["ctx"])),
     E.ArgumentError, ["zero-size array", "max", "no identity"]),
    ("argmax of an empty array",
     lambda e: ga.argmax(ga.empty((0,), np.float32, context=e["ctx"])), E.ArgumentError,
     ["argmax", "empty"]),
    ("concatenate nothing", lambda e: ga.concatenate([]), E.ArgumentError,
     ["at least one array"]),
    ("numpy function gpuarr lacks", lambda e: np.is_busday(e["v"]), E.UnsupportedError,
     ["numpy.is_busday", "not implemented", ".get()"]),
    ("random integers with low >= high",
     lambda e: ga.random.default_rng(0).integers(5, 1, size=3), E.ArgumentError,
     ["low >= high", "low=5", "high=1"]),
    ("all_reduce with an unknown op", lambda e: ga.collectives.all_reduce([e["x"], e["y"]],
                                                                         "xor"),
     E.ArgumentError, ["'xor'", "'sum'"]),
    # user kernels
    ("user kernel argument unparsable", lambda e: ga.ElemwiseKernel("float *x, 3y", "x[i] = 0"),
     E.ArgumentError, ["'3y'", "float *x"]),
    ("user kernel argument of unknown type", lambda e: ga.ElemwiseKernel("quux *x", "x[i] = 1"),
     E.UnsupportedError, ["'quux'"]),
    ("user kernel reserved name", lambda e: ga.ElemwiseKernel("float *i", "i[i] = 1"),
     E.ArgumentError, ["'i'", "reserved"]),
    ("user kernel called with too few arguments",
     lambda e: ga.ElemwiseKernel("float *x, float a", "x[i] = a")(e["x"]), E.ArgumentError,
     ["takes 2 arguments", "(x, a)", "got 1"]),
    ("user kernel array of the wrong dtype",
     lambda e: ga.ElemwiseKernel("float *x", "x[i] = 1")(e["i"]), E.ArgumentTypeError,
     ["argument x", "float32", "int32"]),
    # memory
    ("absurd size", lambda e: ga.empty(2**40, np.uint8, context=e["ctx"]), E.OutOfMemory,
     ["1099511627776 bytes", "{ctx}", "largest allocation"]),
    ("absurd shape", lambda e: ga.zeros((2**20, 2**20), np.float64, context=e["ctx"]),
     E.OutOfMemory, ["8796093022208 bytes", "{ctx}"]),
]


@pytest.mark.parametrize("call, exc, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_wrong_use_raises_a_clear_error(env, call, exc, words):
    with pytest.raises(exc) as info:
        call(env)
    message = str(info.value)
    names = {"ctx": env["ctx"].devname, "other": env["other"].devname}
    missing = [w.format(**names) for w in words if w.format(**names) not in message]
    assert not missing, f"message {message!r} lacks {missing}"
    if issubclass(exc, errors.GpuArrayError):
        assert isinstance(info.value, errors.GpuArrayError)


def test_catalogue_is_large_and_distinct():
    ids = [c[0] for c in CASES]
    assert len(set(ids)) == len(ids) >= 40


def test_library_keeps_working_after_out_of_memory(env):
    ctx = env["ctx"]
    before = ctx.active_bytes
    for nbytes in (2**40, ctx.device.max_alloc + 1):
        with pytest.raises(MemoryError, match=rf"{nbytes} bytes .* on {ctx.devname}"):
            ga.empty(nbytes, np.uint8, context=ctx)
    assert ctx.active_bytes == before
    x = env["x"]
    np.testing.assert_array_equal((x * 2 + 1).get(), np.arange(12).reshape(3, 4) * 2 + 1)


def test_float64_on_a_device_without_fp64(env, monkeypatch):
    """A fake capability: every route to a float64 kernel or buffer names the device and
    the dtype instead of failing in the driver; float32 work goes on."""
    ctx = env["ctx"]
    monkeypatch.setattr(ctx, "device", dataclasses.replace(ctx.device, fp64=False))
    monkeypatch.setattr(ctx, "ufunc_calls", {})  # call patterns checked against the device
    i, x = env["i"], env["x"]
    routes = {
        "zeros": lambda: ga.zeros(3, np.float64, context=ctx),
        "asarray": lambda: ga.asarray(np.zeros(3), context=ctx),
        "astype": lambda: x.astype(np.float64),
        "ufunc promoting to float64": lambda: ga.exp(i),
        "numpy float64 scalar": lambda: x + np.float64(1),
        "mean of integers": lambda: ga.mean(i),
        "sum(dtype=float64)": lambda: x.sum(dtype=np.float64),
        "complex128": lambda: ga.zeros(3, np.complex128, context=ctx),
    }
    for what, route in routes.items():
        with pytest.raises(errors.UnsupportedError) as info:
            route()
        message = str(info.value)
        assert ctx.devname in message and ctx.device.device_name in message, (what, message)
        assert "float64" in message or "complex128" in message, (what, message)
    np.testing.assert_array_equal((x + 1.5).get(), np.arange(12).reshape(3, 4) + 1.5)


def test_user_kernel_build_failure_shows_log_and_numbered_source(env):
    k = ga.ElemwiseKernel("float *x", "x[i] = no_such_function(x[i])", name="broken")
    with pytest.raises(errors.KernelBuildError) as info:
        k(env["x"])
    message = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert f"OpenCL build failed on {env['ctx'].devname}" in message
    assert "--- build log ---" in message and "no_such_function" in message
    assert "--- generated source ---" in message
    assert "|     out0_p[out0_i] = no_such_function(out0_p[out0_i]);" in message
    assert "   1| " in message  # numbered lines
    red = ReductionKernel(np.float32, "0", "a + b +", "x[i]", "const float *x")
    with pytest.raises(errors.KernelBuildError, match=r"(?s)build log.*generated source"):
        red(env["x"])
    np.testing.assert_array_equal((env["x"] + 1).get(), np.arange(12).reshape(3, 4) + 1)


def test_flag_errors_at_startup_and_fallback(tmp_path):
    """A device named by the flags: absent with force_device raises, without it warns and
    falls back; an rc file that does not parse names itself."""
    with using_flags("device=cl9:0,force_device=True,print_active_device=False"), \
            pytest.raises(errors.DeviceNotFound, match="no device 'cl9:0'"):
        ga.get_context()
    with using_flags("device=cl9:0,print_active_device=False"), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert ga.get_context().devname.startswith("cl")
    assert any("no device 'cl9:0'" in str(w.message) and "falling back" in str(w.message)
               for w in caught)
    with using_flags("contexts=dev0->cl9:0,force_device=True,print_active_device=False"), \
            pytest.raises(errors.DeviceNotFound, match="cl9:0"):
        ga.get_context("dev0")
    rc = tmp_path / "gpuarrrc"
    rc.write_text("[global\nfloatX = float64\n")
    with pytest.raises(errors.FlagError, match=r"cannot parse .*gpuarrrc"):
        config.load({"GPUARR_FLAGS": "", "GPUARRRC": str(rc)})


def test_context_name_bound_to_another_device(ctx_pair):
    a, b = ctx_pair
    ga.init(a.devname, name="errors_dev")
    with pytest.raises(errors.ContextNotDefined, match="'errors_dev' is already mapped to "
                                                      f"{a.devname}; cannot map it to "
                                                      f"{b.devname}"):
        ga.init(b.devname, name="errors_dev")
    with pytest.raises(errors.ContextNotDefined, match=r"defined: .*errors_dev"):
        ga.get_context("errors_dev2")


NAN, INF = float("nan"), float("inf")
_SPECIAL = np.array([1.0, NAN, -INF, 0.0, -0.0, INF, -2.0, 3.0], np.float32)


@pytest.mark.parametrize("fn", [
    lambda m, a: m.sum(a), lambda m, a: m.max(a), lambda m, a: m.argmax(a),
    lambda m, a: m.argmin(a[2:]), lambda m, a: m.nanmax(a), lambda m, a: m.log(a),
    lambda m, a: m.sqrt(a), lambda m, a: m.divide(1, a), lambda m, a: m.exp(a * 100),
    lambda m, a: m.floor_divide(a, 0), lambda m, a: m.isfinite(a), lambda m, a: m.sort(a),
    lambda m, a: m.maximum(a, a[::-1]), lambda m, a: m.fmax(a, a[::-1]),
    lambda m, a: m.cumsum(a), lambda m, a: m.mean(a[2:]),
], ids=["sum", "max", "argmax", "argmin", "nanmax", "log", "sqrt", "divide by zero",
        "exp overflow", "floor_divide by zero", "isfinite", "sort", "maximum", "fmax",
        "cumsum", "mean"])
def test_nan_and_inf_inputs_give_numpy_results(ctx, fn):
    with np.errstate(all="ignore"):
        want = np.asarray(fn(np, _SPECIAL))
    got = fn(ga, ga.asarray(_SPECIAL, context=ctx))
    host = got.get()
    assert host.dtype == want.dtype
    np.testing.assert_array_equal(host, want)
