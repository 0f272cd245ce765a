"""Copies through pinned host memory: between contexts that share no cl.Context, and large
uploads made while other threads use the context (`upload`).

OpenCL moves data between two contexts only through the host (NVIDIA's has no peer-to-peer
copy). A staged copy goes in chunks: each chunk is read from its source device into a pinned
host slot (an ALLOC_HOST_PTR buffer of the source's context, kept mapped; `PINNED_ON`) on the
source's `copy_queue`, then written from the slot into each of its destinations on their contexts'
queues, where the caller may enqueue kernels that read it (the collectives' reductions).
Chunks pipeline: while one goes into a device, the next comes out of another, and `SLOTS`
slots per source keep both sides busy. Events do not cross contexts, so the calling thread
carries each chunk over: it waits for the read, enqueues the writes, and reuses a slot once
the writes out of it completed. A run returns when every write is enqueued.

`CHUNK_BYTES`, `SLOTS` and `PINNED_ON` are settable (tests make chunks small to exercise the
pipeline).
"""

import contextlib
import itertools
import threading
from typing import NamedTuple

import numpy as np
import pyopencl as cl

from .launch import host_copy, write_host

__all__ = ["CHUNK_BYTES", "PINNED_ON", "SLOTS", "UPLOAD_BYTES", "UPLOAD_CHUNK", "Move", "Region",
           "copy", "pinned", "run", "upload"]

#: Bytes per chunk: 16 MiB keeps the pipeline's fill and drain under 2% of a 1 GiB copy.
CHUNK_BYTES = 16 << 20
#: Pinned slots per source context: reads run ahead of the writes by up to this many chunks.
SLOTS = 4
#: Whose pinned memory a chunk goes through: the source context's ("source") or its first
#: destination's ("target"). benchmarks/multi_gpu_report.py measures both on a machine.
PINNED_ON = "source"
_WINDOW = 64  # moves a scheduling pass looks at: keeps a run of many chunks linear
_lock = threading.RLock()  # one run at a time: runs share the contexts' slots


