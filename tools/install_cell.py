"""Write each chapter's install cell from the repository address in `_config.yml`.

The cell (id `install-nadcore`, tagged `remove-cell`, so the book does not show it) is the first
code cell of every chapter, after the title. Where `nadcore` is missing, as on Colab, it fetches
the repository and installs the book's library from it; elsewhere it does nothing. Run this after changing
`repository.url` or `branch`; it writes the cell unexecuted and touches no other cell.

    .venv/bin/python tools/install_cell.py
"""

from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CELL_ID = "install-nadcore"


def repository(config=ROOT / "_config.yml"):
    """`(url, branch)` of the book's repository, as `_config.yml` sets them."""
    repo = yaml.safe_load(Path(config).read_text()).get("repository") or {}
    if not repo.get("url") or not repo.get("branch"):
        raise ValueError(f"repository must set url and branch in {config}; got {repo}")
    return repo["url"].rstrip("/"), repo["branch"]


def install_source(url, branch):
    """The install cell's code. On Colab it clones the repository (the chapters read its results bundle
    as `../bundle`), installs the library from it and runs in its `book/` folder, as at home; after a
    restart of the session, only the latter."""
    return ("import os\n\n"
            "try:  # on Colab: fetch the book (its library and results bundle)\n"
            "    import nadcore\n"
            "except ImportError:\n"
            f"    !git clone --quiet --depth 1 --branch {branch} {url} nadbook\n"
            "    %pip install --quiet './nadbook[all]'\n"
            'if os.path.isdir("nadbook/book"):  # run in the book\'s folder, as at home\n'
            "    %cd nadbook/book")


def write(path, url, branch):
    """Put the install cell into the chapter at `path` (replacing an older one); True if it changed."""
    nb = nbformat.read(path, as_version=4)
    old = [c for c in nb.cells if c.get("id") == CELL_ID]
    cell = nbformat.v4.new_code_cell(install_source(url, branch), id=CELL_ID, metadata={"tags": ["remove-cell"]})
    if old and old[0].source == cell.source and nb.cells.index(old[0]) == 1:
        return False
    nb.cells = [c for c in nb.cells if c.get("id") != CELL_ID]
    nb.cells.insert(1, cell)   # after the title
    execute_alone(nb, 1, Path(path).parent)
    nbformat.write(nb, path)
    return True


def execute_alone(nb, index, folder):
    """Execute cell `index` of `nb` by itself in a fresh kernel of this environment (where nadcore is
    installed the install cell does nothing), so that the committed chapter stays executed."""
    from nbclient import NotebookClient

    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    with client.setup_kernel():
        client.execute_cell(nb.cells[index], index)
    if nb.cells[index].outputs:
        raise RuntimeError(f"the install cell printed something in this environment: {nb.cells[index].outputs}")


def main():
    url, branch = repository()
    for path in sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb")):
        print(f"{path.name}: {'written' if write(path, url, branch) else 'up to date'}")


if __name__ == "__main__":
    main()
