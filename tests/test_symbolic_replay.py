"""Replays of compiled functions (gpuarr/symbolic/replay.py): from the third call with one
key (shapes, host scalars, shared values, flags) a function enqueues the commands its
second call recorded. numpy is the oracle at every call, with new data each call.

The graphs are those of test_symbolic_function.py (the same kernels) where they can be.
"""

import dataclasses
import threading

import numpy as np
import pytest

import gpuarr as ga
import gpuarr.symbolic as T
from gpuarr import config, launch
from gpuarr.symbolic import replay

DT = "float32"
RNG = np.random.default_rng(31)
N, F = 12, 5
W0 = (RNG.standard_normal(F) * 0.1).astype(DT)
V = RNG.uniform(0.5, 1.5, 7).astype(DT)


def _data(n, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, F)).astype(DT), rng.integers(0, 2, n).astype(DT))


def _tape(f):
    """f's one recorded call (its Tape)."""
    tapes = [t for t in f.schedule.replays.tapes.values() if isinstance(t, replay.Tape)]
    assert len(tapes) == 1, f.schedule.replays.tapes
    return tapes[0]


def _steps_run(f):
    """A list that names each schedule step of f run from now on."""
    ran = []
    steps = f.schedule.steps
    for k, (step, node) in enumerate(zip(list(steps), f.schedule.order)):
        steps[k] = _counted(step, type(node.op).__name__, ran)
    return ran


def _counted(step, name, ran):
    def run():
        ran.append(name)
        return step()
    return run


@pytest.fixture(scope="module")
def dctx(ctx):
    assert ga.get_context() is ctx
    return ctx


def test_training_step_replays_with_new_data(dctx):
    """Theano's logistic-regression step, new data at each of 6 calls: from the third call
    on only the reads run as steps (the uploads write into the recorded buffers), and every
    call matches numpy."""
    x, y = T.fmatrix("x"), T.fvector("y")
    w = T.shared(W0.copy(), name="w")
    b = T.shared(np.zeros((), DT), name="b")
    p = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -y * T.log(p) - (1 - y) * T.log(1 - p)
    gw, gb = T.grad(xent.mean() + 0.01 * (w ** 2).sum(), [w, b])
    f = T.function([x, y], [p > 0.5, xent], updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)])
    assert f.schedule.replays.why is None
    storage = w.get_value(borrow=True, return_internal_type=True).storage
    wr, br = W0.astype(np.float64), 0.0
    ran = None
    for call in range(6):
        xs, ys = _data(N, call)
        if call == 3:
            ran = _steps_run(f)
        pred, got = f(xs, ys)
        pr = 1 / (1 + np.exp(-(xs @ wr) - br))
        np.testing.assert_array_equal(pred, pr > 0.5)
        np.testing.assert_allclose(got, -ys * np.log(pr) - (1 - ys) * np.log(1 - pr),
                                   rtol=1e-5, atol=1e-6)
        g = (pr - ys) / N
        wr, br = wr - 0.1 * (xs.T @ g + 0.02 * wr), br - 0.1 * g.sum()
        np.testing.assert_allclose(w.get_value(), wr, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b.get_value(), br, rtol=1e-5, atol=1e-6)
    assert _tape(f).why is None
    assert ran == ["HostFromGpu"] * 2 * 3
    assert w.get_value(borrow=True, return_internal_type=True).storage is storage


def test_device_outputs_get_buffers_of_their_own(dctx):
    """Arrays returned by earlier calls keep their values; a device output read back in
    the same call and one returned twice (as two outputs) stay right."""
    v = T.fvector("v")
    e = T.exp(v) * 2
    f = T.function([v], [e.transfer(None), (e + 1).transfer(None), e])
    got = [(a, f(a)) for a in (V * k for k in range(1, 6))]
    assert _tape(f).why is None
    for a, (dev, dev1, host) in got:
        np.testing.assert_allclose(dev.get(), np.exp(a) * 2, rtol=1e-6)
        np.testing.assert_allclose(dev1.get(), np.exp(a) * 2 + 1, rtol=1e-6)
        np.testing.assert_allclose(host, np.exp(a) * 2, rtol=1e-6)
    assert len({id(d.storage) for _, (d, _, _) in got}) == len(got)
    # the upload is done when the call returns: the input may change at once
    g = T.function([v], (T.exp(v) * 3).transfer(None))
    for k in range(1, 5):
        a = V * k
        out = g(a)
        a[:] = np.nan
        np.testing.assert_allclose(out.get(), np.exp(V * k) * 3, rtol=1e-6)
    assert _tape(g).why is None


