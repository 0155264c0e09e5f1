"""nadcore installed as a reader installs it: the wheel `pip install .` builds, and a plain `pip install`
of the checkout into an environment that already holds another torch release (Colab, a cluster).

That environment comes with its own stack, as Colab's does, and is built in two layers: uv.lock's
packages (the notebook stack, NumPy, the CUDA libraries), linked from uv's cache by `uv sync`
(`make install` filled it), less torch, torchvision and those the foreign pair wants in other
versions (its cuDNN, NCCL, triton); then the pair and those, installed by pip from this machine's
disk. The CUDA libraries cannot be left out: the CUDA build of torch does not import without them,
and pip would install any that were missing. Plain pip then resolves all of nadcore's requirements
against that torch, and must keep it. About 2 minutes on a 2-core machine (6.5 to 11 when pip fetched
the whole stack, some 95 packages, itself); the stack is uv.lock's, not PyPI's newest."""

import json
import os
import re
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


def run(cmd, **kwargs):
    """subprocess.run(cmd) that fails with the tail of what the command printed."""
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, cmd[:4]))} ... exited {done.returncode}:\n{done.stderr[-3000:]}"
    return done


def uv():
    """The uv command, as the Makefile finds it."""
    return [shutil.which("uv")] if shutil.which("uv") else ["python3", "-m", "uv"]


def _name(name):
    """A distribution name as PEP 503 normalises it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def clean_env(**extra):
    """os.environ without this session's virtual environment, plus `extra`. Bytecode is written (into
    the test's venv): each of its processes would otherwise compile torch's modules anew."""
    drop = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE")
    return {k: v for k, v in os.environ.items() if k not in drop} | extra


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


def _pip_plan(python, specs, report):
    """{name: (url, Requires-Dist)} of what pip would take for `specs` themselves (no dependency)."""
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--dry-run", "--no-deps", "--ignore-installed",
                    "--report", str(report), *specs], check=True, capture_output=True, timeout=600)
    return {_name(i["metadata"]["name"]): (i["download_info"]["url"], i["metadata"].get("requires_dist", []))
            for i in json.loads(report.read_text())["install"]}


def _locked():
    """{name: version} of nadcore's own requirements and its extras' in uv.lock (no dev group)."""
    out = subprocess.run([*uv(), "export", "--frozen", "--no-dev", "--all-extras", "--no-emit-project", "--no-hashes",
                          "--format", "requirements-txt"], cwd=ROOT, check=True, capture_output=True, text=True)
    return {_name(m[1]): m[2] for m in re.finditer(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", out.stdout, re.M)}


def _unfit(requires, locked):
    """The names of `requires` (Requires-Dist lines) whose version in `locked` they do not accept."""
    from packaging.requirements import Requirement

    out = set()
    for req in map(Requirement, requires):
        version = locked.get(_name(req.name))
        if (req.marker is None or req.marker.evaluate({"extra": ""})) and version is not None \
                and not req.specifier.contains(version, prereleases=True):
            out.add(_name(req.name))
    return out


def _torch(python):
    """(version, file, mtime) of the torch that `python` finds, read without importing it (the chapter does)."""
    out = subprocess.run([python, "-c", "import importlib.metadata as m, importlib.util as u, os; "
                          "f = u.find_spec('torch').origin; print(m.version('torch')); print(f); "
                          "print(os.stat(f).st_mtime_ns)"], check=True, capture_output=True, text=True)
    return tuple(out.stdout.split())


@pytest.fixture
def foreign_env(tmp_path):
    """A fresh virtual environment holding `FOREIGN` beside uv.lock's other packages, removed afterwards."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    try:
        try:
            plan = _pip_plan(python, FOREIGN, tmp_path / "report.json")
        except subprocess.CalledProcessError as err:
            pytest.skip(f"pip cannot resolve {' '.join(FOREIGN)}: {err.stderr.decode()[-300:]}")
        remote = {name: url for name, (url, _) in plan.items() if not url.startswith("file:")}
        if remote:
            pytest.skip(f"no other torch release on this machine's disk (pip would download {remote}); "
                        "set NADBOOK_FOREIGN_TORCH to releases pip installs offline")
        # The first layer: uv.lock's packages, but torch, torchvision and those the foreign pair wants in
        # another version (its CUDA libraries, triton), linked from uv's cache
        left_out = set(plan) | _unfit([r for _, requires in plan.values() for r in requires], _locked())
        run([*uv(), "sync", "--frozen", "--no-dev", "--all-extras", "--no-install-project", "--inexact", "--quiet",
             *(a for n in sorted(left_out) for a in ("--no-install-package", n))], cwd=ROOT,
            env=clean_env(UV_PROJECT_ENVIRONMENT=str(venv), UV_LINK_MODE="hardlink"))
        # The second: the foreign pair and what it wants, by pip from this machine's disk (without bytecode,
        # which would compile all of torch's sources)
        run([python, "-m", "pip", "install", "--quiet", "--no-compile", *FOREIGN], env=clean_env())
        yield venv
    finally:   # some 5 GB of files: removed in the background at the lowest priority (35 s in the foreground)
        subprocess.Popen(["nice", "-n", "19", "rm", "-rf", str(venv)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)


@pytest.mark.slow
def test_pip_install_keeps_the_readers_torch_and_runs_a_chapter(foreign_env, tmp_path):
    python = str(foreign_env / "bin" / "python")
    env = clean_env()
    before = _torch(python)
    assert before[0].split("+")[0] == FOREIGN[0].split("==")[1]

    report = tmp_path / "install.json"
    run([python, "-m", "pip", "install", "--quiet", "--report", str(report), f"{ROOT}[all]"], env=env)
    installed = {_name(i["metadata"]["name"]) for i in json.loads(report.read_text())["install"]}
    assert "nadcore" in installed and not installed & {"torch", "torchvision"}, sorted(installed)
    assert _torch(python) == before                          # same version, same file, not reinstalled
    where = run([python, "-c", "import nadcore; print(nadcore.__file__)"], cwd=tmp_path, env=env).stdout.strip()
    assert where.startswith(str(foreign_env))

    results, runs = tmp_path / "results", tmp_path / "runs"
    # One thread: on two threads of a busy 2-core machine its tiny tensors spin (training: 100 s, not 9 s)
    run([str(foreign_env / "bin" / "nadcore"), "run", CHAPTER, "--scale", "smoke", "--device", "cpu", "--no-progress",
         "--out", str(runs), "-p", "results_dir", str(results)], cwd=ROOT, env=env | {"OMP_NUM_THREADS": "1"},
        timeout=1800)
    assert (runs / f"{CHAPTER}-smoke.ipynb").exists()
    from nadcore import store

    stored = sorted(results.rglob("*.npz"))
    assert stored, "the chapter stored nothing in its results_dir"
    assert {store.load(p).record["torch_version"] for p in stored} == {before[0].split("+")[0]}
