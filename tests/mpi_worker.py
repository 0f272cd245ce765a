"""The MPI battery of tests/test_collectives_mpi.py: one mpiexec launch runs every case.

    mpiexec -n 2 python tests/mpi_worker.py [NAME ...]
    mpiexec -n 3 python tests/mpi_worker.py exit-early

Every case runs on every rank, each rank checking its own results against numpy (every rank
can build every rank's data: it is seeded by rank). Rank 0 prints `CASE <name> ok` or
`CASE <name> FAIL <rank>: <reason>` per case as it goes, then `DONE`. Importing this module
does not start MPI (nor touch the environment): tests read CASES and the data helpers.
"""

import functools
import os
import pickle
import sys
import time
import traceback

import numpy as np

OPS = ("sum", "prod", "max", "min")
DTYPES = ("int8", "int32", "int64", "uint64", "float32", "float64")
STAGINGS = ("map", "pinned")
NP_OPS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}

CASES = {}  # name -> function(env)


def case(name, **params):
    def register(fn):
        CASES[name] = functools.partial(fn, **params)
        return fn
    return register


class Env:
    """What a case works with: the world, a GpuComm over it, this rank's contexts."""

    def __init__(self, world, comm, ctx, other):
        self.world, self.comm, self.ctx, self.other = world, comm, ctx, other
        self.rank, self.n = comm.rank, comm.count

    def setup(self, staging="auto", chunk_bytes=None, reduce_on="host"):
        from gpuarr import collectives
        self.comm.staging = staging
        self.comm.reduce_on = reduce_on
        self.comm.chunk_bytes = chunk_bytes or collectives.CHUNK_BYTES


def data(seed, rank, shape, dtype):
    """Rank `rank`'s data of a case: small integers (prod stays exact), floats near 1."""
    rng = np.random.default_rng([seed, rank])
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -3, 5, size=shape).astype(dt)
    if dt.kind == "c":
        return (rng.uniform(0.5, 1.5, shape) + 1j * rng.uniform(0.5, 1.5, shape)).astype(dt)
    return rng.uniform(0.5, 1.5, shape).astype(dt)


def all_data(env, seed, shape, dtype):
    return [data(seed, r, shape, dtype) for r in range(env.n)]


def reduced(op, hosts):
    return functools.reduce(NP_OPS[op], hosts)


def check(got, want):
    got_host = got.get()
    assert got_host.dtype == want.dtype, (got_host.dtype, want.dtype)
    assert got_host.shape == want.shape, (got_host.shape, want.shape)
    if want.dtype.kind in "fc":
        rtol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(got_host, want, rtol=rtol)
    else:
        np.testing.assert_array_equal(got_host, want)


def expect(error, words, fn):
    """fn() must raise `error` whose message holds every one of `words`."""
    try:
        fn()
    except error as e:
        missing = [w for w in words if w not in str(e)]
        assert not missing, f"{type(e).__name__} lacks {missing}: {e}"
        return e
    raise AssertionError(f"expected {error.__name__} ({', '.join(words)})")


def up(env, host, ctx=None):
    import gpuarr as ga
    return ga.asarray(host, context=ctx or env.ctx)


# ---------------------------------------------------------------- all_reduce

def _all_reduce(env, op, dtype, staging):
    env.setup(staging, chunk_bytes=64)  # 35 elements: several chunks/pieces
    hosts = all_data(env, 1, (5, 7), dtype)
    got = env.comm.all_reduce(up(env, hosts[env.rank]), op)
    check(got, reduced(op, hosts))


for _op in OPS:
    for _dt in DTYPES:
        for _st in STAGINGS:
            case(f"all_reduce-{_op}-{_dt}-{_st}", op=_op, dtype=_dt, staging=_st)(_all_reduce)


@case("all_reduce-device-sum-float32-map", op="sum", dtype="float32", staging="map")
@case("all_reduce-device-max-int8-pinned", op="max", dtype="int8", staging="pinned")
def _all_reduce_device(env, op, dtype, staging):
    env.setup(staging, reduce_on="device")
    hosts = all_data(env, 2, (4, 5), dtype)  # 20 elements: uneven parts for n=3
    check(env.comm.all_reduce(up(env, hosts[env.rank]), op), reduced(op, hosts))


