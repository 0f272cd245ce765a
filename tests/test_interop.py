"""GpuArray as a Python object others save, copy and exchange, against numpy: pickling and
copies, item/tolist/flat/format, numpy's file formats, memory overlap, DLPack both ways, and
the default float dtype (flag floatX).

Arrays are small and most layouts contiguous: a contiguous copy or transfer needs no kernel.
"""

import copy
import ctypes
import gc
import io
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from conftest import ALL_DTYPES, USABLE, host_data, using_flags

import gpuarr as ga
from gpuarr import base, config, dlpack, dtypes
from gpuarr.errors import ArgumentError, BufferExportError, ReadOnlyError
from gpuarr.memory import Storage

FP64 = (np.dtype(np.float64), np.dtype(np.complex128))


def need(ctx, *dts):
    if not ctx.fp64 and any(np.dtype(d) in FP64 for d in dts):
        pytest.skip("device has no fp64")


def same(g, h):
    """GpuArray `g` holds numpy's `h`: type, dtype, shape, values."""
    assert isinstance(g, ga.GpuArray)
    assert g.dtype == h.dtype and g.shape == h.shape
    np.testing.assert_array_equal(g.get(), h)


@pytest.fixture(scope="module")
def h34():
    return host_data(np.float32, (3, 4))


@pytest.fixture(scope="module")
def x34(ctx, h34):
    return ga.asarray(h34, context=ctx)


# The views every layout test uses: (name, index) cut from a 3x4 array.
VIEWS = {
    "whole": lambda a: a,
    "transposed": lambda a: a.T,
    "row": lambda a: a[1],
    "reversed_cols": lambda a: a[:, ::-2],
    "element": lambda a: a[2, 1],
    "empty": lambda a: a[:0],
}


# ---------------------------------------------------------------- pickling and copies

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_pickle_round_trip_over_dtypes(ctx, dtype, shape):
    need(ctx, dtype)
    h = host_data(dtype, shape)
    back = pickle.loads(pickle.dumps(ga.asarray(h, context=ctx)))
    same(back, h)
    assert back.strides == pickle.loads(pickle.dumps(h)).strides


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_pickled_views_are_their_own_data_laid_out_as_numpy_pickles(x34, h34, view, protocol):
    back = pickle.loads(pickle.dumps(VIEWS[view](x34), protocol=protocol))
    want = pickle.loads(pickle.dumps(VIEWS[view](h34), protocol=protocol))
    same(back, want)
    assert back.strides == want.strides  # F order kept for F-contiguous, else C
    assert back.base is None and back.storage is not x34.storage


def test_pickle_keeps_a_broadcast_views_values_and_writes_nothing_back(x34, h34):
    b = ga.broadcast_to(x34[0], (2, 4))
    back = pickle.loads(pickle.dumps(b))
    same(back, np.broadcast_to(h34[0], (2, 4)))
    back.fill(0)  # a new, writeable array of its own
    same(x34, h34)


def test_pickle_inside_containers_and_a_failing_context(x34, h34):
    obj = {"w": x34, "pair": (x34[0], 3)}
    back = pickle.loads(pickle.dumps(obj))
    same(back["w"], h34)
    same(back["pair"][0], h34[0])
    assert back["pair"][1] == 3


def test_pickle_restores_on_the_same_named_context_else_the_default(ctx_pair, h34):
    c0, c1 = ctx_pair
    flags = (f"device={c0.devname},contexts=pk0->{c0.devname};pk1->{c1.devname},"
             f"print_active_device=False")
    with using_flags(flags):
        a = ga.asarray(h34, context="pk1")
        data = pickle.dumps(a)
        back = pickle.loads(data)
        assert back.context is ga.get_context("pk1")
        assert back.context is not ga.get_context()
        same(back, h34)
    with using_flags(f"device={c1.devname},print_active_device=False"):
        back = pickle.loads(data)  # no context pk1 here: the default one
        assert back.context is ga.get_context()
        same(back, h34)
    with using_flags(f"device={c0.devname},contexts=pk1->{c0.devname},"
                     f"print_active_device=False"):
        assert pickle.loads(data).context is ga.get_context("pk1")  # pk1 on another device


