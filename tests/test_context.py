"""Devices, named contexts, fallback, memory, transfers between devices, and the CLI."""

import dataclasses
import gc
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyopencl as cl
import pytest
from conftest import USABLE, cross_platform_pair, same_platform_pair, using_flags

import gpuarr as ga
from gpuarr import context
from gpuarr.array import check_same_context
from gpuarr.errors import (
    ContextMismatch,
    ContextNotDefined,
    DeviceNotFound,
    FlagError,
    OutOfMemory,
)

ROOT = Path(__file__).resolve().parents[1]
MiB = 2**20
UNUSABLE = [d for d in ga.list_devices() if not d.usable]
QUIET = "print_active_device=False"


def fallback_device(devices=None):
    """The device the flags fall back to: the first usable GPU, else the first usable device
    of Intel's CPU runtime, else the first usable device."""
    usable = [d for d in (ga.list_devices() if devices is None else devices) if d.usable]
    return next((d for d in usable if d.is_gpu), None) or next(
        (d for d in usable if d.platform.startswith("Intel(R) OpenCL")), usable[0])


@pytest.mark.parametrize("order", ["pocl intel", "intel pocl", "pocl card intel", "pocl",
                                   "intel- pocl", "pocl- intel- card"])
def test_default_device_prefers_graphics_cards_then_intels_cpu_runtime(monkeypatch, order):
    """GPUs first, then Intel's CPU runtime (faster than PoCL, docs/cpu_devices.md), else the
    platforms' order; unusable ones (marked -) never."""
    base = ga.list_devices()[0]
    kinds = {"pocl": ("Portable Computing Language", "CPU"), "intel": ("Intel(R) OpenCL", "CPU"),
             "card": ("NVIDIA CUDA", "GPU")}  # (no "gpu" in test ids: conftest's gpu_paths)
    devices = [dataclasses.replace(base, name=f"cl{i}:0", platform=kinds[k.rstrip("-")][0],
                                   type=kinds[k.rstrip("-")][1], usable=not k.endswith("-"))
               for i, k in enumerate(order.split())]
    monkeypatch.setattr(context, "list_devices", lambda: devices)
    want = {"pocl intel": 1, "intel pocl": 0, "pocl card intel": 1, "pocl": 0, "intel- pocl": 1,
            "pocl- intel- card": 2}[order]
    assert context.auto_device() is devices[want]
    assert fallback_device(devices) is devices[want]


def two_usable():
    if len(USABLE) < 2:
        pytest.skip("needs two usable devices")
    return USABLE[0], USABLE[1]


def host_data(dtype, shape=(6, 5)):
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt == np.bool_:
        a = np.arange(n) % 3 == 1
    elif dt.kind == "c":
        a = (np.arange(n) - 7) + 1j * (np.arange(n) * 2 + 1)
    elif dt.kind == "f":
        a = (np.arange(n) - 7) * 0.25
    elif dt.kind == "u":
        a = np.arange(n) * 7 + 3
    else:
        a = np.arange(n) * 5 - 40
    return a.astype(dt).reshape(shape)


# ---------------------------------------------------------------- devices

def test_list_devices_matches_pyopencl():
    expected = [(p_i, p, d_i, d) for p_i, p in enumerate(cl.get_platforms())
                for d_i, d in enumerate(p.get_devices())]
    infos = ga.list_devices()
    assert [i.name for i in infos] == [f"cl{p_i}:{d_i}" for p_i, _, d_i, _ in expected]
    for info, (p_i, p, d_i, d) in zip(infos, expected, strict=True):
        assert isinstance(info, ga.DeviceInfo)
        assert re.fullmatch(r"cl\d+:\d+", info.name)
        assert (info.platform_index, info.device_index) == (p_i, d_i)
        assert info.platform == p.name.strip()
        assert info.vendor == p.vendor.strip()
        assert info.device_name == d.name.strip()
        assert info.compute_units == d.max_compute_units
        assert info.global_mem == d.global_mem_size > 0
        assert info.max_alloc == d.max_mem_alloc_size > 0
        assert info.max_alloc <= info.global_mem
        assert info.opencl_version == " ".join(d.version.split()[:2])
        assert re.fullmatch(r"OpenCL \d+\.\d+", info.opencl_version)
        assert info.is_gpu == bool(d.type & cl.device_type.GPU)
        if d.type & cl.device_type.CPU and not d.type & cl.device_type.GPU:
            assert info.type == "CPU"
        assert info.fp64 == ("cl_khr_fp64" in d.extensions.split() or d.double_fp_config != 0)
        assert info.usable == (info.note == "")
        assert info.cl_device == d
        assert info.describe() == (f"{info.device_name} ({info.platform}, "
                                   f"{info.opencl_version})")


