"""Static checks of the book: the table of contents, the chapters' parameters and committed outputs."""

import ast

import nbformat
import pytest
import yaml
from conftest import ROOT

STANDARD = {"scale", "device", "seed", "results_dir", "data_root"}


def toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"]] + [c["file"] for c in toc["chapters"]]


def chapter_notebooks():
    return sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))


def test_toc_lists_intro_six_chapters_in_paper_order_and_references():
    files = toc_files()
    assert files[0] == "book/intro" and files[-1] == "book/references"
    assert files[1:-1] == ["book/01_fourier", "book/02_pooling", "book/03_nads", "book/04_cifar10",
                           "book/05_underspecification", "book/06_antialias"]
    for f in files:
        assert any((ROOT / f"{f}{ext}").exists() for ext in (".md", ".ipynb")), f


@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_chapter_has_a_parameters_cell_with_the_standard_parameters(path):
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell must be tagged 'parameters'"
    names = {n.id for node in ast.walk(ast.parse(tagged[0].source)) if isinstance(node, ast.Assign)
             for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    assert STANDARD <= names
    values = {t.id: node.value for node in ast.parse(tagged[0].source).body if isinstance(node, ast.Assign)
              for t in node.targets if isinstance(t, ast.Name)}
    assert ast.literal_eval(values["scale"]) == "smoke", "the committed default scale must be the CPU one"


@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_chapter_is_committed_executed_without_errors(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "re-execute the notebook before committing"
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for c in code for o in c.outputs), \
        "live ipywidgets in the committed outputs pull scripts from CDNs; show the static explorer instead"


@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_every_figure_has_its_own_cell_a_caption_and_a_label(path):
    nb = nbformat.read(path, as_version=4)
    names = []
    for i, cell in enumerate(nb.cells):
        figures = sum("image/png" in o.get("data", {}) for o in cell.get("outputs", []))
        if not figures:
            continue
        meta = cell.metadata.get("mystnb", {}).get("figure", {})
        assert figures == 1, f"{path.stem} cell {i} draws {figures} figures: one per cell"
        assert meta.get("caption") and meta.get("name"), f"{path.stem} cell {i} has no figure caption or name"
        names.append(meta["name"])
    assert names and len(names) == len(set(names)), f"{path.stem}: figure names must be unique"
