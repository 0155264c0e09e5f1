import ast
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
from conftest import ROOT, estimate_kw

from nadcore import cli, paths

NADCORE = str(Path(sys.executable).with_name("nadcore"))
PARAMETERS = ('scale = "smoke"\ndevice = "auto"\nseed = 0\nresults_dir = "../results"\ndata_root = "../data"\n'
              'shard = 0\nnum_shards = 1\nprogress = False\nlr = 0.5')
SWEEPING = ("01_fourier", "05_underspecification", "06_antialias")


def write_chapter(folder, name, code):
    """A chapter notebook: the parameters cell, then `code`."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell(PARAMETERS)
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(code)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, folder / f"{name}.ipynb")


@pytest.fixture
def tiny_book(tmp_path):
    """A book folder with one fast chapter that declares the standard parameters and a few more."""
    folder = tmp_path / "book"
    folder.mkdir()
    write_chapter(folder, "01_tiny", "print(scale, device, seed * 10, shard, num_shards)")
    return folder


@pytest.fixture
def fake_plan(monkeypatch):
    """A stand-in `nadcore.plan` recording each `chapter_plan` call; its summary is 'PLAN SUMMARY', its cost
    1 + seed hours."""
    calls = []

    def chapter_plan(chapter, scale, *, seed=0, results_dir="results", device="cpu", num_seeds=1, overrides=None,
                     bundle_dir=None):
        if chapter == "01_unplanned":
            raise ValueError("chapter must be one of 01_fourier, ...; got '01_unplanned'")
        calls.append(dict(chapter=chapter, scale=scale, seed=seed, results_dir=results_dir, device=device,
                          num_seeds=num_seeds, overrides=overrides))
        return types.SimpleNamespace(summary=lambda: "PLAN SUMMARY", total_s=3600.0 * (1 + seed),
                                     device=device)

    module = types.ModuleType("nadcore.plan")
    module.chapter_plan = chapter_plan
    monkeypatch.setitem(sys.modules, "nadcore.plan", module)
    return calls


def run_cli(*args):
    return subprocess.run([NADCORE, *args], capture_output=True, text=True)


def notebooks(folder):
    return sorted(p.name for p in Path(folder).rglob("*.ipynb"))


def error_lines(err):
    return [line for line in err.splitlines() if line.startswith("nadcore: error:")]


def test_help_lists_every_subcommand():
    out = run_cli("--help")
    assert out.returncode == 0
    for command in ("run", "plan", "chapters", "nads"):
        assert command in out.stdout


@pytest.mark.slow
def test_run_injects_parameters_into_the_executed_notebook(tiny_book, tmp_path):
    out = run_cli("run", "01_tiny", "--scale", "smoke", "--device", "cpu", "-p", "seed", "1",
                  "--book-dir", str(tiny_book), "--out", str(tmp_path / "runs"), "--no-progress")
    assert out.returncode == 0, out.stderr
    assert notebooks(tmp_path / "runs") == ["01_tiny-smoke.ipynb"]
    executed = nbformat.read(tmp_path / "runs" / "01_tiny-smoke.ipynb", as_version=4)
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert "seed = 1" in injected[0].source
    assert executed.cells[-1].outputs[0]["text"].strip() == "smoke cpu 10 0 1"


def test_sharded_run_prints_the_plan_and_names_its_notebook_by_shard(tiny_book, tmp_path, fake_plan, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    stale = runs / "01_tiny-smoke-shard1of2-FAILED.ipynb"
    stale.write_text('{"metadata": {"papermill": {}}}')   # a failed run's notebook
    assert cli.main(["run", "01_tiny", "-p", "shard", "1", "-p", "num_shards", "2", "--device", "cpu",
                     "--book-dir", str(tiny_book), "--out", str(runs), "--no-progress"]) == 0
    assert "PLAN SUMMARY" in capsys.readouterr().err
    assert notebooks(runs) == ["01_tiny-smoke-shard1of2.ipynb"]          # the stale FAILED one is gone
    executed = nbformat.read(runs / "01_tiny-smoke-shard1of2.ipynb", as_version=4)
    assert executed.cells[-1].outputs[0]["text"].strip() == "smoke cpu 0 1 2"


def test_a_run_planned_past_the_bound_asks_for_yes(tiny_book, tmp_path, fake_plan, monkeypatch, capsys):
    """Issue 58's leftover: `run` started a plan of 705,174 h (-p num_seeds 1000 at the paper's scale) silently."""
    monkeypatch.setattr(cli, "RUN_HOURS", 1)
    args = ["run", "01_tiny", "-p", "seed", "1", "--device", "cpu", "--book-dir", str(tiny_book), "--out",
            str(tmp_path / "runs"), "--no-progress"]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == ("nadcore: error: the plan of 01_tiny must take at most 1 h: it takes ~2.0 h on "
                                    "cpu (see above); a smaller scale, num_seeds or overrides, or --yes to start it "
                                    "anyway") and not (tmp_path / "runs").exists()
    assert cli.main([*args, "--yes"]) == 0 and len(notebooks(tmp_path / "runs")) == 1


def test_a_shard_runs_without_the_cells_that_make_the_page_only(tiny_book, tmp_path, fake_plan):
    write_chapter(tiny_book, "02_paged", "print(shard, num_shards)")
    path = tiny_book / "02_paged.ipynb"
    nb = nbformat.read(path, as_version=4)
    page = nbformat.v4.new_code_cell("raise RuntimeError('a page-only cell ran')")
    page.metadata["tags"] = [cli.PAGE_ONLY]
    nb.cells.insert(1, page)
    nbformat.write(nb, path)
    runs = tmp_path / "runs"
    args = ["--device", "cpu", "--book-dir", str(tiny_book), "--out", str(runs), "--no-progress"]
    assert cli.main(["run", "02_paged", "-p", "shard", "0", "-p", "num_shards", "2", *args]) == 0
    executed = nbformat.read(runs / "02_paged-smoke-shard0of2.ipynb", as_version=4)
    assert "page-only" not in str(executed.cells) and executed.cells[-1].outputs[0]["text"].strip() == "0 2"
    assert cli.main(["run", "02_paged", *args]) == 1             # the whole chapter (a collector) runs them


def test_failed_run_keeps_its_notebook_as_failed_and_exits_1(tiny_book, tmp_path, capsys):
    write_chapter(tiny_book, "02_fails", "raise ValueError('boom\\nsecond line')")
    runs = tmp_path / "runs"
    assert cli.main(["run", "02_fails", "--device", "cpu", "--book-dir", str(tiny_book), "--out", str(runs),
                     "--no-progress"]) == 1
    [line] = error_lines(capsys.readouterr().err)
    failed = runs / "02_fails-smoke-FAILED.ipynb"
    assert "02_fails failed: ValueError: boom" in line and str(failed) in line
    assert notebooks(runs) == [failed.name]
    assert "boom" in str(nbformat.read(failed, as_version=4).cells[-1].outputs)


def test_chapter_accepts_its_name_without_number(tiny_book):
    assert cli.find_chapter("tiny", tiny_book).name == "01_tiny.ipynb"


@pytest.mark.parametrize("command", ["run", "plan"])
@pytest.mark.parametrize("args, message", [
    (["nope"], "accepted: 01_tiny"),
    (["01_tiny", "--scale", "huge"], "scale must be one of smoke, medium, paper; got 'huge'"),
    (["01_tiny", "-p", "scale", "huge"], "scale must be one of smoke, medium, paper; got 'huge'"),
    (["01_tiny", "--scale", "paper", "-p", "scale", "medium"], "scale must be given once"),
    (["01_tiny", "--device", "tpu"], 'device must be "auto", "cpu", "cuda"'),
    (["01_tiny", "-p", "device", "tpu"], 'device must be "auto", "cpu", "cuda"'),
    (["01_tiny", "-p", "seed", "abc"], "seed must be an integer in [0, 2^63) written in decimal; got 'abc'"),
    (["01_tiny", "-p", "seed", "-1"], "seed must be an integer in [0, 2^63) written in decimal; got -1"),
    (["01_tiny", "-p", "seed", "1.5"], "seed must be an integer in [0, 2^63) written in decimal; got '1.5'"),
    (["01_tiny", "-p", "num_shards", "0"], "num_shards must be an integer >= 1; got 0"),
    (["01_tiny", "-p", "shard", "2", "-p", "num_shards", "2"],
     "shard must be an integer in [0, 2) (num_shards is 2); got 2"),
    (["01_tiny", "-p", "shard", "1"], "shard must be an integer in [0, 1) (num_shards is 1); got 1"),
    (["01_tiny", "-p", "progress", "maybe"], "progress must be true or false; got 'maybe'"),
    (["01_tiny", "-p", "lr", "fast"], "lr must be a number; got 'fast'"),
    (["01_tiny", "-p", "epochs", "3"],
     "parameter must be one that 01_tiny declares (scale, device, seed, results_dir, data_root, shard, "
     "num_shards, progress, lr); got 'epochs'"),
])
def test_bad_input_is_one_line_exit_2_and_writes_no_notebook(tiny_book, tmp_path, command, args, message, capsys):
    out = ["--out", str(tmp_path / "runs")] if command == "run" else []
    assert cli.main([command, *args, "--book-dir", str(tiny_book), *out]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [f"nadcore: error: {err.split('error: ', 1)[1]}"] and message in err
    assert notebooks(tmp_path) == ["01_tiny.ipynb"]


@pytest.mark.parametrize("args", [["--device", "cuda"], ["-p", "device", "cuda"]])
def test_unavailable_device_is_refused(tiny_book, tmp_path, args, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert cli.main(["run", "01_tiny", *args, "--book-dir", str(tiny_book), "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "device must be" in err and "no CUDA GPU" in err and "got 'cuda'" in err
    assert notebooks(tmp_path) == ["01_tiny.ipynb"]


@pytest.mark.parametrize("key", ["--out", "results_dir"])
def test_unwritable_paths_are_refused_before_running(tiny_book, tmp_path, key, capsys):
    (tmp_path / "a_file").write_text("")
    bad = str(tmp_path / "a_file" / "runs")
    args = ["--out", bad] if key == "--out" else ["--out", str(tmp_path / "runs"), "-p", "results_dir", bad]
    assert cli.main(["run", "01_tiny", *args, "--book-dir", str(tiny_book)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{key} must be a path we can write to" in err and "is not a folder" in err
    assert notebooks(tmp_path) == ["01_tiny.ipynb"]


def test_data_root_need_not_be_writable_without_download(tiny_book, tmp_path, fake_plan):
    if os.geteuid() == 0:
        pytest.skip("root may write anywhere")
    (tmp_path / "data").mkdir(mode=0o555)
    assert cli.main(["plan", "01_tiny", "-p", "data_root", str(tmp_path / "data"), "--book-dir", str(tiny_book)]) == 0


def test_plan_prints_the_summary_of_the_checked_parameters(tiny_book, fake_plan, capsys):
    assert cli.main(["plan", "tiny", "-p", "scale", "paper", "-p", "seed", "3", "-p", "results_dir", "out/res",
                     "--device", "cpu", "--book-dir", str(tiny_book)]) == 0
    assert capsys.readouterr().out.strip() == "PLAN SUMMARY"
    assert fake_plan == [dict(chapter="01_tiny", scale="paper", seed=3, device="cpu", num_seeds=1, overrides=None,
                              results_dir=os.path.abspath(tiny_book / "out" / "res"))]


def test_plan_refused_by_the_library_is_one_line(tiny_book, fake_plan, capsys):
    write_chapter(tiny_book, "01_unplanned", "")
    assert cli.main(["plan", "01_unplanned", "--book-dir", str(tiny_book)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no plan for 01_unplanned: chapter must be one of" in err


def test_seeds_per_cell_are_checked_and_planned(capsys):
    assert cli.main(["plan", "01_fourier", "-p", "num_seeds", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "num_seeds must be an integer in [1, 1000]; got 0" in err
    assert cli.main(["plan", "01_fourier", "-p", "num_seeds", "1000000000"]) == 2     # issue 58: it grew past 1 GB
    assert "num_seeds must be an integer in [1, 1000]; got 1000000000" in capsys.readouterr().err
    assert cli.main(["plan", "01_fourier", "-p", "num_seeds", "2"]) == 0
    assert "fig1 lenet seed 2" in capsys.readouterr().out


def test_overrides_are_planned():
    """`-p overrides` changes the presets of the run, and the plan says what that run computes."""
    args = cli.parser().parse_args(["plan", "01_fourier", "--device", "cpu", "-p", "overrides",
                                    "{fourier: {n: 200, grid: {step: 8}}}", "--book-dir", str(ROOT / "book")])
    notebook, folder, params, values = cli.validate(args)
    assert params["overrides"] == {"fourier": {"n": 200, "grid": {"step": 8}}}
    plan = cli.chapter_plan(notebook.stem, values, folder).summary()
    assert "fig1 lenet" in plan and "n=200 sigma=0.75 epochs=4 grid 3x3" in plan


@pytest.mark.parametrize("path", sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.stem)
def test_papermill_sees_every_parameter_of_the_book(path):
    nb = nbformat.read(path, as_version=4)
    [cell] = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assigned = [ast.unparse(t) for node in ast.parse(cell.source).body for t in node.targets]
    assert list(cli.declared(path)) == assigned, "one `name = value  # comment` per line, no '=' in comments"
    if path.stem in SWEEPING:
        assert {"shard", "num_shards"} <= set(assigned)


def test_the_book_accepts_shards_from_the_command_line():
    args = cli.parser().parse_args(["run", "01_fourier", "--scale", "smoke", "--device", "cpu",
                                    "-p", "shard", "0", "-p", "num_shards", "2", "--book-dir", str(ROOT / "book")])
    notebook, folder, params, values = cli.validate(args)
    assert params == {"shard": 0, "num_shards": 2, "scale": "smoke", "device": "cpu"}
    assert cli.output_stem(notebook.stem, values) == "01_fourier-smoke-shard0of2"


def test_parameter_values_are_parsed_as_yaml():
    assert cli.parse_value("3") == 3 and cli.parse_value("0.5") == 0.5
    assert cli.parse_value("[1, 2]") == [1, 2] and cli.parse_value("cuda") == "cuda"
    assert cli.typed("results_dir", "2024", "../results") == "2024" and cli.typed("lr", "1", 0.5) == 1.0


@pytest.mark.slow
def test_nads_writes_eigenvalues_and_nads_with_settings(tmp_path):
    import numpy as np

    from nadcore import store

    out = tmp_path / "new" / "logreg.npz"
    done = run_cli("nads", "--arch", "logreg", "--networks", "3", "--method", "autograd", "--seed", "2",
                   "--device", "cpu", "--out", str(out))
    assert done.returncode == 0, done.stderr
    result = store.load(out)
    assert result["nads"].shape == (1024, 1024) and result["eigenvalues"].shape == (1024,)
    assert np.all(np.diff(result["eigenvalues"]) <= 1e-12)
    np.testing.assert_allclose(np.linalg.norm(result["nads"], axis=1), 1, atol=1e-4)
    assert result.settings["arch"] == "logreg" and result.settings["num_networks"] == 3
    assert result.settings["method"] == "autograd" and result.settings["seed"] == 2


@pytest.mark.parametrize("args, accepted", [
    (["--arch", "foo", "--networks", "4"], "lenet"),
    (["--arch", "lenet", "--networks", "1"], "[2, 10000000]"),
    (["--arch", "lenet", "--networks", "4", "--method", "magic"], "secant"),
])
def test_nads_bad_input_is_one_line(tmp_path, args, accepted, capsys):
    assert cli.main(["nads", *args, "--out", str(tmp_path / "x.npz")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and accepted in err


@pytest.mark.parametrize("out, why", [
    ("x.txt", "a FILE.npz path"),
    ("folder.npz", "a FILE.npz path"),
    ("a_file/x.npz", "a path we can write to"),
])
def test_nads_bad_out_fails_before_estimating(tmp_path, monkeypatch, out, why, capsys):
    from nadcore import nads

    (tmp_path / "folder.npz").mkdir()
    (tmp_path / "a_file").write_text("")
    calls = []
    monkeypatch.setattr(nads, "estimate", lambda *a, **kw: calls.append(a))
    assert cli.main(["nads", "--arch", "lenet", "--networks", "4", "--out", str(tmp_path / out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"--out must be {why}" in err and calls == []


# ----------------------------------------------------------------------------- checks before work (issue: promises)

@pytest.mark.parametrize("text", ["010", "12:30", "1e3", "0x10", "1.0", "+3"])
def test_integer_parameters_must_be_written_in_decimal(text):
    with pytest.raises(cli.UsageError, match="^seed must be an integer in \\[0, 2\\^63\\) written in decimal"):
        cli.typed("seed", text, 0)
    assert cli.typed("seed", "10", 0) == 10 and cli.typed("shard", "0", 0) == 0


@pytest.mark.parametrize("key, value, accepted", [
    ("seed", "99999999999999999999999", "seed must be an integer in [0, 2^63)"),
    ("results_dir", "", "results_dir must be a non-empty path"),
    ("overrides", "{fourier: {samples: 5}}", "overrides must name fields that fourier has"),
    ("overrides", "{fourier: {n: many}}", "overrides must give fourier.n a value of the type of 3000; got 'many'"),
])
def test_run_refuses_values_that_would_fail_after_work(key, value, accepted, capsys):
    argv = ["plan", "01_fourier", "--device", "cpu", "-p", key, value, "--book-dir", str(ROOT / "book")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and accepted in err


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs a Linux /sys")
def test_writability_is_tried_not_asked(capsys):
    """As root, os.access says yes to /sys and /proc: the check creates a file there instead."""
    assert not cli.can_create_in("/proc") and not cli.can_create_in("/sys/kernel")
    assert cli.main(["run", "01_fourier", "--device", "cpu", "--out", "/sys/kernel/x",
                     "--book-dir", str(ROOT / "book")]) == 2
    assert "--out must be a path we can write to" in capsys.readouterr().err


@pytest.mark.parametrize("args, accepted", [
    (["--seed", "-1", "--out", "OUT"], "--seed must be an integer in [0, 2^63)"),
    (["--out", "/proc/a.npz"], "--out must be a path we can write to"),
    ([], "--out must be a FILE.npz path, or --results-dir"),
    (["--networks", "1000000000", "--out", "OUT"], "--networks must be an integer in [2, 10000000]"),
    (["--networks", "5000000", "--out", "OUT"], "--networks must be what finishes within 1 h"),
    (["--arch", "vgg11", "--networks", "10000", "--out", "OUT"], "--networks must be what finishes within 1 h"),
    # issue 41 item 6: no cost was listed for these pairs, so any number of networks passed
    (["--arch", "resnet18", "--method", "hessian", "--networks", "1000000", "--out", "OUT"],
     "--networks must be what finishes within 1 h here (this one: over ~53 h"),
    (["--arch", "vgg11_bn", "--networks", "1000000", "--out", "OUT"],
     "--networks must be at most 20000 for vgg11_bn (secant), whose cost is not measured"),
])
def test_nads_refuses_before_any_network_is_built(tmp_path, monkeypatch, args, accepted, capsys):
    from nadcore import nads

    calls = []
    monkeypatch.setattr(nads, "estimate", lambda *a, **kw: calls.append(a))
    args = [str(tmp_path / "x.npz") if a == "OUT" else a for a in args]
    base = ["nads"] + ([] if "--arch" in args else ["--arch", "lenet"]) + ([] if "--networks" in args else
                                                                          ["--networks", "4"])
    assert cli.main(base + args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and accepted in err and calls == []


def test_nads_does_not_replace_a_committed_bundle_file_without_force(monkeypatch, capsys):
    from nadcore import nads

    committed = next((ROOT / "bundle" / "nads").glob("logreg_*.npz"))
    monkeypatch.setattr(nads, "estimate", lambda *a, **kw: pytest.fail("estimated"))
    assert cli.main(["nads", "--arch", "logreg", "--networks", "4", "--out", str(committed)]) == 2
    assert "--force to replace it" in capsys.readouterr().err


def bundle_forms(tmp_path):
    """Every way of naming a folder inside the committed bundle: absolute, relative with `..`, a new
    subfolder, and symlinks (to the bundle, and to a folder inside it)."""
    (tmp_path / "to_bundle").symlink_to(ROOT / "bundle")
    (tmp_path / "to_nads").symlink_to(ROOT / "bundle" / "nads")
    return [str(ROOT / "bundle"), str(ROOT / "book" / ".." / "bundle" / "nads"), str(ROOT / "bundle" / "new"),
            str(tmp_path / "to_bundle"), str(tmp_path / "to_nads" / "sub"), os.path.relpath(ROOT / "bundle")]


def test_nads_results_dir_never_writes_into_the_bundle_without_force(tmp_path, monkeypatch, capsys):
    """Issue 41 item 1: `--results-dir bundle` replaced the committed NADs; every form of it is refused."""
    from nadcore import nads

    calls = []
    monkeypatch.setattr(nads, "estimate", lambda *a, **kw: calls.append(kw["results_dir"]))
    for folder in bundle_forms(tmp_path):
        assert cli.main(["nads", "--arch", "logreg", "--networks", "4", "--results-dir", folder]) == 2, folder
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "--results-dir must be a path outside the committed bundle" in err
        assert "--force" in err and calls == []
    assert cli.main(["nads", "--arch", "logreg", "--networks", "4", "--results-dir", str(ROOT / "bundle"),
                     "--force"]) == 0 and calls == [str(ROOT / "bundle")]


def test_the_bundle_is_known_by_its_marker_through_every_symlink_and_any_environment(tmp_path, monkeypatch, capsys):
    """Issue 58 item 3: a results folder whose `nads/` is a symlink into the bundle, and `$NADBOOK_BUNDLE` naming
    another folder while --results-dir is the checkout's bundle: refused in one line, nothing written there; the
    store itself refuses any write into a folder under `.nadbook-bundle` outside `store.writing_bundle()`."""
    from nadcore import store

    assert (ROOT / "bundle" / paths.BUNDLE_MARKER).is_file() and paths.bundle_of(ROOT / "bundle" / "x" / "y")
    before = sorted(p.name for p in (ROOT / "bundle" / "nads").iterdir())
    out = tmp_path / "out"
    out.mkdir()
    (out / "nads").symlink_to(ROOT / "bundle" / "nads")
    (out / "nad_chunks").symlink_to(ROOT / "bundle" / "partial")
    assert cli.main(["nads", "--arch", "logreg", "--networks", "4", "--results-dir", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "lies in the results bundle" in err and str(ROOT / "bundle") in err
    monkeypatch.setenv("NADBOOK_BUNDLE", str(tmp_path / "elsewhere"))
    assert cli.main(["nads", "--arch", "logreg", "--networks", "4", "--results-dir", str(ROOT / "bundle")]) == 2
    assert "--results-dir must be a path outside the committed bundle" in capsys.readouterr().err
    assert sorted(p.name for p in (ROOT / "bundle" / "nads").iterdir()) == before
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / paths.BUNDLE_MARKER).touch()
    (tmp_path / "link").symlink_to(mine)
    with pytest.raises(ValueError, match="lies in the results bundle"):
        store.save(tmp_path / "link" / "a" / "r.npz", {"x": np.zeros(2)}, {"a": 1})
    with store.writing_bundle():
        store.save(tmp_path / "link" / "a" / "r.npz", {"x": np.zeros(2)}, {"a": 1})
    assert (mine / "a" / "r.npz").is_file()


def test_nothing_is_replaced_or_lost_without_force(tmp_path, capsys):
    """Issue 58 item 11: `nads --out` replaces no existing file without --force; `store.migrate` to its own path
    is refused before it writes (it used to write the file, then delete it)."""
    from nadcore import store

    precious = tmp_path / "precious.npz"
    precious.write_bytes(b"mine")
    assert cli.main(["nads", "--arch", "logreg", "--networks", "4", "--out", str(precious)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--force to replace it" in err and precious.read_bytes() == b"mine"
    path = tmp_path / "r.npz"
    store.save(path, {"x": np.zeros(2)}, {"a": 1})
    for same in (path, tmp_path / "." / "r.npz"):
        with pytest.raises(ValueError, match="new_path must differ from path"):
            store.migrate(path, same, {"a": 2}, "a test")
    assert store.load(path, {"a": 1}).arrays["x"].shape == (2,)


@pytest.mark.parametrize("command", ["run", "submit"])
def test_chapter_results_dir_and_out_never_write_into_the_bundle_without_force(tiny_book, tmp_path, command,
                                                                                capsys):
    """Issue 41 item 1: `nadcore run/submit -p results_dir` (relative to the book folder) and `--out`."""
    extra = ["--shards", "2", "--dry-run"] if command == "submit" else []
    forms = bundle_forms(tmp_path)        # its last: relative to the current folder, as --out reads it
    inside = {"results_dir": forms[:-1] + [os.path.relpath(ROOT / "bundle", tiny_book)], "--out": forms}
    for key in ("results_dir", "--out"):
        for folder in inside[key]:
            given = ["-p", key, folder, "--out", str(tmp_path / "runs")] if key == "results_dir" else ["--out", folder]
            assert cli.main([command, "01_tiny", *given, *extra, "--book-dir", str(tiny_book)]) == 2, folder
            err = capsys.readouterr().err.strip()
            assert len(err.splitlines()) == 1 and f"{key} must be a path outside the committed bundle" in err
    assert notebooks(tmp_path) == ["01_tiny.ipynb"]
    if command == "submit":           # --force is passed on to the runs the scripts start
        assert cli.main([command, "01_tiny", "-p", "results_dir", str(ROOT / "bundle"), "--force", *extra,
                         "--book-dir", str(tiny_book)]) == 0
        assert capsys.readouterr().out.count(" --force") == 2


def test_plan_reads_a_results_dir_inside_the_bundle(tiny_book, fake_plan):
    """`plan` only reads: a results_dir inside the bundle is accepted."""
    assert cli.main(["plan", "01_tiny", "-p", "results_dir", str(ROOT / "bundle"), "--book-dir", str(tiny_book)]) == 0

@pytest.mark.slow   # over 3 s on a quiet 2-core CPU (issue 39): make test, not make check
def test_nads_results_dir_resumes_and_stores_where_the_chapters_look(tmp_path):
    from nadcore import nads
    from nadcore.experiments import ch3_nads

    argv = ["nads", "--arch", "logreg", "--networks", "130", "--device", "cpu", "--results-dir", str(tmp_path),
            "--no-progress"]
    assert cli.main(argv) == 0
    chunks = sorted((tmp_path / "nad_chunks").glob("*.npz"))
    assert len(chunks) == 2                                    # 125 + 5 networks, stored as they finished
    settings = nads.nad_settings("logreg", 130)
    assert ch3_nads.find_stored("logreg", settings, tmp_path) == nads.result_path("logreg", settings, tmp_path)
    chunks[1].unlink()                                        # a killed run: one chunk lost
    first = chunks[0].stat().st_mtime_ns
    assert cli.main(argv) == 0
    assert chunks[0].stat().st_mtime_ns == first and chunks[1].exists()   # the finished chunk was not recomputed


def test_ctrl_c_ends_with_one_line(monkeypatch, capsys, tmp_path):
    from nadcore import nads

    def interrupted(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(nads, "estimate", interrupted)
    assert cli.main(["nads", "--arch", "logreg", "--networks", "4", "--results-dir", str(tmp_path)]) == 130
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "interrupted" in err


def test_bundle_is_the_bundles_own_command_under_nadcore(tmp_path, monkeypatch, capsys):
    """`nadcore bundle ...` runs `nadcore.bundle.main` (`python -m nadcore.bundle ...`): the same status
    lines, one-line errors, its exit codes, Ctrl-C keeping what is stored."""
    from nadcore import bundle

    (tmp_path / paths.BUNDLE_MARKER).touch()
    assert cli.main(["bundle", "status", "fig2", "cifar", "--bundle-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [bundle.status("fig2", tmp_path), bundle.status("cifar", tmp_path)]
    assert cli.main(["bundle", "fig9"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("nadcore bundle: error: item must be one of all, status, fig1")

    def interrupted(item, **kw):
        assert (item, kw) == ("fig2", {"bundle_dir": tmp_path})
        raise KeyboardInterrupt

    monkeypatch.setattr(bundle, "compute", interrupted)
    assert cli.main(["bundle", "fig2", f"--bundle-dir={tmp_path}"]) == 130
    out, err = capsys.readouterr()
    assert out == "bundle: fig2\n" and err == "nadcore bundle: interrupted; finished cells and chunks are kept\n"
    with pytest.raises(SystemExit) as done:
        cli.main(["bundle", "--help"])
    assert done.value.code == 0 and "status | all | ITEM" in capsys.readouterr().out


def test_importing_the_library_leaves_the_heavy_optional_modules_for_later():
    """`import nadcore.bundle` (every chapter's first cell, every CLI call) does not import torchvision,
    torch._dynamo or scipy.stats (seconds each): the functions that need them import them."""
    code = ("import sys, nadcore.bundle, nadcore.plan; "
            "print(sorted(m for m in ('torchvision', 'torch._dynamo', 'scipy.stats') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# ------------------------------------------------------------------ OSErrors: one line naming the path (issue 41)

def _no_space(real, spare):
    """`store.atomic_write` failing as on a full disk (an OSError without a file name), except for
    paths `spare(path)` accepts."""
    import errno

    def write(path, what):
        if spare(Path(path)):
            return real(path, what)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return write


@pytest.mark.parametrize("when", ["saving", "estimating"])
def test_a_full_disk_is_one_line_naming_the_path(tmp_path, monkeypatch, when, capsys):
    """Issue 41 item 3: a full disk while saving the NADs ended in a 47-line traceback."""
    from nadcore import nads, store

    spare = (lambda p: p.parent.name == "nad_chunks") if when == "saving" else (lambda p: False)
    monkeypatch.setattr(store, "atomic_write", _no_space(store.atomic_write, spare))
    results = tmp_path / "r"
    argv = ["nads", "--arch", "logreg", "--networks", "4", "--device", "cpu", "--results-dir", str(results),
            "--no-progress"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "No space left on device" in err, err
    assert f"finished chunks are kept in {results / 'nad_chunks'}" in err
    if when == "saving":
        assert str(nads.result_path("logreg", nads.nad_settings("logreg", 4), results)) in err


LONG = ["a" * 300, "é" * 200]


def _refused_paths(cases, tiny_book, capsys):
    """Each `(key, argv)` of `cases` exits 2 with one line saying `key` must be a path we can write to
    (`--book-dir` added to the chapter commands); returns the lines."""
    lines = []
    for key, argv in cases:
        argv = argv + (["--book-dir", str(tiny_book)] if argv[0] != "nads" else [])
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"{key} must be a path we can write to" in err, err
        lines.append(err)
    return lines


@pytest.mark.parametrize("name", LONG, ids=["ascii", "utf8"])
def test_a_path_part_over_255_bytes_is_one_line_naming_the_parameter(tiny_book, tmp_path, name, monkeypatch, capsys):
    """Issue 41 item 4: `Path.exists()` raised `OSError: [Errno 36]` from `check_folder`."""
    from nadcore import nads

    monkeypatch.setattr(nads, "estimate", lambda *a, **kw: pytest.fail("estimated"))
    long = str(tmp_path / name)
    cases = [("--results-dir", ["nads", "--arch", "logreg", "--networks", "4", "--results-dir", long]),
             ("--out", ["nads", "--arch", "logreg", "--networks", "4", "--out", long + ".npz"]),
             ("--out", ["nads", "--arch", "logreg", "--networks", "4", "--out", long + "/x.npz"]),
             ("results_dir", ["run", "01_tiny", "-p", "results_dir", long, "--out", str(tmp_path / "runs")]),
             ("results_dir", ["plan", "01_tiny", "-p", "results_dir", long]),
             ("data_root", ["plan", "01_tiny", "-p", "data_root", long + "/data"]),
             ("--out", ["run", "01_tiny", "--out", long])]
    for err in _refused_paths(cases, tiny_book, capsys):
        assert "File name too long" in err
    assert notebooks(tmp_path) == ["01_tiny.ipynb"]


def test_a_symlink_loop_is_refused_as_a_folder(tiny_book, tmp_path, monkeypatch, capsys):
    """Issue 41 item 5: a results folder that is a symlink loop passed (the try was made on its parent)."""
    from nadcore import nads

    monkeypatch.setattr(nads, "estimate", lambda *a, **kw: pytest.fail("estimated"))
    (tmp_path / "loop").symlink_to("loop")
    loop = str(tmp_path / "loop")
    cases = [("--results-dir", ["nads", "--arch", "logreg", "--networks", "4", "--results-dir", loop]),
             ("--results-dir", ["nads", "--arch", "logreg", "--networks", "4", "--results-dir", loop + "/r"]),
             ("--out", ["nads", "--arch", "logreg", "--networks", "4", "--out", loop + "/x.npz"]),
             ("results_dir", ["plan", "01_tiny", "-p", "results_dir", loop]),
             ("results_dir", ["run", "01_tiny", "-p", "results_dir", loop, "--out", str(tmp_path / "runs")]),
             ("--out", ["run", "01_tiny", "--out", loop])]
    for err in _refused_paths(cases, tiny_book, capsys):
        assert "symbolic links" in err
    assert notebooks(tmp_path) == ["01_tiny.ipynb"]


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs a Linux /sys")
def test_plan_accepts_a_read_only_results_folder(tiny_book, tmp_path, fake_plan, capsys):
    """Issue 41 item 13: plan only reads, so a results folder it cannot write (or create) is fine; run
    refuses it before any kernel starts."""
    assert cli.main(["plan", "01_tiny", "-p", "results_dir", "/sys/kernel", "--book-dir", str(tiny_book)]) == 0
    assert [c["results_dir"] for c in fake_plan] == ["/sys/kernel"]
    assert cli.main(["run", "01_tiny", "-p", "results_dir", "/sys/kernel", "--out", str(tmp_path / "runs"),
                     "--book-dir", str(tiny_book)]) == 2
    assert "results_dir must be a path we can write to (/sys/kernel is not writable)" in capsys.readouterr().err


def test_an_os_error_anywhere_is_one_line_naming_the_path(tiny_book, monkeypatch, capsys):
    """Permissions (and any OSError the checks cannot foresee): one line naming the path, exit 2."""
    def chapter_plan(*a, **kw):
        raise PermissionError(13, "Permission denied", "/results/pooling")

    module = types.ModuleType("nadcore.plan")
    module.chapter_plan = chapter_plan
    monkeypatch.setitem(sys.modules, "nadcore.plan", module)
    assert cli.main(["plan", "01_tiny", "--book-dir", str(tiny_book)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == ["nadcore: error: Permission denied: /results/pooling"]


def sbatch_arguments(line):
    """The arguments sbatch reads from one `#SBATCH` line: a port of `_get_argument` in Slurm's
    src/sbatch/opt.c (whitespace splits; single or double quotes group, anywhere in an argument;
    a backslash escapes the next character, inside quotes too; an unescaped # outside quotes ends
    the line)."""
    assert line.startswith("#SBATCH")
    args, i, text = [], 0, line[len("#SBATCH"):]
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return args
        arg, quote, escape = "", None, False
        while i < len(text) and (quote or not text[i].isspace()):
            c, i = text[i], i + 1
            if escape:
                escape = False
            elif c == "\\":
                escape = True
                continue
            elif quote:
                if c == quote:
                    quote = None
                    continue
            elif c in "\"'":
                quote = c
                continue
            elif c == "#":
                assert not arg, f"a comment inside an argument: {line}"
                return args
            arg += c
        assert quote is None, f"unmatched quote in {line}"
        args.append(arg)


def test_submit_quotes_the_sbatch_lines(tiny_book, tmp_path, capsys):
    """Issue 41 item 11: `#SBATCH --output=` held an unquoted path (a space split it); a % in it is
    one of sbatch's filename patterns (%% is a literal %)."""
    out = tmp_path / 'my runs #1 "q" \\ 100%'
    assert cli.main(["submit", "01_tiny", "--shards", "2", "--out", str(out), "--dry-run", "--book-dir",
                     str(tiny_book), "--sbatch", "--partition=gpu '--comment=two words'"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("#SBATCH")]
    parsed = [a for line in lines for a in sbatch_arguments(line)]
    folder = str(out.resolve()).replace("%", "%%")
    assert f"--output={folder}/slurm-%A_%a.out" in parsed and f"--output={folder}/slurm-%j.out" in parsed
    assert parsed.count("--comment=two words") == 2 and parsed.count("--partition=gpu") == 2


def test_submit_writes_no_control_character_into_a_script_and_plans_for_the_clusters_device(tiny_book, tmp_path,
                                                                                                capsys):
    """Issue 58 items 4, 6 and 10: a newline in --out, --sbatch or a -p value split an #SBATCH line (the script then
    ran what followed); an unclosed quote in --sbatch ended in shlex's traceback; `--device cuda` was refused on a
    login node without a GPU, which `plan` accepts."""
    base = ["submit", "01_tiny", "--shards", "2", "--dry-run", "--book-dir", str(tiny_book)]
    evil = tmp_path / "ev\ntouch PWNED #"
    evil.mkdir()
    (tmp_path / "okname").symlink_to(evil)
    for given, key in ((["--out", str(tmp_path / "sl\nid>PWNED #")], "--out"),
                       (["--out", str(tmp_path / "o"), "--sbatch=--comment=a\nid"], "--sbatch"),
                       (["--out", str(tmp_path / "o"), "-p", "results_dir", "r\rid"], "results_dir"),
                       (["--out", str(tmp_path / "o"), '--sbatch=--comment="x'], "--sbatch"),
                       # the third pass: C1 controls (U+0085 is a newline to some readers), a real path's newline
                       (["--out", str(tmp_path / "o"), "-p", "results_dir", "r\u0085x"], "results_dir"),
                       (["--out", str(tmp_path / "o"), "--sbatch=--comment=a\u2028b"], "--sbatch"),
                       (["--out", str(tmp_path / "okname")], "--out"),
                       (["--out", str(tmp_path / "o"), "--shards", "100000000"], "--shards"),
                       # the fourth pass: a file name's bytes that are not UTF-8, a format character (a bidi
                       # override), --sbatch options that move the logs or undo the array (long, short, abbreviated)
                       (["--out", str(tmp_path / "o"), "-p", "results_dir", str(tmp_path / "r\udc85s")], "results_dir"),
                       (["--out", str(tmp_path / "o"), "-p", "results_dir", "r\u202ex"], "results_dir"),
                       (["--out", str(tmp_path / "o"), "--sbatch=--partition=gpu --output=/x/log.out"], "--sbatch"),
                       (["--out", str(tmp_path / "o"), "--sbatch=-e /x/err"], "--sbatch"),
                       (["--out", str(tmp_path / "o"), "--sbatch=--chd=/x"], "--sbatch"),
                       (["--out", str(tmp_path / "o"), "--sbatch=--array=0-99"], "--sbatch"),
                       # the fifth pass: short options bundled after flags (sbatch reads -vo/x as -v -o /x)
                       (["--out", str(tmp_path / "o"), "--sbatch=-vo/tmp/x"], "--sbatch"),
                       (["--out", str(tmp_path / "o"), "--sbatch=-kvo/tmp/x"], "--sbatch"),
                       (["--out", str(tmp_path / "o"), "--sbatch=-Wi /etc/passwd"], "--sbatch")):
        assert cli.main(base + given) == 2, given
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1 and f"{key} must be" in err, err
    assert cli.main(base + ["--out", str(tmp_path / "o"), "--device", "cuda"]) == 0
    assert "--device cuda" in capsys.readouterr().out
    assert cli.main(base + ["--out", str(tmp_path / "o"), "--sbatch=--partition=gpu --account=me -pdebug -v"]) == 0
    assert "#SBATCH --account=me" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:       # a value that starts with a dash needs its "="
        cli.main(base + ["--out", str(tmp_path / "o"), "--sbatch", "--partition=gpu"])
    assert done.value.code == 2 and 'write --sbatch="--partition=gpu ..." with its "="' in capsys.readouterr().err


def test_nads_checks_every_value_before_torch_loads(tmp_path):
    """Issue 41 item 10: --step, --batch-size, --arch and --method were checked by the library, after
    torch loaded (40-53 s on a loaded machine); the cost check imported torch too (through plan)."""
    out = str(tmp_path / "x.npz")
    cases = [["--arch", "foo"], ["--method", "magic"], ["--step", "0"], ["--step", "1e-50"], ["--step", "nan"],
             ["--step", "1e39"], ["--batch-size", "0"], ["--batch-size", "5000"], ["--networks", "1000000000"]]
    code = ("import sys, json; from nadcore import cli; base = ['nads', '--arch', 'lenet', '--networks', '4', "
            f"'--out', {out!r}]; cases = json.loads(sys.argv[1]); "
            "print(json.dumps([[cli.main(base + c), 'torch' in sys.modules] for c in cases]))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(cases)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [[2, False]] * len(cases), done.stderr
    errors = error_lines(done.stderr)
    assert len(errors) == len(cases)
    for (option, _), line in zip([c if c[0] != "--networks" else c for c in cases], errors):
        assert f"{option} must be" in line, line


def test_the_cli_knows_the_library_names_without_torch():
    """The names and bounds `nadcore nads` checks before torch loads are the library's."""
    from nadcore import catalog, models, nads

    assert catalog.ARCHS == tuple(models.names())
    assert catalog.NAD_METHODS == nads.METHODS and catalog.MAX_BATCH == nads.MAX_BATCH


@pytest.mark.slow
@pytest.mark.parametrize("sig, what", [("SIGTERM", "terminated (SIGTERM)"), ("SIGINT", "interrupted (Ctrl-C)")])
def test_a_run_stopped_by_a_signal_ends_with_one_line(tmp_path, sig, what):
    """Issue 41 item 12: SIGTERM (a batch system's time limit) on `nadcore run` while a cell runs printed
    the kernel's ~20-line ZMQError traceback before the one-line error; now the kernel is killed, quietly.
    The signal goes to the whole process group, as SLURM and a terminal's Ctrl-C send it."""
    import signal
    import time

    book = tmp_path / "book"
    book.mkdir()
    started = tmp_path / "started"
    write_chapter(book, "01_sleeps", f"import pathlib, time\npathlib.Path({str(started)!r}).write_text('1')\n"
                                     "time.sleep(300)")
    runs = tmp_path / "runs"
    proc = subprocess.Popen([NADCORE, "run", "01_sleeps", "--device", "cpu", "--book-dir", str(book), "--out",
                             str(runs), "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert started.exists(), "the kernel never ran the cell"
        os.killpg(proc.pid, getattr(signal, sig))
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1, err
    assert "Traceback" not in err and "ZMQError" not in err, err
    assert error_lines(err) == [f"nadcore: error: 01_sleeps failed: KeyboardInterrupt: {what}; "
                                f"notebook: {runs / '01_sleeps-smoke-FAILED.ipynb'}"]
    assert err.rstrip().splitlines()[-1] == error_lines(err)[0]
    assert notebooks(runs) == ["01_sleeps-smoke-FAILED.ipynb"]


# ----------------------------------------------------------------------------- your own model (issue 40)

OWN_MODEL = '''from torch import nn


class StrideNet(nn.Sequential):
    def __init__(self):
        super().__init__(nn.Conv2d(1, 3, 3, stride=2), nn.ReLU(), nn.Flatten(), nn.LazyLinear(1))


class RGBNet(nn.Sequential):
    def __init__(self):
        super().__init__(nn.Conv2d(3, 2, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2, 1))
'''


def test_nads_of_your_own_model_are_stored_under_its_name_trusted_and_resumed(tmp_path, monkeypatch, capsys):
    """Item 1: `--model module:callable` (the current folder importable, as python does), `--input-shape`,
    stored under the callable's name with its description; a killed run resumes from its chunks."""
    from nadcore import store

    (tmp_path / "mymod_issue40.py").write_text(OWN_MODEL)
    monkeypatch.chdir(tmp_path)
    argv = ["nads", "--model", "mymod_issue40:StrideNet", "--input-shape", "1,8,8", "--networks", "130",
            "--method", "autograd", "--device", "cpu", "--results-dir", "res", "--no-progress"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "64 NADs of StrideNet (autograd, 130 networks)" in out and "split-half overlap (65/65 networks): k=1:" in out
    stored, = (tmp_path / "res" / "nads").glob("StrideNet_*.npz")
    settings = store.load(stored).settings
    assert settings["model"]["source"] == "mymod_issue40:StrideNet" and settings["input_shape"] == [1, 8, 8]
    chunks = sorted((tmp_path / "res" / "nad_chunks").glob("*.npz"))
    chunks[1].unlink()
    kept = chunks[0].stat().st_mtime_ns
    assert cli.main(argv + ["--name", "stride"]) == 0           # another name: its own chunks and file
    assert len(list((tmp_path / "res" / "nads").glob("stride_*.npz"))) == 1 and chunks[0].stat().st_mtime_ns == kept
    assert cli.main(argv) == 0
    assert chunks[0].stat().st_mtime_ns == kept and chunks[1].exists()


@pytest.mark.parametrize("args, accepted", [
    (["--model", "no_such_module_xyz:Net"], "--model must be an importable module:callable (module "
                                            "'no_such_module_xyz' does not import"),
    (["--model", "mymod_issue40:Nope"], "--model must be an importable module:callable ('mymod_issue40' has no "
                                        "attribute 'Nope')"),
    (["--model", "timm:convnext_atoo"], "--model must be a timm model name"),
    (["--model", "StrideNet"], "--model must be module:callable"),
    (["--model", "mymod_issue40:StrideNet", "--input-shape", "1,x,8"], "--input-shape must be C,H,W"),
    (["--model", "mymod_issue40:StrideNet", "--input-shape", "0,8,8"], "--input-shape must be C,H,W"),
    (["--model", "mymod_issue40:StrideNet", "--name", "my net"], "--name must be a file-name-safe name"),
    (["--arch", "lenet", "--model", "mymod_issue40:StrideNet"], "--model must be given alone"),
    ([], "--arch must be given, or --model instead"),
])
def test_nads_of_your_own_model_refuse_bad_input_in_one_line(tmp_path, monkeypatch, args, accepted, capsys):
    from nadcore import nads

    (tmp_path / "mymod_issue40.py").write_text(OWN_MODEL)
    monkeypatch.chdir(tmp_path)
    calls = []
    monkeypatch.setattr(nads, "estimate", lambda *a, **kw: calls.append(a))
    assert cli.main(["nads", *args, "--networks", "4", "--out", str(tmp_path / "x.npz")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and accepted in err and calls == []


def test_nads_shape_mismatch_names_input_shape(tmp_path, monkeypatch, capsys):
    """Item 7: a 3-channel model with the default input shape: one line naming --input-shape and the shape."""
    (tmp_path / "mymod_issue40.py").write_text(OWN_MODEL)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["nads", "--model", "mymod_issue40:RGBNet", "--networks", "4", "--out", "x.npz"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--input-shape must be the model's input shape" in err
    assert "(1, 1, 32, 32)" in err and not (tmp_path / "nad_chunks").exists()


def test_nads_of_a_timm_model(tmp_path, capsys):
    pytest.importorskip("timm")
    assert cli.main(["nads", "--model", "timm:test_vit", "--input-shape", "1,16,16", "--networks", "3",
                     "--method", "autograd", "--device", "cpu", "--out", str(tmp_path / "c.npz"),
                     "--no-progress"]) == 0
    assert "256 NADs of test_vit" in capsys.readouterr().out   # timm's test model: a second, not a minute


def test_a_size_the_user_sets_is_bounded_before_anything_is_allocated(tmp_path, capsys):
    """Issue 58 item 7: `-p num_seeds 1000000000` grew `plan` past 1 GB; `--input-shape 1,1000,1000` ran every
    forward pass and then failed allocating 8 TB; `99999999999999999999,1,1` dumped C++; the library's
    `directional_dataset`, `pooling_matrix` and `fourier_direction` allocated whatever they were asked."""
    import torch

    from nadcore import catalog, data, fourier, pooling

    for shape in ("1,1000,1000", "99999999999999999999,1,1"):
        assert cli.main(["nads", "--arch", "lenet", "--networks", "4", "--out", str(tmp_path / "x.npz"),
                         "--input-shape", shape]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"of at most {catalog.MAX_INPUT:,} entries" in err, err
    with pytest.raises(ValueError, match=r"^input_shape must have at most 16,384 entries"):
        estimate_kw("logreg", 4, input_shape=(1, 1000, 1000), progress=False)
    with pytest.raises(ValueError, match=r"^n must keep the float32 samples under 8 GiB \(it would take "
                                         r"3.81e\+06 GiB\)"):
        data.directional_dataset(torch.ones(1, 32, 32) / 32, 10 ** 12, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"^D must keep the float64 identity it pools under 8 GiB"):
        pooling.pooling_matrix("none", 2, D=10 ** 6)
    with pytest.raises(ValueError, match=r"^size must keep its size x size spectrum under 8 GiB"):
        fourier.fourier_direction(1, 0, size=10 ** 6)


def test_blank_paths_are_refused_as_given(tmp_path, tiny_book, capsys):
    """Issue 58 item 14: `-p results_dir '   '` ran the chapter into a folder named by three spaces; `--out ''` was
    reported as '.' (nads) or wrote into the current folder (run)."""
    for args, message in ((["run", "01_tiny", "-p", "results_dir", "   ", "--out", str(tmp_path / "o")],
                           "results_dir must be a non-empty path; got '   '"),
                          (["run", "01_tiny", "--out", ""], "--out must be a non-empty path; got ''"),
                          (["nads", "--arch", "lenet", "--networks", "4", "--out", ""],
                           "--out must be a non-empty FILE.npz path; got ''")):
        extra = ["--book-dir", str(tiny_book)] if args[0] == "run" else []
        assert cli.main(args + extra) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err, err
    assert not (tiny_book / "   ").exists() and not (tmp_path / "o").exists()


def test_an_estimate_of_your_own_model_is_timed_and_bounded_before_its_bulk(tmp_path, capsys):
    """Issue 60 item 2: 200 networks of a user's model ran 951 s with no estimate; now a bar per network, then one
    line with the time the rest takes, and past `NAD_HOURS` a one-line refusal after the first batch (no --yes)."""
    import time


    class Slow(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(64, 1)

        def forward(self, x):
            time.sleep(0.15)
            return self.lin(x.flatten(1))

    estimate_kw(Slow, 40, input_shape=(1, 8, 8), method="autograd", batch_size=4)
    err = capsys.readouterr().err
    assert re.search(r"factory: ~\d+ s for the 32 networks left \(0\.0\d+ s a network, measured on this machine\); "
                     r"the 64 x 64 covariance takes 0 MB", err), err
    assert "network/s]" in err or "s/network]" in err                          # the bar counts networks
    estimate_kw(Slow, 6, input_shape=(1, 8, 8), batch_size=16, progress="cost")   # the secant: timed on its
    assert "for the 4 networks left" in capsys.readouterr().err                    # second network (the newcomer)
    estimate_kw(Slow, 40, input_shape=(1, 8, 8), method="autograd", batch_size=4, progress="cost")
    err = capsys.readouterr().err                                                # --no-progress: the line, no bar
    assert "for the 32 networks left" in err and "network/s]" not in err and "s/network]" not in err
    estimate_kw(Slow, 12, input_shape=(1, 8, 8), method="autograd", batch_size=4, progress=False)
    assert capsys.readouterr().err == ""
    with pytest.raises(ValueError, match=r'^progress must be True, False or "cost" .*; got 1\.5$'):
        estimate_kw(Slow, 12, input_shape=(1, 8, 8), progress=1.5)
    with pytest.raises(ValueError, match=r"^num_networks must keep the estimate within 0\.001 h here: 4,000 networks"):
        estimate_kw(Slow, 4000, input_shape=(1, 8, 8), method="autograd", batch_size=4, max_hours=0.001,
                      progress=False)


def test_running_out_of_memory_names_the_batch_size_not_the_model(tmp_path, monkeypatch, capsys):
    """Issue 58's leftover: memory that ran out while the networks' gradients were computed was blamed on
    --model; it is the machine's limit, and --batch-size the lever."""
    (tmp_path / "mymod_oom.py").write_text("from torch import nn\n\nCALLS = [0]\n\n\nclass Big(nn.Linear):\n"
                                           "    def __init__(self):\n        super().__init__(64, 1)\n\n"
                                           "    def forward(self, x):\n        CALLS[0] += 1\n"
                                           "        if CALLS[0] > 3:   # past the checks of the first network\n"
                                           "            raise RuntimeError(\"DefaultCPUAllocator: can't allocate "
                                           "memory: you tried to allocate 8 GB\")\n"
                                           "        return super().forward(x.flatten(1))\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["nads", "--model", "mymod_oom:Big", "--input-shape", "1,8,8", "--networks", "8", "--method",
                     "autograd", "--out", "big.npz", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--batch-size must fit this machine's memory" in err and "--model" not in err


def test_the_library_refusals_name_the_command_lines_options(tmp_path, monkeypatch, capsys):
    """Issue 58's leftover: `nadcore nads` past its time bound said `num_networks must ...`, the library's name."""
    (tmp_path / "mymod_slow.py").write_text("import time\n\nfrom torch import nn\n\n\nclass Slow(nn.Linear):\n"
                                            "    def __init__(self):\n        super().__init__(64, 1)\n\n"
                                            "    def forward(self, x):\n        time.sleep(0.01)\n"
                                            "        return super().forward(x.flatten(1))\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "NAD_HOURS", 1e-7)
    assert cli.main(["nads", "--model", "mymod_slow:Slow", "--input-shape", "1,8,8", "--networks", "40", "--method",
                     "autograd", "--batch-size", "4", "--out", "slow.npz", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("nadcore: error: --networks must keep the estimate within 1e-07 h here: 40 networks"), err


def test_an_input_shape_of_the_wrong_rank_is_refused_at_parse_time(tmp_path, capsys):
    """Issue 60 item 5: `--input-shape 3,32` passed parsing and failed in the forward pass, after torch loaded."""
    assert cli.main(["nads", "--arch", "lenet", "--networks", "4", "--out", str(tmp_path / "x.npz"),
                     "--input-shape", "3,32"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--input-shape must be C,H,W (three integers) for a registry network" in err


def test_a_chapter_named_to_run_code_is_no_chapter_and_outputs_are_no_symlinks(tmp_path, tiny_book, capsys):
    """Second adversarial pass (issue 58): a notebook named `98_a$(touch PWN);b` reached the job script unquoted
    (the script ran it); `run` and `submit` wrote through a symlink named as their output (into the bundle);
    `submit` dropped --book-dir, so the cluster ran the checkout's chapter; `store.migrate` deleted a bundle file."""
    from nadcore import store

    write_chapter(tiny_book, "98_a$(touch PWN);b", "print(1)")
    assert cli.main(["submit", "98_a$(touch PWN);b", "--shards", "2", "--dry-run", "--book-dir", str(tiny_book)]) == 2
    assert "unknown chapter" in capsys.readouterr().err
    assert cli.main(["submit", "01_tiny", "--shards", "2", "--dry-run", "--book-dir", str(tiny_book),
                     "--out", str(tmp_path / "o")]) == 0
    assert f"--book-dir {tiny_book.resolve()}" in capsys.readouterr().out
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "01_tiny-smoke.RUNNING.ipynb").symlink_to(ROOT / "bundle" / "MACHINE.json")
    assert cli.main(["run", "01_tiny", "--out", str(runs), "--book-dir", str(tiny_book)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "01_tiny-smoke.RUNNING.ipynb is no symlink" in err
    committed = next((ROOT / "bundle" / "nads").glob("convergence_*.npz"))
    with pytest.raises(ValueError, match="lies in the results bundle"):
        store.migrate(committed, tmp_path / "moved.npz", {"a": 1}, "a test")
    assert committed.is_file() and not (tmp_path / "moved.npz").exists()
    other = tmp_path / "other.npz"
    store.save(other, {"x": np.zeros(1)}, {"b": 1})
    store.save(tmp_path / "r.npz", {"x": np.zeros(1)}, {"a": 1})
    with pytest.raises(ValueError, match="^new_path must be where no file is yet"):
        store.migrate(tmp_path / "r.npz", other, {"a": 2}, "a test")


def test_a_model_that_fails_only_on_the_probes_is_one_line_not_exit_0(tmp_path, monkeypatch, capsys):
    """Second adversarial pass (issue 58): a model raising only on a batch of probes (SystemExit(0) exited 0 with
    nothing written; KeyError a traceback), and a module raising SystemExit on import."""
    (tmp_path / "late.py").write_text(
        "import torch\nfrom torch import nn\n\n"
        "class Late(nn.Module):\n    def __init__(self, how='exit'):\n        super().__init__()\n"
        "        self.l, self.how = nn.Linear(64, 1), how\n\n"
        "    def forward(self, x):\n        if x.shape[0] > 2:\n"
        "            raise SystemExit(0) if self.how == 'exit' else KeyError('late')\n"
        "        return self.l(x.flatten(1))\n\n\n"
        "def key():\n    return Late('key')\n")
    (tmp_path / "exits.py").write_text("raise SystemExit(0)\n")
    monkeypatch.chdir(tmp_path)
    for model, said in (("late:Late", "SystemExit: 0"), ("late:key", "KeyError: 'late'"),
                        ("exits:Net", "does not import: SystemExit: 0")):
        assert cli.main(["nads", "--model", model, "--input-shape", "1,8,8", "--networks", "4", "--out",
                         str(tmp_path / f"{model.replace(':', '_')}.npz"), "--no-progress"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.startswith("nadcore: error: --model") and said in err, err


def test_overrides_the_chapters_code_refuses_stop_run_before_a_kernel_starts(tmp_path, capsys):
    """Second adversarial pass (issue 58): `{fourier: {grid: {name: bogus}}}` started a kernel and failed in it;
    `{grid: {name: full}}` crashed `plan` with a TypeError. The plan reads every preset through the chapter's code."""
    for command in ("plan", "run"):
        extra = ["--out", str(tmp_path / "o")] if command == "run" else []
        for grid in ("bogus", "full"):
            assert cli.main([command, "01_fourier", "-p", "overrides", f"{{fourier: {{grid: {{name: {grid}}}}}}}",
                             *extra]) == 2
            err = capsys.readouterr().err.strip().splitlines()
            assert err[-1].startswith("nadcore: error: overrides must give presets the chapter's code takes"), err
    assert not (tmp_path / "o").exists()


def test_submit_plans_for_an_mps_device_too(tiny_book, tmp_path, capsys):
    """Second adversarial pass (issue 58): `--device mps` was refused because this machine has none."""
    assert cli.main(["submit", "01_tiny", "--shards", "2", "--device", "mps", "--dry-run", "--book-dir", str(tiny_book),
                     "--out", str(tmp_path / "o")]) == 0
    assert "--device mps" in capsys.readouterr().out


def test_an_argument_argparse_refuses_is_one_line_too(capsys):
    """Second adversarial pass (issue 58): `--networks abc` printed argparse's usage block, 7 lines."""
    with pytest.raises(SystemExit) as stop:
        cli.main(["nads", "--networks", "abc"])
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and len(err.splitlines()) == 1
    assert err == "nadcore: error: argument --networks: invalid int value: 'abc' (see nadcore nads --help)"


def test_run_replaces_or_removes_only_its_own_notebooks(tmp_path, tiny_book, capsys):
    """Third adversarial pass of issue 58: a user's NAME.RUNNING.ipynb was overwritten and NAME-FAILED.ipynb deleted
    without --force; only NAME.ipynb was protected."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for tail in (".RUNNING", "-FAILED"):
        mine = runs / f"01_tiny-smoke{tail}.ipynb"
        mine.write_text('{"mine": 1}')
        assert cli.main(["run", "01_tiny", "--out", str(runs), "--book-dir", str(tiny_book), "--no-progress"]) == 2
        assert f"whose {mine.name} is a run's output (papermill's) or absent" in capsys.readouterr().err
        assert mine.read_text() == '{"mine": 1}'
        mine.unlink()


def test_outputs_that_are_hard_links_or_fifos_and_a_base_exception_of_yours(tmp_path, tiny_book, monkeypatch, capsys):
    """The re-probe of issue 58: `run` wrote its notebook into a file hard-linked from the bundle and hung on a FIFO;
    a BaseException subclass of the model's own was a 47-line traceback; `submit` took overrides `run` refuses;
    `--book-dir ''` fell back to ./book."""
    import os as system

    runs = tmp_path / "runs"
    runs.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    system.link(victim, runs / "01_tiny-smoke.RUNNING.ipynb")
    cli.check_plain_files("--out", [runs / "01_tiny-smoke.RUNNING.ipynb"], False)   # the link goes, the file stays
    assert victim.read_text() == "mine" and not (runs / "01_tiny-smoke.RUNNING.ipynb").exists()
    system.mkfifo(runs / "01_tiny-smoke.RUNNING.ipynb")
    assert cli.main(["run", "01_tiny", "--out", str(runs), "--book-dir", str(tiny_book)]) == 2
    assert "01_tiny-smoke.RUNNING.ipynb is a plain file or nothing" in capsys.readouterr().err
    (tmp_path / "boom.py").write_text(
        "from torch import nn\n\nclass Boom(BaseException):\n    pass\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.l = nn.Linear(64, 1)\n\n"
        "    def forward(self, x):\n        if x.shape[0] > 2:\n            raise Boom('mine')\n"
        "        return self.l(x.flatten(1))\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["nads", "--model", "boom:Net", "--input-shape", "1,8,8", "--networks", "4", "--out",
                     str(tmp_path / "b.npz"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Boom: mine" in err
    monkeypatch.chdir(ROOT)
    assert cli.main(["submit", "01_fourier", "--shards", "2", "--dry-run", "-p", "overrides",
                     "{fourier: {grid: {name: bogus}}}", "--out", str(tmp_path / "o")]) == 2
    assert "overrides must give presets the chapter's code takes" in capsys.readouterr().err
    assert cli.main(["plan", "03_nads", "--book-dir", ""]) == 2
    assert "--book-dir must be a folder holding chapter notebooks (not blank)" in capsys.readouterr().err


def test_run_and_submit_replace_their_own_outputs_only(tmp_path):
    """The adversarial pass of session 35: `run` replaced any file under its output's name and `submit` any script;
    they now replace only what they wrote (a papermill output, a nadbook script) without --force."""
    out = tmp_path / "runs"
    out.mkdir()
    mine = out / "01_fourier-smoke.ipynb"
    mine.write_text('{"cells": [], "metadata": {}, "note": "my own notebook"}')
    assert cli.main(["run", "01_fourier", "--out", str(out), "-p", "results_dir", str(tmp_path / "r")]) == 2
    assert "my own notebook" in mine.read_text()
    ran = tmp_path / "ran.ipynb"
    ran.write_text('{"cells": [], "metadata": {"papermill": {"parameters": {}}}}')
    assert cli._papermill_output(ran) and not cli._papermill_output(mine)
    script = out / "01_fourier-smoke-shards.sbatch"
    script.write_text("#!/bin/bash\necho my own job\n")
    sbin = tmp_path / "bin"
    sbin.mkdir()
    (sbin / "sbatch").write_text("#!/bin/sh\necho Submitted batch job 1\n")
    (sbin / "sbatch").chmod(0o755)
    env = {**os.environ, "PATH": f"{sbin}:{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-m", "nadcore.cli", "submit", "01_fourier", "--device", "cpu",
                           "--shards", "2", "--out", str(out), "-p", "results_dir", str(tmp_path / "r")],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 2 and "nadcore wrote" in done.stderr and "my own job" in script.read_text()


def test_a_bundle_dir_given_must_be_a_results_bundle(tmp_path):
    """The adversarial pass of session 35: `-p bundle_dir /nonexistent` started the kernel and failed in a cell."""
    for given in (str(tmp_path / "nowhere"), str(tmp_path)):
        assert cli.main(["run", "08_training", "--out", str(tmp_path / "o"), "-p", "bundle_dir", given]) == 2
    assert not (tmp_path / "o").exists()


def test_values_that_only_fail_late_or_flood_the_terminal_are_one_short_line(tmp_path, capsys):
    """The third adversarial pass of issue 58: an --out name of 240 characters failed after the estimate (its
    temporary file's name is longer); 5,000 nested brackets in -p overrides were a RecursionError traceback; a
    'billion laughs' of YAML aliases a 254 MB error line; a key given twice kept its last value silently."""
    assert cli.main(["nads", "--arch", "logreg", "--networks", "4", "--out", str(tmp_path / ("c" * 240 + ".npz"))]) == 2
    assert "--out must be a FILE.npz whose name has at most 200 bytes" in capsys.readouterr().err
    laughs = "{a: &a [x,x,x,x,x,x,x,x,x], " + ", ".join(
        f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcd", "bcde")) + "}"
    for value, said in (("[" * 5001 + "]" * 5001, "overrides must be a value of at most 10,000 characters"),
                        ("[" * 3000 + "]" * 3000, "overrides must be a value nested less deeply"),
                        (laughs, "overrides must be a value of at most 10,000 elements (its aliases expanded)"),
                        ("{fourier: {n: 500, n: 600}}", "overrides must give each key once; got 'n' twice")):
        assert cli.main(["plan", "01_fourier", "-p", "overrides", value]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and len(err) < cli.MAX_LINE + 100 and said in err, err[:300]


def test_a_flat_model_and_a_missing_book_are_told_what_they_are(tmp_path, capsys):
    """The third adversarial pass of issue 58: a model whose output is zero (timm zero-initialises some heads) was
    told to change the secant's step; `chapters --book-dir /nonexistent` exited 0 with nothing."""

    def flat():
        head = torch.nn.Linear(16, 1)
        torch.nn.init.zeros_(head.weight)      # as timm's zero-initialised heads
        return torch.nn.Sequential(torch.nn.Flatten(), head)

    with pytest.raises(ValueError, match="^model must depend on its input at the evaluation point: the gradients of "
                                         "networks 0..3 are all zero"):
        estimate_kw(flat, 4, input_shape=(1, 4, 4), progress=False)
    for book in (tmp_path / "nonexistent", tmp_path):
        assert cli.main(["chapters", "--book-dir", str(book)]) == 2
        assert "--book-dir must be a folder holding chapter notebooks" in capsys.readouterr().err


def test_submit_bounds_its_plan_and_run_keeps_a_hard_linked_notebook(tiny_book, tmp_path, fake_plan, monkeypatch,
                                                                     capsys):
    """The re-probe of issue 58: `submit` of a plan past 10,000 h wrote jobs whose runs all refused it (each shard's
    plan counts the whole chapter); `run` replaced a user's notebook hard-linked at its output name."""
    import os as system

    monkeypatch.setattr(cli, "RUN_HOURS", 1)
    base = ["submit", "01_tiny", "--shards", "2", "--dry-run", "--book-dir", str(tiny_book), "--out", str(tmp_path)]
    assert cli.main([*base, "-p", "seed", "1"]) == 2
    assert "the plan of 01_tiny must take at most 1 h: it takes ~2.0 h" in capsys.readouterr().err
    assert cli.main([*base, "-p", "seed", "1", "--yes"]) == 0
    assert capsys.readouterr().out.count(" --yes") == 2         # the array's runs and the collector's
    runs = tmp_path / "runs"
    runs.mkdir()
    backup = tmp_path / "backup.ipynb"
    backup.write_text('{"mine": 1}')
    system.link(backup, runs / "01_tiny-smoke.ipynb")
    assert cli.main(["run", "01_tiny", "--out", str(runs), "--book-dir", str(tiny_book), "--no-progress"]) == 2
    assert backup.read_text() == '{"mine": 1}' and (runs / "01_tiny-smoke.ipynb").read_text() == '{"mine": 1}'


def test_a_malformed_notebook_and_an_empty_bundle_dir_are_one_line(tmp_path, capsys):
    """The fourth adversarial pass of issue 58: a notebook that is no JSON, or JSON that is no notebook, in --book-dir
    ended in nbformat's traceback; `bundle --bundle-dir ''` said it got '.'."""
    (tmp_path / "01_bad.ipynb").write_text("{}")
    (tmp_path / "02_worse.ipynb").write_text("not json")
    for argv in (["chapters", "--book-dir", str(tmp_path)], ["plan", "worse", "--book-dir", str(tmp_path)]):
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "is no readable notebook" in err, err
    assert cli.main(["bundle", "--bundle-dir", "", "status"]) == 2
    assert capsys.readouterr().err.strip().endswith("--bundle-dir must be a folder; got ''")
