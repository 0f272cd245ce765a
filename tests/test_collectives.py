"""Collectives in one process: the ranks are contexts, two PoCL devices here (three in a
subprocess with POCL_DEVICES='pthread pthread pthread'); numpy is the oracle. Each case runs
on contexts that share a cl.Context (device copies) and on contexts of their own (flag
context_sharing=never: chunks staged through pinned host memory, as between GPUs, in small
chunks and few slots so that the pipeline runs long and reuses its slots)."""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from conftest import USABLE, using_flags
from mpi_worker import DTYPES, OPS, data, reduced

import gpuarr as ga
from gpuarr import collectives, staging
from gpuarr.errors import (
    ArgumentError,
    ArgumentTypeError,
    CommError,
    ContextMismatch,
    ReadOnlyError,
    ShapeError,
    UnsupportedError,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def platform_group(n):
    """n usable devices of one platform, or None."""
    for d in USABLE:
        same = [e for e in USABLE if e.platform_index == d.platform_index]
        if len(same) >= n:
            return same[:n]
    return None


# Three ranks where this process has three devices of one platform; else test_three_devices
# runs the n3 cases in a process that has.
RANKS = [2, 3] if platform_group(3) else [2]


SHARING = ["shared", "staged"]


@pytest.fixture(scope="module", params=[(n, s) for n in RANKS for s in SHARING],
                ids=[f"n{n}-{s}" for n in RANKS for s in SHARING])
def ctxs(request, ctx):
    # (`ctx` first: the session's context must not be made inside using_flags, which drops it)
    n, sharing = request.param
    group = platform_group(n)
    if group is None:
        pytest.skip(f"needs {n} devices of one platform (test_three_devices runs "
                    f"these with POCL_DEVICES='pthread pthread pthread')")
    if sharing == "shared":
        yield [ga.init(d.name) for d in group]
        return
    with using_flags("context_sharing=never,print_active_device=False"):
        ctxs = [ga.init(d.name) for d in group]
        assert len({c.cl_context for c in ctxs}) == n
        yield ctxs


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    """Staged chunks of 40 bytes (a partial item for 16-byte dtypes), two slots."""
    monkeypatch.setattr(staging, "CHUNK_BYTES", 40)
    monkeypatch.setattr(staging, "SLOTS", 2)


@pytest.fixture(params=["tree", "ring"])
def algo(request, monkeypatch):
    """Shared contexts: a tree or a ring; staged: whole to every rank, or reduce-scatter
    then all-gather."""
    monkeypatch.setattr(collectives, "RING_BYTES", 1 << 62 if request.param == "tree" else 0)
    return request.param


def upload(hosts, ctxs):
    return [ga.asarray(h, context=c) for h, c in zip(hosts, ctxs)]


def check(results, want, ctxs):
    """Every rank's result: on its context, numpy's values, and the same bits as rank 0's."""
    first = results[0].get()
    for r, (res, ctx) in enumerate(zip(results, ctxs)):
        assert res.context is ctx
        got = res.get()
        assert got.dtype == want.dtype and got.shape == want.shape, (r, got.dtype, got.shape)
        np.testing.assert_array_equal(got, first)
        if want.dtype.kind in "fc":
            rtol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
            np.testing.assert_allclose(got, want, rtol=rtol)
        else:
            np.testing.assert_array_equal(got, want)


def rank_data(seed, n, shape, dtype):
    return [data(seed, r, shape, dtype) for r in range(n)]


# ---------------------------------------------------------------- the collectives

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_all_reduce(ctxs, algo, op, dtype):
    hosts = rank_data(1, len(ctxs), (5, 7), dtype)  # 35 elements: uneven ring chunks
    check(collectives.all_reduce(upload(hosts, ctxs), op), reduced(op, hosts), ctxs)


def test_all_reduce_layouts(ctxs, algo):
    n = len(ctxs)
    hosts = rank_data(2, n, (6, 8), "float32")
    xs = upload(hosts, ctxs)
    want = reduced("sum", [h[::-1, ::2].T for h in hosts])
    bigs = [ga.zeros((4, 6, 3), "float32", context=c) for c in ctxs]
    dests = [b[:, :, 1] for b in bigs]  # strided targets
    out = collectives.all_reduce([x[::-1, ::2].T for x in xs], "+", dest=dests)
    assert all(o is d for o, d in zip(out, dests))
    check(dests, want, ctxs)
    assert not any(np.asarray(b[:, :, ::2]).any() for b in bigs)
    fs = collectives.all_reduce(upload([np.asfortranarray(h) for h in hosts], ctxs), "max")
    assert all(f.flags.f_contiguous and not f.flags.c_contiguous for f in fs)
    check(fs, reduced("max", hosts), ctxs)
    mixed = upload([h if r % 2 else np.asfortranarray(h) for r, h in enumerate(hosts)], ctxs)
    check(collectives.all_reduce(mixed, "min"), reduced("min", hosts), ctxs)
    # in place
    assert collectives.all_reduce(xs, "sum", dest=xs) == xs
    check(xs, reduced("sum", hosts), ctxs)
    # 0-size and 0-d
    empty = rank_data(3, n, (0, 3), "int64")
    check(collectives.all_reduce(upload(empty, ctxs)), reduced("sum", empty), ctxs)
    scalars = rank_data(4, n, (), "float64")
    check(collectives.all_reduce(upload(scalars, ctxs), "prod"), reduced("prod", scalars), ctxs)
    cplx = rank_data(5, n, (4,), "complex128")
    check(collectives.all_reduce(upload(cplx, ctxs), "*"), reduced("prod", cplx), ctxs)


@pytest.mark.parametrize("op, dtype", [("sum", "float64"), ("min", "int32"), ("prod", "uint64")])
def test_reduce(ctxs, op, dtype):
    n = len(ctxs)
    hosts = rank_data(6, n, (4, 6), dtype)
    for root in (0, n - 1):
        got = collectives.reduce(upload(hosts, ctxs), op, root=root)
        assert [g is None for g in got] == [r != root for r in range(n)]
        check([got[root]], reduced(op, hosts), [ctxs[root]])
    dest = ga.empty((4, 6), dtype, context=ctxs[1])
    got = collectives.reduce(upload(hosts, ctxs), op, dest=dest, root=1)
    assert got[1] is dest
    check([dest], reduced(op, hosts), [ctxs[1]])


@pytest.mark.parametrize("dtype", ["bool", "float16", "complex128", "int64"])
def test_broadcast(ctxs, dtype):
    n = len(ctxs)
    hosts = rank_data(7, n, (3, 5), dtype)
    xs = upload(hosts, ctxs)
    assert collectives.broadcast(xs, root=n - 1) == xs
    check(xs, hosts[n - 1], ctxs)
    bases = upload(rank_data(8, n, (4, 9), dtype), ctxs)
    want = [b.get() for b in bases]
    collectives.broadcast([b[:, ::3] for b in bases], root=0)
    for w in want:
        w[:, ::3] = want[0][:, ::3]
    for b, w in zip(bases, want):
        np.testing.assert_array_equal(b.get(), w)


@pytest.mark.parametrize("nd_up", [0, 1, 2])
@pytest.mark.parametrize("order", ["C", "F"])
def test_all_gather(ctxs, nd_up, order):
    n = len(ctxs)
    hosts = [np.asarray(h, order=order) for h in rank_data(9, n, (3, 4), "int8")]
    got = collectives.all_gather(upload(hosts, ctxs), nd_up=nd_up)
    if order == "C":
        want = np.concatenate(hosts) if nd_up == 0 else np.stack(hosts).reshape(
            (n,) + (1,) * (nd_up - 1) + (3, 4))
    else:
        want = np.concatenate(hosts, axis=1) if nd_up == 0 else np.stack(hosts, -1).reshape(
            (3, 4) + (1,) * (nd_up - 1) + (n,))
        assert all(g.flags.f_contiguous for g in got)
    check(got, want, ctxs)


def test_all_gather_dest_and_0d(ctxs):
    n = len(ctxs)
    hosts = rank_data(10, n, (2, 3), "float32")
    dests = [ga.empty((n * 6,), "float32", context=c) for c in ctxs]  # any shape of that size
    assert collectives.all_gather(upload(hosts, ctxs), dest=dests) == dests
    check(dests, np.stack(hosts).ravel(), ctxs)
    scalars = rank_data(11, n, (), "float64")
    check(collectives.all_gather(upload(scalars, ctxs)), np.stack(scalars), ctxs)
    xs = upload(hosts, ctxs)  # a source inside its own dest is read first
    bigs = [ga.zeros((n, 2, 3), "float32", context=c) for c in ctxs]
    for b, x in zip(bigs, xs):
        b[0] = x
    collectives.all_gather([b[0] for b in bigs], dest=bigs)
    check(bigs, np.stack(hosts), ctxs)


@pytest.mark.parametrize("op, dtype", [("sum", "float32"), ("prod", "int64"), ("max", "uint64"),
                                       ("min", "int8")])
def test_reduce_scatter(ctxs, op, dtype):
    n = len(ctxs)
    hosts = rank_data(12, n, (2 * n, 3), dtype)
    got = collectives.reduce_scatter(upload(hosts, ctxs), op)
    total = reduced(op, hosts)
    for r, g in enumerate(got):
        check([g], total[2 * r:2 * r + 2], [ctxs[r]])


def test_reduce_scatter_shapes(ctxs):
    n = len(ctxs)
    hosts = rank_data(13, n, (n, 4), "float64")  # parts of length 1: the axis goes
    got = collectives.reduce_scatter(upload(hosts, ctxs))
    for r, g in enumerate(got):
        check([g], reduced("sum", hosts)[r], [ctxs[r]])
    hosts = [np.asfortranarray(h) for h in rank_data(14, n, (3, 2 * n), "int32")]
    got = collectives.reduce_scatter(upload(hosts, ctxs), "max")  # F order: the last axis
    for r, g in enumerate(got):
        check([g], reduced("max", hosts)[:, 2 * r:2 * r + 2], [ctxs[r]])
    hosts = rank_data(15, n, (2 * n, 3), "int32")
    dests = [ga.empty((2, 3, 1), "int32", context=c)[:, :, 0] for c in ctxs]
    collectives.reduce_scatter(upload(hosts, ctxs), "sum", dest=dests)
    for r, d in enumerate(dests):
        check([d], reduced("sum", hosts)[2 * r:2 * r + 2], [ctxs[r]])


def test_staged_on_one_cl_context(ctxs, monkeypatch):
    """The staged path also serves contexts of one cl.Context (forced here)."""
    monkeypatch.setattr(collectives, "_one_cl_context", lambda ctxs: False)
    n = len(ctxs)
    hosts = rank_data(16, n, (n, 3), "float32")
    check(collectives.all_reduce(upload(hosts, ctxs), "max"), reduced("max", hosts), ctxs)
    got = collectives.reduce(upload(hosts, ctxs), "sum", root=n - 1)
    check([got[-1]], reduced("sum", hosts), [ctxs[-1]])
    check(collectives.all_gather(upload(hosts, ctxs)), np.stack(hosts), ctxs)
    for r, g in enumerate(collectives.reduce_scatter(upload(hosts, ctxs), "min")):
        check([g], reduced("min", hosts)[r], [ctxs[r]])
    xs = upload(hosts, ctxs)
    collectives.broadcast(xs, root=1)
    check(xs, hosts[1], ctxs)


# ---------------------------------------------------------------- errors

def _error_cases(c0, c1):
    f32 = [ga.ones((2, 3), "float32", context=c) for c in (c0, c1)]
    return {
        "unknown op": (ArgumentError, ["unknown reduction op", "'avg'"],
                       lambda: collectives.all_reduce(f32, "avg")),
        "float16 sum": (UnsupportedError, ["all_reduce", "float16", "supported: int8"],
                        lambda: collectives.all_reduce(
                            [ga.ones(3, "float16", context=c) for c in (c0, c1)])),
        "bool sum": (UnsupportedError, ["reduce_scatter", "bool"],
                     lambda: collectives.reduce_scatter(
                         [ga.ones(2, "bool", context=c) for c in (c0, c1)])),
        "complex max": (UnsupportedError, ["complex numbers have no order"],
                        lambda: collectives.all_reduce(
                            [ga.ones(3, "complex64", context=c) for c in (c0, c1)], "max")),
        "shapes differ": (ShapeError, ["disagree on the shape", "rank 0 has (2, 3)",
                                       "rank 1 (3,)"],
                          lambda: collectives.all_reduce([f32[0],
                                                          ga.ones(3, "float32", context=c1)])),
        "dtypes differ": (ArgumentTypeError, ["disagree on the dtype", "float32", "int32"],
                          lambda: collectives.all_gather(
                              [f32[0], ga.ones((2, 3), "int32", context=c1)])),
        "not a list": (ArgumentTypeError, ["list of GpuArrays"],
                       lambda: collectives.all_reduce(f32[0])),
        "numpy in list": (ArgumentTypeError, ["rank 1 holds ndarray"],
                          lambda: collectives.broadcast([f32[0], np.ones((2, 3))])),
        "dest context": (ContextMismatch, ["dest is on context", c0.devname, c1.devname],
                         lambda: collectives.all_reduce(f32, dest=[None, f32[0]])),
        "dest shape": (ShapeError, ["dest has shape (3, 2)"],
                       lambda: collectives.all_reduce(
                           f32, dest=[ga.empty((3, 2), "float32", context=c0), None])),
        "dest dtype": (ArgumentTypeError, ["dest has dtype float64", "float32"],
                       lambda: collectives.all_reduce(
                           f32, dest=[ga.empty((2, 3), "float64", context=c0), None])),
        "dest size": (ShapeError, ["dest has 5 elements", "result 12"],
                      lambda: collectives.all_gather(
                          f32, dest=[ga.empty(5, "float32", context=c0), None])),
        "dest count": (ArgumentTypeError, ["list of 2"],
                       lambda: collectives.all_reduce(f32, dest=[None])),
        "dest read-only": (ReadOnlyError, ["read-only"],
                           lambda: collectives.all_reduce(
                               f32, dest=[ga.broadcast_to(ga.ones(3, "float32", context=c0),
                                                          (2, 3)), None])),
        "broadcast read-only": (ReadOnlyError, ["read-only"],
                                lambda: collectives.broadcast(
                                    [f32[0], ga.broadcast_to(ga.ones(3, "float32", context=c1),
                                                             (2, 3))])),
        "root": (ArgumentError, ["root must be a rank in 0..1", "2"],
                 lambda: collectives.reduce(f32, root=2)),
        "nd_up": (ArgumentError, ["nd_up must be an integer >= 0"],
                  lambda: collectives.all_gather(f32, nd_up=-1)),
        "0-d concatenation": (ShapeError, ["0-d", "nd_up=0"],
                              lambda: collectives.all_gather(
                                  [ga.ones((), context=c) for c in (c0, c1)], nd_up=0)),
        "indivisible": (ShapeError, ["cannot split shape (3, 2)", "in 2 equal parts",
                                     "axis 0"],
                        lambda: collectives.reduce_scatter(
                            [ga.ones((3, 2), context=c) for c in (c0, c1)])),
        "indivisible total": (ShapeError, ["(3,)", "3 elements", "2 equal parts"],
                              lambda: collectives.reduce_scatter(
                                  [ga.ones(3, context=c) for c in (c0, c1)])),
        "0-d scatter": (ShapeError, ["at least one dimension"],
                        lambda: collectives.reduce_scatter(
                            [ga.ones((), context=c) for c in (c0, c1)])),
    }


@pytest.fixture(scope="module")
def error_cases():
    group = platform_group(2)
    if group is None:
        pytest.skip("needs two devices of one platform")
    return _error_cases(ga.init(group[0].name), ga.init(group[1].name))


@pytest.mark.parametrize("name", [
    "unknown op", "float16 sum", "bool sum", "complex max", "shapes differ", "dtypes differ",
    "not a list", "numpy in list", "dest context", "dest shape", "dest dtype", "dest size",
    "dest count", "dest read-only", "broadcast read-only", "root", "nd_up",
    "0-d concatenation", "indivisible", "indivisible total", "0-d scatter"])
def test_errors(error_cases, name):
    error, words, fn = error_cases[name]
    with pytest.raises(error) as info:
        fn()
    missing = [w for w in words if w not in str(info.value)]
    assert not missing, f"{missing} not in: {info.value}"


def test_clique_id(ctx, monkeypatch):
    cid = collectives.CommCliqueId(ctx)
    assert len(cid.comm_id) == collectives.ID_BYTES and cid.context is ctx
    same = collectives.CommCliqueId(ctx, comm_id=cid.comm_id)
    assert same == cid and hash(same) == hash(cid)
    assert collectives.CommCliqueId(ctx) != cid
    with pytest.raises(TypeError, match="comm_id bytes"):
        pickle.dumps(cid)
    with pytest.raises(ArgumentError, match="1 to 128 bytes"):
        collectives.CommCliqueId(ctx, comm_id=bytes(129))
    with pytest.raises(ArgumentTypeError, match="must be bytes"):
        collectives.CommCliqueId(ctx, comm_id="abc")
    with pytest.raises(ArgumentTypeError, match="needs a CommCliqueId"):
        collectives.GpuComm(b"abc", 2, 0)
    with pytest.raises(ArgumentError, match=r"rank must be in 0\.\.1"):
        collectives.GpuComm(cid, 2, 2)
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # as if it were not installed
    with pytest.raises(CommError, match=r"pip install 'gpuarr\[mpi\]'.*mpiexec -n N"):
        collectives.GpuComm(cid, 2, 0)


def test_three_devices():
    """The n3 cases in a process with three PoCL devices, when this one has fewer."""
    if platform_group(3) is not None:
        pytest.skip("this process has three devices: the n3 cases ran here")
    if platform_group(2) is None or "Portable Computing Language" not in USABLE[0].platform:
        pytest.skip("three devices come from PoCL's POCL_DEVICES, and this is not PoCL")
    env = dict(os.environ, POCL_DEVICES="pthread pthread pthread")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k",
         "n3 and not three_devices", os.path.abspath(__file__)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout.splitlines()[-1], \
        done.stdout[-2000:]