def _all_reduce_on_device(env, op, dtype, staging):
    env.setup(staging, chunk_bytes=64, reduce_on="device")  # many chunks; uneven parts
    hosts = all_data(env, 20, (5, 7), dtype)
    check(env.comm.all_reduce(up(env, hosts[env.rank]), op), reduced(op, hosts))


for _op in OPS:
    for _dt in ("int8", "int64", "uint64", "float32", "float64"):
        for _st in ("pinned", "shared"):
            case(f"all_reduce-on-device-{_op}-{_dt}-{_st}", op=_op, dtype=_dt,
                 staging=_st)(_all_reduce_on_device)


@case("all_reduce-on-device-shapes-pinned", staging="pinned")
@case("all_reduce-on-device-shapes-shared", staging="shared")
def _on_device_shapes(env, staging):
    import gpuarr as ga
    env.setup(staging, chunk_bytes=40, reduce_on="device")
    for seed, shape, dtype, op in ((21, (), "float64", "prod"), (22, (1,), "int32", "sum"),
                                   (23, (0, 3), "float32", "sum"), (24, (7,), "complex64", "sum"),
                                   (25, (2, 3), "complex128", "prod")):
        hosts = all_data(env, seed, shape, dtype)
        check(env.comm.all_reduce(up(env, hosts[env.rank]), op), reduced(op, hosts))
    hosts = all_data(env, 26, (6, 8), "float32")  # strided source and dest, and in place
    big = ga.zeros((4, 6, 3), "float32", context=env.ctx)
    env.comm.all_reduce(up(env, hosts[env.rank])[::-1, ::2].T, "sum", dest=big[:, :, 1])
    check(big[:, :, 1], reduced("sum", [h[::-1, ::2].T for h in hosts]))
    np.testing.assert_array_equal(big[:, :, 0].get(), 0)
    x = up(env, hosts[env.rank])
    assert env.comm.all_reduce(x, "max", dest=x) is x
    check(x, reduced("max", hosts))
    env.setup(staging, chunk_bytes=4096, reduce_on="device")
    big = all_data(env, 27, (30001,), "float32")  # several chunks of a realistic size
    got = env.comm.all_reduce(up(env, big[env.rank]), "sum")
    check(got, reduced("sum", big))
    every = env.world.allgather(got.get())  # the same bits on every rank
    assert all(np.array_equal(e, every[0]) for e in every)
    # reduce_on: auto reduces on the device where its memory is not the host's
    env.comm.reduce_on = "auto"
    assert env.comm._on_device() == (not env.ctx.device.cl_device.host_unified_memory)
    from gpuarr.errors import ArgumentError
    env.comm.reduce_on = "gpu"
    expect(ArgumentError, ["reduce_on", "'gpu'"], lambda: env.comm.all_reduce(x))
    env.setup()
    env.comm.staging = "nowhere"
    expect(ArgumentError, ["staging", "'nowhere'", "'shared'"], lambda: env.comm.all_reduce(x))
    env.setup()  # the communicator is still usable: every rank raised before any data moved
    check(env.comm.all_reduce(x, "min"), reduced("min", [reduced("max", hosts)] * env.n))


@case("reduce_scatter-on-device-pinned", staging="pinned")
@case("reduce_scatter-on-device-shared", staging="shared")
def _reduce_scatter_on_device(env, staging):
    env.setup(staging, chunk_bytes=24, reduce_on="device")
    n, r = env.n, env.rank
    for op, dtype in (("sum", "float32"), ("prod", "int64"), ("max", "uint64"), ("min", "int8"),
                      ("sum", "complex64")):
        hosts = all_data(env, 28, (2 * n, 3), dtype)
        got = env.comm.reduce_scatter(up(env, hosts[r]), op)
        check(got, reduced(op, hosts)[2 * r:2 * r + 2])
    hosts = all_data(env, 29, (3, 2 * n), "int32")  # F order splits the last axis
    got = env.comm.reduce_scatter(up(env, np.asfortranarray(hosts[r])), "max")
    check(got, reduced("max", hosts)[:, 2 * r:2 * r + 2])


