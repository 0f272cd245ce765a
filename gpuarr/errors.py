"""The one exception hierarchy of gpuarr.

Every class derives from `GpuArrayError` and, where one fits, from the builtin that
numpy would raise for the same mistake, so `except ValueError` keeps working.
Messages say what was wrong, quote the values involved and, where it helps, what to do.
"""

import numpy as np

__all__ = [
    "ArgumentError",
    "ArgumentOverflow",
    "ArgumentTypeError",
    "AxisError",
    "BufferExportError",
    "CommError",
    "CommTimeout",
    "ConfigError",
    "ContextMismatch",
    "ContextNotDefined",
    "DebugModeError",
    "DeviceNotFound",
    "DeviceTimeout",
    "DeviceUnusableError",
    "FlagError",
    "ForkedProcessError",
    "GpuArrayError",
    "GradientError",
    "IndexOutOfRange",
    "KernelBuildError",
    "LinAlgError",
    "OutOfMemory",
    "ReadOnlyError",
    "ShapeError",
    "UnsafeDirectoryError",
    "UnsupportedError",
]


class GpuArrayError(Exception):
    """Base of every error gpuarr raises on purpose."""


class FlagError(GpuArrayError, ValueError):
    """A flag in GPUARR_FLAGS or ~/.gpuarrrc is unknown or malformed."""


class ConfigError(FlagError):
    """The configuration cannot be loaded: a flag's value (the message names the flag, the
    value, where it came from: GPUARR_FLAGS, or the rc file and line, and the accepted
    values), or the rc file itself (unreadable, not UTF-8, a misspelt [global] section, or
    named by GPUARRRC and absent)."""


class DeviceNotFound(GpuArrayError, ValueError):
    """A device string names no device present on this machine, or is malformed."""


class DeviceUnusableError(DeviceNotFound, RuntimeError):
    """A device is present but its driver cannot run gpuarr's kernels (its probe failed, see
    gpuarr.probe); the message says why and what to install. A DeviceNotFound too, so that
    code catching absent devices keeps working."""


class ContextNotDefined(GpuArrayError, ValueError):
    """A context name is not defined (neither by `init` nor by the `contexts` flag)."""


class ContextMismatch(GpuArrayError, ValueError):
    """Arrays of two contexts met in one operation."""


class UnsafeDirectoryError(GpuArrayError, PermissionError):
    """A directory gpuarr must write its files to is refused: owned by another user, writable
    by group or others, or impossible to create (gpuarr.config.private_dir)."""


class UnsupportedError(GpuArrayError, TypeError):
    """A dtype or feature the chosen device (or gpuarr) does not support."""


class ShapeError(GpuArrayError, ValueError):
    """Shapes that do not fit: reshape, broadcasting, set()."""


class AxisError(GpuArrayError, IndexError, ValueError):
    """An axis out of range for the array's ndim (numpy's AxisError is both too)."""


class IndexOutOfRange(GpuArrayError, IndexError):
    """An index outside an array's bounds, or an index of a kind not supported."""


class ReadOnlyError(GpuArrayError, ValueError):
    """A write into a read-only or broadcast view."""


class OutOfMemory(GpuArrayError, MemoryError):
    """The device could not allocate the requested bytes."""


class KernelBuildError(GpuArrayError, RuntimeError):
    """An OpenCL program failed to build; the message holds the log and numbered source."""


class ArgumentError(GpuArrayError, ValueError):
    """An argument value outside what the function accepts (order, step, axes...)."""


class ArgumentTypeError(GpuArrayError, TypeError):
    """An argument of a type the function does not accept."""


class ArgumentOverflow(GpuArrayError, OverflowError):
    """An integer argument beyond what numpy converts (a C long), as numpy's OverflowError."""


class CommError(GpuArrayError, RuntimeError):
    """A communicator cannot be formed (no MPI, ranks that do not fit together), or a
    collective failed: a rank raised inside it, or exited before joining it."""


class CommTimeout(CommError, TimeoutError):
    """Not every rank joined a communicator, or a collective, before the deadline (flag
    comm_timeout); `.missing` lists the ranks that did not answer, where known."""


class DeviceTimeout(GpuArrayError, TimeoutError):
    """Work-groups that must run at the same time (a kernel whose work-groups wait on each
    other) did not within the kernel's deadline: the device was held by other work. The
    result was not computed."""


class ForkedProcessError(GpuArrayError, RuntimeError):
    """A device used in a process forked after gpuarr loaded the OpenCL driver: the driver's
    threads and queues stay in the parent, and the call would hang."""


class BufferExportError(UnsupportedError, BufferError):
    """A buffer protocol gpuarr does not offer (DLPack); BufferError, as the Array API asks."""


class LinAlgError(GpuArrayError, np.linalg.LinAlgError):
    """A linear algebra failure numpy reports as numpy.linalg.LinAlgError (a singular matrix,
    one not positive definite, non-square input), so `except np.linalg.LinAlgError` works;
    the message names the first failing matrix of a batch."""


class DebugModeError(GpuArrayError, AssertionError):
    """A node computed values other than numpy's for the same inputs, or changed an input
    (raised by gpuarr.symbolic functions compiled with mode='DebugMode')."""


class GradientError(GpuArrayError, AssertionError):
    """A symbolic gradient that disagrees with finite differences (gpuarr.symbolic's
    verify_grad): `arg` the input, `err_pos` the element, the errors and tolerances."""

    def __init__(self, arg, err_pos, abs_err, rel_err, abs_tol, rel_tol, message):
        super().__init__(message)
        self.arg, self.err_pos = arg, err_pos
        self.abs_err, self.rel_err = abs_err, rel_err
        self.abs_tol, self.rel_tol = abs_tol, rel_tol
