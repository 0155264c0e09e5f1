"""Static checks of the book: the table of contents, the chapters' parameters and committed outputs."""

import ast
import re

import nbformat
import pytest
import yaml
from conftest import ROOT

STANDARD = {"scale", "device", "seed", "results_dir", "data_root"}


def toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    entries = toc.get("chapters") or [c for part in toc.get("parts", []) for c in part["chapters"]]
    return [toc["root"]] + [c["file"] for c in entries]


def chapter_notebooks():
    return sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))


def test_toc_lists_intro_the_chapters_in_order_the_appendices_and_references():
    files = toc_files()
    assert files[0] == "book/intro" and files[-1] == "book/references"
    chapters = [f for f in files if re.fullmatch(r"book/\d\d_\w+", f)]
    assert chapters == ["book/01_fourier", "book/02_pooling", "book/03_nads", "book/04_cifar10",
                        "book/05_underspecification", "book/06_antialias", "book/07_zoo", "book/08_training"]
    assert files.index("book/running") > files.index(chapters[-1]), "Running the book is an appendix"
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


HIDDEN = {"remove-cell", "remove-input", "hide-input"}
CODE_WIDTH = 72   # characters of code that fit the page column at a 1280 px window (a 77-character line overflowed)


@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_page_shows_no_test_markers_and_no_line_wider_than_the_column(path):
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        assert "NBVAL" not in cell.source, f"{path.stem} cell {i}: use the tag nbval-check-output, not a comment"
        if cell.cell_type == "markdown":
            bad = [line for line in cell.source.splitlines() if line.startswith("%")]
            assert not bad, f"{path.stem} cell {i}: MyST reads a line starting with % as a comment: {bad[0]!r}"
        elif not HIDDEN & set(cell.metadata.get("tags", [])):
            wide = [line for line in cell.source.splitlines() if len(line) > CODE_WIDTH]
            assert not wide, f"{path.stem} cell {i}: visible code wider than {CODE_WIDTH} characters: {wide[0]!r}"


@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_captions_are_numbered_once_and_write_math_as_math(path):
    import re

    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        caption = cell.metadata.get("mystnb", {}).get("figure", {}).get("caption", "")
        assert not re.match(r"\s*Fig(ure)?\.?\s*\d", caption), f"{path.stem} cell {i}: Sphinx numbers figures itself"
        text = re.sub(r"\$[^$]*\$|`[^`]*`", "", caption)   # outside math and code
        ascii_math = re.search(r"\b[A-Za-z]_[A-Za-z0-9{]|<=|>=|\b(?:lambda|zeta|gamma|sigma|epsilon)\b", text)
        assert not ascii_math, f"{path.stem} cell {i}: write {ascii_math.group(0)!r} as MyST math in the caption"


@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_chapter_opens_with_its_paper_versus_book_table(path):
    nb = nbformat.read(path, as_version=4)
    markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
    first = next(i for i, s in enumerate(markdown) if "verdict" in s and "glue" in s) if any(
        "verdict" in s and "glue" in s for s in markdown) else None
    assert first is not None and first <= 2, f"{path.stem}: paste the glued 'verdict' table near the top"
    import inspect

    from nadcore import pages

    assert '"verdict"' in inspect.getsource(pages.module(path.stem)), f"{path.stem}: its findings glue no verdict"


def _names(source):
    """(names a cell defines, names it reads outside an `if num_shards == 1:` block)."""
    lines = [line[:len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("!", "%")) else line
             for line in source.splitlines()]
    defined, read, collector = set(), set(), set()
    tree = ast.parse("\n".join(lines))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "num_shards == 1":
            collector |= {id(n) for n in ast.walk(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            elif id(node) not in collector:
                read.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return defined, read


@pytest.mark.parametrize("path", [p for p in chapter_notebooks() if "num_shards" in p.read_text()],
                         ids=lambda p: p.stem)
def test_a_shard_needs_no_cell_that_makes_the_page_only(path):
    """`nadcore run` leaves the cells tagged `page-only` out of a shard's run (`cli.shard_notebook`): the
    cells left read no name that only those define (but in the collector's `if num_shards == 1:` blocks)."""
    from nadcore import cli

    nb = nbformat.read(path, as_version=4)
    page, shard, missing = set(), set(), []
    for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        defined, read = _names(cell.source)
        if cli.PAGE_ONLY in cell.metadata.get("tags", []):
            page |= defined
            continue
        missing += [(i, name) for name in sorted((read & page) - shard - defined)]
        shard |= defined
    assert page, "no cell is tagged page-only"
    assert missing == [], "code cells of a shard that read names only page-only cells define"
