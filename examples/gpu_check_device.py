"""Theano's GPU test program with the result kept on the device ("Returning a Handle to
Device-Allocated Data"): `.transfer(None)` marks the output as wanted on the default
device, so each call returns a GpuArray and nothing is copied back.

    python examples/gpu_check_device.py            # ... Used the gpu
    python examples/gpu_check_device.py gpu_from_host   # the same with gpu_from_host

ITERS in the environment shortens the loop.
"""

# ruff: noqa: B007, UP031 (Theano's program, kept as it was written)

import os
import sys
import time

import numpy

import gpuarr.symbolic as tensor
from gpuarr.symbolic import config, function, gpu_from_host, shared

vlen = 10 * 30 * 768  # 10 x #cores x # threads per core
iters = int(os.environ.get("ITERS", 1000))

rng = numpy.random.RandomState(22)
x = shared(numpy.asarray(rng.rand(vlen), config.floatX))
if sys.argv[1:] == ["gpu_from_host"]:
    f = function([], gpu_from_host(tensor.exp(x)))
else:
    f = function([], tensor.exp(x).transfer(None))
print(f.maker.fgraph.toposort())
t0 = time.time()
for i in range(iters):
    r = f()
t1 = time.time()
print("Looping %d times took %f seconds" % (iters, t1 - t0))
print("Result is %s" % (numpy.asarray(r),))
print("Result type is %s" % type(r).__name__)
if numpy.any([isinstance(x.op, tensor.Elemwise) and
              ('Gpu' not in type(x.op).__name__)
              for x in f.maker.fgraph.toposort()]):
    print('Used the cpu')
else:
    print('Used the gpu')
