"""T.nnet: softmax, log_softmax, the crossentropies, relu, hard_sigmoid, sigmoid and
softplus, against numpy (stable formulas) in value and, by central finite differences, in
gradient, on the device and on the host; their stability at extreme inputs; and
examples/mlp.py --check (the tutorial's MLP trained against a numpy reference).
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import USABLE
from symbolic_helpers import numeric_grad, on, ops

import gpuarr.symbolic as T
from gpuarr.errors import ArgumentError

DT = "float64" if USABLE[0].fp64 else "float32"
H = 1e-6 if DT == "float64" else 1e-2
RTOL, ATOL = (1e-5, 1e-7) if DT == "float64" else (2e-2, 2e-3)
RNG = np.random.default_rng(11)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def np_log_softmax(x, axis=-1):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def np_softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


@pytest.fixture(scope="module", autouse=True)
def device(ctx):
    return ctx


@pytest.mark.parametrize("where", ["device", "host"])
def test_values_as_numpy(where):
    x, y, t = T.matrix("x", dtype=DT), T.lvector("y"), T.matrix("t", dtype=DT)
    xv = RNG.normal(0, 3, (4, 5)).astype(DT)
    xv[0] = [1000.0, -1000.0, 0.0, 999.0, 3.0]  # exp would overflow without the max
    yv = np.array([0, 4, 2, 2])
    tv = RNG.uniform(0, 1, (4, 5)).astype(DT)
    sm = T.nnet.softmax(x)
    outs = [sm, T.nnet.log_softmax(x), T.nnet.softmax(x, axis=0), T.log(sm),
            T.nnet.categorical_crossentropy(sm, y), T.nnet.categorical_crossentropy(sm, t),
            T.nnet.binary_crossentropy(T.nnet.sigmoid(x), t),
            T.nnet.sigmoid_binary_crossentropy(x, t), T.nnet.relu(x), T.nnet.relu(x, 0.1),
            T.nnet.hard_sigmoid(x), T.nnet.softplus(x), T.nnet.sigmoid(x)]
    with on(where):
        f = T.function([x, y, t], outs)
    got = f(xv, yv, tv)
    lsm = np_log_softmax(xv)
    bce = tv * np_softplus(-xv) + (1 - tv) * np_softplus(xv)
    with np.errstate(over="ignore"):
        sig = 1 / (1 + np.exp(-xv))
    want = [np.exp(lsm), lsm, np.exp(np_log_softmax(xv, 0)), lsm,
            -lsm[np.arange(4), yv], -(tv * lsm).sum(axis=1), bce, bce,
            np.maximum(xv, 0), np.where(xv > 0, xv, 0.1 * xv),
            np.clip(0.2 * xv + 0.5, 0, 1), np_softplus(xv), sig]
    for k, (g, w) in enumerate(zip(got, want)):
        assert np.all(np.isfinite(g)), f"output {k}"
        np.testing.assert_allclose(g, w, rtol=1e-12 if DT == "float64" else 1e-5,
                                   atol=1e-12 if DT == "float64" else 1e-6,
                                   err_msg=f"output {k}")
    names = ops(f)
    assert ("GpuSoftmax" in names and "GpuLogSoftmax" in names) == (where == "device")
    # log(softmax(x)) is log_softmax(x): finite where the probability underflows
    assert T.log(sm).owner.op == T.nnet.LogSoftmax(1)


@pytest.mark.parametrize("where", ["device", "host"])
def test_gradients_match_finite_differences(where):
    x, y, t = T.matrix("x", dtype=DT), T.lvector("y"), T.matrix("t", dtype=DT)
    w = RNG.normal(0, 1, (3, 4)).astype(DT)
    sm = T.nnet.softmax(x)
    cost = ((sm * w).sum() + (T.nnet.log_softmax(x, axis=0) * w).sum()
            + T.nnet.categorical_crossentropy(sm, y).mean()
            + T.nnet.categorical_crossentropy(T.nnet.softmax(x * 2), t).sum()
            + T.nnet.binary_crossentropy(T.nnet.sigmoid(x), t).sum()
            + T.nnet.sigmoid_binary_crossentropy(x * 0.5, t).sum()
            + (T.nnet.relu(x, 0.2) * w).sum() + (T.nnet.relu(x) ** 2).sum()
            + (T.nnet.hard_sigmoid(x) * w).sum() + (T.nnet.softplus(x) * w).sum())
    with on(where):
        f = T.function([x, y, t], [cost, T.grad(cost, x)])
    xv = RNG.uniform(-2, 2, (3, 4)).astype(DT)
    xv[np.abs(xv) < 0.1] += 0.3  # away from the kinks of relu and hard_sigmoid
    xv[np.abs(np.abs(xv) - 2.5) < 0.1] += 0.3
    yv, tv = np.array([3, 0, 1]), RNG.uniform(0, 1, (3, 4)).astype(DT)
    got = f(xv, yv, tv)[1]
    np.testing.assert_allclose(got, numeric_grad(f, [xv, yv, tv], 0, H), rtol=RTOL, atol=ATOL)


def test_gradients_stay_finite_at_extreme_inputs():
    x, y = T.matrix("x", dtype=DT), T.lvector("y")
    cost = (T.nnet.categorical_crossentropy(T.nnet.softmax(x), y).sum()
            + T.nnet.binary_crossentropy(T.nnet.sigmoid(x), 1.0).sum()
            + T.nnet.log_softmax(x).sum())
    f = T.function([x, y], [cost, T.grad(cost, x)])
    big = 1e4 if DT == "float64" else 1e3
    xv = np.array([[big, -big, 0.0], [-big, big, 1.0]], DT)
    yv = np.array([1, 0])
    cost_v, g = f(xv, yv)
    assert np.isfinite(cost_v) and np.all(np.isfinite(g))
    # softmax - onehot(y), -sigmoid(-x), 1 - 3 softmax: the three terms' gradients
    sm = np.exp(np_log_softmax(xv))
    want = sm - np.eye(3)[yv] - np.exp(-np_softplus(xv)) + 1 - 3 * sm
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6)


def test_errors():
    with pytest.raises(ArgumentError, match="labels"):
        T.nnet.categorical_crossentropy(T.tensor3(), T.lvector())
    with pytest.raises(ArgumentError, match="floats"):
        T.nnet.softmax(T.lmatrix())


def test_mlp_example_matches_numpy():
    env = dict(os.environ, GPUARRRC=os.devnull,
               GPUARR_FLAGS=",".join(f for f in ("print_active_device=False",
                                                  os.environ.get("GPUARR_FLAGS", "")) if f))
    proc = subprocess.run([sys.executable, os.path.join("examples", "mlp.py"), "--check"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Used the gpu" and lines[-1] == "parameters match the numpy reference: True"
    assert len([line for line in lines if line.startswith("epoch")]) == 3