class Region(NamedTuple):
    """`nbytes` of a Storage from byte `offset`, on `context`."""

    context: object
    storage: object
    offset: int
    nbytes: int

    @classmethod
    def of(cls, a):
        """The bytes of a contiguous array (anything with context, storage, offset, nbytes)."""
        return cls(a.context, a.storage, a.offset, a.nbytes)

    def chunks(self, itemsize=1):
        """This region in pieces of at most CHUNK_BYTES (whole items of `itemsize` bytes)."""
        step = max(CHUNK_BYTES // itemsize, 1) * itemsize
        return [Region(self.context, self.storage, self.offset + a,
                       min(step, self.nbytes - a)) for a in range(0, self.nbytes, step)]


class Move:
    """One chunk: `src` (a Region) read into a pinned slot, then written into each Region of
    `dests` (of its size). Once the read completed and the writes are enqueued, each of
    `then` is called (it may enqueue kernels reading the destinations on their queues) and
    the move is `done`. Its read waits until the moves of `after` (earlier in the run's list)
    are done."""

    __slots__ = ("after", "dests", "done", "src", "then")

    def __init__(self, src, dests, then=(), after=()):
        self.src, self.dests, self.then, self.after = src, dests, then, after
        self.done = False


def pinned(ctx, nbytes):
    """Pinned host memory: an ALLOC_HOST_PTR buffer of `nbytes` on `ctx`, mapped (the
    mapping, a uint8 numpy array, keeps the buffer alive)."""
    buf = cl.Buffer(ctx.cl_context, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR,
                    max(nbytes, 1))
    with ctx.launch_lock:
        host, _ = cl.enqueue_map_buffer(ctx.queue, buf, cl.map_flags.READ | cl.map_flags.WRITE,
                                        0, (max(nbytes, 1),), np.uint8, is_blocking=True)
    return host


#: Host-to-device writes of at least this many bytes, made while another thread holds the
#: context's launch lock, go through a pinned buffer of the writing thread (`upload`).
UPLOAD_BYTES = 4 << 20
#: The pinned buffer per thread and context: chunks of an upload.
UPLOAD_CHUNK = 8 << 20
_upload_buffers = threading.local()  # {context: pinned array} of each thread


def upload(ctx, dst, host, offset):
    """Write the contiguous numpy array `host` into Storage `dst` from byte `offset`; returns
    when it is there.

    The driver's blocking write from pageable memory holds the context's launch lock for the
    whole copy (about 11 GB/s on an H100), so threads uploading at once (dask's threaded
    scheduler) would take turns. Where the device's memory is not the host's and another
    thread holds the lock, a large write goes instead in chunks through this thread's pinned
    buffer: the copies into it run outside the lock (numpy releases the GIL), the lock is
    held only while the device reads pinned memory."""
    if host.nbytes < UPLOAD_BYTES or ctx.host_memory:
        return write_host(ctx, dst, host, offset)
    lock = ctx.launch_lock
    if lock.acquire(blocking=False):  # no other thread is enqueuing: the driver's own copy
        try:
            return write_host(ctx, dst, host, offset)
        finally:
            lock.release()
    buffers = getattr(_upload_buffers, "by_context", None)
    if buffers is None:
        buffers = _upload_buffers.by_context = {}
    slot = buffers.get(ctx)
    if slot is None:
        slot = buffers[ctx] = pinned(ctx, UPLOAD_CHUNK)
    data = host.ravel(order="K").view(np.uint8)
    for start in range(0, data.nbytes, UPLOAD_CHUNK):
        part = data[start:start + UPLOAD_CHUNK]
        np.copyto(slot[:part.nbytes], part)
        write_host(ctx, dst, slot[:part.nbytes], offset + start)


class _Slot:
    """A pinned buffer, whether a read into it is in flight, the writes out of it, and when
    they were enqueued (`stamp`: the oldest is waited for first)."""

    __slots__ = ("busy", "host", "reading", "stamp")

    def __init__(self, host):
        self.host, self.reading, self.busy, self.stamp = host, False, [], 0

    def free(self):
        if self.reading:
            return False
        # (a failed command's status is negative: it reads as done, its error surfaces
        # where the destination is used)
        self.busy = [e for e in self.busy if e.command_execution_status > 0]
        return not self.busy


def _slots(ctx, nbytes=0):
    """`ctx`'s pinned slots, made (again, between runs) when fewer or smaller than asked."""
    slots = ctx.state.get("staging_slots")
    if slots is None or len(slots) != SLOTS or slots[0].host.nbytes < nbytes:
        for s in slots or ():
            _wait(s.busy)
        size = max(nbytes, CHUNK_BYTES)
        slots = ctx.state["staging_slots"] = [_Slot(pinned(ctx, size)) for _ in range(SLOTS)]
    return slots


def _wait(events):
    for e in events:  # (one by one: clWaitForEvents takes the events of one cl.Context)
        e.wait()


def _free_slot(ctx):
    return next((s for s in _slots(ctx) if s.free()), None)


def _owner(move):
    """The context whose pinned slots carry `move`."""
    return move.dests[0].context if PINNED_ON == "target" and move.dests else move.src.context


def _issue(waiting, inflight, owners):
    """Enqueue the reads of the waiting moves that may go (their `after` delivered, a slot
    free at their source), in list order; returns the moves still waiting."""
    still, full = [], set()
    for pos, m in enumerate(waiting):
        if pos >= _WINDOW or len(full) == owners:
            still += waiting[pos:]
            break
        owner = _owner(m)
        if owner in full or not all(d.done for d in m.after):
            still.append(m)
            continue
        slot = _free_slot(owner)
        if slot is None:
            full.add(owner)
            still.append(m)
            continue
        slot.reading = True
        q = m.src.context.copy_queue
        event = host_copy(q, slot.host[:m.src.nbytes], m.src.storage, m.src.offset, False)
        q.flush()
        inflight.append((m, event, slot))
    return still


_stamps = itertools.count(1)


def _deliver(move, slot):
    """Enqueue the writes of a move whose read completed, and what follows them."""
    slot.reading = False
    slot.stamp = next(_stamps)
    view = slot.host[:move.src.nbytes]
    queues = []
    for dst in move.dests:
        q = dst.context.queue
        slot.busy.append(host_copy(q, view, dst.storage, dst.offset, True))
        queues.append(q)
    for fn in move.then:
        fn()
    for q in queues:
        q.flush()


def run(moves):
    """Carry out `moves` (a list of Move): reads in list order as slots and `after` allow,
    each chunk's writes as soon as its read is done. Returns when every write is enqueued."""
    with _lock:
        for m in moves:
            m.done = not m.src.nbytes
        waiting = [m for m in moves if not m.done]
        need = {}
        for m in waiting:
            need[_owner(m)] = max(need.get(_owner(m), 0), m.src.nbytes)
        for ctx, nbytes in need.items():
            _slots(ctx, nbytes)
        inflight = []
        try:
            while waiting or inflight:
                waiting = _issue(waiting, inflight, len(need))
                if inflight:
                    m, event, slot = inflight.pop(0)
                    event.wait()
                    _deliver(m, slot)
                    m.done = True
                elif waiting:  # the first waiting move's source has no free slot
                    busy = [s for s in _slots(_owner(waiting[0])) if s.busy]
                    _wait(min(busy, key=lambda s: s.stamp).busy)
        finally:  # (after an error: the reads still in flight end before their slots are reused)
            for _, event, slot in inflight:
                with contextlib.suppress(cl.Error):
                    event.wait()
                slot.reading = False


def copy(dst, src):
    """dst = src for two Regions of one size whose contexts share no cl.Context."""
    run([Move(s, [d]) for s, d in zip(src.chunks(), dst.chunks())])
