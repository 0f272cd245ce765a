"""Optional CLBlast backend for GEMM: libclblast (Debian: libclblast1) called through ctypes
with pyopencl's queue and buffer handles. Looked for once, on first use; gpuarr's own kernels
never need it (flag blas_backend picks, blas.py dispatches).

`gemm_into` maps each operand's strides onto CLBlast's (layout, transpose, leading dimension,
offset) and returns None, enqueuing nothing, where CLBlast cannot express the call.
"""

import ctypes
import ctypes.util
import functools

import numpy as np
import pyopencl as cl

from .errors import GpuArrayError, KernelBuildError, OutOfMemory, UnsupportedError
from .launch import record, waits

__all__ = ["STATUS", "available", "gemm_into", "library"]

_ROW_MAJOR, _COL_MAJOR = 101, 102  # CLBlastLayout
_NO_TRANS, _TRANS = 111, 112  # CLBlastTranspose

# dtype -> (routine for one matrix, routine for strided batches, C type of alpha and beta);
# cl_half scalars travel as their 16 bits.
_ROUTINES = {
    np.dtype(np.float16): ("Hgemm", "HgemmStridedBatched", ctypes.c_uint16),
    np.dtype(np.float32): ("Sgemm", "SgemmStridedBatched", ctypes.c_float),
    np.dtype(np.float64): ("Dgemm", "DgemmStridedBatched", ctypes.c_double),
}

# CLBlastStatusCode (clblast_c.h): value -> (name, meaning).
STATUS = {
    -3: ("OpenCLCompilerNotAvailable", "the device has no OpenCL compiler"),
    -4: ("TempBufferAllocFailure", "a temporary buffer could not be allocated"),
    -5: ("OpenCLOutOfResources", "the device ran out of resources"),
    -6: ("OpenCLOutOfHostMemory", "the host ran out of memory"),
    -11: ("OpenCLBuildProgramFailure", "a CLBlast kernel failed to compile"),
    -30: ("InvalidValue", "an invalid value"),
    -36: ("InvalidCommandQueue", "the command queue is not valid"),
    -38: ("InvalidMemObject", "a buffer is not a valid OpenCL memory object"),
    -42: ("InvalidBinary", "an invalid program binary"),
    -43: ("InvalidBuildOptions", "invalid build options"),
    -44: ("InvalidProgram", "an invalid program"),
    -45: ("InvalidProgramExecutable", "the program has no executable for the device"),
    -46: ("InvalidKernelName", "no kernel of that name"),
    -47: ("InvalidKernelDefinition", "an invalid kernel definition"),
    -48: ("InvalidKernel", "an invalid kernel"),
    -49: ("InvalidArgIndex", "a kernel argument index out of range"),
    -50: ("InvalidArgValue", "an invalid kernel argument value"),
    -51: ("InvalidArgSize", "an invalid kernel argument size"),
    -52: ("InvalidKernelArgs", "kernel arguments not all set"),
    -53: ("InvalidLocalNumDimensions", "too many work-item dimensions"),
    -54: ("InvalidLocalThreadsTotal", "work-group too large for the device"),
    -55: ("InvalidLocalThreadsDim", "work-group too large in one dimension"),
    -56: ("InvalidGlobalOffset", "an invalid global offset"),
    -57: ("InvalidEventWaitList", "an invalid event wait list"),
    -58: ("InvalidEvent", "an invalid event"),
    -59: ("InvalidOperation", "an invalid operation"),
    -61: ("InvalidBufferSize", "an invalid buffer size"),
    -63: ("InvalidGlobalWorkSize", "an invalid global work size"),
    -1024: ("NotImplemented", "not implemented in CLBlast"),
    -1022: ("InvalidMatrixA", "A is not a valid OpenCL buffer"),
    -1021: ("InvalidMatrixB", "B is not a valid OpenCL buffer"),
    -1020: ("InvalidMatrixC", "C is not a valid OpenCL buffer"),
    -1017: ("InvalidDimension", "M, N and K must be positive"),
    -1016: ("InvalidLeadDimA", "A's leading dimension is below its row length"),
    -1015: ("InvalidLeadDimB", "B's leading dimension is below its row length"),
    -1014: ("InvalidLeadDimC", "C's leading dimension is below its row length"),
    -1011: ("InsufficientMemoryA", "A's buffer is too small"),
    -1010: ("InsufficientMemoryB", "B's buffer is too small"),
    -1009: ("InsufficientMemoryC", "C's buffer is too small"),
    -2050: ("InsufficientMemoryTemp", "the temporary buffer is too small"),
    -2049: ("InvalidBatchCount", "the batch count must be positive"),
    -2048: ("InvalidOverrideKernel", "parameters overridden for an invalid kernel"),
    -2047: ("MissingOverrideParameter", "override parameters missing"),
    -2046: ("InvalidLocalMemUsage", "not enough local memory on the device"),
    -2045: ("NoHalfPrecision", "the device has no float16 support"),
    -2044: ("NoDoublePrecision", "the device has no float64 support"),
    -2041: ("DatabaseError", "no tuning database entry for the device"),
    -2040: ("UnknownError", "an unspecified error"),
    -2039: ("UnexpectedError", "an unexpected exception inside CLBlast"),
}
_ERRORS = {-4: OutOfMemory, -5: OutOfMemory, -6: OutOfMemory, -11: KernelBuildError,
           -1024: UnsupportedError, -2045: UnsupportedError, -2044: UnsupportedError}