@case("shared-window-pinned-grows-and-refuses")
def _shared_window(env):
    """The shared window: pinned by a USE_HOST_PTR buffer (PoCL takes them too), made larger
    as messages grow (in place and not, uneven parts, many chunks: the pipeline's slots),
    and refused on every rank, the communicator still usable, when /dev/shm is too small."""
    from gpuarr import collectives
    from gpuarr.errors import CommError
    env.setup("shared", chunk_bytes=256, reduce_on="device")
    for seed, size in ((30, 7), (31, 1001), (32, 20000)):
        hosts = all_data(env, seed, (size,), "float32")
        check(env.comm.all_reduce(up(env, hosts[env.rank]), "sum"), reduced("sum", hosts))
        x = up(env, hosts[env.rank])
        assert env.comm.all_reduce(x, "sum", dest=x) is x
        check(x, reduced("sum", hosts))
    _, views, pins = env.comm._window
    assert pins, "the shared window is not pinned"
    assert all(v.ctypes.data % 4096 == 0 and v.size % 4096 == 0 for v in views)
    env.comm.chunk_bytes = 1 << 20  # a larger window, which /dev/shm cannot hold
    real = collectives._shm_room
    collectives._shm_room = lambda: 0
    try:
        expect(CommError, ["'shared'", "/dev/shm", "bytes free"],
               lambda: env.comm.all_reduce(up(env, hosts[env.rank]), "sum"))
    finally:
        collectives._shm_room = real
    check(env.comm.all_reduce(up(env, hosts[env.rank]), "max"), reduced("max", hosts))


@case("all_reduce-aliases-and-opcodes")
def _aliases(env):
    hosts = all_data(env, 3, (6,), "int32")
    x = up(env, hosts[env.rank])
    for op, name in (("+", "sum"), ("ADD", "sum"), ("*", "prod"), ("mul", "prod"),
                     ("product", "prod"), ("Maximum", "max"), ("minimum", "min"), (2, "max")):
        check(env.comm.all_reduce(x, op), reduced(name, hosts))


@case("all_reduce-in-place-map", staging="map")
@case("all_reduce-in-place-pinned", staging="pinned")
def _in_place(env, staging):
    env.setup(staging, chunk_bytes=32)
    hosts = all_data(env, 4, (3, 11), "float64")
    x = up(env, hosts[env.rank])
    out = env.comm.all_reduce(x, "sum", dest=x)
    assert out is x
    check(x, reduced("sum", hosts))


@case("all_reduce-layouts-map", staging="map")
@case("all_reduce-layouts-pinned", staging="pinned")
def _layouts(env, staging):
    import gpuarr as ga
    env.setup(staging, chunk_bytes=48)
    hosts = all_data(env, 5, (6, 8), "float32")
    # a transposed view with negative strides in, a strided view of a bigger array out
    src = up(env, hosts[env.rank])[::-1, ::2].T
    want = reduced("sum", [h[::-1, ::2].T for h in hosts])
    big = ga.zeros((4, 6, 3), "float32", context=env.ctx)
    dest = big[::1, :, 1]
    env.comm.all_reduce(src, "sum", dest=dest)
    check(dest, want)
    np.testing.assert_array_equal(big[:, :, 0].get(), 0)
    # F order on every rank: the result keeps it; mixed orders reduce in C order
    f = env.comm.all_reduce(up(env, np.asfortranarray(hosts[env.rank])), "max")
    assert f.flags.f_contiguous and not f.flags.c_contiguous
    check(f, reduced("max", hosts))
    mixed = up(env, hosts[env.rank] if env.rank % 2 else np.asfortranarray(hosts[env.rank]))
    check(env.comm.all_reduce(mixed, "min"), reduced("min", hosts))


