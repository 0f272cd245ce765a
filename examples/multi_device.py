"""Theano's "Using multiple GPUs" program: shared variables on two named contexts, and
one function whose two products each run where their operands live.

    GPUARR_FLAGS="contexts=dev0->cl0:0;dev1->cl0:1" python examples/multi_device.py

N in the environment sets the matrix size (default 1024, as in Theano's example).
"""

import os

import numpy

import gpuarr.symbolic as T

n = int(os.environ.get("N", 1024))
v01 = T.shared(numpy.random.random((n, n)).astype('float32'), target='dev0')
v02 = T.shared(numpy.random.random((n, n)).astype('float32'), target='dev0')
v11 = T.shared(numpy.random.random((n, n)).astype('float32'), target='dev1')
v12 = T.shared(numpy.random.random((n, n)).astype('float32'), target='dev1')

f = T.function([], [T.dot(v01, v02), T.dot(v11, v12)])

r0, r1 = f()
for node in f.maker.fgraph.toposort():
    print(node.op)
print("dev0 product ok:", numpy.allclose(r0, v01.get_value() @ v02.get_value(), rtol=1e-4))
print("dev1 product ok:", numpy.allclose(r1, v11.get_value() @ v12.get_value(), rtol=1e-4))