def test_list_devices_usable_ones_and_notes():
    assert USABLE, "conftest guarantees one usable device"
    for d in ga.list_devices():
        assert d.usable or d.note
    names = [d.name for d in ga.list_devices()]
    assert len(set(names)) == len(names)


def test_list_devices_returns_a_fresh_list():
    first = ga.list_devices()
    first.clear()
    assert ga.list_devices()


def test_find_device_by_index():
    for d in ga.list_devices():
        assert context.find_device(d.name).name == d.name
        assert context.find_device(f" {d.name} ").name == d.name


def _first_match(text):
    text = text.lower()
    return next((d for d in ga.list_devices()
                 if any(text in f.lower() for f in (d.platform, d.vendor, d.device_name))), None)


@pytest.mark.parametrize("text", ["portable", "PORTABLE", "Portable Computing", "pocl", "PoCL",
                                  "pthread", "nvidia", "amd", "intel"])
def test_find_device_by_text(text):
    expected = _first_match(text)
    if expected is None:
        pytest.skip(f"no device on this machine matches {text!r}")
    assert context.find_device(f"cl:{text}").name == expected.name


def test_find_device_by_device_name_case_insensitive():
    for d in ga.list_devices():
        for text in (d.device_name, d.device_name.upper(), d.device_name.lower()):
            assert context.find_device(f"cl:{text}").name == _first_match(text).name


def test_find_device_by_platform_and_vendor():
    for d in ga.list_devices():
        assert context.find_device(f"cl:{d.platform.swapcase()}").name == \
            _first_match(d.platform).name
        assert context.find_device(f"cl:{d.vendor.upper()}").name == _first_match(d.vendor).name


@pytest.mark.parametrize("text", ["cl:no-such-device-xyz", "cl9:0", "cl0:99"])
def test_find_device_absent_lists_devices(text):
    with pytest.raises(DeviceNotFound) as info:
        context.find_device(text)
    assert isinstance(info.value, ValueError)
    msg = str(info.value)
    assert repr(text) in msg
    for d in ga.list_devices():
        assert d.name in msg
        assert d.device_name in msg


@pytest.mark.parametrize("text", ["gpu0", "cl0", "cl0:x", "cuda0", "", "cl:", "cpu0"])
def test_find_device_malformed(text):
    with pytest.raises(ValueError) as info:
        context.find_device(text)
    assert isinstance(info.value, DeviceNotFound)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize("value", ["cpu", 0, None])
def test_find_device_not_an_opencl_device(value):
    with pytest.raises(DeviceNotFound) as info:
        context.find_device(value)
    assert repr(value) in str(info.value)


# ---------------------------------------------------------------- init and names

@pytest.mark.parametrize("dev", ["cl9:0", "cl0:99", "cl:no-such-device-xyz"])
def test_init_absent_device_raises(dev):
    with using_flags(QUIET), pytest.raises(DeviceNotFound, match=re.escape(repr(dev))):
        ga.init(dev)


@pytest.mark.parametrize("dev", ["gpu0", "cl0", "cpu"])
def test_init_malformed_or_cpu_raises(dev):
    with using_flags(QUIET), pytest.raises(ValueError, match=re.escape(repr(dev))):
        ga.init(dev)


def test_init_unusable_device_raises():
    if not UNUSABLE:
        pytest.skip("every device on this machine is usable")
    d = UNUSABLE[0]
    with using_flags(QUIET):
        with pytest.raises(DeviceNotFound) as info:
            ga.init(d.name)
        assert d.name in str(info.value)
        assert "unusable" in str(info.value)
        assert ga.contexts() == {}


