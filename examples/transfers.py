"""Moving values explicitly: `x.transfer(None)` (the default device), `x.transfer('cpu')`
(the host) and `x.transfer('dev0')` (a named context). A transfer says where a value is
wanted; the compiler inserts only the copies that are needed.

    python examples/transfers.py
"""

import numpy

import gpuarr.symbolic as T

a = T.fmatrix("a")
value = numpy.arange(6, dtype="float32").reshape(2, 3)

# a host input moved to the default device, evaluated with .eval({a: value})
b = a.transfer(None)
r = b.eval({a: value})
print(f"a.transfer(None) gives a {type(r).__name__} on {r.context.name}")
assert numpy.array_equal(r.get(), value)

# computed on the device (where b lives) and brought back to the host explicitly
c = (T.exp(b) * 2).transfer("cpu")
r = c.eval({a: value})
print(f"(exp(b) * 2).transfer('cpu') gives a {type(r).__name__}")
assert numpy.allclose(r, numpy.exp(value) * 2, rtol=1e-6)

# a shared variable on the device: wanted on the host, and kept on the device
s = T.shared(value, name="s")
f = T.function([], [s.transfer("cpu"), (s * 2).transfer(None), s * 3])
host, dev, plain = f()
moves = [n for n in f.maker.fgraph.toposort() if "From" in type(n.op).__name__]
print(f"outputs: {type(host).__name__}, {type(dev).__name__}, {type(plain).__name__}; "
      f"{len(moves)} transfer node(s): {moves}")
assert isinstance(host, numpy.ndarray) and numpy.array_equal(host, value)
assert numpy.array_equal(dev.get(), value * 2) and numpy.array_equal(plain, value * 3)

# a round trip the compiler removes: host -> device -> host -> device is one copy
g = T.function([a], T.exp(a.transfer(None).transfer("cpu")).transfer(None))
moves = [n for n in g.maker.fgraph.toposort() if "From" in type(n.op).__name__]
print(f"round trip: {len(moves)} transfer node(s): {moves}")
assert len(moves) == 1
print("transfers ok")
