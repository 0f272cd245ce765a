"""GpuArray: an n-d array in one context's device memory, with numpy's layout rules.

The class is declared here, in one statement, above the engines: the record and what needs
no engine (gpuarr/base.py's ArrayBase: storage, shape, strides, offset, dtype; views, basic
indexing, reshape, transpose, host transfers, copies, casts, fill, the Python protocol) and,
as mixins named in its bases, each concern's methods from the module of that concern.
Nothing is attached to it at import. The engines below make new arrays through gpuarr/base.py's
factory, which builds this class (`concrete=True`); docs/architecture.md shows the layers.

The creation functions (empty, zeros, asarray, ...) live in gpuarr/base.py; this module
re-exports them so that `from gpuarr.array import asarray` keeps working.
"""

from .array_api import ArrayApiMethods
from .base import (
    ArrayBase,
    Flags,
    arange,
    array,
    asarray,
    ascontiguousarray,
    broadcast_to,
    check_same_context,
    device_context,
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
    to_device,
    transpose,
    zeros,
    zeros_like,
)
from .blas import ProductMethods
from .dlpack import DlpackMethods
from .indexing import IndexingMethods
from .manipulation import ManipulationMethods
from .protocols import ArrayFunctionProtocol
from .reduction import ReductionMethods
from .sorting import SortingMethods
from .ufuncs import UfuncOperators

__all__ = [
    "ArrayBase", "Flags", "GpuArray", "arange", "array", "asarray", "ascontiguousarray",
    "broadcast_to", "check_same_context", "device_context", "empty", "empty_like",
    "expand_dims", "full", "full_like", "ones", "ones_like", "ravel", "reshape", "squeeze",
    "swapaxes", "to_device", "transpose", "zeros", "zeros_like",
]


class GpuArray(DlpackMethods, ArrayApiMethods, ArrayFunctionProtocol, IndexingMethods,
               ReductionMethods, SortingMethods, ProductMethods, ManipulationMethods,
               UfuncOperators, ArrayBase, concrete=True):
    """An n-d array on an OpenCL device. Create one with `empty`, `asarray`, `zeros`, ...

    It has numpy's layout (shape, strides in bytes, offset, dtype; views share storage)
    and belongs to one context (`x.context`, also `x.device`). Operations enqueue on that
    context's queue and return at once; `get()`, `np.asarray(x)`, `print(x)` and
    `float(x)` wait for the data, `sync()` waits without copying.

    Parameters
    ----------
    shape : int or tuple of int
        The shape of a new, uninitialised array (as `empty`).
    dtype : dtype, optional
        Default: the flag floatX (float64, or float32 on a device without fp64, unless
        set).
    order : {'C', 'F'}
        Memory layout.
    context : str, Context or None
        A context name, a Context, or None for the default context.

    Examples
    --------
    >>> x = ga.asarray(np.arange(6.0).reshape(2, 3))
    >>> x.shape, x.dtype, x.strides
    ((2, 3), dtype('float64'), (24, 8))
    >>> x.T.flags.f_contiguous                      # a view
    True
    >>> (x + 1).get()
    array([[1., 2., 3.],
           [4., 5., 6.]])

    Notes
    -----
    Where its methods come from (earlier bases win where two define a name):

    - DlpackMethods (dlpack.py): __dlpack__, __dlpack_device__ (over ArrayApiMethods')
    - ArrayApiMethods (array_api.py): device, to_device, mT, __array_namespace__,
      and in-place operators that never change x's dtype (over
      UfuncOperators' numpy-style ones), x @= y
    - ArrayFunctionProtocol (protocols.py): __array_function__, and __array_ufunc__ (over
      UfuncOperators': adds np.matmul, np.vecdot, UnsupportedError for what gpuarr lacks)
    - IndexingMethods (indexing.py): x[key] and x[key] = v with integer and boolean arrays
      (over ArrayBase's basic indexing), take, put, nonzero, compress
    - ReductionMethods (reduction.py): sum, prod, max, min, argmax, argmin, any, all, mean,
      var, std, ptp, cumsum, cumprod
    - SortingMethods (sorting.py): sort, partition (in place), argsort, argpartition,
      searchsorted
    - ProductMethods (blas.py): @, dot
    - ManipulationMethods (manipulation.py): repeat, diagonal, trace
    - UfuncOperators (ufuncs.py): + - * / // % ** & | ^ << >> (reflected, in place),
      unary - + abs ~, comparisons: the table's ufuncs
    - ArrayBase (base.py): the record and its layout (shape, strides, offset, dtype, flags,
      T, ...), views and basic indexing, reshape, transpose, swapaxes, squeeze, ravel,
      flatten, view, get, set, transfer, sync, copy, astype, fill, len, iter, bool, int,
      float, complex, index, repr, format, item, tolist, flat, pickling, copy.copy and
      copy.deepcopy
    """

    __hash__ = None  # mutable, and == is elementwise
