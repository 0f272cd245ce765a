"""`scan`: Theano's loop. One `Scan` node runs an inner graph once per step over sequences,
recurrent states (outputs fed back, with taps) and non-sequences; its gradient is
backpropagation through time, itself a scan.

The inner graph is compiled once, when the function holding the node is compiled
(inner.py), and a step is one call of it. Placement treats the node as any op: it runs on
the context its data lives on (or the default device), its inputs move there once, the
inner work stays there (integer indices and counts stay on the host), and the stacked
outputs come back as GpuArrays on that context.

Layout of a node (ScanInfo): inputs [n_steps, sequences, initial states, non-sequences];
inner inputs [step number (scan_steps only), one row of each sequence, one value per tap of
each state, non-sequences]; inner outputs [each state's new value, other outputs]; node
outputs [each state's whole history, initial rows first (or only its last value), other
outputs stacked over the steps]. The user's outputs are views of these.
"""

import collections
import functools

import numpy as np

from .. import dtypes
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from .basic import Size, dimshuffle, set_subtensor, subtensor, zeros_like
from .elemwise import FUNCTIONS, cast
from .fgraph import rebuild, remake
from .grad import grad
from .graph import Apply, Constant, Op, TensorType, as_variable, op_pair, toposort
from .inner import InnerFunction, placeholder
from .shared import SharedVariable, default_updates
from .types import HOST

__all__ = ["GpuScan", "Scan", "ScanInfo", "scan", "scan_steps"]


class ScanInfo:
    """The inner graph of a scan and how a node's inputs and outputs line up with it.
    Scan ops are equal only when they share one (identity)."""

    def __init__(self, inputs, outputs, n_seqs, taps, last, index, truncate, name, mode=None):
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.n_seqs = n_seqs
        self.taps = tuple(tuple(t) for t in taps)  # per state: negative offsets read
        self.last = tuple(last)  # per state: the node outputs only its last value
        self.index = bool(index)  # the first inner input is the step number
        self.truncate = truncate
        self.name = name
        self.mode = mode  # the inner graph's (function's mode=)
        self.n_states = len(self.taps)
        self.depth = tuple(-min(t) for t in self.taps)
        self.first_tap = self.index + n_seqs
        self.first_nonseq = self.first_tap + sum(map(len, self.taps))
        self._whole = None

    def rows(self):
        """The inner input of each state's first tap (its type is the state's)."""
        found, pos = [], self.first_tap
        for taps in self.taps:
            found.append(self.inputs[pos])
            pos += len(taps)
        return found

    def whole(self):
        """The same scan keeping every state's history (what gradients read)."""
        if not any(self.last):
            return self
        if self._whole is None:
            self._whole = ScanInfo(self.inputs, self.outputs, self.n_seqs, self.taps,
                                   [False] * self.n_states, self.index, self.truncate,
                                   self.name, self.mode)
        return self._whole

    def __str__(self):
        return self.name


def _host_index(v):
    return v.ndim == 0 and v.dtype.kind in "biu"