@case("all_reduce-empty-and-0d")
def _empty(env):
    hosts = all_data(env, 6, (0, 4), "int64")
    check(env.comm.all_reduce(up(env, hosts[env.rank]), "sum"), reduced("sum", hosts))
    scalars = all_data(env, 7, (), "float64")
    check(env.comm.all_reduce(up(env, scalars[env.rank]), "prod"), reduced("prod", scalars))


@case("all_reduce-complex-and-large")
def _complex_large(env):
    env.setup("map", chunk_bytes=4096)
    hosts = all_data(env, 8, (5,), "complex64")
    check(env.comm.all_reduce(up(env, hosts[env.rank]), "prod"), reduced("prod", hosts))
    big = all_data(env, 9, (3000,), "float32")  # several map pieces, and the pipeline
    x = up(env, big[env.rank])
    check(env.comm.all_reduce(x, "sum"), reduced("sum", big))
    env.setup("pinned", chunk_bytes=4096)
    check(env.comm.all_reduce(x, "sum"), reduced("sum", big))
    env.setup("auto")
    check(env.comm.all_reduce(x, "sum"), reduced("sum", big))


# ---------------------------------------------------------------- reduce, broadcast

@case("reduce-map", staging="map")
@case("reduce-pinned", staging="pinned")
def _reduce(env, staging):
    import gpuarr as ga
    env.setup(staging, chunk_bytes=40)
    root = env.n - 1
    for op, dtype in (("sum", "float64"), ("min", "int32"), ("prod", "uint64")):
        hosts = all_data(env, 10, (4, 6), dtype)
        got = env.comm.reduce(up(env, hosts[env.rank]), op, root=root)
        if env.rank == root:
            check(got, reduced(op, hosts))
        else:
            assert got is None
    hosts = all_data(env, 11, (7,), "float32")
    dest = ga.empty(7, "float32", context=env.ctx) if env.rank == 0 else None
    got = env.comm.reduce(up(env, hosts[env.rank]), "max", dest=dest)
    if env.rank == 0:
        assert got is dest
        check(dest, reduced("max", hosts))
    # pygpu's style: the root passes root=-1, the others name it
    got = env.comm.reduce(up(env, hosts[env.rank]), "sum", root=-1 if env.rank == 1 else 1)
    if env.rank == 1:
        check(got, reduced("sum", hosts))


@case("broadcast-map", staging="map")
@case("broadcast-pinned", staging="pinned")
def _broadcast(env, staging):
    import gpuarr as ga
    env.setup(staging, chunk_bytes=24)
    root = 1 % env.n
    for dtype in ("bool", "float16", "complex128", "int64"):
        hosts = all_data(env, 12, (3, 5), dtype)
        x = up(env, hosts[env.rank])
        assert env.comm.broadcast(x, root=root) is x
        check(x, hosts[root])
    # a strided target: only its elements change
    hosts = all_data(env, 13, (4, 10), "int32")
    base = up(env, hosts[env.rank])
    view = base[:, ::3]
    env.comm.broadcast(view, root=0)
    want = hosts[env.rank].copy()
    want[:, ::3] = hosts[0][:, ::3]
    check(base, want)
    z = ga.zeros((0,), "float32", context=env.ctx)
    env.comm.broadcast(z)


# ---------------------------------------------------------------- all_gather, reduce_scatter

@case("all_gather-map", staging="map")
@case("all_gather-pinned", staging="pinned")
def _all_gather(env, staging):
    import gpuarr as ga
    env.setup(staging, chunk_bytes=40)
    hosts = all_data(env, 14, (3, 4), "int8")
    x = up(env, hosts[env.rank])
    check(env.comm.all_gather(x), np.stack(hosts))
    check(env.comm.all_gather(x, nd_up=0), np.concatenate(hosts))
    check(env.comm.all_gather(x, nd_up=2), np.stack(hosts).reshape(env.n, 1, 3, 4))
    f = env.comm.all_gather(up(env, np.asfortranarray(hosts[env.rank])))
    assert f.shape == (3, 4, env.n) and f.flags.f_contiguous
    check(f, np.stack(hosts, axis=-1))
    check(env.comm.all_gather(up(env, np.asfortranarray(hosts[env.rank])), nd_up=0),
          np.concatenate(hosts, axis=1))
    dest = ga.empty((env.n * 12,), "int8", context=env.ctx)  # any shape of the right size
    assert env.comm.all_gather(x, dest=dest) is dest
    check(dest, np.stack(hosts).ravel())
    scalars = all_data(env, 15, (), "float64")
    check(env.comm.all_gather(up(env, scalars[env.rank])), np.stack(scalars))


