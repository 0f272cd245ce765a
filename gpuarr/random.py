"""Random numbers on the device: a counter-based generator, Philox4x32-10.

    rng = gpuarr.random.default_rng(42)
    x = rng.normal(size=(1000, 1000))        # a GpuArray on the generator's context

A stream is a key (2 words) and a stream tag (2 words), the 128 bits numpy's SeedSequence
makes of the seed, and a position: the number of 128-bit blocks used so far. Block b is
Philox4x32-10 (Salmon et al., SC11, Random123's constants) of the counter (low word of b,
high word of b, stream tag) under the key. A draw of n elements of w words each takes the
next ceil(n * w / 4) blocks, element i from words i*w .. i*w + w-1 of them, and moves the
position past them; a part-used last block is skipped. So element i depends only on (seed,
position, i), never on the device or the launch shape, and draws that use whole blocks (a
multiple of 4 words) continue each other: random(1000) then random(1000) is random(2000).
Words per element: float32 1 (its top 24 bits), float64 2 (the top 53 bits of the pair),
integers 1 for ranges up to 2**32 and 2 beyond, normals as many as their uniforms (Box-Muller
turns each pair of uniforms into a pair of normals). Integers are unbiased: Lemire's
multiply, a rejected word replaced by the same counter's word under a key derived from
the attempt number. Spawned children and other seeds are other keys: independent streams.

Uniforms and integers are the same bits on every device; normals and exponentials go through
the device's log, sqrt, cospi and sinpi, which OpenCL allows a few ulps of freedom.
size=None returns what numpy returns: a Python float for float draws, a numpy scalar of
the dtype for integers.

`Generator` takes numpy.random.Generator's signatures (`out=`, `axis=`, `permuted`), as
dask.array's random module calls them per chunk; `RandomState` is numpy's legacy interface
on the same Philox streams (not numpy's MT19937: other numbers, the same distributions).
"""

import math
import numbers
import operator
import warnings

import numpy as np

from . import dtypes
from .base import ArrayBase, _normalize_axis, asarray
from .context import get_context
from .elemwise import broadcast_shape
from .errors import (
    ArgumentError,
    ArgumentTypeError,
    ShapeError,
    UnsupportedError,
)
from .indexing import take, take_along_axis
from .kernels import get_kernel
from .launch import enqueue
from .reduction import count_nonzero, cumsum
from .reduction import min as amin
from .sorting import argsort

_MASK64 = 2**64 - 1
_COMMON_ARGS = [None, np.uint64, np.uint32, np.uint32, np.uint32, np.uint32, np.uint64]
_UNIFORM, _NORMAL, _EXPONENTIAL = 0, 1, 2
_F32, _F64, _I64, _U64 = (np.dtype(t) for t in (np.float32, np.float64, np.int64, np.uint64))


def _kernel(ctx, kind, dtype):
    """The Philox kernel of `kind` ('float', 'int' or 'cdf') for `dtype`, built once."""
    key = ("philox", kind, dtype.name)
    kernel = ctx.kernels.get(key)
    if kernel is None:
        real = np.float64 if dtype == _F64 else np.float32
        extra = {"float": [np.int32, real, real], "int": [np.uint64] * 3 + [np.int32],
                 "cdf": [None, np.int64, real]}[kind]
        kernel = get_kernel(ctx, key, "philox.cl.mako", _COMMON_ARGS + extra,
                            name=f"philox_{kind}", kind=kind, dtype=dtype.name)
    return kernel


def _shape(size):
    """`size` as a shape tuple, None for None."""
    if size is None:
        return None
    try:
        shape = tuple(operator.index(n) for n in (
            (size,) if isinstance(size, numbers.Integral | np.integer) else size))
    except TypeError:
        raise ArgumentTypeError(f"size must be None, an integer or a sequence of integers, "
                                f"got {size!r}") from None
    if any(n < 0 for n in shape):
        raise ShapeError(f"negative dimensions are not allowed: size {size!r}")
    return shape