class _Scan(Op):
    """A loop: the inner graph once per step (see `scan`)."""

    __props__ = ("info",)

    def __init__(self, info):
        self.info = info
        seqs = info.inputs[info.index:info.first_tap]
        nonseqs = info.inputs[info.first_nonseq:]
        first = 1 + info.n_seqs + info.n_states
        # n_steps, integer index sequences and integer scalars stay on the host
        self.host_inputs = (0, *(1 + k for k, v in enumerate(seqs) if _host_index(v)),
                            *(first + k for k, v in enumerate(nonseqs) if _host_index(v)))
        self.inner_host = {k for k, v in enumerate(info.inputs)
                           if _host_index(v) and not info.first_tap <= k < info.first_nonseq}

    def _describe(self):
        return self.info.name

    def make_node(self, n_steps, *args):
        info = self.info
        n_steps = as_variable(n_steps)
        if n_steps.ndim != 0 or n_steps.dtype.kind not in "iu":
            raise ArgumentTypeError(f"scan {info.name}: n_steps must be an integer scalar, "
                                    f"got {n_steps.type}")
        args = [as_variable(a) for a in args]
        seqs = info.inputs[info.index:info.first_tap]
        nonseqs = info.inputs[info.first_nonseq:]
        want = [(v, 1) for v in seqs] + [(v, 1) for v in info.rows()] + [(v, 0) for v in nonseqs]
        if len(args) != len(want):
            raise ArgumentError(f"scan {info.name} takes {len(want)} inputs after n_steps, "
                                f"got {len(args)}")
        for a, (v, lead) in zip(args, want):
            if a.dtype != v.dtype or a.ndim != v.ndim + lead:
                raise ArgumentTypeError(f"scan {info.name}: input {a} ({a.type}) does not "
                                        f"fit its inner variable {v} ({v.type})")
        ctx = self.context_name
        types = [TensorType(r.dtype, r.broadcastable if last else (False, *r.broadcastable), ctx)
                 for r, last in zip(info.rows(), info.last)]
        types += [TensorType(o.dtype, (False, *o.broadcastable), ctx)
                  for o in info.outputs[info.n_states:]]
        return Apply(self, [n_steps, *args], types)

    def gpu_check(self, node, ctx):
        for n in toposort(self.info.outputs):
            for v in (*n.inputs, *n.outputs):
                dtypes.check_device(v.dtype, ctx)
        return True

    def make_fn(self, node, xp, ctx):
        info = self.info
        inner = InnerFunction(info.inputs, info.outputs, HOST if ctx is None else ctx,
                              self.inner_host, name=f"{info.name} (inner)", mode=info.mode)
        return _runner(info, inner, node, xp, ctx)

    def grad(self, node, output_grads):
        return _backward(self.info, node, output_grads)


Scan, GpuScan = op_pair(_Scan, "Scan")


def _runner(info, inner, node, xp, ctx):
    """The callable a Scan node runs: run(n_steps, *sequences, *initials, *non_sequences)."""
    ns, nst, name = info.n_seqs, info.n_states, info.name
    cells, call = inner.cells, inner.fn
    index_cell = cells[0] if info.index else None
    seq_cells = cells[info.index:info.first_tap]
    taps, pos = [], info.first_tap
    for j, offsets in enumerate(info.taps):
        for k in offsets:
            taps.append((cells[pos], j, k))
            pos += 1
    nonseq_cells = cells[info.first_nonseq:]
    depth, last = info.depth, info.last
    others = node.outputs[nst:]
    def row(a, t):
        return a[t, ...] if isinstance(a, np.ndarray) else a[t]  # numpy: 0-d, not a scalar

    if ctx is None:
        def stack(values):
            return np.stack(values)

        def empty(v):
            return np.empty((0,) * v.ndim, v.dtype)
    else:
        def stack(values):
            return xp.stack(values)

        def empty(v):
            return xp.empty((0,) * v.ndim, v.dtype, context=ctx)

    def run(n, *args):
        n = int(n)
        if n < 0:
            raise ArgumentError(f"scan {name}: n_steps must be >= 0, got {n}")
        seqs, inits = args[:ns], args[ns:ns + nst]
        for k, s in enumerate(seqs):
            if s.shape[0] < n:
                raise ShapeError(f"scan {name}: sequence {k} has {s.shape[0]} step(s), fewer "
                                 f"than n_steps={n}")
        hist = []
        for j, init in enumerate(inits):
            if init.shape[0] < depth[j]:
                raise ShapeError(f"scan {name}: the initial value of output {j} has "
                                 f"{init.shape[0]} row(s); taps {list(info.taps[j])} need "
                                 f"{depth[j]}")
            hist.append([row(init, i) for i in range(depth[j])])
        shapes = [h[0].shape for h in hist]
        outs_other = [[] for _ in others]
        try:
            for c, v in zip(nonseq_cells, args[ns + nst:]):
                c.value = v
            for t in range(n):
                if index_cell is not None:
                    index_cell.value = np.asarray(t, np.int64)
                for c, s in zip(seq_cells, seqs):
                    c.value = row(s, t)
                for c, j, k in taps:
                    h = hist[j]
                    c.value = h[len(h) + k]
                outs = call()
                for j in range(nst):
                    v, h = outs[j], hist[j]
                    if v.shape != shapes[j]:
                        raise ShapeError(f"scan {name}: step {t} gives output {j} the shape "
                                         f"{v.shape}, its initial value has {shapes[j]}; a "
                                         f"recurrent output must keep its shape")
                    h.append(v)
                    if last[j] and len(h) > depth[j]:
                        del h[0]
                for r, found in enumerate(outs_other):
                    v = outs[nst + r]
                    if found and v.shape != found[0].shape:
                        raise ShapeError(f"scan {name}: output {nst + r} has shape "
                                         f"{found[0].shape} at step 0 and {v.shape} at step {t}")
                    found.append(v)
        finally:
            for c in cells:
                c.value = None
        result = [(h[-1].copy() if n == 0 else h[-1]) if last[j] else stack(h)
                  for j, h in enumerate(hist)]
        result += [stack(f) if f else empty(v) for f, v in zip(outs_other, others)]
        return result if len(result) > 1 else result[0]
    return run


