"""gpuarr: numpy-style arrays on any OpenCL device.

    import gpuarr as ga
    x = ga.asarray(np.arange(10.0), context='dev0')
"""

from . import blas, config, errors
from .array import (
    GpuArray,
    arange,
    array,
    asarray,
    ascontiguousarray,
    broadcast_to,
    empty,
    empty_like,
    expand_dims,
    full,
    full_like,
    ones,
    ones_like,
    ravel,
    reshape,
    squeeze,
    swapaxes,
    transpose,
    zeros,
    zeros_like,
)
from .blas import FUNCTIONS as _PRODUCTS
from .context import Context, DeviceInfo, contexts, get_context, init, list_devices
from .contraction import einsum
from .elemwise import ElemwiseKernel
from .fusion import fuse
from .reduction import FUNCTIONS as _REDUCTIONS
from .ufuncs import ALIASES, UFUNCS, Ufunc, around, fix, imag, nan_to_num, real, round, where

globals().update(UFUNCS)
globals().update(_REDUCTIONS)
globals().update(_PRODUCTS)
globals().update({alias: UFUNCS[name] for alias, name in ALIASES.items()})

__version__ = "0.1.0"

__all__ = [
    "Context", "DeviceInfo", "GpuArray", "arange", "array", "asarray", "ascontiguousarray",
    "blas", "broadcast_to", "config", "contexts", "empty", "empty_like", "errors",
    "expand_dims", "full", "full_like", "get_context", "init", "list_devices", "ones",
    "ones_like", "ravel", "reshape", "squeeze", "swapaxes", "transpose", "zeros", "zeros_like",
    "Ufunc", "around", "fix", "imag", "nan_to_num", "real", "round", "where", "ElemwiseKernel",
    "fuse", "einsum",
    *UFUNCS, *ALIASES, *_REDUCTIONS, *_PRODUCTS,
]
