"""Tuned GEMM parameters: the store (gpuarr.tuning), blas's use of it, the validity function,
and the autotuner (gpuarr.autotune, `python -m gpuarr tune gemm`) end to end on a tiny size."""

import dataclasses
import json
import re
import warnings

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import __main__ as cli
from gpuarr import autotune, blas, config, tuning
from gpuarr.errors import ArgumentError, KernelBuildError

F32, F16 = np.dtype(np.float32), np.dtype(np.float16)


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    """The user store (flag tuning_dir) and the shipped folder, both empty, in tmp_path."""
    user, shipped = tmp_path / "user", tmp_path / "shipped"
    shipped.mkdir()
    monkeypatch.setattr(config, "flags", dataclasses.replace(config.flags, tuning_dir=str(user)))
    monkeypatch.setattr(tuning, "SHIPPED_DIR", str(shipped))
    tuning.reload()
    yield user, shipped
    tuning.reload()


@pytest.fixture
def cpu(ctx, monkeypatch):
    """Dispatch as on a CPU (the CPU kernels, GEMM_TILES["cpu"]) whatever the test device."""
    monkeypatch.setattr(blas, "device_class", lambda c: "cpu")
    return ctx


def _entry(ctx, params, device_class="cpu", figure=2.0):
    return tuning.record(ctx, params, device_class, figure, 1.0, "GFLOP/s", [(64, 64, 64)])


def _write(path, entries, ident):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"format": tuning.FORMAT, "device": ident, "entries": entries}))


DIRECT = "gemm/float32/direct"


# ---------------------------------------------------------------- the store

def test_device_key_is_a_file_name_with_the_driver(ctx, dirs):
    key = tuning.device_key(ctx)
    ident = tuning.device_id(ctx)
    assert re.fullmatch(r"[a-z0-9.-]+", key), key
    assert key.count("--") == 2 and key.endswith(tuning._slug(ident["driver"]))
    assert tuning.user_path(ctx) == str(dirs[0] / f"{key}.json")


def test_user_dir_defaults_to_the_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "flags", dataclasses.replace(config.flags, tuning_dir=""))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tuning.user_dir() == str(tmp_path / "gpuarr" / "tuning")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert tuning.user_dir() == str(tmp_path / "home" / ".cache" / "gpuarr" / "tuning")


def test_store_round_trip(cpu, dirs):
    assert tuning.lookup(cpu, "gemm", F32, "direct", "cpu") is None
    path = tuning.store(cpu, {DIRECT: _entry(cpu, {"mwi": 4, "nwi": 8}, figure=3.25)})
    assert path == tuning.user_path(cpu)
    with open(path) as f:
        data = json.load(f)
    assert data["format"] == tuning.FORMAT and data["device"] == tuning.device_id(cpu)
    entry = data["entries"][DIRECT]
    assert entry["params"] == {"mwi": 4, "nwi": 8} and entry["device_class"] == "cpu"
    assert entry["figure"] == 3.25 and entry["builtin_figure"] == 1.0
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", entry["date"])
    assert cpu.device.device_name in entry["device"]
    assert tuning.lookup(cpu, "gemm", F32, "direct", "cpu") == {"mwi": 4, "nwi": 8}
    assert tuning.stored(cpu) == data["entries"]
    # merging keeps other entries; None removes one
    tuning.store(cpu, {"gemm/float64/direct": _entry(cpu, {"mwi": 2, "nwi": 4})})
    assert sorted(tuning.stored(cpu)) == ["gemm/float32/direct", "gemm/float64/direct"]
    tuning.store(cpu, {DIRECT: None})
    assert tuning.lookup(cpu, "gemm", F32, "direct", "cpu") is None
    assert tuning.lookup(cpu, "gemm", np.float64, "direct", "cpu") == {"mwi": 2, "nwi": 4}


