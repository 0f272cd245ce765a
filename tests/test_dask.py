"""dask.array with gpuarr chunks (gpuarr.dask_backend): operations on GpuArray chunks against
the same dask graph on numpy chunks, the array backend 'gpuarr', the lazy registration, the
serialization of chunks, and a dask.distributed LocalCluster of two worker processes, each
bound to its own PoCL device; examples/dask_gram.py at a small size."""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import same_platform_pair

da = pytest.importorskip("dask.array", reason="dask.array is not installed (pip install "
                         "'gpuarr[dask]')")
import dask  # noqa: E402

import gpuarr as ga  # noqa: E402
from gpuarr import dask_backend  # noqa: E402
from gpuarr.errors import ContextMismatch, UnsupportedError  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H = np.random.default_rng(0).standard_normal((40, 12)).astype(np.float32)
CHUNKS = (10, 6)


def host(value):
    return value.get() if isinstance(value, ga.GpuArray) else np.asarray(value)


@pytest.fixture(scope="module")
def pair():
    """x on gpuarr chunks, n the same on numpy chunks."""
    return da.from_array(ga.asarray(H), chunks=CHUNKS), da.from_array(H, chunks=CHUNKS)


OPS = {
    "elementwise": lambda a: da.exp(a) * 2 + a,
    "sum axis 0": lambda a: a.sum(axis=0),
    "sum axis 1": lambda a: a.sum(axis=1),
    "sum": lambda a: a.sum(),
    "max axis 0": lambda a: a.max(axis=0),
    "argmax axis 1": lambda a: a.argmax(axis=1),
    "mean, std": lambda a: a.mean(axis=0) + a.std(axis=0),
    "nansum (numel, nannumel)": lambda a: da.nanmean(a, axis=1),
    "x.T @ x": lambda a: a.T @ a,
    "tensordot": lambda a: da.tensordot(a, a, axes=([1], [1])),
    "einsum": lambda a: da.einsum("ij,ij->j", a, a),
    "slicing": lambda a: a[3:37:3, ::-2],
    "take": lambda a: a[[1, 35, 12, 1]],
    "boolean mask": lambda a: a[a[:, 0] > 0],
    "rechunk": lambda a: a.rechunk((7, 5)),
    "map_blocks": lambda a: a.map_blocks(lambda b: b * 3 - 1),
    "concatenate": lambda a: da.concatenate([a, a[:, :5]], axis=1),
    "cumsum": lambda a: a.cumsum(axis=0),
}


@pytest.mark.parametrize("op", list(OPS))
def test_operation_on_gpuarr_chunks(pair, op):
    x, n = pair
    got = OPS[op](x).compute()
    assert isinstance(got, ga.GpuArray)
    np.testing.assert_allclose(got.get(), OPS[op](n).compute(), rtol=2e-5, atol=2e-5)


def test_tsqr(pair):
    x, _ = pair
    q, r = da.linalg.tsqr(x.rechunk((10, 12)))
    q, r = host(q.compute()), host(r.compute())
    np.testing.assert_allclose(q @ r, H, atol=1e-4)
    np.testing.assert_allclose(q.T @ q, np.eye(12), atol=1e-4)
    np.testing.assert_allclose(np.abs(r), np.abs(np.linalg.qr(H)[1]), rtol=1e-3, atol=1e-4)


def test_chunks_stay_on_the_device(pair):
    x, _ = pair
    assert isinstance(x._meta, ga.GpuArray)

    def check(block):
        assert isinstance(block, ga.GpuArray), type(block)
        return block + 1

    y = x.map_blocks(check)
    assert isinstance(y._meta, ga.GpuArray)
    assert isinstance(y.blocks[1, 0].compute(), ga.GpuArray)
    assert isinstance(x.to_backend("numpy").compute(), np.ndarray)


def test_to_backend_round_trip():
    n = da.from_array(H, chunks=CHUNKS)
    x = n.to_backend("gpuarr")
    assert isinstance(x._meta, ga.GpuArray) and x.to_backend("gpuarr") is x
    np.testing.assert_array_equal((x + 1).compute().get(), H + 1)
    back = x.to_backend("numpy")
    assert isinstance(back._meta, np.ndarray)
    np.testing.assert_array_equal(back.compute(), H)


def test_to_backend_context(ctx_pair):
    x = da.from_array(H, chunks=CHUNKS).to_backend("gpuarr", context=ctx_pair[1])
    got = x.blocks[0, 1].compute()
    assert got.context is ctx_pair[1]
    np.testing.assert_array_equal(got.get(), H[:10, 6:])