def test_init_registers_name():
    d = USABLE[0]
    with using_flags(QUIET):
        assert ga.contexts() == {}
        c = ga.init(d.name, name="dev0")
        assert isinstance(c, ga.Context)
        assert c.devname == d.name
        assert ga.get_context("dev0") is c
        assert ga.contexts() == {"dev0": c}
        assert ga.init(d.name) is c
        assert ga.init(d.name, name="dev0") is c
        assert ga.get_context(d.name) is c
        assert ga.get_context(c) is c
        assert c.name == "dev0"
        c2 = ga.init(d.name, name="other")
        assert c2 is c
        assert ga.contexts() == {"dev0": c, "other": c}
        assert c.names == ["dev0", "other"]
        assert c.name == "dev0"


def test_context_name_is_devname_without_names():
    d = USABLE[0]
    with using_flags(QUIET):
        c = ga.init(d.name)
        assert c.name == d.name
        assert ga.contexts() == {}
        assert d.name in repr(c)


def test_one_name_mapped_to_two_devices_raises():
    a, b = two_usable()
    with using_flags(QUIET):
        ca = ga.init(a.name, name="dev0")
        with pytest.raises(ValueError) as info:
            ga.init(b.name, name="dev0")
        assert "'dev0'" in str(info.value)
        assert a.name in str(info.value) and b.name in str(info.value)
        assert ga.get_context("dev0") is ca
        assert ga.contexts() == {"dev0": ca}
        assert ga.init(b.name).names == []


def test_refused_mapping_is_not_logged(capsys):
    """A mapping that init refuses must not be announced as made."""
    a, b = two_usable()
    with using_flags("print_active_device=True"):
        ga.init(a.name, name="dev0")
        capsys.readouterr()
        with pytest.raises(ValueError):
            ga.init(b.name, name="dev0")
        assert f"Mapped name dev0 to device {b.name}" not in capsys.readouterr().err


@pytest.mark.parametrize("name", ["cpu", "cl0", "clx", "cl", "cl0:0", "", "dev-0", "0dev"])
def test_init_rejects_reserved_and_invalid_names(name):
    with using_flags(QUIET):
        with pytest.raises(FlagError) as info:
            ga.init(USABLE[0].name, name=name)
        assert isinstance(info.value, ValueError)
        assert repr(name) in str(info.value)
        assert ga.contexts() == {}


def test_get_context_unknown_name_lists_defined():
    d = USABLE[0]
    with using_flags(f"contexts=lazy0->{d.name},{QUIET}"):
        ga.init(d.name, name="dev0")
        with pytest.raises(ContextNotDefined) as info:
            ga.get_context("nope")
        assert isinstance(info.value, ValueError)
        msg = str(info.value)
        assert "'nope'" in msg
        assert "dev0" in msg
        assert "lazy0" in msg
        assert "nope" not in ga.contexts()


def test_get_context_unknown_name_with_none_defined():
    with using_flags(QUIET), pytest.raises(ContextNotDefined, match="'nope'"):
        ga.get_context("nope")


def test_get_context_unknown_name_after_default_context():
    """The default context is no name: it must not break the list of defined names."""
    d = USABLE[0]
    with using_flags(f"device={d.name},{QUIET}"):
        ga.get_context()
        with pytest.raises(ContextNotDefined, match="'nope'"):
            ga.get_context("nope")
        ga.init(d.name, name="dev0")
        with pytest.raises(ContextNotDefined) as info:
            ga.get_context("nope")
        assert "dev0" in str(info.value)


def test_get_context_rejects_other_types():
    with pytest.raises(TypeError):
        ga.get_context(3)


# ---------------------------------------------------------------- the contexts flag

def test_contexts_flag_creates_lazily():
    pair = same_platform_pair() or (USABLE[0], USABLE[0])
    a, b = pair
    with using_flags(f"contexts=dev0->{a.name};dev1->{b.name},{QUIET}"):
        assert ga.contexts() == {}
        c0 = ga.get_context("dev0")
        assert c0.devname == a.name
        assert ga.contexts() == {"dev0": c0}
        c1 = ga.get_context("dev1")
        assert c1.devname == b.name
        assert (c0 is c1) == (a.name == b.name)
        assert ga.get_context("dev0") is c0
        assert ga.contexts() == {"dev0": c0, "dev1": c1}
        x = ga.asarray(np.arange(5, dtype=np.int32), context="dev1")
        assert x.context is c1
        np.testing.assert_array_equal(x.get(), np.arange(5))


