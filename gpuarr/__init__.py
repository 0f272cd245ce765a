"""gpuarr: numpy-style arrays on any OpenCL device.

    import gpuarr as ga
    x = ga.asarray(np.arange(10.0), context='dev0')

The namespace: the names imported below, and the table-driven families (ufuncs and their
aliases, reductions, products, indexing, manipulation, the Array API's additions) from one
merged table, TABLE, reached through the module's `__getattr__` (PEP 562). docs/architecture.md
shows the layers below this module.
"""

import importlib as _importlib
import sys as _sys

from . import blas, collectives, config, errors, fft, linalg, random
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
from .array_api import api_version as _array_api_version
from .blas import FUNCTIONS as _PRODUCTS
from .context import Context, DeviceInfo, contexts, get_context, init, list_devices
from .contraction import einsum
from .editing import FUNCTIONS as _EDITING
from .elemwise import ElemwiseKernel
from .fusion import fuse
from .indexing import FUNCTIONS as _INDEXING
from .indextricks import FUNCTIONS as _INDEX_TRICKS
from .inquiry import FUNCTIONS as _INQUIRY
from .interop import FUNCTIONS as _INTEROP
from .lazy import table_attributes as _table_attributes
from .manipulation import FUNCTIONS as _MANIPULATION
from .numerical import FUNCTIONS as _NUMERICAL
from .polynomials import FUNCTIONS as _POLYNOMIALS
from .reduction import FUNCTIONS as _REDUCTIONS
from .setops import FUNCTIONS as _SETOPS
from .sorting import argpartition, partition, searchsorted, unique
from .statistics import FUNCTIONS as _STATISTICS
from .ufuncs import ALIASES, UFUNCS, Ufunc, around, fix, imag, nan_to_num, real, round, where

# The table-driven families in one table; a later family wins a shared name (the Array API's
# sort, argsort, clip, eye and linspace; interop's from_dlpack). A name imported above must
# not be in it.
TABLE = {
    **UFUNCS,
    **_REDUCTIONS,
    **_PRODUCTS,
    **_INDEXING,
    **_MANIPULATION,
    **_NUMERICAL,
    **_POLYNOMIALS,
    **_STATISTICS,
    **_SETOPS,
    **_EDITING,
    **_INDEX_TRICKS,
    **_INQUIRY,
    **{alias: UFUNCS[name] for alias, name in ALIASES.items()},
    **_ARRAY_API,
    **_INTEROP,
}


# `gpuarr.exp` and the other names of TABLE, kept as module attributes once looked up
__getattr__, __dir__ = _table_attributes(globals(), TABLE)


__version__ = "0.1.0"
__array_api_version__ = _array_api_version()  # flag array_api_version; docs/array_api.md

__all__ = [
    "Context", "DeviceInfo", "GpuArray", "arange", "array", "asarray", "ascontiguousarray",
    "blas", "broadcast_to", "collectives", "config", "contexts", "empty", "empty_like", "errors",
    "expand_dims", "full", "full_like", "get_context", "init", "list_devices", "ones",
    "ones_like", "ravel", "reshape", "squeeze", "swapaxes", "transpose", "zeros", "zeros_like",
    "Ufunc", "around", "fix", "imag", "nan_to_num", "real", "round", "where", "ElemwiseKernel",
    "fuse", "einsum", "random", "argpartition", "partition", "searchsorted", "unique",
    "linalg", "fft", "__array_namespace_info__", *TABLE,
]


# dask and dask.distributed reach gpuarr.dask_backend by this package's name, as they reach
# their CuPy support by 'cupy': `register` waits under the key 'gpuarr' in their lazy dispatch
# tables and runs when they first meet a GpuArray. gpuarr never imports dask: the tables get
# the key when their modules load (now, for those loaded already). docs/dask.md.
_DASK_TABLES = ("dask.sizeof", "dask.tokenize", "dask.array.dispatch",
                "distributed.protocol.serialize")


def _dask_register():
    _importlib.import_module("gpuarr.dask_backend").register()


def _dask_keys(module):
    for table in list(vars(module).values()):
        if type(table).__name__ == "Dispatch" and hasattr(table, "register_lazy"):
            table.register_lazy("gpuarr", _dask_register)


class _DaskTables:
    """An import finder that keys gpuarr in each of _DASK_TABLES right after it runs."""

    def find_spec(self, name, path, target=None):
        if name not in _DASK_TABLES:
            return None
        for finder in _sys.meta_path:
            find = getattr(finder, "find_spec", None) if finder is not self else None
            spec = find(name, path, target) if find else None
            if spec is not None:
                run = getattr(spec.loader, "exec_module", None)
                if run is not None:
                    def exec_module(module, loader=spec.loader, run=run):
                        loader.exec_module = run  # once: a loader may serve other modules
                        run(module)
                        _dask_keys(module)
                    spec.loader.exec_module = exec_module
                return spec
        return None


for _name in _DASK_TABLES:
    if _name in _sys.modules:
        _dask_keys(_sys.modules[_name])
if not any(type(f).__name__ == "_DaskTables" for f in _sys.meta_path):
    _sys.meta_path.insert(0, _DaskTables())