def test_lookup_precedence_user_then_shipped_then_builtin(cpu, dirs):
    user, shipped = dirs
    ident = tuning.device_id(cpu)
    # a shipped file of this device under another driver still applies
    other = dict(ident, driver="0.0-other")
    name = "--".join(tuning._slug(other[k]) for k in ("platform", "device", "driver"))
    _write(shipped / f"{name}.json", {DIRECT: _entry(cpu, {"mwi": 2, "nwi": 8})}, other)
    # ... and a file of another device does not
    _write(shipped / "nvidia-cuda--nvidia-h200--550.json",
           {DIRECT: _entry(cpu, {"mwi": 16, "nwi": 16})},
           {"platform": "NVIDIA CUDA", "device": "NVIDIA H200", "driver": "550"})
    tuning.reload()
    assert blas._tile(cpu, F32, 64, 64) == {"mwi": 2, "nwi": 8}
    # the same driver's shipped file wins over another driver's
    _write(shipped / f"{tuning.device_key(cpu)}.json",
           {DIRECT: _entry(cpu, {"mwi": 4, "nwi": 4})}, ident)
    tuning.reload()
    assert blas._tile(cpu, F32, 64, 64) == {"mwi": 4, "nwi": 4}
    tuning.store(cpu, {DIRECT: _entry(cpu, {"mwi": 6, "nwi": 4})})
    assert blas._tile(cpu, F32, 64, 64) == {"mwi": 6, "nwi": 4}
    for path in (*shipped.iterdir(), *user.iterdir()):
        path.unlink()
    tuning.reload()
    assert blas._tile(cpu, F32, 64, 64) == blas.builtin_tile("cpu", F32, "direct", cpu)


def test_lookup_is_cached_on_the_context(cpu, dirs):
    tuning.store(cpu, {DIRECT: _entry(cpu, {"mwi": 4, "nwi": 8})})
    assert blas._tile(cpu, F32, 64, 64) == {"mwi": 4, "nwi": 8}
    with open(tuning.user_path(cpu), "w") as f:
        f.write("{}")
    assert blas._tile(cpu, F32, 64, 64) == {"mwi": 4, "nwi": 8}  # not read again
    tuning.reload()
    with pytest.warns(tuning.TuningWarning):
        assert blas._tile(cpu, F32, 64, 64) == blas.builtin_tile("cpu", F32, "direct", cpu)


@pytest.mark.parametrize("text", ["{not json", '{"format": 99, "device": {}, "entries": {}}',
                                  '["a list"]', '{"format": 1, "device": {}, "entries": 3}'],
                         ids=["syntax", "format", "list", "entries"])
def test_corrupt_file_is_ignored_with_one_warning(cpu, dirs, text):
    path = tuning.user_path(cpu)
    dirs[0].mkdir()
    with open(path, "w") as f:
        f.write(text)
    with pytest.warns(tuning.TuningWarning, match="ignoring tuning file"):
        assert tuning.lookup(cpu, "gemm", F32, "direct", "cpu") is None
    tuning.reload()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once already
        assert tuning.lookup(cpu, "gemm", F32, "direct", "cpu") is None
    # the tuner's store replaces such a file
    with pytest.warns(tuning.TuningWarning, match="replacing"):
        tuning.store(cpu, {DIRECT: _entry(cpu, {"mwi": 4, "nwi": 8})})
    assert tuning.lookup(cpu, "gemm", F32, "direct", "cpu") == {"mwi": 4, "nwi": 8}


@pytest.mark.parametrize("params", [{"mwi": 4, "nwi": 8, "unroll": 2}, {"mwi": 4},
                                    {"mwi": 4, "nwi": 5}, {"mwi": -1, "nwi": 8},
                                    {"mwi": "4", "nwi": 8}, "mwi=4"],
                         ids=["new key", "missing key", "bad width", "negative", "string",
                              "not a dict"])
def test_stale_entry_is_ignored_with_a_warning(cpu, dirs, params):
    bad = _entry(cpu, {"mwi": 4, "nwi": 8})
    bad["params"] = params
    good = _entry(cpu, {"mwi": 2, "nwi": 4})
    tuning.store(cpu, {DIRECT: bad, "gemm/float64/direct": good})
    with pytest.warns(tuning.TuningWarning, match="ignoring tuned entry gemm/float32/direct"):
        assert blas._tile(cpu, F32, 64, 64) == blas.builtin_tile("cpu", F32, "direct", cpu)
    assert blas._tile(cpu, np.dtype(np.float64), 64, 64) == {"mwi": 2, "nwi": 4}


def test_entry_of_another_device_class_is_not_used(cpu, dirs):
    tuning.store(cpu, {DIRECT: _entry(cpu, {"mwi": 4, "nwi": 8}, device_class="gpu")})
    assert blas._tile(cpu, F32, 64, 64) == blas.builtin_tile("cpu", F32, "direct", cpu)
    assert tuning.lookup(cpu, "gemm", F32, "direct") == {"mwi": 4, "nwi": 8}  # any class


# ---------------------------------------------------------------- blas uses the entries