# ---------------------------------------------------------------- building a scan

def _as_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, list | tuple) else [x]


def _taps(taps, what, negative):
    taps = [int(k) for k in _as_list(taps)]
    if not taps or len(set(taps)) != len(taps):
        raise ArgumentError(f"scan: the taps of {what} must be distinct integers, got {taps}")
    if negative and max(taps) >= 0:
        raise ArgumentError(f"scan: the taps of {what} must be negative (earlier steps), got "
                            f"{taps}")
    return taps


def _sequence(s, k):
    if isinstance(s, dict):
        var, taps = s.get("input"), s.get("taps", [0])
    else:
        var, taps = s, [0]
    var = as_variable(var)
    if var.ndim == 0:
        raise ArgumentTypeError(f"scan: sequence {k} ({var}) is a scalar; sequences are "
                                f"iterated along their first dimension")
    return var, _taps(taps, f"sequence {k}", False)


def _output_info(o, k):
    """(initial value or None, taps) of an outputs_info entry."""
    init, taps = (o.get("initial"), o.get("taps", [-1])) if isinstance(o, dict) else (o, [-1])
    if init is None or taps is None:
        return None, None
    init = as_variable(init)
    if isinstance(init, Constant) and init.weak:  # a Python scalar: a value of its dtype
        init = as_variable(np.asarray(init.data, init.dtype))
    return init, _taps(taps, f"output {k}", True)


def _is_updates(x):
    if isinstance(x, dict):
        return True
    return isinstance(x, list | tuple) and all(
        isinstance(p, list | tuple) and len(p) == 2 and isinstance(p[0], SharedVariable)
        for p in x) and len(x) > 0


def _split_result(result):
    """(outputs, update pairs) of what fn returned (Theano's forms)."""
    if _is_updates(result):
        return [], list(dict(result).items())
    if isinstance(result, tuple) and len(result) == 2:
        if _is_updates(result[1]) or result[1] == {}:
            return _as_list(result[0]), list(dict(result[1]).items())
        if _is_updates(result[0]):
            return _as_list(result[1]), list(dict(result[0]).items())
    return _as_list(result), []


