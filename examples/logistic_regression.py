"""Theano's logistic regression tutorial on gpuarr.symbolic: sigmoid(dot(x, w) + b),
cross-entropy with an L2 penalty, T.grad and SGD updates. The program is Theano's but
for the imports and a seed; at the end it trains the same model with numpy and checks
that the weights and predictions agree.

    python examples/logistic_regression.py              # Used the gpu
    GPUARR_FLAGS=device=cpu python examples/logistic_regression.py   # Used the cpu

STEPS in the environment sets the number of training steps (default 10000).
"""

# ruff: noqa: B007 (Theano's program, kept as it was written)

import os

import numpy

import gpuarr.symbolic as T
from gpuarr.symbolic import config

rng = numpy.random
rng.seed(0)

N = 400                                   # training sample size
feats = 784                               # number of input variables

# generate a dataset: D = (input_values, target_class)
D = (rng.randn(N, feats).astype(config.floatX),
     rng.randint(size=N, low=0, high=2).astype(config.floatX))
training_steps = int(os.environ.get("STEPS", 10000))

# Declare Theano symbolic variables
x = T.matrix("x")
y = T.vector("y")

# initialize the weight vector w randomly
#
# this and the following bias variable b
# are shared so they keep their values
# between training iterations (updates)
w = T.shared(rng.randn(feats).astype(config.floatX), name="w")

# initialize the bias term
b = T.shared(numpy.asarray(0., dtype=config.floatX), name="b")
w0, b0 = w.get_value(), b.get_value()

# Construct Theano expression graph
p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))   # Probability that target = 1
prediction = p_1 > 0.5                    # The prediction thresholded
xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)  # Cross-entropy loss function
cost = xent.mean() + 0.01 * (w ** 2).sum()  # The cost to minimize
gw, gb = T.grad(cost, [w, b])             # Compute the gradient of the cost
                                          # w.r.t weight vector w and
                                          # bias term b
                                          # (we shall return to this in a
                                          # following section of this tutorial)

# Compile
train = T.function(
    inputs=[x, y],
    outputs=[prediction, xent],
    updates=((w, w - 0.01 * gw), (b, b - 0.01 * gb)),
    name="train")
predict = T.function(inputs=[x], outputs=prediction, name="predict")

if any([x.op.__class__.__name__ in ['Gemv', 'CGemv', 'Gemm', 'CGemm'] for x in
        train.maker.fgraph.toposort()]):
    print('Used the cpu')
elif any([x.op.__class__.__name__ in ['GpuGemm', 'GpuGemv'] for x in
          train.maker.fgraph.toposort()]):
    print('Used the gpu')
else:
    print('ERROR, not able to tell if theano used the cpu or the gpu')
    print(train.maker.fgraph.toposort())

# Train
for i in range(training_steps):
    pred, err = train(D[0], D[1])

print("Final model:")
print(w.get_value())
print(b.get_value())
print("target values for D:")
print(D[1])
print("prediction on D:")
print(predict(D[0]))


def numpy_reference(steps):
    """The same training in numpy (float32 as the data), for the comparison."""
    xs, ys = D
    wr, br = w0.copy(), b0.copy()
    for _ in range(steps):
        p = 1 / (1 + numpy.exp(-xs @ wr - br))
        wr = wr - 0.01 * (xs.T @ (p - ys) / N + 0.02 * wr)
        br = br - 0.01 * (p - ys).mean()
    return wr, br, 1 / (1 + numpy.exp(-xs @ wr - br)) > 0.5


wr, br, pred_ref = numpy_reference(training_steps)
print("max |w - reference|:", numpy.abs(w.get_value() - wr).max(), "b:", b.get_value(), br)
same_w = numpy.allclose(w.get_value(), wr, rtol=1e-3, atol=1e-4)
same_pred = numpy.array_equal(predict(D[0]), pred_ref)
print("weights match the numpy reference:", same_w)
print("predictions match the numpy reference:", same_pred)
assert same_w and same_pred