def _gemm_checked(ctx, dtype, m, k, n, tol):
    rng = np.random.default_rng(5)
    a, b = ((rng.random(s) - 0.5).astype(dtype) for s in ((m, k), (k, n)))
    got = (ga.asarray(a, context=ctx) @ ga.asarray(b, context=ctx)).get()
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=tol, atol=tol * k)


def _kernel_keys(ctx, name):
    return [dict(key[1]) for key in ctx.kernels if isinstance(key, tuple) and key[0] == name]


def test_direct_kernel_takes_the_stored_entry(cpu, dirs):
    tuning.store(cpu, {DIRECT: _entry(cpu, {"mwi": 6, "nwi": 4})})
    _gemm_checked(cpu, np.float32, 37, 29, 45, 1e-5)
    assert any(p["mwi"] == 6 and p["nwi"] == 4 and p["dtype"] == "float32"
               for p in _kernel_keys(cpu, "gemm_direct"))


def test_tiled_kernel_takes_the_stored_entry(cpu, dirs):
    builtin = blas.GEMM_TILES["cpu"]["big"]
    tile = dict(builtin, mwg=32, nwg=32, kwg=8, mdimc=8, ndimc=4)
    blas.check_tile(cpu, F16, "big", tile, "cpu")
    tuning.store(cpu, {"gemm/float16/big": _entry(cpu, tile)})
    # 40 rows: under the built-in big tile's 64, over the stored one's 32
    assert blas._tile(cpu, F16, 40, 70) == tile
    _gemm_checked(cpu, np.float16, 40, 50, 70, 2e-2)
    assert any(all(p[k] == v for k, v in tile.items()) and p["dtype"] == "float16"
               for p in _kernel_keys(cpu, "gemm"))


# ---------------------------------------------------------------- the validity function

@pytest.mark.parametrize("cls", ["cpu", "gpu", "nvidia"])
def test_builtin_entries_are_valid(ctx, cls):
    for shape_class in blas.GEMM_TILES[cls]:
        for dt in (["float32", "float64"] if shape_class in blas.DIRECT_CLASSES
                   else ["float16", "float32"]):
            blas.check_tile(ctx, dt, shape_class, blas.builtin_tile(cls, dt, shape_class), cls)


@pytest.mark.parametrize("change, message", [
    (dict(mdimc=12), "must be a multiple of mdimc=12"),
    (dict(vw=2, mwg=24, mdimc=8), "vw=2 must divide mwg/mdimc=3"),
    (dict(vw=2, pad=1), "pad=1"),
    (dict(vw=3), "vw 1, 2, 4, 8 or 16"),
    (dict(mdimc=128, ndimc=128, mwg=128, nwg=128), "max_work_group_size"),
    (dict(kwg=8192), "bytes of local memory"),
    (dict(mdimc=1, ndimc=1), "MAX_OUTPUTS"),
    (dict(kwg=0), "must be positive"),
    (dict(pad=-2), "non-negative integer"),
    (dict(prefetch=True), "non-negative integer"),
    (dict(extra=1), "expected the keys"),
    (dict(backend="cublas"), "backend='cublas'"),
])
def test_check_tile_rejects_bad_candidates(ctx, change, message):
    tile = dict(blas.GEMM_TILES["cpu"]["big"], **change)
    with pytest.raises(ArgumentError, match=re.escape(message)):
        blas.check_tile(ctx, "float32", "big", tile, "cpu")


def test_check_tile_knows_db_and_the_direct_kernel(ctx):
    tile = dict(blas.GEMM_TILES["gpu"]["big"], prefetch=1, db=1)
    blas.check_tile(ctx, "float32", "big", tile, "gpu")  # a key GEMM_SPACE adds
    tile["prefetch"] = 0
    with pytest.raises(ArgumentError, match="db=1 needs prefetch=1"):
        blas.check_tile(ctx, "float32", "big", tile, "gpu")
    with pytest.raises(ArgumentError, match="a vector width"):
        blas.check_tile(ctx, "float32", "direct", {"mwi": 4, "nwi": 3}, "cpu")
    with pytest.raises(ArgumentError, match="no such shape class"):
        blas.check_tile(ctx, "float16", "direct", {"mwi": 4, "nwi": 4}, "cpu")
    with pytest.raises(ArgumentError, match="no such shape class"):
        blas.check_tile(ctx, "float32", "column", blas.GEMM_TILES["gpu"]["column"], "cpu")
    blas.check_tile(ctx, "float32", "direct", {"mwi": 4, "nwi": 8, "backend": "clblast"}, "cpu")


