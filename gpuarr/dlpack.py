"""DLPack: GpuArrays to other libraries (`__dlpack__`, `__dlpack_device__`) and back
(`from_dlpack`).

A device whose memory is host memory (a CPU device: PoCL, Intel's CPU runtime) exports
kDLCPU with no copy: the bytes the array spans are mapped (clEnqueueMapBuffer) for as long
as the consumer holds them, and the capsule's deleter releases the mapping and the storage.
That is done only where a check (once per context) finds the mapping to be the device's own
bytes, seen at once by both sides. Other devices report kDLOpenCL, which numpy and the
CPU libraries cannot consume: `__dlpack__` raises BufferError there unless the consumer asks
for `dl_device=(kDLCPU, 0)` and allows a copy (`np.from_dlpack(x, device="cpu")`), which
exports a host copy. `from_dlpack` copies other libraries' data into device memory.

The capsules are built here with ctypes: DLPack 1.x's `DLManagedTensorVersioned`
("dltensor_versioned") when the consumer passes `max_version >= (1, 0)`, else the legacy
`DLManagedTensor` ("dltensor"), as the Python specification of DLPack asks.
"""

import ctypes
import enum

import numpy as np
import pyopencl as cl

from .base import ArrayBase, to_device
from .context import _host_memory, get_context
from .errors import ArgumentError, ArgumentTypeError, BufferExportError
from .launch import copy_buffer, fill_buffer, record, waits

__all__ = [
    "DLDataType", "DLDevice", "DLDeviceType", "DLManagedTensor", "DLManagedTensorVersioned",
    "DLPackVersion", "DLTensor", "DlpackMethods", "from_dlpack", "maps_host_memory",
]

# The DLPack version these structs follow, and the flags of DLManagedTensorVersioned.
VERSION = (1, 1)
FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1


class DLDeviceType(enum.IntEnum):
    """DLPack's device types gpuarr reports."""

    kDLCPU = 1
    kDLOpenCL = 4


class DLDevice(ctypes.Structure):
    """dlpack.h's DLDevice: (device_type, device_id)."""

    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    """dlpack.h's DLDataType: type code, bits per lane, lanes."""

    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    """dlpack.h's DLTensor: data pointer, device, ndim, dtype, shape, strides (elements),
    byte offset of element 0."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),  # in elements
        ("byte_offset", ctypes.c_uint64),
    ]


# void (*deleter)(DLManagedTensor[Versioned] *self): the argument as a plain address
_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    """dlpack.h's legacy (unversioned) managed tensor, in capsules named "dltensor"."""

    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _Deleter)]


class DLPackVersion(ctypes.Structure):
    """dlpack.h's DLPackVersion: (major, minor)."""

    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    """dlpack.h's DLManagedTensorVersioned (DLPack 1.0 on), in capsules named
    "dltensor_versioned"."""

    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _Deleter), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


# DLDataTypeCode by numpy kind: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLComplex 5, kDLBool 6
_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}

# What each live capsule's tensor keeps alive, by the address of its managed struct:
# (struct, shape, strides, owner, finish). The deleter (the consumer's call when done, or the
# capsule's destructor when never consumed) drops the entry, calling finish() first.
_live = {}


def _release(address):
    entry = _live.pop(address, None)
    if entry is not None and entry[4] is not None:
        entry[4]()


_DELETER = _Deleter(_release)

# The C-API calls on capsules, as our own function objects (pythonapi's are shared).
_api = ctypes.pythonapi
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.c_void_p)(("PyCapsule_New", _api))
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_capsule_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))

# Capsule names; the capsules point at these bytes for their whole life.
_NAMES = {True: b"dltensor_versioned", False: b"dltensor"}


def _destroy_capsule(capsule):
    # The capsule's destructor: the argument is a plain address (a py_object would take a
    # new reference to a capsule being freed). A consumer renames what it took
    # ("used_dltensor"): its deleter call is then the consumer's to make.
    for name in _NAMES.values():
        if _capsule_is_valid(capsule, name):
            _release(_capsule_get_pointer(capsule, name))
            return


_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_destroy_capsule)


def _dl_dtype(dtype):
    return DLDataType(_CODES[dtype.kind], 8 * dtype.itemsize, 1)


