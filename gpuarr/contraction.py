"""einsum: numpy's Einstein summation, mapped onto views, the reduction engine and GEMM.

One operand is a view (a permutation; a repeated index is a diagonal, its strides summed)
followed by a sum over the indices the output drops. Two operands: each first loses its
private indices (summed), then the shared ones are classified, batch (kept) or contracted
(summed), and the pair becomes one batched `blas.matmul` of (batch, m, k) @ (batch, k, n), or
one broadcasting multiply when nothing is contracted. More operands are contracted pairwise:
left to right by default, in numpy.einsum_path's order when `optimize` asks for it.
"""

import math
import string

import numpy as np

from . import blas, dtypes, reduction
from .base import ArrayBase, check_same_context, to_device
from .context import get_context
from .errors import ArgumentError, ArgumentTypeError, ShapeError
from .ufuncs import UFUNCS

__all__ = ["einsum"]

_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


# ---------------------------------------------------------------- parsing

def _name(label):
    return f"label '{label}'" if len(label) == 1 else f"'...' dimension {label[3:]}"


def _term(text, what):
    """A term as [letters], or [letters before, letters after] around its '...'."""
    pieces = text.split("...", 1)
    for c in "".join(pieces):
        if c == ".":
            raise ArgumentError(f"einstein sum subscripts string contains a '.' that is not "
                                f"part of an ellipsis ('...') in {what}")
        if c not in string.ascii_letters:
            raise ArgumentError(f"invalid subscript {c!r} in einstein sum subscripts string, "
                                f"subscripts must be letters")
    return pieces


def _from_sublists(args):
    """numpy's other form, einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]), as a
    subscripts string (0-25 are 'A'-'Z', 26-51 'a'-'z') and the operands."""
    def text(sublist):
        if not isinstance(sublist, list | tuple | np.ndarray):
            raise ArgumentTypeError(f"einsum: subscripts must be a string, or sublists of "
                                    f"integers after each operand; got {sublist!r}")
        out = []
        for s in sublist:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int | np.integer) and 0 <= s < 52:
                out.append(string.ascii_letters[(s + 26) % 52])
            else:
                raise ArgumentError(f"einsum: subscript {s!r} is not an integer within the "
                                    f"valid range [0, 52) or Ellipsis")
        return "".join(out)
    operands, sublists = list(args[0::2]), [text(s) for s in args[1::2]]
    if len(args) % 2:
        return ",".join(sublists) + "->" + text(args[-1]), operands[:-1]
    return ",".join(sublists), operands


def _parse(subscripts, shapes):
    """(labels per operand, output labels): letters, and '...0', '...1', ... for the
    broadcast ellipsis dimensions (right-aligned across operands, as numpy)."""
    text = subscripts.replace(" ", "")
    if text.count("->") > 1:
        raise ArgumentError("einstein sum subscripts string can only contain one '->'")
    inputs, arrow, output = text.partition("->")
    parts = inputs.split(",")
    if len(parts) != len(shapes):
        more = "more" if len(shapes) > len(parts) else "fewer"
        raise ArgumentError(f"{more} operands provided to einstein sum function than "
                            f"specified in the subscripts string {subscripts!r} "
                            f"({len(shapes)} operands, {len(parts)} terms)")
    terms, extra = [], []
    for k, (part, shape) in enumerate(zip(parts, shapes)):
        pieces = _term(part, f"operand {k}")
        named = len("".join(pieces))
        if named > len(shape):
            raise ArgumentError(f"einstein sum subscripts string contains too many subscripts "
                                f"for operand {k} ({part!r} for shape {shape})")
        if len(pieces) == 1 and named < len(shape):
            raise ArgumentError(f"operand {k} has more dimensions than subscripts given in "
                                f"einstein sum ({part!r} for shape {shape}), but no '...' "
                                f"ellipsis provided to broadcast the extra dimensions")
        terms.append(pieces)
        extra.append(len(shape) - named)
    ndots = max(extra)
    dots = [f"...{d}" for d in range(ndots)]

    def expand(pieces, n):
        return list(pieces[0]) if len(pieces) == 1 else \
            [*pieces[0], *dots[ndots - n:], *pieces[1]]

    labels = [expand(p, n) for p, n in zip(terms, extra)]
    if not arrow:  # implicit: the broadcast dimensions, then the letters seen once, sorted
        seen = [c for t in labels for c in t if len(c) == 1]
        return labels, dots + sorted(c for c in set(seen) if seen.count(c) == 1)
    pieces = _term(output, "the output")
    letters = "".join(pieces)
    for c in letters:
        if letters.count(c) > 1:
            raise ArgumentError(f"einstein sum subscripts string includes output subscript "
                                f"{c!r} multiple times")
        if not any(c in t for t in labels):
            raise ArgumentError(f"einstein sum subscripts string included output subscript "
                                f"{c!r} which never appeared in an input")
    if ndots and len(pieces) == 1:
        raise ArgumentError(f"output has more dimensions than subscripts given in einstein "
                            f"sum ({subscripts!r} broadcasts {ndots} '...' dimensions), but "
                            f"no '...' ellipsis provided to broadcast the extra dimensions")
    return labels, expand(pieces, ndots)


