"""The one launch path: every kernel of every family is enqueued by `enqueue`.

A launch (1) orders itself after what it depends on: the last write of each storage it
touches when that write went to another queue, and, for the storages it writes, the reads
of them pending on other queues; (2) sets only the kernel arguments that changed since the
kernel's last launch; (3) enqueues; (4) records its event as the last write of what it
writes, and as a pending read of what it reads on a queue other than that storage's writer.

Kernel arguments are state of the `cl.Kernel` object, which two threads must not set at
once: a `Launcher` belongs to the first thread that launches it, and any other thread gets
a kernel object of its own from the same program, so the hot path takes no lock.

A `Recording` captures the commands one thread enqueues here, for a caller to enqueue the
same commands again without the host work that chose them (gpuarr.symbolic's replays).
"""

import contextlib
import operator
import struct
import threading

import numpy as np
import pyopencl as cl

from .memory import Storage

__all__ = ["Launcher", "Recording", "copy_buffer", "enqueue", "fill_buffer", "host_copy",
           "read_host", "record", "recording", "waits", "write_host"]

_get_ident = threading.get_ident
_claim_lock = threading.Lock()
_UNSET = object()
_recordings = {}  # thread id -> the Recordings installed on that thread, innermost last


class Recording:
    """The commands a thread enqueues through `enqueue`, `copy_buffer` and `fill_buffer`
    while it is installed on that thread: `commands`, a list of (function, arguments) to
    call again as they were. Any other command (a host transfer, another library's kernel)
    makes it unfit to replay: `spoiled` then names the first. While `paused`, nothing is
    captured or spoiled (the caller replays that work its own way). Recordings nest: each
    installed one sees the commands."""

    __slots__ = ("commands", "paused", "spoiled")

    def __init__(self):
        self.commands = []
        self.spoiled = None
        self.paused = False


@contextlib.contextmanager
def recording(rec):
    """Install the Recording `rec` on this thread for the block."""
    tid = _get_ident()
    stack = _recordings.setdefault(tid, [])
    stack.append(rec)
    try:
        yield rec
    finally:
        stack.pop()
        if not stack:
            del _recordings[tid]


def _capture(fn, args):
    for rec in _recordings.get(_get_ident(), ()):
        if not rec.paused:
            rec.commands.append((fn, args))


def _spoil(what):
    for rec in _recordings.get(_get_ident(), ()):
        if not rec.paused and rec.spoiled is None:
            rec.spoiled = what


def _packer(scalar_type):
    """bytes of a value as a kernel argument of `scalar_type` (numpy's scalar type). The
    Kernel's raw byte setter costs ~0.1 us where pyopencl's set_arg of a number costs ~5 us
    (PoCL, measured)."""
    dt = np.dtype(scalar_type)
    if dt.kind == "c":
        pack = struct.Struct("ff" if dt.itemsize == 8 else "dd").pack
        return lambda v: pack(v.real, v.imag)
    code = {"f": {2: "e", 4: "f", 8: "d"}, "i": {1: "b", 2: "h", 4: "i", 8: "q"},
            "u": {1: "B", 2: "H", 4: "I", 8: "Q"}, "b": {1: "?"}}.get(dt.kind, {}).get(dt.itemsize)
    if code is None:
        return lambda v: scalar_type(v).tobytes()
    return struct.Struct("=" + code).pack


def _getter(slots):
    """A function returning the tuple of args[i] for i in `slots` (C speed)."""
    if len(slots) >= 2:
        return operator.itemgetter(*slots)
    if len(slots) == 1:
        i = slots[0]
        return lambda args: (args[i],)
    return lambda args: ()


