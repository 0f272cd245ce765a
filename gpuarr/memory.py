"""Device memory: the storage arrays share, and the preallocated arena.

`Storage` is one allocation: the buffer kernels see, the event of the last command that
wrote it, and the reads of it still pending on other queues. Views of one array share one
Storage, so a write through any view orders every later read of the same bytes, and waits
for earlier reads, whichever queue they come from.
"""

import bisect
import functools
import itertools

__all__ = ["Arena", "Storage", "serial_mark"]

_serials = itertools.count(1)


def serial_mark():
    """A serial below every Storage allocated from now on."""
    return next(_serials)


class Storage:
    """One device allocation (None buffer for 0 bytes), its last writer's event and queue,
    and `readers`: {queue: event} of reads on queues other than the writer's (or None).

    `serial` is unique per allocation for the life of the process: the launch path compares
    it, not the driver's handle, to tell whether a kernel argument still holds this buffer
    (a handle may be reused for new memory once the old is released)."""

    __slots__ = ("_release", "buffer", "context", "event", "event_queue", "nbytes", "readers",
                 "serial")

    def __init__(self, context, buffer, nbytes, release=None):
        self.context = context
        self.buffer = buffer
        self.nbytes = nbytes
        self.event = None
        self.event_queue = context.queue  # reads there need no record
        self.readers = None
        self.serial = next(_serials)
        self._release = release

    def wait_list(self, queue):
        """Events a command on `queue` that reads this storage must wait for."""
        if self.event is None or self.event_queue is queue:
            return []
        return [self.event]

    def write_wait_list(self, queue):
        """Events a command on `queue` that writes this storage must wait for: the last
        write and the reads pending on other queues."""
        wait = self.wait_list(queue)
        if self.readers:
            wait += [e for q, e in self.readers.items() if q is not queue]
        return wait

    def read(self, event, queue):
        """Record `event` (on `queue`) as a read, when another queue may write next."""
        if queue is not self.event_queue:
            if self.readers is None:
                self.readers = {}
            self.readers[queue] = event

    def written(self, event, queue):
        """Record `event` (enqueued on `queue`) as the last write of this storage."""
        self.event = event
        self.event_queue = queue
        self.readers = None
        return event

    def __reduce__(self):
        raise TypeError("a gpuarr Storage (device memory) cannot be pickled or copied; "
                        "pickle or copy the GpuArray that holds it")

    def __del__(self):
        # getattr: a Storage made without __init__ (a failed copy) has no _release
        release = getattr(self, "_release", None)
        if release is not None:
            release()


class Arena:
    """First-fit sub-allocation of one preallocated buffer (flag preallocate > 0).

    Blocks are sub-buffers aligned to the device's base address alignment; freed ranges
    coalesce with their neighbours. Reuse is safe because a context's queue is in order.
    """

    def __init__(self, buffer, align):
        self.buffer = buffer
        self.nbytes = buffer.size
        self.align = align
        self.active_bytes = 0
        self._free = [(0, self.nbytes)]  # sorted (offset, size) ranges

    def allocate(self, nbytes):
        """(sub-buffer, release) or None when no free range is large enough."""
        size = -(-max(nbytes, 1) // self.align) * self.align
        for i, (offset, free) in enumerate(self._free):
            if free >= size:
                if free == size:
                    del self._free[i]
                else:
                    self._free[i] = (offset + size, free - size)
                self.active_bytes += size
                sub = self.buffer.get_sub_region(offset, size)
                return sub, functools.partial(self._give_back, offset, size)
        return None

    def _give_back(self, offset, size):
        self.active_bytes -= size
        i = bisect.bisect(self._free, (offset, size))
        if i < len(self._free) and offset + size == self._free[i][0]:
            size += self._free.pop(i)[1]
        if i > 0 and self._free[i - 1][0] + self._free[i - 1][1] == offset:
            offset, prev = self._free.pop(i - 1)
            size += prev
            i -= 1
        self._free.insert(i, (offset, size))