def test_candidates_are_valid_distinct_and_seeded(cpu):
    got = autotune.candidates(cpu, F32, "direct", 10, seed=3)
    assert got[0].source == "built-in" and got[0].params == blas.builtin_tile("cpu", F32,
                                                                               "direct", cpu)
    assert len(got) == 10 and len({tuple(sorted(c.params.items())) for c in got}) == 10
    for c in got:
        blas.check_tile(cpu, F32, "direct", c.params, "cpu")
    again = autotune.candidates(cpu, F32, "direct", 10, seed=3)
    assert [c.params for c in again] == [c.params for c in got]
    big = autotune.candidates(cpu, F16, "big", 30, seed=0)
    keys = set(blas.GEMM_TILES["cpu"]["big"]) | set(blas.GEMM_SPACE["cpu"]["big"])
    assert len(big) == 30 and all(set(c.params) == keys for c in big[1:])  # every key drawn


# ---------------------------------------------------------------- the tuner

def test_tuner_skips_wrong_and_failing_candidates(cpu, dirs, monkeypatch):
    real = autotune._enqueue
    cands = autotune.candidates(cpu, F32, "direct", 3, seed=0)
    wrong, broken = (tuple(sorted(c.params.items())) for c in cands[1:3])

    def sabotaged(ctx, shape_class, cand, a, b, c):
        key = tuple(sorted(cand.params.items()))
        if key == wrong:
            c.fill(1)
            return True
        if key == broken:
            raise KernelBuildError("pretend build failure")
        return real(ctx, shape_class, cand, a, b, c)

    monkeypatch.setattr(autotune, "_enqueue", sabotaged)
    monkeypatch.setattr(autotune.clblast, "available", lambda: False)
    (o,) = autotune.tune_gemm(cpu, ["float32"], ["direct"], budget=3, size=48, repeats=1,
                              progress=False)
    errors = {tuple(sorted(c.params.items())): c.error for c in o.candidates}
    assert errors[wrong].startswith("wrong result") and "KernelBuildError" in errors[broken]
    assert o.best is o.builtin and not o.keep
    assert autotune.updates(cpu, [o]) == {}


def test_updates_store_winners_clblast_and_builtin_over_stored(cpu, dirs):
    builtin = autotune.Candidate({"mwi": 8, "nwi": 16}, "built-in", [2.0], 2.0)
    fast = autotune.Candidate({"mwi": 4, "nwi": 8}, "sampled", [1.0], 4.0)
    blast = autotune.Candidate({}, "clblast", [0.5], 8.0)
    stored = autotune.Candidate({"mwi": 2, "nwi": 4}, "stored", [3.0], 1.3)

    def outcome(dtype, ranked, keep):
        return autotune.Outcome(dtype, "direct", "cpu", [(64, 64, 64), (72, 72, 72)], ranked,
                                ranked[0], builtin, 4.0, 2.0, keep)

    changes = autotune.updates(cpu, [outcome("float32", [fast, builtin], True),
                                     outcome("float64", [blast, fast, builtin], True)])
    assert changes[DIRECT]["params"] == {"mwi": 4, "nwi": 8}
    assert changes[DIRECT]["figure"] == 4.0 and changes[DIRECT]["builtin_figure"] == 2.0
    assert changes[DIRECT]["shapes"] == [[64, 64, 64], [72, 72, 72]]
    assert changes["gemm/float64/direct"]["params"] == {"mwi": 4, "nwi": 8, "backend": "clblast"}
    tuning.store(cpu, changes)
    assert blas._tile(cpu, np.dtype(np.float64), 64, 64)["backend"] == "clblast"
    # the built-in entry beat a stored one: stored explicitly (over any shipped entry)
    lost = autotune.updates(cpu, [outcome("float32", [builtin, stored], False)])
    assert lost[DIRECT]["params"] == builtin.params
    assert autotune.updates(cpu, [outcome("float32", [builtin, fast], False)]) == {}


def test_tune_command_dry_run(ctx, dirs, capsys):
    argv = ["tune", "gemm", "--budget", "2", "--size", "64", "--dtype", "float32", "--dry-run"]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    cls = blas.gemm_class(ctx)
    for shape_class in blas.shape_classes(cls, F32):
        assert f"float32 {shape_class}: " in out and f"float32 {shape_class} [" in err
    assert "64x64x64" in out and "41x41x41" in out  # the aligned and the ragged problem
    assert "built-in" in out and "dry run: nothing stored" in out
    assert not dirs[0].exists()
    assert cli.main(["tune", "gemm", "--dtype", "int8", "--budget", "1"]) == 2
    assert "takes dtypes" in capsys.readouterr().err


