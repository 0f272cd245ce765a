"""Random streams in graphs: Theano's `RandomStreams` (also reached as
`T.shared_randomstreams.RandomStreams`), drawing with gpuarr.random's Philox4x32-10.

    srng = RandomStreams(seed=42)
    u = srng.uniform((2, 3))                  # a new stream, its state a shared variable
    f = T.function([], u)                     # each call draws the next numbers

Each draw (`uniform`, `normal`, `binomial`, `random_integers`, `choice`) gets a stream of
its own: child k of the seed's SeedSequence, as `gpuarr.random.Philox(seed).spawn(...)`
gives them, so `u` above draws what `gpuarr.random.Generator(Philox(seed).spawn(1)[0])
.random((2, 3))` draws, call after call. The stream's state is a host shared variable (a
uint64 vector: key, stream tag, position), read by a `RandomDraw` node that outputs the
draws and the advanced state; the state's `default_update` (and `srng.updates()`) is
that new state, so the compiled function advances it as any update. Draws run on the
device (the Generator's kernels); on the host (flag device=cpu, or a dtype the device
lacks) a numpy mirror of the same counter-based generator gives the same uniforms and
integers bit for bit (normals within a few ulps).
"""

import math

import numpy as np

from .. import dtypes
from ..errors import ArgumentError, ArgumentTypeError, UnsupportedError
from ..random import Generator, Philox
from .basic import describe_shape, parse_shape, shape_function, shape_pattern, shape_roles
from .elemwise import cast
from .graph import Apply, Op, TensorType, Variable, as_variable, op_pair
from .shared import shared

__all__ = ["GpuRandomDraw", "RandomDraw", "RandomStreams"]

_M32 = 2**32 - 1
_ROUND_KEYS = (0x9E3779B9, 0xBB67AE85)
_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
_U64 = np.dtype(np.uint64)


def _philox(counters, s0, s1, k0, k1):
    """Philox4x32-10 of the blocks `counters` (uint64) of stream (s0, s1) under key (k0,
    k1): words, shape (n, 4), uint32 as uint64 (the kernel's rounds, in numpy)."""
    c0, c1 = counters & _M32, counters >> np.uint64(32)
    c2 = np.full_like(counters, s0)
    c3 = np.full_like(counters, s1)
    key = [np.uint64(k0), np.uint64(k1)]
    m0, m1 = np.uint64(_MULTIPLIERS[0]), np.uint64(_MULTIPLIERS[1])
    for r in range(10):
        if r:
            key = [np.uint64((int(k) + w) & _M32) for k, w in zip(key, _ROUND_KEYS)]
        p0, p1 = m0 * c0, m1 * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ key[0], p1 & np.uint64(_M32),
                          (p0 >> np.uint64(32)) ^ c3 ^ key[1], p0 & np.uint64(_M32))
    return np.stack([c0, c1, c2, c3], axis=1)


def _per_block(dist, dtype):
    return 2 if dist != "integers" and dtype == np.float64 else 4