@pytest.mark.parametrize(("make", "expect"), [
    (lambda: da.ones((7, 4), chunks=3), np.ones((7, 4))),
    (lambda: da.zeros((7, 4), chunks=3, dtype=np.int32), np.zeros((7, 4), np.int32)),
    (lambda: da.full((7, 4), 2.5, chunks=3, dtype=np.float32), np.full((7, 4), 2.5, np.float32)),
    (lambda: da.arange(3, 40, 3, chunks=4), np.arange(3, 40, 3)),
    (lambda: da.empty((7, 4), chunks=3), None),
])
def test_backend_creation(make, expect):
    with dask.config.set({"array.backend": "gpuarr"}):
        x = make()
    assert isinstance(x._meta, ga.GpuArray)
    got = x.compute()
    assert isinstance(got, ga.GpuArray)
    if expect is None:  # empty: shape and dtype
        assert (got.shape, got.dtype) == ((7, 4), np.float64)
    else:
        assert got.dtype == expect.dtype
        np.testing.assert_array_equal(got.get(), expect)


def _uniform(draw):
    with dask.config.set({"array.backend": "gpuarr"}):
        x = draw()
    assert isinstance(x._meta, ga.GpuArray)
    return x.compute().get()


@pytest.mark.parametrize("draw", [
    lambda seed: da.random.RandomState(seed).random_sample((300, 4), chunks=(100, 4)),
    lambda seed: da.random.default_rng(seed).uniform(0, 1, size=(300, 4), chunks=(100, 4)),
], ids=["RandomState", "default_rng"])
def test_backend_random(draw):
    a, b, c = (_uniform(lambda s=s: draw(s)) for s in (5, 5, 6))
    assert a.shape == (300, 4) and ((a >= 0) & (a < 1)).all() and 0.4 < a.mean() < 0.6
    np.testing.assert_array_equal(a, b)  # same seed, same numbers
    assert not np.array_equal(a, c)
    assert not np.array_equal(a[:100], a[100:200])  # chunks draw from their own streams


def test_backend_random_distributions():
    with dask.config.set({"array.backend": "gpuarr"}):
        rng = da.random.default_rng(1)
        normal = rng.normal(2.0, 0.5, size=4000, chunks=1000).compute().get()
        ints = rng.integers(0, 10, size=400, chunks=100).compute().get()
        rs = da.random.RandomState(2).standard_normal(size=4000, chunks=1000)
    assert abs(normal.mean() - 2) < 0.05 and abs(normal.std() - 0.5) < 0.05
    assert ints.min() == 0 and ints.max() == 9
    assert abs(rs.compute().get().mean()) < 0.1
    with pytest.raises(UnsupportedError, match=r"RandomState\.beta"):
        dask_backend.RandomState(0).beta(1, 2)


def test_backend_default_rng_random():
    a = _uniform(lambda: da.random.default_rng(3).random((50, 3), chunks=(10, 3)))
    assert ((a >= 0) & (a < 1)).all()
    assert a.shape == (50, 3) and 0.35 < a.mean() < 0.65
    np.testing.assert_array_equal(
        a, _uniform(lambda: da.random.default_rng(3).random((50, 3), chunks=(10, 3))))


def _both_backends(make):
    """make(backend) computed on the gpuarr backend (read back), checked against its shape,
    chunks and dtype on numpy's (dask's choice looks the backend up at compute time)."""
    with dask.config.set({"array.backend": "gpuarr"}):
        x = make("gpuarr")
        got = x.compute()
    assert isinstance(x._meta, ga.GpuArray), type(x._meta)
    assert isinstance(got, ga.GpuArray), type(got)
    n = make("numpy")
    want = n.compute()
    assert (x.shape, x.chunks, got.shape, got.dtype) == (n.shape, n.chunks, want.shape,
                                                         want.dtype)
    return got.get()


