"""Tuned kernel parameters per device: stored as JSON, looked up per context.

A device is keyed by its platform, device name and driver version. The user's store holds
one JSON file per device key in flag tuning_dir (default `$XDG_CACHE_HOME/gpuarr/tuning`, else
`~/.cache/gpuarr/tuning`); `python -m gpuarr tune` writes it. The files shipped in
`gpuarr/tuned/` are consulted after it, matched on platform and device name (the same driver
first). Entries are keyed (op, dtype name, shape class); callers fall back to their built-in
tables where neither source has a usable entry.

Files are not trusted: one that is not a regular file (a FIFO, a device, a directory), is
larger than MAX_FILE_BYTES, cannot be read, is not JSON of this format, or nests too deeply is
ignored with one warning naming it, and so is each entry whose parameters are not integers
or names, or that the op's check rejects (a template that changed since). The user's store is
read and written only where config.private_dir accepts its directory (owned by the user, not
writable by group or others). `store` merges under a lock (two tuners keep both their
entries) and writes through a fresh temporary file, renamed over the old one.
"""

import contextlib
import datetime
import json
import os
import re
import stat
import tempfile
import warnings

import numpy as np

from . import config
from .errors import GpuArrayError, UnsafeDirectoryError

__all__ = [
    "FORMAT", "MAX_FILE_BYTES", "MAX_PARAM", "SHIPPED_DIR", "TuningWarning", "device_id",
    "device_key", "entries", "entry_key", "generation", "lookup", "record", "register",
    "reload", "store", "stored", "user_dir", "user_path",
]

FORMAT = 1
SHIPPED_DIR = os.path.join(os.path.dirname(__file__), "tuned")
MAX_FILE_BYTES = 4 << 20  # a device's file holds tens of entries of ~500 bytes
MAX_PARAM = 1 << 16  # integer parameters are tile sizes, widths and switches
_WHAT = "tuned kernel parameters"

_checks = {}  # op -> check(ctx, dtype, shape_class, device_class, params), raising if unusable
_generation = 0  # in the keys of the answers kept on contexts; reload() moves it on
_files = {}  # path -> {entry key: entry} ({} when absent or corrupt)
_warned = set()


class TuningWarning(UserWarning):
    """A tuning file or entry gpuarr cannot use (it is ignored)."""


def register(op, check):
    """Have `lookup` pass each stored entry of `op` through `check` first (which raises
    GpuArrayError, ValueError, TypeError or KeyError for parameters it cannot use)."""
    _checks[op] = check


def reload():
    """Forget what was read: the next lookups read the files again (after a store, or a
    change of flag tuning_dir)."""
    global _generation
    _generation += 1
    _files.clear()


def generation():
    """A number that reload() moves on: in the keys of what is decided from tuned entries."""
    return _generation


def _warn(message):
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, TuningWarning, stacklevel=4)


# ---------------------------------------------------------------- devices and places

def device_id(ctx):
    """{platform, device, driver, description} of ctx's device."""
    info = ctx.device
    return {"platform": info.platform, "device": info.device_name,
            "driver": info.cl_device.driver_version.strip(), "description": info.describe()}


def _slug(text):
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.") or "unknown"


def device_key(ctx):
    """A file name (no extension) for ctx's device and driver, e.g.
    `portable-computing-language--pthread-skylake-avx512-amd-epyc--3.1-debian`."""
    ident = device_id(ctx)
    return "--".join(_slug(ident[k]) for k in ("platform", "device", "driver"))


def user_dir():
    """The user's store: flag tuning_dir, else $XDG_CACHE_HOME/gpuarr/tuning or
    ~/.cache/gpuarr/tuning."""
    if config.flags.tuning_dir:
        return os.path.expanduser(config.flags.tuning_dir)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "gpuarr", "tuning")


def user_path(ctx):
    return os.path.join(user_dir(), device_key(ctx) + ".json")


def _user_file(ctx):
    """user_path(ctx) where its directory may be read (config.private_dir), else None."""
    path = user_path(ctx)
    return path if config.private_dir(os.path.dirname(path), _WHAT, create=False) else None


def entry_key(op, dtype, shape_class):
    return f"{op}/{np.dtype(dtype).name}/{shape_class}"


# ---------------------------------------------------------------- reading

