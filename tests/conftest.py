"""Shared fixtures. PoCL exposes two CPU devices per platform here, for multi-device tests."""

import contextlib
import faulthandler
import functools
import inspect
import os
import signal
import sys

os.environ.setdefault("POCL_DEVICES", "pthread pthread")
# scikit-learn's Array API checks (tests/test_sklearn.py) need scipy's, read at scipy's import
os.environ.setdefault("SCIPY_ARRAY_API", "1")
# GPUARR_TEST_DEVICE is the default device too (the symbolic layer places ops there).
if os.environ.get("GPUARR_TEST_DEVICE") and "device=" not in os.environ.get("GPUARR_FLAGS", ""):
    os.environ["GPUARR_FLAGS"] = ",".join(
        f for f in (os.environ.get("GPUARR_FLAGS"), f"device={os.environ['GPUARR_TEST_DEVICE']}")
        if f)

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import blas, config, context
from gpuarr.bench import flags
from gpuarr.errors import DeviceNotFound

# numpy is the tests' oracle. gpuarr promotes by NEP 50 (numpy 2's rule); numpy 1.26, the lowest
# declared, promotes by value unless switched to NEP 50 with its own opt-in.
if np.lib.NumpyVersion(np.__version__) < "2.0.0":
    np._set_promotion_state("weak")

USABLE = [d for d in ga.list_devices() if d.usable]
# Why the tests that need a device skip, when none is usable: one line, said once.
NO_DEVICE = ""
try:
    # The `ctx` fixture's device, first: GPUARR_TEST_DEVICE (e.g. cl:nvidia), else the
    # default device (which raises, saying why, where none is usable).
    if os.environ.get("GPUARR_TEST_DEVICE"):
        _first = context._usable_device(context.find_device(os.environ["GPUARR_TEST_DEVICE"]))
    else:
        _first = context.auto_device()
    USABLE = [_first] + [d for d in USABLE if d.name != _first.name]
except DeviceNotFound as e:
    USABLE, NO_DEVICE = [], f"gpuarr tests skip: {e}"


class _NoDevice(list):
    """USABLE when no device is usable: a module reading USABLE[0] at import is skipped."""

    def __getitem__(self, i):
        pytest.skip(NO_DEVICE, allow_module_level=True)


if NO_DEVICE:
    USABLE = _NoDevice()


# Tests that run the GPU algorithms on whatever device runs them (device classes patched,
# tiles, warps and grids forced), by their names and parameters or their fixtures: marked
# `gpu_paths`. Intel's CPU runtime skips them: its compiler takes minutes over their unrolled
# kernels (425 s of its 23-minute run, cold, on a 2-core Zen 3), corrupted its heap now and
# then over the sort's tiles (a cold CI died of it), and no user of a CPU runs them; CI runs
# them on the distribution's PoCL.
_GPU_PATH_WORDS = ("gpu", "warp", "tile_kernels", "across_work_groups", "jacobi", "tiles")
_GPU_PATH_FIXTURES = {"gpu_kernels", "gpu_plans", "gpu_tiles"}
# Tests that need two devices of one platform (they skip elsewhere): marked `two_devices`.
_TWO_DEVICE_NAMES = ("same_platform_pair", "ctx_pair")


def pytest_configure(config):
    # A crash in a kernel or a compiler runs the OpenCL runtime's LLVM crash handler, whose
    # report (on the test's captured stderr) ends in SIGALRM when it hangs for 5 s: the
    # process dies as "Alarm clock" with no word of where. Python's stacks then go to the
    # real stderr first (a descriptor of its own: the test's capture replaces fd 2).
    if hasattr(signal, "SIGALRM"):  # (not on Windows)
        faulthandler.register(signal.SIGALRM, file=os.dup(sys.stderr.fileno()),
                              all_threads=True, chain=True)


@functools.cache
def _source(function):
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


def _functions(item):
    """The test's function and those of the fixtures it uses."""
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    return [f for f in (getattr(item, "function", None), *(d.func for ds in defs for d in ds))
            if f is not None]


def pytest_collection_modifyitems(config, items):
    if NO_DEVICE:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(NO_DEVICE)
        skip = pytest.mark.skip(reason="no usable OpenCL device (python -m gpuarr info says why)")
        for item in items:
            item.add_marker(skip)
        return
    intel_cpu = USABLE[0].platform.startswith("Intel(R) OpenCL") and not USABLE[0].is_gpu
    skip_gpu = pytest.mark.skip(reason="a GPU algorithm on Intel's CPU runtime (its compiler "
                                       "takes minutes over them): CI runs these on PoCL")
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        name = item.name.replace("gpuarr", "")  # (gpuarr, gpuarray: not a GPU path)
        if any(w in name for w in _GPU_PATH_WORDS) or fixtures & _GPU_PATH_FIXTURES:
            item.add_marker("gpu_paths")
            if intel_cpu:
                item.add_marker(skip_gpu)
        if any(n in _source(f) for f in _functions(item) for n in _TWO_DEVICE_NAMES):
            item.add_marker("two_devices")

