"""Files gpuarr reads and writes are not trusted (issue 26, items 5-8): tuning files of any
content or kind are ignored with one warning, the tuning store merges under a lock and never
writes through a link, directories another user could write to are refused, and every
configuration error is one ConfigError naming the flag, the value, its source and what is
accepted."""

import dataclasses
import json
import os
import pathlib
import re
import stat
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest
from conftest import USABLE

import gpuarr.kernels
from gpuarr import blas, config, context, probe, tuning
from gpuarr.errors import ConfigError, FlagError, GpuArrayError, UnsafeDirectoryError

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
DIRECT = "gemm/float32/direct"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def store_dir(tmp_path, monkeypatch):
    """Flag tuning_dir in tmp_path (not created), no shipped files, GEMM dispatch as on a CPU."""
    user, shipped = tmp_path / "user", tmp_path / "shipped"
    shipped.mkdir()
    monkeypatch.setattr(config, "flags", dataclasses.replace(config.flags, tuning_dir=str(user)))
    monkeypatch.setattr(tuning, "SHIPPED_DIR", str(shipped))
    monkeypatch.setattr(blas, "device_class", lambda c: "cpu")
    tuning.reload()
    yield user
    tuning.reload()


def _entry(ctx, params):
    return tuning.record(ctx, params, "cpu", 2.0, 1.0, "GFLOP/s", [(64, 64, 64)])


def _builtin(ctx):
    return blas._tile(ctx, F32, 64, 64) == blas.builtin_tile("cpu", F32, "direct", ctx)


def _lookups_in_time(ctx, seconds=60):
    """Run two lookups (with a reload between) in a daemon thread: a file that blocks (a FIFO)
    or never ends (/dev/zero) fails the test instead of hanging it. Returns the warnings."""
    result = {}

    def run():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result["first"] = tuning.lookup(ctx, "gemm", F32, "direct", "cpu")
                tuning.reload()
                result["second"] = tuning.lookup(ctx, "gemm", F32, "direct", "cpu")
            except BaseException as e:
                result["error"] = e
        result["warnings"] = [w for w in caught if issubclass(w.category, UserWarning)]

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "reading the tuning file hung"
    assert "error" not in result, repr(result["error"])
    assert result["first"] is None and result["second"] is None
    return result["warnings"]


# ---------------------------------------------------------------- 5: tuning files

def _deep(n):
    return "[" * n + "]" * n


FILES = {
    "empty object": "{}",
    "list": "[1]",
    "db list": None,  # a valid file whose entry holds "db": [1] (built below)
    "nested lists": _deep(200_000),
    "nested entries": '{"format": 1, "device": {}, "entries": ' + _deep(50_000) + "}",
    "not utf-8": b'{"format": 1, "device": {}, "entries": {"\xff": 1}}',
    "huge integer": '{"format": 1, "device": {}, "entries": {}, "x": ' + "9" * 5000 + "}",
    "oversized": " " * (tuning.MAX_FILE_BYTES + 1) + "{}",
}


@pytest.mark.parametrize("kind", list(FILES))
def test_malformed_tuning_file_is_ignored_with_one_warning(ctx, store_dir, kind):
    path = tuning.user_path(ctx)
    store_dir.mkdir()
    content = FILES[kind]
    if content is None:
        big = dict(blas.GEMM_TILES["cpu"]["big"], prefetch=1, db=[1])
        content = json.dumps({"format": 1, "device": tuning.device_id(ctx), "entries": {
            "gemm/float16/big": _entry(ctx, big), DIRECT: _entry(ctx, {"mwi": [4], "nwi": 8})}})
    with open(path, "wb") as f:
        f.write(content if isinstance(content, bytes) else content.encode())
    caught = _lookups_in_time(ctx)
    assert len(caught) == 1, [str(w.message) for w in caught]
    assert issubclass(caught[0].category, tuning.TuningWarning)
    assert path in str(caught[0].message)
    assert _builtin(ctx)  # the defaults are used
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "db list": the float16 entry is ignored too
        assert blas._tile(ctx, F16, 80, 80) == blas.GEMM_TILES["cpu"]["big"]