def capsule(pointer, byte_offset, shape, strides, dtype, device, owner, *, versioned,
            flags=0, finish=None):
    """A DLPack capsule of the memory at `pointer` (+ `byte_offset` to element 0), with
    `shape` and `strides` (in elements) of `dtype`, on `device` (type, id); `owner` stays
    alive until the consumer is done with it (or the capsule dies unconsumed), and then
    `finish()` runs, if given, before `owner` is dropped."""
    ndim = len(shape)
    dims = (ctypes.c_int64 * max(ndim, 1))(*shape)
    steps = (ctypes.c_int64 * max(ndim, 1))(*strides)
    managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    t = managed.dl_tensor
    t.data = pointer
    t.device = DLDevice(*device)
    t.ndim = ndim
    t.dtype = _dl_dtype(dtype)
    t.shape = dims
    t.strides = steps
    t.byte_offset = byte_offset
    managed.deleter = _DELETER
    if versioned:
        managed.version = DLPackVersion(*VERSION)
        managed.flags = flags
    address = ctypes.addressof(managed)
    _live[address] = (managed, dims, steps, owner, finish)
    try:
        return _capsule_new(address, _NAMES[versioned], ctypes.cast(_DESTRUCTOR, ctypes.c_void_p))
    except BaseException:
        _live.pop(address, None)
        raise


