"""`python -m gpuarr bench` end to end on the copy case at tiny size: the table, JSON, markdown
spliced into a marked section, a report from the saved JSON, and the errors it gives; the
latency family's choice of cases and its ratios to the floor, pyopencl.array and CuPy."""

import json

import pytest

from gpuarr import bench


def test_command_writes_and_rereads_its_report(tmp_path, capsys):
    out, doc = tmp_path / "run.json", tmp_path / "doc.md"
    doc.write_text("intro\n<!-- gpuarr bench here -->\nold\n<!-- /gpuarr bench here -->\nend\n")
    argv = ["--size", "tiny", "--only", "elementwise copy", "--libs", "numpy,gpuarr"]
    assert bench.main([*argv, "--json", str(out), "--markdown", str(doc), "--section",
                       "here"]) == 0
    table = capsys.readouterr().out
    assert "copy, 1,000 float32" in table and "gpuarr" in table and "x numpy" in table
    saved = json.loads(out.read_text())
    assert {r["lib"] for r in saved["results"]} == {"numpy", "gpuarr"}
    assert all(r["status"] == "ok" and r["seconds"] > 0 for r in saved["results"])
    text = doc.read_text()
    assert text.startswith("intro\n") and text.endswith("end\n") and "old" not in text
    assert "| copy, 1,000 float32 | numpy |" in text
    assert bench.main(["--from-json", str(out)]) == 0
    assert "copy, 1,000 float32" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["--libs", "numpy,torch"], "unknown libraries ['torch']"),
    (["--set", "n"], "--set takes NAME=VALUE"),
])
def test_command_errors(argv, words, capsys):
    assert bench.main(["--size", "tiny", "--only", "nothing", *argv]) == 2
    assert words in capsys.readouterr().err


def test_missing_section(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("no markers\n")
    with pytest.raises(bench.GpuArrayError, match="has no section 'gpu'"):
        bench.write_markdown(doc, "body", "gpu")


def test_parse_value():
    assert [bench.parse_value(t) for t in ("2^24", "64M", "4K", "4096")] == [
        1 << 24, 64 << 20, 4096, 4096]


def test_latency_family_lists_the_training_step_and_reports_ratios():
    contexts = bench.devices("default")
    insts = bench.instances("quick", bench.backends(contexts, "numpy,gpuarr,pyopencl"),
                            contexts, families=("latency",))
    step = [i for i in insts if i.case.op == "logistic regression SGD step"]
    assert step and {i.result()["family"] for i in step} == {"latency"}
    assert {i.params["samples"] for i in step} == {400}  # not the training family's sizes
    assert any(i.key == "pyopencl:floor" for i in insts)
    training = bench.instances("quick", bench.backends(contexts, "numpy"), contexts,
                               families=("training",))
    assert {i.result()["family"] for i in training} == {"training"}

    def row(lib, seconds, variant="", group="x + y, 16 float32", device="cl0:0"):
        return {"family": "latency", "status": "ok", "lib": lib, "variant": variant,
                "group": group, "device": device, "seconds": seconds,
                "backend": f"{lib} {device}"}
    results = [row("gpuarr", 8.0), row("pyopencl", 16.0), row("pyopencl", 2.0, "floor"),
               row("cupy", 4.0, device="cuda:0"), row("gpuarr", 30.0, group="x.sum()")]
    got = {r["group"]: r for r in bench.latency_ratios(results)}
    assert got["x + y, 16 float32"]["floor"] == 4 and got["x + y, 16 float32"]["cupy"] == 2
    assert got["x + y, 16 float32"]["pyopencl"] == 0.5
    assert got["x.sum()"]["floor"] == 15 and got["x.sum()"]["pyopencl"] is None