@case("reduce_scatter-map", staging="map")
@case("reduce_scatter-pinned", staging="pinned")
def _reduce_scatter(env, staging):
    import gpuarr as ga
    env.setup(staging, chunk_bytes=24)
    n, r = env.n, env.rank
    for op, dtype in (("sum", "float32"), ("prod", "int64"), ("max", "uint64"), ("min", "int8")):
        hosts = all_data(env, 16, (2 * n, 3), dtype)
        got = env.comm.reduce_scatter(up(env, hosts[r]), op)
        check(got, reduced(op, hosts)[2 * r:2 * r + 2])
    hosts = all_data(env, 17, (n, 4), "float64")  # parts of length 1: the axis goes
    check(env.comm.reduce_scatter(up(env, hosts[r])), reduced("sum", hosts)[r])
    hosts = all_data(env, 18, (3, 2 * n), "int32")  # F order splits the last axis
    got = env.comm.reduce_scatter(up(env, np.asfortranarray(hosts[r])), "max")
    check(got, reduced("max", hosts)[:, 2 * r:2 * r + 2])
    hosts = all_data(env, 19, (2 * n, 3), "int32")
    dest = ga.empty((6,), "int32", context=env.ctx)  # any shape of the right size
    env.comm.reduce_scatter(up(env, hosts[r]), "sum", dest=dest)
    check(dest, reduced("sum", hosts).ravel()[6 * r:6 * r + 6])


# ---------------------------------------------------------------- errors: every rank raises

@case("error-mismatched-shapes")
def _err_shapes(env):
    from gpuarr.errors import ShapeError
    x = up(env, np.zeros(3 + env.rank, "float32"))
    expect(ShapeError, ["all_reduce", "disagree on the shape", "rank 0 has (3,)", "(4,)"],
           lambda: env.comm.all_reduce(x))
    expect(ShapeError, ["all_gather", "shape"], lambda: env.comm.all_gather(x))


@case("error-mismatched-dtypes")
def _err_dtypes(env):
    from gpuarr.errors import ArgumentTypeError
    x = up(env, np.zeros(4, "float32" if env.rank else "float64"))
    expect(ArgumentTypeError, ["broadcast", "dtype", "float64", "float32"],
           lambda: env.comm.broadcast(x))


@case("error-mismatched-op-and-root")
def _err_op(env):
    from gpuarr.errors import ArgumentError
    x = up(env, np.ones(4, "int32"))
    expect(ArgumentError, ["disagree on op", "'sum'", "'max'"],
           lambda: env.comm.all_reduce(x, "sum" if env.rank == 0 else "max"))
    expect(ArgumentError, ["disagree on root"],
           lambda: env.comm.reduce(x, root=min(env.rank, 1)))


@case("error-unsupported-dtype-on-one-rank")
def _err_unsupported(env):
    from gpuarr.errors import UnsupportedError
    x = up(env, np.ones(4, "float16" if env.rank == 1 else "float32"))
    words = ["all_reduce", "float16"] + ([] if env.rank == 1 else ["failed on rank 1"])
    expect(UnsupportedError, words, lambda: env.comm.all_reduce(x))
    c = up(env, np.ones(3, "complex64"))
    expect(UnsupportedError, ["complex", "order"], lambda: env.comm.all_reduce(c, "max"))


@case("error-unknown-op")
def _err_unknown_op(env):
    from gpuarr.errors import ArgumentError
    x = up(env, np.ones(4, "int32"))
    expect(ArgumentError, ["unknown reduction op", "'avg'"], lambda: env.comm.all_reduce(x, "avg"))