def scan(fn, sequences=None, outputs_info=None, non_sequences=None, n_steps=None,
         truncate_gradient=-1, go_backwards=False, mode=None, name=None, strict=False,
         return_list=False):
    """Theano's scan: apply `fn` at every step, over sequences and recurrent outputs.

    Parameters
    ----------
    fn : callable
        Called once, with symbolic arguments: a row of each sequence (one per tap), each
        fed-back output's previous values (one per tap), then the non-sequences. Returns
        the outputs of a step, or (outputs, updates), or updates: {shared variable: new
        value} updated at every step (the next step reads the new value).
    sequences : variable, dict or list of them
        Iterated along their first dimension; {'input': x, 'taps': [-1, 0, 1]} reads
        several rows at a step (x[t - 1], x[t], x[t + 1]).
    outputs_info : list
        One entry per output of fn: None (not fed back), the initial value (fed back as
        tap -1), or {'initial': x0, 'taps': [-2, -1]} (x0[k] is the value at step k - 2).
    non_sequences : list
        Values passed to fn as they are. Other variables fn reads (shared variables,
        outer expressions) are found in its graph and passed the same way.
    n_steps : int or integer scalar, optional
        Steps to run; default the length of the shortest sequence.
    truncate_gradient : int
        -1: backpropagation through every step; k > 0: through the last k steps only
        (earlier steps get zero gradient, Theano's truncated BPTT).
    go_backwards : bool
        Iterate the sequences from their end (outputs stay in the order computed).
    mode : str or Mode, optional
        The mode the step's graph is compiled in (`function`'s; default the default mode).
    name : str, optional
        The op's name in debug prints and messages.
    strict : bool
        Refuse shared variables that fn reads without getting them in non_sequences.
    return_list : bool
        Always return a list of outputs (else one output is returned alone, none as None).

    Returns
    -------
    outputs : variable or list
        Each output stacked over the steps (a fed-back output without its initial value).
    updates : OrderedDict
        {shared variable: its value after the last step}, for `function(updates=...)`.

    Examples
    --------
    >>> import gpuarr.symbolic as T
    >>> x = T.dvector("x")
    >>> sums, _ = T.scan(lambda v, acc: acc + v, sequences=x, outputs_info=T.constant(0.0))
    >>> T.function([x], sums)(np.array([1.0, 2.0, 3.0]))
    array([1., 3., 6.])
    """
    return _build(fn, sequences, outputs_info, non_sequences, n_steps, truncate_gradient,
                  go_backwards, name, strict, return_list, index=False, mode=mode)


def scan_steps(fn, n_steps, non_sequences=None, outputs_info=None, name=None,
               return_list=False):
    """`scan` whose fn gets the step number first (an int64 scalar kept on the host):
    Theano's `scan(fn, sequences=arange(n_steps), ...)` without the index array.

    Parameters
    ----------
    fn : callable
        fn(t, *fed-back values, *non_sequences).
    n_steps : int or integer scalar
        The number of steps.
    non_sequences, outputs_info, name, return_list
        As in `scan`.

    Returns
    -------
    outputs, updates
        As `scan` returns them.
    """
    return _build(fn, None, outputs_info, non_sequences, n_steps, -1, False, name, False,
                  return_list, index=True)


def _build(fn, sequences, outputs_info, non_sequences, n_steps, truncate, backwards, name,
           strict, return_list, index, mode=None):
    name = name or getattr(fn, "__name__", "")
    name = "scan" if not name or name.startswith("<") else name
    seq_outer, seq_rows = [], []
    for k, s in enumerate(_as_list(sequences)):
        var, taps = _sequence(s, k)
        if backwards:
            var = subtensor(var, slice(None, None, -1))
        lo, hi = min(taps), max(taps)
        for tap in taps:
            seq_outer.append(subtensor(var, slice(tap - lo or None, tap - hi or None)))
            seq_rows.append(placeholder(TensorType(var.dtype, var.broadcastable[1:]),
                                        f"{var.name or 'seq'}[t{tap:+d}]" if tap else
                                        f"{var.name or 'seq'}[t]"))
    n = _n_steps(n_steps, seq_outer)
    infos = [_output_info(o, k) for k, o in enumerate(_as_list(outputs_info))]
    nonseqs = [as_variable(v) for v in _as_list(non_sequences)]
    step = placeholder(TensorType(np.int64, ()), "t") if index else None
    states = [(k, init, taps) for k, (init, taps) in enumerate(infos) if init is not None]
    rows, outputs, updates = _trace(fn, [step] * index + seq_rows, states, nonseqs, name)
    if not infos:
        infos = [(None, None)] * len(outputs)
    if len(outputs) != len(infos):
        raise ArgumentError(f"scan {name}: fn returned {len(outputs)} output(s), "
                            f"outputs_info has {len(infos)} entries")
    pairs = _check_updates(updates, name)
    pairs += _check_updates(default_updates([*outputs, *(v for _, v in pairs)],
                                            [s for s, _ in pairs]), name)
    shared_rows = [placeholder(s.type, f"{s.name or 'shared'}[t-1]") for s, _ in pairs]
    state_outs = [outputs[k] for k, _, _ in states] + [v for _, v in pairs]
    others = [o for k, o in enumerate(outputs) if infos[k][0] is None]
    inner_outs = state_outs + others
    fixed = [step] * index + seq_rows + [v for r in rows for v in r] + shared_rows
    free = _free_variables(inner_outs, fixed, [s for s, _ in pairs], nonseqs)
    if strict:
        loose = [v for v in free if isinstance(v, SharedVariable) and v not in nonseqs]
        if loose:
            raise ArgumentError(f"scan {name} (strict=True): fn reads shared variable(s) "
                                f"{', '.join(map(str, loose))} not given in non_sequences")
    free_rows = [placeholder(v.type, v.name) for v in free]
    memo = dict(zip([s for s, _ in pairs], shared_rows)) | dict(zip(free, free_rows))
    inner_outs = rebuild(inner_outs, remake, memo)[0]
    taps = [taps for _, _, taps in states] + [[-1]] * len(pairs)
    info = ScanInfo(fixed + free_rows, inner_outs, len(seq_rows), taps,
                    [False] * len(states) + [True] * len(pairs), index, truncate, name, mode)
    inits = [dimshuffle(init, "x", *range(init.ndim)) if t == [-1] else
             subtensor(init, slice(None, -min(t))) for _, init, t in states]
    inits += [dimshuffle(s, "x", *range(s.ndim)) for s, _ in pairs]
    outs = Scan(info).make_node(n, *seq_outer, *inits, *free).outputs
    found, nst = [], len(states)
    for k, (init, _) in enumerate(infos):
        if init is None:
            found.append(outs[nst + len(pairs) + sum(i is None for i, _ in infos[:k])])
        else:
            j = [s[0] for s in states].index(k)
            found.append(subtensor(outs[j], slice(info.depth[j], None)))
    new_values = collections.OrderedDict(
        (s, outs[nst + i]) for i, (s, _) in enumerate(pairs))
    if return_list:
        return found, new_values
    return (found[0] if len(found) == 1 else found or None), new_values