def _seed_sequence(seed):
    if isinstance(seed, np.random.SeedSequence):
        return seed
    try:
        return np.random.SeedSequence(seed)
    except TypeError as e:
        raise ArgumentTypeError(f"seed must be None, an int or a sequence of ints: {e}") from None
    except ValueError as e:
        raise ArgumentError(f"seed {seed!r}: {e}") from None


class Philox:
    """Philox4x32-10 stream state: key and stream tag from a seed, and the position.

    `state` reads and sets {'key': (k0, k1), 'stream': (s0, s1), 'position': blocks used};
    block b is Philox4x32-10 of counter (b & 0xffffffff, b >> 32, s0, s1) under the key.
    """

    def __init__(self, seed=None):
        self.seed_seq = _seed_sequence(seed)
        k0, k1, s0, s1 = (int(w) for w in self.seed_seq.generate_state(4, np.uint32))
        self.key, self.stream, self.position = (k0, k1), (s0, s1), 0

    @property
    def state(self):
        return {"bit_generator": "Philox4x32-10", "key": self.key, "stream": self.stream,
                "position": self.position}

    @state.setter
    def state(self, value):
        try:
            key, stream, position = (tuple(value["key"]), tuple(value["stream"]),
                                     int(value["position"]))
        except (KeyError, TypeError) as e:
            raise ArgumentError(f"state must be a dict with key (2 words), stream (2 words) "
                                f"and position, got {value!r} ({e})") from None
        words = (*key, *stream)
        if len(key) != 2 or len(stream) != 2 or any(not 0 <= int(w) < 2**32 for w in words):
            raise ArgumentError(f"state key {key} and stream {stream} must be two 32-bit "
                                f"unsigned words each")
        if not 0 <= position <= _MASK64:
            raise ArgumentError(f"state position {position} must be in [0, 2**64)")
        self.key, self.stream = tuple(map(int, key)), tuple(map(int, stream))
        self.position = position

    def advance(self, blocks):
        """Skip `blocks` blocks (4 words each) of the stream; returns self."""
        self.position = (self.position + operator.index(blocks)) & _MASK64
        return self

    def spawn(self, n_children):
        """`n_children` independent streams (SeedSequence children: other keys)."""
        return [Philox(s) for s in self.seed_seq.spawn(n_children)]

    def random_raw(self, size=None, context=None):
        """The stream's next 32-bit words as uint32 (4 per block), on `context`."""
        return Generator(self, context).integers(0, 2**32, size, dtype=np.uint32)

    def _reserve(self, blocks):
        start = self.position
        self.position = (start + blocks) & _MASK64
        return start

    def __repr__(self):
        return (f"Philox(key=({self.key[0]:#010x}, {self.key[1]:#010x}), stream=("
                f"{self.stream[0]:#010x}, {self.stream[1]:#010x}), position={self.position})")


def _scalar(out, shape, cast=None):
    """`out`, or its one element when numpy would return a scalar (shape None)."""
    if shape is not None:
        return out
    value = out.get()[0]
    return value if cast is None else cast(value)


def _is_array(value):
    return isinstance(value, ArrayBase) or np.ndim(value) > 0