_INSTALL = ("install CLBlast (Debian/Ubuntu: apt-get install libclblast1) or put "
            "libclblast.so.1 on the library path (LD_LIBRARY_PATH), or set blas_backend=auto")


def _signature(scalar, batched):
    """ctypes argtypes of CLBlast<X>gemm (batched: <X>gemmStridedBatched, which adds a batch
    stride after each leading dimension and the batch count before the queue)."""
    size, ptr = ctypes.c_size_t, ctypes.c_void_p
    matrix = [ptr, size, size] + [size] * batched  # buffer, offset, ld (, batch stride)
    return ([ctypes.c_int] * 3 + [size] * 3 + [scalar] + matrix * 2 + [scalar] + matrix
            + [size] * batched + [ctypes.POINTER(ptr)] * 2)


@functools.cache
def _load():
    """The CLBlast library with its GEMM signatures set, or None where it is absent."""
    for name in filter(None, (ctypes.util.find_library("clblast"), "libclblast.so.1")):
        try:
            lib = ctypes.CDLL(name)
            for plain, batched, scalar in _ROUTINES.values():
                for routine, is_batched in ((plain, False), (batched, True)):
                    fn = getattr(lib, "CLBlast" + routine)
                    fn.argtypes = _signature(scalar, is_batched)
                    fn.restype = ctypes.c_int
            return lib
        except (OSError, AttributeError):  # not loadable, or older than 1.5 (no batches)
            continue
    return None


def available():
    """Whether libclblast (1.5 or newer) can be loaded."""
    return _load() is not None


def library():
    """The loaded library; UnsupportedError saying what to install where it is missing."""
    lib = _load()
    if lib is None:
        raise UnsupportedError(f"blas_backend=clblast but libclblast was not found: {_INSTALL}")
    return lib


def _operand(x, rows, cols, batch):
    """(rows contiguous?, leading dimension, offset, batch stride) in elements, or None:
    CLBlast needs a unit stride along one axis of the matrix and, along the other, a stride at
    least the matrix's extent on the first (the stride of an axis of length 1 is free)."""
    size = x.itemsize
    if x.offset % size or any(s % size for s in x.strides):
        return None
    sb, sr, sc = (s // size for s in x.strides)
    sb = sb if batch > 1 and x.shape[0] > 1 else 0
    if sb < 0:
        return None
    if (cols == 1 or sc == 1) and (rows == 1 or sr >= cols):
        return True, sr if rows > 1 else cols, x.offset // size, sb
    if (rows == 1 or sr == 1) and (cols == 1 or sc >= rows):
        return False, sc if cols > 1 else rows, x.offset // size, sb
    return None


def _has_fp16(ctx):
    return "cl_khr_fp16" in ctx.device.cl_device.extensions


def gemm_into(alpha, a, b, beta, c):
    """c[p] = alpha * a[p] @ b[p] + beta * c[p] through CLBlast, the contract of
    blas.gemm_into (m, n, k > 0). Enqueues and returns c, or returns None where CLBlast cannot
    take the dtype or layout."""
    lib = library()
    ctx, dt = c.context, c.dtype
    if dt not in _ROUTINES or (dt == np.float16 and not _has_fp16(ctx)):
        return None
    batch, m, n = c.shape
    k = a.shape[2]
    ops = [_operand(x, r, s, batch) for x, r, s in ((a, m, k), (b, k, n), (c, m, n))]
    if None in ops or (batch > 1 and ops[2][3] == 0):
        return None
    row_major = ops[2][0]  # C's layout is the call's layout; A and B transpose to fit it
    args = [_ROW_MAJOR if row_major else _COL_MAJOR,
            _NO_TRANS if ops[0][0] == row_major else _TRANS,
            _NO_TRANS if ops[1][0] == row_major else _TRANS, m, n, k]
    plain, batched, scalar = _ROUTINES[dt]
    routine = batched if batch > 1 else plain
    if dt == np.float16:
        alpha, beta = (int(np.float16(s).view(np.uint16)) for s in (alpha, beta))
    for x, (_, ld, offset, stride), s in zip((a, b, c), ops, (alpha, None, beta)):
        args += ([] if s is None else [scalar(s)]) + [x.storage.buffer.int_ptr, offset, ld]
        args += [stride] if batch > 1 else []
    args += [batch] if batch > 1 else []
    queue = ctx.queue
    reads, writes = (a.storage, b.storage), (c.storage,)
    wait_for = waits(queue, reads, writes)
    handle, event = ctypes.c_void_p(queue.int_ptr), ctypes.c_void_p()
    with ctx.launch_lock:
        if wait_for:  # CLBlast takes no wait list: the in-order queue waits here instead
            cl.enqueue_barrier(queue, wait_for=wait_for)
        status = getattr(lib, "CLBlast" + routine)(*args, ctypes.byref(handle),
                                                    ctypes.byref(event))
    if status:
        name, meaning = STATUS.get(status, ("Unknown", "a status code gpuarr does not know"))
        raise _ERRORS.get(status, GpuArrayError)(
            f"CLBlast{routine} returned status {status} (CLBlast{name}: {meaning}) for "
            f"{dt} m={m} n={n} k={k} batch={batch}, a {a.shape} strides {a.strides}, "
            f"b {b.shape} strides {b.strides}, c {c.shape} strides {c.strides}")
    # CLBlast hands over its last kernel's event: ours to release, so no extra retain.
    done = (cl.Event.from_int_ptr(event.value, retain=False) if event.value
            else cl.enqueue_marker(queue))
    record(done, queue, reads, writes)
    return c
