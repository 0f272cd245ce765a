"""python -m gpuarr warmup and the compiled-template cache: what a new process pays to start."""

import os
import warnings

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import __main__ as cli
from gpuarr import kernels
from gpuarr.config import UnsafeDirectoryWarning
from gpuarr.warmup import DTYPES, warmup


def _scaler_like(x):
    """StandardScaler's fit_transform and a Gram matrix: the cold-start workload of the docs."""
    z = (x - x.mean(axis=0)) / ga.sqrt(x.var(axis=0))
    return z, z.T @ z


def test_warmup_builds_what_a_scaler_like_script_needs(ctx, monkeypatch):
    dtypes = [d for d in DTYPES if d != "float64" or ctx.device.fp64]
    assert list(warmup(ctx, dtypes)) == dtypes
    built = []
    real_build = kernels.build
    monkeypatch.setattr(kernels, "build", lambda *a, **k: built.append(a[1]) or real_build(*a, **k))
    host = np.random.default_rng(1).standard_normal((300, 7)).astype(ga.config.floatX)
    z, gram = _scaler_like(ga.asarray(host, context=ctx))
    expected = (host - host.mean(axis=0)) / np.sqrt(host.var(axis=0))
    rtol = 1e-4 if host.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(z.get(), expected, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(gram.get(), expected.T @ expected, rtol=rtol, atol=rtol * 300)
    assert built == [], f"{len(built)} kernels built after warmup"


def test_warmup_command_reports_each_dtype(capsys):
    assert cli.main(["warmup", "--dtypes", "float32, int64"]) == 0
    out = capsys.readouterr().out
    assert "float32" in out and "int64" in out and "warmed" in out


@pytest.fixture
def template_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    kernels._lookup.cache_clear()
    kernels._render.cache_clear()
    yield tmp_path / "gpuarr" / "mako"
    kernels._lookup.cache_clear()
    kernels._render.cache_clear()


def _render_probe():
    kernels._lookup.cache_clear()
    kernels._render.cache_clear()
    return kernels.render("probe.cl.mako", fp64=True, local_size=64)


def test_compiled_templates_are_kept_in_a_private_folder(template_cache):
    source = _render_probe()
    (install,) = template_cache.iterdir()
    (folder,) = install.iterdir()  # (one per text of the templates)
    assert os.stat(folder).st_mode & 0o077 == 0
    assert [p.name for p in folder.iterdir()] == ["probe.cl.mako.py"]
    assert _render_probe() == source  # from the kept module


def test_a_template_changed_within_a_second_is_compiled_again(template_cache, tmp_path,
                                                              monkeypatch):
    """Mako's own check compares whole seconds of modification times: a template rewritten
    with its old modification time (as an edit in the second its module was written) must
    still render its new text, and the old text's modules go."""
    here = tmp_path / "templates"
    here.mkdir()
    monkeypatch.setattr(kernels, "_HERE", str(here))
    template = here / "t.cl.mako"
    renders = []
    for text in ("first ${x}", "second ${x}"):
        template.write_text(text)
        os.utime(template, (1_700_000_000, 1_700_000_000))
        kernels._lookup.cache_clear()
        kernels._render.cache_clear()
        renders.append(kernels.render("t.cl.mako", x=1))
    assert renders == ["first 1", "second 1"]
    (install,) = template_cache.iterdir()
    (folder,) = install.iterdir()
    assert [p.name for p in folder.iterdir()] == ["t.cl.mako.py"]


def test_an_unsafe_template_folder_is_not_used(template_cache):
    _render_probe()
    (install,) = template_cache.iterdir()
    (folder,) = install.iterdir()
    for module in folder.iterdir():
        module.unlink()
    os.chmod(folder, 0o777)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source = _render_probe()
    assert "__kernel" in source
    assert any(issubclass(w.category, UnsafeDirectoryWarning) for w in caught)
    assert list(folder.iterdir()) == []
