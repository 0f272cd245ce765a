"""os.fork() after gpuarr loaded the OpenCL driver: the child's first device use raises
ForkedProcessError (naming the spawn/forkserver fix) instead of hanging forever; a child that
never touches the device is unaffected; multiprocessing's spawn start method keeps working.

Each case runs a script in a subprocess with a timeout, so that a regression (a hang) fails
the test instead of hanging the suite.
"""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 120  # the scripts take a few seconds; a hung child must not eat CI

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

PRELUDE = """
import faulthandler, multiprocessing, os, sys
import numpy as np
import gpuarr as ga
from gpuarr.errors import ForkedProcessError

def in_child(fn):
    '''Run fn() in a forked child; its exit status (0: fn returned). A child still running
    after 30 s prints its stack and exits 1: the hang this guards against.'''
    faulthandler.cancel_dump_traceback_later()  # its watchdog thread would not survive
    pid = os.fork()
    if pid == 0:
        faulthandler.dump_traceback_later(30, exit=True)
        try:
            fn()
        except BaseException as e:
            print(f"child: {type(e).__name__}: {e}", flush=True)
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)
"""


def run(body, tmp_path, name="script.py"):
    path = tmp_path / name
    path.write_text(PRELUDE + textwrap.dedent(body))
    env = dict(os.environ, GPUARR_FLAGS="print_active_device=False",
               PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    # A session of its own: a timeout kills the script's children too (a hung child would
    # keep the output pipes open).
    proc = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the script hung (killed after {TIMEOUT} s):\n{out}\n{err}")
    assert proc.returncode == 0, out + err
    return out


def test_forked_child_raises_on_every_device_use(tmp_path):
    out = run("""
        x = ga.asarray(np.arange(16, dtype=np.float32))
        y = ga.exp(x) * 2          # pending work at the fork: the parent finishes it first
        uses = {
            "add": lambda: x + x,
            "get": lambda: x.get(),
            "asarray": lambda: ga.asarray(np.ones(4, np.float32)),
            "empty": lambda: ga.empty(4, np.float32, context=x.context),
            "init": lambda: ga.init(x.context.devname),
            "get_context": lambda: ga.get_context(),
            "transfer": lambda: x.copy(),
            "sync_context": lambda: x.context.sync(),
        }
        for name, use in uses.items():
            def child(use=use):
                try:
                    use()
                except ForkedProcessError as e:
                    msg = str(e)
                    assert "spawn" in msg and "forkserver" in msg and "forked" in msg, msg
                    assert x.context.devname in msg or name == "init", msg
                    print(f"{name} raised", flush=True)
                    return
                raise AssertionError(f"{name}: no ForkedProcessError")
            print(name, "exit", in_child(child), flush=True)
        # an event inherited from the parent is complete: waiting on it returns
        print("sync exit", in_child(lambda: y.sync()), flush=True)
        # a grandchild is a forked child too (x + x raises there: its exit status is 1)
        def grandchild():
            assert in_child(lambda: x + x) == 1
        print("grandchild exit", in_child(grandchild), flush=True)
        # the parent is unaffected
        np.testing.assert_allclose((y + x).get(), np.exp(np.arange(16.)) * 2 + np.arange(16.),
                                   rtol=1e-5)
        print("parent ok")
    """, tmp_path)
    for name in ("add", "get", "asarray", "empty", "init", "get_context", "transfer",
                 "sync_context"):
        assert f"{name} exit 0" in out, out
    assert "sync exit 0" in out and "grandchild exit 0" in out and "parent ok" in out, out


def test_child_that_never_touches_the_device(tmp_path):
    out = run("""
        x = ga.asarray(np.ones(8, np.float32)) + 1
        pid = os.fork()
        if pid == 0:      # host work only, then a normal interpreter exit (no os._exit)
            faulthandler.dump_traceback_later(30, exit=True)
            print("child sum", int(np.arange(10).sum()), flush=True)
            sys.exit(0)
        _, status = os.waitpid(pid, 0)
        print("child exit", os.waitstatus_to_exitcode(status))
        print("parent", x.get().tolist())
    """, tmp_path)
    assert "child sum 45" in out and "child exit 0" in out and "parent [2.0" in out, out


def test_multiprocessing_fork_reports_the_error_and_spawn_works(tmp_path):
    out = run("""
        def work(n):
            return float(ga.asarray(np.arange(n, dtype=np.float32)).sum())

        if __name__ == "__main__":
            x = ga.asarray(np.ones(4, np.float32)) * 3   # the parent has a context
            with multiprocessing.get_context("spawn").Pool(2) as pool:
                print("spawn", pool.map(work, [10, 100]), flush=True)
            with multiprocessing.get_context("fork").Pool(1) as pool:
                try:
                    pool.apply(work, (10,))
                except ForkedProcessError as e:
                    print("fork raised", "'spawn'" in str(e), flush=True)
            print("parent", x.get().tolist())
    """, tmp_path)
    assert "spawn [45.0, 4950.0]" in out, out
    assert "fork raised True" in out and "parent [3.0" in out, out


def test_fork_before_the_driver_is_loaded_is_fine(tmp_path):
    out = run("""
        def child():
            x = ga.asarray(np.arange(5, dtype=np.float32))
            assert (x + x).get().tolist() == [0, 2, 4, 6, 8]
        print("child exit", in_child(child), flush=True)
        print("parent", (ga.asarray(np.ones(2, np.float32)) + 1).get().tolist())
    """, tmp_path)
    assert "child exit 0" in out and "parent [2.0, 2.0]" in out, out
