"""Bounded caches with counters: what a context keeps of programs, kernels and plans.

One `Cache` per kind per context (`Context.caches`); `python -m gpuarr info --caches` prints
their sizes, bounds and hit rates.
"""

__all__ = ["MISSING", "Cache"]

MISSING = object()


class Cache:
    """A mapping of at most `maxsize` entries that drops the least recently used first.

    Two generations keep a hit to one dict lookup: entries go into the young one; a hit in
    the old one moves the entry to the young one; when the young one holds maxsize // 2
    entries it becomes the old one and the previous old one is dropped (counted as
    evictions). An entry used since the last turnover always survives the next one.
    """

    __slots__ = ("_old", "_young", "evictions", "hits", "maxsize", "misses", "name")

    def __init__(self, name, maxsize):
        self.name = name
        self.maxsize = maxsize
        self._young = {}
        self._old = {}
        self.hits = self.misses = self.evictions = 0

    def get(self, key, default=None):
        value = self._young.get(key, MISSING)
        if value is MISSING:
            value = self._old.pop(key, MISSING)
            if value is MISSING:
                self.misses += 1
                return default
            self._put(key, value)
        self.hits += 1
        return value

    def __getitem__(self, key):
        value = self.get(key, MISSING)
        if value is MISSING:
            raise KeyError(key)
        return value

    def __setitem__(self, key, value):
        self._old.pop(key, None)
        self._put(key, value)

    def _put(self, key, value):
        young = self._young
        if len(young) >= self.maxsize // 2 and key not in young:
            self.evictions += len(self._old)
            self._old, self._young = young, {}
            young = self._young
        young[key] = value

    def setdefault(self, key, value):
        """The value stored under `key`, storing `value` first if there is none."""
        found = self.get(key, MISSING)
        if found is MISSING:
            self[key] = found = value
        return found

    def __contains__(self, key):
        return key in self._young or key in self._old

    def __len__(self):
        return len(self._young) + len(self._old)

    def __iter__(self):
        return iter([*self._old, *self._young])

    def keys(self):
        return [*self._old, *self._young]

    def values(self):
        return [*self._old.values(), *self._young.values()]

    def items(self):
        return [*self._old.items(), *self._young.items()]

    def update(self, mapping):
        for key, value in mapping.items():
            self[key] = value

    def clear(self):
        self._young.clear()
        self._old.clear()

    def stats(self):
        """{'name', 'entries', 'maxsize', 'hits', 'misses', 'evictions'}"""
        return {"name": self.name, "entries": len(self), "maxsize": self.maxsize,
                "hits": self.hits, "misses": self.misses, "evictions": self.evictions}

    def __repr__(self):
        return (f"<Cache {self.name}: {len(self)}/{self.maxsize} entries, {self.hits} hits, "
                f"{self.misses} misses, {self.evictions} evicted>")
