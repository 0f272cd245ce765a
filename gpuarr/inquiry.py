"""numpy's questions about arrays that their metadata answers, with no device work: shape,
ndim, size, iscomplexobj, isrealobj, common_type, min_scalar_type, einsum_path; and their
text (array2string, array_repr, array_str), which reads the values back as print(x) does.

einsum_path plans on shapes alone: numpy's planner sees zero-size stand-ins of the
operands' shapes and dtypes, never their data.
"""

import numpy as np

from .base import ArrayBase

__all__ = ["FUNCTIONS", "array2string", "array_repr", "array_str", "common_type",
           "einsum_path", "iscomplexobj", "isrealobj", "min_scalar_type", "ndim", "shape",
           "size"]


def _stand_in(x):
    """A host array of x's shape and dtype holding no data (x itself when on the host)."""
    if isinstance(x, ArrayBase):
        return np.broadcast_to(np.zeros((), x.dtype), x.shape)
    return x


def shape(a):
    """The shape of `a` (a tuple).

    Examples
    --------
    >>> ga.shape(ga.zeros((2, 3)))
    (2, 3)
    """
    return a.shape if isinstance(a, ArrayBase) else np.shape(a)


def ndim(a):
    """The number of dimensions of `a`.

    Examples
    --------
    >>> ga.ndim(ga.zeros((2, 3)))
    2
    """
    return a.ndim if isinstance(a, ArrayBase) else np.ndim(a)


def size(a, axis=None):
    """The number of elements of `a`, or along `axis` (an int or a tuple of ints).

    Examples
    --------
    >>> ga.size(ga.zeros((2, 3))), ga.size(ga.zeros((2, 3)), axis=1)
    (6, 3)
    """
    return np.size(_stand_in(a), axis)


def iscomplexobj(x):
    """Whether `x`'s dtype is complex (a Python bool).

    Examples
    --------
    >>> ga.iscomplexobj(ga.asarray([1 + 0j])), ga.iscomplexobj(ga.asarray([1.0]))
    (True, False)
    """
    return np.iscomplexobj(_stand_in(x))


def isrealobj(x):
    """Whether `x`'s dtype is not complex (a Python bool).

    Examples
    --------
    >>> ga.isrealobj(ga.asarray([1.0]))
    True
    """
    return np.isrealobj(_stand_in(x))


def common_type(*arrays):
    """The inexact scalar type common to the arrays' dtypes (float64 for integers).

    Examples
    --------
    >>> ga.common_type(ga.asarray(np.arange(2, dtype=np.float32)), ga.asarray([1]))
    <class 'numpy.float64'>
    """
    return np.common_type(*(_stand_in(a) for a in arrays))


def min_scalar_type(a, /):
    """The smallest dtype that holds `a`: its dtype for an array, by value for a 0-d
    array (that one value read back).

    Examples
    --------
    >>> ga.min_scalar_type(ga.asarray(10)), ga.min_scalar_type(ga.zeros(3))
    (dtype('uint8'), dtype('float64'))
    """
    if isinstance(a, ArrayBase):
        return a.dtype if a.ndim else np.min_scalar_type(a.get())
    return np.min_scalar_type(a)


def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """numpy's contraction order for einsum(subscripts, *operands) (the path and its
    report), planned from the operands' shapes.

    Examples
    --------
    >>> path, report = ga.einsum_path("ij,jk,kl->il", *(ga.zeros((4, 4)),) * 3)
    >>> path
    ['einsum_path', (0, 1), (0, 1)]
    """
    return np.einsum_path(subscripts, *(_stand_in(x) for x in operands), optimize=optimize,
                          einsum_call=einsum_call)


def _host(a):
    return a.get() if isinstance(a, ArrayBase) else a


def array2string(a, *args, **kwargs):
    """numpy.array2string of `a`'s values (read back; every formatting argument of
    numpy's).

    Examples
    --------
    >>> ga.array2string(ga.asarray([1.0, 2.5]), precision=1)
    '[1.  2.5]'
    """
    return np.array2string(_host(a), *args, **kwargs)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """numpy.array_repr of `arr`'s values (read back).

    Examples
    --------
    >>> ga.array_repr(ga.asarray([1, 2]))
    'array([1, 2])'
    """
    return np.array_repr(_host(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """numpy.array_str of `a`'s values (read back).

    Examples
    --------
    >>> ga.array_str(ga.asarray([1, 2]))
    '[1 2]'
    """
    return np.array_str(_host(a), max_line_width, precision, suppress_small)


FUNCTIONS = {f.__name__: f for f in (
    shape, ndim, size, iscomplexobj, isrealobj, common_type, min_scalar_type, einsum_path,
    array2string, array_repr, array_str)}