def test_pickle_into_another_process(ctx, h34):
    """What joblib's process workers do: the pickle is loaded by a fresh interpreter."""
    data = pickle.dumps(ga.asarray(h34, context=ctx)[:, 1:3])
    code = ("import pickle, sys; x = pickle.load(sys.stdin.buffer); "
            "print(type(x).__name__, x.dtype, x.shape, float(x.sum()))")
    env = {**os.environ, "GPUARR_FLAGS": f"device={USABLE[0].name},print_active_device=False"}
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True,
                         env=env, check=True, timeout=120).stdout.decode().split()
    assert out[:3] == ["GpuArray", "float32", "(3,"]
    assert float(out[-1]) == pytest.approx(float(h34[:, 1:3].sum()))


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy])
@pytest.mark.parametrize("view", ["whole", "transposed", "row", "empty"])
def test_copies_are_independent_device_copies_with_no_host_trip(x34, h34, how, view,
                                                                monkeypatch):
    src = VIEWS[view](x34)
    want = how(VIEWS[view](h34))
    monkeypatch.setattr(base.ArrayBase, "get", lambda *a, **k: pytest.fail("host trip"))
    got = how(src)
    monkeypatch.undo()
    same(got, want)
    assert got.strides == want.strides or not got.size  # order 'K', as numpy's
    assert got.storage is not x34.storage and got.context is x34.context
    if got.size:
        got.fill(-1)
        same(x34, h34)


def test_deepcopy_of_containers_keeps_identity(x34):
    obj = [x34, x34, {"a": x34}]
    got = copy.deepcopy(obj)
    assert got[0] is got[1] is got[2]["a"] and got[0] is not x34


def test_storage_refuses_copies_and_never_complains_when_half_built(x34, monkeypatch):
    complaints = []
    monkeypatch.setattr(sys, "unraisablehook", complaints.append)
    for how in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="Storage"):
            how(x34.storage)
    half = Storage.__new__(Storage)  # as a failed copy leaves one: no _release
    del half
    gc.collect()
    assert complaints == []


# ---------------------------------------------------------------- item, tolist, flat, format

ITEM_DTYPES = [np.int32, np.float32, np.complex64, np.bool_, np.float64]


@pytest.mark.parametrize("dtype", ITEM_DTYPES, ids=lambda d: np.dtype(d).name)
def test_item_and_tolist_match_numpy(ctx, dtype):
    need(ctx, dtype)
    h = host_data(dtype, (3, 4))
    x = ga.asarray(h, context=ctx)
    for args in [(0,), (5,), (-1,), (11,), (2, 3), ((1, 2),), (-1, -4)]:
        got, want = x.item(*args), h.item(*args)
        assert got == want and type(got) is type(want), args
    for view in VIEWS.values():
        assert view(x).tolist() == view(h).tolist()
    assert x[1, 2].item() == h[1, 2].item() and type(x[1, 2].tolist()) is type(h[1, 2].item())
    assert x[1:2, 2:3].item() == h[1:2, 2:3].item()


def test_item_errors_as_numpy(x34):
    with pytest.raises(ValueError, match="size 1"):
        x34.item()
    with pytest.raises(IndexError, match="out of bounds"):
        x34.item(12)
    with pytest.raises(IndexError, match="out of bounds"):
        x34.item(3, 0)
    with pytest.raises(ValueError, match="number of indices"):
        x34.item(1, 2, 3)


