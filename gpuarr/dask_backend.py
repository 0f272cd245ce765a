"""dask.array with gpuarr chunks, on dask.distributed (docs/dask.md).

    import dask, dask.array as da
    with dask.config.set({"array.backend": "gpuarr"}):
        x = da.random.default_rng(0).standard_normal((20000, 100), chunks=(5000, 100))
    g = (x.T @ x).compute()                     # a GpuArray
    h = x.to_backend("numpy")                   # numpy chunks

`register` puts GpuArray into dask's dispatch tables as dask/array/backends.py puts CuPy's
ndarray, and into dask.distributed's serialization families (host staging through numpy's
serializer). dask reaches it by the package's name: gpuarr/__init__.py keys it in dask's lazy
tables, so dask imports this module when it first meets a GpuArray; gpuarr never imports
dask. The entry point `gpuarr` of dask.array.backends (pyproject.toml) names
`GpuarrBackendEntrypoint`, for dask's creation functions and `to_backend("gpuarr")`.
`BindDevice` binds each dask.distributed worker to one OpenCL device.
"""

import collections.abc
import math
import os
import sys

import dask
import dask.array as da
import numpy as np
from dask.array import dispatch
from dask.array.backends import (
    ArrayBackendEntrypoint,
    _nannumel,
    _numel_arraylike,
    array_creation_dispatch,
)
from dask.sizeof import sizeof
from dask.tokenize import normalize_token
from dask.utils import Dispatch

from . import config
from .array import GpuArray
from .base import asarray, empty
from .blas import tensordot
from .context import find_device, get_context
from .contraction import einsum
from .errors import ContextMismatch, UnsupportedError
from .indexing import take
from .manipulation import concatenate
from .random import RandomState
from .sorting import sort

try:
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # dask.array without dask.distributed: BindDevice is of no use
    WorkerPlugin = object

__all__ = ["BindDevice", "GpuarrBackendEntrypoint", "PhiloxSeed", "register",
           "to_gpuarr_dispatch"]

to_gpuarr_dispatch = Dispatch("to_gpuarr_dispatch")


@to_gpuarr_dispatch.register(object)
def _to_gpuarr(data, **kwargs):
    """Data of numpy, gpuarr or CuPy as a GpuArray (keywords as `gpuarr.asarray`'s: context=,
    dtype=): what `Array.to_backend("gpuarr")` maps over the chunks."""
    return asarray(data, **kwargs)


@to_gpuarr_dispatch.register_lazy("cupy")
def _register_cupy():
    import cupy

    to_gpuarr_dispatch.register(cupy.ndarray, lambda x, **kw: asarray(cupy.asnumpy(x), **kw))


_registered = set()


def register():
    """Register GpuArray with dask.array's dispatch tables, dask's sizeof and tokenize, and
    dask.distributed's serialization (if it is loaded); idempotent.

    dask calls this through the lazy tables when it first meets a GpuArray; call it yourself
    only where GpuArrays reach dask some other way, or where gpuarr runs from a source tree
    without being installed (no entry point: this registers the "gpuarr" array backend too).
    """
    if "dask" not in _registered:
        _registered.add("dask")
        try:
            array_creation_dispatch.dispatch("gpuarr")  # the installed entry point
        except ValueError:
            array_creation_dispatch.register_backend("gpuarr", GpuarrBackendEntrypoint())
        dispatch.concatenate_lookup.register(GpuArray, concatenate)
        dispatch.take_lookup.register(GpuArray, take)
        dispatch.tensordot_lookup.register(GpuArray, tensordot)
        dispatch.einsum_lookup.register(GpuArray, _einsum)
        dispatch.empty_lookup.register(GpuArray, empty)
        dispatch.percentile_lookup.register(GpuArray, _percentile)
        dispatch.numel_lookup.register(GpuArray, _numel_arraylike)
        dispatch.nannumel_lookup.register(GpuArray, _nannumel)
        dispatch.to_numpy_dispatch.register(GpuArray, lambda x, **kw: x.get())
        dispatch.to_cupy_dispatch.register(GpuArray, _to_cupy)
        sizeof.register(GpuArray, _sizeof)
        normalize_token.register(GpuArray, _token)
    serialize = sys.modules.get("distributed.protocol.serialize")
    if serialize is not None and "distributed" not in _registered:
        _registered.add("distributed")
        serialize.dask_serialize.register(GpuArray, _serialize)
        serialize.dask_deserialize.register(GpuArray, _deserialize)