def _load(path):
    """The JSON value in the file at `path`; None if absent; ValueError when it is not a
    regular file (opened without blocking: a FIFO must not hang), is larger than
    MAX_FILE_BYTES, cannot be read, is not UTF-8 JSON or nests too deeply to parse."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ValueError(f"unreadable: {e.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        chunks, size = [], 0
        while size <= MAX_FILE_BYTES:
            chunk = os.read(fd, MAX_FILE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise ValueError(f"unreadable: {e.strerror}") from None
    finally:
        os.close(fd)
    if size > MAX_FILE_BYTES:
        raise ValueError(f"larger than {MAX_FILE_BYTES} bytes")
    try:
        return json.loads(b"".join(chunks).decode("utf-8"))
    except ValueError as e:  # not UTF-8, not JSON, an integer of too many digits
        raise ValueError(f"unreadable: {e}") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _parse(path):
    """The file at `path` as {"device": ..., "entries": ...}; None if absent; ValueError when
    it is not a tuning file of this format (see _load)."""
    data = _load(path)
    if data is None:
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"not a gpuarr tuning file of format {FORMAT} "
                         f"(format {data.get('format') if isinstance(data, dict) else None!r})")
    if not isinstance(data.get("entries"), dict) or not isinstance(data.get("device"), dict):
        raise ValueError("'device' and 'entries' must be objects")
    return data


def _read(path):
    """{entry key: entry} of the file at `path`, cached; {} (with a warning) if corrupt."""
    entries = _files.get(path)
    if entries is None:
        try:
            data = _parse(path)
        except ValueError as e:
            _warn(f"ignoring tuning file {path}: {e}")
            data = None
        entries = _files[path] = {} if data is None else data["entries"]
    return entries


def _shipped_paths(ident):
    """Shipped files for this platform and device name, the same driver first."""
    try:
        names = sorted(n for n in os.listdir(SHIPPED_DIR) if n.endswith(".json"))
    except FileNotFoundError:
        return []
    prefix = f"{_slug(ident['platform'])}--{_slug(ident['device'])}--"
    exact = prefix + _slug(ident["driver"]) + ".json"
    found = [n for n in names if n.startswith(prefix)]
    return [os.path.join(SHIPPED_DIR, n) for n in sorted(found, key=lambda n: n != exact)]


def _params(entry):
    """The params of a stored entry; ValueError unless they are {name: integer from 0 to
    MAX_PARAM, or a name} (what templates and dispatch take, and hashable in kernel keys)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("params"), dict):
        raise ValueError("an entry needs a 'params' object")
    if not isinstance(entry.get("device_class") or "", str):
        raise ValueError("'device_class' must be a string")
    for key, value in entry["params"].items():
        if type(value) is int and 0 <= value <= MAX_PARAM:
            continue
        if isinstance(value, str) and len(value) <= 64:
            continue
        small = type(value) in (float, bool) or (type(value) is int and abs(value) < 1 << 60)
        shown = repr(value) if small else f"a {type(value).__name__}"
        raise ValueError(f"parameter {key} is {shown[:40]}: expected an integer from 0 to "
                         f"{MAX_PARAM} or a name")
    return entry["params"]


def _resolve(ctx, op, dtype, device_class):
    """{shape class: params} of op and dtype on ctx: user entries over shipped ones."""
    ident = device_id(ctx)
    sources = [p for p in (_user_file(ctx), *_shipped_paths(ident)) if p]
    check = _checks.get(op)
    prefix = f"{op}/{dtype.name}/"
    found = {}
    for path in reversed(sources):  # the first source wins
        for key, entry in _read(path).items():
            if not key.startswith(prefix):
                continue
            shape_class = key[len(prefix):]
            try:
                params = _params(entry)
                if device_class is not None and entry.get("device_class") != device_class:
                    continue  # measured for another dispatch (tests patch the class)
                if check is not None:
                    check(ctx, dtype, shape_class, device_class, params)
            except (GpuArrayError, ArithmeticError, KeyError, TypeError, ValueError) as e:
                _warn(f"ignoring tuned entry {key} in {path}: {e}")
                continue
            found[shape_class] = entry["params"]
    return found


def entries(ctx, op, dtype, device_class=None):
    """{shape class: params} of the usable tuned entries of op and dtype on ctx's device
    (kept in the context's plans: the hot path is one dict lookup)."""
    key = ("gpuarr.tuning", _generation, op, dtype, device_class)
    found = ctx.plans.get(key)
    if found is None:
        found = ctx.plans[key] = _resolve(ctx, op, np.dtype(dtype), device_class)
    return found


def lookup(ctx, op, dtype, shape_class, device_class=None):
    """The tuned params of (op, dtype, shape class) on ctx's device, or None (use the
    built-in entry). `device_class`: only entries measured under that dispatch class."""
    return entries(ctx, op, dtype, device_class).get(shape_class)


def stored(ctx):
    """The user's entries for ctx's device, {entry key: entry} (for the tuner's report)."""
    path = _user_file(ctx)
    return dict(_read(path)) if path else {}


# ---------------------------------------------------------------- writing

def record(ctx, params, device_class, figure, builtin_figure, unit, shapes):
    """One entry as stored: the params and how they were measured (figure and the built-in
    entry's figure in the same run, on the problems `shapes`)."""
    ident = device_id(ctx)
    return {"params": params, "device_class": device_class,
            "date": datetime.date.today().isoformat(),
            "device": f"{ident['description']}, driver {ident['driver']}",
            "figure": round(figure, 3), "builtin_figure": round(builtin_figure, 3),
            "unit": unit, "shapes": [list(s) for s in shapes]}


@contextlib.contextmanager
def _locked(path):
    """Hold an exclusive lock on the file `path` (created 0600, never through a symlink):
    another process or thread storing waits. No lock where fcntl is missing (Windows)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _write(path, data):
    """Write `data` as JSON to a fresh temporary file beside `path` (mkstemp: an unguessable
    name, never an existing file or link), then rename it over `path`."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path),
                               prefix=os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def store(ctx, updates):
    """Merge `updates` ({entry key: entry, or None to remove it}) into the user's file for
    ctx's device; returns its path. The file is read, merged and replaced under a lock
    (`<path>.lock`), so two tuners storing at once keep each other's entries.
    UnsafeDirectoryError where config.private_dir refuses the store's directory."""
    path = user_path(ctx)
    folder = os.path.dirname(path)
    if config.private_dir(folder, _WHAT) is None:
        raise UnsafeDirectoryError(
            f"cannot store {_WHAT} in {folder}: the directory is not this user's alone or "
            f"cannot be created (see the warning); set flag tuning_dir to a directory of "
            f"your own (mode 0700)")
    with _locked(path + ".lock"):
        try:
            data = _parse(path)
        except ValueError as e:
            _warn(f"replacing unusable tuning file {path}: {e}")
            data = None
        entries_ = dict(data["entries"]) if data else {}
        for key, entry in updates.items():
            if entry is None:
                entries_.pop(key, None)
            else:
                entries_[key] = entry
        _write(path, {"format": FORMAT, "device": device_id(ctx),
                      "entries": dict(sorted(entries_.items()))})
    reload()
    return path