def test_contexts_flag_several_names_one_device():
    d = USABLE[0]
    with using_flags(f"contexts=dev0->{d.name};dev1->{d.name};dev2->{d.name},{QUIET}"):
        c0 = ga.get_context("dev0")
        assert ga.get_context("dev1") is c0
        assert ga.get_context("dev2") is c0
        assert ga.init(d.name) is c0
        assert c0.names == ["dev0", "dev1", "dev2"]
        assert ga.contexts() == {"dev0": c0, "dev1": c0, "dev2": c0}


def test_contexts_flag_name_and_init_agree():
    a = USABLE[0]
    with using_flags(f"contexts=dev0->{a.name},{QUIET}"):
        c = ga.init(a.name)
        assert ga.get_context("dev0") is c


# ---------------------------------------------------------------- fallback

def test_default_device_unset_picks_first_gpu_else_first_usable():
    with using_flags(QUIET):
        c = ga.get_context()
        assert c.devname == fallback_device().name
        assert ga.get_context(None) is c
        assert ga.zeros(3, context=None).context is c


def test_default_device_from_flag():
    d = USABLE[-1]
    with using_flags(f"device={d.name},{QUIET}"):
        assert ga.get_context().devname == d.name
        assert ga.empty(4).context.devname == d.name


def test_absent_flag_device_warns_and_falls_back():
    with using_flags(f"device=cl9:0,{QUIET}"):
        with pytest.warns(UserWarning, match="cl9:0") as rec:
            c = ga.get_context()
        assert c.devname == fallback_device().name
        assert fallback_device().name in str(rec[0].message)
        x = ga.asarray(np.arange(4.0, dtype=np.float32))
        np.testing.assert_array_equal(x.get(), np.arange(4.0))


def test_absent_flag_device_with_force_raises():
    with using_flags(f"device=cl9:0,force_device=True,{QUIET}"):
        with pytest.raises(DeviceNotFound, match="cl9:0"):
            ga.get_context()
        with pytest.raises(DeviceNotFound):
            ga.zeros(3)


def test_unusable_flag_device_falls_back_or_raises():
    if not UNUSABLE:
        pytest.skip("every device on this machine is usable")
    d = UNUSABLE[0]
    with using_flags(f"device={d.name},{QUIET}"), \
            pytest.warns(UserWarning, match=re.escape(d.name)):
        assert ga.get_context().devname == fallback_device().name
    with using_flags(f"device={d.name},force_device=yes,{QUIET}"), \
            pytest.raises(DeviceNotFound, match="unusable"):
        ga.get_context()


def test_absent_contexts_entry_warns_and_falls_back():
    with using_flags(f"contexts=dev0->cl9:0,{QUIET}"):
        with pytest.warns(UserWarning, match="cl9:0") as rec:
            c = ga.get_context("dev0")
        assert "dev0" in str(rec[0].message)
        assert c.devname == fallback_device().name
        assert ga.contexts() == {"dev0": c}


def test_absent_contexts_entry_with_force_raises():
    with using_flags(f"contexts=dev0->cl9:0,force_device=1,{QUIET}"):
        with pytest.raises(DeviceNotFound, match="cl9:0"):
            ga.get_context("dev0")
        assert ga.contexts() == {}


def test_device_cpu_has_no_default_context():
    with using_flags(f"device=cpu,{QUIET}"):
        with pytest.raises(ContextNotDefined, match="cpu"):
            ga.get_context()
        with pytest.raises(ContextNotDefined):
            ga.zeros(3)
        # Named devices still work.
        assert ga.get_context(USABLE[0].name).devname == USABLE[0].name


# ---------------------------------------------------------------- the init log

def test_log_line_for_named_context(capsys):
    d = USABLE[0]
    with using_flags(f"contexts=dev0->{d.name},print_active_device=True"):
        capsys.readouterr()
        ga.get_context("dev0")
        err = capsys.readouterr().err
        assert err == (f"Mapped name dev0 to device {d.name}: {d.device_name} "
                       f"({d.platform}, {d.opencl_version})\n")
        assert re.search(r"\(.*, OpenCL \d+\.\d+\)$", err.strip())
        ga.get_context("dev0")
        assert capsys.readouterr().err == ""


def test_log_line_for_init_with_name(capsys):
    d = USABLE[0]
    with using_flags("print_active_device=yes"):
        capsys.readouterr()
        ga.init(d.name, name="dev0")
        assert capsys.readouterr().err == f"Mapped name dev0 to device {d.name}: {d.describe()}\n"
        ga.init(d.name, name="dev0")
        assert capsys.readouterr().err == ""
        ga.init(d.name, name="dev1")
        assert capsys.readouterr().err == f"Mapped name dev1 to device {d.name}: {d.describe()}\n"