@pytest.mark.parametrize("kind", ["fifo", "dev zero", "directory", "unreadable"])
def test_non_regular_or_unreadable_tuning_file_is_ignored(ctx, store_dir, kind):
    path = tuning.user_path(ctx)
    store_dir.mkdir()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev zero":
        os.symlink("/dev/zero", path)
    elif kind == "directory":
        os.mkdir(path)
    else:
        if os.geteuid() == 0:
            pytest.skip("root reads files of any mode")
        with open(path, "w") as f:
            f.write("{}")
        os.chmod(path, 0)
    caught = _lookups_in_time(ctx)
    assert len(caught) == 1 and path in str(caught[0].message), [str(w.message) for w in caught]
    assert _builtin(ctx)


@pytest.mark.parametrize("value", [[1], {"a": 1}, True, 1.5, -1, tuning.MAX_PARAM + 1, 10**30,
                                   None, "x" * 65],
                         ids=["list", "object", "bool", "float", "negative", "over max",
                              "huge", "null", "long string"])
def test_entry_with_a_bad_parameter_is_ignored(ctx, store_dir, value):
    """Entry parameters are integers 0..MAX_PARAM or names, before the op's own check (blas's
    check_tile, through tuning.register) sees them; another entry of the file still applies."""
    good = _entry(ctx, {"mwi": 2, "nwi": 4})
    # "db" is optional for the tiled kernels: check_tile alone let a list through
    big = dict(blas.GEMM_TILES["cpu"]["big"], prefetch=1, db=value)
    tuning.store(ctx, {DIRECT: _entry(ctx, {"mwi": value, "nwi": 8}),
                       "gemm/float16/big": _entry(ctx, big), "gemm/float64/direct": good})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _builtin(ctx)
        assert blas._tile(ctx, F16, 80, 80) == blas.GEMM_TILES["cpu"]["big"]
    assert len(caught) == 2 and all("ignoring tuned entry" in str(w.message) for w in caught)
    assert blas._tile(ctx, np.dtype(np.float64), 64, 64) == {"mwi": 2, "nwi": 4}


# ---------------------------------------------------------------- 6: the store

