"""nadcore installed as a reader installs it: the wheel `pip install .` builds, and a plain `pip install`
of the checkout into an environment that already holds another torch release (Colab, a cluster)."""

import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest
from conftest import ROOT

SRC = ROOT / "src" / "nadcore"
# A torch release other than uv.lock's 2.13.0 that pip installs from this machine's disk (Python 3.11, x86_64)
FOREIGN = os.environ.get("NADBOOK_FOREIGN_TORCH", "torch==2.14.1 torchvision==0.29.1").split()
CHAPTER = "02_pooling"   # the cheapest chapter at the smoke scale


def uv():
    """The uv command, as the Makefile finds it."""
    return [shutil.which("uv")] if shutil.which("uv") else ["python3", "-m", "uv"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([*uv(), "build", "--wheel", "--out-dir", str(out), str(ROOT)], check=True, capture_output=True)
    (path,) = out.glob("nadcore-*.whl")
    return path


def test_wheel_holds_the_library_and_the_published_data_only(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    library = {f"nadcore/{p.relative_to(SRC).as_posix()}" for p in SRC.rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    assert any(n.startswith("nadcore/artifacts/published/") for n in library)
    assert sorted(library - names) == []                      # every module and every published file
    assert sorted(n for n in names if not n.startswith(("nadcore/", "nadcore-"))) == []   # no bundle/, results/
    assert wheel.stat().st_size < 16 * 2**20, f"{wheel.name} weighs {wheel.stat().st_size / 2**20:.1f} MiB"
    requires = [line for line in meta.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert any(r.startswith("Requires-Dist: torch>=") for r in requires)
    assert [r for r in requires if "==" in r] == []           # ranges, so that pip keeps the reader's torch


def _pip_sources(python, specs, report):
    """Where pip would take each of `specs` from ({name: url}), without installing anything."""
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--dry-run", "--ignore-installed", "--report",
                    str(report), *specs], check=True, capture_output=True, timeout=600)
    return {i["metadata"]["name"]: i["download_info"]["url"] for i in json.loads(report.read_text())["install"]}


def _torch(python):
    """(version, file, mtime) of the torch that `python` imports."""
    out = subprocess.run([python, "-c", "import os, torch; print(torch.__version__); print(torch.__file__); "
                          "print(os.stat(torch.__file__).st_mtime_ns)"], check=True, capture_output=True, text=True)
    return tuple(out.stdout.split())


@pytest.fixture
def foreign_env(tmp_path):
    """A fresh virtual environment holding `FOREIGN` (5.5 GB, about 80 s), removed afterwards."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    try:
        try:
            sources = _pip_sources(python, FOREIGN, tmp_path / "report.json")
        except subprocess.CalledProcessError as err:
            pytest.skip(f"pip cannot resolve {' '.join(FOREIGN)}: {err.stderr.decode()[-300:]}")
        remote = {name: url for name, url in sources.items() if name.startswith("torch") and
                  not url.startswith("file:")}
        if remote:
            pytest.skip(f"no other torch release on this machine's disk (pip would download {remote}); "
                        "set NADBOOK_FOREIGN_TORCH to releases pip installs offline")
        subprocess.run([python, "-m", "pip", "install", "--quiet", *FOREIGN], check=True, capture_output=True)
        yield venv
    finally:
        shutil.rmtree(venv, ignore_errors=True)


@pytest.mark.slow
def test_pip_install_keeps_the_readers_torch_and_runs_a_chapter(foreign_env, tmp_path):
    python = str(foreign_env / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    before = _torch(python)
    assert before[0].split("+")[0] == FOREIGN[0].split("==")[1]

    subprocess.run([python, "-m", "pip", "install", "--quiet", str(ROOT)], check=True, capture_output=True, env=env)
    assert _torch(python) == before                          # same version, same file, not reinstalled
    where = subprocess.run([python, "-c", "import nadcore; print(nadcore.__file__)"], check=True, text=True,
                           capture_output=True, cwd=tmp_path, env=env).stdout.strip()
    assert where.startswith(str(foreign_env))

    results, runs = tmp_path / "results", tmp_path / "runs"
    run = subprocess.run([str(foreign_env / "bin" / "nadcore"), "run", CHAPTER, "--scale", "smoke", "--device", "cpu",
                          "--no-progress", "--out", str(runs), "-p", "results_dir", str(results)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (runs / f"{CHAPTER}-smoke.ipynb").exists()
    from nadcore import store

    stored = sorted(results.rglob("*.npz"))
    assert stored, "the chapter stored nothing in its results_dir"
    assert {store.load(p).record["torch_version"] for p in stored} == {before[0].split("+")[0]}