def test_no_log_when_off(capsys):
    d = USABLE[0]
    with using_flags(f"contexts=dev0->{d.name},device={d.name},print_active_device=False"):
        capsys.readouterr()
        ga.get_context("dev0")
        ga.init(d.name, name="dev1")
        ga.get_context()
        ga.zeros(3).get()
        captured = capsys.readouterr()
        assert captured.err == ""
        assert captured.out == ""


# ---------------------------------------------------------------- Context attributes and memory

def test_context_attributes(ctx):
    d = ctx.device
    assert ctx.devname == d.name == USABLE[0].name
    assert ctx.total_gmem == d.global_mem == d.cl_device.global_mem_size > 0
    assert ctx.fp64 == d.fp64
    assert isinstance(ctx.fp64, bool)
    assert ctx.max_work_group_size == d.cl_device.max_work_group_size >= 1
    assert ctx.held_bytes >= ctx.active_bytes >= 0
    assert isinstance(ctx.held_bytes, int) and isinstance(ctx.active_bytes, int)


def test_sync_waits_for_the_queue(ctx):
    x = ga.empty(4 * MiB, dtype="uint8", context=ctx)
    for v in range(5):
        x.fill(v)
    assert ctx.sync() is None
    assert x.event.command_execution_status == cl.command_execution_status.COMPLETE
    np.testing.assert_array_equal(x.get()[:: MiB], 4)


def test_active_bytes_follow_arrays_with_pool():
    with using_flags(f"preallocate=0,{QUIET}"):
        c = ga.init(USABLE[0].name)
        gc.collect()
        active0 = c.active_bytes
        x = ga.empty(MiB, dtype="uint8", context=c)
        y = ga.zeros((256, 256), dtype="float32", context=c)
        assert c.active_bytes >= active0 + MiB + 256 * 256 * 4
        assert c.held_bytes >= c.active_bytes
        view = x[10:]
        del x
        gc.collect()
        assert c.active_bytes >= active0 + MiB + 256 * 256 * 4  # the view keeps the storage
        del view, y
        gc.collect()
        assert c.active_bytes == active0
        assert c.held_bytes >= MiB  # the pool keeps the freed blocks
        c.free_held()
        assert c.held_bytes == c.active_bytes
        np.testing.assert_array_equal(ga.full(7, 3, dtype="int32", context=c).get(), [3] * 7)


def test_no_pool_with_negative_preallocate():
    with using_flags(f"preallocate=-1,{QUIET}"):
        c = ga.init(USABLE[0].name)
        host = host_data(np.float32, (64, 33))
        x = ga.asarray(host, context=c)
        assert c.held_bytes == 0 and c.active_bytes == 0
        np.testing.assert_array_equal(x.get(), host)
        del x
        gc.collect()
        y = ga.full((3, 4), 2.5, dtype="float32", context=c)
        np.testing.assert_array_equal(y.get(), np.full((3, 4), 2.5, np.float32))
        assert c.held_bytes == 0


def _check_all(arrays, hosts):
    for x, h in zip(arrays, hosts, strict=True):
        np.testing.assert_array_equal(x.get(), h)


def test_preallocate_mib_arena():
    with using_flags(f"preallocate=64,{QUIET}"):
        c = ga.init(USABLE[0].name)
        assert c.held_bytes >= 64 * MiB
        held = c.held_bytes
        assert c.active_bytes == 0
        hosts = [np.full(4 * MiB, i + 1, dtype=np.uint32) for i in range(4)]  # 16 MiB each
        xs = [ga.asarray(h, context=c) for h in hosts]  # fill the arena exactly
        assert c.active_bytes == 64 * MiB
        assert c.held_bytes == held  # all from the arena
        _check_all(xs, hosts)
        # Free the two middle blocks: a 32 MiB block must fit in the coalesced hole.
        del xs[1:3], hosts[1:3]
        gc.collect()
        assert c.active_bytes == 32 * MiB
        big_host = np.arange(8 * MiB, dtype=np.uint32)
        big = ga.asarray(big_host, context=c)
        assert c.held_bytes == held
        assert c.active_bytes == 64 * MiB
        _check_all(xs, hosts)  # neighbours untouched
        np.testing.assert_array_equal(big.get(), big_host)
        np.testing.assert_array_equal(big[5:13].get(), big_host[5:13])
        del xs, big
        gc.collect()
        assert c.active_bytes == 0
        # Everything coalesces back into one 64 MiB range.
        whole = ga.zeros(16 * MiB, dtype="uint32", context=c)
        assert c.held_bytes == held
        assert int(whole[-3:].get().sum()) == 0


