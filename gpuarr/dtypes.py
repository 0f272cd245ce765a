"""numpy dtype <-> OpenCL C types, the dtype defaults, and device capability checks."""

import numpy as np

from . import config
from .errors import UnsupportedError

__all__ = [
    "SUPPORTED", "check_device", "cl_type", "compute_type", "default_for", "float_x",
    "from_cl_type", "needs_fp64", "normalize",
]

# Storage type in OpenCL C, and the type computations use (float16 computes in float).
_CL_TYPES = {
    np.dtype(np.bool_): ("uchar", "uchar"),
    np.dtype(np.int8): ("char", "char"),
    np.dtype(np.uint8): ("uchar", "uchar"),
    np.dtype(np.int16): ("short", "short"),
    np.dtype(np.uint16): ("ushort", "ushort"),
    np.dtype(np.int32): ("int", "int"),
    np.dtype(np.uint32): ("uint", "uint"),
    np.dtype(np.int64): ("long", "long"),
    np.dtype(np.uint64): ("ulong", "ulong"),
    np.dtype(np.float16): ("half", "float"),
    np.dtype(np.float32): ("float", "float"),
    np.dtype(np.float64): ("double", "double"),
    np.dtype(np.complex64): ("float2", "float2"),
    np.dtype(np.complex128): ("double2", "double2"),
}

SUPPORTED = tuple(_CL_TYPES)
_FP64 = (np.dtype(np.float64), np.dtype(np.complex128))


def normalize(dtype):
    """`np.dtype(dtype)` in native byte order, or UnsupportedError for what no device holds."""
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise UnsupportedError(f"not a dtype: {dtype!r} ({e})") from None
    if dt.byteorder == ">":
        dt = dt.newbyteorder("=")
    if dt not in _CL_TYPES:
        names = ", ".join(d.name for d in SUPPORTED)
        raise UnsupportedError(f"dtype {dt} is not supported on OpenCL devices; supported: {names}")
    return dt


def cl_type(dtype):
    """The OpenCL C storage type of `dtype` (float16 -> half, complex64 -> float2)."""
    return _CL_TYPES[normalize(dtype)][0]


def compute_type(dtype):
    """The OpenCL C type arithmetic on `dtype` uses (float16 -> float)."""
    return _CL_TYPES[normalize(dtype)][1]


_FROM_CL = {cl: dt for dt, (cl, _) in _CL_TYPES.items() if dt != np.bool_}
_FROM_CL.update({"signed char": np.dtype(np.int8), "unsigned char": np.dtype(np.uint8),
                 "unsigned short": np.dtype(np.uint16), "unsigned int": np.dtype(np.uint32),
                 "unsigned long": np.dtype(np.uint64)})


def from_cl_type(name):
    """The numpy dtype of an OpenCL C type name ('float' -> float32, 'uchar' -> uint8)."""
    dt = _FROM_CL.get(" ".join(name.split()))
    if dt is None:
        raise UnsupportedError(f"unknown OpenCL C type {name!r}; known: {', '.join(_FROM_CL)}")
    return dt


def needs_fp64(dtype):
    return normalize(dtype) in _FP64


def check_device(dtype, context):
    """Raise UnsupportedError if `context`'s device cannot hold `dtype`."""
    dt = normalize(dtype)
    if dt in _FP64 and not context.fp64:
        raise UnsupportedError(
            f"device {context.devname} ({context.device.device_name}) has no {dt} support "
            f"(no cl_khr_fp64); use {'float32' if dt.kind == 'f' else 'complex64'} or pick "
            f"another device"
        )
    return dt


def float_x(context=None):
    """The default float dtype (flag floatX) on `context`'s device; with flag floatX=auto
    (the default) float64 where it has fp64, else float32. None: the host's (float64 under
    auto)."""
    return np.dtype(config.float_x(context is None or context.fp64))


def default_for(value, dtype=None, context=None):
    """The dtype numpy would give `np.asarray(value)`, with floatX for Python floats.

    numpy arrays keep their dtype; Python floats (and lists of them) that numpy would
    make float64 take floatX (of `context`'s device: `float_x`), as Theano did.
    """
    if dtype is not None:
        return normalize(dtype)
    if isinstance(value, np.ndarray | np.generic):
        return normalize(value.dtype)
    dt = np.asarray(value).dtype
    if dt == np.float64:
        return float_x(context)
    return normalize(dt)
