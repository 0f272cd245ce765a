"""Theano's GPU test program ("Testing Theano with GPU") on gpuarr.symbolic, unchanged but
for the imports: exp over a shared vector of 230,400 values, 1000 times.

    GPUARR_FLAGS=device=cl0:0 python examples/gpu_check.py   # ... Used the gpu
    GPUARR_FLAGS=device=cpu python examples/gpu_check.py     # ... Used the cpu

The result comes back as a numpy array each call (see gpu_check_device.py for the
device-resident version). ITERS in the environment shortens the loop.
"""

# ruff: noqa: B007, UP031 (Theano's program, kept as it was written)

import os
import time

import numpy

import gpuarr.symbolic as tensor
from gpuarr.symbolic import config, function, shared

vlen = 10 * 30 * 768  # 10 x #cores x # threads per core
iters = int(os.environ.get("ITERS", 1000))

rng = numpy.random.RandomState(22)
x = shared(numpy.asarray(rng.rand(vlen), config.floatX))
f = function([], tensor.exp(x))
print(f.maker.fgraph.toposort())
t0 = time.time()
for i in range(iters):
    r = f()
t1 = time.time()
print("Looping %d times took %f seconds" % (iters, t1 - t0))
print("Result is %s" % (r,))
if numpy.any([isinstance(x.op, tensor.Elemwise) and
              ('Gpu' not in type(x.op).__name__)
              for x in f.maker.fgraph.toposort()]):
    print('Used the cpu')
else:
    print('Used the gpu')
