"""The multilayer perceptron of Theano's deep learning tutorial (mlp.py) on gpuarr.symbolic:
a tanh hidden layer, a softmax output layer, the negative log-likelihood
`-T.mean(T.log(p)[T.arange(y.shape[0]), y])` with L1 and L2 penalties, T.grad, and
minibatch SGD through `givens` (the data stays in shared variables, a symbolic index picks
each minibatch). The data are synthetic: Gaussian blobs, one per class.

    python examples/mlp.py                   # Used the gpu; cost and error per epoch
    GPUARR_FLAGS=device=cpu python examples/mlp.py
    python examples/mlp.py --check           # small sizes, compared with numpy

Environment: EPOCHS (default 5; --check: 3), N (examples, default 2000; --check: 120).
"""

import argparse
import os

import numpy

import gpuarr.symbolic.tensor as T
from gpuarr.symbolic import config, function, shared


class HiddenLayer:
    """tanh(dot(input, W) + b), W uniform in +-sqrt(6 / (n_in + n_out)) as the tutorial."""

    def __init__(self, rng, input, n_in, n_out):
        bound = numpy.sqrt(6.0 / (n_in + n_out))
        self.W = shared(rng.uniform(-bound, bound, (n_in, n_out)).astype(config.floatX),
                        name="W_hidden")
        self.b = shared(numpy.zeros(n_out, config.floatX), name="b_hidden")
        self.output = T.tanh(T.dot(input, self.W) + self.b)
        self.params = [self.W, self.b]


class LogisticRegression:
    """softmax(dot(input, W) + b); the class of largest probability is the prediction."""

    def __init__(self, input, n_in, n_out):
        self.W = shared(numpy.zeros((n_in, n_out), config.floatX), name="W_out")
        self.b = shared(numpy.zeros(n_out, config.floatX), name="b_out")
        self.p_y_given_x = T.nnet.softmax(T.dot(input, self.W) + self.b)
        self.y_pred = T.argmax(self.p_y_given_x, axis=1)
        self.params = [self.W, self.b]

    def negative_log_likelihood(self, y):
        return -T.mean(T.log(self.p_y_given_x)[T.arange(y.shape[0]), y])

    def errors(self, y):
        return T.mean(T.neq(self.y_pred, y))


class MLP:
    def __init__(self, rng, input, n_in, n_hidden, n_out):
        self.hidden = HiddenLayer(rng, input, n_in, n_hidden)
        self.output = LogisticRegression(self.hidden.output, n_hidden, n_out)
        self.L1 = abs(self.hidden.W).sum() + abs(self.output.W).sum()
        self.L2_sqr = (self.hidden.W ** 2).sum() + (self.output.W ** 2).sum()
        self.negative_log_likelihood = self.output.negative_log_likelihood
        self.errors = self.output.errors
        self.params = self.hidden.params + self.output.params


def blobs(rng, n, n_in, n_out):
    """n points of n_out Gaussian blobs in n_in dimensions, and their classes."""
    centers = rng.normal(0.0, 1.0, (n_out, n_in))
    labels = rng.randint(0, n_out, n)
    points = centers[labels] + rng.normal(0.0, 0.7, (n, n_in))
    return points.astype(config.floatX), labels.astype("int64")


def numpy_reference(params, data, labels, batch, steps, lr, l1, l2):
    """The same SGD in numpy: the parameters after `steps` minibatches."""
    w1, b1, w2, b2 = (p.copy() for p in params)
    n_batches = len(data) // batch
    for step in range(steps):
        i = step % n_batches
        xb, yb = data[i * batch:(i + 1) * batch], labels[i * batch:(i + 1) * batch]
        h = numpy.tanh(xb @ w1 + b1)
        z = h @ w2 + b2
        p = numpy.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        dz = p
        dz[numpy.arange(len(yb)), yb] -= 1
        dz /= len(yb)
        dh = dz @ w2.T * (1 - h * h)
        g = [xb.T @ dh + l1 * numpy.sign(w1) + 2 * l2 * w1, dh.sum(axis=0),
             h.T @ dz + l1 * numpy.sign(w2) + 2 * l2 * w2, dz.sum(axis=0)]
        w1, b1, w2, b2 = (v - lr * gv for v, gv in zip((w1, b1, w2, b2), g))
    return w1, b1, w2, b2


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="small sizes, vs numpy")
    args = parser.parse_args()
    check = args.check
    n_in, n_hidden, n_out = (12, 16, 4) if check else (784, 500, 10)
    n = int(os.environ.get("N", 120 if check else 2000))
    epochs = int(os.environ.get("EPOCHS", 3 if check else 5))
    batch, lr, l1, l2 = 20, 0.1, 0.0001, 0.0001
    rng = numpy.random.RandomState(1234)
    data, labels = blobs(rng, n, n_in, n_out)
    train_x, train_y = shared(data, name="train_x"), shared(labels, name="train_y")

    index = T.lscalar("index")
    x, y = T.matrix("x"), T.lvector("y")
    classifier = MLP(rng, x, n_in, n_hidden, n_out)
    params0 = [p.get_value() for p in classifier.params]
    cost = classifier.negative_log_likelihood(y) + l1 * classifier.L1 + l2 * classifier.L2_sqr
    gparams = [T.grad(cost, p) for p in classifier.params]
    updates = [(p, p - lr * g) for p, g in zip(classifier.params, gparams)]
    window = slice(index * batch, (index + 1) * batch)
    train_model = function([index], cost, updates=updates, name="train_model",
                           givens={x: train_x[window], y: train_y[window]})
    test_model = function([], classifier.errors(y), name="test_model",
                          givens={x: train_x, y: train_y})

    nodes = [type(node.op).__name__ for node in train_model.maker.fgraph.toposort()]
    print("Used the gpu" if any(name.startswith("Gpu") for name in nodes) else "Used the cpu")
    n_batches = n // batch
    for epoch in range(epochs):
        costs = [float(train_model(i)) for i in range(n_batches)]
        print(f"epoch {epoch}: mean cost {numpy.mean(costs):.6f}, training error "
              f"{float(test_model()) * 100:.2f} %")

    if check:
        ref = numpy_reference(params0, data, labels, batch, epochs * n_batches, lr, l1, l2)
        tol = 1e-5 if config.floatX == "float64" else 2e-3
        same = all(numpy.allclose(p.get_value(), r, rtol=tol, atol=tol)
                   for p, r in zip(classifier.params, ref))
        print("parameters match the numpy reference:", same)
        assert same


if __name__ == "__main__":
    main()