# Every dtype a GpuArray can hold (float64/complex128 need fp64 on the first device).
ALL_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
              np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]


def host_data(dtype, shape):
    """Deterministic, distinct-where-possible values of `dtype` that every cast keeps sane."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    i = np.arange(n)
    if dt == np.bool_:
        v = i % 3 == 1
    elif dt.kind == "u":
        v = (i * 7 + 3) % 100
    elif dt.kind == "i":
        v = (i * 7 + 3) % 100 - 40
    elif dt.kind == "f":
        v = i * 1.25 - 8.5
    else:
        v = (i * 1.25 - 8.5) + 1j * (3.0 - 0.5 * i)
    return np.asarray(v).astype(dt).reshape(shape)


def same_platform_pair():
    """Two usable devices of one platform, or None."""
    for a in USABLE:
        for b in USABLE:
            if a is not b and a.platform_index == b.platform_index:
                return a, b
    return None


def cross_platform_pair():
    """Two usable devices of different platforms, or None."""
    for a in USABLE:
        for b in USABLE:
            if a.platform_index != b.platform_index:
                return a, b
    return None


def view_index(shape, steps, starts):
    """The index (slices, then Ellipsis, so a view even when 0-d) cutting a view of `shape`
    out of a parent of shape start + n * |step| + 1 per axis: `steps` per axis (negative:
    reversed), `starts` the offsets."""
    index = []
    for n, step, start in zip(shape, steps, starts):
        if n == 0:
            index.append(slice(start, start, step))
        elif step > 0:
            index.append(slice(start, start + n * step, step))
        else:
            first = start + (n - 1) * -step
            stop = first + n * step
            index.append(slice(first, None if stop < 0 else stop, step))
    return (*index, Ellipsis)


@contextlib.contextmanager
def using_flags(text, rc_path=None):
    """Run a block with GPUARR_FLAGS=text (and GPUARRRC) and no contexts opened yet; the
    contexts open before (the session's `ctx`) are the ones open after. `flags(**changes)`
    (gpuarr.bench's, imported here for the tests) changes some flags and keeps the contexts:
    what the symbolic layer's placement reads at compile time."""
    env = {"GPUARR_FLAGS": text}
    if rc_path is not None:
        env["GPUARRRC"] = str(rc_path)
    else:
        env["GPUARRRC"] = os.devnull
    saved = config.flags
    opened = [dict(d) for d in (context._by_device, context._by_name, context._cl_contexts)]
    devices = context._devices
    context._reset()
    config.reload(env)
    try:
        yield config.flags
    finally:
        context._reset()
        for registry, entries in zip((context._by_device, context._by_name,
                                      context._cl_contexts), opened):
            registry.update(entries)
        context._devices = devices
        config.flags = saved


@pytest.fixture
def host():
    """Symbolic functions compiled in the test run on the host (flag device=cpu)."""
    with flags(device="cpu"):
        yield


@pytest.fixture
def default_ctx(ctx):
    """`ctx` where it is the default device's (symbolic functions run there unless flag
    device=cpu), else the test skips."""
    if config.flags.device == "cpu" or ga.get_context() is not ctx:
        pytest.skip("the default device is not the tests' device")
    return ctx


@pytest.fixture(params=["host", "device"])
def where(request):
    """Where symbolic functions compiled in the test run: 'host' (flag device=cpu) or the
    tests' device (`default_ctx`)."""
    request.getfixturevalue("host" if request.param == "host" else "default_ctx")
    return request.param


@pytest.fixture(scope="session")
def ctx():
    """The context of the first of USABLE: GPUARR_TEST_DEVICE, else the default device."""
    return ga.init(USABLE[0].name)


@pytest.fixture(params=["cpu", "gpu"])
def device_class(request, monkeypatch):
    """Runs a BLAS test with the CPU kernels and again with the GPU tiles (on any device, by
    patching blas.device_class)."""
    monkeypatch.setattr(blas, "device_class", lambda ctx: request.param)
    if request.param == "cpu":  # a CPU has no tensor cores, whatever the real device has
        monkeypatch.setattr(blas, "_mma_tile", lambda ctx, prec: None)
    return request.param


@pytest.fixture(scope="session")
def ctx_pair():
    pair = same_platform_pair()
    if pair is None:
        pytest.skip("needs two usable devices of one platform (POCL_DEVICES='pthread pthread')")
    return ga.init(pair[0].name), ga.init(pair[1].name)