@pytest.mark.parametrize("view", ["whole", "transposed", "reversed_cols", "element"])
def test_flat_reads_as_numpy(x34, h34, view):
    x, h = VIEWS[view](x34), VIEWS[view](h34)
    f, g = x.flat, h.flat
    assert len(f) == len(g)
    assert [(v, type(v)) for v in f] == [(v, type(v)) for v in g]
    for i in (0, -1, len(g) // 2):
        assert f[i] == g[i] and type(f[i]) is type(g[i])
    for key in (slice(1, None, 2), slice(None, None, -3), slice(0, 0)):
        got = f[key]
        same(got, g[key])
        if got.size:
            got.fill(7)  # a copy, as numpy's
            same(x, h)
    same(f[[0, len(g) - 1]], g[[0, len(g) - 1]])
    np.testing.assert_array_equal(np.asarray(f), np.asarray(g))
    same(f.copy(), g.copy())
    assert f.base is x
    with pytest.raises(IndexError):
        f[len(g)]


@pytest.mark.parametrize("view", ["whole", "transposed", "reversed_cols"])
def test_flat_writes_as_numpy(ctx, h34, view):
    h = h34.copy()
    x = ga.asarray(h, context=ctx)
    xv, hv = VIEWS[view](x), VIEWS[view](h)
    xv.flat[2] = -5
    hv.flat[2] = -5
    xv.flat[1::3] = 9
    hv.flat[1::3] = 9
    xv.flat[::5] += 100  # scikit-learn's K.flat[::n + 1] += alpha
    hv.flat[::5] += 100
    same(x, h)
    with pytest.raises(ReadOnlyError):
        ga.broadcast_to(x[0], (2, 4)).flat[0] = 1


def test_format_as_numpy(ctx, x34, h34):
    assert f"{x34.sum():.3f}" == f"{h34.sum():.3f}"
    assert f"{x34[1, 2]:>10.2e}" == f"{h34[1, 2]:>10.2e}"
    xi = ga.asarray(np.int64(42), context=ctx)
    assert f"{xi:05d}" == "00042" and f"{xi}" == "42"
    xc = ga.asarray(np.complex64(1 - 2j), context=ctx)
    assert f"{xc:.1f}" == f"{np.complex64(1 - 2j):.1f}"
    assert f"{x34}" == str(h34) and format(x34[0], "") == str(h34[0])
    with pytest.raises(TypeError, match="format"):
        f"{x34:.2f}"


# ---------------------------------------------------------------- files

def test_save_load_npy_and_numpy_dispatch(ctx, x34, h34, tmp_path):
    p = tmp_path / "a.npy"
    np.save(p, x34.T)  # numpy's function, on a GpuArray: gpuarr.save
    assert np.array_equal(np.load(p), h34.T) and np.load(p).flags.f_contiguous
    back = ga.load(p, context=ctx)
    same(back, h34.T)
    assert back.flags.f_contiguous
    f = io.BytesIO()
    ga.save(f, h34)  # numpy data too
    f.seek(0)
    same(ga.load(f), h34)


@pytest.mark.parametrize("save", [ga.savez, ga.savez_compressed, np.savez,
                                  np.savez_compressed])
def test_savez_and_lazy_npz(ctx, x34, h34, tmp_path, save):
    p = tmp_path / "b.npz"
    save(p, x34, y=x34[:, ::2], z=h34)
    with np.load(p) as npz:
        assert sorted(npz.files) == ["arr_0", "y", "z"]
        np.testing.assert_array_equal(npz["y"], h34[:, ::2])
    with ga.load(p, context=ctx) as npz:
        assert sorted(npz) == ["arr_0", "y", "z"] and len(npz) == 3
        same(npz["arr_0"], h34)
        same(npz["y"], h34[:, ::2])
        assert npz["z"].context is ctx


def test_savetxt_loadtxt(ctx, x34, h34, tmp_path):
    p = tmp_path / "c.txt"
    np.savetxt(p, x34, fmt="%.3f", delimiter=",")  # gpuarr.savetxt through numpy
    assert p.read_text() == _text(h34, fmt="%.3f", delimiter=",")
    ga.savetxt(p, x34[0])
    want = np.loadtxt(p)
    got = ga.loadtxt(p, context=ctx)
    same(got, want.astype(dtypes.float_x(ctx)))
    same(ga.loadtxt(p, np.float32, context=ctx), want.astype(np.float32))
    same(np.loadtxt(p, like=x34), want.astype(dtypes.float_x(ctx)))
    cols = ga.loadtxt(io.StringIO("1 2\n3 4\n"), dtype=np.int32, unpack=True, context=ctx)
    same(cols[0], np.array([1, 3], np.int32))
    same(cols[1], np.array([2, 4], np.int32))


def _text(h, **kwargs):
    f = io.StringIO()
    np.savetxt(f, h, **kwargs)
    return f.getvalue()


# ---------------------------------------------------------------- memory overlap

OVERLAP_VIEWS = {
    "whole": lambda a: a,
    "row0": lambda a: a[0],
    "row1": lambda a: a[1],
    "even_cols": lambda a: a[:, ::2],
    "odd_cols": lambda a: a[:, 1::2],
    "transposed": lambda a: a.T,
    "reversed": lambda a: a[::-1, ::-1],
    "corner": lambda a: a[1:, 2:],
    "empty": lambda a: a[:0],
    "bytes_view": lambda a: a.view(np.uint8)[:, 4:8],
}


@pytest.mark.parametrize("name", ["may_share_memory", "shares_memory"])
@pytest.mark.parametrize("max_work", [None, 0, 1])
def test_overlap_matrix_as_numpy(x34, h34, name, max_work):
    ours, theirs = getattr(ga, name), getattr(np, name)
    other = x34.copy()
    for ka, va in OVERLAP_VIEWS.items():
        for kb, vb in OVERLAP_VIEWS.items():
            a, b, ha, hb = va(x34), vb(x34), va(h34), vb(h34)
            try:
                want = theirs(ha, hb, max_work=max_work)
            except np.exceptions.TooHardError:
                with pytest.raises(np.exceptions.TooHardError):
                    ours(a, b, max_work=max_work)
                continue
            assert ours(a, b, max_work=max_work) is want, (ka, kb)
            assert theirs(a, b, max_work=max_work) is want, (ka, kb)  # numpy dispatches
            assert ours(a, vb(other)) is False
            assert ours(a, hb) is False and theirs(ha, b) is False


def test_overlap_of_separate_allocations_and_contexts(ctx_pair, h34):
    c0, c1 = ctx_pair
    a, b = ga.asarray(h34, context=c0), ga.asarray(h34, context=c1)
    assert not ga.may_share_memory(a, b) and not ga.shares_memory(a, a.transfer(c1))
    assert ga.shares_memory(a, a) and ga.may_share_memory(np.ones(2), np.ones(2)) is False


# ---------------------------------------------------------------- DLPack

@pytest.fixture
def host_device(ctx):
    if not dlpack.maps_host_memory(ctx):
        pytest.skip(f"{ctx.devname}'s memory is not host memory: no zero-copy DLPack export")
    return ctx


@pytest.fixture
def opencl_device(ctx, monkeypatch):
    """The device under test, exporting as a device whose memory is not host memory."""
    monkeypatch.setattr(dlpack, "maps_host_memory", lambda context: False)
    return ctx


class Producer:
    """A DLPack producer of another library: numpy data behind the protocol."""

    def __init__(self, data, legacy=False):
        self.data, self.legacy = data, legacy

    def __dlpack__(self, **kwargs):
        if self.legacy and kwargs:
            raise TypeError("a pre-2023 producer: no keyword arguments")
        return self.data.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.data.__dlpack_device__()


class LegacyConsumerView:
    """Hands a GpuArray to np.from_dlpack as a consumer older than DLPack 1.0 sees it."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self):
        return self.x.__dlpack__()

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="sizes of a 64-bit ABI")
def test_struct_layouts_match_dlpack_h():
    assert ctypes.sizeof(dlpack.DLTensor) == 48
    assert ctypes.sizeof(dlpack.DLManagedTensor) == 64
    assert ctypes.sizeof(dlpack.DLManagedTensorVersioned) == 80
    assert dlpack.DLManagedTensorVersioned.dl_tensor.offset == 32
    assert dlpack.DLTensor.byte_offset.offset == 40


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_from_dlpack_shares_memory_on_a_host_memory_device(host_device, dtype):
    need(host_device, dtype)
    h = host_data(dtype, (3, 4))
    x = ga.asarray(h, context=host_device)
    assert x.__dlpack_device__() == (1, 0)
    got = np.from_dlpack(x)
    np.testing.assert_array_equal(got, h)
    assert got.dtype == h.dtype and got.strides == x.strides and got.flags.writeable
    x.fill(1)
    x.sync()  # (a consumer reads after the producer's writes have finished)
    np.testing.assert_array_equal(got, np.ones_like(h))
    got[0, 0] = 0
    assert x.item(0) == 0


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("legacy", [False, True])
def test_numpy_from_dlpack_of_views(host_device, x34, h34, view, legacy):
    x = VIEWS[view](x34)
    got = np.from_dlpack(LegacyConsumerView(x) if legacy else x)
    np.testing.assert_array_equal(got, VIEWS[view](h34))
    if x.size:
        assert got.strides == x.strides
        assert got.__array_interface__["data"][0] - np.from_dlpack(x34).__array_interface__[
            "data"][0] == x.offset  # the same bytes


def test_read_only_views_export_read_only(host_device, x34, h34):
    b = ga.broadcast_to(x34[1], (2, 4))
    got = np.from_dlpack(b)
    np.testing.assert_array_equal(got, np.broadcast_to(h34[1], (2, 4)))
    assert not got.flags.writeable and got.strides == (0, 4)
    with pytest.raises(BufferError, match="read-only"):
        np.from_dlpack(LegacyConsumerView(b))  # DLPack 0.x cannot say read-only
    np.testing.assert_array_equal(np.from_dlpack(LegacyConsumerView(b.copy())), b.get())


def test_dlpack_copy_and_argument_checks(host_device, x34, h34):
    got = np.from_dlpack(x34, copy=True)
    got[0] = 0
    same(x34, h34)  # a copy
    np.testing.assert_array_equal(np.from_dlpack(x34, device="cpu"), h34)  # dl_device=(1, 0)
    with pytest.raises(ArgumentError, match="stream"):
        x34.__dlpack__(stream=1)
    with pytest.raises(BufferError, match=r"\(2, 0\)"):
        x34.__dlpack__(dl_device=(2, 0))


def test_producer_deleted_before_consumer_and_memory_reused(host_device, h34):
    x = ga.asarray(h34, context=host_device)
    got = np.from_dlpack(x[1:])
    gc.collect()
    nbytes, live = host_device.active_bytes, len(dlpack._live)
    del x
    gc.collect()
    assert host_device.active_bytes == nbytes  # still held: the consumer has it
    others = [ga.zeros((3, 4), np.float32, context=host_device) for _ in range(4)]
    host_device.sync()
    np.testing.assert_array_equal(got, h34[1:])  # not handed to the new arrays
    held = host_device.active_bytes
    del got
    gc.collect()
    assert len(dlpack._live) == live - 1
    assert host_device.active_bytes < held  # the consumer let go: the storage is freed
    del others


def test_many_round_trips_and_unconsumed_capsules_leak_nothing(host_device, x34, h34):
    gc.collect()
    live, nbytes = len(dlpack._live), host_device.active_bytes
    for i in range(300):
        cap = x34.__dlpack__(max_version=(1, 0) if i % 2 else None)
        del cap  # never consumed: the capsule's destructor releases it
        back = ga.from_dlpack(np.from_dlpack(x34[i % 3]), device=host_device)
    same(back, h34[299 % 3])
    del back
    gc.collect()
    assert len(dlpack._live) == live and host_device.active_bytes == nbytes


def test_consumers_and_capsules_alive_at_exit_end_cleanly(host_device):
    code = ("import numpy as np, gpuarr as ga\n"
            "x = ga.asarray(np.arange(10.0))\n"
            "keep = np.from_dlpack(x)\n"  # a consumer alive at exit
            "cap = x.__dlpack__(max_version=(1, 0))\n"  # a capsule never consumed
            "cycle = [np.from_dlpack(x[::2])]\n"
            "cycle.append(cycle)\n"
            "del x\n"
            "print(keep.sum(), cycle[0].sum())\n")
    env = {**os.environ, "GPUARR_FLAGS": f"device={host_device.devname},"
           f"print_active_device=False"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == [b"45.0", b"20.0"], proc.stderr
    assert proc.stderr == b""


def test_opencl_device_exports_only_host_copies(opencl_device, x34, h34):
    assert x34.__dlpack_device__() == (4, opencl_device.device.device_index)
    with pytest.raises(BufferError, match="kDLOpenCL"):
        np.from_dlpack(x34)
    got = np.from_dlpack(x34[:, ::-2], device="cpu")  # dl_device=(1, 0): a host copy
    np.testing.assert_array_equal(got, h34[:, ::-2])
    got[...] = 0
    same(x34, h34)
    with pytest.raises(BufferError, match="copy=False"):
        x34.__dlpack__(dl_device=(1, 0), copy=False)
    with pytest.raises(BufferError, match="kDLOpenCL"):
        x34.__dlpack__(copy=True)


@pytest.mark.parametrize("index", [(), (slice(None, None, 2),), (slice(None), [0, 2]),
                                   (Ellipsis, slice(None, None, -1))], ids=str)
def test_from_dlpack_of_numpy_copies_to_the_device(ctx, index):
    h = host_data(np.int16, (3, 4))[index] if index else host_data(np.int16, (3, 4))
    got = ga.from_dlpack(h, device=ctx)
    same(got, h)
    assert got.context is ctx
    same(ga.from_dlpack(np.asarray(np.float32(2.5)), device=ctx), np.asarray(np.float32(2.5)))
    same(ga.from_dlpack(np.zeros((0, 2), bool), device=ctx), np.zeros((0, 2), bool))


def test_from_dlpack_of_other_producers_and_gpuarrays(ctx, x34, h34):
    same(ga.from_dlpack(Producer(h34), device=ctx), h34)
    same(ga.from_dlpack(Producer(h34.T, legacy=True), device=ctx), h34.T)
    view = ga.from_dlpack(x34)
    assert view is not x34 and view.storage is x34.storage and view.strides == x34.strides
    got = ga.from_dlpack(x34, copy=True)
    assert got.storage is not x34.storage
    same(got, h34)
    with pytest.raises(BufferExportError, match="copy=False"):
        ga.from_dlpack(h34, copy=False)
    with pytest.raises(TypeError, match="__dlpack__"):
        ga.from_dlpack([1, 2])


def test_from_dlpack_to_another_context(ctx_pair, h34):
    c0, c1 = ctx_pair
    x = ga.asarray(h34, context=c0)
    got = ga.from_dlpack(x, device=c1)
    assert got.context is c1
    same(got, h34)
    with pytest.raises(BufferError, match="copy=False"):
        ga.from_dlpack(x, device=c1, copy=False)


# ---------------------------------------------------------------- the default float dtype

def _defaults(c):
    """The dtypes of every creation that falls back to floatX."""
    return {
        "empty": ga.empty(2, context=c).dtype,
        "zeros": ga.zeros(2, context=c).dtype,
        "full": ga.full(2, 1.5, context=c).dtype,
        "asarray": ga.asarray([1.5, 2.5], context=c).dtype,
        "arange": ga.arange(0.0, 1.0, 0.5, context=c).dtype,
        "linspace": ga.linspace(0, 1, 3, context=c).dtype,
        "eye": ga.eye(2, context=c).dtype,
        "loadtxt": ga.loadtxt(io.StringIO("1.5 2.5"), context=c).dtype,
        "info": ga.__array_namespace_info__().default_dtypes(device=c)["real floating"],
    }


@pytest.mark.parametrize(("flag", "fp64", "want"), [
    ("", True, np.float64), ("", False, np.float32), ("floatX=auto,", True, np.float64),
    ("floatX=float32,", True, np.float32), ("floatX=float32,", False, np.float32),
    ("floatX=float64,", True, np.float64),
])
def test_float_x_default_is_float64_where_the_device_has_it(ctx, monkeypatch, flag, fp64,
                                                            want):
    if fp64 and not ctx.fp64:
        pytest.skip("device has no fp64")
    with using_flags(f"{flag}print_active_device=False"):
        c = ga.init(ctx.devname)
        monkeypatch.setattr(type(c), "fp64", property(lambda self: fp64))
        got = _defaults(c)
        assert set(got.values()) == {np.dtype(want)}, got
        assert dtypes.float_x(c) == want
        assert config.flags.floatX == (flag[7:-1] or "auto")
        # the host's meaning (Theano's config.floatX, the symbolic layer's types)
        assert config.floatX == ("float32" if "float32" in flag else "float64")
        assert dtypes.float_x() == np.dtype(config.floatX)
        assert dtypes.default_for(1.5) == np.dtype(config.floatX)


def test_float64_flag_on_a_device_without_fp64_still_refuses(ctx, monkeypatch):
    with using_flags("floatX=float64,print_active_device=False"):
        c = ga.init(ctx.devname)
        monkeypatch.setattr(type(c), "fp64", property(lambda self: False))
        with pytest.raises(TypeError, match="float64"):
            ga.zeros(2, context=c)