def _trace(fn, first, states, nonseqs, name):
    """Call fn on placeholders: (state placeholders per tap, outputs, updates). A state's
    placeholders take its initial value's broadcastable pattern, made non-broadcastable
    where fn's output is not (then fn is called again)."""
    patterns = [init.broadcastable if taps == [-1] else init.broadcastable[1:]
                for _, init, taps in states]
    for _attempt in range(2):
        rows = [[placeholder(TensorType(init.dtype, p), f"{init.name or f'out{k}'}[t{tap}]")
                 for tap in taps] for (k, init, taps), p in zip(states, patterns)]
        outputs, updates = _split_result(fn(*first, *(v for r in rows for v in r), *nonseqs))
        outputs = [as_variable(o) for o in outputs]
        if any(k >= len(outputs) for k, _, _ in states):
            break  # the count is checked by the caller
        wanted = [tuple(a and b for a, b in zip(p, outputs[k].broadcastable))
                  if outputs[k].ndim == len(p) else p for (k, _, _), p in zip(states, patterns)]
        if wanted == patterns:
            break
        patterns = wanted
    for (k, init, _), r in zip(states, rows):
        o = outputs[k] if k < len(outputs) else None
        if o is not None and (o.dtype != init.dtype or o.ndim != r[0].ndim):
            raise ArgumentTypeError(
                f"scan {name}: output {k} of fn is {o.type} but its initial value "
                f"(outputs_info[{k}]) is {init.type}; a fed-back output keeps the dtype and "
                f"dimensions of its initial value (cast one with T.cast)")
    return rows, outputs, updates


def _n_steps(n_steps, seqs):
    if n_steps is None:
        if not seqs:
            raise ArgumentError("scan: n_steps is needed when there are no sequences")
        return functools.reduce(FUNCTIONS["minimum"], [Size((0,))(s) for s in seqs])
    n = as_variable(n_steps)
    if n.ndim != 0 or n.dtype.kind not in "iu":
        raise ArgumentTypeError(f"scan: n_steps must be an integer scalar, got {n_steps!r}")
    return cast(n, np.int64)


