"""The library's dependencies: a core (`pip install nadcore`) that estimates NADs, trains on D(v) and plots,
and extras (`zoo`: timm; `book`: the chapters' stack; `all`). A core module imports nothing of the extras,
and a core-only environment works and names the extra a missing piece needs."""

import os
import subprocess
import sys
import textwrap
import tomllib

import pytest
from conftest import ROOT
from test_install import clean_env, run, uv

# The public core modules: what a researcher imports to estimate NADs of a model, train it on D(v), plot
CORE = ("catalog", "paths", "device", "seeds", "versions", "store", "sweeps", "fourier", "data", "models", "stacked",
        "train", "nads", "pooling", "learnability", "presets", "published", "plan", "cli", "zoo", "cifar", "extras",
        "prose", "checks", "findings", "chapters", "recipe")
PLOTS = ("plots.style", "plots.nads")   # the NAD plots of the public API (`grid`, `spectrum`)
# The top modules of the extras (and of their dependencies a core module could pull in by accident)
EXTRAS = ("timm", "papermill", "myst_nb", "IPython", "ipykernel", "ipywidgets", "plotly", "pandas", "yaml",
          "jupyter_client", "nbformat", "sphinx", "jupyter_book")


def test_every_module_is_core_or_of_the_book():
    src = ROOT / "src" / "nadcore"
    top = ({p.stem for p in src.glob("*.py") if p.stem != "__init__"}
           | {p.parent.name for p in src.glob("*/__init__.py")} - {"experiments", "plots"})   # nads is a package
    # the results bundle, the widget, appendix B, the verdicts, what each page states
    book = {"bundle", "widgets", "provenance", "verdicts", "pages"}
    assert top - set(CORE) == book, "a new module: add it to CORE, or to the book's side here"
    assert all((ROOT / "src" / "nadcore" / f"{m.replace('.', '/')}.py").exists() for m in PLOTS)


def test_the_core_depends_on_no_extra_and_the_extras_are_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = lambda reqs: {r.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip() for r in reqs}
    core, extras = names(project["dependencies"]), project["optional-dependencies"]
    assert "timm" in names(extras["zoo"]) and {"papermill", "myst-nb", "jupyter-book"} <= names(extras["book"])
    assert not core & (names(extras["zoo"]) | names(extras["book"]))
    assert extras["all"] == ["nadcore[zoo,book]"]


def test_a_core_module_imports_nothing_of_the_extras():
    code = textwrap.dedent(f"""
        import importlib, sys
        for m in {CORE + PLOTS!r}:
            importlib.import_module("nadcore." + m)
        print(sorted(m for m in {EXTRAS!r} if m in sys.modules))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_a_core_only_environment_estimates_and_names_the_extra_a_missing_piece_needs(tmp_path):
    """uv.lock's core packages only, linked from uv's cache (`make install` filled it; ~10 s here), then
    nadcore without dependencies: every core module imports, NADs and a Fig. 1 cell are computed, and a
    zoo architecture or `nadcore run` says in one line which extra installs what it needs."""
    venv = tmp_path / "core"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    run([*uv(), "sync", "--frozen", "--no-dev", "--no-install-project", "--inexact", "--quiet"], cwd=ROOT,
        env=clean_env(UV_PROJECT_ENVIRONMENT=str(venv), UV_LINK_MODE="hardlink"))
    run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile", str(ROOT)], env=clean_env())
    code = textwrap.dedent(f"""
        import importlib, importlib.util, sys
        assert [m for m in {EXTRAS!r} if importlib.util.find_spec(m)] == [], "an extra in the core environment"
        for m in {CORE + PLOTS!r}:
            importlib.import_module("nadcore." + m)
        from nadcore import learnability, models, nads, train
        from nadcore.plots import nads as plots
        result = nads.estimate("lenet", nads.EstimateSettings(num_networks=4), progress=False)
        assert result.nads.shape[1] == 1024
        plots.grid(result, 4).savefig("grid.png")
        sweep = learnability.sweep("logreg", [(1, 0)], train.Recipe(epochs=1, max_lr=0.5), n=100)
        assert sweep.test_acc.shape == (1, 1)
        try:
            models.build("vit")
        except ImportError as err:
            print(err)
    """)
    env = clean_env(OMP_NUM_THREADS="1")
    out = run([python, "-c", code], cwd=tmp_path, env=env).stdout
    assert 'pip install "nadcore[zoo]"' in out and "\n" not in out.strip()
    chapter = subprocess.run([str(venv / "bin" / "nadcore"), "run", "02_pooling", "--scale", "smoke"], cwd=ROOT,
                             env=env, capture_output=True, text=True)
    assert chapter.returncode == 2 and 'pip install "nadcore[book]"' in chapter.stderr, chapter.stderr[-500:]
    assert len(chapter.stderr.strip().splitlines()) == 1
    assert os.path.exists(venv / "bin" / "nadcore")


def test_conda_requirements_are_uv_lock_exported():
    """environment.yml installs requirements.lock: it must be `make lock`'s export of uv.lock as it is now."""
    exported = run([*uv(), "export", "--frozen", "--all-extras", "--no-hashes", "--no-emit-project", "--format",
                    "requirements-txt"], cwd=ROOT).stdout
    assert (ROOT / "requirements.lock").read_text() == exported + "-e .[all]\n", "run `make lock`"