class Launcher:
    """A `cl.Kernel` and the values its arguments hold now.

    `types` lists the numpy scalar type of each argument, None for a buffer. Buffers are
    given to `enqueue` as `Storage` (compared by serial, so new memory behind a reused driver
    handle is always set), a raw `cl.MemoryObject` (always set) or None (no buffer).
    Integer arguments are compared by value, other scalars by identity (a float literal
    passed each call is one object; 0.0 and -0.0 compare equal but are different bits).
    """

    __slots__ = ("_clones", "buffer_slots", "buffers_of", "exact", "exact_slots", "held_buffers",
                 "held_scalars", "kernel", "owner", "packers", "program", "scalar_slots",
                 "scalar_types", "scalars_of", "types")

    def __init__(self, kernel, types):
        kernel.set_scalar_arg_dtypes(list(types))
        self.kernel = kernel
        # Held here: Intel's CPU runtime frees a program once it is released, its kernels
        # alive or not (the program caches evict programs whose kernels stay cached).
        self.program = kernel.program
        if "_source" not in vars(self.program):
            # pyopencl's Kernel() reads program._source: without it, this wrapper asks the
            # driver for a kernel named '_source' (an API error under Oclgrind) on copy()
            self.program._source = None
        self.types = tuple(None if t is None else np.dtype(t).type for t in types)
        self.buffer_slots = tuple(i for i, t in enumerate(self.types) if t is None)
        self.scalar_slots = tuple(i for i, t in enumerate(self.types) if t is not None)
        self.scalar_types = tuple(self.types[i] for i in self.scalar_slots)
        self.packers = tuple(_packer(t) for t in self.scalar_types)
        self.exact_slots = tuple(issubclass(t, np.integer) for t in self.scalar_types)
        self.exact = all(self.exact_slots)
        self.buffers_of = _getter(self.buffer_slots)
        self.scalars_of = _getter(self.scalar_slots)
        self.held_buffers = [_UNSET] * len(self.buffer_slots)
        self.held_scalars = None
        self.owner = None
        self._clones = None

    def copy(self):
        """A new Launcher of the same kernel (its own arguments, unclaimed)."""
        return Launcher(cl.Kernel(self.program, self.kernel.function_name), self.types)

    def for_thread(self, tid):
        """This launcher if `tid` owns it (the first thread to launch claims it), else that
        thread's own copy of the kernel."""
        with _claim_lock:
            if self.owner is None:
                self.owner = tid
                return self
            if self._clones is None:
                self._clones = {}
            clone = self._clones.get(tid)
            if clone is None:
                clone = self._clones[tid] = self.copy()
                clone.owner = tid
            return clone

    def set_args(self, args):
        """Set the arguments of `args` (one value per kernel argument) that changed."""
        kernel = self.kernel
        held = self.held_buffers
        slots = self.buffer_slots
        for j, b in enumerate(self.buffers_of(args)):
            if b.__class__ is Storage:
                if held[j] != b.serial:
                    kernel.set_arg(slots[j], b.buffer)
                    held[j] = b.serial
            elif b is None:  # (a buffer the kernel leaves alone this launch: NULL)
                if held[j] is not None:
                    kernel.set_arg(slots[j], None)
                    held[j] = None
            else:
                kernel.set_arg(slots[j], b)
                held[j] = _UNSET
        scalars = self.scalars_of(args)
        old = self.held_scalars
        if old is not None and self.exact and scalars == old:
            return
        slots, packers, exact = self.scalar_slots, self.packers, self.exact_slots
        for j, v in enumerate(scalars):
            if old is None or (v is not old[j] and (v != old[j] or not exact[j])):
                kernel._set_arg_buf(slots[j], packers[j](v))
        self.held_scalars = scalars

    def __repr__(self):
        return f"<Launcher {self.kernel.function_name}>"


def waits(queue, reads=(), writes=()):
    """The events a command on `queue` that reads the Storages `reads` and writes `writes`
    must wait for (None when the queue's own order suffices)."""
    wait = None
    for st in reads:
        if st.event_queue is not queue and st.event is not None:
            wait = [*(wait or ()), st.event]
    for st in writes:
        if (st.event_queue is not queue and st.event is not None) or st.readers:
            wait = [*(wait or ()), *st.write_wait_list(queue)]
    return wait


def record(event, queue, reads=(), writes=()):
    """Record `event` (on `queue`) as a read of `reads` and the last write of `writes` (the
    bookkeeping of a command enqueued outside this module)."""
    if _recordings:
        _spoil("a command enqueued outside gpuarr.launch")
    return _record(event, queue, reads, writes)


def _record(event, queue, reads=(), writes=()):
    for st in reads:
        if st.event_queue is not queue:
            st.read(event, queue)
    for st in writes:
        st.event = event
        st.event_queue = queue
        st.readers = None
    return event


