"""The layers of `nadcore` (CONTRIBUTING.md, "The map"): primitives, then the experiments (one
module per chapter), then display (plots, widgets: they draw what they are given), then orchestration
(bundle, plan, provenance, verdicts, cli, pages). No module imports a layer below it at run time (an import
for annotations only, under `TYPE_CHECKING`, is none), and primitives and experiments import
`nadcore` only at the top of the file."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "nadcore"
DISPLAY = {"plots", "widgets"}
TOP = {"bundle", "plan", "provenance", "verdicts", "cli", "pages"}   # orchestration; pages: what each page states


def layer(module):
    """0 primitives, 1 experiments, 2 display, 3 orchestration."""
    head = module.split(".")[1] if module.startswith("nadcore.") else ""
    return 1 if head == "experiments" else 2 if head in DISPLAY else 3 if head in TOP else 0


def module_of(path):
    rel = path.relative_to(SRC.parent).with_suffix("")
    return ".".join(p for p in rel.parts if p != "__init__")


def imports(path):
    """`(imported nadcore module, inside a function?)` for every import of `path` made at run time (not
    under `if TYPE_CHECKING:`)."""
    tree = ast.parse(path.read_text())
    nested = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              for n in ast.walk(f)}
    typing_only = {id(n) for f in ast.walk(tree) if isinstance(f, ast.If) and ast.unparse(f.test) == "TYPE_CHECKING"
                   for n in ast.walk(f)}
    out = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("nadcore"):
            names = [node.module] if node.module != "nadcore" else [f"nadcore.{a.name}" for a in node.names]
            if node.module in ("nadcore.experiments", "nadcore.plots"):
                names = [f"{node.module}.{a.name}" for a in node.names]
            out += [(n, id(node) in nested) for n in names]
        elif isinstance(node, ast.Import):
            out += [(a.name, id(node) in nested) for a in node.names if a.name.startswith("nadcore")]
    return out


MODULES = sorted(p for p in SRC.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_of(p))
def test_no_module_imports_a_layer_below_it(path):
    me = module_of(path)
    low = [m for m, _ in imports(path) if m != "nadcore" and layer(m) > layer(me)]
    assert not low, f"{me} (layer {layer(me)}) imports {low}"


@pytest.mark.parametrize("path", [p for p in MODULES if layer(module_of(p)) < 2], ids=lambda p: module_of(p))
def test_primitives_and_experiments_import_at_the_top(path):
    inner = [m for m, nested in imports(path) if nested]
    assert not inner, f"{module_of(path)} imports {inner} inside a function"


def test_the_layers_are_what_the_map_says():
    assert layer("nadcore.pooling") == 0 and layer("nadcore.experiments.ch2_pooling") == 1
    assert layer("nadcore.plots.nads") == 2 and layer("nadcore.bundle") == 3 and layer("nadcore.verdicts") == 3
    chapters = sorted(p.stem for p in (SRC / "experiments").glob("ch*.py"))
    assert chapters == ["ch1_fourier", "ch2_pooling", "ch3_nads", "ch4_cifar10", "ch5_underspec", "ch6_antialias",
                        "ch7_zoo", "ch8_training"]
    text = (SRC.parents[1] / "CONTRIBUTING.md").read_text()
    assert all(f"`{c}" in text for c in chapters)


# The settings and their checks: the command line checks a chapter's presets, overrides and recipe before torch loads
TORCH_FREE = ("catalog", "checks", "chapters", "findings", "paths", "presets", "prose", "recipe", "seeds", "versions")


def test_the_settings_need_no_torch():
    code = f"import sys, {', '.join(f'nadcore.{m}' for m in TORCH_FREE)}; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
