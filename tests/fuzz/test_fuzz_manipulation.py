"""Differential fuzzing of array manipulation against numpy: concatenate/stack, transpose,
reshape (C and F order, view or copy), flip, roll, moveaxis, swapaxes, expand_dims/squeeze,
tile, repeat, ravel, split, tril/triu, diagonal, broadcast_to, copy in every order and
astype, on strided, offset and F-ordered views of random shapes (0-d and 0-size too).
All exact."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import gpuarr as ga

from .support import DTYPES, assert_matches, fuzz_settings, layouts
from .support import shapes as shapes_st


def _axis(draw, ndim, extra=0):
    return draw(st.integers(-(ndim + extra), ndim + extra - 1))


def _reshape_target(draw, shape):
    size = int(np.prod(shape))
    options = [(-1,), tuple(reversed(shape)), (*shape, 1), (1, *shape)]
    divisors = [d for d in range(1, size + 1) if size % d == 0]
    if divisors:
        d = draw(st.sampled_from(divisors))
        options += [(d, size // d), (size // d, 1, -1)]
    return draw(st.sampled_from(options))


def _operation(draw, host, dev, ctx, first):
    """(name, numpy result, gpuarr result) of one drawn manipulation. Orders 'A' and 'K'
    depend on the operand's memory layout; numpy gives the results of concatenate, roll,
    stack and ufuncs its operands' layout, gpuarr C order (reported), so after the first
    step of a chain only 'C' and 'F' are drawn."""
    nd = host.ndim
    orders = "CFAK" if first else "CF"
    ops = ["reshape", "flip", "copy", "astype", "ravel", "expand_dims", "broadcast_to"]
    if nd:
        ops += ["concatenate", "stack", "transpose", "roll", "moveaxis", "tile", "repeat",
                "split", "squeeze"]
    if nd >= 2:
        ops += ["swapaxes", "tril", "diagonal"]
    name = draw(st.sampled_from(ops))
    if name == "reshape":
        target, order = _reshape_target(draw, host.shape), draw(st.sampled_from(orders[:3]))
        return name, host.reshape(target, order=order), dev.reshape(target, order=order)
    if name == "flip":
        axis = None if not nd or draw(st.booleans()) else _axis(draw, nd)
        return name, np.flip(host, axis), ga.flip(dev, axis)
    if name == "copy":
        order = draw(st.sampled_from(orders))
        return name, host.copy(order), dev.copy(order)
    if name == "astype":
        dt = draw(st.sampled_from(["int32", "float64", "uint8"]))
        with np.errstate(all="ignore"):
            want = host.astype(dt)
        if host.dtype.kind == "f" and np.dtype(dt).kind in "iu" and \
                not np.all(np.isfinite(host) & (np.abs(host) < 100)):
            return name, want.astype(bool) * 0, dev.astype(dt).astype(bool) * 0  # undefined
        return name, want, dev.astype(dt)
    if name == "ravel":
        order = draw(st.sampled_from(orders))
        return name, host.ravel(order), dev.ravel(order)
    if name == "expand_dims":
        axis = _axis(draw, nd, 1)
        return name, np.expand_dims(host, axis), ga.expand_dims(dev, axis)
    if name == "broadcast_to":
        shape = (draw(st.integers(0, 3)), *host.shape)
        return name, np.broadcast_to(host, shape), ga.broadcast_to(dev, shape)
    if name in ("concatenate", "stack"):
        axis = _axis(draw, nd, name == "stack")
        other = draw(layouts(host.shape, host.dtype.name, ctx))
        if name == "concatenate":
            return name, np.concatenate([host, other[0], host], axis), \
                ga.concatenate([dev, other[1], dev], axis)
        return name, np.stack([host, other[0]], axis), ga.stack([dev, other[1]], axis)
    if name == "transpose":
        axes = draw(st.permutations(range(nd)))
        return name, np.transpose(host, axes).copy(), ga.transpose(dev, axes).copy()
    if name == "roll":
        shift = draw(st.integers(-7, 7))
        axis = None if draw(st.booleans()) else _axis(draw, nd)
        return name, np.roll(host, shift, axis), ga.roll(dev, shift, axis)
    if name == "moveaxis":
        src, dst = _axis(draw, nd), _axis(draw, nd)
        return name, np.moveaxis(host, src, dst), ga.moveaxis(dev, src, dst)
    if name == "tile":
        reps = tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=nd + 1)))
        return name, np.tile(host, reps), ga.tile(dev, reps)
    if name == "repeat":
        axis = None if draw(st.booleans()) else _axis(draw, nd)
        n = host.size if axis is None else host.shape[axis]
        reps = draw(st.integers(0, 3) | st.lists(st.integers(0, 3), min_size=n, max_size=n))
        return name, np.repeat(host, reps, axis), ga.repeat(dev, reps, axis)
    if name == "split":
        axis = _axis(draw, nd)
        points = sorted(draw(st.lists(st.integers(0, host.shape[axis]), max_size=3)))
        return name, np.concatenate(np.split(host, points, axis), axis), \
            ga.concatenate(ga.split(dev, points, axis), axis)
    if name == "squeeze":
        return name, np.squeeze(host), ga.squeeze(dev)
    if name == "swapaxes":
        a1, a2 = _axis(draw, nd), _axis(draw, nd)
        return name, np.swapaxes(host, a1, a2), ga.swapaxes(dev, a1, a2)
    if name == "tril":
        k = draw(st.integers(-3, 3))
        return name, np.tril(host, k), ga.tril(dev, k)
    k = draw(st.integers(-3, 3))
    return name, np.diagonal(host, k), ga.diagonal(dev, k)


@given(data=st.data())
@fuzz_settings(weight=1.5)
def test_manipulation_chains_match_numpy(ctx, data):
    """Chains of one to three manipulations, each result fed to the next."""
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = data.draw(shapes_st(max_dims=3, max_side=4), label="shape")
    host, dev = data.draw(layouts(shape, dtype, ctx), label="x")
    for step in range(data.draw(st.integers(1, 3), label="chain")):
        name, host, dev = _operation(data.draw, host, dev, ctx, step == 0)
        assert_matches(dev, host, what=name)