def test_preallocate_arena_small_arrays_and_strided_reads():
    with using_flags(f"preallocate=64,{QUIET}"):
        c = ga.init(USABLE[0].name)
        hosts = [host_data(np.float32, (n, 3)) + n for n in (1, 2, 3, 5, 7, 11)]
        xs = [ga.asarray(h, context=c) for h in hosts]
        del xs[2], hosts[2]
        gc.collect()
        more = [host_data(np.int16, (4, n)) for n in (1, 9)]
        xs += [ga.asarray(h, context=c) for h in more]
        hosts += more
        for x, h in zip(xs, hosts, strict=True):
            np.testing.assert_array_equal(x.get(), h)
            np.testing.assert_array_equal(x[::2].get(), h[::2])
            np.testing.assert_array_equal(x.T.get(), h.T)


def test_preallocate_fraction():
    with using_flags(f"preallocate=0.01,{QUIET}"):
        c = ga.init(USABLE[0].name)
        d = c.device
        assert c.held_bytes == min(int(0.01 * d.global_mem), d.max_alloc)
        x = ga.asarray(np.arange(100, dtype=np.int64), context=c)
        np.testing.assert_array_equal(x.get(), np.arange(100))


@pytest.mark.parametrize("nbytes", [2**40, "max_alloc+1"])
def test_out_of_memory(ctx, nbytes):
    if nbytes == "max_alloc+1":
        nbytes = ctx.device.max_alloc + 1
    active = ctx.active_bytes
    with pytest.raises(OutOfMemory) as info:
        ga.empty(nbytes, dtype="uint8", context=ctx)
    assert isinstance(info.value, MemoryError)
    msg = str(info.value)
    assert str(nbytes) in msg
    assert ctx.devname in msg
    assert ctx.active_bytes == active
    host = host_data(np.int32, (10, 10))
    np.testing.assert_array_equal(ga.asarray(host, context=ctx).get(), host)


def test_out_of_memory_in_elements(ctx):
    with pytest.raises(OutOfMemory, match=str(2**38 * 8)):
        ga.zeros(2**38, dtype="float64" if ctx.fp64 else "int64", context=ctx)
    assert ga.zeros(3, dtype="int32", context=ctx).get().tolist() == [0, 0, 0]


# ---------------------------------------------------------------- transfers between devices

TRANSFER_DTYPES = [np.bool_, np.int8, np.uint16, np.int32, np.uint64, np.float16, np.float32,
                   np.float64, np.complex64, np.complex128]
VIEWS = {
    "whole": lambda a: a,
    "step": lambda a: a[::2],
    "T": lambda a: a.T,
    "offset": lambda a: a[1:],
    "reversed": lambda a: a[::-1, ::-2],
}


def _skip_fp64(dtype, *ctxs):
    if np.dtype(dtype) in (np.float64, np.complex128) and not all(c.fp64 for c in ctxs):
        pytest.skip("no fp64 on this device")


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("dtype", TRANSFER_DTYPES, ids=lambda t: np.dtype(t).name)
def test_transfer_both_ways(ctx_pair, dtype, view):
    a, b = ctx_pair
    _skip_fp64(dtype, a, b)
    host = host_data(dtype)
    pick = VIEWS[view]
    for src, dst in ((a, b), (b, a)):
        x = pick(ga.asarray(host, context=src))
        y = x.transfer(dst)
        assert y.context is dst
        assert y.dtype == host.dtype
        assert y.shape == pick(host).shape
        np.testing.assert_array_equal(y.get(), pick(host))
        np.testing.assert_array_equal(x.get(), pick(host))  # the source is intact


def test_transfer_fortran_source(ctx_pair):
    a, b = ctx_pair
    host = np.asfortranarray(host_data(np.int32, (5, 7)))
    x = ga.asarray(host, context=a)
    assert x.flags.f_contiguous
    np.testing.assert_array_equal(x.transfer(b).get(), host)