def _check_updates(updates, name):
    pairs = []
    for s, v in updates:
        if not isinstance(s, SharedVariable):
            raise ArgumentTypeError(f"scan {name}: updates can only change shared variables, "
                                    f"not {s!r}")
        v = as_variable(v)
        if v.dtype != s.dtype or v.ndim != s.ndim:
            raise ArgumentTypeError(f"scan {name}: the update of {s} ({s.type}) has type "
                                    f"{v.type}; it must keep the dtype and dimensions")
        pairs.append((s, v))
    return pairs


def _free_variables(outputs, fixed, updated, explicit):
    """The outer variables the inner graph reads: `explicit` first, then every
    non-constant value it reads that depends on none of `fixed` and `updated`. Loop
    invariants are computed once, outside the loop; views of them (W.T) stay inside, where
    the rewrites see what they view."""
    order = toposort(outputs)
    inner = set(fixed) | set(updated)
    for node in order:
        if any(v in inner for v in node.inputs):
            inner.update(node.outputs)
    found = [v for v in dict.fromkeys(explicit) if v not in inner]
    seen = set(found)
    pending = [v for node in order if node.outputs[0] in inner for v in node.inputs]
    pending = collections.deque([*pending, *outputs])
    while pending:
        v = pending.popleft()
        if v in inner or v in seen or isinstance(v, Constant):
            continue
        seen.add(v)
        if v.owner is not None and v.owner.op.view:
            pending.extend(v.owner.inputs)
        else:
            found.append(v)
    return found


# ---------------------------------------------------------------- gradient (BPTT)

