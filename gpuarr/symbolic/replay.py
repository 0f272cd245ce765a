"""Replays: a compiled function's device commands enqueued again without the host work that
chose them (the schedule's Python per node: shapes, dispatch, allocation, arguments).

Two calls whose `key` is the same (the shapes, dtypes and strides of the input arrays, the
values of the host scalars, the very device arrays read, the flags) make the same launches
on the same buffers, but for the data uploaded. The second call with a key is recorded
(`launch.Recording`); later calls with that key enqueue the recorded commands again:

- an upload of an input writes the new data into the recorded buffer (and returns once the
  data is there: NVIDIA's driver, left to copy pageable memory while the host enqueues the
  kernels, made a training step 1.5x slower);
- the kernels are enqueued as recorded (the same arguments, the same intermediate buffers,
  which the replay keeps alive);
- a device output gets a new buffer each call (the recorded commands that touch its buffer
  take the new one), so that arrays returned by earlier calls keep their values;
- reads to the host, and the host steps that uploads or outputs need, run as in a plain call.

A schedule replays only where every node's op is `replayable` (its commands follow from the
key alone), every scalar a kernel takes from the host follows from the key, and the
recording shows no other command (a read of device data, another library's kernel), shared
variables updated in place, and device outputs in buffers of their own. Otherwise calls run
the plain schedule; `Replays.why` (or the tape's) says why.
"""

import collections

import numpy as np

from .. import config, launch
from ..base import ArrayBase
from ..memory import Storage
from .elemwise import Elemwise
from .graph import HostOp
from .transfer import GpuFromHost, HostFromGpu

__all__ = ["TAPES", "Replays", "Tape"]

TAPES = 4  # recorded keys kept per function (least recently used dropped)

_SEEN = object()  # a key met once: its next call is recorded


class _NoKey(Exception):
    """A value the key cannot describe: the call runs the plain schedule."""


def _data_key(v):
    if type(v) is not np.ndarray:
        raise _NoKey
    return (v.shape, v.dtype, v.strides)


def _value_key(v):
    a = np.asarray(v)
    if a.ndim or a.dtype.hasobject:
        raise _NoKey
    return (type(v), a.dtype, a.tobytes())


def _device_key(v):
    if not isinstance(v, ArrayBase):
        raise _NoKey
    return (v.storage.serial, v.offset, v.shape, v.strides, v.dtype)


def _on(v, storage):
    """A view like the array `v` on `storage` instead."""
    w = v._view(v.shape, v.strides)
    w.storage, w.base = storage, None
    return w


class Replays:
    """The recorded calls of one Schedule. `why`: None where its calls may replay, else why
    they run the plain schedule."""

    def __init__(self, sched):
        self.sched = sched
        self.tapes = collections.OrderedDict()
        self.kinds = []
        self.why = self._static(sched)

    def _static(self, sched):
        """Why the schedule's calls cannot replay (None: they may); fills kinds and keyers."""
        if sched.profile is not None or sched.mode.check:
            return "profiled or checked calls run each node"
        determined = set(range(sched.first))  # constants
        self.keyers = ([], [])  # (cell, key function) of the inputs, of the shared values
        for keyers, cells, variables in (
                (self.keyers[0], sched.in_cells, sched.inputs),
                (self.keyers[1], [k for k, _ in sched.shared_cells], sched.shared_inputs)):
            for k, v in zip(cells, variables):
                scalar = v.type.on_host and v.ndim == 0
                if scalar:
                    determined.add(k)
                keyers.append((k, _value_key if scalar else
                               _data_key if v.type.on_host else _device_key))
        for node, (ins, outs) in zip(sched.order, sched.step_cells):
            op = node.op
            if not getattr(op, "replayable", False):
                return f"{op} does not replay"
            kind = ("upload" if isinstance(op, GpuFromHost) else
                    "read" if isinstance(op, HostFromGpu) else
                    "host" if isinstance(op, HostOp) else "device")
            self.kinds.append(kind)
            given = [c for j, (c, v) in enumerate(zip(ins, node.inputs))
                     if v.type.on_host and j not in op.shape_only]
            if kind == "host" and all(c in determined for c in given):
                determined.update(outs)
            elif kind == "host" and not isinstance(op, Elemwise):
                # (its outputs' shapes may follow the data: an upload into the recorded
                # buffer would not fit)
                return f"{op} computes on the host from values that change between calls"
            elif kind == "device" and any(c not in determined for c in given):
                return f"{op} takes a host value that changes between calls"
        if "device" not in self.kinds:
            return "no device work"
        return None

    def key(self, cells):
        """The key of the call whose inputs and shared values `cells` holds (_NoKey): the
        inputs' part, the shared values' part, the flags."""
        inputs, shared = self.keyers
        return (tuple([f(cells[k]) for k, f in inputs]),
                tuple([f(cells[k]) for k, f in shared]), id(config.flags))

    def call(self, cells):
        """Run the call whose inputs and shared values `cells` holds: its outputs, or None
        where the caller runs the plain schedule."""
        try:
            key = self.key(cells)
        except _NoKey:
            return None
        tapes = self.tapes
        tape = tapes.get(key)
        if tape is None:
            tapes[key] = _SEEN
            if len(tapes) > TAPES:
                tapes.popitem(last=False)
            return None
        if tape is _SEEN:
            tape, outs = Tape.record(self, cells)
            # tapes of other shared values would keep those values' buffers alive
            for old in [k for k in tapes if k[1:] != key[1:]]:
                del tapes[old]
            tapes[key] = tape
            return outs
        if tape.why is not None:
            return None
        tapes.move_to_end(key)
        return tape.replay(cells)


