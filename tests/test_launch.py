"""Read online, run on Colab: the repository and Colab buttons of `_config.yml`, each chapter's hidden
install cell (from the one repository address), the GPU note, and the buttons on the built pages."""

import sys

import nbformat
import pytest
import yaml
from conftest import ROOT
from test_book import chapter_notebooks

sys.path.insert(0, str(ROOT / "tools"))
from install_cell import CELL_ID, install_source, repository  # noqa: E402  (tools/install_cell.py)

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
URL, BRANCH = repository()
COLAB = "https://colab.research.google.com"


def code_cells(path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def test_config_sets_the_repository_and_the_colab_button():
    assert URL.startswith("https://github.com/") and len(URL.removeprefix("https://github.com/").split("/")) == 2
    assert CONFIG["repository"]["path_to_book"] == ""   # the chapters' paths are relative to the repository root
    assert CONFIG["launch_buttons"]["colab_url"] == COLAB
    assert CONFIG["html"]["use_repository_button"] is True


@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_chapter_opens_with_the_hidden_install_cell_of_the_configured_repository(path):
    cells = code_cells(path)
    first = cells[0]
    assert first.get("id") == CELL_ID and first.metadata.get("tags") == ["remove-cell"]
    assert first.source == install_source(URL, BRANCH), "run tools/install_cell.py after changing _config.yml"
    assert f"--branch {BRANCH} {URL} nadbook" in first.source


def run_install_cell(nadcore_missing, monkeypatch, tmp_path):
    """Run the install cell as IPython would, in an empty folder (a new Colab session) where `nadcore`
    is importable or not; returns the shell commands and magics it ran."""
    from IPython.core.inputtransformer2 import TransformerManager

    calls = []

    class Shell:
        def system(self, command):
            calls.append(("!", command))
            if command.startswith("git clone"):
                (tmp_path / "nadbook" / "book").mkdir(parents=True)

        def run_line_magic(self, name, line):
            calls.append((name, line))

    monkeypatch.chdir(tmp_path)
    if nadcore_missing:
        monkeypatch.setitem(sys.modules, "nadcore", None)   # `import nadcore` raises ImportError
    exec(TransformerManager().transform_cell(install_source(URL, BRANCH)), {"get_ipython": lambda: Shell()})
    return calls


def test_install_cell_does_nothing_where_nadcore_is_installed(monkeypatch, tmp_path):
    assert run_install_cell(False, monkeypatch, tmp_path) == []


def test_install_cell_fetches_the_book_and_runs_in_it_where_nadcore_is_missing(monkeypatch, tmp_path):
    assert run_install_cell(True, monkeypatch, tmp_path) == [
        ("!", f"git clone --quiet --depth 1 --branch {BRANCH} {URL} nadbook"),
        ("pip", "install --quiet './nadbook[all]'"),   # the core, timm and the chapters' stack
        ("cd", "nadbook/book")]   # where `../bundle` and `../results` are those of the repository


@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_papermill_injects_the_parameters_after_the_parameters_cell(path):
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    nb = parameterize_notebook(load_notebook_node(str(path)), {"scale": "paper", "device": "cuda"})
    code = [c for c in nb.cells if c.cell_type == "code"]
    at = [c.metadata.tags for c in code].index(["injected-parameters"])
    assert "parameters" in code[at - 1].metadata.tags and code[0].get("id") == CELL_ID


@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_chapters_too_long_for_a_cpu_at_the_paper_scale_have_the_gpu_note(path):
    """A chapter whose `scale="paper"` takes over an hour of CPU (`nadcore plan`) says so in its run
    section, with the cost glued from the plan of that chapter, and links the running page, which holds
    the one note on where to get a GPU (Colab's runtime type among them)."""
    from nadcore import plan

    cpu_s = [item.cost_s for item in plan.chapter_plan(path.stem, "paper", results_dir=ROOT / "no-results").items]
    needs_gpu = None in cpu_s or sum(cpu_s) > 3600
    nb = nbformat.read(path, as_version=4)
    notes = [c.source for c in nb.cells if c.get("id") == "gpu-note"]
    assert bool(notes) == needs_gpu
    if needs_gpu:
        import inspect

        from nadcore import pages

        assert "paper_cost(STEM)" in inspect.getsource(pages.module(path.stem))   # `pages.paper_cost`: the plan's
        assert "{glue:md}`gpu_paper_cost`" in notes[0] and "{doc}`running`" in notes[0]
        running = " ".join((ROOT / "book" / "running.md").read_text().split())
        assert "Change runtime type" in running and "The paper scale needs a GPU" in running


@pytest.mark.browser
@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_page_has_the_repository_and_colab_buttons(book_url, page, path):
    owner_repo = URL.removeprefix("https://github.com/")
    page.goto(f"{book_url}book/{path.stem}.html", wait_until="networkidle")
    repo = page.locator(f'.article-header-buttons a[href="{URL}"]')
    assert repo.count() == 1 and repo.is_visible(), "no repository button"
    colab = page.locator(f'.article-header-buttons a[href^="{COLAB}"]')
    assert colab.count() == 1, "no Colab launch link"
    assert colab.get_attribute("href") == f"{COLAB}/github/{owner_repo}/blob/{BRANCH}/book/{path.stem}.ipynb"
    page.locator(".dropdown-launch-buttons button").first.click()   # the rocket opens the launch menu
    assert colab.is_visible()