@case("error-wrong-context")
def _err_context(env):
    from gpuarr.errors import ContextMismatch
    if env.other is None:
        return
    x = up(env, np.ones(4, "float32"), ctx=env.other if env.rank == 0 else env.ctx)
    words = ["all_reduce"] + (["transfer it first"] if env.rank == 0 else ["failed on rank 0"])
    expect(ContextMismatch, words, lambda: env.comm.all_reduce(x))


@case("error-dest")
def _err_dest(env):
    import gpuarr as ga
    from gpuarr.errors import ArgumentTypeError, ReadOnlyError, ShapeError
    x = up(env, np.ones((2, 3), "float32"))
    bad = ga.empty((3, 2), "float32", context=env.ctx) if env.rank == 0 else None
    expect(ShapeError, ["dest has shape (3, 2)"] if env.rank == 0 else ["failed on rank 0"],
           lambda: env.comm.all_reduce(x, dest=bad))
    bad = ga.empty((2, 3), "int32", context=env.ctx)
    expect(ArgumentTypeError, ["dest has dtype int32"], lambda: env.comm.all_reduce(x, dest=bad))
    ro = ga.broadcast_to(up(env, np.ones(3, "float32")), (2, 3))
    expect(ReadOnlyError, ["read-only"], lambda: env.comm.all_reduce(x, dest=ro))


@case("error-reduce-scatter-indivisible")
def _err_scatter(env):
    from gpuarr.errors import ShapeError
    x = up(env, np.ones((env.n + 1, 2), "float32"))
    expect(ShapeError, ["reduce_scatter", f"in {env.n} equal parts"],
           lambda: env.comm.reduce_scatter(x))
    y = up(env, np.ones((3, 2 * env.n), "float32"))  # divisible in total, not along axis 0
    if 3 % env.n:
        expect(ShapeError, ["cannot split shape", "axis 0"], lambda: env.comm.reduce_scatter(y))
    expect(ShapeError, ["at least one dimension"],
           lambda: env.comm.reduce_scatter(up(env, np.float32(1))))


@case("error-different-collectives")
def _err_different(env):
    from gpuarr.errors import ArgumentError
    x = up(env, np.ones(4, "float32"))
    fn = env.comm.all_reduce if env.rank == 0 else env.comm.broadcast
    expect(ArgumentError, ["different collectives", "rank 0 all_reduce", "broadcast"],
           lambda: fn(x))


@case("error-root-and-arguments")
def _err_root(env):
    from gpuarr.errors import ArgumentError, ArgumentTypeError
    x = up(env, np.ones(4, "float32"))
    expect(ArgumentError, ["root must be a rank in"], lambda: env.comm.broadcast(x, root=env.n))
    expect(ArgumentTypeError, ["expected a GpuArray", "ndarray"],
           lambda: env.comm.all_reduce(np.ones(3)))
    expect(ArgumentError, ["nd_up"], lambda: env.comm.all_gather(x, nd_up=-1))


# ---------------------------------------------------------------- forming communicators

@case("clique-id-route")
def _clique(env):
    from gpuarr.collectives import CommCliqueId, GpuComm
    cid = CommCliqueId(env.ctx) if env.rank == 0 else None
    cid = CommCliqueId(env.ctx, comm_id=env.world.bcast(cid and cid.comm_id, root=0))
    rank = env.n - 1 - env.rank  # ranks in the clique need not follow the world's
    comm = GpuComm(cid, env.n, rank)
    assert (comm.rank, comm.count, comm.get_rank(), comm.get_count()) == (rank, env.n, rank,
                                                                           env.n)
    got = comm.all_gather(up(env, np.full(2, rank, "int32")))
    check(got, np.repeat(np.arange(env.n, dtype="int32"), 2).reshape(env.n, 2))


@case("clique-two-at-once")
def _two_cliques(env):
    from gpuarr.collectives import CommCliqueId, GpuComm
    group = env.rank % 2
    members = [w for w in range(env.n) if w % 2 == group]
    cid = CommCliqueId(env.ctx, comm_id=b"clique-%d" % group)
    comm = GpuComm(cid, len(members), members.index(env.rank))
    assert comm.count == len(members)
    got = comm.all_reduce(up(env, np.array([env.rank + 1], "int64")))
    check(got, np.array([sum(w + 1 for w in members)], "int64"))