def test_transfer_edge_shapes(ctx_pair):
    a, b = ctx_pair
    for host in (np.float32(2.5) * np.ones(()), np.zeros((0, 3), np.int32), np.arange(1)):
        y = ga.asarray(host, context=a).transfer(b)
        assert y.context is b and y.shape == host.shape
        np.testing.assert_array_equal(y.get(), host)


def test_transfer_to_same_context_is_identity(ctx_pair):
    a, _ = ctx_pair
    x = ga.asarray(np.arange(3), context=a)
    assert x.transfer(a) is x


def test_asarray_with_context_transfers(ctx_pair):
    a, b = ctx_pair
    host = host_data(np.float32, (4, 6))
    x = ga.asarray(host, context=a)
    y = ga.asarray(x, context=b)
    assert y.context is b
    np.testing.assert_array_equal(y.get(), host)
    z = ga.asarray(x[:, ::3], context=b, dtype="int32")
    assert z.context is b and z.dtype == np.int32
    np.testing.assert_array_equal(z.get(), host[:, ::3].astype(np.int32))
    assert ga.asarray(x) is x


def test_transfer_by_context_name():
    pair = same_platform_pair() or (USABLE[0], USABLE[0])
    with using_flags(f"contexts=dev0->{pair[0].name};dev1->{pair[1].name},{QUIET}"):
        host = host_data(np.uint8, (3, 9))
        x = ga.asarray(host, context="dev0")
        y = x.transfer("dev1")
        assert y.context is ga.get_context("dev1")
        np.testing.assert_array_equal(y.get(), host)
        np.testing.assert_array_equal(ga.asarray(y, context="dev0").get(), host)


def test_assignment_across_contexts(ctx_pair):
    a, b = ctx_pair
    host = host_data(np.int32, (4, 5))
    x = ga.zeros((4, 5), dtype="int32", context=a)
    x[...] = ga.asarray(host, context=b)
    assert x.context is a
    np.testing.assert_array_equal(x.get(), host)


def test_cross_platform_transfer():
    pair = cross_platform_pair()
    if pair is None:
        pytest.skip("needs usable devices on two OpenCL platforms; this machine has "
                    f"{[(d.name, d.usable) for d in ga.list_devices()]}")
    a, b = (ga.init(d.name) for d in pair)
    host = host_data(np.float32, (6, 5))
    for src, dst in ((a, b), (b, a)):
        for pick in VIEWS.values():
            y = pick(ga.asarray(host, context=src)).transfer(dst)
            assert y.context is dst
            np.testing.assert_array_equal(y.get(), pick(host))


# ---------------------------------------------------------------- ordering across queues

def test_write_then_transfer(ctx_pair):
    a, b = ctx_pair
    x = ga.zeros(MiB, dtype="float32", context=a)
    x.fill(7)
    y = x.transfer(b)
    assert (y.get() == 7).all()


def test_chain_of_writes_then_transfer(ctx_pair):
    a, b = ctx_pair
    n = 1 << 18
    h = np.arange(n, dtype=np.int32)
    x = ga.asarray(h, context=a)
    for k in range(30):
        x.fill(k)
        h[...] = k
        x[1::3] = k + 100  # strided fill: a kernel
        h[1::3] = k + 100
        x[1:] = x[:-1]  # overlapping copy
        h[1:] = h[:-1].copy()
    y = x.transfer(b)
    np.testing.assert_array_equal(y.get(), h)
    z = y.transfer(a)
    np.testing.assert_array_equal(z.get(), h)


def test_write_on_target_after_transfer(ctx_pair):
    a, b = ctx_pair
    x = ga.empty(4 * MiB, dtype="uint8", context=a)
    for v in range(20):
        x.fill(v)
    y = x.transfer(b)
    y[::2] = 1  # must land after the copy into y
    expected = np.full(4 * MiB, 19, np.uint8)
    expected[::2] = 1
    np.testing.assert_array_equal(y.get(), expected)
    y.fill(3)
    np.testing.assert_array_equal(y.transfer(a).get(), np.full(4 * MiB, 3, np.uint8))


def test_source_rewritten_after_transfer(ctx_pair):
    a, b = ctx_pair
    x = ga.empty(4 * MiB, dtype="uint8", context=a)
    x.fill(5)
    y = x.transfer(b)
    x.fill(9)  # must not reach y
    assert (y.get() == 5).all()
    assert (x.get() == 9).all()


