"""gpuarr: numpy-style arrays on any OpenCL device.

    import gpuarr as ga
    x = ga.asarray(np.arange(10.0), context='dev0')
"""

from . import blas, collectives, config, errors, linalg, protocols, random  # noqa: F401 (protocols)
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
from .array_api import FUNCTIONS as _ARRAY_API
from .array_api import __array_namespace_info__
from .blas import FUNCTIONS as _PRODUCTS
from .context import Context, DeviceInfo, contexts, get_context, init, list_devices
from .contraction import einsum
from .elemwise import ElemwiseKernel
from .fusion import fuse
from .indexing import FUNCTIONS as _INDEXING
from .manipulation import FUNCTIONS as _MANIPULATION
from .reduction import FUNCTIONS as _REDUCTIONS
from .sorting import argpartition, argsort, partition, searchsorted, sort, unique
from .ufuncs import ALIASES, UFUNCS, Ufunc, around, fix, imag, nan_to_num, real, round, where

globals().update(UFUNCS)
globals().update(_REDUCTIONS)
globals().update(_PRODUCTS)
globals().update(_INDEXING)
globals().update(_MANIPULATION)
globals().update({alias: UFUNCS[name] for alias, name in ALIASES.items()})
globals().update(_ARRAY_API)  # the Array API's names; sort/argsort/clip/eye/linspace too

__version__ = "0.1.0"
__array_api_version__ = "2023.12"  # gpuarr is the namespace (docs/array_api.md)

__all__ = [
    "Context", "DeviceInfo", "GpuArray", "arange", "array", "asarray", "ascontiguousarray",
    "blas", "broadcast_to", "collectives", "config", "contexts", "empty", "empty_like", "errors",
    "expand_dims", "full", "full_like", "get_context", "init", "list_devices", "ones",
    "ones_like", "ravel", "reshape", "squeeze", "swapaxes", "transpose", "zeros", "zeros_like",
    "Ufunc", "around", "fix", "imag", "nan_to_num", "real", "round", "where", "ElemwiseKernel",
    "fuse", "einsum", "random",
    "argpartition", "argsort", "partition", "searchsorted", "sort", "unique",
    *UFUNCS, *ALIASES, *_REDUCTIONS, *_PRODUCTS, *_INDEXING, *_MANIPULATION,
    "linalg", "__array_namespace_info__", *_ARRAY_API,
]