class Generator:
    """numpy's Generator interface on a Philox stream; draws land on `context`.

    Methods with numpy's signatures: `random`, `uniform`, `normal`, `standard_normal`,
    `standard_exponential`, `exponential`, `integers`, `choice`, `permutation`, `shuffle`,
    `permuted`, `bytes`, `spawn`; the float draws also take `dtype` (float32 or float64),
    and `out=` where numpy's do (a GpuArray of the draw's shape and dtype). The numbers
    depend on the seed only, never on the device (Philox4x32-10, counter-based), but they
    are not numpy's: numpy's Philox draws are transformed differently.
    """

    def __init__(self, bit_generator=None, context=None):
        self._bit_generator = (bit_generator if isinstance(bit_generator, Philox)
                               else Philox(bit_generator))
        self.context = get_context(context)

    bit_generator = property(lambda self: self._bit_generator, doc="the Philox stream state")

    def spawn(self, n_children):
        """`n_children` generators of independent streams, on the same context."""
        return [Generator(b, self.context) for b in self._bit_generator.spawn(n_children)]

    def __repr__(self):
        return f"Generator({self._bit_generator!r}, context={self.context.name!r})"

    # -- the launch
    def _draw(self, kind, dtype, shape, per_block, args, inputs=(), out=None):
        """The next blocks of the stream as a new array of `shape` (None: one element), or
        written into `out` (a GpuArray of the draw's shape and dtype, on any context: the
        numbers do not depend on the device)."""
        if out is not None and not (out.offset == 0 and out._is_c()):
            return out._assign(self._draw(kind, dtype, out.shape, per_block, args, inputs))
        ctx = self.context if out is None else out.context
        if out is None:
            out = ArrayBase._empty(ctx, (1,) if shape is None else shape,
                                  _I64 if kind == "cdf" else dtype)
        n = out.size
        if n == 0:
            return out
        blocks = -(-n // per_block)
        bitgen = self._bit_generator
        pos = bitgen._reserve(blocks)
        kernel = _kernel(ctx, kind, dtype)
        local = ctx.local_size
        enqueue(ctx, kernel, (-(-blocks // local) * local,), (local,),
                [out.storage, n, *bitgen.key, *bitgen.stream, pos, *args],
                [a.storage for a in inputs], [out.storage])
        return out

    def _float_dtype(self, dtype, what):
        dt = dtypes.normalize(dtype)
        if dt not in (_F32, _F64):
            raise UnsupportedError(f"Unsupported dtype {dt!r} for {what}: float32 or float64")
        return dtypes.check_device(dt, self.context)

    def _floats(self, mode, a, b, size, dtype, what, out=None):
        dt = self._float_dtype(dtype, what)
        shape = _shape(size)
        if out is not None:
            shape = _draw_target(out, shape, dt, what)
        got = self._draw("float", dt, shape, 2 if dt == _F64 else 4, (mode, a, b), out=out)
        return got if out is not None else _scalar(got, shape, float)

    def _affine(self, mode, a, b, size, dt):
        """a + b * X for array-valued a or b (GpuArrays of dtype dt): X drawn in their
        broadcast shape."""
        shape = _shape(size)
        params = (a, b)
        full = broadcast_shape([p.shape for p in params])
        if shape is not None:
            if not _broadcasts_to(full, shape):
                raise ShapeError(f"shape mismatch: parameters of shapes "
                                 f"{[p.shape for p in params]} do not broadcast to size {shape}")
            full = shape
        base = self._draw("float", dt, full, 2 if dt == _F64 else 4, (mode, 0, 1))
        return params[0] + params[1] * base

    # -- floats
    def random(self, size=None, dtype=np.float64, out=None):
        """Uniform floats in [0, 1); into `out` (a GpuArray of `dtype`) if given."""
        return self._floats(_UNIFORM, 0, 1, size, dtype, "random", out)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64):
        """low + (high - low) * u, u uniform in [0, 1) (may reach high by rounding)."""
        if _is_array(low) or _is_array(high):
            if not isinstance(low, ArrayBase) and not isinstance(high, ArrayBase):
                _check_finite(np.subtract(high, low, dtype=np.float64))
            dt = self._float_dtype(dtype, "uniform")
            lo, hi = (self._param(v, dt) for v in (low, high))
            return self._affine(_UNIFORM, lo, hi - lo, size, dt)
        span = float(high) - float(low)
        _check_finite(span)
        return self._floats(_UNIFORM, float(low), span, size, dtype, "uniform")

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=np.float64):
        """loc + scale * z, z standard normal (Box-Muller)."""
        _check_scale(scale)
        if _is_array(loc) or _is_array(scale):
            dt = self._float_dtype(dtype, "normal")
            return self._affine(_NORMAL, self._param(loc, dt), self._param(scale, dt), size, dt)
        return self._floats(_NORMAL, float(loc), float(scale), size, dtype, "normal")

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        """Standard normal floats (Box-Muller on pairs of uniforms); into `out` if given."""
        return self._floats(_NORMAL, 0, 1, size, dtype, "standard_normal", out)

    def standard_exponential(self, size=None, dtype=np.float64, method="zig", out=None):
        """-log(1 - u): exponential floats of mean 1; into `out` if given. Both methods
        ('zig', 'inv') draw by inversion: the distribution is numpy's, the numbers not."""
        if method not in ("zig", "inv"):
            raise ArgumentError(f"method must be 'zig' or 'inv', not {method!r}")
        return self._floats(_EXPONENTIAL, 0, 1, size, dtype, "standard_exponential", out)

    def exponential(self, scale=1.0, size=None, dtype=np.float64):
        """scale * -log(1 - u)."""
        _check_scale(scale)
        if _is_array(scale):
            dt = self._float_dtype(dtype, "exponential")
            return self._affine(_EXPONENTIAL, self._param(0.0, dt), self._param(scale, dt),
                                size, dt)
        return self._floats(_EXPONENTIAL, 0, float(scale), size, dtype, "exponential")

    # -- integers
    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """Uniform integers in [low, high) ([low, high] with endpoint=True), unbiased."""
        dt = dtypes.normalize(dtype)
        if dt.kind not in "biu":
            raise UnsupportedError(f"Unsupported dtype {dt!r} for integers")
        if high is None:
            low, high = 0, low
        if _is_array(low) or _is_array(high):
            raise UnsupportedError("integers with array-valued low or high is not supported; "
                                   "draw with scalar bounds, or rng.random() and scale")
        shape = _shape(size)
        if shape is not None and math.prod(shape) == 0:
            return ArrayBase._empty(self.context, shape, dt)
        low, high = int(low), int(high)
        top = high if endpoint else high - 1
        lo_bound, hi_bound = (0, 1) if dt.kind == "b" else (np.iinfo(dt).min, np.iinfo(dt).max)
        if low < lo_bound:
            raise ArgumentError(f"low is out of bounds for {dt}: {low} < {lo_bound}")
        if top > hi_bound:
            raise ArgumentError(f"high is out of bounds for {dt}: {high} > "
                                f"{hi_bound + (0 if endpoint else 1)}")
        if low > top:
            what = "low > high" if endpoint else "high <= 0" if low == 0 else "low >= high"
            raise ArgumentError(f"{what} (low={low}, high={high}, endpoint={endpoint})")
        span = top - low + 1
        if span <= 2**32:
            wide, range_, per_block = 0, span, 4
            thresh = (2**32 - span) % span
        else:
            wide, range_, per_block = 1, span & _MASK64, 2
            thresh = (2**64 - span) % span
        out = self._draw("int", dt, shape, per_block, (low & _MASK64, range_, thresh, wide))
        return _scalar(out, shape)

    def _sort_keys(self, n):
        """A uniformly random permutation of range(n) (int64): argsort of 64-bit keys."""
        if n == 0:
            return ArrayBase._empty(self.context, (0,), _I64)
        keys = self.integers(0, 2**64, n, dtype=np.uint64)
        perm = argsort(keys)
        return perm if perm.dtype == _I64 else perm.astype(_I64)

    # -- permutations
    def permutation(self, x, axis=0):
        """A permuted arange(x) for an integer x, else a permuted copy of x along `axis`."""
        if isinstance(x, numbers.Integral | np.integer):
            _normalize_axis(axis, 1)
            return self._sort_keys(max(int(x), 0))
        a = self._as_array(x)
        axis = _normalize_axis(axis, a.ndim)
        return take(a, self._sort_keys(a.shape[axis]), axis=axis)

    def shuffle(self, x, axis=0):
        """Permute x (a GpuArray, or a numpy array) in place along `axis`."""
        if not isinstance(x, ArrayBase | np.ndarray):
            raise ArgumentTypeError(f"shuffle works in place on a GpuArray or a numpy array, "
                                    f"not {type(x).__name__}")
        if x.ndim == 0:
            raise ArgumentTypeError("shuffle needs an array of at least 1 dimension, "
                                    "got a 0-d array")
        if isinstance(x, np.ndarray):
            x[...] = self.permutation(asarray(x, context=self.context), axis).get()
            return
        x._check_writeable()
        x._assign(self.permutation(x, axis))

    def permuted(self, x, *, axis=None, out=None):
        """A copy of x with each slice along `axis` permuted independently (None: the
        flattened array), or written into `out` (a GpuArray of x's shape; out=x shuffles
        in place)."""
        a = self._as_array(x)
        if out is not None:
            _check_out(out, "permuted")
            if out.shape != a.shape:
                raise ShapeError(f"out must have the same shape as x: out {out.shape}, "
                                 f"x {a.shape}")
            if not np.can_cast(a.dtype, out.dtype, "safe"):
                raise ArgumentTypeError(f"Cannot cast array data from dtype('{a.dtype}') to "
                                        f"dtype('{out.dtype}') according to the rule 'safe'")
        if axis is None:
            got = take(a, self._sort_keys(a.size)).reshape(a.shape)
        else:
            axis = _normalize_axis(axis, a.ndim)
            if a.size == 0:
                got = a.copy()
            else:
                keys = self.integers(0, 2**64, a.shape, dtype=np.uint64)
                got = take_along_axis(a, argsort(keys, axis=axis), axis)
        return got if out is None else out._assign(got)

    def bytes(self, length):
        """`length` random bytes (the stream's next 32-bit words, little-endian)."""
        n = operator.index(length)
        if n < 0:
            raise ArgumentError(f"length must be non-negative, got {n}")
        words = self.integers(0, 2**32, -(-n // 4), dtype=np.uint32).get()
        return words.astype("<u4").tobytes()[:n]

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """Samples of arange(a) (a an integer) or of a's entries along `axis`.

        Without replacement: the first of a random order (sorted random keys); with p,
        Efraimidis-Spirakis keys e / p, e exponential, which is sequential sampling by p,
        the distribution numpy's algorithm draws from. `shuffle` is accepted; the order is
        random either way.
        """
        arr = None
        if isinstance(a, numbers.Integral | np.integer) or (
                isinstance(a, np.ndarray) and a.ndim == 0 and a.dtype.kind in "iu"):
            pop = int(a)
        else:
            arr = self._as_array(a)
            if arr.ndim == 0:
                raise ArgumentError("a must be a sequence or an integer, not a 0-d array")
            axis = _normalize_axis(axis, arr.ndim)
            pop = arr.shape[axis]
        shape = _shape(size)
        count = 1 if shape is None else math.prod(shape)
        if pop <= 0 and count:
            raise ArgumentError(f"a must be a positive integer unless no samples are taken "
                                f"(a={a})" if arr is None else
                                "a cannot be empty unless no samples are taken")
        if p is not None:
            cdf, total, nonzero = self._cdf(p, pop)
        if not replace and count > pop:
            raise ArgumentError(f"Cannot take a larger sample than population when replace "
                                f"is False (sample of {count}, population {pop})")
        if p is not None and not replace and nonzero < count:
            raise ArgumentError(f"Fewer non-zero entries in p than size ({nonzero} < {count})")
        if replace and p is None:
            idx = self.integers(0, max(pop, 1), (1,) if shape is None else shape)
        elif replace:
            dt = cdf.dtype
            idx = self._draw("cdf", dt, shape, 2 if dt == _F64 else 4,
                             (cdf.storage, pop, dt.type(total)), inputs=(cdf,))
        else:
            idx = self._sample_without(pop, count, p, cdf if p is not None else None)
            idx = idx.reshape((1,) if shape is None else shape)
        if arr is None:
            return int(idx.get()[0]) if shape is None else idx
        out = take(arr, idx, axis=axis)
        if shape is None:  # drop the sample axis; numpy gives a scalar for 1-d a
            out = out.reshape(arr.shape[:axis] + arr.shape[axis + 1:])
            return out.get()[()] if out.ndim == 0 else out
        return out

    def _sample_without(self, pop, count, p, cdf):
        """`count` distinct indices of range(pop), by p (a cdf on the device) if given."""
        if count == 0:
            return ArrayBase._empty(self.context, (0,), _I64)
        if p is None:
            return self._sort_keys(pop)[:count]
        weights = asarray(p if isinstance(p, ArrayBase) else np.asarray(p, np.float64),
                          cdf.dtype, context=self.context)
        keys = self.standard_exponential(pop, cdf.dtype) / weights  # p == 0: +inf, last
        order = argsort(keys)
        return (order if order.dtype == _I64 else order.astype(_I64))[:count]

    def _cdf(self, p, pop):
        """(running sum of p on the device, its total, count of p > 0), after numpy's checks."""
        ctx = self.context
        dt = _F64 if ctx.fp64 else _F32
        if isinstance(p, ArrayBase):
            _check_p_shape(p.ndim, p.size, pop)
            smallest = float(amin(p)) if p.size else 0.0
            cdf = cumsum(p.astype(dt))
            total = float(cdf[-1]) if p.size else 0.0
            _check_p_values(smallest, total, np.sqrt(np.finfo(np.float64).eps))
            return cdf, total, int(count_nonzero(p))
        atol = np.sqrt(np.finfo(np.float64).eps)
        if isinstance(p, np.ndarray) and p.dtype.kind == "f":
            atol = max(atol, np.sqrt(np.finfo(p.dtype).eps))
        host = np.asarray(p, np.float64)
        _check_p_shape(host.ndim, host.size, pop)
        host_cdf = np.cumsum(host)
        smallest = float(host.min()) if host.size else 0.0
        if np.isnan(host).any():
            smallest = math.nan
        _check_p_values(smallest, float(np.sum(host)), atol)
        cdf = asarray(host_cdf.astype(dt), context=ctx)
        return cdf, float(host_cdf[-1]), int(np.count_nonzero(host))

    def _param(self, value, dt):
        """A distribution parameter as a GpuArray of dt on this generator's context."""
        if isinstance(value, ArrayBase):
            return asarray(value, dt, context=self.context)
        return asarray(np.asarray(value, dt), context=self.context)

    def _as_array(self, x):
        if isinstance(x, ArrayBase):
            return x
        return asarray(np.asarray(x), context=self.context)


def _check_out(out, what):
    if not isinstance(out, ArrayBase):
        raise ArgumentTypeError(f"{what}: out must be a GpuArray, not {type(out).__name__}")
    out._check_writeable()


def _draw_target(out, shape, dt, what):
    """The shape of a draw of `dt` into `out`, after numpy's checks of out against size."""
    _check_out(out, what)
    if shape is not None and shape != out.shape:
        raise ShapeError(f"{what}: size {shape} must match out.shape {out.shape} when used "
                         f"together")
    if out.dtype != dt:
        raise ArgumentTypeError(f"{what}: supplied output array has the wrong type: "
                                f"expected {dt}, got {out.dtype}")
    return out.shape


def _broadcasts_to(shape, target):
    return len(shape) <= len(target) and all(
        n in (1, t) for n, t in zip(reversed(shape), reversed(target)))


def _check_p_shape(ndim, size, pop):
    if ndim != 1:
        raise ArgumentError(f"p must be 1-dimensional, got {ndim} dimensions")
    if size != pop:
        raise ArgumentError(f"a and p must have same size ({pop} and {size})")


def _check_p_values(smallest, total, atol):
    if math.isnan(smallest) or math.isnan(total):
        raise ArgumentError("Probabilities contain NaN")
    if smallest < 0:
        raise ArgumentError(f"Probabilities are not non-negative (smallest {smallest})")
    if abs(total - 1.0) > atol:
        raise ArgumentError(f"Probabilities do not sum to 1 (sum {total!r}, tolerance "
                            f"{atol:.3g})")


def _check_finite(span):
    if not np.all(np.isfinite(span)):
        raise ArgumentError("high - low range exceeds valid bounds (it is not finite)")


def _check_scale(scale):
    if isinstance(scale, ArrayBase):
        bad = scale.size and float(amin(scale)) < 0
    else:
        bad = np.any(np.asarray(scale) < 0)
    if bad:
        raise ArgumentError("scale < 0")


def default_rng(seed=None, context=None):
    """A Generator on a new Philox stream of `seed` (None: fresh entropy from the OS; an int,
    a sequence of ints or a SeedSequence), drawing on `context` (None: the default one).

    Examples
    --------
    >>> rng = ga.random.default_rng(42)
    >>> u = rng.random((2, 3), dtype=np.float32)
    >>> u.shape, u.dtype, bool(((u.get() >= 0) & (u.get() < 1)).all())
    ((2, 3), dtype('float32'), True)
    >>> bool((ga.random.default_rng(42).random(3) == ga.random.default_rng(42).random(3)).all())
    True
    """
    if isinstance(seed, Generator):
        return seed if context is None else Generator(seed.bit_generator, context)
    return Generator(Philox(seed), context)


def _legacy_seed(seed):
    """`seed` after numpy's RandomState checks: None, an int or a sequence of ints in
    [0, 2**32) (dask passes 624 words), a SeedSequence or a Philox."""
    if seed is None or isinstance(seed, np.random.SeedSequence | Philox):
        return seed
    words = np.asarray(seed, dtype=object).ravel()
    if not all(isinstance(w, numbers.Integral | np.integer) and not isinstance(w, bool)
               for w in words):
        raise ArgumentTypeError(f"seed must be None, an int or a sequence of ints, "
                                f"got {seed!r}")
    if not words.size:
        raise ArgumentError("Seed must be non-empty")
    bad = [int(w) for w in words if not 0 <= w < 2**32]
    if bad:
        raise ArgumentError(f"Seed must be between 0 and 2**32 - 1, got {bad[0]}")
    return seed


class RandomState:
    """numpy's legacy RandomState interface on the device, drawn by gpuarr's Philox
    Generator: `seed` as numpy's (None, an int or ints in [0, 2**32)), draws on `context`.

    The stream is Philox4x32-10, not numpy's MT19937: a seed gives other numbers than
    numpy's RandomState (and the same as `default_rng(seed)`), from the same distributions.
    `get_state` and `set_state` carry Philox states (dicts), not MT19937 tuples. numpy's
    other distributions raise UnsupportedError.
    """

    def __init__(self, seed=None, context=None):
        self._generator = Generator(_legacy_seed(seed), context)

    context = property(lambda self: self._generator.context,
                       doc="the Context the draws land on")

    def seed(self, seed=None):
        """Restart the stream from `seed` (None: fresh entropy from the OS)."""
        self._generator = Generator(_legacy_seed(seed), self.context)

    def get_state(self, legacy=True):
        """The Philox state, a dict (`legacy` is accepted: there is no MT19937 tuple)."""
        return self._generator.bit_generator.state

    def set_state(self, state):
        """Set the state `get_state` returned."""
        if isinstance(state, tuple):
            raise UnsupportedError(f"set_state got a {state[0] if state else ''} tuple: "
                                   f"gpuarr's RandomState is a Philox stream and takes the "
                                   f"dict its get_state() returns")
        self._generator.bit_generator.state = state

    def random_sample(self, size=None, dtype=np.float64):
        """Uniform floats in [0, 1)."""
        return self._generator.random(size, dtype)

    random = random_sample

    def rand(self, *args):
        """Uniform floats in [0, 1) of shape (d0, d1, ...); a float without dimensions."""
        return self._generator.random(args or None)

    def randn(self, *args):
        """Standard normal floats of shape (d0, d1, ...); a float without dimensions."""
        return self._generator.standard_normal(args or None)

    def randint(self, low, high=None, size=None, dtype=int):
        """Integers in [low, high), or [0, low) without high; a Python int for size=None
        and dtype=int, as numpy's."""
        got = self._generator.integers(low, high, size, np.int64 if dtype is int else dtype)
        return int(got) if size is None and dtype is int else got

    def random_integers(self, low, high=None, size=None):
        """Integers in [low, high], or [1, low] without high (deprecated, as numpy's)."""
        if high is None:
            low, high = 1, low
        warnings.warn(f"This function is deprecated. Please call randint({low}, {high} + 1) "
                      f"instead", DeprecationWarning, stacklevel=2)
        return self._generator.integers(low, high, size, endpoint=True)

    def tomaxint(self, size=None):
        """Integers in [0, 2**63 - 1]; a Python int for size=None."""
        got = self._generator.integers(0, 2**63 - 1, size, endpoint=True)
        return int(got) if size is None else got

    def bytes(self, length):
        """`length` random bytes."""
        return self._generator.bytes(length)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64):
        """Uniform floats in [low, high)."""
        return self._generator.uniform(low, high, size, dtype)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=np.float64):
        """Normal floats of mean `loc` and deviation `scale`."""
        return self._generator.normal(loc, scale, size, dtype)

    def standard_normal(self, size=None, dtype=np.float64):
        """Normal floats of mean 0 and deviation 1."""
        return self._generator.standard_normal(size, dtype)

    def standard_exponential(self, size=None, dtype=np.float64):
        """Exponential floats of scale 1."""
        return self._generator.standard_exponential(size, dtype)

    def exponential(self, scale=1.0, size=None, dtype=np.float64):
        """Exponential floats of scale `scale`."""
        return self._generator.exponential(scale, size, dtype)

    def choice(self, a, size=None, replace=True, p=None):
        """Samples of the 1-d `a` (or of arange(a)), with probabilities `p` if given."""
        if (a.ndim if isinstance(a, ArrayBase) else np.ndim(a)) > 1:
            raise ArgumentError(f"a must be 1-dimensional, got {np.ndim(a)} dimensions")
        return self._generator.choice(a, size, replace, p)

    def permutation(self, x):
        """A permuted arange(x) for an integer x, else a permuted copy of x along axis 0."""
        return self._generator.permutation(x)

    def shuffle(self, x):
        """Permute x (a GpuArray, or a numpy array) in place along axis 0."""
        self._generator.shuffle(x)

    def __getattr__(self, name):
        if name in _LEGACY_NAMES:
            raise UnsupportedError(
                f"RandomState.{name} is not drawn on the device; gpuarr's RandomState has "
                f"{', '.join(_OWN_NAMES)} (draw with numpy's RandomState and gpuarr.asarray "
                f"the result)")
        raise AttributeError(f"'RandomState' object has no attribute {name!r}")

    def __repr__(self):
        return f"RandomState({self._generator.bit_generator!r}, context={self.context.name!r})"


_OWN_NAMES = sorted(n for n in vars(RandomState) if not n.startswith("_") and n != "context")
_LEGACY_NAMES = frozenset(n for n in dir(np.random.RandomState) if not n.startswith("_"))


__all__ = ["Generator", "Philox", "RandomState", "default_rng"]