def _einsum(*args, **kwargs):
    kwargs.pop("order", None)  # gpuarr's einsum writes C order
    return einsum(*args, **kwargs)


def _to_cupy(x, **kwargs):
    import cupy

    return cupy.asarray(x.get(), **kwargs)


def _sizeof(x):
    """The chunk's device bytes; a broadcast axis (stride 0, as da.ones' chunks) counts once."""
    return x.itemsize * math.prod(n for n, s in zip(x.shape, x.strides) if s)


def _token(x):
    """The data's token, as numpy's (a host copy: tokens must follow in-place writes)."""
    return "gpuarr", x.context.devname, normalize_token(x.get())


def _percentile(a, q, method="linear"):
    """dask's per-chunk percentile: the chunk sorted on the device, the order statistics
    that `q` needs read back, numpy's interpolation `method` on the host."""
    n = len(a)
    if not n:
        return None, n
    q = np.asarray(list(q) if isinstance(q, collections.abc.Iterator) else q, np.float64)
    if a.dtype.kind not in "iuf":
        method = "nearest"
    pos = q / 100 * (n - 1)
    lo, hi = np.floor(pos).astype(np.intp), np.ceil(pos).astype(np.intp)
    need = np.unique(np.concatenate([lo, hi, np.around(pos).astype(np.intp)]))
    v = take(sort(a), need).get()
    vlo, vhi = v[np.searchsorted(need, lo)], v[np.searchsorted(need, hi)]
    if method == "linear":
        out = vlo + (vhi.astype(np.float64) - vlo) * (pos - lo)
    elif method == "lower":
        out = vlo
    elif method == "higher":
        out = vhi
    elif method == "midpoint":
        out = (vlo + vhi.astype(np.float64)) / 2
    elif method == "nearest":
        out = v[np.searchsorted(need, np.around(pos).astype(np.intp))]
    else:
        raise UnsupportedError(f"percentile method {method!r} on gpuarr chunks; use linear, "
                               f"lower, higher, midpoint or nearest")
    return out, n


# ---------------------------------------------------------------- dask.distributed

def _serialize(x):
    """dask's serialization family for a GpuArray: a host copy, serialized as numpy's."""
    from distributed.protocol.numpy import serialize_numpy_ndarray

    return serialize_numpy_ndarray(x.get())


def _deserialize(header, frames):
    """A GpuArray on this process's default device (a worker's: `BindDevice`)."""
    from distributed.protocol.numpy import deserialize_numpy_ndarray

    return asarray(deserialize_numpy_ndarray(header, frames))


def _with_device(flags, device):
    """GPUARR_FLAGS text `flags` with its device= replaced by `device`."""
    kept = [f for f in flags.split(",") if f.strip() and not f.strip().startswith("device=")]
    return ",".join([*kept, f"device={device}"])