def test_freed_transfer_target_is_not_overwritten_late(ctx_pair):
    """A transfer's destination freed at once: its memory, reused on the target, stays new."""
    a, b = ctx_pair
    n = 32 * MiB
    x = ga.empty(n, dtype="uint8", context=a)
    for v in range(100):  # keep queue a busy so that the copy runs late
        x.fill(v % 7)
    y = x.transfer(b)
    del y  # y's memory goes back to b's pool while the copy into it may still be pending
    gc.collect()
    z = ga.empty(n, dtype="uint8", context=b)
    z.fill(200)
    b.sync()
    a.sync()
    np.testing.assert_array_equal(np.unique(z.get()), [200])


# ---------------------------------------------------------------- context mismatch

def test_check_same_context(ctx_pair):
    a, b = ctx_pair
    xa = ga.zeros(3, dtype="int32", context=a)
    xa2 = ga.ones(3, dtype="int32", context=a)
    xb = ga.zeros(3, dtype="int32", context=b)
    assert check_same_context(xa, xa2) is a
    assert check_same_context(xa) is a
    with pytest.raises(ContextMismatch) as info:
        check_same_context(xa, xa2, xb)
    assert isinstance(info.value, ValueError)
    msg = str(info.value)
    assert a.devname in msg and b.devname in msg
    assert a.name in msg and b.name in msg


# ---------------------------------------------------------------- the CLI

def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "gpuarr", *args], cwd=ROOT, env=dict(os.environ),
                          capture_output=True, text=True, timeout=120)


def test_cli_info():
    r = run_cli("info")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    for d in ga.list_devices():
        line = next((ln for ln in r.stdout.splitlines() if ln.startswith(d.name + " ")), None)
        assert line is not None, (d.name, r.stdout)
        assert d.device_name in line
        assert d.platform in line
        if not d.usable:
            assert f"{d.name} is unusable" in r.stdout


def test_first_builds_keep_stderr_quiet(ctx, tmp_path):
    """Kernels built cold print nothing on stderr: PoCL's compiler counts its warnings there
    ("13 warnings generated.": AVX2 ABI notes on 16-wide vectors) unless built with -w."""
    code = ("import numpy as np, gpuarr as ga; a = ga.asarray(np.ones((256, 256), np.float32));"
            " (a @ a).get(); ga.exp(a).get(); a.sum().get()")
    env = dict(os.environ, PYOPENCL_NO_CACHE="1", POCL_CACHE_DIR=str(tmp_path),
               GPUARR_FLAGS=f"device={ctx.devname},print_active_device=False")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "warnings generated" not in r.stderr and "warning:" not in r.stderr, r.stderr


def test_cli_info_shows_contexts_flag():
    env = dict(os.environ, GPUARR_FLAGS="contexts=dev0->cl0:0;dev1->cl0:1,floatX=float64",
               GPUARRRC=os.devnull)
    r = subprocess.run([sys.executable, "-m", "gpuarr", "info"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "dev0 -> cl0:0" in r.stdout
    assert "dev1 -> cl0:1" in r.stdout
    assert "floatX: float64" in r.stdout


def test_cli_check():
    r = run_cli("check")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Looping 1000 times took" in r.stdout
    assert "Used the device" in r.stdout
    assert "Result matches numpy" in r.stdout


def test_cli_check_cpu():
    r = run_cli("check", "--device", "cpu")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Looping 1000 times took" in r.stdout
    assert "Used the cpu" in r.stdout
    assert "Used the device" not in r.stdout
    assert "Result matches numpy" in r.stdout


def test_cli_check_named_device():
    d = USABLE[-1]
    r = run_cli("check", "--device", d.name)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"Used the device {d.name}" in r.stdout


def test_cli_check_context_name_from_flags():
    d = USABLE[-1]
    env = dict(os.environ, GPUARR_FLAGS=f"contexts=mine->{d.name}", GPUARRRC=os.devnull)
    r = subprocess.run([sys.executable, "-m", "gpuarr", "check", "--device", "mine"], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"Used the device {d.name}" in r.stdout
    assert f"Mapped name mine to device {d.name}: {d.describe()}" in r.stderr


def test_cli_check_absent_device():
    r = run_cli("check", "--device", "cl9:0")
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "cl9:0" in lines[0]
    assert "Result matches numpy" not in r.stdout