@case("clique-errors")
def _clique_errors(env):
    from gpuarr.collectives import CommCliqueId, GpuComm
    from gpuarr.errors import ArgumentError, CommError
    cid = CommCliqueId(env.ctx, comm_id=b"errors")
    expect(CommError, ["disagree on ndev"], lambda: GpuComm(cid, env.n + env.rank % 2 - 1 or 1,
                                                            0))
    expect(CommError, ["needs ranks 0..", "once each"], lambda: GpuComm(cid, env.n, 0))
    expect(CommError, [f"MPI.COMM_WORLD has {env.n}", f"mpiexec -n {env.n + 1}"],
           lambda: GpuComm(cid, env.n + 1, 0))
    expect(ArgumentError, ["rank must be in 0.."], lambda: GpuComm(cid, env.n, env.n))
    expect(ArgumentError, ["comm_id must hold"], lambda: CommCliqueId(env.ctx, comm_id=b""))
    ident = CommCliqueId(env.ctx)
    assert len(ident.comm_id) == 128 and ident == CommCliqueId(env.ctx, comm_id=ident.comm_id)
    assert hash(ident) == hash(CommCliqueId(env.ctx, comm_id=ident.comm_id))
    expect(TypeError, ["comm_id bytes"], lambda: pickle.dumps(ident))


@case("from-mpi-timeout")
def _timeout(env):
    from gpuarr.collectives import GpuComm
    from gpuarr.errors import CommTimeout
    world = env.world
    if env.rank == 0:
        err = expect(CommTimeout, ["not every rank joined within 0.3 s", "Abort"],
                     lambda: GpuComm.from_mpi(world, env.ctx, timeout=0.3))
        for r in range(1, env.n):
            world.send("late", dest=r, tag=77)
        err.request.Wait()  # the others join late: the pending duplication completes
    else:
        world.recv(source=0, tag=77)
        _, request = world.Idup()
        request.Wait()


# ---------------------------------------------------------------- deadlines and failures

DEADLINE = 2.0  # seconds: the deadline of the cases below (the default is 300)
PROMPTLY = 30.0  # what "at once" must beat: far under the default deadline


@case("deadline-absent-rank")
def _absent(env):
    import dataclasses

    from gpuarr import config
    from gpuarr.collectives import GpuComm
    from gpuarr.errors import CommError, CommTimeout
    saved = config.flags
    config.flags = dataclasses.replace(saved, comm_timeout=DEADLINE)  # the flag's route
    try:
        comm = GpuComm.from_mpi(env.world, env.ctx)
    finally:
        config.flags = saved
    assert comm.timeout == DEADLINE
    x = up(env, np.ones(5, "float32"))
    check(comm.all_reduce(x), np.full(5, env.n, "float32"))
    last = env.n - 1
    if env.rank != last:  # the last rank is absent: the others give up at the deadline
        t0 = time.monotonic()
        err = expect(CommTimeout, ["all_reduce", "collective #2", f"rank(s) {last} did not join",
                                   f"within {DEADLINE:g} s", "comm_timeout"],
                     lambda: comm.all_reduce(x))
        assert err.missing == [last], err.missing
        assert time.monotonic() - t0 < DEADLINE + PROMPTLY
        expect(CommError, ["cannot be used any more", "CommTimeout"],
               lambda: comm.broadcast(x))
    env.world.barrier()
    if env.rank == last:  # ... and joins late: it raises too, instead of waiting
        t0 = time.monotonic()
        expect(CommTimeout, ["all_reduce", "joined it late"], lambda: comm.all_reduce(x))
        assert time.monotonic() - t0 < PROMPTLY


