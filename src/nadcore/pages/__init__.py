"""What each page states, read from the results bundle: one module per page (`STEM`, its notebook), each with
one `findings(bundle_dir)` that returns every number, verdict and table the page glues (`glued`) and what its
figures draw. A sentence of a page comes from a function here, which a test also runs; the notebook only glues
(`plots.page.glue_all`) and draws. `module(stem)` is the page's module."""

from __future__ import annotations

import tempfile
from types import ModuleType
from typing import Any

from IPython.display import Markdown

from nadcore import plan
from nadcore.presets import scalars


def module(stem: str) -> ModuleType:
    """The module of page `stem` (its notebook's name, such as "01_fourier")."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        found = importlib.import_module(f"{__name__}.{info.name}")
        if getattr(found, "STEM", None) == stem:
            return found
    raise LookupError(f"no module of nadcore.pages states page {stem!r}")


def paper_items(stem: str) -> list[plan.Item]:
    """The items of chapter `stem` at the published settings, with nothing stored (their whole cost)."""
    with tempfile.TemporaryDirectory() as empty:
        return plan.chapter_plan(stem, "paper", results_dir=empty).items


def paper_cost_s(stem: str) -> float:
    """The seconds chapter `stem` takes at the published settings on this machine's kind (items without an
    estimate count 0)."""
    return sum(i.cost_s or 0 for i in paper_items(stem))


def paper_cost(stem: str) -> dict[str, Markdown]:
    """`gpu_paper_cost`: the hours chapter `stem` takes at the published settings on this machine's kind, with
    nothing stored ("over" where an item has no estimate)."""
    cpu_s = [item.cost_s for item in paper_items(stem)]  # None: no estimate
    hours = sum(s or 0 for s in cpu_s) / 3600
    return {"gpu_paper_cost": Markdown(("over" if None in cpu_s else "about") + f" {hours:,.0f} hours")}


def preset_numbers(name: str) -> dict[str, Any]:
    """The numbers of preset `name` the prose quotes, at the smoke and the published scale (`smoke_n`, `paper_n`)."""
    return {f"{s}_{k}": v for s in ("smoke", "paper") for k, v in scalars(name, s).items()}
