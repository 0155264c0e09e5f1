import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from nadcore import cli

NADCORE = str(Path(sys.executable).with_name("nadcore"))


@pytest.fixture
def tiny_book(tmp_path):
    """A book folder with one fast chapter that declares the standard parameters."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('scale = "smoke"\ndevice = "auto"\nseed = 0\nresults_dir = "../results"\ndata_root = "../data"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("print(scale, device, seed * 10)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder = tmp_path / "book"
    folder.mkdir()
    nbformat.write(nb, folder / "01_tiny.ipynb")
    return folder


def run_cli(*args):
    return subprocess.run([NADCORE, *args], capture_output=True, text=True)


def test_help_lists_every_subcommand():
    out = run_cli("--help")
    assert out.returncode == 0
    for command in ("run", "chapters", "nads"):
        assert command in out.stdout


def test_run_injects_parameters_into_the_executed_notebook(tiny_book, tmp_path):
    out = run_cli("run", "01_tiny", "--scale", "smoke", "--device", "cpu", "-p", "seed", "1",
                  "--book-dir", str(tiny_book), "--out", str(tmp_path / "runs"), "--no-progress")
    assert out.returncode == 0, out.stderr
    executed = nbformat.read(tmp_path / "runs" / "01_tiny-smoke.ipynb", as_version=4)
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert "seed = 1" in injected[0].source
    assert executed.cells[-1].outputs[0]["text"].strip() == "smoke cpu 10"


def test_chapter_accepts_its_name_without_number(tiny_book):
    assert cli.find_chapter("tiny", tiny_book).name == "01_tiny.ipynb"


@pytest.mark.parametrize("args, accepted", [
    (["run", "nope"], "accepted: 01_tiny"),
    (["run", "01_tiny", "--scale", "huge"], "smoke, medium, paper"),
    (["run", "01_tiny", "-p", "epochs", "3"], "accepted: scale, device, seed, results_dir, data_root"),
    (["run", "01_tiny", "--device", "tpu"], '"auto", "cpu", "cuda"'),
])
def test_bad_input_exits_non_zero_with_one_line(tiny_book, args, accepted, capsys):
    assert cli.main([*args, "--book-dir", str(tiny_book)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and accepted in err


def test_unavailable_device_is_refused(tiny_book, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert cli.main(["run", "01_tiny", "--device", "cuda", "--book-dir", str(tiny_book)]) == 2
    assert "not available" in capsys.readouterr().err


def test_parameter_values_are_parsed_as_yaml():
    assert cli.parse_value("3") == 3 and cli.parse_value("0.5") == 0.5
    assert cli.parse_value("[1, 2]") == [1, 2] and cli.parse_value("cuda") == "cuda"


def test_nads_writes_eigenvalues_and_nads_with_settings(tmp_path):
    import numpy as np

    from nadcore import store

    out = tmp_path / "logreg.npz"
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
    (["--arch", "lenet", "--networks", "1"], ">= 2"),
    (["--arch", "lenet", "--networks", "4", "--method", "magic"], "secant"),
])
def test_nads_bad_input_is_one_line(tmp_path, args, accepted, capsys):
    assert cli.main(["nads", *args, "--out", str(tmp_path / "x.npz")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and accepted in err
