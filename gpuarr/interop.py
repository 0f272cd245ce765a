"""Interchange with the host and other libraries: numpy's file formats, memory overlap,
DLPack import.

`save`, `savez`, `savez_compressed` and `savetxt` write numpy's formats (.npy, .npz, text)
from a host copy of each array; `load` and `loadtxt` read them with numpy and copy the
arrays to a device. Files hold no device or context: what `load` reads goes to the context
it is given (the default one when none). Through numpy's `__array_function__`,
`np.save(path, x)`, `np.savez(path, x=x)` and `np.savetxt(path, x)` on GpuArrays land here.

`may_share_memory` and `shares_memory` answer for gpuarr's own buffers with numpy's
algorithm (bounds, or the exact overlap of the strided element sets within `max_work`); a
GpuArray and a numpy array never share memory.
"""

from collections.abc import Mapping

import numpy as np

from .base import ArrayBase, device_context, to_device
from .context import get_context
from .dlpack import from_dlpack
from .dtypes import float_x

__all__ = ["FUNCTIONS", "NpzFile", "load", "loadtxt", "may_share_memory", "save", "savetxt",
           "savez", "savez_compressed", "shares_memory"]


def _host(a):
    return a.get() if isinstance(a, ArrayBase) else a


def _device(value, ctx):
    """numpy arrays (also in tuples, as loadtxt(unpack=True) gives) copied to `ctx`."""
    if isinstance(value, np.ndarray):
        return to_device(value, ctx)
    if isinstance(value, tuple):
        return tuple(_device(v, ctx) for v in value)
    return value


def save(file, arr, allow_pickle=True, **kwargs):
    """numpy.save of `arr` (a GpuArray, or anything numpy takes) to a .npy file, from a host
    copy; `np.save(file, x)` comes here. Other arguments go to numpy.save.

    Examples
    --------
    >>> import io
    >>> f = io.BytesIO()
    >>> ga.save(f, ga.asarray(np.arange(3.0)))
    >>> _ = f.seek(0)
    >>> ga.load(f).get()
    array([0., 1., 2.])
    """
    np.save(file, _host(arr), allow_pickle=allow_pickle, **kwargs)


def savez(file, *args, allow_pickle=True, **kwds):
    """numpy.savez: several arrays (GpuArrays as host copies) into one uncompressed .npz
    file, positional ones as arr_0, arr_1, ..., keyword ones under their names."""
    np.savez(file, *map(_host, args), allow_pickle=allow_pickle,
             **{k: _host(v) for k, v in kwds.items()})


def savez_compressed(file, *args, allow_pickle=True, **kwds):
    """numpy.savez_compressed: as `savez`, into a compressed .npz file."""
    np.savez_compressed(file, *map(_host, args), allow_pickle=allow_pickle,
                        **{k: _host(v) for k, v in kwds.items()})


def savetxt(fname, X, *args, **kwargs):
    """numpy.savetxt of a host copy of `X` (1-d or 2-d) to a text file; numpy's arguments
    (fmt, delimiter, header, ...) pass through."""
    np.savetxt(fname, _host(X), *args, **kwargs)


class NpzFile(Mapping):
    """What `load` gives for a .npz file: numpy's NpzFile, each array copied to the device
    when looked up (`npz["x"]`). Close it, or use it in a `with` block, as numpy's."""

    def __init__(self, npz, context):
        self.npz = npz
        self.context = context

    files = property(lambda self: self.npz.files, doc="the names of the arrays in the file")

    def __getitem__(self, key):
        return to_device(self.npz[key], self.context)

    def __iter__(self):
        return iter(self.npz)

    def __len__(self):
        return len(self.npz)

    def close(self):
        """Close the file."""
        self.npz.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def load(file, *args, context=None, device=None, **kwargs):
    """numpy.load, the arrays copied to `context` (or `device`; the default context when
    both are None): a GpuArray for a .npy file, an `NpzFile` for a .npz file (arrays copied
    when looked up), what was pickled otherwise. numpy's arguments pass through
    (allow_pickle is False unless given, as numpy's)."""
    ctx = get_context(device_context(context, device))
    got = np.load(file, *args, **kwargs)
    if isinstance(got, np.lib.npyio.NpzFile):
        return NpzFile(got, ctx)
    return _device(got, ctx)


def loadtxt(fname, dtype=float, *args, context=None, device=None, **kwargs):
    """numpy.loadtxt, the result copied to `context` (or `device`; the default context
    when both are None); dtype `float` (the default) is floatX there. numpy's arguments
    (delimiter, skiprows, usecols, unpack, ...) pass through."""
    ctx = get_context(device_context(context, device))
    if dtype is float:
        dtype = float_x(ctx)
    kwargs.pop("like", None)  # (np.loadtxt(..., like=x) arrives with device=x's context)
    return _device(np.loadtxt(fname, dtype, *args, **kwargs), ctx)


class _Layout:
    """An array interface at a made-up address: numpy's overlap algorithms read only the
    addresses of an array's elements, never its memory."""

    # Where storage byte 0 is made to sit; any address works, nothing is read there.
    BASE = 1 << 40

    def __init__(self, a):
        self.__array_interface__ = {"data": (self.BASE + a.offset, True), "shape": a.shape,
                                    "strides": a.strides, "typestr": a.dtype.str,
                                    "version": 3}


def _overlap(numpy_test, a, b, max_work):
    if not isinstance(a, ArrayBase) and not isinstance(b, ArrayBase):
        return numpy_test(a, b, max_work)
    if not (isinstance(a, ArrayBase) and isinstance(b, ArrayBase)):
        return False  # a GpuArray's memory is the device's, never a numpy array's
    if a.storage is not b.storage:  # (one Storage per allocation: views share it)
        return False
    return numpy_test(np.asarray(_Layout(a)), np.asarray(_Layout(b)), max_work)


def may_share_memory(a, b, /, max_work=None):
    """Whether `a` and `b` might share memory, as numpy.may_share_memory: by default, whether
    they are views of one buffer whose byte ranges overlap; with `max_work`, numpy's exact
    test within that work (numpy.exceptions.TooHardError past it). False for a GpuArray and
    a numpy array.

    Examples
    --------
    >>> x = ga.asarray(np.arange(10))
    >>> ga.may_share_memory(x[:5], x[4:]), ga.may_share_memory(x[::2], x[1::2])
    (True, True)
    >>> ga.shares_memory(x[::2], x[1::2])
    False
    """
    return _overlap(np.may_share_memory, a, b, max_work)


def shares_memory(a, b, /, max_work=None):
    """Whether `a` and `b` share an element's memory, as numpy.shares_memory: the exact
    overlap of their strided element sets in one buffer (numpy's algorithm; `max_work`
    bounds its work as numpy's does, TooHardError past it). False for a GpuArray and a
    numpy array."""
    return _overlap(np.shares_memory, a, b, max_work)


FUNCTIONS = {f.__name__: f for f in (
    save, savez, savez_compressed, savetxt, load, loadtxt, may_share_memory, shares_memory,
    from_dlpack)}
