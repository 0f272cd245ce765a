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
from . import nnet, random, tensor
from .basic import (
    AdvancedIncSubtensor,
    AdvancedSubtensor,
    Alloc,
    ARange,
    BroadcastLike,
    DeepCopyOp,
    DimShuffle,
    GpuAdvancedIncSubtensor,
    GpuAdvancedSubtensor,
    GpuAlloc,
    GpuARange,
    GpuBroadcastLike,
    GpuDeepCopyOp,
    GpuDimShuffle,
    GpuIncSubtensor,
    GpuJoin,
    GpuReshape,
    GpuSubtensor,
    IncSubtensor,
    Join,
    MakeVector,
    Reshape,
    Shape,
    Shape_i,
    Size,
    Subtensor,
    alloc,
    arange,
    concatenate,
    dimshuffle,
    fill,
    flatten,
    inc_subtensor,
    join,
    ones,
    ones_like,
    reshape,
    set_subtensor,
    shape,
    stack,
    transpose,
    zeros,
    zeros_like,
)
from .blas import (
    Dot,
    Dot22,
    Gemv,
    GpuDot,
    GpuDot22,
    GpuGemv,
    GpuMatMul,
    GpuTensorDot,
    MatMul,
    TensorDot,
    batched_dot,
    dot,
    matmul,
    tensordot,
)
from .elemwise import FUNCTIONS as _ELEMWISE
from .elemwise import Elemwise, GpuElemwise, cast, sigmoid, softplus
from .fgraph import FunctionGraph
from .function import Function, In, function
from .grad import grad
from .gradient import Lop, Rop, hessian, jacobian, verify_grad
from .graph import Apply, Constant, Op, TensorType, Variable, as_variable
from .ifelse import GpuIfElse, IfElse, ifelse
from .mode import DebugMode, DebugModeError, Mode
from .printing import GpuPrint, Print, debugprint, pp
from .profiling import print_all as print_profiles
from .reductions import FUNCTIONS_R as _REDUCTIONS
from .reductions import CAReduce, GpuCAReduce
from .scan import GpuScan, Scan, scan
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

shared_randomstreams = random  # Theano's T.shared_randomstreams.RandomStreams


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
    "ARange", "AdvancedIncSubtensor", "AdvancedSubtensor", "Alloc", "GpuARange",
    "GpuAdvancedIncSubtensor", "GpuAdvancedSubtensor", "GpuAlloc", "GpuJoin", "GpuMatMul",
    "GpuPrint", "GpuTensorDot", "Join", "MakeVector", "MatMul", "Print", "Shape", "Shape_i",
    "TensorDot", "alloc", "arange", "batched_dot", "concatenate", "join", "nnet", "ones", "pp",
    "random", "shape", "shared_randomstreams", "stack", "tensordot", "zeros",
    "GpuIfElse", "GpuScan", "IfElse", "Lop", "Rop", "Scan", "hessian", "ifelse", "jacobian",
    "scan", "verify_grad",
    "DebugMode", "DebugModeError", "In", "Mode",
]