# ---------------------------------------------------------------- small shapes, tensor cores

def test_tuner_searches_the_tiny_class(ctx, dirs, monkeypatch):
    """The GPU classes include the tiny direct kernel's: timed on 16^3, 40^3 and 64^3 over
    many calls per sync; its candidates check against numpy like the others."""
    monkeypatch.setattr(blas, "device_class", lambda c: "gpu")
    monkeypatch.setattr(autotune.clblast, "available", lambda: False)
    assert "tiny" in blas.shape_classes("gpu", F32) and "tiny" not in blas.shape_classes(
        "gpu", F16)
    (o,) = autotune.tune_gemm(ctx, ["float32"], ["tiny"], budget=3, repeats=1, progress=False)
    assert o.shapes == [(16, 16, 16), (40, 40, 40), (64, 64, 64)]
    assert len(o.candidates) == 3 and not any(c.error for c in o.candidates)
    assert o.builtin.params == blas.GEMM_TILES["gpu"]["tiny"]["float32"]
    if not blas._mma_ok(ctx, blas.MMA_CLASSES["mma_3xtf32"]):  # (no tensor cores here)
        with pytest.raises(ArgumentError, match="no GEMM shape class 'mma_3xtf32'"):
            autotune.tune_gemm(ctx, ["float32"], ["mma_3xtf32"], budget=1, progress=False)


@pytest.mark.parametrize("shape_class", list(blas.MMA_CLASSES))
def test_mma_classes_are_checked_by_the_template(ctx, shape_class):
    """The tensor-core tiles as tuner classes: the built-in entries pass check_tile (0/1 for
    switches), the template's own asserts and the accumulator bound reject the others."""
    dt = "float64" if shape_class == "mma_f64" else "float32"
    builtin = blas.builtin_tile("nvidia", dt, shape_class)
    assert all(type(v) in (int, str) for v in builtin.values())
    blas.check_tile(ctx, dt, shape_class, builtin, "nvidia")
    for change, message in ((dict(bk=12), "template refuses"), (dict(wm=3), "template refuses"),
                            (dict(wm=1, wn=1, bm=128, bn=128), "MAX_OUTPUTS"),
                            (dict(shape="m8n8k9"), "template refuses"),
                            (dict(copy="dma"), "template refuses"), (dict(extra=1), "keys"),
                            (dict(sync="wait"), "template refuses")):
        with pytest.raises(ArgumentError, match=message):
            blas.check_tile(ctx, dt, shape_class, dict(builtin, **change), "nvidia")
    # sync has a default: entries stored before it existed still pass
    blas.check_tile(ctx, dt, shape_class, {k: v for k, v in builtin.items() if k != "sync"},
                    "nvidia")
    with pytest.raises(ArgumentError, match="no such shape class"):
        blas.check_tile(ctx, dt, shape_class, builtin, "gpu")


def test_tuned_mma_tile_comes_first(ctx, dirs, monkeypatch):
    """A stored tensor-core entry is used where its probe passes, else MMA_TILES' entry;
    the tuner's candidates for the class are valid, distinct and keep the mma shape."""
    monkeypatch.setattr(blas, "_nv_capability", lambda c: (9, 0))
    monkeypatch.setattr(blas, "gemm_class", lambda c: "nvidia")
    probed = []
    monkeypatch.setattr(blas, "_mma_probe", lambda c, prec, tile: probed.append(tile) or
                        tile["bn"] != 96)
    cands = autotune.candidates(ctx, F32, "mma_3xtf32", 8, seed=1)
    assert cands[0].params == blas.builtin_tile("nvidia", F32, "mma_3xtf32", ctx)
    assert len({tuple(sorted(c.params.items())) for c in cands}) == 8
    for c in cands:
        blas.check_tile(ctx, F32, "mma_3xtf32", c.params, "nvidia")
        assert c.params["shape"] == "m16n8k8"
    tuned = dict(cands[1].params)
    tuning.store(ctx, {"gemm/float32/mma_3xtf32": _entry(ctx, tuned, "nvidia")})
    assert blas._mma_tile(ctx, "3xtf32") == tuned and probed[-1] == tuned
    tuning.store(ctx, {"gemm/float32/mma_3xtf32": _entry(ctx, dict(tuned, bn=96), "nvidia")})
    assert blas._mma_tile(ctx, "3xtf32") == blas.MMA_TILES["3xtf32"][8]  # its probe failed