def _sizes(labels, shapes):
    """Each label's size; 1 broadcasts across operands, a repeat within one must match."""
    sizes = {}
    for k, (term, shape) in enumerate(zip(labels, shapes)):
        own = {}
        for label, n in zip(term, shape):
            if own.setdefault(label, n) != n:
                raise ShapeError(f"dimensions in operand {k} for collapsing index "
                                 f"'{label}' don't match ({own[label]} != {n})")
        for label, n in own.items():
            prev = sizes.get(label, 1)
            if n != prev and 1 not in (n, prev):
                raise ShapeError(
                    f"operands could not be broadcast together: size of {_name(label)} "
                    f"for operand {k} ({n}) does not match previous terms ({prev}); shapes "
                    f"{', '.join(str(s) for s in shapes)}")
            if prev == 1:
                sizes[label] = n
    return sizes


def _path(optimize, subscripts, arrays):
    """The contraction order as numpy.einsum_path gives it: steps of positions in the list
    of operands left, each step's result appended to that list."""
    n = len(arrays)
    if isinstance(optimize, list | tuple):
        path = list(optimize[1:] if optimize and optimize[0] == "einsum_path" else optimize)
        left = n
        for step in path:
            if (not isinstance(step, tuple | list) or not step or len(set(step)) != len(step)
                    or not all(isinstance(i, int | np.integer) and 0 <= i < left for i in step)):
                raise ArgumentError(f"einsum: invalid contraction {step!r} in path {optimize!r} "
                                    f"for {n} operands")
            left -= len(step) - 1
        if left != 1:
            raise ArgumentError(f"einsum: path {optimize!r} leaves {left} operands "
                                f"uncontracted; it must end with one")
        return [tuple(s) for s in path]
    if optimize not in (False, True, None, "greedy", "optimal"):
        raise ArgumentError(f"einsum: optimize must be a bool, 'greedy', 'optimal' or a path "
                            f"(['einsum_path', (0, 1), ...]), not {optimize!r}")
    if optimize and n > 2:
        # numpy plans on stand-ins of the shapes (zero strides: no memory)
        stand_ins = [np.broadcast_to(np.zeros((), x.dtype), x.shape) for x in arrays]
        return [tuple(s) for s in np.einsum_path(subscripts, *stand_ins,
                                                 optimize=optimize)[0][1:]]
    return [(0, 1)] + [(n - 1 - s, 0) for s in range(1, n - 1)] if n > 1 else []


# ---------------------------------------------------------------- contraction

def _diagonal(x, term):
    """A repeated label as the diagonal view (its strides added), labels made unique."""
    unique = list(dict.fromkeys(term))
    if len(unique) == len(term):
        return x, term
    shape = tuple(x.shape[term.index(c)] for c in unique)
    strides = tuple(sum(s for d, s in zip(term, x.strides) if d == c) for c in unique)
    return x._view(shape, strides), unique


def _reduce(x, term, keep, dt):
    """x (labels `term`) as dtype dt with unique labels, those not in `keep` summed away."""
    x, term = _diagonal(x, term)
    drop = tuple(d for d, c in enumerate(term) if c not in keep)
    if drop:
        # a sum of bools is their or (numpy's bool add); reduction.sum would count
        x = reduction.any(x, axis=drop) if dt == np.bool_ else \
            reduction.sum(x, axis=drop, dtype=dt)
        term = [c for c in term if c in keep]
    return x.astype(dt, copy=False), term


def _by_memory(x, term, group):
    """Labels of `group` in x's memory order (largest stride first), so that flattening
    them is a view when their axes are contiguous together."""
    return sorted(group, key=lambda c: -abs(x.strides[term.index(c)]))


def _grouped(x, term, groups):
    """x with its axes in `groups` order, each group flattened into one axis (a view where
    the strides allow, else reshape copies)."""
    order = [c for group in groups for c in group]
    shape = [math.prod(x.shape[term.index(c)] for c in group) for group in groups]
    return x.transpose([term.index(c) for c in order]).reshape(shape)