def _host_draw(dist, dtype, low, high, key, stream, pos, n):
    """(n values in C order, blocks used) as gpuarr.random's kernels compute them."""
    per = _per_block(dist, dtype)
    blocks = -(-n // per)
    counters = (np.uint64(pos) + np.arange(blocks, dtype=np.uint64)) & np.uint64(2**64 - 1)
    words = _philox(counters, stream & _M32, stream >> 32, key & _M32, key >> 32)
    if dist == "integers":
        span = high - low
        thresh = (2**32 - span) % span
        m = words * np.uint64(span)
        for attempt in range(1, 64):
            bad = np.nonzero((m & np.uint64(_M32)) < np.uint64(thresh))
            if not bad[0].size:
                break
            k1 = ((key >> 32) ^ (attempt * _ROUND_KEYS[0])) & _M32
            redo = _philox(counters[bad[0]], stream & _M32, stream >> 32, key & _M32, k1)
            m[bad] = redo[np.arange(bad[0].size), bad[1]] * np.uint64(span)
        values = (m >> np.uint64(32)).astype(np.int64) + low
        return values.reshape(-1)[:n].astype(dtype), blocks
    if dtype == np.float64:
        bits = ((words[:, 0::2] << np.uint64(32)) | words[:, 1::2]) >> np.uint64(11)
        u = bits.astype(np.float64) * 2.0**-53
    else:
        u = (words >> np.uint64(8)).astype(np.float32) * np.float32(2.0**-24)
    if dist == "normal":
        one, two = dtype.type(1), dtype.type(-2)
        r = np.sqrt(two * np.log(one - u[:, 0::2]))
        angle = 2 * np.pi * u[:, 1::2].astype(np.float64)
        z = np.empty_like(u)
        z[:, 0::2] = r * np.cos(angle).astype(dtype)
        z[:, 1::2] = r * np.sin(angle).astype(dtype)
        u = z
    return u.reshape(-1)[:n], blocks


class _RandomDraw(Op):
    """Draws of `dist` ('uniform' in [0, 1), 'normal' standard, 'integers' in [low,
    high)) of `dtype`, of the shape given by parse_shape's entries (inputs from 1), from
    the Philox stream whose state (uint64 [key, stream, position], on the host) is input
    0. Outputs: the advanced state, the draws."""

    __props__ = ("dist", "dtype", "shape", "low", "high")

    def __init__(self, dist, dtype, shape, low=0, high=0):
        if dist not in ("uniform", "normal", "integers"):
            raise ArgumentError(f"unknown distribution {dist!r}")
        self.dist, self.dtype, self.shape = dist, np.dtype(dtype), tuple(shape)
        self.low, self.high = int(low), int(high)
        if any(isinstance(e, int) and e < 0 for e in self.shape):
            raise ArgumentError(f"negative dimensions are not allowed: size {self.shape}")
        self.shape_only, hosts = shape_roles(self.shape)
        self.host_inputs = (0, *hosts)

    def _describe(self):
        bounds = f", {self.low}, {self.high}" if self.dist == "integers" else ""
        return f"{self.dist}{bounds}, {self.dtype}, ({describe_shape(self.shape)})"

    def make_node(self, state, *rest):
        inputs = [as_variable(state), *map(as_variable, rest)]
        if inputs[0].dtype != _U64 or inputs[0].ndim != 1:
            raise ArgumentTypeError(f"the state of a random draw is a uint64 vector, got "
                                    f"{inputs[0]} ({inputs[0].type})")
        out = TensorType(self.dtype, shape_pattern(self.shape, inputs), self.context_name)
        return Apply(self, inputs, [TensorType(_U64, (False,)), out])

    def make_fn(self, node, xp, ctx):
        get, dist, dt, low, high = (shape_function(self.shape), self.dist, self.dtype,
                                    self.low, self.high)
        if ctx is None:
            def draw(key, stream, pos, shape):
                values, blocks = _host_draw(dist, dt, low, high, key, stream, pos,
                                            math.prod(shape))
                return values.reshape(shape), pos + (blocks if values.size else 0)
        else:
            bitgen = Philox(0)
            gen = Generator(bitgen, ctx)

            def draw(key, stream, pos, shape):
                bitgen.key, bitgen.stream = (key & _M32, key >> 32), (stream & _M32,
                                                                      stream >> 32)
                bitgen.position = pos
                if dist == "uniform":
                    out = gen.random(shape, dt)
                elif dist == "normal":
                    out = gen.standard_normal(shape, dt)
                else:
                    out = gen.integers(low, high, shape, dt)
                return out, bitgen.position

        def fn(state, *rest):
            key, stream, pos = (int(w) for w in state)
            values, pos = draw(key, stream, pos, get((state, *rest)))
            return np.array([key, stream, pos & (2**64 - 1)], _U64), values
        return fn

    def differentiable(self, node):
        return False


RandomDraw, GpuRandomDraw = op_pair(_RandomDraw, "RandomDraw")


class RandomStreams:
    """Theano's RandomStreams: symbolic random draws, each from a stream of its own,
    advanced by every call of a function that computes it.

    Parameters
    ----------
    seed : int or None
        The seed of every stream (None: fresh entropy). `seed(s)` reseeds them all.

    Notes
    -----
    Each draw returns a variable with `rng` (its state, a shared variable whose
    `default_update` is the advanced state) and `update` ((rng, new state)). `function`
    installs default updates; `updates()` lists them for explicit `updates=`.
    """

    def __init__(self, seed=None):
        self.state_updates = []
        self._root = Philox(seed)

    def seed(self, seed=None):
        """Reseed every stream drawn from so far (and those to come), as a new
        RandomStreams(seed) would give them."""
        self._root = Philox(seed)
        for state, _ in self.state_updates:
            state.set_value(self._next_state())

    def updates(self):
        """[(state, new state)] of every draw: the updates that advance the streams."""
        return list(self.state_updates)

    def _next_state(self):
        child = self._root.spawn(1)[0]
        (k0, k1), (s0, s1) = child.key, child.stream
        return np.array([k0 | k1 << 32, s0 | s1 << 32, 0], _U64)

    def _draw(self, dist, dtype, size, ndim, low=0, high=0):
        entries, inputs = parse_shape(size, 1, ndim)
        state = shared(self._next_state(), name=f"rng{len(self.state_updates)}",
                       target="cpu")
        new_state, out = RandomDraw(dist, dtype, entries, low, high)(state, *inputs)
        state.default_update = new_state
        out.rng, out.update = state, (state, new_state)
        self.state_updates.append((state, new_state))
        return out

    def uniform(self, size=(), low=0.0, high=1.0, ndim=None, dtype=None):
        """Uniform floats in [low, high): low + (high - low) * u (dtype floatX unless
        given; low and high may be variables)."""
        dt = _float(dtype, low, high)
        u = self._draw("uniform", dt, _size(size, low, high), ndim)
        if _is_zero(low) and _is_one(high):
            return u
        return cast(low + (high - low) * u, dt)

    def normal(self, size=(), avg=0.0, std=1.0, ndim=None, dtype=None):
        """Normal floats: avg + std * z, z standard normal (Box-Muller), dtype floatX
        unless given."""
        dt = _float(dtype, avg, std)
        z = self._draw("normal", dt, _size(size, avg, std), ndim)
        if _is_zero(avg) and _is_one(std):
            return z
        return cast(avg + std * z, dt)

    def binomial(self, size=(), n=1, p=0.5, ndim=None, dtype="int64"):
        """The number of successes in `n` trials (an int) of probability `p`: the count of
        n uniforms below p."""
        if not isinstance(n, int) or n < 1:
            raise ArgumentError(f"binomial: n must be a positive int, got {n!r}")
        p = as_variable(p)
        dt = p.dtype if p.dtype.kind == "f" else dtypes.float_x()
        size = _size(size, p)
        if n == 1:
            return cast(self._draw("uniform", dt, size, ndim) < p, dtype)
        entries, _ = parse_shape(size, 0, ndim)
        u = self._draw("uniform", dt, (n, *_as_tuple(size, len(entries))), None)
        return cast(u < p, "int64").sum(axis=0, dtype=dtype)

    def random_integers(self, size=(), low=0, high=1, ndim=None, dtype="int64"):
        """Uniform integers in [low, high], both included (Theano's random_integers)."""
        return self._integers(size, int(low), int(high) + 1, ndim, dtype)

    def choice(self, size=(), a=2, replace=True, p=None, ndim=None, dtype="int64"):
        """Uniform samples of range(a) with replacement (`replace=False` and `p` are not
        supported)."""
        if not replace or p is not None:
            raise UnsupportedError("RandomStreams.choice draws uniformly with replacement; "
                                   "replace=False and p= are not supported (draw uniforms "
                                   "and compare with a cumulative sum of p instead)")
        return self._integers(size, 0, int(a), ndim, dtype)

    def _integers(self, size, low, high, ndim, dtype):
        if high <= low:
            raise ArgumentError(f"empty range of integers [{low}, {high})")
        if high - low > 2**32:
            raise UnsupportedError(f"integers over a range of {high - low} values: at most "
                                   f"2**32")
        return self._draw("integers", np.dtype(dtype), size, ndim, low, high)


def _float(dtype, *params):
    if dtype is not None:
        return dtypes.normalize(dtype)
    kinds = [v.dtype for v in params if isinstance(v, Variable) and v.dtype.kind == "f"]
    return np.result_type(dtypes.float_x(), *kinds) if kinds else dtypes.float_x()


def _size(size, *params):
    """size, or the shape of the first parameter with dimensions when size is None."""
    if size is not None:
        return size
    for v in params:
        if isinstance(v, Variable) and v.ndim:
            return v.shape
    return ()


def _as_tuple(size, ndim):
    if isinstance(size, int):
        return (size,)
    if isinstance(size, list | tuple):
        return tuple(size)
    v = as_variable(size)
    if v.ndim == 0:
        return (v,)
    return tuple(v[k] for k in range(ndim))


def _is_zero(v):
    return not isinstance(v, Variable) and np.ndim(v) == 0 and v == 0


def _is_one(v):
    return not isinstance(v, Variable) and np.ndim(v) == 0 and v == 1
