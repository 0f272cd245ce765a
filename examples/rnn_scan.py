"""An Elman recurrent network on gpuarr.symbolic, written as Theano users wrote it: the
step h_t = tanh(x_t W_in + h_{t-1} W + b), y_t = h_t W_out inside `scan` (h fed back,
y not), a squared error against a target sequence, T.grad through the scan
(backpropagation through time, optionally truncated) and SGD updates of shared weights.

The task needs memory: the target at step t is x_{t-1}[0] - x_t[1].

    python examples/rnn_scan.py                  # trains, printing the loss
    python examples/rnn_scan.py --check          # and trains the same model in numpy
    GPUARR_FLAGS=device=cpu python examples/rnn_scan.py --check --truncate 4
"""

import argparse

import numpy as np

import gpuarr.symbolic as T
from gpuarr.symbolic import config

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--check", action="store_true", help="train the same model in numpy and "
                    "compare the losses, predictions and weights")
parser.add_argument("--steps", type=int, default=20, help="training steps (default 20)")
parser.add_argument("--length", type=int, default=12, help="sequence length (default 12)")
parser.add_argument("--hidden", type=int, default=8, help="hidden units (default 8)")
parser.add_argument("--truncate", type=int, default=-1,
                    help="truncate_gradient: backpropagate through the last k steps only")
args = parser.parse_args()

floatX = config.floatX
rng = np.random.default_rng(0)
n_in, n_hidden, n_out, lr = 2, args.hidden, 1, 0.2
data_x = rng.normal(size=(args.length, n_in)).astype(floatX)
data_t = (np.concatenate([[0.0], data_x[:-1, 0]]) - data_x[:, 1])[:, None].astype(floatX)
data_h0 = np.zeros(n_hidden, floatX)


def weights(*shape, scale=0.5):
    return (rng.normal(size=shape) * scale).astype(floatX)


W_in = T.shared(weights(n_in, n_hidden), name="W_in")
W = T.shared(weights(n_hidden, n_hidden, scale=0.3), name="W")
b = T.shared(np.zeros(n_hidden, floatX), name="b")
W_out = T.shared(weights(n_hidden, n_out), name="W_out")
params = [W_in, W, b, W_out]
initial = [p.get_value() for p in params]

x = T.matrix("x")
t = T.matrix("t")
h0 = T.vector("h0")


def step(x_t, h_tm1):
    h_t = T.tanh(T.dot(x_t, W_in) + T.dot(h_tm1, W) + b)
    y_t = T.dot(h_t, W_out)
    return h_t, y_t


[h, y], _ = T.scan(step, sequences=x, outputs_info=[h0, None],
                   truncate_gradient=args.truncate, name="rnn")
cost = ((y - t) ** 2).mean()
grads = T.grad(cost, params)
train = T.function([x, t, h0], cost, name="train",
                   updates=[(p, p - lr * g) for p, g in zip(params, grads)])
predict = T.function([x, h0], y, name="predict")
names = [type(n.op).__name__ for n in train.maker.fgraph.toposort()]
print("scan runs on the", "gpu" if "GpuScan" in names else "cpu")

losses = []
for i in range(args.steps):
    losses.append(float(train(data_x, data_t, data_h0)))
    if i % 5 == 0 or i == args.steps - 1:
        print(f"step {i}: loss {losses[-1]:.6f}")


def numpy_training(steps):
    """The same model and updates in numpy: BPTT by hand, as Theano's scan truncates it
    (only the last `truncate` steps are differentiated)."""
    w_in, w, bias, w_out = (v.copy() for v in initial)
    n = args.length
    first = 0 if args.truncate < 0 else max(n - args.truncate, 0)
    found = []
    for _ in range(steps):
        hs, prev = [], data_h0
        for x_t in data_x:
            prev = np.tanh(x_t @ w_in + prev @ w + bias)
            hs.append(prev)
        hs = np.array(hs)
        out = hs @ w_out
        found.append(((out - data_t) ** 2).mean())
        d_out = 2 * (out - data_t) / out.size
        g_in, g_w, g_b, g_out = (np.zeros_like(v) for v in (w_in, w, bias, w_out))
        owed = np.zeros(n_hidden, floatX)
        for s in reversed(range(first, n)):
            g_out += np.outer(hs[s], d_out[s])
            dz = (d_out[s] @ w_out.T + owed) * (1 - hs[s] ** 2)
            g_in += np.outer(data_x[s], dz)
            g_w += np.outer(hs[s - 1] if s else data_h0, dz)
            g_b += dz
            owed = dz @ w.T
        w_in, w, bias, w_out = (v - lr * g for v, g in
                                zip((w_in, w, bias, w_out), (g_in, g_w, g_b, g_out)))
    return found, (w_in, w, bias, w_out)


if args.check:
    tol = dict(rtol=1e-9, atol=1e-12) if floatX == "float64" else dict(rtol=1e-4, atol=1e-6)
    ref_losses, ref_params = numpy_training(args.steps)
    ok_loss = np.allclose(losses, ref_losses, **tol)
    print("losses match numpy:", ok_loss)
    ok_params = all(np.allclose(p.get_value(), r, **tol) for p, r in zip(params, ref_params))
    print("weights match numpy:", ok_params)
    w_in, w, bias, w_out = ref_params
    hs, prev = [], data_h0
    for x_t in data_x:
        prev = np.tanh(x_t @ w_in + prev @ w + bias)
        hs.append(prev)
    ok_pred = np.allclose(predict(data_x, data_h0), np.array(hs) @ w_out, **tol)
    print("predictions match numpy:", ok_pred)
    assert ok_loss and ok_params and ok_pred
    print("check: all match numpy")