def _host_capsule(host, versioned, flags, owner=None):
    """A capsule of the numpy array `host` (kept alive: `owner`, else `host`)."""
    isz = host.itemsize
    return capsule(host.ctypes.data, 0, host.shape, [s // isz for s in host.strides],
                   host.dtype, (DLDeviceType.kDLCPU, 0), host if owner is None else owner,
                   versioned=versioned, flags=flags)


def maps_host_memory(context):
    """Whether `context`'s arrays export to DLPack as kDLCPU with no copy: its memory is
    host memory, and a mapped buffer is the device's own bytes (checked once: a host write
    through a mapping is read by the device, and a device write is seen through it)."""
    key = "dlpack.maps_host_memory"
    got = context.state.get(key)
    if got is None:
        got = context.state[key] = _host_memory(context.device) and _mapping_is_shared(context)
    return got


def _mapping_is_shared(ctx):
    st = ctx.allocate(16)
    try:
        with ctx.launch_lock:
            host, _ = cl.enqueue_map_buffer(ctx.queue, st.buffer, cl.map_flags.READ
                                            | cl.map_flags.WRITE, 0, (16,), np.uint8,
                                            is_blocking=True)
        try:
            host[:] = 1
            copy_buffer(ctx, st, st, 8, 0, 8)  # device reads the host's bytes 8..15
            st.event.wait()
            seen = bool((host[:8] == 1).all())
            fill_buffer(ctx, st, np.uint8(7), 0, 8)  # device writes while mapped
            st.event.wait()
            return seen and bool((host[:8] == 7).all())
        finally:
            host.base.release().wait()
    except cl.Error:
        return False


def _mapped(a):
    """(numpy uint8 array mapping the bytes `a` spans, byte offset of its element 0 there)."""
    lo, hi = a._extent()
    st, q = a.storage, a.context.queue
    flags = cl.map_flags.READ | (cl.map_flags.WRITE if a._writeable else 0)
    with a.context.launch_lock:
        host, event = cl.enqueue_map_buffer(q, st.buffer, flags, lo, (hi - lo,), np.uint8,
                                            wait_for=waits(q, (st,)), is_blocking=True)
        record(event, q, (st,))
    return host, a.offset - lo


def _export(a, max_version, dl_device, copy):
    versioned = max_version is not None and max_version[0] >= 1
    own = a.__dlpack_device__()
    cpu = (DLDeviceType.kDLCPU, 0)
    if dl_device is not None and tuple(dl_device) not in (tuple(own), cpu):
        raise BufferExportError(f"cannot export an array of {a.context.devname} to DLPack "
                                f"device {tuple(dl_device)}: gpuarr exports to {tuple(own)}"
                                f"{'' if own == cpu else f' or, copying, {cpu}'}")
    if own == cpu and copy is not True:
        if a.size == 0:
            return _host_capsule(np.empty(a.shape, a.dtype), versioned, 0)
        if not a._writeable and not versioned:
            raise BufferExportError("cannot export a read-only array to a DLPack consumer "
                                    "older than DLPack 1.0, which cannot mark it read-only; "
                                    "copy it first")
        host, start = _mapped(a)
        isz = a.itemsize
        # unmapped when the consumer is done, before the storage may go back to the pool
        return capsule(host.ctypes.data, start, a.shape, [s // isz for s in a.strides],
                       a.dtype, cpu, (host, a.storage), versioned=versioned,
                       flags=0 if a._writeable else FLAG_READ_ONLY, finish=host.base.release)
    if own == cpu or (dl_device is not None and copy is not False):
        return _host_capsule(a.get(), versioned, FLAG_IS_COPIED)
    if copy is False and dl_device is not None:
        raise BufferExportError(f"exporting to the host (dl_device={tuple(dl_device)}) needs "
                                f"a copy from {a.context.devname} "
                                f"({a.context.device.device_name}), and copy=False forbids it")
    raise BufferExportError(
        f"the array is in the memory of {a.context.devname} ({a.context.device.device_name}), "
        f"not host memory, and no DLPack consumer reads OpenCL buffers (kDLOpenCL); for a host "
        f"copy pass dl_device=(1, 0) (np.from_dlpack(x, device='cpu')), or use x.get()")


class DlpackMethods:
    """The DLPack protocol of the Array API (`np.from_dlpack(x)`, `torch.from_dlpack(x)`).
    A mixin of GpuArray (gpuarr/array.py)."""

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this array for a consumer (`np.from_dlpack(x)`).

        On a device whose memory is host memory the capsule is kDLCPU and shares the
        array's memory (copy=True: a host copy); elsewhere it exists only as a host copy,
        asked for with `dl_device=(1, 0)` (kDLCPU), else BufferError.

        Parameters
        ----------
        stream : None
            Only None: the memory exported is host memory, ready when this returns.
        max_version : tuple of int, optional
            The consumer's highest DLPack version; (1, 0) or later gets a versioned capsule
            (which can mark read-only arrays and copies).
        dl_device : tuple, optional
            (device type, id) the consumer wants: this array's `__dlpack_device__()`, or
            (1, 0) for host memory.
        copy : bool, optional
            True: always a copy; False: never (BufferError where one is needed).

        Examples
        --------
        >>> x = ga.asarray(np.arange(6.0).reshape(2, 3))
        >>> np.from_dlpack(x, device="cpu")[1]
        array([3., 4., 5.])
        """
        if stream is not None:
            raise ArgumentError(f"__dlpack__(stream={stream!r}): gpuarr exports host memory, "
                                f"ready on return, and takes stream=None only")
        return _export(self, max_version, dl_device, copy)

    def __dlpack_device__(self, /):
        """(device type, device id) of the memory `__dlpack__` exports: (1, 0), kDLCPU,
        where the device's memory is host memory; else (4, the device's index in its
        platform), kDLOpenCL."""
        ctx = self.context
        if maps_host_memory(ctx):
            return (DLDeviceType.kDLCPU, 0)
        return (DLDeviceType.kDLOpenCL, ctx.device.device_index)


def from_dlpack(x, /, *, device=None, copy=None):
    """A GpuArray of the data of `x`, any DLPack producer (a numpy array, a torch tensor,
    ...), copied into device memory (numpy's layout of it kept).

    Parameters
    ----------
    x : object with ``__dlpack__``
        The data. Producers on another device than the host are asked for a host copy.
    device : str, Context or None
        Where the result lives: a context or its name; None: x's context for a GpuArray,
        else the default context.
    copy : bool, optional
        True: always a new array. False: never copy, which only a GpuArray already on
        `device` allows (BufferError otherwise: other data has to be copied to the device).

    Examples
    --------
    >>> ga.from_dlpack(np.arange(6).reshape(2, 3)[:, ::2]).get()
    array([[0, 2],
           [3, 5]])
    """
    if isinstance(x, ArrayBase):
        ctx = x.context if device is None else get_context(device)
        if copy is False and ctx is not x.context:
            raise BufferExportError(f"from_dlpack(copy=False): the array is on "
                                    f"{x.context.name!r}, not {ctx.name!r}; a transfer copies")
        if ctx is not x.context:
            return x.transfer(ctx)
        return x.copy("K") if copy else x.view()  # (a view, as numpy's from_dlpack gives)
    if not hasattr(x, "__dlpack__"):
        raise ArgumentTypeError(f"from_dlpack() needs an object with __dlpack__ (a DLPack "
                                f"producer), not {type(x).__name__}; for other data use "
                                f"gpuarr.asarray")
    if copy is False:
        raise BufferExportError(f"from_dlpack(copy=False): a {type(x).__name__} has to be "
                                f"copied into device memory; pass copy=None")
    try:
        host = np.from_dlpack(x)
    except BufferError as e:
        try:  # a producer on another device: ask for a host copy
            host = np.from_dlpack(x, device="cpu")
        except TypeError:  # (numpy before 2.1 cannot ask)
            raise e from None
    return to_device(host, get_context(device))