def _backward(info, node, output_grads):
    """The gradients of a Scan node's inputs: a scan over the reversed steps whose states
    carry, per state, the gradients owed to its last `depth` values and, per non-sequence,
    the sum of its gradients; the sequences' gradients are its stacked outputs."""
    ns, nst = info.n_seqs, info.n_states
    n = node.inputs[0]
    seqs = node.inputs[1:1 + ns]
    inits = node.inputs[1 + ns:1 + ns + nst]
    nonseqs = node.inputs[1 + ns + nst:]
    hist = (node.outputs if info.whole() is info else
            Scan(info.whole()).make_node(*node.inputs).outputs)[:nst]
    g_states, g_others = output_grads[:nst], output_grads[nst:]
    steps = n if info.truncate < 0 else FUNCTIONS["minimum"](n, info.truncate)
    start = 0 if info.truncate < 0 else n - steps

    def reversed_steps(v, offset=0):
        """v[start + offset:n + offset], last step first."""
        lo = _plus(start, offset)
        return subtensor(subtensor(v, slice(lo, _plus(n, offset))), slice(None, None, -1))

    def is_float(v):
        return v.dtype.kind == "f"

    memo, seq_outer, seq_rows, wrt = {}, [], [], []

    def add_sequence(outer, like, differentiate=False):
        ph = placeholder(like.type, like.name)
        seq_outer.append(outer)
        seq_rows.append(ph)
        if differentiate and is_float(ph):
            wrt.append(ph)
        return ph

    seq_ph = info.inputs[info.index:info.first_tap]
    for s, ph in zip(seqs, seq_ph):
        memo[ph] = add_sequence(reversed_steps(s), ph, True)
    tap_rows, pos = [], info.first_tap
    for j, taps in enumerate(info.taps):
        found = []
        for k in taps:
            ph = info.inputs[pos]
            pos += 1
            memo[ph] = add_sequence(reversed_steps(hist[j], info.depth[j] + k), ph, True)
            found.append((k, memo[ph]))
        tap_rows.append(found)
    rows = info.rows()
    g_state_rows = [add_sequence(reversed_steps(g, info.depth[j]), rows[j])
                    if not info.last[j] and is_float(g) else None
                    for j, g in enumerate(g_states)]
    others = info.outputs[nst:]
    g_other_rows = [add_sequence(reversed_steps(g), placeholder(o.type)) if is_float(o) else None
                    for g, o in zip(g_others, others)]
    nonseq_ph = info.inputs[info.first_nonseq:]
    b_nonseqs = [placeholder(ph.type, ph.name) for ph in nonseq_ph]
    memo.update(zip(nonseq_ph, b_nonseqs))
    b_step = placeholder(TensorType(np.int64, ()), "t") if info.index else None
    extra_outer, extra_rows = [], []
    if info.index:
        b_n = placeholder(TensorType(np.int64, ()), "n_steps")
        extra_outer, extra_rows = [n], [b_n]
        memo[info.inputs[0]] = b_n - 1 - b_step
    wrt += [v for v in b_nonseqs if is_float(v)]
    forward = rebuild(list(info.outputs), remake, memo)[0]
    owed = [[placeholder(rows[j].type, f"grad_{rows[j].name}[{d}]")
             for d in range(info.depth[j])] if is_float(rows[j]) else None for j in range(nst)]
    known = {}

    def add_known(v, g):
        known[v] = known[v] + g if v in known else g
    for j in range(nst):
        if owed[j] is not None:
            g = owed[j][0] if g_state_rows[j] is None else owed[j][0] + g_state_rows[j]
            add_known(forward[j], g)
    for r, g in enumerate(g_other_rows):
        if g is not None:
            add_known(forward[nst + r], g)
    grads = [None] * len(node.inputs)
    if not known or not wrt:
        return grads
    found = dict(zip(wrt, grad(None, wrt, known_grads=known, disconnected_inputs="ignore")))
    # the backward states: owed gradients shift by one step, plus this step's
    b_rows, b_new, b_inits = [], [], []
    for j in range(nst):
        if owed[j] is None:
            continue
        m = info.depth[j]
        by_tap = {-k: found[ph] for k, ph in tap_rows[j] if ph in found}
        for d in range(m):
            later = owed[j][d + 1] if d + 1 < m else None
            g = by_tap.get(d + 1)
            b_new.append(later if g is None else g if later is None else later + g)
            b_rows.append(owed[j][d])
            start_grad = (dimshuffle(g_states[j], "x", *range(rows[j].ndim))
                          if d == 0 and info.last[j] else
                          zeros_like(subtensor(inits[j], slice(None, 1))))
            b_inits.append(start_grad)
    sums = [placeholder(v.type, f"grad_{v.name}") for v in b_nonseqs if is_float(v)]
    for acc, v, outer in zip(sums, [v for v in b_nonseqs if is_float(v)],
                             [w for w, v in zip(nonseqs, b_nonseqs) if is_float(v)]):
        b_rows.append(acc)
        b_new.append(acc + found[v])
        b_inits.append(dimshuffle(zeros_like(outer), "x", *range(outer.ndim)))
    seq_grads = [found[memo[ph]] for ph in seq_ph if is_float(ph)]
    b_info = ScanInfo([b_step] * info.index + seq_rows + b_rows + b_nonseqs + extra_rows,
                      b_new + seq_grads, len(seq_rows), [[-1]] * len(b_rows),
                      [True] * len(b_rows), info.index, -1, f"grad_of_{info.name}", info.mode)
    outs = Scan(b_info).make_node(steps, *seq_outer, *b_inits, *nonseqs,
                                  *extra_outer).outputs
    pos = 0
    for j in range(nst):
        if owed[j] is None:
            continue
        m, init = info.depth[j], inits[j]
        if m == 1:
            g = dimshuffle(outs[pos], "x", *range(rows[j].ndim))
        else:
            g = zeros_like(init)
            for d in range(m):
                g = set_subtensor(subtensor(g, m - 1 - d), outs[pos + d])
        if not info.last[j]:
            g = g + subtensor(g_states[j], slice(None, m))
        grads[1 + ns + j] = g
        pos += m
    for k, v in enumerate(nonseq_ph):
        if is_float(v):
            grads[1 + ns + nst + k] = outs[pos]
            pos += 1
    for k, ph in enumerate(seq_ph):
        if is_float(ph):
            back = subtensor(outs[pos], slice(None, None, -1))
            grads[1 + k] = set_subtensor(subtensor(zeros_like(seqs[k]),
                                                   slice(_plus(start, 0), n)), back)
            pos += 1
    return grads


def _plus(v, k):
    """v + k for an int or an integer scalar variable; None for 0 (a slice's default)."""
    if isinstance(v, int):
        return v + k or None
    return v + k if k else v
