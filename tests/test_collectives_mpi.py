"""Collectives across processes through MPI: one mpiexec launch per rank count runs the whole
battery of tests/mpi_worker.py (process start and kernel builds are slow), and each case
shows up here as a test of its own. The data-parallel example runs with two ranks."""

import os
import shutil
import subprocess
import sys

import mpi_worker
import pytest

pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install '.[mpi]')")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LAUNCH_TIMEOUT = 120  # a cold launch takes a few seconds; a hang must not eat CI


def mpiexec():
    """mpiexec of the MPI that mpi4py uses (pip's mpich puts it beside python)."""
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = beside if os.path.exists(beside) else shutil.which("mpiexec")
    if found is None:
        pytest.skip("no mpiexec beside python or on PATH (pip install mpich)")
    return found


def launch(n, *args, timeout=LAUNCH_TIMEOUT):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    try:
        done = subprocess.run([mpiexec(), "-n", str(n), sys.executable, *args], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else e.stdout or ""
        return None, out + f"\n(killed after {timeout} s)"
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="module", params=[2, 3], ids=["n2", "n3"])
def battery(request):
    """{case: 'ok' or the failure} from one launch of the worker on n ranks."""
    code, out = launch(request.param, os.path.join(HERE, "mpi_worker.py"))
    results = {}
    for line in out.splitlines():
        if line.startswith("CASE "):
            _, name, status = line.split(" ", 2)
            results[name] = status
    return request.param, code, out, results


@pytest.mark.parametrize("name", list(mpi_worker.CASES))
def test_mpi(battery, name):
    n, code, out, results = battery
    if name not in results:
        tail = "\n".join(out.splitlines()[-30:])
        pytest.fail(f"case {name} did not report with {n} ranks (exit {code}; the first "
                    f"unreported case hung or crashed):\n{tail}")
    assert results[name].startswith("ok"), results[name]


def test_battery_finished(battery):
    n, code, out, _ = battery
    assert code == 0 and "\nDONE\n" in out, f"exit {code} with {n} ranks:\n{out[-3000:]}"


def test_rank_that_exits_early_makes_the_others_raise():
    """The last rank's process exits where the others call all_reduce: they raise CommError
    naming it at once (their deadline is the default 300 s; the launch's timeout is 120 s),
    and the job ends instead of hanging. The other faults (an absent rank, a rank that
    raises) are cases of the battery: deadline-*."""
    code, out = launch(3, os.path.join(HERE, "mpi_worker.py"), "exit-early")
    assert code == 0 and "EXIT-EARLY ok" in out, f"exit {code}:\n{out[-3000:]}"


def test_sgd_example_matches_one_rank():
    code, out = launch(2, os.path.join(ROOT, "examples", "sgd_allreduce.py"), "--check")
    assert code == 0, out
    assert "max |w - w_single|" in out and "loss" in out, out