class BindDevice(WorkerPlugin):
    """A dask.distributed worker plugin: worker i takes `devices[i % len(devices)]` as
    gpuarr's default device (by its name's number: LocalCluster names workers 0, 1, ...;
    `devices` may also map worker names to devices), with `flags` (GPUARR_FLAGS text, e.g.
    'preallocate=256') added to GPUARR_FLAGS. Chunks a worker makes or receives land there.

    Parameters
    ----------
    devices : list of str or dict
        Device strings (cl0:1, cl:nvidia), or {worker name: device string}.
    flags : str, optional
        More gpuarr flags for the workers.

    Examples
    --------
    >>> client.register_plugin(BindDevice(["cl0:0", "cl0:1"]))  # doctest: +SKIP
    """

    name = "gpuarr-bind-device"

    def __init__(self, devices, flags=""):
        self.devices = devices
        self.flags = flags

    def device_for(self, worker_name):
        """The device string of the worker named `worker_name`."""
        if isinstance(self.devices, collections.abc.Mapping):
            return self.devices[worker_name]
        try:
            index = int(worker_name)
        except (TypeError, ValueError):
            raise ContextMismatch(
                f"worker name {worker_name!r} is not a number: give BindDevice a mapping "
                f"{{worker name: device}} or set GPUARR_FLAGS=device=... per worker") from None
        return self.devices[index % len(self.devices)]

    def setup(self, worker):
        """Bind this worker process's default context to its device."""
        device = self.device_for(worker.name)
        flags = os.environ.get(config.ENV_VAR, "")
        os.environ[config.ENV_VAR] = _with_device(
            ",".join(f for f in (flags, self.flags) if f), device)
        config.reload()
        want = find_device(device).name
        ctx = get_context()
        if ctx.devname != want:
            raise ContextMismatch(
                f"worker {worker.name!r} used gpuarr's default device {ctx.devname} before "
                f"BindDevice bound it to {want}; register the plugin before running tasks, "
                f"or start the worker with GPUARR_FLAGS=device={device}")


# ---------------------------------------------------------------- the array backend

def _meta():
    return empty((0,))  # dask gives it the dtype of the array


def _numpy_backend(function, /, *args, **kwargs):
    """dask.array's creation `function` on the numpy backend, with gpuarr chunks: dask builds
    them through numpy's functions of a GpuArray meta (`__array_function__`)."""
    with dask.config.set({"array.backend": "numpy"}):
        return getattr(da, function)(*args, **kwargs)


def _creation(function, meta="meta"):
    """The backend's `function` (da.ones, ...): dask's numpy one with a GpuArray meta (passed
    as `meta`, or `like` for arange) unless the caller gives one."""
    def create(*args, **kwargs):
        if kwargs.get(meta) is None:
            kwargs[meta] = _meta()
        return _numpy_backend(function, *args, **kwargs)
    create.__name__ = create.__qualname__ = function
    create.__doc__ = f"da.{function} with gpuarr chunks."
    return staticmethod(create)


class PhiloxSeed(np.random.SeedSequence):
    """The bit generator of dask's `da.random.default_rng` on the gpuarr backend: a numpy
    SeedSequence that dask spawns one child of per chunk; `gpuarr.random.default_rng(child)`
    draws the chunk from that child's Philox stream, on the worker's device."""

    def __init__(self, entropy=None, **kwargs):
        if isinstance(entropy, np.random.SeedSequence):
            kwargs = {"spawn_key": entropy.spawn_key, "pool_size": entropy.pool_size,
                      "n_children_spawned": entropy.n_children_spawned}
            entropy = entropy.entropy
        super().__init__(entropy, **kwargs)

    _seed_seq = property(lambda self: self, doc="dask's name for the seed sequence")


class GpuarrBackendEntrypoint(ArrayBackendEntrypoint):
    """dask.array's backend `gpuarr`: with `dask.config.set({"array.backend": "gpuarr"})`,
    da.ones / zeros / empty / full / arange and da.random make gpuarr chunks (on each
    worker's default device); `x.to_backend("gpuarr")` moves chunks to the device."""

    def __init__(self):
        register()

    @classmethod
    def to_backend_dispatch(cls):
        """The per-chunk conversion: `to_gpuarr_dispatch`."""
        return to_gpuarr_dispatch

    @classmethod
    def to_backend(cls, data, **kwargs):
        """`data` (a dask Array) with gpuarr chunks; keywords go to `gpuarr.asarray` per
        chunk (context= moves them to that context)."""
        if isinstance(data._meta, GpuArray) and not kwargs:
            return data
        return data.map_blocks(cls.to_backend_dispatch(), **kwargs)

    @property
    def RandomState(self):
        """The per-chunk RandomState of `da.random.RandomState` and `da.random.random`."""
        return RandomState

    @property
    def default_bit_generator(self):
        """The bit generator of `da.random.default_rng`: `PhiloxSeed`."""
        return PhiloxSeed

    ones = _creation("ones")
    zeros = _creation("zeros")
    empty = _creation("empty")
    full = _creation("full")
    arange = _creation("arange", "like")