def test_store_never_writes_through_links(ctx, store_dir, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    path = tuning.user_path(ctx)
    store_dir.mkdir(mode=0o700)
    # the old store's predictable temporary name, and a link at the file itself
    os.symlink(victim, f"{path}.{os.getpid()}.tmp")
    os.symlink(victim, path)
    with pytest.warns(tuning.TuningWarning, match="replacing unusable"):
        tuning.store(ctx, {DIRECT: _entry(ctx, {"mwi": 4, "nwi": 8})})
    assert victim.read_text() == "precious"
    assert not os.path.islink(path) and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert tuning.lookup(ctx, "gemm", F32, "direct", "cpu") == {"mwi": 4, "nwi": 8}
    names = sorted(os.listdir(store_dir))
    assert names == sorted([os.path.basename(path), os.path.basename(path) + ".lock",
                            f"{os.path.basename(path)}.{os.getpid()}.tmp"]), names


def test_threads_storing_at_once_keep_every_entry(ctx, store_dir):
    def tuner(t):
        for i in range(6):
            tuning.store(ctx, {f"gemm/float32/t{t}i{i}": _entry(ctx, {"mwi": 2, "nwi": 4})})

    threads = [threading.Thread(target=tuner, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(tuning.stored(ctx)) == sorted(f"gemm/float32/t{t}i{i}" for t in range(4)
                                                 for i in range(6))


TUNER = r"""
import os, sys, time, types
from gpuarr import tuning
me, folder, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
device = types.SimpleNamespace(platform="Fake", device_name="Fake device", describe=lambda: "d",
                               cl_device=types.SimpleNamespace(driver_version="1.0"))
ctx = types.SimpleNamespace(device=device)
open(os.path.join(folder, "ready-" + me), "w").close()
while len([f for f in os.listdir(folder) if f.startswith("ready-")]) < 2:
    time.sleep(0.01)
for i in range(n):
    tuning.store(ctx, {f"gemm/float32/{me}-{i}": {"params": {"mwi": 2}}})
"""


def test_two_processes_storing_at_once_keep_every_entry(tmp_path):
    """Two tuners, each a read-merge-write per entry: under the lock neither loses the
    other's entries (without it, about half were lost)."""
    store, sync = tmp_path / "store", tmp_path / "sync"
    sync.mkdir()
    env = dict(os.environ, GPUARR_FLAGS=f"tuning_dir={store},device_probe=off",
               GPUARRRC=os.devnull)
    n = 30
    procs = [subprocess.Popen([sys.executable, "-c", TUNER, me, str(sync), str(n)], env=env,
                              cwd=ROOT, stderr=subprocess.PIPE, text=True) for me in "ab"]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    (path,) = store.glob("*.json")
    entries = json.loads(path.read_text())["entries"]
    assert sorted(entries) == sorted(f"gemm/float32/{me}-{i}" for me in "ab" for i in range(n))
    assert stat.S_IMODE(store.stat().st_mode) == 0o700
    assert not list(store.glob("*.tmp"))


# ---------------------------------------------------------------- 7: directories

def test_private_dir_creates_missing_folders_0700(tmp_path):
    path = tmp_path / "a" / "b" / "c"
    assert config.private_dir(str(path), "tests") == str(path)
    for p in (path, path.parent, path.parent.parent):
        assert stat.S_IMODE(p.stat().st_mode) == 0o700
    assert config.private_dir(str(tmp_path / "absent"), "tests", create=False) is None
    assert not (tmp_path / "absent").exists()


@pytest.mark.parametrize("mode, who", [(0o770, "group"), (0o707, "others"),
                                       (0o777, "group and others")])
def test_private_dir_refuses_a_folder_others_can_write(tmp_path, mode, who):
    path = tmp_path / "shared"
    path.mkdir()
    path.chmod(mode)
    with pytest.warns(config.UnsafeDirectoryWarning) as caught:
        assert config.private_dir(str(path), "tests") is None
    message = str(caught[0].message)
    assert str(path) in message and f"writable by {who}" in message and "chmod go-w" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per folder
        assert config.private_dir(str(path), "tests") is None
    path.chmod(0o755)
    assert config.private_dir(str(path), "tests") == str(path)


def test_private_dir_refuses_another_users_folder_and_a_file(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("")
    with pytest.warns(config.UnsafeDirectoryWarning, match="not a directory"):
        assert config.private_dir(str(a_file), "tests") is None
    if os.geteuid() != 0:
        pytest.skip("only root can give a folder to another user")
    path = tmp_path / "theirs"
    path.mkdir(mode=0o700)
    os.chown(path, 54321, 54321)
    with pytest.warns(config.UnsafeDirectoryWarning, match="owned by uid 54321"):
        assert config.private_dir(str(path), "tests") is None


def test_tuning_store_in_an_unsafe_folder_is_not_used(ctx, store_dir):
    tuning.store(ctx, {DIRECT: _entry(ctx, {"mwi": 4, "nwi": 8})})
    user_file = pathlib.Path(tuning.user_path(ctx))
    before = user_file.read_text()
    store_dir.chmod(0o777)
    tuning.reload()
    with pytest.warns(config.UnsafeDirectoryWarning, match=str(store_dir)):
        assert _builtin(ctx)  # the planted-looking entry is not read
    assert tuning.stored(ctx) == {}
    with pytest.raises(UnsafeDirectoryError, match="tuning_dir") as info:
        tuning.store(ctx, {DIRECT: _entry(ctx, {"mwi": 2, "nwi": 4})})
    assert isinstance(info.value, PermissionError) and isinstance(info.value, GpuArrayError)
    assert user_file.read_text() == before


def test_compile_cache_dir_in_an_unsafe_folder_is_not_used(tmp_path, monkeypatch):
    path = tmp_path / "kernels"
    monkeypatch.setattr(config, "flags",
                        dataclasses.replace(config.flags, compile_cache_dir=str(path)))
    assert gpuarr.kernels._cache_dir() == str(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o700
    path.chmod(0o775)
    with pytest.warns(config.UnsafeDirectoryWarning, match="compile_cache_dir"):
        assert gpuarr.kernels._cache_dir() is None
    monkeypatch.setattr(config, "flags", dataclasses.replace(config.flags, compile_cache_dir=""))
    assert gpuarr.kernels._cache_dir() is None


def test_driver_caches_in_an_unsafe_folder_are_not_used(tmp_path, monkeypatch):
    """compile_cache_dir also routes PoCL's and NVIDIA's own caches: not into a folder
    others can write (a planted PoCL kernel library would run)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.delenv("POCL_CACHE_DIR", raising=False)
    monkeypatch.delenv("CUDA_CACHE_PATH", raising=False)
    with pytest.warns(config.UnsafeDirectoryWarning):
        context._route_driver_caches(str(shared))
    assert "POCL_CACHE_DIR" not in os.environ and "CUDA_CACHE_PATH" not in os.environ
    private = tmp_path / "private"
    context._route_driver_caches(str(private))
    assert os.environ["POCL_CACHE_DIR"] == str(private / "pocl")
    assert stat.S_IMODE(private.stat().st_mode) == 0o700


def test_probe_verdicts_in_an_unsafe_folder_are_not_used(tmp_path, monkeypatch):
    """A planted 'ok' verdict in a folder others can write is not read, and nothing is
    written there: the device is probed (here: a probe that crashes)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(config, "flags", dataclasses.replace(
        config.flags, compile_cache_dir="", device_probe="all"))
    info = USABLE[0]
    key = probe.driver_key(info)
    path = probe._key_file(key)
    os.makedirs(os.path.dirname(path))
    os.chmod(os.path.dirname(path), 0o777)
    planted = json.dumps({"state": "ok", "key": key})
    with open(path, "w") as f:
        f.write(planted)
    monkeypatch.setattr(probe, "command", lambda i: [sys.executable, "-c", "import os; "
                                                     "print('step x', flush=True); os.abort()"])
    with pytest.warns(config.UnsafeDirectoryWarning, match="device-probe verdicts"):
        (verdict,) = probe.probe_devices([info])
    assert verdict.failed and not verdict.cached
    assert pathlib.Path(path).read_text() == planted
    assert sorted(os.listdir(os.path.dirname(path))) == [os.path.basename(path)]


# ---------------------------------------------------------------- 8: configuration

def _load(flags="", rc=None):
    return config.load({config.ENV_VAR: flags,
                        config.RC_ENV_VAR: str(rc) if rc is not None else os.devnull})


def test_config_error_class():
    assert issubclass(ConfigError, FlagError) and issubclass(ConfigError, ValueError)
    assert issubclass(ConfigError, GpuArrayError)


BAD = {  # a bad value for every flag
    "device": "gpu0", "contexts": "dev0", "floatX": "float16", "force_device": "maybe",
    "preallocate": "inf", "print_active_device": "2", "compile_cache_dir": "a\0b",
    "tuning_dir": "\0", "blas_backend": "cuda", "gemm_precision": "fp16",
    "assert_no_cpu_op": "abort", "profile": "often", "device_probe": "gpu", "comm_timeout": "0",
    "context_sharing": "always", "array_api_version": "2026.12",
}


@pytest.mark.parametrize("key", sorted(config.FLAGS))
def test_every_flag_is_checked_at_load(tmp_path, key):
    """One ConfigError naming the flag, the value, its source and the accepted values."""
    value = BAD.get(key)
    assert value is not None, f"flag {key} needs a bad value here"
    accepted = config.FLAGS[key].accepted()
    assert accepted
    with pytest.raises(ConfigError) as info:
        _load(f"{key}={value}")
    message = str(info.value)
    for part in (key, repr(value), config.ENV_VAR, accepted):
        assert part in message, (part, message)
    if "\0" in value:
        return  # no NUL in an rc file
    rc = tmp_path / "rc"
    other = "profile = no" if key != "profile" else "floatX = float32"
    rc.write_text(f"# gpuarr\n[global]\n\n{other}\n{key} = {value}\n")
    with pytest.raises(ConfigError) as info:
        _load(rc=rc)
    message = str(info.value)
    for part in (key, repr(value), f"{rc} line 5", accepted):
        assert part in message, (part, message)


@pytest.mark.parametrize("value, reason", [
    ("inf", "finite"), ("-inf", "finite"), ("1e400", "finite"), ("nan", "number"),
    ("1e-12", "fraction"), ("0.00001", "fraction"),
])
def test_preallocate_is_checked_at_load(value, reason):
    with pytest.raises(ConfigError, match=rf"'{value}' for flag preallocate in GPUARR_FLAGS: "
                                          rf".*{reason}.*accepted values"):
        _load(f"preallocate={value}")


@pytest.mark.parametrize("value", ["0", "-1", "0.0001", "0.5", "1", "512", "1.5"])
def test_preallocate_accepts_its_documented_values(value):
    assert _load(f"preallocate={value}").preallocate == float(value)


def test_rc_file_not_utf8_names_file_and_line(tmp_path):
    rc = tmp_path / "rc"
    rc.write_bytes(b"[global]\nfloatX = float32\n# caf\xe9\n")
    with pytest.raises(ConfigError, match=rf"{rc} line 3 is not UTF-8"):
        _load(rc=rc)
    rc.write_bytes("\ufeff[global]\nfloatX = float64\n".encode())  # a BOM is fine
    assert _load(rc=rc).floatX == "float64"


@pytest.mark.parametrize("header", ["[Global]", "[GLOBAL]", "[ global ]"])
def test_misspelt_global_section_is_an_error(tmp_path, header):
    rc = tmp_path / "rc"
    rc.write_text(f"[other]\nx = 1\n{header}\nfloatX = float64\n")
    with pytest.raises(ConfigError, match=re.escape(f"section {header} in {rc} line 3") +
                       r" .*\[global\] \(lower case\)"):
        _load(rc=rc)


def test_gpuarrrc_naming_a_missing_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match=rf"GPUARRRC={tmp_path / 'absent'} names no file"):
        _load(rc=tmp_path / "absent")
    assert _load(rc=os.devnull).floatX == "auto"  # os.devnull: no rc file
    # the default ~/.gpuarrrc may be absent
    assert config.load({config.ENV_VAR: "", "HOME": str(tmp_path)}) == _load()


@pytest.mark.parametrize("kind", ["fifo", "dev zero", "directory", "oversized"])
def test_rc_file_that_is_not_a_small_regular_file_is_an_error(tmp_path, kind):
    rc = tmp_path / "rc"
    if kind == "fifo":
        os.mkfifo(rc)  # reading it would block: opened without blocking, refused
    elif kind == "dev zero":
        rc.symlink_to("/dev/zero")
    elif kind == "directory":
        rc.mkdir()
    else:
        rc.write_text("[global]\n" + "# padding\n" * (config.MAX_RC_BYTES // 10 + 1))
    with pytest.raises(ConfigError, match=str(rc)):
        _load(rc=rc)
