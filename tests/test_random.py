"""gpuarr.random against Random123's known answers and a numpy model of the stream.

The model below recomputes Philox4x32-10 in numpy and follows the documented stream rule
(block b = Philox(counter (b lo, b hi, s0, s1), key); a draw takes whole blocks), so most
draws are checked bit for bit; distributions are checked with fixed seeds at n = 2**20.
Kernels are keyed by kind and dtype only: each dtype below costs one ~1.4 s build on PoCL.
"""

import math

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import random as gr
from gpuarr.errors import (
    ArgumentError,
    ArgumentTypeError,
    AxisError,
    GpuArrayError,
    ReadOnlyError,
    ShapeError,
    UnsupportedError,
)

M32 = 0xFFFFFFFF
N = 2**20

# Random123's kat_vectors for philox4x32 10: counter words, key words, result words.
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((M32,) * 4, (M32,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


# ---------------------------------------------------------------- the numpy model

def philox(ctr, key):
    """Philox4x32-10 of counters ctr (n, 4) under key (k0, k1), in numpy."""
    c = [np.asarray(ctr[:, j], np.uint64) for j in range(4)]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    m0, m1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for r in range(10):
        if r:
            k0, k1 = (k0 + np.uint64(0x9E3779B9)) & np.uint64(M32), \
                     (k1 + np.uint64(0xBB67AE85)) & np.uint64(M32)
        p0, p1 = m0 * c[0], m1 * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0, p1 & np.uint64(M32),
             (p0 >> np.uint64(32)) ^ c[3] ^ k1, p0 & np.uint64(M32)]
    return np.stack(c, axis=1).astype(np.uint32)


def blocks(state, count, attempt=0):
    """(count, 4) words of the blocks from state's position on (retry key for attempt > 0)."""
    b = (np.arange(count, dtype=np.uint64) + np.uint64(state["position"]))
    s0, s1 = state["stream"]
    ctr = np.stack([b & np.uint64(M32), b >> np.uint64(32), np.full(count, s0, np.uint64),
                    np.full(count, s1, np.uint64)], axis=1)
    k0, k1 = state["key"]
    return philox(ctr, (k0, k1 ^ ((attempt * 0x9E3779B9) & M32)))


def model_uniform(state, n, dtype):
    if dtype == np.float32:
        w = blocks(state, -(-n // 4)).ravel()[:n]
        return ((w >> 8).astype(np.float32) * np.float32(2**-24)), -(-n // 4)
    w = blocks(state, -(-n // 2)).astype(np.uint64).reshape(-1, 2)
    x = (w[:, 0] << np.uint64(32)) | w[:, 1]
    return ((x >> np.uint64(11)).astype(np.float64) * 2**-53)[:n], -(-n // 2)


def model_normal(state, n, dtype):
    count = -(-n // 4) * 4 if dtype == np.float32 else -(-n // 2) * 2
    u, used = model_uniform(state, count, dtype)
    u = u.astype(np.float64).reshape(-1, 2)
    r = np.sqrt(-2 * np.log(1 - u[:, 0]))
    z = np.stack([r * np.cos(2 * np.pi * u[:, 1]), r * np.sin(2 * np.pi * u[:, 1])], axis=1)
    return z.ravel()[:n], used


def model_integers(state, low, top, n):
    """Lemire with rejection, retries from the attempt keys: values low..top inclusive."""
    span = top - low + 1
    if span <= 2**32:
        count = -(-n // 4)
        thresh = (2**32 - span) % span
        m = blocks(state, count).astype(np.uint64) * np.uint64(span)
        bad = (m & np.uint64(M32)) < thresh
        attempt = 1
        while bad.any():
            retry = blocks(state, count, attempt).astype(np.uint64) * np.uint64(span)
            m = np.where(bad, retry, m)
            bad &= (m & np.uint64(M32)) < thresh
            attempt += 1
        values = [low + int(v) for v in (m >> np.uint64(32)).ravel()[:n]]
        return values, count
    count = -(-n // 2)
    thresh = (2**64 - span) % span
    out = []
    for e in range(n):
        b, j, attempt = e // 2, e % 2, 0
        while True:
            w = blocks({**state, "position": state["position"] + b}, 1, attempt)[0]
            x = (int(w[2 * j]) << 32) | int(w[2 * j + 1])
            if span == 2**64 or (x * span) % 2**64 >= thresh:
                break
            attempt += 1
        out.append(low + (x if span == 2**64 else (x * span) >> 64))
    return out, count


# ---------------------------------------------------------------- helpers

def ks_statistic(sample, cdf):
    x = np.sort(np.asarray(sample, np.float64))
    f = cdf(x)
    n = len(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


KS_CRIT = math.sqrt(-math.log(0.001 / 2) / 2) / math.sqrt(N)  # 0.1% level, n = N
_erf = np.frompyfunc(math.erf, 1, 1)


def normal_cdf(x):
    return 0.5 * (1 + _erf(x / math.sqrt(2)).astype(np.float64))


def chi2_crit(dof, z=3.09):
    """The chi-square 0.1% critical value (Wilson-Hilferty)."""
    return dof * (1 - 2 / (9 * dof) + z * math.sqrt(2 / (9 * dof))) ** 3


def chi2(counts):
    expected = counts.sum() / len(counts)
    return float(((counts - expected) ** 2 / expected).sum())


@pytest.fixture
def rng(ctx):
    return gr.default_rng(20240601, context=ctx)


def fresh(seed, ctx):
    return gr.default_rng(seed, context=ctx)


# ---------------------------------------------------------------- known answers and the model

@pytest.mark.parametrize("ctr,key,want", KAT)
def test_known_answers(ctx, ctr, key, want):
    assert philox(np.array([ctr], np.uint64), key)[0].tolist() == list(want)  # the model
    bitgen = gr.Philox(0)
    bitgen.state = {"key": key, "stream": ctr[2:], "position": ctr[0] | ctr[1] << 32}
    raw = bitgen.random_raw(8, context=ctx).get()
    assert raw.dtype == np.uint32
    assert raw[:4].tolist() == list(want)
    # the next block is the next counter (the 64-bit position wraps at 2**64)
    nxt = (ctr[0] | ctr[1] << 32) + 1
    assert raw[4:].tolist() == philox(np.array([[nxt & M32, (nxt >> 32) & M32, *ctr[2:]]],
                                               np.uint64), key)[0].tolist()
    assert bitgen.position == nxt + 1 & (2**64 - 1)


def test_stream_matches_model(ctx):
    g = fresh(7, ctx)
    bg = g.bit_generator
    for n, dtype in [(1001, np.float32), (13, np.float32), (999, np.float64), (1, np.float64)]:
        state = bg.state
        want, used = model_uniform(state, n, dtype)
        got = g.random(n, dtype=dtype).get()
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)
        assert bg.position == state["position"] + used
    for n, dtype, rtol in [(1001, np.float32, 2e-6), (999, np.float64, 1e-12)]:
        state = bg.state
        want, used = model_normal(state, n, dtype)
        got = g.standard_normal(n, dtype=dtype).get()
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
        assert bg.position == state["position"] + used
    state = bg.state
    u, _ = model_uniform(state, 500, np.float64)
    np.testing.assert_allclose(g.exponential(2.5, 500).get(), -2.5 * np.log(1 - u),
                               rtol=1e-12)
    np.testing.assert_allclose(fresh(7, ctx).uniform(-3, 5, 10).get(),
                               -3 + 8 * model_uniform(fresh(7, ctx).bit_generator.state, 10,
                                                      np.float64)[0])


# (low, high, endpoint, dtype): narrow and wide ranges, heavy rejection (span just over
# 2**31 / 2**63 rejects about half the words), full ranges, negative lows.
INT_CASES = [
    (0, 10, False, np.int64),
    (-5, 5, True, np.int8),
    (-128, 127, True, np.int8),
    (0, 2**31 + 1, False, np.int64),
    (0, 2**32, False, np.uint32),
    (0, 2**16, False, np.uint16),
    (-2**31, 2**31, False, np.int32),
    (0, 1, True, np.bool_),
    (0, 3 * 2**40, False, np.int64),
    (0, 2**63 + 1, False, np.uint64),
    (-2**63, 2**63, False, np.int64),
    (0, 2**64 - 1, True, np.uint64),
    (2**64 - 10, 2**64, False, np.uint64),
]


@pytest.mark.parametrize("low,high,endpoint,dtype", INT_CASES)
def test_integers_match_model(ctx, low, high, endpoint, dtype):
    g = fresh(11, ctx)
    state = g.bit_generator.state
    n = 1003
    got = g.integers(low, high, n, dtype=dtype, endpoint=endpoint).get()
    want, used = model_integers(state, low, high if endpoint else high - 1, n)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.array(want, dtype=object).astype(dtype))
    assert g.bit_generator.position == state["position"] + used


# ---------------------------------------------------------------- distributions

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniform_distribution(ctx, dtype):
    x = fresh(1, ctx).random(N, dtype=dtype).get().astype(np.float64)
    assert x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 5 * math.sqrt(1 / 12 / N)
    assert abs(x.var() - 1 / 12) < 5 * math.sqrt(1 / 180 / N)
    assert ks_statistic(x, lambda v: v) < KS_CRIT
    y = fresh(2, ctx).uniform(-2.0, 6.0, N, dtype=dtype).get().astype(np.float64)
    assert y.min() >= -2 and y.max() <= 6
    assert ks_statistic(y, lambda v: (v + 2) / 8) < KS_CRIT


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_distribution(ctx, dtype):
    z = fresh(3, ctx).standard_normal(N, dtype=dtype).get().astype(np.float64)
    assert abs(z.mean()) < 5 / math.sqrt(N)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / N)
    assert ks_statistic(z, normal_cdf) < KS_CRIT
    y = fresh(4, ctx).normal(3.0, 2.0, (N // 4, 4), dtype=dtype).get().ravel()
    assert abs(y.mean() - 3) < 5 * 2 / math.sqrt(N)
    assert ks_statistic(y, lambda v: normal_cdf((v - 3) / 2)) < KS_CRIT
    e = fresh(5, ctx).standard_exponential(N, dtype=dtype).get().astype(np.float64)
    assert e.min() >= 0 and abs(e.mean() - 1) < 5 / math.sqrt(N)
    assert ks_statistic(e, lambda v: -np.expm1(-v)) < KS_CRIT


@pytest.mark.parametrize("low,high,bins", [(0, 1000, 1000), (-7, 3 * 2**30, 1000),
                                            (0, 10**15, 500)])
def test_integers_uniform(ctx, low, high, bins):
    x = fresh(6, ctx).integers(low, high, N).get()
    assert x.min() >= low and x.max() < high
    k = ((x - low).astype(object) * bins // (high - low)).astype(np.int64)
    counts = np.bincount(k, minlength=bins)
    assert chi2(counts) < chi2_crit(bins - 1)


# ---------------------------------------------------------------- streams

def test_same_seed_same_numbers(ctx):
    a, b = fresh(99, ctx), fresh(99, ctx)
    for draw in (lambda g: g.random(777), lambda g: g.normal(1, 2, 333, dtype=np.float32),
                 lambda g: g.integers(-9, 9, 101)):
        np.testing.assert_array_equal(draw(a).get(), draw(b).get())
    assert fresh([1, 2, 3], ctx).random() == fresh([1, 2, 3], ctx).random()
    assert fresh(np.random.SeedSequence(5), ctx).random() == fresh(5, ctx).random()
    assert fresh(None, ctx).random(4).get().tolist() != fresh(None, ctx).random(4).get().tolist()


def test_devices_give_the_same_numbers(ctx_pair):
    first, second = ctx_pair
    for draw in (lambda g: g.random(4099), lambda g: g.standard_normal(4097, np.float32),
                 lambda g: g.normal(0, 1, 4097), lambda g: g.integers(0, 2**40, 555)):
        got = [draw(gr.default_rng(314, context=c)) for c in (first, second)]
        assert got[0].context is first and got[1].context is second
        np.testing.assert_array_equal(got[0].get(), got[1].get())


def test_split_invariance(ctx):
    """Draws of whole blocks continue each other; a part-used block is skipped."""
    for dtype in (np.float32, np.float64):
        g, whole = fresh(8, ctx), fresh(8, ctx).random(2000, dtype=dtype).get()
        parts = np.concatenate([g.random(1000, dtype=dtype).get(),
                                g.random(1000, dtype=dtype).get()])
        np.testing.assert_array_equal(parts, whole)
    g, whole = fresh(8, ctx), fresh(8, ctx).random(9, dtype=np.float32).get()
    g.random(3, dtype=np.float32)  # 3 words: the whole first block
    np.testing.assert_array_equal(g.random(5, dtype=np.float32).get(), whole[4:9])
    g, whole = fresh(8, ctx), fresh(8, ctx).standard_normal(600).get()
    np.testing.assert_array_equal(np.concatenate([g.standard_normal(200).get(),
                                                  g.standard_normal(400).get()]), whole)
    g, whole = fresh(8, ctx), fresh(8, ctx).integers(0, 10, 800).get()
    np.testing.assert_array_equal(np.concatenate([g.integers(0, 10, 400).get(),
                                                  g.integers(0, 10, 400).get()]), whole)
    # the position counts blocks: advance() skips them
    g, whole = fresh(8, ctx), fresh(8, ctx).random(12, dtype=np.float32).get()
    g.bit_generator.advance(2)
    np.testing.assert_array_equal(g.random(4, dtype=np.float32).get(), whole[8:])
    assert g.bit_generator.position == 3


def test_independent_streams(ctx):
    a, b = fresh(1, ctx), fresh(2, ctx)
    kids = a.spawn(2)
    grandkid = kids[0].spawn(1)[0]
    draws = [g.random(N // 4).get() for g in (a, b, *kids, grandkid)]
    for i in range(len(draws)):
        for j in range(i):
            assert abs(np.corrcoef(draws[i], draws[j])[0, 1]) < 5 / math.sqrt(N // 4)
    keys = {(g.bit_generator.key, g.bit_generator.stream) for g in (a, b, *kids, grandkid)}
    assert len(keys) == 5
    raws = [g.bit_generator.random_raw(64, context=ctx).get() for g in (a, b, *kids)]
    assert len({r.tobytes() for r in raws}) == 4
    assert not any(np.array_equal(raws[i][:-1], raws[j][1:])
                   for i in range(4) for j in range(4))
    assert all(k.context is ctx for k in kids)


def test_state_roundtrip(ctx):
    g = fresh(12, ctx)
    g.random(10)
    state = g.bit_generator.state
    first = g.random(6).get()
    g.bit_generator.state = state
    np.testing.assert_array_equal(g.random(6).get(), first)
    h = gr.Generator(gr.Philox(0), ctx)
    h.bit_generator.state = state
    np.testing.assert_array_equal(h.random(6).get(), first)
    assert gr.default_rng(g) is g
    assert "Philox" in repr(g) and "position" in repr(g.bit_generator)


# ---------------------------------------------------------------- sizes and scalars

def test_sizes(rng):
    assert type(rng.random()) is float
    assert type(rng.random(dtype=np.float32)) is float
    assert type(rng.standard_normal()) is float
    assert type(rng.uniform(2, 3)) is float and 2 <= rng.uniform(2, 3) < 3
    v = rng.integers(5)
    assert type(v) is np.int64 and 0 <= v < 5
    assert type(rng.integers(0, 2, dtype=np.int8)) is np.int8
    for size, shape in [(3, (3,)), ((2, 3), (2, 3)), ((), ()), (np.int64(4), (4,)),
                        ((0, 5), (0, 5)), ([2, 1, 2], (2, 1, 2))]:
        for draw in (rng.random, rng.standard_normal, lambda s: rng.integers(7, size=s)):
            pos = rng.bit_generator.position
            out = draw(size)
            assert isinstance(out, ga.GpuArray) and out.shape == shape
            assert (rng.bit_generator.position > pos) == bool(math.prod(shape))
    z = rng.random(())
    assert z.ndim == 0 and 0 <= float(z) < 1


def test_array_parameters(rng):
    loc = np.array([0.0, 10.0, -10.0])
    scale = np.array([[1.0], [0.001]])
    out = rng.normal(loc, scale)
    assert out.shape == (2, 3)
    host = out.get()
    assert np.all(np.abs(host[1] - loc) < 0.01)
    lo, hi = ga.asarray(np.array([0.0, 5.0]), context=rng.context), np.array([1.0, 6.0])
    u = rng.uniform(lo, hi, (4, 2)).get()
    assert u.shape == (4, 2) and np.all((u >= [0, 5]) & (u < [1, 6]))
    with pytest.raises(ShapeError, match="size"):
        rng.normal(loc, 1.0, size=(2, 2))


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("call,exc,words", [
    (lambda g: g.random(-1), ShapeError, "negative dimensions"),
    (lambda g: g.random(2.5), ArgumentTypeError, "size"),
    (lambda g: g.random(dtype=np.float16), UnsupportedError, "float16"),
    (lambda g: g.integers(0, 5, dtype=np.float32), UnsupportedError, "integers"),
    (lambda g: g.integers(5, 5), ArgumentError, "low >= high"),
    (lambda g: g.integers(0), ArgumentError, "high <= 0"),
    (lambda g: g.integers(5, 4, endpoint=True), ArgumentError, "low > high"),
    (lambda g: g.integers(-1, 5, dtype=np.uint8), ArgumentError, "low is out of bounds"),
    (lambda g: g.integers(0, 300, dtype=np.uint8), ArgumentError, "high is out of bounds"),
    (lambda g: g.integers(0, 2, dtype=np.int8, endpoint=True, size=(2, -1)), ShapeError,
     "negative"),
    (lambda g: g.integers(np.array([1, 2]), 5), UnsupportedError, "array-valued"),
    (lambda g: g.normal(0, -1), ArgumentError, "scale < 0"),
    (lambda g: g.uniform(0, np.inf), ArgumentError, "range exceeds valid bounds"),
    (lambda g: g.choice(5, p=[0.5, 0.5, 0.1, 0, 0]), ArgumentError, "do not sum to 1"),
    (lambda g: g.choice(5, p=[0.5, 0.5, -0.1, 0.1, 0]), ArgumentError, "not non-negative"),
    (lambda g: g.choice(5, p=[0.5, 0.5]), ArgumentError, "same size"),
    (lambda g: g.choice(5, p=[[0.2] * 5]), ArgumentError, "1-dimensional"),
    (lambda g: g.choice(5, p=[np.nan, 1, 0, 0, 0]), ArgumentError, "NaN"),
    (lambda g: g.choice(5, 6, replace=False), ArgumentError,
     "Cannot take a larger sample than population when replace is False"),
    (lambda g: g.choice(5, 3, replace=False, p=[1, 0, 0, 0, 0]), ArgumentError,
     "Fewer non-zero entries in p than size"),
    (lambda g: g.choice(0, 3), ArgumentError, "a must be a positive integer"),
    (lambda g: g.choice([], 3), ArgumentError, "a cannot be empty"),
    (lambda g: g.choice(np.ones((2, 2)), 3, axis=2), AxisError, "axis 2 is out of bounds"),
    (lambda g: g.permutation(np.ones(())), AxisError, "dimension 0"),
    (lambda g: g.shuffle([1, 2, 3]), ArgumentTypeError, "in place"),
])
def test_errors(rng, call, exc, words):
    with pytest.raises(exc, match=words) as info:
        call(rng)
    assert isinstance(info.value, GpuArrayError)


def test_seed_and_state_errors(ctx):
    with pytest.raises(ArgumentTypeError, match="seed"):
        gr.default_rng(1.5, context=ctx)
    with pytest.raises(ArgumentError, match="non-negative"):
        gr.default_rng(-1, context=ctx)
    bg = gr.Philox(0)
    with pytest.raises(ArgumentError, match="32-bit"):
        bg.state = {"key": (2**32, 0), "stream": (0, 0), "position": 0}
    with pytest.raises(ArgumentError, match="position"):
        bg.state = {"key": (0, 0), "stream": (0, 0), "position": -1}
    with pytest.raises(ArgumentError, match="state must be a dict"):
        bg.state = {"key": (0, 0)}


# ---------------------------------------------------------------- permutations and choice

def _needs(module, name):
    try:
        mod = __import__(f"gpuarr.{module}", fromlist=[name])
        getattr(mod, name)
    except (ImportError, AttributeError):
        pytest.skip(f"gpuarr.{module}.{name} is not available yet (written by another helper)")


@pytest.fixture
def sorted_keys():
    """permutation/shuffle/choice need gpuarr.sorting.argsort and gpuarr.indexing.take."""
    _needs("sorting", "argsort")
    _needs("indexing", "take")


def _model_perm(state_gen, n):
    """The permutation the stream gives: the stable argsort of n raw 64-bit keys."""
    keys = state_gen.integers(0, 2**64, n, dtype=np.uint64).get()
    return np.argsort(keys, kind="stable")


def test_permutation(ctx, sorted_keys):
    for n in (1, 2, 1000, 5000):
        g, twin = fresh(21, ctx), fresh(21, ctx)
        perm = g.permutation(n)
        assert perm.dtype == np.int64 and perm.shape == (n,)
        np.testing.assert_array_equal(perm.get(), _model_perm(twin, n))
        assert g.bit_generator.position == twin.bit_generator.position
    assert fresh(21, ctx).permutation(0).shape == (0,)
    host = np.arange(60, dtype=np.float32).reshape(10, 6)
    for view in (lambda a: a, lambda a: a[::-1], lambda a: a.T, lambda a: a[1:, ::2]):
        x = view(ga.asarray(host, context=ctx))
        g, twin = fresh(22, ctx), fresh(22, ctx)
        got = g.permutation(x).get()
        np.testing.assert_array_equal(got, view(host)[_model_perm(twin, x.shape[0])])
    got = fresh(23, ctx).permutation([3, 1, 2]).get()
    assert sorted(got.tolist()) == [1, 2, 3]


def test_shuffle(ctx, sorted_keys):
    host = np.arange(40, dtype=np.int16).reshape(8, 5)
    x = ga.asarray(host, context=ctx)
    fresh(24, ctx).shuffle(x)
    np.testing.assert_array_equal(x.get(), host[_model_perm(fresh(24, ctx), 8)])
    y = ga.asarray(host, context=ctx)
    fresh(24, ctx).shuffle(y[::-1])  # a view, in place
    np.testing.assert_array_equal(y.get()[::-1], host[::-1][_model_perm(fresh(24, ctx), 8)])
    arr = np.arange(10.0)
    fresh(25, ctx).shuffle(arr)
    np.testing.assert_array_equal(arr, np.arange(10.0)[_model_perm(fresh(25, ctx), 10)])


def test_choice(ctx, sorted_keys):
    g, twin = fresh(31, ctx), fresh(31, ctx)
    got = g.choice(10, (3, 4))
    np.testing.assert_array_equal(got.get(), twin.integers(0, 10, (3, 4)).get())
    v = g.choice(10)
    assert type(v) is int and 0 <= v < 10
    pop = np.arange(12.0).reshape(3, 4)
    g, twin = fresh(32, ctx), fresh(32, ctx)
    got = g.choice(ga.asarray(pop, context=ctx), 5, axis=1)
    np.testing.assert_array_equal(got.get(), pop[:, twin.integers(0, 4, 5).get()])
    row = fresh(33, ctx).choice(ga.asarray(pop, context=ctx))
    assert row.shape == (4,) and row.get().tolist() in pop.tolist()
    assert fresh(33, ctx).choice(np.arange(5.0)) in range(5)
    # with p: searchsorted of the normalised running sum, for the stream's uniforms
    p = np.array([0.1, 0.0, 0.25, 0.6, 0.05])
    g, twin = fresh(34, ctx), fresh(34, ctx)
    got = g.choice(5, 2000, p=p).get()
    cdf = np.cumsum(p)
    np.testing.assert_array_equal(got, np.searchsorted(cdf / cdf[-1], twin.random(2000).get(),
                                                      side="right"))
    assert 1 not in got
    got = fresh(34, ctx).choice(5, 2000, p=ga.asarray(p, context=ctx)).get()
    np.testing.assert_array_equal(got, np.searchsorted(cdf / cdf[-1],
                                                      fresh(34, ctx).random(2000).get(),
                                                      side="right"))
    # without replacement: distinct, the first of the stream's permutation
    g, twin = fresh(35, ctx), fresh(35, ctx)
    got = g.choice(1000, 30, replace=False).get()
    np.testing.assert_array_equal(got, _model_perm(twin, 1000)[:30])
    assert fresh(35, ctx).choice(7, 0, replace=False).shape == (0,)
    # without replacement with p: the smallest exponential / p keys
    g, twin = fresh(36, ctx), fresh(36, ctx)
    got = g.choice(5, 3, replace=False, p=p).get()
    with np.errstate(divide="ignore"):
        keys = twin.standard_exponential(5).get() / p
    np.testing.assert_array_equal(got, np.argsort(keys, kind="stable")[:3])
    assert len(set(got.tolist())) == 3 and 1 not in got


def test_choice_without_replacement_by_p_is_sequential(ctx, sorted_keys):
    """First picks follow p; second picks follow p renormalised without the first."""
    p = np.array([0.5, 0.3, 0.2])
    g = fresh(37, ctx)
    firsts = np.array([g.choice(3, 2, replace=False, p=p).get() for _ in range(300)])
    counts = np.bincount(firsts[:, 0], minlength=3)
    assert chi2_pearson(counts, 300 * p) < 16.3  # 2 dof, 0.03%
    second = np.bincount(firsts[firsts[:, 0] == 0, 1], minlength=3)[1:]
    assert chi2_pearson(second, second.sum() * np.array([0.6, 0.4])) < 13.8  # 1 dof, 0.02%


def chi2_pearson(counts, expected):
    return float(((counts - expected) ** 2 / expected).sum())


# ---------------------------------------------------------------- numpy's signatures

def _methods(mine, theirs):
    return sorted(n for n, v in vars(mine).items()
                  if not n.startswith("_") and callable(v) and hasattr(theirs, n))


@pytest.mark.parametrize("mine,theirs", [(gr.Generator, np.random.Generator),
                                         (gr.RandomState, np.random.RandomState)],
                         ids=["Generator", "RandomState"])
def test_numpy_signatures(mine, theirs):
    """numpy's parameters (names, kinds, defaults) lead each method's; gpuarr may add
    optional ones after them (dtype=)."""
    import inspect

    names = _methods(mine, theirs)
    assert len(names) >= 13
    for name in names:
        want = list(inspect.signature(getattr(theirs, name)).parameters.values())
        got = list(inspect.signature(getattr(mine, name)).parameters.values())
        assert [(p.name, p.kind, p.default) for p in got[:len(want)]] == \
            [(p.name, p.kind, p.default) for p in want], name
        assert all(p.default is not p.empty for p in got[len(want):]), name


# ---------------------------------------------------------------- out=

OUT_DRAWS = [("random", lambda g, **kw: g.random(**kw), model_uniform),
             ("standard_normal", lambda g, **kw: g.standard_normal(**kw), None),
             ("standard_exponential", lambda g, **kw: g.standard_exponential(**kw), None)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,draw,model", OUT_DRAWS, ids=[d[0] for d in OUT_DRAWS])
def test_out(ctx, name, draw, model, dtype):
    want = draw(fresh(41, ctx), size=(6, 5), dtype=dtype).get()
    if model is not None:
        np.testing.assert_array_equal(want.ravel(),
                                      model(fresh(41, ctx).bit_generator.state, 30, dtype)[0])
    out = ga.zeros((6, 5), dtype, context=ctx)
    g = fresh(41, ctx)
    assert draw(g, dtype=dtype, out=out) is out
    np.testing.assert_array_equal(out.get(), want)
    assert g.bit_generator.position == fresh(41, ctx).bit_generator.advance(
        -(-30 // (2 if dtype == np.float64 else 4))).position
    # size= with out=, and a strided view: written through, the rest untouched
    buf = ga.zeros((6, 10), dtype, context=ctx)
    view = buf[:, ::2]
    assert draw(fresh(41, ctx), size=(6, 5), dtype=dtype, out=view) is view
    host = buf.get()
    np.testing.assert_array_equal(host[:, ::2], want)
    assert not host[:, 1::2].any()
    flat = ga.zeros(31, dtype, context=ctx)  # an offset view
    draw(fresh(41, ctx), dtype=dtype, out=flat[1:])
    np.testing.assert_array_equal(flat.get()[1:], want.ravel())
    assert flat.get()[0] == 0


def test_out_on_another_context(ctx_pair):
    first, second = ctx_pair
    out = ga.empty(1000, np.float32, context=second)
    fresh(42, first).standard_normal(dtype=np.float32, out=out)
    np.testing.assert_array_equal(out.get(), fresh(42, first).standard_normal(1000,
                                                                               np.float32).get())


def test_standard_exponential_method(rng):
    a = fresh(43, rng.context).standard_exponential(10, method="inv").get()
    np.testing.assert_array_equal(a, fresh(43, rng.context).standard_exponential(10).get())
    with pytest.raises(ArgumentError, match="method must be 'zig' or 'inv', not 'x'"):
        rng.standard_exponential(3, method="x")


@pytest.mark.parametrize("call,exc,words", [
    (lambda g, o: g.random(out=o), ArgumentTypeError, "expected float64, got float32"),
    (lambda g, o: g.standard_normal(dtype=np.float64, out=o), ArgumentTypeError,
     "wrong type"),
    (lambda g, o: g.random(4, np.float32, out=o), ShapeError, r"size \(4,\) must match "
                                                              r"out.shape \(3,\)"),
    (lambda g, o: g.random(out=np.zeros(3)), ArgumentTypeError, "out must be a GpuArray"),
    (lambda g, o: g.standard_exponential(out=[0.0]), ArgumentTypeError, "GpuArray, not list"),
    (lambda g, o: g.random(dtype=np.float32, out=ga.broadcast_to(o[:1], (3,))), ReadOnlyError,
     "read-only"),
])
def test_out_errors(rng, call, exc, words):
    out = ga.zeros(3, np.float32, context=rng.context)
    pos = rng.bit_generator.position
    with pytest.raises(exc, match=words):
        call(rng, out)
    assert rng.bit_generator.position == pos  # nothing drawn


# ---------------------------------------------------------------- axis= and permuted

def test_permutation_and_shuffle_axis(ctx, sorted_keys):
    host = np.arange(60, dtype=np.float32).reshape(4, 3, 5)
    x = ga.asarray(host, context=ctx)
    for axis in (0, 1, 2, -1):
        got = fresh(51, ctx).permutation(x, axis=axis).get()
        perm = _model_perm(fresh(51, ctx), host.shape[axis])
        np.testing.assert_array_equal(got, np.take(host, perm, axis=axis))
        y = ga.asarray(host, context=ctx)
        fresh(51, ctx).shuffle(y, axis=axis)
        np.testing.assert_array_equal(y.get(), got)
        arr = host.copy()
        fresh(51, ctx).shuffle(arr, axis)
        np.testing.assert_array_equal(arr, got)
    assert fresh(51, ctx).permutation(7, axis=-1).shape == (7,)
    for call in (lambda g: g.permutation(x, axis=3), lambda g: g.shuffle(x, axis=-4),
                 lambda g: g.permutation(5, axis=1)):
        with pytest.raises(IndexError, match="out of bounds for array of dimension"):
            call(fresh(51, ctx))


def test_permuted(ctx, sorted_keys):
    host = np.arange(24, dtype=np.int16).reshape(4, 6)
    x = ga.asarray(host, context=ctx)
    got = fresh(52, ctx).permuted(x).get()  # axis=None: the flattened array
    np.testing.assert_array_equal(got, host.ravel()[_model_perm(fresh(52, ctx), 24)]
                                  .reshape(4, 6))
    for axis in (0, 1, -2):
        got = fresh(53, ctx).permuted(x, axis=axis)
        assert got.dtype == host.dtype and got.shape == host.shape
        keys = fresh(53, ctx).integers(0, 2**64, host.shape, dtype=np.uint64).get()
        order = np.argsort(keys, axis=axis, kind="stable")
        np.testing.assert_array_equal(got.get(), np.take_along_axis(host, order, axis))
    # the slices get their own orders: rows of arange(3), 6 orders equally likely
    rows = ga.asarray(np.tile(np.arange(3, dtype=np.int32), (6000, 1)), context=ctx)
    perms = fresh(54, ctx).permuted(rows, axis=1).get()
    np.testing.assert_array_equal(np.sort(perms, axis=1), rows.get())
    code = perms[:, 0] * 3 + perms[:, 1]  # the first two entries name the order
    counts = np.bincount(code, minlength=9)[[1, 2, 3, 5, 6, 7]]
    assert counts.sum() == 6000 and chi2(counts) < chi2_crit(5)
    # out=: in place, or into a wider dtype
    y = ga.asarray(host, context=ctx)
    assert fresh(53, ctx).permuted(y, axis=1, out=y) is y
    np.testing.assert_array_equal(y.get(), fresh(53, ctx).permuted(x, axis=1).get())
    wide = ga.zeros((4, 6), np.int64, context=ctx)
    fresh(53, ctx).permuted(host, axis=1, out=wide)
    np.testing.assert_array_equal(wide.get(), y.get())
    assert fresh(53, ctx).permuted(np.zeros((0, 3)), axis=1).shape == (0, 3)
    with pytest.raises(ShapeError, match=r"same shape as x: out \(6, 4\), x \(4, 6\)"):
        fresh(53, ctx).permuted(x, out=ga.zeros((6, 4), np.int16, context=ctx))
    with pytest.raises(ArgumentTypeError, match="'int16'\\) to dtype\\('int8'\\)"):
        fresh(53, ctx).permuted(x, out=ga.zeros((4, 6), np.int8, context=ctx))
    with pytest.raises(ArgumentTypeError, match="out must be a GpuArray"):
        fresh(53, ctx).permuted(x, out=host.copy())
    with pytest.raises(AxisError, match="axis 2 is out of bounds"):
        fresh(53, ctx).permuted(x, axis=2)


def test_bytes(rng):
    twin = fresh(20240601, rng.context)
    got = rng.bytes(10)
    assert type(got) is bytes and len(got) == 10
    words = twin.integers(0, 2**32, 3, dtype=np.uint32).get()
    assert got == words.astype("<u4").tobytes()[:10]
    assert rng.bit_generator.position == twin.bit_generator.position
    assert rng.bytes(0) == b""
    with pytest.raises(ArgumentError, match="non-negative"):
        rng.bytes(-1)


# ---------------------------------------------------------------- RandomState

def test_random_state_api(ctx, sorted_keys):
    rs = gr.RandomState(5, context=ctx)
    assert rs.context is ctx and "RandomState(Philox" in repr(rs)
    # built on the Generator of the same seed: the same numbers as default_rng(5)
    np.testing.assert_array_equal(rs.random_sample(9).get(), fresh(5, ctx).random(9).get())
    assert type(rs.rand()) is float and type(rs.random()) is float
    assert rs.rand(2, 3).shape == (2, 3) and rs.randn(4).shape == (4,)
    assert type(rs.randn()) is float
    v = rs.randint(5)
    assert type(v) is int and 0 <= v < 5
    assert type(rs.randint(5, dtype=np.int64)) is np.int64
    ints = rs.randint(-3, 4, size=(50,), dtype=np.int8)
    assert ints.dtype == np.int8 and ints.get().min() >= -3 and ints.get().max() <= 3
    assert rs.randint(3, size=2).dtype == np.int64
    with pytest.warns(DeprecationWarning, match="randint"):
        r = rs.random_integers(3, size=200).get()
    assert r.min() == 1 and r.max() == 3
    m = rs.tomaxint()
    assert type(m) is int and 0 <= m < 2**63
    assert len(rs.bytes(5)) == 5
    assert rs.uniform(2, 3, 4).shape == (4,) and 2 <= rs.uniform(2, 3) < 3
    assert rs.normal(1, 2, (2, 2), np.float32).dtype == np.float32
    for draw in (rs.standard_normal, rs.standard_exponential, lambda s: rs.exponential(2, s)):
        assert draw(3).shape == (3,)
    assert rs.choice(5, 3).shape == (3,) and 0 <= rs.choice(5) < 5
    picks = rs.choice([7.0, 8.0], 400).get()
    assert set(picks.tolist()) == {7.0, 8.0}
    assert sorted(rs.choice(10, 10, replace=False).get().tolist()) == list(range(10))
    assert rs.choice(3, 100, p=[0, 1, 0]).get().tolist() == [1] * 100
    assert sorted(rs.permutation(6).get().tolist()) == list(range(6))
    arr = np.arange(8.0)
    rs.shuffle(arr)
    assert sorted(arr.tolist()) == list(range(8)) and arr.tolist() != list(range(8))
    # seed, get_state, set_state
    rs.seed(7)
    a = rs.rand(5).get()
    state = rs.get_state()
    b = rs.rand(5).get()
    rs.seed(7)
    np.testing.assert_array_equal(rs.rand(5).get(), a)
    rs.set_state(state)
    np.testing.assert_array_equal(rs.rand(5).get(), b)
    # dask seeds each chunk with 624 words of numpy's MT19937
    words = [np.random.RandomState(s).randint(0, 2**32, 624, dtype=np.uint32) for s in (1, 2)]
    draws = [gr.RandomState(w, context=ctx).rand(4).get() for w in (*words, words[0])]
    assert not np.array_equal(draws[0], draws[1]) and np.array_equal(draws[0], draws[2])


@pytest.mark.parametrize("call,exc,words", [
    (lambda: gr.RandomState(2**32), ArgumentError, r"between 0 and 2\*\*32 - 1, got 4294967296"),
    (lambda: gr.RandomState([1, -1]), ArgumentError, r"between 0 and 2\*\*32 - 1, got -1"),
    (lambda: gr.RandomState(1.5), ArgumentTypeError, "seed must be"),
    (lambda: gr.RandomState([]), ArgumentError, "non-empty"),
    (lambda: gr.RandomState(0).set_state(np.random.RandomState(0).get_state()),
     UnsupportedError, "MT19937 tuple"),
    (lambda: gr.RandomState(0).set_state({"key": 1}), ArgumentError, "state must be a dict"),
    (lambda: gr.RandomState(0).beta(1, 2), UnsupportedError,
     r"RandomState\.beta is not drawn on the device"),
    (lambda: gr.RandomState(0).choice(np.ones((2, 2))), ArgumentError, "1-dimensional"),
    (lambda: gr.RandomState(0).randint(0), ArgumentError, "high <= 0"),
])
def test_random_state_errors(ctx, call, exc, words):
    with pytest.raises(exc, match=words):
        call()
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        gr.RandomState(0, context=ctx).nonsense  # noqa: B018


def test_random_state_distributions(ctx):
    """Not numpy's MT19937 numbers, numpy's distributions (fixed seeds, n = 2**20)."""
    rs = gr.RandomState(61, context=ctx)
    assert ks_statistic(rs.random_sample(N).get(), lambda v: v) < KS_CRIT
    assert ks_statistic(rs.randn(N).get(), normal_cdf) < KS_CRIT
    x = rs.randint(-7, 993, N).get()
    assert x.min() == -7 and x.max() == 992
    assert chi2(np.bincount(x + 7, minlength=1000)) < chi2_crit(999)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    counts = np.bincount(rs.choice(4, N, p=p).get(), minlength=4)
    assert chi2_pearson(counts, N * p) < 16.3  # 3 dof, 0.1%
    legacy = np.random.RandomState(61).random_sample(1000)
    assert not np.allclose(gr.RandomState(61, context=ctx).random_sample(1000).get(), legacy)