def test_backend_permutation():
    """default_rng().permutation: dask shuffles an index with gpuarr's Generator.shuffle(x,
    axis=0), then gathers the rows."""
    got = _both_backends(lambda lib: da.random.default_rng(4).permutation(
        da.from_array(H, chunks=CHUNKS).to_backend(lib)))
    order = np.argsort(H[:, 0])
    np.testing.assert_array_equal(np.sort(got[:, 0]), H[order, 0])
    np.testing.assert_array_equal(got[np.argsort(got[:, 0])], H[order])  # whole rows moved
    assert not np.array_equal(got, H)
    with dask.config.set({"array.backend": "gpuarr"}):  # chunks of a device array
        rows = da.random.default_rng(4).permutation(da.from_array(ga.asarray(H), chunks=CHUNKS))
    np.testing.assert_array_equal(rows.compute().get(), got)
    perm = _both_backends(lambda lib: da.random.default_rng(5).permutation(1000))
    np.testing.assert_array_equal(np.sort(perm), np.arange(1000))
    assert abs(np.corrcoef(perm, np.arange(1000))[0, 1]) < 5 / np.sqrt(1000)


def test_backend_random_state_choice():
    """RandomState().choice: dask makes its meta with gpuarr.random.RandomState and draws
    each chunk with the backend's RandomState; the shapes and the distribution of numpy's."""
    p = np.array([0.1, 0.2, 0.3, 0.4])
    got = _both_backends(
        lambda lib: da.random.RandomState(7).choice(4, size=4000, chunks=1000, p=p))
    counts = np.bincount(got, minlength=4)
    assert ((counts - 4000 * p) ** 2 / (4000 * p)).sum() < 16.3  # 3 dof, 0.1%
    assert not np.array_equal(got[:1000], got[1000:2000])  # chunks draw their own streams
    grid = _both_backends(
        lambda lib: da.random.RandomState(8).choice(10, size=(40, 3), chunks=(10, 3)))
    assert grid.min() >= 0 and grid.max() <= 9 and len(np.unique(grid)) == 10
    once = _both_backends(
        lambda lib: da.random.RandomState(9).choice(50, size=20, replace=False, chunks=20))
    assert len(set(once.tolist())) == 20 and once.max() < 50
    vals = da.from_array(ga.asarray(np.arange(5.0, 10.0)), chunks=5)
    with dask.config.set({"array.backend": "gpuarr"}):
        picks = da.random.RandomState(10).choice(vals, size=300, chunks=100)
        assert isinstance(picks._meta, ga.GpuArray)
        picks = picks.compute()
    assert isinstance(picks, ga.GpuArray) and set(picks.get().tolist()) == {5.0, 6, 7, 8, 9}


def test_chunk_percentile():
    a = H[:, 0]
    q = [0, 12.5, 50, 81, 100]
    for method in ("linear", "lower", "higher", "midpoint", "nearest"):
        got, n = dask_backend._percentile(ga.asarray(a), q, method)
        assert n == len(a)
        np.testing.assert_allclose(got, np.percentile(a, q, method=method), rtol=1e-6,
                                   err_msg=method)
    assert dask_backend._percentile(ga.asarray(a[:0]), q) == (None, 0)


@pytest.mark.skipif(not hasattr(ga, "diff"), reason="dask's merge_percentiles calls "
                    "np.diff on GpuArrays; gpuarr has no diff")
def test_percentile(pair):
    x, n = pair
    np.testing.assert_allclose(host(da.percentile(x[:, 0], [10, 50, 90]).compute()),
                               da.percentile(n[:, 0], [10, 50, 90]).compute(), rtol=1e-5)


def test_token_and_sizeof():
    from dask.sizeof import sizeof
    from dask.tokenize import tokenize

    g = ga.asarray(H)
    token = tokenize(g)
    assert token == tokenize(g) == tokenize(ga.asarray(H))
    assert sizeof(g) == g.nbytes
    assert sizeof(ga.broadcast_to(ga.ones(3, np.float32), (50, 3))) == 12  # as numpy's
    g[0, 0] = 7
    assert tokenize(g) != token  # follows in-place writes


@pytest.mark.parametrize("view", [lambda g: g, lambda g: g[::2, 3:].T], ids=["whole", "view"])
def test_serialization_stages_through_the_host(view):
    pytest.importorskip("distributed")
    from distributed.protocol import deserialize, serialize
    from distributed.protocol.pickle import dumps, loads

    g = view(ga.asarray(H))
    header, frames = serialize(g, serializers=["dask"])
    assert header["serializer"] == "dask"
    back = deserialize(header, frames)
    assert isinstance(back, ga.GpuArray)
    np.testing.assert_array_equal(back.get(), g.get())
    # dask.distributed pickles task graphs; a GpuArray in one goes through the same family
    np.testing.assert_array_equal(loads(dumps({"x": g}))["x"].get(), g.get())