@case("deadline-rank-raises")
def _raises(env):
    from gpuarr import collectives
    from gpuarr.collectives import GpuComm
    from gpuarr.errors import CommError
    comm = GpuComm.from_mpi(env.world, env.ctx)  # the default deadline: nobody may wait it out
    comm.staging = "pinned"
    x = up(env, np.ones(6, "int32"))
    bad = 1 % env.n
    # before the data moves (an error that is not gpuarr's): every rank raises, and the
    # communicator stays usable
    if env.rank == bad:
        real = collectives._check_reducible
        collectives._check_reducible = lambda *a: {}["injected"]
    try:
        expect(KeyError if env.rank == bad else CommError,
               ["injected"] + ([] if env.rank == bad else [f"failed on rank {bad}", "KeyError"]),
               lambda: comm.all_reduce(x))
    finally:
        if env.rank == bad:
            collectives._check_reducible = real
    check(comm.all_reduce(x), np.full(6, env.n, "int32"))
    # inside the data movement: the others raise at once, and the communicator is done for
    t0 = time.monotonic()
    if env.rank == bad:
        comm._staging = lambda nbytes: 1 / 0
        expect(ZeroDivisionError, [], lambda: comm.all_reduce(x))
    else:
        expect(CommError, ["all_reduce", f"rank {bad} raised inside all_reduce",
                           "ZeroDivisionError", "cannot be used any more"],
               lambda: comm.all_reduce(x))
    assert time.monotonic() - t0 < PROMPTLY
    expect(CommError, ["cannot be used any more"], lambda: comm.all_gather(x))


def exit_early():
    """`mpiexec -n N python mpi_worker.py exit-early`: the last rank's process exits where
    the others call a collective; they raise CommError naming it at once (its exit tells
    them), not at the deadline. Rank 0 prints EXIT-EARLY ok."""
    from mpi4py import MPI

    import gpuarr as ga
    from gpuarr.collectives import GpuComm
    from gpuarr.errors import CommError
    world = MPI.COMM_WORLD
    ctx = ga.init(next(d for d in ga.list_devices() if d.usable).name)
    comm = GpuComm.from_mpi(world, ctx)
    x = ga.asarray(np.ones(3, "float32"), context=ctx)
    comm.all_reduce(x)
    last = world.size - 1
    if world.rank == last:
        sys.exit(0)
    t0 = time.monotonic()
    expect(CommError, ["all_reduce", f"rank(s) {last} exited before joining it"],
           lambda: comm.all_reduce(x))
    elapsed = time.monotonic() - t0
    assert elapsed < PROMPTLY, elapsed
    if world.rank == 0:
        print(f"EXIT-EARLY ok ({elapsed:.2f}s)", flush=True)


# ---------------------------------------------------------------- the launch

def main(only=()):
    from mpi4py import MPI

    import gpuarr as ga
    from gpuarr.collectives import GpuComm

    world = MPI.COMM_WORLD
    usable = [d for d in ga.list_devices() if d.usable]
    ctx = ga.init(usable[0].name)
    same = [d for d in usable[1:] if d.platform_index == usable[0].platform_index]
    other = ga.init(same[0].name) if same else None
    env = Env(world, GpuComm.from_mpi(world, ctx), ctx, other)
    for name, fn in CASES.items():
        if only and name not in only:
            continue
        env.setup()
        t0 = time.perf_counter()
        try:
            fn(env)
            error = None
        except Exception as e:
            error = f"{type(e).__name__}: {e} | " + " / ".join(
                line.strip() for line in traceback.format_exc().splitlines()[-6:-1])
        errors = world.allgather(error)
        if world.rank == 0:
            failed = [(r, e) for r, e in enumerate(errors) if e]
            status = "ok" if not failed else f"FAIL rank {failed[0][0]}: {failed[0][1]}"
            print(f"CASE {name} {status} ({time.perf_counter() - t0:.3f}s)".replace("\n", " "),
                  flush=True)
    if world.rank == 0:
        print("DONE", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("POCL_DEVICES", "pthread pthread")
    os.environ.setdefault("GPUARR_FLAGS", "print_active_device=False")
    if sys.argv[1:] == ["exit-early"]:
        exit_early()
    else:
        main(sys.argv[1:])
