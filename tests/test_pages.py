"""Each page's sentences come from its `nadcore.pages` module: the notebook calls `findings` once and glues what
it returns (`plots.page.glue_all`), and what `findings` computes from the committed bundle is what the committed
page shows (two pages drawn per run by `NADBOOK_DRAW_SEED`, each findings taking seconds to minutes)."""

import importlib
import json
import math
import pkgutil
import random
import sys
from pathlib import Path

import pytest
from conftest import DRAW_SEED

from nadcore import pages

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from state_dump import text  # noqa: E402

MODULES = {m.name: importlib.import_module(f"nadcore.pages.{m.name}") for m in pkgutil.iter_modules(pages.__path__)}
NOTEBOOK = {name: m.STEM for name, m in MODULES.items()}   # each module names its page
CHEAP = ("fourier", "pooling", "underspec", "training", "practice")   # seconds each; the others take minutes


def committed(stem):
    """`{name: text}` of every value the committed, executed notebook `stem` glues."""
    nb = json.loads((ROOT / "book" / f"{stem}.ipynb").read_text())
    return {o["metadata"]["scrapbook"]["name"]: text(o.get("data", {})) for c in nb["cells"]
            for o in c.get("outputs", []) if "scrapbook" in o.get("metadata", {})}


def code(stem):
    nb = json.loads((ROOT / "book" / f"{stem}.ipynb").read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def test_every_page_module_has_its_notebook_which_calls_its_findings_once():
    glues = {p.stem for p in (ROOT / "book").glob("*.ipynb") if "glue" in p.read_text()}
    assert set(NOTEBOOK.values()) == glues, "a page that glues has one module of nadcore.pages, and no other"
    for name, stem in NOTEBOOK.items():
        assert callable(MODULES[name].findings) and pages.module(stem) is MODULES[name], name
        src = code(stem)
        assert src.count(".findings(") == 1 and "glue_all(" in src, stem


def same(a, b):
    """Two glued texts alike: equal, or numbers within 1e-12 relative (a re-execution on another CPU moves the
    last bits of a sum; the page shows them rounded)."""
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return math.isclose(x, y, rel_tol=1e-12) or (math.isnan(x) and math.isnan(y))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(random.Random(f"{DRAW_SEED}:pages").sample(CHEAP, 2)))
def test_findings_recompute_the_committed_page(name):
    from IPython.core.formatters import format_display_data
    from matplotlib.figure import Figure

    found = MODULES[name].findings(str(ROOT / "bundle"))
    glued = found[0] if isinstance(found, tuple) else found if isinstance(found, dict) else found.glued
    page = committed(NOTEBOOK[name])
    assert glued, name
    for key, value in glued.items():
        if isinstance(value, Figure):
            continue
        assert key in page, f"{name}: {key} is not on the committed page"
        ours = text(format_display_data(value)[0])
        assert same(ours, page[key]), f"{name}: {key} = {ours[:80]!r}, the page shows {page[key][:80]!r}"