def test_bind_device_names():
    bind = dask_backend.BindDevice(["cl0:0", "cl0:1"])
    assert [bind.device_for(i) for i in (0, 1, 2)] == ["cl0:0", "cl0:1", "cl0:0"]
    assert dask_backend.BindDevice({"a": "cl0:1"}).device_for("a") == "cl0:1"
    with pytest.raises(ContextMismatch, match="'tcp://w' is not a number"):
        bind.device_for("tcp://w")
    assert dask_backend._with_device("floatX=float64,device=cl1:0", "cl0:1") == \
        "floatX=float64,device=cl0:1"


LAZY = """
import sys
first, second = sys.argv[1:]
__import__(first)
assert "dask" not in sys.modules or first == "dask.array", "gpuarr imported dask"
__import__(second)
import numpy as np, dask.array as da, gpuarr as ga
assert "gpuarr.dask_backend" not in sys.modules
x = da.from_array(ga.asarray(np.arange(6.0)), chunks=2)
assert "gpuarr.dask_backend" in sys.modules
from dask.array.dispatch import concatenate_lookup
assert concatenate_lookup.dispatch(ga.GpuArray) is ga.concatenate
print(float(x.sum().compute().get()))
from distributed.protocol import serialize
assert serialize(ga.asarray(np.arange(2.0)), serializers=["dask"])[0]["serializer"] == "dask"
"""


@pytest.mark.parametrize("order", [("gpuarr", "dask.array"), ("dask.array", "gpuarr")])
def test_lazy_registration(order):
    """gpuarr never imports dask; dask loads gpuarr.dask_backend when it meets a GpuArray,
    whichever of the two came first."""
    done = subprocess.run([sys.executable, "-c", LAZY, *order], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "15.0"


# ---------------------------------------------------------------- dask.distributed

def _chunk_devices(dask_worker):
    """(this worker's device, {key: device of each GpuArray the worker holds})."""
    held = {k: v.context.devname for k, v in dask_worker.data.items()
            if isinstance(v, ga.GpuArray)}
    return ga.get_context().devname, held


def test_local_cluster_one_device_per_worker():
    """Two worker processes, each bound to its own device: every chunk a worker holds lives
    on its device (those it computed and those it received), results equal numpy's."""
    distributed = pytest.importorskip("distributed")
    devices = same_platform_pair()
    if devices is None:
        pytest.skip("needs two usable devices of one platform (POCL_DEVICES='pthread pthread')")
    names = [d.name for d in devices]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        client.register_plugin(dask_backend.BindDevice(names))
        bound = client.run(lambda: ga.get_context().devname)
        assert sorted(bound.values()) == sorted(names)
        x = da.from_array(H, chunks=(5, 12)).to_backend("gpuarr")
        y = (x * 2 + 1).persist()
        gram = (y.T @ y).persist()
        distributed.wait([y, gram])
        held = client.run(_chunk_devices)
        keys = set()
        for worker, (device, chunks) in held.items():
            assert device == bound[worker] and chunks, (worker, device)
            assert set(chunks.values()) == {device}, (worker, device, chunks)
            keys |= set(chunks)
        assert {k for row in y.__dask_keys__() for k in row} <= keys
        moved = client.run(lambda dask_worker: dask_worker.state.transfer_incoming_count_total)
        assert sum(moved.values()) > 0  # y's chunks met on one worker for the Gram matrix
        got = gram.compute()
        assert isinstance(got, ga.GpuArray)
        np.testing.assert_allclose(got.get(), (2 * H + 1).T @ (2 * H + 1), rtol=1e-5)
        # a GpuArray inside the graph travels to the workers through the serializer
        s = da.from_array(ga.asarray(H), chunks=(20, 12)).sum(axis=0).compute()
        np.testing.assert_allclose(s.get(), H.sum(axis=0), rtol=1e-5)


def test_example_dask_gram():
    pytest.importorskip("distributed")
    if same_platform_pair() is None:
        pytest.skip("needs two usable devices of one platform (POCL_DEVICES='pthread pthread')")
    devices = ",".join(d.name for d in same_platform_pair())
    done = subprocess.run(
        [sys.executable, "examples/dask_gram.py", "--cap-mib", "2", "--times", "2", "--cols", "16",
         "--devices", devices, "--check"], cwd=ROOT, capture_output=True, text=True,
        timeout=300, env=dict(os.environ, GPUARRRC=os.devnull))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4.0x one cap, 2.0x all" in done.stdout
    assert "check against numpy chunks: ok" in done.stdout
    assert done.stdout.count("(cap 2)") == 2
