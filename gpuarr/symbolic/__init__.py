"""gpuarr.symbolic: a thin Theano-style layer over gpuarr.

    import gpuarr.symbolic as T
    x = T.matrix("x"); w = T.shared(np.zeros(5, "float32"), name="w")
    f = T.function([x], T.sigmoid(T.dot(x, w)), updates=[(w, w + 1)])

Build graphs with variables, shared variables and ops; `function` compiles them: ops run
on the context their data lives on (flags device and contexts), transfers are inserted and
removed, elementwise chains become one kernel, and `grad` differentiates. See
docs/symbolic.md.

The namespace: the names imported below, and the table-driven families (elementwise ops,
reductions, variable constructors) from one merged table, TABLE, reached through the
module's `__getattr__` (PEP 562).
"""

from .. import config
from ..lazy import table_attributes as _table_attributes
from .basic import (
    BroadcastLike,
    DeepCopyOp,
    DimShuffle,
    GpuBroadcastLike,
    GpuDeepCopyOp,
    GpuDimShuffle,
    GpuIncSubtensor,
    GpuReshape,
    GpuSubtensor,
    IncSubtensor,
    Reshape,
    Size,
    Subtensor,
    dimshuffle,
    fill,
    flatten,
    inc_subtensor,
    ones_like,
    reshape,
    set_subtensor,
    transpose,
    zeros_like,
)
from .blas import Dot, Dot22, Gemv, GpuDot, GpuDot22, GpuGemv, dot, matmul
from .elemwise import FUNCTIONS as _ELEMWISE
from .elemwise import Elemwise, GpuElemwise, cast, sigmoid, softplus
from .fgraph import FunctionGraph
from .function import Function, function
from .grad import grad
from .graph import Apply, Constant, Op, TensorType, Variable, as_variable
from .printing import debugprint
from .profiling import print_all as print_profiles
from .reductions import FUNCTIONS_R as _REDUCTIONS
from .reductions import CAReduce, GpuCAReduce
from .shared import SharedVariable, shared
from .transfer import (
    GpuFromHost,
    GpuToGpu,
    HostFromGpu,
    Transfer,
    gpu_from_host,
    host_from_gpu,
    transfer,
)
from .variables import CONSTRUCTORS as _CONSTRUCTORS
from .variables import tensor


def constant(value, name=None, dtype=None):
    """A constant: Python scalars stay weak (x * 2 keeps x's dtype) unless dtype is given."""
    import numpy as np
    if dtype is not None:
        value = np.asarray(value, dtype=dtype)
    return as_variable(value, name=name)


as_tensor_variable = as_variable

TABLE = {**_ELEMWISE, **_REDUCTIONS, **_CONSTRUCTORS}


# T.exp, T.sum, T.matrix, ...: the names of TABLE, kept as module attributes once looked up
__getattr__, __dir__ = _table_attributes(globals(), TABLE)


__all__ = [
    "Apply", "BroadcastLike", "CAReduce", "Constant", "DeepCopyOp", "DimShuffle", "Dot",
    "Dot22", "Elemwise", "Function", "FunctionGraph", "Gemv", "GpuBroadcastLike",
    "GpuCAReduce", "GpuDeepCopyOp", "GpuDimShuffle", "GpuDot", "GpuDot22", "GpuElemwise",
    "GpuFromHost", "GpuGemv", "GpuIncSubtensor", "GpuReshape", "GpuSubtensor", "GpuToGpu",
    "HostFromGpu", "IncSubtensor", "Op", "Reshape", "SharedVariable", "Size", "Subtensor",
    "TensorType", "Transfer", "Variable", "as_tensor_variable", "as_variable", "cast",
    "config", "constant", "debugprint", "dimshuffle", "dot", "fill", "flatten", "function",
    "gpu_from_host", "grad", "host_from_gpu", "inc_subtensor", "matmul", "ones_like",
    "print_profiles", "reshape", "set_subtensor", "shared", "sigmoid", "softplus", "tensor",
    "transfer", "transpose", "zeros_like", *TABLE,
]