class Tape:
    """One key's recorded call: `entries` in order, each the index of a step the replay runs
    (uploads, reads, needed host steps) or a range of `commands`; `fixed`: the cells those
    steps and the outputs read that recorded commands computed, with their recorded values;
    `fresh`: the storages each replay replaces by new ones (the device outputs') and `touch`
    the commands that hold them. `why`: None, or why this key runs the plain schedule."""

    __slots__ = ("commands", "entries", "fixed", "flags", "fresh", "sched", "touch", "uploads",
                 "why")

    @classmethod
    def record(cls, replays, cells):
        """Run the call (cells holding its inputs) while recording it: (tape, outputs)."""
        self = cls()
        self.sched = sched = replays.sched
        self.flags = config.flags  # (its id is in the key)
        before = {c: c.value for c, _ in sched.update_cells}
        roots = [*sched.in_cells, *(k for k, _ in sched.shared_cells)]
        external = {id(cells[k].storage) for k in roots if isinstance(cells[k], ArrayBase)}
        rec = launch.Recording()
        entries, made_by, uploads = [], {}, {}
        with launch.recording(rec):
            for k, (step, kind) in enumerate(zip(sched.steps, replays.kinds)):
                outs = sched.step_cells[k][1]
                if kind == "device":
                    start = len(rec.commands)
                    step()
                    entries.append((start, len(rec.commands)))
                else:
                    rec.paused = kind != "host"
                    try:
                        step()
                    finally:
                        rec.paused = False
                    entries.append(k)
                    if kind == "upload":
                        uploads[k] = cells[outs[0]]
                made_by.update(dict.fromkeys(outs, kind))
        outs = [cells[k] for k in sched.out_cells]
        self.why = rec.spoiled or self._unfit(sched, cells, before, external, made_by, uploads)
        if self.why is None:
            self.commands = rec.commands
            self.entries = self._needed(sched, entries, replays.kinds)
            self.uploads = uploads
            self._bind(sched, cells, made_by)
        return self, outs

    @staticmethod
    def _unfit(sched, cells, before, external, made_by, uploads):
        """Why the recorded call cannot replay, or None."""
        if any(cells[k] is not before[c] for c, k in sched.update_cells):
            return "a shared variable's new value is not written in place"
        if any(not (a._is_c() or a._is_f()) for a in uploads.values()):
            return "an upload is not contiguous"
        taken = external | {id(a.storage) for a in uploads.values()}
        for k in sched.out_cells:
            v, kind = cells[k], made_by.get(k)
            if kind == "upload" or (kind == "device" and (not isinstance(v, ArrayBase)
                                                          or id(v.storage) in taken)):
                return "a device output shares an input's or shared variable's buffer"
        return None

    @staticmethod
    def _needed(sched, entries, kinds):
        """`entries` without the host steps that no upload, read or output needs."""
        need = set(sched.out_cells)
        keep = []
        for e in reversed(entries):
            if isinstance(e, int):
                ins, outs = sched.step_cells[e]
                if kinds[e] != "host" or need.intersection(outs):
                    need.update(ins)
                    keep.append(e)
            else:
                keep.append(e)
        return keep[::-1]

    def _bind(self, sched, cells, made_by):
        """`fixed`, `fresh` and `touch`."""
        fresh = {id(cells[k].storage): cells[k].storage for k in sched.out_cells
                 if made_by.get(k) == "device"}
        read = {c for e in self.entries if isinstance(e, int) for c in sched.step_cells[e][0]}
        read.update(sched.out_cells)
        self.fixed = [(k, cells[k]) for k in sorted(read) if made_by.get(k) == "device"]
        self.fresh = list(fresh.values())
        self.touch = [j for j, (fn, args) in enumerate(self.commands)
                      if any(id(a) in fresh for a in _storages(fn, args))]

    def replay(self, cells):
        """Enqueue the recorded call again for the inputs in `cells`; its outputs."""
        sched = self.sched
        commands = self.commands
        if self.fresh:
            new = {id(st): st.context.allocate(st.nbytes) for st in self.fresh}
            commands = list(commands)
            for j in self.touch:
                fn, args = commands[j]
                commands[j] = (fn, _swapped(fn, args, new))
            for k, v in self.fixed:
                st = new.get(id(v.storage))
                cells[k] = v if st is None else _on(v, st)
        else:
            for k, v in self.fixed:
                cells[k] = v
        steps, uploads, step_cells = sched.steps, self.uploads, sched.step_cells
        for e in self.entries:
            if e.__class__ is int:
                up = uploads.get(e)
                if up is None:
                    steps[e]()
                else:
                    ins, outs = step_cells[e]
                    up.set(cells[ins[0]])
                    cells[outs[0]] = up
            else:
                for fn, args in commands[e[0]:e[1]]:
                    fn(*args)
        for c, k in sched.update_cells:
            cells[k] = c.value
        return [cells[k] for k in sched.out_cells]


def _storages(fn, args):
    """The Storages a recorded command's arguments hold."""
    if fn is launch.enqueue:
        args = (*args[4], *args[5], *args[6])
    return [a for a in args if isinstance(a, Storage)]


def _swapped(fn, args, new):
    """A recorded command's arguments with the storages in `new` (by id) replaced."""
    def swap(seq):  # (new's keys are ids of live storages: no other live object has one)
        return tuple([new.get(id(a), a) for a in seq])
    if fn is launch.enqueue:
        return (*args[:4], swap(args[4]), swap(args[5]), swap(args[6]), args[7])
    return swap(args)