def _pair(a, la, b, lb, keep, dt):
    """The contraction of two operands, keeping the labels in `keep`: (result, labels)."""
    a, la = _reduce(a, la, keep | set(lb), dt)
    b, lb = _reduce(b, lb, keep | set(la), dt)
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    free_a = [c for c in la if c not in lb]
    free_b = [c for c in lb if c not in la]
    if not summed:  # outer or elementwise product: a multiply with broadcasting
        labels = batch + free_a + free_b
        return UFUNCS["multiply"](_aligned(a, la, labels), _aligned(b, lb, labels)), labels
    for c in summed:  # a summed label of size 1 on one side broadcasts (stride 0)
        a, b = _stretch(a, la, c, b.shape[lb.index(c)]), _stretch(b, lb, c, a.shape[la.index(c)])
    summed, free_a, free_b = (_by_memory(a, la, summed), _by_memory(a, la, free_a),
                              _by_memory(b, lb, free_b))
    if not (batch or free_a or free_b):  # a dot product
        return blas.matmul(_grouped(a, la, [summed]), _grouped(b, lb, [summed])), []
    # batch axes stay separate: matmul broadcasts them and collapses them where it can
    batch_groups = [[c] for c in batch]
    product = blas.matmul(_grouped(a, la, [*batch_groups, free_a, summed]),
                          _grouped(b, lb, [*batch_groups, summed, free_b]))
    shape = (*product.shape[:-2], *(a.shape[la.index(c)] for c in free_a),
             *(b.shape[lb.index(c)] for c in free_b))
    return product.reshape(shape), batch + free_a + free_b


def _aligned(x, term, labels):
    """A view of x over `labels`: its axes permuted, absent labels as size-1 axes."""
    dims = [(x.shape[term.index(c)], x.strides[term.index(c)]) if c in term else (1, 0)
            for c in labels]
    return x._view(tuple(n for n, _ in dims), tuple(s for _, s in dims))


def _stretch(x, term, label, n):
    """x with the size-1 axis of `label` broadcast to n (stride 0)."""
    d = term.index(label)
    if x.shape[d] != 1 or n == 1:
        return x
    return x._view((*x.shape[:d], n, *x.shape[d + 1:]), (*x.strides[:d], 0, *x.strides[d + 1:]))


# ---------------------------------------------------------------- the function

def einsum(subscripts, *operands, out=None, dtype=None, casting="safe", optimize=False):
    """numpy.einsum: explicit ('ij,jk->ik') or implicit ('ij,jk') subscripts, '...'
    broadcasting, out=, dtype=, casting=; numpy's sublist form too. Two-operand
    contractions run as one batched GEMM; more operands contract pairwise, left to right
    unless `optimize` (True, 'greedy', 'optimal': numpy.einsum_path's order; or an explicit
    path) says otherwise."""
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists((subscripts, *operands))
    if not operands:
        raise ArgumentError("einsum: no operands given; einsum(subscripts, *operands)")
    if casting not in _CASTINGS:
        raise ArgumentError(f"casting must be one of {', '.join(map(repr, _CASTINGS))} "
                            f"(got {casting!r})")
    gpu = [x for x in operands if isinstance(x, ArrayBase)]
    ctx = check_same_context(*gpu) if gpu else get_context(None)
    # numpy converts operands with asarray: Python scalars are not weak here
    arrays = [x if isinstance(x, ArrayBase) else to_device(np.asarray(x), ctx) for x in operands]
    labels, out_labels = _parse(subscripts, [x.shape for x in arrays])
    sizes = _sizes(labels, [x.shape for x in arrays])
    out_shape = tuple(sizes[c] for c in out_labels)

    dt = np.result_type(*(x.dtype for x in arrays)) if dtype is None else \
        dtypes.normalize(dtype)
    for k, x in enumerate(arrays):
        if not np.can_cast(x.dtype, dt, casting):
            raise ArgumentTypeError(f"einsum: operand {k} cannot be cast from {x.dtype} to "
                                    f"{dt} according to the rule {casting!r}")
    if out is not None:
        if not isinstance(out, ArrayBase):
            raise ArgumentTypeError(f"einsum: out must be a GpuArray, not {type(out).__name__}")
        check_same_context(arrays[0], out)
        if out.shape != out_shape:
            raise ShapeError(f"einsum: out has shape {out.shape}, the result has {out_shape} "
                             f"({subscripts!r})")
        if not np.can_cast(dt, out.dtype, casting):
            raise ArgumentTypeError(f"einsum: the result ({dt}) cannot be cast to out's dtype "
                                    f"{out.dtype} according to the rule {casting!r}")

    items = list(zip(arrays, labels))
    wanted = set(out_labels)
    for step in _path(optimize, subscripts, arrays):
        rest = [item for i, item in enumerate(items) if i not in step]
        picked = [items[i] for i in step]
        keep = wanted.union(*(t for _, t in rest))
        x, term = _reduce(*picked[0], keep.union(*(t for _, t in picked[1:])), dt)
        for j, (y, ty) in enumerate(picked[1:], 2):
            x, term = _pair(x, term, y, ty, keep.union(*(t for _, t in picked[j:])), dt)
        items = [*rest, (x, term)]
    (x, term), = items
    x, term = _reduce(x, term, wanted, dt)
    result = x.transpose([term.index(c) for c in out_labels])
    return result if out is None else out._assign(result)