def test_a_new_key_records_again(dctx, monkeypatch):
    """A scalar input's value, the data's shape, the flags and the shared values are in
    the key: each change runs the plain schedule, then records, then replays; new flags or
    shared values drop the other keys' tapes."""
    x, lr = T.fmatrix("x"), T.fscalar("lr")
    w = T.shared(W0.copy(), name="w")
    f = T.function([x, lr], T.dot(x, w), updates=[(w, w - lr * T.dot(x.T, T.dot(x, w)))])
    want = W0.astype(np.float64)

    def tapes():
        return [t for t in f.schedule.replays.tapes.values() if isinstance(t, replay.Tape)]
    calls = [(N, 0.1)] * 3 + [(N, 0.2)] * 3 + [(7, 0.2)] * 3 + [(N, 0.1)] * 3
    for k, (n, rate) in enumerate(calls):
        xs = _data(n, 100 + k)[0]
        if k == 9:
            assert len(tapes()) == 3
            monkeypatch.setattr(config, "flags", dataclasses.replace(config.flags))
        np.testing.assert_allclose(f(xs, rate), xs @ want, rtol=1e-5, atol=1e-6)
        want = want - np.float32(rate) * (xs.T @ (xs @ want))
        np.testing.assert_allclose(w.get_value(), want, rtol=1e-5, atol=1e-6)
    (last,) = tapes()
    w.set_value(W0)
    want = W0.astype(np.float64)
    for k in range(3):
        xs = _data(N, 200 + k)[0]
        np.testing.assert_allclose(f(xs, 0.1), xs @ want, rtol=1e-5, atol=1e-6)
        want = want - np.float32(0.1) * (xs.T @ (xs @ want))
    (new,) = tapes()
    assert new is not last and new.why is None


def test_what_does_not_replay(dctx):
    """Each call still matches numpy; `why` says why it runs the plain schedule."""
    v = T.fvector("v")
    w = T.shared(V.copy(), name="w")
    # no update in place (FAST_COMPILE): w is a new array at each call, so is the key
    f = T.function([v], (v * w).sum(), updates=[(w, w + v)], mode="FAST_COMPILE")
    want = V.astype(np.float64)
    for k in range(4):
        np.testing.assert_allclose(f(V * k), (V * k * want).sum(), rtol=1e-5)
        want = want + V * k
    assert not [t for t in f.schedule.replays.tapes.values() if isinstance(t, replay.Tape)]
    np.testing.assert_allclose(w.get_value(), want, rtol=1e-6)
    # an uploaded input returned as it is on the device
    g = T.function([v], [v.transfer(None), (v * 2).transfer(None)])
    outs = [g(V * k) for k in range(4)]
    assert "buffer" in _tape(g).why
    for k, (o, o2) in enumerate(outs):
        np.testing.assert_allclose(o.get(), V * k)
        np.testing.assert_allclose(o2.get(), V * k * 2)
    # an op with state of its own
    srng = T.shared_randomstreams.RandomStreams(seed=3)
    h = T.function([], srng.uniform((5,)))
    assert "does not replay" in h.schedule.replays.why
    draws = [h() for _ in range(3)]
    assert not np.array_equal(draws[0], draws[2])


def test_recording_captures_launches_and_spoils_on_host_transfers(dctx):
    a = ga.asarray(V)
    rec = launch.Recording()
    with launch.recording(rec):
        b = a * 2 + 1
        assert rec.spoiled is None and len(rec.commands) >= 1
        rec.paused = True
        b.get()
        rec.paused = False
        assert rec.spoiled is None
        inner = launch.Recording()  # nested: both see the commands
        with launch.recording(inner):
            a - 1
        assert len(inner.commands) == 1 and rec.commands[-1] == inner.commands[0]
        # another thread records its own commands, and only those, meanwhile
        other = launch.Recording()

        def work():
            with launch.recording(other):
                a + 5
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        n = len(rec.commands)
        assert len(other.commands) == 1 and n >= 1 and other.spoiled is None
        b.get()
    assert rec.spoiled == "a read to the host"
    a.set(V * 3)
    for fn, args in rec.commands:
        fn(*args)
    np.testing.assert_allclose(b.get(), V * 6 + 1, rtol=1e-6)