def enqueue(ctx, launcher, size, local, args, reads=(), writes=(), offset=None):
    """Enqueue `launcher`'s kernel over `size` (work-group `local`, global `offset`) with
    `args` after the commands it must follow; `reads`/`writes` are the Storages it reads and
    writes, which record it. Returns the event."""
    if _recordings:
        _capture(enqueue, (ctx, launcher, size, local, tuple(args), tuple(reads), tuple(writes),
                           offset))
    queue = ctx.queue
    with ctx.launch_lock:
        wait = None
        # Inline for the common case (everything on this queue); waits() otherwise.
        for st in reads:
            if st.event_queue is not queue:
                wait = waits(queue, reads, writes)
                break
        else:
            for st in writes:
                if st.event_queue is not queue or st.readers:
                    wait = waits(queue, reads, writes)
                    break
        tid = _get_ident()
        if launcher.owner != tid:
            launcher = launcher.for_thread(tid)
        launcher.set_args(args)
        event = cl.enqueue_nd_range_kernel(queue, launcher.kernel, size, local, offset,
                                           wait_for=wait)
        return _record(event, queue, reads, writes)


def copy_buffer(ctx, dst, src, nbytes, dst_offset=0, src_offset=0, queue=None):
    """Copy `nbytes` between Storages (of one cl.Context) on `queue` (default ctx's)."""
    if _recordings:
        _capture(copy_buffer, (ctx, dst, src, nbytes, dst_offset, src_offset, queue))
    queue = queue or ctx.queue
    with ctx.launch_lock:
        event = cl.enqueue_copy(queue, dst.buffer, src.buffer, byte_count=nbytes,
                                src_offset=src_offset, dst_offset=dst_offset,
                                wait_for=waits(queue, (src,), (dst,)))
        return _record(event, queue, (src,), (dst,))


def fill_buffer(ctx, dst, pattern, offset, nbytes):
    """Fill `nbytes` of Storage `dst` from `offset` with the bytes of `pattern`."""
    if _recordings:
        _capture(fill_buffer, (ctx, dst, pattern, offset, nbytes))
    queue = ctx.queue
    with ctx.launch_lock:
        event = cl.enqueue_fill_buffer(queue, dst.buffer, pattern, offset, nbytes,
                                       wait_for=waits(queue, (), (dst,)))
        return _record(event, queue, (), (dst,))


def read_host(ctx, host, src, offset, queue=None):
    """Copy Storage `src` from byte `offset` into the numpy array `host`; waits for it. On
    another of ctx's queues (ctx.copy_queue) it waits only for `src`'s last write, not for
    what ctx.queue holds after it."""
    if _recordings:
        _spoil("a read to the host")
    queue = queue or ctx.queue
    with ctx.launch_lock:
        if queue is not ctx.queue:
            ctx.queue.flush()  # (the write it waits for must reach the device)
        event = cl.enqueue_copy(queue, host, src.buffer, src_offset=offset,
                                wait_for=waits(queue, (src,)), is_blocking=True)
        return _record(event, queue, (src,))


def write_host(ctx, dst, host, offset, blocking=True):
    """Copy the numpy array `host` into Storage `dst` from byte `offset`."""
    if _recordings:
        _spoil("a write from the host")
    queue = ctx.queue
    with ctx.launch_lock:
        event = cl.enqueue_copy(queue, dst.buffer, host, dst_offset=offset,
                                wait_for=waits(queue, (), (dst,)), is_blocking=blocking)
        return _record(event, queue, (), (dst,))


def host_copy(queue, host, storage, offset, to_device, after=()):
    """Enqueue (not waited for) a copy between the numpy array `host` and Storage `storage`
    from byte `offset`, on `queue` (any queue of the storage's cl.Context): into the device
    when `to_device`, else out of it; also after the events `after` (of that cl.Context).
    The staged copies between contexts and processes use it."""
    if _recordings:
        _spoil("a copy between the host and a device")
    if to_device:
        wait = [*(waits(queue, (), (storage,)) or ()), *after]
        event = cl.enqueue_copy(queue, storage.buffer, host, dst_offset=offset,
                                wait_for=wait or None, is_blocking=False)
        return _record(event, queue, (), (storage,))
    wait = [*(waits(queue, (storage,)) or ()), *after]
    event = cl.enqueue_copy(queue, host, storage.buffer, src_offset=offset,
                            wait_for=wait or None, is_blocking=False)
    return _record(event, queue, (storage,))
